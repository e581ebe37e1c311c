"""The resolved model of bcfg: what ``semantics`` produces and the emitters print.

``Backend`` and ``PatternConfig`` with their parts, frozen dataclasses with no
I/O and no torch imports: every group call and loop expanded, every name bound
to a public dotted path of the installed torch, every check passed. It says
exactly what the generated module builds, config by config and in order, so
``emit`` only has to print it and ``live.build`` can construct the same
``BackendConfig`` without generating code.

Invariants: symbols are full dotted paths (no aliases); dtypes are canonical
``torch`` attribute names (``float32``, never ``float``); patterns of one
backend are unique (overrides were applied in place, keeping the position of
the pattern they replace, as ``BackendConfig`` does). Where a value came from
(``Origin``) never takes part in equality: two configs that build the same
``BackendPatternConfig`` are equal wherever they were written.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from ..lang.pt2e_keys import (
    ActivationQscheme,
    Api,
    BiasSpec,
    Configs,
    Delegate,
    Level,
    Match,
    OperatorType,
    Other,
    OutputQscheme,
    Outputs,
    Parameters,
    QatConfig,
    QParams,
    ReusedWeight,
    RuleKind,
    Scope,
    Scopes,
    Validate,
    WeightQscheme,
)
from ..lang.syntax import Param
from ..lang.vocabulary import CONSTRAINT_FIELDS, MODULE_ALIASES
from ..sources import Span


class SymbolKind(StrEnum):
    """What a dotted path names, as far as the language cares."""

    MODULE = "module"  # an nn.Module subclass
    CLASS = "class"  # any other class
    FUNCTION = "function"
    OP = "op"  # an OpOverload or OpOverloadPacket
    DTYPE = "dtype"
    NAMESPACE = "namespace"  # a Python module
    VALUE = "value"  # anything else


@dataclass(frozen=True)
class Symbol:
    """A Python object named by its public dotted path, e.g. ``torch.nn.Conv2d``."""

    path: str
    kind: SymbolKind
    module: str = field(default="", compare=False)  # the module to import for it
    # A pattern's plain Python function that FX's trace goes through (it records the ops
    # the function calls): its FX pattern config never matches (checks, the matrix).
    traced: bool = field(default=False, compare=False)


# A pattern atom: a symbol, a method name, or an integer literal.
Atom = Symbol | str | int
# A pattern: an atom or a (nested) tuple of patterns.
PatternValue = Atom | tuple["PatternValue", ...]


def traced_functions(pattern: Any) -> list[Symbol]:
    """The plain Python functions FX traces through among ``pattern``'s atoms."""
    if isinstance(pattern, tuple):
        return [s for p in pattern for s in traced_functions(p)]
    return [pattern] if isinstance(pattern, Symbol) and pattern.traced else []


def reversed_nested(pattern: Any) -> Any:
    """The reversed nested tuple form torch keys configs by: (a, b, c) -> (c, (b, a)).

    Works on any atoms, so the importer can use it on live objects.
    """
    if not isinstance(pattern, tuple):
        return pattern
    if len(pattern) == 2:
        return (pattern[1], pattern[0])
    return (pattern[-1], reversed_nested(pattern[:-1]))


@dataclass(frozen=True)
class DType:
    """A dtype, with the optional constraints of ``DTypeWithConstraints``."""

    dtype: str
    quant_min_lower_bound: int | float | None = None
    quant_max_upper_bound: int | float | None = None
    scale_min_lower_bound: int | float | None = None
    scale_max_upper_bound: int | float | None = None
    scale_exact_match: float | None = None
    zero_point_exact_match: int | None = None
    name: str | None = field(default=None, compare=False)  # the constraint it came from

    @property
    def constrained(self) -> bool:
        return any(getattr(self, f) is not None for f, _ in CONSTRAINT_FIELDS)


@dataclass(frozen=True)
class DTypeConfig:
    input: DType | None = None
    output: DType | None = None
    weight: DType | None = None
    bias: str | None = None
    is_dynamic: bool | None = None
    name: str | None = field(default=None, compare=False)
    # Where each key was written ("input", "output", "weight", "bias", "dynamic").
    where: tuple[tuple[str, Span], ...] = field(default=(), compare=False)

    def span(self, key: str) -> Span | None:
        return next((span for k, span in self.where if k == key), None)


@dataclass(frozen=True)
class SequentialFuser:
    """Fuse the matched modules, in order, into ``fused`` (``_sequential_wrapper2``)."""

    fused: Symbol


@dataclass(frozen=True)
class SymbolFuser:
    """Any importable fuser function, by dotted path."""

    function: Symbol


@dataclass(frozen=True)
class FuseArg:
    """A fuser parameter reference inside a fuser body."""

    name: str


@dataclass(frozen=True)
class FuseQat:
    """``is_qat`` inside a fuser body: the flag torch passes every fuser."""


@dataclass(frozen=True)
class FuseConst:
    """A constant argument inside a fuser body: ``true``, ``false`` or a number."""

    value: bool | int | float


@dataclass(frozen=True)
class FuseCall:
    function: Symbol
    args: tuple[FuseExpr, ...]


FuseExpr = FuseArg | FuseCall | FuseQat | FuseConst


@dataclass(frozen=True)
class DefinedFuser:
    """A fuser declared with ``fuse``: destructure the matched modules, build one."""

    name: str
    params: tuple[Param, ...]
    eval_only: bool
    same_mode: bool
    body: FuseCall
    span: Span = field(compare=False)


Fuser = SequentialFuser | SymbolFuser | DefinedFuser


@dataclass(frozen=True)
class NodeGetter:
    """``root_node: pattern[i][j]``: pick one element of the matched pattern."""

    path: tuple[int, ...]


@dataclass(frozen=True)
class ExtraInputsGetter:
    """``extra_inputs: [pattern[i], ...]``: pick the extra inputs of a fused node."""

    paths: tuple[tuple[int, ...], ...]


class StepKind(StrEnum):
    USE = "use"
    FOR = "for"


@dataclass(frozen=True)
class Step:
    """One step of the expansion that placed a pattern config: a ``use`` or a loop element.

    ``span`` is the ``use`` item or the loop element; ``text`` says the step in
    messages ("'use conv(weighted_int8)'", "the loop element"); ``anchor`` says
    it as a stable, searchable origin: ``use conv(weighted_int8)``,
    ``conv_fusions(ds=weighted_int8, n=2)``, ``for relu = F.relu``.
    ``definition`` is where the group used, or the loop, is written;
    ``definitions`` the named definitions the ``use`` arguments or the loop
    element refer to (``use conv(weighted_int8)``: the dtype set
    ``weighted_int8``), with those they refer to in turn.
    """

    kind: StepKind
    span: Span
    text: str
    anchor: str
    definition: Span
    definitions: tuple[DefinitionRef, ...] = ()


@dataclass(frozen=True)
class DefinitionRef:
    """A named definition a pattern config's fields used, directly or through another definition."""

    kind: str  # "dtypes", "constraint", "fuse"
    name: str
    span: Span  # where it is defined


@dataclass(frozen=True)
class Origin:
    """Where a pattern config came from: the pattern item, each field, and how it was reached.

    ``chain`` runs outermost first: the ``use`` in the backend, the ``use`` in
    that group, the loop element, ... ``replaced`` is the origin of the config
    an ``override pattern`` replaced. ``definitions`` are the named definitions
    the fields refer to, with those they refer to in turn (``dtypes:
    onednn_linear`` uses ``onednn_linear``, ``weighted_int8`` and
    ``dynamic_int8``); definitions reached through a ``use`` argument or a loop
    element are on that ``Step``. ``head`` is the pattern item as the spec
    writes it, layout aside (``override pattern (nn.Conv${n}d, relu)``).
    """

    item: Span
    fields: tuple[tuple[str, Span], ...] = ()
    chain: tuple[Step, ...] = ()
    definitions: tuple[DefinitionRef, ...] = ()
    replaced: Origin | None = None
    head: str = ""

    def field(self, word: str) -> Span | None:
        """The span of field ``word``, or None if the pattern does not set it."""
        return next((span for name, span in self.fields if name == word), None)

    @property
    def anchor(self) -> str:
        """Where the config came from, by names a reviewer can search for, never by line.

        The file of the pattern item, then the chain outermost first and the item:
        ``specs/common.bcfg: use conv(ds=weighted_int8) > for n = 1 >
        use conv_fusions(ds=weighted_int8, n=1) > for relu = F.relu > pattern (nn.Conv${n}d, relu)``.
        Comment, blank-line and layout edits do not change it; configs a loop
        makes differ in their ``for`` steps.
        """
        steps = [f"use {s.anchor}" if s.kind == StepKind.USE else s.anchor for s in self.chain]
        return f"{self.item.file}: " + " > ".join([*steps, self.head or "pattern"])


@dataclass(frozen=True)
class Hook:
    """A named Python function a PT2E quantizer calls: one of bcfg's runtime (``name``,
    with ``ops`` for ``scalars_to_tensors``) or one of yours (``function``)."""

    name: str
    function: Symbol | None = None
    ops: tuple[Symbol, ...] = ()


# A chain of ATen ops: per position, the overloads (or packets) that match there.
AtenChain = tuple[tuple[Symbol, ...], ...]


@dataclass(frozen=True)
class PT2EOptions:
    """A pattern's ``pt2e: {...}`` field: how its PT2E quantizer matches and annotates it.

    One field per row of the table of PT2E keys (``lang.pt2e_keys.PT2E_TABLE``), in its
    order and with its defaults; ``aten`` overrides the mapping table (``()``: the pattern
    is left out). ``where`` keeps the span of each key written, so that an error about a
    key underlines it, not the whole record.
    """

    aten: AtenChain | None = None
    match: Match = Match.CHAIN
    eager: bool = False
    skip: tuple[Hook, ...] = ()
    annotate: Hook | None = None
    weight_axis: int | None = None
    qparams: QParams = QParams.FIRST
    any_float: bool = False
    other: Other | None = None
    when: tuple[Hook, ...] = ()
    opt_in: bool = False
    reused_weight: ReusedWeight | None = None  # None: the quantizer's
    operator_types: tuple[Symbol, ...] | None = None  # None: the first op's overloads
    qat_config: QatConfig | None = None  # None: inferred (required through batch norm)
    scope: Scope = Scope.ALL_OPS
    inputs: tuple[int, ...] = (0,)
    output_index: int | None = None
    bias_spec: BiasSpec = BiasSpec.DERIVED
    none_bias: bool = False
    parameters: Parameters = Parameters.QUANTIZED
    weights_only_when: tuple[Hook, ...] = ()
    weights: Hook | None = None
    output_qscheme: OutputQscheme = OutputQscheme.ANY
    given: tuple[tuple[str, Any], ...] = ()  # constructor parameters selecting the pattern
    weight_qscheme: WeightQscheme = WeightQscheme.ANY
    activation_qscheme: ActivationQscheme = ActivationQscheme.ANY
    annotate_node: Hook | None = None  # scopes: registry: the op's annotator, fn(node, config)
    where: tuple[tuple[str, Span], ...] = field(default=(), compare=False)

    def span(self, key: str) -> Span | None:
        """Where the spec writes ``key``; None if it does not."""
        return next((span for k, span in self.where if k == key), None)

    def set_keys(self) -> list[str]:
        """The keys whose value is not their default, in the table's order."""
        return [
            f.name for f in fields(self) if f.name != "where" and getattr(self, f.name) != f.default
        ]


@dataclass(frozen=True)
class PatternConfig:
    pattern: PatternValue
    complex: bool
    observation: str  # an ObservationType member name
    dtype_configs: tuple[DTypeConfig, ...]
    root_module: Symbol | None = None
    qat_module: Symbol | None = None
    reference_module: Symbol | None = None
    fused_module: Symbol | None = None
    fuser: Fuser | None = None
    root_node_getter: NodeGetter | None = None
    extra_inputs_getter: ExtraInputsGetter | None = None
    num_tensor_args: tuple[tuple[int, str], ...] = ()
    input_type_to_index: tuple[tuple[str, int], ...] = ()
    pt2e: PT2EOptions | None = None
    origin: Origin | None = field(default=None, compare=False)

    @property
    def span(self) -> Span | None:
        """The pattern item this config was written as."""
        return self.origin.item if self.origin is not None else None

    def field_span(self, word: str) -> Span | None:
        """Where the spec sets field ``word`` of this config; the pattern item if it does not."""
        return (self.origin.field(word) or self.origin.item) if self.origin is not None else None


def unset(value: Any) -> bool:
    """A pattern field the spec does not set: None, empty, or ``pt2e`` written as its defaults."""
    return value is None or value == () or value == PT2EOptions()


@dataclass(frozen=True)
class Backend:
    """One backend: the generated module ``<module>.py`` builds it."""

    module: str
    name: str
    configs: tuple[PatternConfig, ...]
    spec_file: str
    inputs: tuple[tuple[str, str], ...]  # (spec file, sha256) of every file it was read from
    span: Span = field(compare=False)


# ------------------------------------------------------------------- PT2E

# The module every generated quantizer imports its runtime from (``generated/_bcfg_pt2e.py``).
RUNTIME_MODULE = "_bcfg_pt2e"
# What a generated quantizer module imports from the runtime, by the runtime module that defines it.
RUNTIME_NAMES: dict[str, str] = {
    "FLOAT": "values",
    "Allows": "values",
    "Quant": "values",
    "Rule": "values",
    "SpecQuantizer": "quantizer",
    "OperatorScopedQuantizer": "operators",
    "ComposableSpecQuantizer": "composable",
    "ComposableAPI": "composable",
    "PairsQuantizer": "pairs",
    "PatternPair": "pairs",
    "RegistryQuantizer": "registry",
    "large_scalar": "conditions",
    "depthwise": "conditions",
    "grouped": "conditions",
    "relu_user": "conditions",
    "input_quantized": "conditions",
    "inputs_quantized": "conditions",
    "user_quantizable": "conditions",
    "same_shape": "conditions",
    "scalars_to_tensors": "transforms",
    "load_object": "objects",
    "refuse": "objects",
}
# Every name a generated quantizer module binds or reads besides its classes, its getter,
# its dtype locals (named fresh) and the heads of the modules it imports: what it imports
# from the runtime, torch and the aliases, its own module-level names, and the builtins its
# constructors read (``self`` and ``super``). tests/emit/test_pt2e_emit.py walks every
# generated module and checks that it reads or binds nothing else.
GENERATED_NAMES = frozenset(
    {
        "torch",
        "aten",
        "RULES",
        "__all__",
        "self",
        "super",
        "list",
        *MODULE_ALIASES.values(),
        *RUNTIME_NAMES,
    }
)


def quantizer_module(backend: str) -> str:
    """The module a backend's PT2E quantizer is generated as: ``<backend>_quantizer``."""
    return f"{backend}_quantizer"


def quantizer_class(backend: str) -> str:
    """The quantizer class of backend ``backend``: ``my_backend`` -> ``MyBackendQuantizer``."""
    return "".join(p[:1].upper() + p[1:] for p in backend.split("_") if p) + "Quantizer"


@dataclass(frozen=True)
class Quant:
    """A dtype a PT2E quantization spec may have, with its bounds; dtype None: not quantized.

    ``dtype`` is the name of a ``torch`` dtype (``int8``); ``scale`` and
    ``zero_point`` fix the qparams (a fixed-qparams op's output).
    """

    dtype: str | None
    quant_min: int | float | None = None
    quant_max: int | float | None = None
    scale_min: int | float | None = None
    scale: float | None = None
    zero_point: int | None = None
    name: str | None = field(default=None, compare=False)  # the constraint it came from


@dataclass(frozen=True)
class Allows:
    """One dtype config as the quantization configs it allows (None: not checked)."""

    input: Quant | None = None
    output: Quant | None = None
    weight: Quant | None = None
    bias: Quant | None = None
    dynamic: bool | None = None
    name: str | None = field(default=None, compare=False)  # the dtype config it came from


@dataclass(frozen=True)
class Rule:
    """One rule of a PT2E quantizer: the patterns of the backend that match the same way.

    Its fields are the runtime's ``Rule``'s (``generator/runtime/values.py``), in its order
    and with its defaults, which the generated table prints (those not at their default);
    ``origins`` is bcfg's own.
    """

    name: str  # the first pattern, as messages show it
    kind: RuleKind = RuleKind.CHAIN
    chain: AtenChain = ()
    sources: tuple[Symbol, ...] = ()  # match by source partitions of these callables
    weight: int | None = None
    bias: int | None = None
    allows: tuple[Allows, ...] = ()
    skip: tuple[Hook, ...] = ()
    annotate: Hook | None = None
    qat: bool = False  # a chain through batch norm: only a QAT graph has one
    weight_axis: int | None = None  # the weight spec's channel axis, if not the config's
    qparams: QParams = QParams.FIRST  # which input of a list a shared op's inputs share
    any_float: bool = False  # activation inputs of any floating dtype, not float32 only
    # decline: a match whose weight or bias is annotated already (by an earlier match of
    # the same module or a tied weight) is not annotated; match: only its ops are checked.
    reused_weight: ReusedWeight = ReusedWeight.MATCH
    # operator_type: patterns: the overloads whose set_operator_type selects it; None: chain[0].
    operator_types: tuple[Symbol, ...] | None = None
    qat_if_dynamic: bool = False  # a dynamic config only if it is a QAT config
    scope: Scope = Scope.ALL_OPS  # the ops of a match scopes judge: all_ops, first_op or none
    # match: source on a chain: the sequences of source types it is found by.
    partitions: tuple[tuple[Symbol, ...], ...] = ()
    roots: tuple[Symbol, ...] = ()  # module classes and functions its first op comes from
    other: Other | None = None
    when: tuple[Hook, ...] = ()
    opt_in: bool = False
    # Pairs (ExecuTorch's Cadence): the first op's input arguments, the getitem that takes
    # the output spec, the bias's spec, a None bias annotated, the weight and bias left
    # float, conditions of weights-only configs, a function giving the weight anchors.
    inputs: tuple[int, ...] = (0,)
    output_index: int | None = None
    bias_spec: BiasSpec = BiasSpec.DERIVED
    none_bias: bool = False
    parameters: Parameters = Parameters.QUANTIZED
    weights_only_when: tuple[Hook, ...] = ()
    weights: Hook | None = None
    # Composable: "affine": a config giving the last op a symmetric output spec is refused.
    output_qscheme: OutputQscheme = OutputQscheme.ANY
    # Composable: the constructor parameters (name, value) an instance's table needs it under.
    given: tuple[tuple[str, Any], ...] = ()
    # The weight spec a config must give: "any", "per_channel" or "per_tensor" (validate).
    weight_qscheme: WeightQscheme = WeightQscheme.ANY
    # The activation specs' qscheme a config must give: "any", "symmetric", "affine".
    activation_qscheme: ActivationQscheme = ActivationQscheme.ANY
    # Registry: the op's annotator, fn(node, config) (the registry preset's entry).
    annotate_node: Hook | None = None
    origins: tuple[Origin, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ClassParam:
    """A constructor parameter of an exported class: its default is a Python literal
    (``value``), an object by dotted path imported at construction (``path``: the
    signature's default is then None, which stands for it), or none (``required``)."""

    name: str
    value: Any = None
    path: str | None = None
    required: bool = False
    fixed: bool = False  # only the default is taken: another value is refused
    # A list default (scopes: pairs): "" a fresh empty list, or the name of a pairs function of
    # the list called for it; the signature's default is then None, which stands for it.
    calls: str | None = None


@dataclass(frozen=True)
class ClassStage:
    """``add_stage(config, targets)``: the config is a parameter (``param``) or an object
    by dotted path (``path``); ``targets`` None: every op, unless ``firsts`` are set."""

    param: str | None
    path: str | None
    targets: tuple[Symbol, ...] | None = None
    # chains: the first ops named; the instance finds its targets, the ops of the chain rules
    # that begin with one of them, among the rules its ``given`` selects (runtime chain_ops).
    firsts: tuple[Symbol, ...] = ()


PAIRS_LIST = "quantizers"  # the parameter a pairs class's pairs extend (torchao's name)
PAIRS_QAT = "is_qat"  # the parameter that chooses a pair's qat config


@dataclass(frozen=True)
class ClassPair:
    """A pair a ``scopes: pairs`` class appends (``pairs:``): the pattern (an object by dotted
    path, constructed then) with the config (``config``: a parameter or a dotted path), or
    ``qat`` when the class's ``is_qat`` parameter is true; or ``splice``, a pairs function of
    the list whose pairs come there."""

    pattern: str | None = None
    config: ClassStage | None = None
    qat: ClassStage | None = None
    splice: str | None = None


@dataclass(frozen=True)
class QuantClass:
    """A class a quantizer module exports under the target's own name (``classes:``):
    its bases (hook classes, then an earlier class of the list or the generated one),
    constructor parameters, an init hook called with them, and its stages in order."""

    name: str
    mixins: tuple[Symbol, ...] = ()
    parent: str | None = None  # an earlier class of the list; None: the generated class
    params: tuple[ClassParam, ...] = ()
    init: Symbol | None = None
    stages: tuple[ClassStage, ...] = ()
    span: Span | None = field(default=None, compare=False)
    # scopes: pairs: one (pattern, config) pair (``pair: true``), the pairs its constructor
    # appends, and a function returning its pairs (``function:`` instead of ``name:``).
    pair: bool = False
    pairs: tuple[ClassPair, ...] = ()
    function: bool = False


@dataclass(frozen=True)
class Quantizer:
    """A PT2E quantizer: ``<module>_quantizer.py`` defines it from backend ``module``'s patterns."""

    module: str
    rules: tuple[Rule, ...]
    transforms: tuple[Hook, ...]
    spec_file: str
    inputs: tuple[tuple[str, str], ...]
    span: Span = field(compare=False)
    # Where a pattern's output is observed: "patterns" (its last op's output
    # spec) or "consumers" (only quantized consumers' input specs).
    outputs: Outputs = Outputs.PATTERNS
    # How configs select nodes: "modules" (SpecQuantizer) or "operators" (OperatorScopedQuantizer).
    scopes: Scopes = Scopes.MODULES
    fx: bool = True  # False: the backend is this quantizer's only, no BackendConfig
    # The reused_weight of the rules with a weight whose pattern does not set it.
    reused_weight: ReusedWeight = ReusedWeight.MATCH
    # What set_operator_type selects: "nodes" (matches with an op of the type) or "patterns".
    operator_type: OperatorType = OperatorType.NODES
    # Who says each op's specs: "spec", "accessors" (the config's get_*_qspec methods) or
    # "validated" (the spec, reading the config's specs through those methods).
    configs: Configs = Configs.SPEC
    # The ExecuTorch delegate its programs are lowered to (checked at generate time only).
    delegate: Delegate | None = None
    # The classes it exports under the target's own names (scopes: composable or pairs).
    classes: tuple[QuantClass, ...] = ()
    # Composable: the configuration methods ("composable": ExecuTorch's), the class their
    # configs must be (a dotted path, imported when checked), what validate(model) checks.
    api: Api = Api.STAGES
    config_type: str | None = None
    validation: Validate = Validate.NONE
    # Registry: the levels that choose a node's config, first first.
    levels: tuple[Level, ...] = (Level.DEFAULT,)
