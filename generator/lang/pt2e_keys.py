"""The one table of PT2E keys: every ``pt2e: {...}`` key and every ``quantizer`` field, one row.

A row says what the key is (word, meaning, value kind, default), where it lands
(the attributes of the resolved ``Rule`` or ``Quantizer``, which bcfg's
runtime reads under the same names), which runtime base honours it
(``SpecQuantizer``: ``scopes: modules``; ``OperatorScopedQuantizer``:
``scopes: operators``), what it asks of the pattern, how the docs describe it,
and how ``bcfg diff`` grades a change of it. Coercion, the checks that a key
applies, spelling, ``bcfg diff``'s canonical form and grades, emission, the
docs reference table and ``bcfg fmt``'s key order are loops over this table;
``tests/semantics/test_pt2e_keys.py`` checks that the table, ``PT2EOptions``,
both ``Rule`` classes and each base's honoured set agree.

Data only (no torch, no semantics): the language layer's fmt reads the order,
the semantic layer coerces and checks, the emitters print.
Closed sets are ``StrEnum``s whose first member is the default (``None`` in a
row's default: the key is unset, and something else decides: the quantizer's
``reused_weight``, batch norm for ``qat_config``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any


class Match(StrEnum):
    CHAIN = "chain"
    SOURCE = "source"


class QParams(StrEnum):
    FIRST = "first"
    QUANTIZED = "quantized"


class Other(StrEnum):
    QUANTIZED = "quantized"
    FLOAT = "float"


class ReusedWeight(StrEnum):
    MATCH = "match"
    DECLINE = "decline"


class QatConfig(StrEnum):
    OPTIONAL = "optional"
    REQUIRED = "required"
    REQUIRED_IF_DYNAMIC = "required_if_dynamic"


class Scope(StrEnum):
    ALL_OPS = "all_ops"
    FIRST_OP = "first_op"
    NONE = "none"


class Outputs(StrEnum):
    PATTERNS = "patterns"
    CONSUMERS = "consumers"


class Scopes(StrEnum):
    """A quantizer's runtime base: ``modules`` (SpecQuantizer), ``operators``
    (OperatorScopedQuantizer), ``composable`` (ComposableSpecQuantizer), ``pairs``
    (PairsQuantizer: ExecuTorch's Cadence scheme of (pattern, config) pairs) or ``registry``
    (RegistryQuantizer: Qualcomm's registry of per-op annotators, a config per node by the
    levels of ``select:``)."""

    MODULES = "modules"
    OPERATORS = "operators"
    COMPOSABLE = "composable"
    PAIRS = "pairs"
    REGISTRY = "registry"


@dataclass(frozen=True)
class Base:
    """A ``scopes`` word's runtime base: the class a generated quantizer derives from, and
    whether it has ``report()`` (why each op is quantized or float), which ``bcfg compat``
    needs. ``tests/semantics/test_pt2e_keys.py`` checks both against the runtime."""

    runtime: str
    reports: bool


BASES: dict[Scopes, Base] = {
    Scopes.MODULES: Base("SpecQuantizer", reports=True),
    Scopes.OPERATORS: Base("OperatorScopedQuantizer", reports=True),
    Scopes.COMPOSABLE: Base("ComposableSpecQuantizer", reports=True),
    Scopes.PAIRS: Base("PairsQuantizer", reports=True),
    Scopes.REGISTRY: Base("RegistryQuantizer", reports=True),
}


class Level(StrEnum):
    """A level of a ``scopes: registry`` quantizer's ``select:`` (runtime ``scopes.LEVELS``):
    what an entry's key is that takes a node."""

    NODE_NAME = "node_name"
    MODULE_NAME = "module_name"
    MODULE_TYPE = "module_type"
    SUBMODULE = "submodule"
    OP_SET = "op_set"
    DEFAULT = "default"


class OperatorType(StrEnum):
    NODES = "nodes"
    PATTERNS = "patterns"


class Configs(StrEnum):
    """Who says what each op of a match gets: the spec (its dtypes and pt2e keys), the
    quantization config's own accessors (``get_input_act_qspec(node, input)`` and the rest),
    or the spec, reading the config's values through its validating accessors, called
    without a node (``get_input_act_qspec()``, ``get_output_act_qspec()``,
    ``get_weight_qspec()``: ExecuTorch's Arm QuantizationConfig raises ``ValueError`` for a
    spec it does not support, as a per-channel activation)."""

    SPEC = "spec"
    ACCESSORS = "accessors"
    VALIDATED = "validated"


class Api(StrEnum):
    """The configuration methods a composable quantizer has: ``add_stage`` and
    ``set_global_stage`` only, or ExecuTorch's composable API (``set_global``,
    ``set_node_finder``, ``set_io`` and the rest: runtime ``ComposableAPI``)."""

    STAGES = "stages"
    COMPOSABLE = "composable"


class Validate(StrEnum):
    """What a quantizer's ``validate(model)`` checks after annotation."""

    NONE = "none"
    ONE_DEVICE = "one_device"  # each op's tensor inputs on one device


class OutputQscheme(StrEnum):
    """Which output specs a config may give a match (ExecuTorch Arm's ReluFusedPatternCheck)."""

    ANY = "any"
    AFFINE = "affine"


class WeightQscheme(StrEnum):
    """What a pattern requires of a config's weight spec: anything, per-channel weights (on
    the pattern's channel axis: ``weight_axis``, else 0), or per-tensor weights."""

    ANY = "any"
    PER_CHANNEL = "per_channel"
    PER_TENSOR = "per_tensor"


class ActivationQscheme(StrEnum):
    """What a pattern requires of a config's activation specs (input and output): anything,
    symmetric ones (zero point 0: ``per_tensor_symmetric``) or affine ones."""

    ANY = "any"
    SYMMETRIC = "symmetric"
    AFFINE = "affine"


class Delegate(StrEnum):
    """The ExecuTorch delegate a quantizer's programs are lowered to (semantics/delegates.py
    says what each runs)."""

    XNNPACK = "xnnpack"


class BiasSpec(StrEnum):
    """What a pair's bias argument gets (a config whose activations stay float has no input
    scale to derive from: it gets the config's bias spec either way)."""

    DERIVED = "derived"  # int32, scale the input's times the weight's, zero point 0
    CONFIG = "config"


class Parameters(StrEnum):
    QUANTIZED = "quantized"
    FLOAT = "float"


class RuleKind(StrEnum):
    CHAIN = "chain"  # a chain of ops, annotated in rule order
    SHARED = "shared"  # a shared_observer op annotated in rule order (eager)
    PROPAGATE = "propagate"  # a shared_observer op that follows a quantized producer
    HOOK = "hook"  # a Python function annotates it


class Kind(Enum):
    """How a key's value is written and coerced."""

    ATEN = "an op, a list of ops, a tuple of those for a chain; `[]`"
    WORD = "one of its words"
    FLAG = "`true`, `false`"
    HOOKS = "a name, a function, or a list"
    HOOK = "a function"
    AXIS = "a channel axis, `0` or more"
    OPS = "a list of ATen overloads"
    INDEX = "an argument index, `0` or more"
    INDICES = "an argument index, `0` or more, or a list of them"
    CLASSES = "a list of class records"
    LEVELS = "a list of its words, in order of precedence"
    PATH = "an object by dotted path"
    GIVEN = "a record of constructor parameter: value"


class Written(Enum):
    """How the generated quantizer class writes a quantizer field's value on its attribute,
    when the value is not the row's default (``emit/pt2e.py``, one loop over the table)."""

    STRING = 'attribute = "value"'
    LITERAL = "attribute = True"  # a flag or a number, as Python writes it
    STRINGS = 'attribute = ["value", ...]'
    HOOKS = "attribute = [hook, ...]"
    FLAG = "attribute_value = True"  # one boolean attribute per word but the default


class Need(Enum):
    """What a key asks of the pattern it is set on (besides its quantizer's base)."""

    SHARED_OBSERVER = "a shared_observer pattern"
    IN_ORDER = "a pattern annotated in order (a chain, or an eager shared op)"
    EAGER_SHARED = "an eager shared_observer pattern"
    WEIGHTED_CHAIN = "a chain whose first op has a weight"
    BINARY_OP = "a chain with a binary op (add, sub, mul) after its first op"
    OPERATOR_TYPE_PATTERNS = "a quantizer with `operator_type: patterns`"
    TRIED = "a pattern tried with a config (not one that only propagates)"
    WEIGHTS_ONLY = "a pattern whose dtypes include a weights-only config (`input: float`)"


# How a change of a key grades in ``bcfg diff``: +1 quantizes fewer nodes (narrowing),
# -1 more (widening), 0 neither or both (neutral). (before, after) are the key's values.
Grade = Callable[[Any, Any], int]


def neutral(a: Any, b: Any) -> int:
    return 0


def more_narrows(a: Any, b: Any) -> int:
    """A tuple of conditions or predicates: one added rules matches out, one dropped lets them in."""
    added, dropped = bool(set(b) - set(a)), bool(set(a) - set(b))
    return int(added) - int(dropped)


def true_narrows(a: Any, b: Any) -> int:
    return int(bool(b)) - int(bool(a))


def true_widens(a: Any, b: Any) -> int:
    return int(bool(a)) - int(bool(b))


def empty_narrows(a: Any, b: Any) -> int:
    """``aten: []`` leaves the pattern out."""
    return int(b == ()) - int(a == ())


def any_change_narrows(a: Any, b: Any) -> int:
    """Another configuration API or meaning: configs select other nodes, either way."""
    return int(a != b)


def required_narrows(a: Any, b: Any) -> int:
    """A requirement added refuses configs (narrowing), one dropped lets them in (widening);
    one requirement for another does both (neutral)."""
    return int(b not in (None, "any")) - int(a not in (None, "any"))


def ranked(*fewer: str) -> Grade:
    """Words in order of how many nodes they quantize, most first (unset ranks as the first)."""

    def grade(a: Any, b: Any) -> int:
        ra, rb = (fewer.index(x) if x in fewer else 0 for x in (a, b))
        return (rb > ra) - (rb < ra)

    return grade


# Skip predicates bcfg's PT2E runtime defines; a dotted path names your own.
SKIP_HOOKS: dict[str, str] = {
    "large_scalar": "a one-element tensor constant beyond what HistogramObserver observes (3.4e15)",
    "depthwise": "of the first op, a conv: its weight has one input channel per group",
    "grouped": "of the first op, a conv or transposed conv: it has more than one group",
    "relu_user": "of the first op: its only user is a relu",
}
# Conditions bcfg's PT2E runtime defines (``when:``), checked on a match's first op.
CONDITIONS: dict[str, str] = {
    "input_quantized": "its first input is the output of a quantized pattern",
    "inputs_quantized": "every input is the output of a quantized pattern",
    "user_quantizable": "it has no user, or a user the quantizer quantizes",
    "same_shape": "its two arguments are tensors of one shape",
}

BOTH = frozenset({Scopes.MODULES, Scopes.OPERATORS})
ALL = frozenset(Scopes)
MODULES = frozenset({Scopes.MODULES})
OPERATORS = frozenset({Scopes.OPERATORS})
PAIRS = frozenset({Scopes.PAIRS})
REGISTRY = frozenset({Scopes.REGISTRY})


@dataclass(frozen=True)
class Witness:
    """A key at work: ``base``'s runtime annotates ``graph`` (a tiny graph of
    ``tests/runtime/test_key_witnesses.py``) with one rule of ``rule``'s fields (of
    ``quantizer``'s class attributes, configured by ``calls``, each with the ``config`` named
    appended; none: the global config; ``__setattr__`` assigns the property named), once as
    it is and once with ``setting`` (of the key's ``lands``: Rule fields, or a quantizer
    field's class attributes); what it annotates, declines or refuses must differ. ``api``:
    the quantizer's configuration methods (``composable``: ExecuTorch's, mixed in as ``api:
    composable`` does). Data only: ATen ops as ``"aten.NAME.OVERLOAD"``, objects by dotted
    path, hooks by name."""

    base: Scopes
    graph: str
    setting: tuple[tuple[str, Any], ...]
    rule: tuple[tuple[str, Any], ...] = ()
    quantizer: tuple[tuple[str, Any], ...] = ()
    calls: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    config: str = ""
    api: Api = Api.STAGES


LINEAR: tuple[tuple[str, Any], ...] = (
    ("chain", (("aten.linear.default",),)),
    ("weight", 1),
    ("bias", 2),
)


@dataclass(frozen=True)
class Key:
    """One pt2e key or quantizer field."""

    word: str
    doc: str  # one line: what it says (hints, did-you-mean, the language reference)
    kind: Kind
    default: Any  # PT2EOptions' (or Quantizer's) default; None: unset
    lands: tuple[str, ...]  # the Rule (or Quantizer) attributes it sets
    bases: frozenset[Scopes]  # the runtime bases that honour it
    note: str  # the docs reference's meaning column
    words: type[StrEnum] | None = None  # a WORD key's closed set
    needs: tuple[Need, ...] = ()
    grade: Grade = neutral
    meaning: str | None = None  # a WORD key's hint after a wrong word
    hooks: dict[str, str] | None = None  # a HOOKS key's builtins (bcfg's runtime), by name
    what: str = ""  # a hook's noun in messages: "skip predicate"
    # The arguments the runtime calls a hook with (a HOOK or HOOKS key, and transform).
    arity: tuple[str, ...] = ()
    value: str = ""  # the docs' value column, if not the kind's words
    close_meaning: bool = False  # a did-you-mean also says what the words mean
    syntax: str = ""  # what a syntax error says the value must be, if not its words
    # A graph and a setting that show the part reading the key at work (every row a runtime
    # part reads has one: tests/runtime/test_key_witnesses.py).
    witness: Witness | None = None
    # Settings that contradict this key's: (its value, another key of the pattern, that
    # key's value, why); a pattern that sets both is an error at this key.
    conflicts: tuple[tuple[Any, str, Any, str], ...] = ()
    # A quantizer field's attribute of the generated class, which the runtime base reads
    # ("": none; the field is read at generate time, or names the class's bases or classes),
    # and how its value is written there.
    attribute: str = ""
    written: Written = Written.STRING

    @property
    def attributes(self) -> tuple[str, ...]:
        """The generated class's attributes the field may set (``Written.FLAG``: one per word
        but the default)."""
        if not self.attribute:
            return ()
        if self.written is not Written.FLAG:
            return (self.attribute,)
        assert self.words is not None, self.word
        return tuple(f"{self.attribute}_{w.value}" for w in self.words if w != self.default)

    @property
    def expects(self) -> str:
        """What the value must be, as a syntax error after ``key:`` says it."""
        if self.syntax:
            return self.syntax
        if self.words is not None:
            return self.word_list()
        return "true or false" if self.kind is Kind.FLAG else self.kind.value.replace("`", "")

    @property
    def values(self) -> str:
        """The docs reference's value column."""
        if self.value:
            return self.value
        if self.words is not None:
            first = f"`{next(iter(self.words)).value}`"
            rest = [f"`{w.value}`" for w in list(self.words)[1:]]
            default = " (default)" if self.default is not None else ""
            return ", ".join([first + default, *rest])
        return self.kind.value

    def word_list(self) -> str:
        """``a, b or c``: the key's words as messages list them."""
        assert self.words is not None
        words = [w.value for w in self.words]
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


PT2E_TABLE: tuple[Key, ...] = (
    Key(
        "aten",
        "the ATen ops the pattern matches, overriding the mapping table; [] leaves it out",
        Kind.ATEN,
        None,
        ("chain",),
        ALL,
        "the ATen ops the pattern matches, instead of the table's; `[]` leaves it out of the "
        "quantizer",
        grade=empty_narrows,
        syntax="an ATen op, a list of them, or a tuple of those for a chain",
        witness=Witness(
            Scopes.MODULES,
            "linear",
            (("chain", (("aten.linear.default",),)),),
            (("chain", (("aten.relu.default",),)),),
        ),
    ),
    Key(
        "match",
        "chain (by ATen op, the default) or source (by torch's source partitions)",
        Kind.WORD,
        Match.CHAIN,
        ("sources",),
        BOTH,
        "`source`: find the nodes through torch's source partitions of the pattern's module or "
        "function, as torchao's quantizers do (graphs exported non-strict carry none for "
        "functions): one op by its own partitions (a chain of one, or an eager shared op); a chain "
        "of several ops by its elements' partitions, under `scopes: operators`",
        words=Match,
        needs=(Need.IN_ORDER,),
        witness=Witness(
            Scopes.MODULES,
            "cat",
            (("sources", ("torch.nn.Conv2d",)),),
            (("kind", "shared"), ("chain", (("aten.cat.default",),))),
        ),
    ),
    Key(
        "eager",
        "true: a shared_observer pattern is annotated in order, not only propagated",
        Kind.FLAG,
        False,
        ("kind",),
        ALL,
        "a `shared_observer` pattern is annotated in order, not only propagated",
        needs=(Need.SHARED_OBSERVER,),
        grade=true_widens,
        witness=Witness(
            Scopes.MODULES,
            "cat",
            (("kind", "shared"),),
            (("kind", "propagate"), ("chain", (("aten.cat.default",),))),
        ),
    ),
    Key(
        "skip",
        "predicates on activation inputs that rule a match out: large_scalar or a function",
        Kind.HOOKS,
        (),
        ("skip",),
        MODULES,
        "predicates that rule the match out: of an activation input (`large_scalar`, yours, "
        "`fn(node, model) -> bool`), or of the match's first op (`depthwise`: a conv whose "
        "weight has one input channel per group; `grouped`: a conv or transposed conv of more "
        "than one group; `relu_user`: its only user is a relu)",
        needs=(Need.IN_ORDER,),
        grade=more_narrows,
        hooks=SKIP_HOOKS,
        what="skip predicate",
        arity=("node", "model"),
        value="`large_scalar`, `depthwise`, `grouped`, `relu_user`, a function, or a list",
        syntax="a skip predicate, like large_scalar, or a list of them",
        witness=Witness(
            Scopes.MODULES,
            "depthwise",
            (("skip", ("depthwise",)),),
            (("chain", (("aten.conv2d.default",),)), ("weight", 1), ("bias", 2)),
        ),
    ),
    Key(
        "annotate",
        "a Python function that annotates the pattern itself",
        Kind.HOOK,
        None,
        ("annotate",),
        MODULES,
        "annotates the pattern itself, `fn(model, config, accept) -> bool` (see below)",
        what="annotate function",
        arity=("model", "config", "accept"),
        witness=Witness(
            Scopes.MODULES, "linear", (("kind", "hook"), ("annotate", "annotate_inputs")), LINEAR
        ),
    ),
    Key(
        "weight_axis",
        "the weight's channel axis, for per-channel weight specs (1: transposed convs)",
        Kind.AXIS,
        None,
        ("weight_axis",),
        MODULES | {Scopes.COMPOSABLE},
        "the weight spec's channel axis for this pattern, instead of the config's (transposed "
        "convs: `1`, their output channels); below the weight's rank",
        needs=(Need.WEIGHTED_CHAIN,),
        witness=Witness(Scopes.MODULES, "linear", (("weight_axis", 1),), LINEAR),
    ),
    Key(
        "qparams",
        "first (the default) or quantized: which input of a list (cat) the others share qparams with",
        Kind.WORD,
        QParams.FIRST,
        ("qparams",),
        MODULES,
        "an eager shared op with a list input (cat): its inputs and output share the qparams "
        "of the first input, or of the first that comes from a quantized op (through shared "
        "ops; else the first)",
        words=QParams,
        needs=(Need.EAGER_SHARED,),
        witness=Witness(
            Scopes.MODULES,
            "cat_after_linear",
            (("qparams", "quantized"),),
            (("kind", "shared"), ("chain", (("aten.cat.default",),))),
        ),
    ),
    Key(
        "any_float",
        "true: activation inputs of any floating dtype (float16, bfloat16) are quantized, not float32 only",
        Kind.FLAG,
        False,
        ("any_float",),
        MODULES,
        "activation inputs of any floating dtype (float16, bfloat16) are quantized, not "
        "float32 only (ExecuTorch's linear and conv)",
        needs=(Need.IN_ORDER,),
        grade=true_widens,
        value="`true`, `false` (default)",
        witness=Witness(Scopes.MODULES, "linear_bf16", (("any_float", True),), LINEAR),
    ),
    Key(
        "other",
        "quantized or float: what the other input of the pattern's binary op (add) gets",
        Kind.WORD,
        None,
        ("other",),
        OPERATORS,
        "the other input of the chain's binary op (`add`, `sub`, `mul` after its first op): "
        "it gets the input spec, or nothing (X86's conv + add and linear + add)",
        words=Other,
        needs=(Need.BINARY_OP,),
        meaning="quantized: the binary op's other input gets the input spec; float: nothing",
        witness=Witness(
            Scopes.OPERATORS,
            "conv_add",
            (("other", "quantized"),),
            (
                ("chain", (("aten.conv2d.default",), ("aten.add.Tensor",))),
                ("weight", 1),
                ("bias", 2),
                ("partitions", (("torch.nn.Conv2d", "operator.add"),)),
            ),
        ),
    ),
    Key(
        "when",
        "conditions a match meets before a config quantizes it: inputs_quantized and the rest",
        Kind.HOOKS,
        (),
        ("when",),
        OPERATORS | {Scopes.COMPOSABLE, Scopes.PAIRS, Scopes.REGISTRY},
        "conditions the match's first op meets before a config quantizes it (below)",
        grade=more_narrows,
        hooks=CONDITIONS,
        what="condition",
        arity=("match",),
        value="a condition or a list",
        syntax="a condition, like inputs_quantized, or a list of them",
        witness=Witness(
            Scopes.PAIRS,
            "add",
            (("when", ("inputs_quantized",)),),
            (("chain", (("aten.add.Tensor",),)),),
        ),
    ),
    Key(
        "opt_in",
        "true: only an operator-type or module-name config annotates it, never the global one",
        Kind.FLAG,
        False,
        ("opt_in",),
        OPERATORS,
        "only an operator-type or module-name config annotates it, never the global one "
        "(X86's matmul)",
        grade=true_narrows,
        witness=Witness(Scopes.OPERATORS, "linear", (("opt_in", True),), LINEAR),
    ),
    Key(
        "reused_weight",
        "match or decline (the quantizer's, by default match): whether a match whose "
        "weight or bias an earlier match quantized (a module called twice, tied weights) is quantized",
        Kind.WORD,
        None,
        ("reused_weight",),
        BOTH,
        "a match whose weight or bias an earlier match quantized (the same module called "
        "twice, two modules tied to one weight): `match` quantizes it again, so every call is "
        "quantized; `decline` leaves it to the rules after, as if one of its ops were "
        "annotated",
        words=ReusedWeight,
        needs=(Need.WEIGHTED_CHAIN,),
        grade=ranked("match", "decline"),
        meaning="match: a match is quantized whether an earlier match quantized its weight or "
        "not; decline: it is left to the rules after",
        value="`match`, `decline` (default: the quantizer's, below)",
        witness=Witness(Scopes.MODULES, "linear_twice", (("reused_weight", "decline"),), LINEAR),
    ),
    Key(
        "operator_types",
        "the ATen overloads whose set_operator_type selects the pattern, in a quantizer "
        "with operator_type: patterns (by default its first op's)",
        Kind.OPS,
        None,
        ("operator_types",),
        MODULES,
        "the overloads whose `set_operator_type` selects the pattern (below). A packet "
        "(`aten.conv_transpose1d`) is listed as itself: selection is by exact equality",
        needs=(Need.OPERATOR_TYPE_PATTERNS,),
        value="a list of ATen overloads; `[]` (default: the pattern's first op's)",
        syntax="ATen overloads, like [aten.conv2d.default]",
        witness=Witness(
            Scopes.MODULES,
            "linear",
            (("operator_types", ("aten.relu.default",)),),
            LINEAR,
            (("operator_type", "patterns"),),
            (("set_operator_type", ("aten.relu.default",)),),
        ),
    ),
    Key(
        "qat_config",
        "required, optional or required_if_dynamic: whether the pattern is tried only with QAT "
        "configs (by default required for a chain through batch norm, else optional; under "
        "`scopes: composable` every pattern is tried with any config its dtypes allow)",
        Kind.WORD,
        None,
        ("qat", "qat_if_dynamic"),
        MODULES,
        "which configs try the pattern: any config its dtypes allow, QAT configs only, or "
        "static configs and dynamic QAT configs (ExecuTorch's conv + batch norm, which "
        "`prepare_qat_pt2e` meets with a non-QAT config too)",
        words=QatConfig,
        needs=(Need.TRIED,),
        grade=ranked("optional", "required_if_dynamic", "required"),
        meaning="required: only QAT configs try the pattern; optional: any config; "
        "required_if_dynamic: static configs, and dynamic ones that are QAT configs",
        value="`optional`, `required`, `required_if_dynamic` (default: `required` for a chain "
        "through batch norm, else `optional`)",
        witness=Witness(Scopes.MODULES, "linear", (("qat", True),), LINEAR),
    ),
    Key(
        "scope",
        "all_ops (the default), first_op or none: which ops of a match module names, module "
        "types and the filter function judge (none: matched anywhere, with each config in turn)",
        Kind.WORD,
        Scope.ALL_OPS,
        ("scope",),
        MODULES,
        "which ops of a match module names, module types and the filter function judge: all "
        "of them, the first only (ExecuTorch's conv + batch norm), or none: the pattern is "
        "tried with each config in turn and matches anywhere (ExecuTorch's cat)",
        words=Scope,
        needs=(Need.IN_ORDER,),
        meaning="all_ops: every op of a match must be in the config's scope; first_op: its "
        "first op; none: the pattern matches anywhere, with each config in turn",
        witness=Witness(
            Scopes.MODULES,
            "linear",
            (("scope", "none"),),
            LINEAR,
            calls=(("set_module_name", ("elsewhere",)),),
        ),
    ),
    Key(
        "inputs",
        "the first op's arguments, by index, that get the input activation spec (default 0)",
        Kind.INDICES,
        (0,),
        ("inputs",),
        PAIRS,
        "the arguments of the match's first op, by index, that get the config's input "
        "activation spec (ExecuTorch's anchors: `[0, 1]` for two activations, `1` for addmm's "
        "input); a list argument (cat's) gives its first element the spec and shares it with "
        "the rest. The weight and bias positions are `input_index`'s, or the op table's",
        needs=(Need.IN_ORDER,),
        value="an index or a list of them; `0` (default)",
        syntax="an argument index, like 1, or a list of them, like [0, 1]",
        witness=Witness(
            Scopes.PAIRS, "add2", (("inputs", (0, 1)),), (("chain", (("aten.add.Tensor",),)),)
        ),
    ),
    Key(
        "output_index",
        "the output spec goes on this getitem of the last op's only user (max pool with "
        "indices: 0), not on the op",
        Kind.INDEX,
        None,
        ("output_index",),
        PAIRS,
        "the output spec goes on the `getitem` of this index of the last op's only user, not "
        "on the op (an op that returns a tuple: `aten.max_pool2d_with_indices`, 0); with "
        "`observation: shared_observer` it shares its input's",
        needs=(Need.IN_ORDER,),
        value="an index; unset (default): the last op",
        syntax="an index into the op's outputs, like 0",
        witness=Witness(
            Scopes.PAIRS,
            "pool_indices",
            (("output_index", 0),),
            (("chain", (("aten.max_pool2d_with_indices.default",),)),),
        ),
    ),
    Key(
        "bias_spec",
        "derived (the default: int32 from the input's and weight's scales) or config (the "
        "config's bias spec)",
        Kind.WORD,
        BiasSpec.DERIVED,
        ("bias_spec",),
        PAIRS,
        "what the bias argument gets: a spec derived from the first input's and the weight's "
        "observers (int32, scale their product, zero point 0, ExecuTorch's Cadence bias), or "
        "the config's bias spec. A weights-only config (activations float, W8A32) has no "
        "input scale: its bias gets the config's spec either way",
        words=BiasSpec,
        needs=(Need.WEIGHTED_CHAIN,),
        meaning="derived: int32, scale input scale times weight scale; config: the config's "
        "bias spec",
        witness=Witness(Scopes.PAIRS, "linear", (("bias_spec", "config"),), LINEAR),
    ),
    Key(
        "none_bias",
        "true: a bias argument given as None gets the bias spec too (ExecuTorch's linear)",
        Kind.FLAG,
        False,
        ("none_bias",),
        PAIRS,
        "a bias argument written as `None` is annotated too, as ExecuTorch's linear does "
        "(its conv skips it)",
        needs=(Need.WEIGHTED_CHAIN,),
        witness=Witness(
            Scopes.PAIRS,
            "conv_no_bias",
            (("none_bias", True),),
            (("chain", (("aten.conv2d.default",),)), ("weight", 1), ("bias", 2)),
        ),
    ),
    Key(
        "parameters",
        "quantized (the default) or float: whether the first op's weight and bias are anchors "
        "(layer norm's stay float)",
        Kind.WORD,
        Parameters.QUANTIZED,
        ("parameters",),
        PAIRS,
        "the weight and bias of the first op (`input_index`'s or the op table's) get the "
        "weight and bias specs, or stay float (ExecuTorch's layer norm: its activation only)",
        words=Parameters,
        needs=(Need.WEIGHTED_CHAIN,),
        grade=ranked("quantized", "float"),
        meaning="quantized: the weight and bias get specs; float: only activations do",
        witness=Witness(Scopes.PAIRS, "linear", (("parameters", "float"),), LINEAR),
        conflicts=(
            (Parameters.FLOAT, "bias_spec", BiasSpec.CONFIG, "a float bias gets no spec"),
            (Parameters.FLOAT, "none_bias", True, "a float bias is not annotated, None or not"),
        ),
    ),
    Key(
        "weights_only_when",
        "conditions a match meets before a weights-only config (activations float, W8A32) "
        "quantizes it",
        Kind.HOOKS,
        (),
        ("weights_only_when",),
        PAIRS,
        "conditions a match meets before a weights-only config (`input: float`, ExecuTorch's "
        "W8A32) quantizes it, besides `when` (the DSP's shapes); other configs ignore them",
        needs=(Need.IN_ORDER, Need.WEIGHTS_ONLY),
        grade=more_narrows,
        hooks={},
        what="condition",
        arity=("match",),
        value="a function or a list",
        syntax="a condition, a function named by its dotted path, or a list of them",
        witness=Witness(
            Scopes.PAIRS,
            "linear",
            (("weights_only_when", ("inputs_quantized",)),),
            LINEAR,
            config="weights_only",
        ),
    ),
    Key(
        "weights",
        "a function giving the match's weight and bias anchors, when they are not arguments "
        "(GRU's parameter list)",
        Kind.HOOK,
        None,
        ("weights",),
        PAIRS,
        "the weight and bias anchors of a match whose parameters are not arguments of their "
        "own (GRU's list), `fn(node, config) -> [(node, argument, spec)]`; instead of "
        "`input_index`'s",
        needs=(Need.IN_ORDER,),
        what="weights function",
        arity=("node", "config"),
        witness=Witness(Scopes.PAIRS, "linear", (("weights", "weight_only"),), LINEAR),
    ),
    Key(
        "output_qscheme",
        "any (the default) or affine: a config whose output spec for the match's last op is "
        "symmetric is refused (ExecuTorch Arm's relu fused into conv or linear)",
        Kind.WORD,
        OutputQscheme.ANY,
        ("output_qscheme",),
        frozenset({Scopes.COMPOSABLE}),
        "which output spec of the match's last op a config may give: any, or an affine one "
        "only (a symmetric one refuses the config, and the matcher tries the match shorter: "
        "ExecuTorch Arm's relu fused into conv or linear)",
        words=OutputQscheme,
        needs=(Need.TRIED,),
        grade=ranked("any", "affine"),
        meaning="any: every output spec; affine: a symmetric output spec refuses the config",
        witness=Witness(
            Scopes.COMPOSABLE,
            "linear",
            (("output_qscheme", "affine"),),
            LINEAR,
            config="symmetric_output",
        ),
    ),
    Key(
        "given",
        "constructor parameters of the quantizer's classes and their values: the pattern is "
        "in an instance's support table only when it was constructed with them",
        Kind.GIVEN,
        (),
        ("given",),
        frozenset({Scopes.COMPOSABLE, Scopes.REGISTRY}),
        "the pattern is in an instance's support table only when its constructor was given "
        "these values (`{use_explicit_layout: true}`; a parameter of every class in "
        "`classes:`, not `fixed`; a string also matches an argument whose `str()` it is); "
        "patterns without it are in every table; a stage's `chains:` take the ops of the "
        "patterns in the table, and under `scopes: registry` the table is the registry",
        grade=any_change_narrows,
        value="a record of parameter: `true`, `false`, `none`, a number or a string",
        syntax="a record of constructor parameters, like {use_explicit_layout: true}",
        witness=Witness(Scopes.COMPOSABLE, "linear", (("given", (("flag", True),)),), LINEAR),
    ),
    Key(
        "weight_qscheme",
        "any (the default), per_channel or per_tensor: the weight spec a config must give "
        "the pattern; another is refused",
        Kind.WORD,
        WeightQscheme.ANY,
        ("weight_qscheme",),
        frozenset({Scopes.MODULES, Scopes.COMPOSABLE}),
        "the weight spec a config must give the pattern: `per_channel` (any per-channel "
        "qscheme, on the pattern's channel axis: `weight_axis`, else `0`) or `per_tensor`; "
        "`validate` refuses a config that gives another, saying which pattern and why",
        words=WeightQscheme,
        needs=(Need.WEIGHTED_CHAIN,),
        grade=required_narrows,
        meaning="any: every weight spec; per_channel or per_tensor: the weight's qscheme",
        witness=Witness(Scopes.MODULES, "linear", (("weight_qscheme", "per_tensor"),), LINEAR),
    ),
    Key(
        "activation_qscheme",
        "any (the default), symmetric or affine: the activation specs a config must give "
        "the pattern; others are refused",
        Kind.WORD,
        ActivationQscheme.ANY,
        ("activation_qscheme",),
        frozenset({Scopes.MODULES, Scopes.COMPOSABLE}),
        "the qscheme a config's quantized activation specs (input and output) must have: "
        "`symmetric` (zero point 0) or `affine`; `validate` refuses a config that gives "
        "another, saying which pattern and why (the dtypes say the activations' dtypes and "
        "ranges)",
        words=ActivationQscheme,
        needs=(Need.TRIED,),
        grade=required_narrows,
        meaning="any: every activation spec; symmetric or affine: the activations' qscheme",
        witness=Witness(Scopes.MODULES, "linear", (("activation_qscheme", "symmetric"),), LINEAR),
    ),
    Key(
        "annotate_node",
        "the function that annotates a node of the pattern's op, fn(node, config), with the "
        "config select: chose for the node (scopes: registry: the op's registry entry)",
        Kind.HOOK,
        None,
        ("annotate_node",),
        REGISTRY,
        "the op's entry of the registry: `fn(node, config)` annotates one node calling the "
        "pattern's op, with the config the quantizer's `select:` chose for it (a node "
        "whose `when:` conditions fail, or whose config is None, is not passed to it)",
        what="node annotator",
        arity=("node", "config"),
        witness=Witness(
            Scopes.REGISTRY,
            "linear",
            (("annotate_node", "node_input"),),
            (("chain", (("aten.linear.default",),)), ("annotate_node", "node_output")),
            calls=(("set_default", ()),),
        ),
    ),
)

QUANTIZER_TABLE: tuple[Key, ...] = (
    Key(
        "transform",
        "graph transforms run before annotating: scalars_to_tensors(ops...) or functions",
        Kind.HOOKS,
        (),
        ("transforms",),
        ALL,
        "graph transforms run before annotating, `fn(model) -> model`",
        what="transform",
        arity=("model",),
        syntax="a transform, like scalars_to_tensors(aten.add.Tensor), or a list of them",
        attribute="transforms",
        written=Written.HOOKS,
        witness=Witness(
            Scopes.MODULES,
            "add",
            (("transforms", ("add_to_mul",)),),
            (("chain", (("aten.add.Tensor",),)),),
        ),
    ),
    Key(
        "outputs",
        "patterns (the default: a pattern's last op gets the output spec) or consumers "
        "(only quantized consumers observe it; shared ops follow quantized patterns)",
        Kind.WORD,
        Outputs.PATTERNS,
        ("outputs",),
        MODULES,
        "who observes a pattern's output (`scopes: modules` only: `scopes: operators` always "
        "leaves it to its quantized consumers; the other compositions annotate outputs by "
        "their own schemes)",
        words=Outputs,
        meaning="patterns: each pattern's last op gets the output spec; consumers: only "
        "quantized consumers observe a pattern's output",
        close_meaning=True,
        grade=ranked("patterns", "consumers"),
        attribute="outputs",
        witness=Witness(Scopes.MODULES, "linear", (("outputs", "consumers"),), LINEAR),
    ),
    Key(
        "scopes",
        "modules (the default: set_module_name, set_module_type, set_operator_type), "
        "operators (torchao's inductor quantizers: module names, operator types, global), "
        "composable (ExecuTorch's Cortex-M and Arm: stages of a config and the nodes it sees, "
        "the longest supported chain, then clusters of shared ops), pairs (ExecuTorch's "
        "Cadence: (pattern, config) pairs, each annotating every match, the first first) or "
        "registry (Qualcomm's: each node annotated by its op's annotate_node, with the "
        "config the levels of select: choose)",
        Kind.WORD,
        Scopes.MODULES,
        ("scopes",),
        ALL,
        "the runtime base: `SpecQuantizer`, `OperatorScopedQuantizer`, "
        "`ComposableSpecQuantizer`, `PairsQuantizer` or `RegistryQuantizer`",
        words=Scopes,
        grade=any_change_narrows,
    ),
    Key(
        "fx",
        "true (the default) or false: the backend is for this quantizer only, no BackendConfig",
        Kind.FLAG,
        True,
        ("fx",),
        ALL,
        "`false`: no BackendConfig",
    ),
    Key(
        "reused_weight",
        "match (the default) or decline: the reused_weight of every pattern with a "
        "weight whose pt2e field does not say",
        Kind.WORD,
        ReusedWeight.MATCH,
        ("reused_weight",),
        BOTH,
        "the `reused_weight` of the patterns that do not say",
        words=ReusedWeight,
        grade=ranked("match", "decline"),
    ),
    Key(
        "operator_type",
        "nodes (the default: set_operator_type configures the matches with an op of "
        "that type, and the global config leaves them) or patterns (it selects the patterns whose "
        "operator_types name that overload, ExecuTorch's XNNPACKQuantizer)",
        Kind.WORD,
        OperatorType.NODES,
        ("operator_type",),
        MODULES,
        "what `set_operator_type` selects",
        words=OperatorType,
        grade=any_change_narrows,
        attribute="operator_type",
        witness=Witness(
            Scopes.MODULES,
            "linear",
            (("operator_type", "patterns"),),
            (*LINEAR, ("operator_types", ("aten.relu.default",))),
            calls=(("set_operator_type", ("aten.relu.default",)),),
        ),
    ),
    Key(
        "configs",
        "spec (the default: the spec's dtypes and pt2e keys say what each op of a match gets), "
        "accessors (the config's own get_input_act_qspec(node, input), get_weight_qspec, "
        "get_bias_qspec, get_output_act_qspec say it: ExecuTorch's Arm configs) or validated "
        "(the spec says it, reading the config's values through those accessors without a "
        "node, which raise for a spec they refuse: ExecuTorch's Cortex-M)",
        Kind.WORD,
        Configs.SPEC,
        ("configs",),
        frozenset({Scopes.COMPOSABLE}),
        "who says what each op of a match gets: the spec, the config's accessors, or the "
        "spec reading the config's values through its accessors, so that a config type "
        "that validates raises its own error (`scopes: composable` only; below)",
        words=Configs,
        meaning="spec: the spec's dtypes and pt2e keys; accessors: the quantization config's "
        "get_*_qspec methods, asked per node; validated: the spec, with the config's specs "
        "read through get_input_act_qspec(), get_output_act_qspec() and get_weight_qspec()",
        grade=any_change_narrows,
        attribute="config",
        written=Written.FLAG,
        witness=Witness(
            Scopes.COMPOSABLE,
            "linear",
            (("config_accessors", True),),
            LINEAR,
            config="accessors",
        ),
    ),
    Key(
        "delegate",
        "xnnpack: the program is lowered to ExecuTorch's XNNPACK delegate; generate "
        "warns at each dtype config it would refuse",
        Kind.WORD,
        None,
        ("delegate",),
        ALL,
        "the ExecuTorch delegate its programs are lowered to: generate warns at each dtype "
        "config the delegate would refuse (checked at generate time, not read at run time)",
        words=Delegate,
    ),
    Key(
        "api",
        "stages (the default: add_stage, set_global_stage) or composable (ExecuTorch's "
        "configuration methods: set_global, set_node_finder, set_node_target, set_node_name, "
        "set_module_type, set_module_name, set_io, add_quantizer)",
        Kind.WORD,
        Api.STAGES,
        ("api",),
        frozenset({Scopes.COMPOSABLE}),
        "the configuration methods of a `scopes: composable` quantizer: `add_stage` and "
        "`set_global_stage`, or ExecuTorch's composable API (below)",
        words=Api,
        meaning="stages: add_stage and set_global_stage only; composable: ExecuTorch's "
        "set_global, set_node_finder, set_io and the rest",
        grade=any_change_narrows,
    ),
    Key(
        "config_type",
        "the class every config given to the api: composable methods must be an instance of "
        "(or None), by dotted path, imported when first checked",
        Kind.PATH,
        None,
        ("config_type",),
        frozenset({Scopes.COMPOSABLE}),
        "the class a config given to a configuration method must be (or `None`), as "
        "ExecuTorch checks it (`api: composable` only); imported when first checked",
        value="a class by dotted path; unset (default): any config",
        syntax="a class by dotted path, like my.configs.QuantizationConfig",
        attribute="config_type",
        witness=Witness(
            Scopes.COMPOSABLE,
            "linear",
            (("config_type", "torchao.quantization.pt2e.quantizer.QuantizationSpec"),),
            LINEAR,
            calls=(("__setattr__", ("global_config",)),),
            api=Api.COMPOSABLE,
        ),
    ),
    Key(
        "validate",
        "none (the default) or one_device: what validate(model) checks after annotation "
        "(one_device: each op's tensor inputs on one device, ExecuTorch's Arm)",
        Kind.WORD,
        Validate.NONE,
        ("validation",),
        frozenset({Scopes.COMPOSABLE}),
        "what `validate(model)` checks after annotation: nothing, or `one_device`: each "
        "op's tensor inputs on one device (a `ValueError` naming the op otherwise)",
        words=Validate,
        meaning="none: nothing; one_device: each op's tensor inputs on one device",
        grade=ranked("none", "one_device"),
        attribute="validation",
        witness=Witness(
            Scopes.COMPOSABLE,
            "two_devices",
            (("validation", "one_device"),),
            (("chain", (("aten.add.Tensor",),)),),
        ),
    ),
    Key(
        "select",
        "node_name, module_name, module_type, submodule, op_set, default: the levels that "
        "choose a node's config, in order of precedence (scopes: registry)",
        Kind.LEVELS,
        (Level.DEFAULT,),
        ("levels",),
        REGISTRY,
        "the levels that choose each node's config, first first: a node gets the config of "
        "the first level with an entry that takes it (`set_node_name`, `set_module_name`, "
        "`set_module_type`, `add_submodule` with a predicate of a node, `set_op_set`, "
        "`set_default`; a level not listed is refused); a config may be a function of the "
        "node (below)",
        words=Level,
        grade=any_change_narrows,
        value="a list of `node_name`, `module_name`, `module_type`, `submodule`, `op_set`, "
        "`default`; `[default]` (default)",
        syntax="a list of levels, like [node_name, submodule, op_set, default]",
        attribute="levels",
        written=Written.STRINGS,
        witness=Witness(
            Scopes.REGISTRY,
            "linear",
            (("levels", ("node_name", "default")),),
            (("chain", (("aten.linear.default",),)), ("annotate_node", "node_input")),
            (("levels", ("default",)),),
            (("set_node_name", ("linear",)),),
        ),
    ),
    Key(
        "classes",
        "the classes the module exports under the target's own names: each {name, base, "
        "params, fixed, init, stages}, its constructor's parameters and the stages it adds "
        "(scopes: pairs: {name, base, params, pair, pairs}, the pairs it appends)",
        Kind.CLASSES,
        (),
        ("classes",),
        frozenset(Scopes),
        "classes under the target's own names, with its constructor: parameters with "
        "defaults, an init hook, then config stages (`scopes: composable`) or (pattern, "
        "config) pairs (`scopes: pairs`); under `scopes: modules` and `operators` the init "
        "hook configures the class (set_global and the rest), so that the getter's quantizer "
        'needs no configuration; the section "Exported classes" has the record',
        grade=any_change_narrows,
        syntax="a list of class records, like [{name: MyQuantizer, stages: [{config: c}]}]",
    ),
)

# The keys of a record of ``classes: [...]`` and of its ``stages: [...]`` (what each says, its
# values), for the language server; ``semantics/pt2e/classes.py`` resolves them.
CLASS_RECORD: dict[str, tuple[str, str]] = {
    "name": (
        "the class's name; one named like the generated class is that class",
        "a name, like CortexMQuantizer",
    ),
    "base": (
        "hook classes mixed in before the generated class, or one earlier class of the list "
        "to derive from",
        "a class by dotted path, an earlier class, or a list of those",
    ),
    "params": (
        "the constructor's parameters in order, each with its default (an object by dotted "
        "path is imported at construction)",
        "{name: default}: true, false, none, a number, a string, required or a dotted path",
    ),
    "fixed": (
        "parameters of which only the default is reproduced: another value raises "
        "NotImplementedError",
        "a list of parameters with literal defaults",
    ),
    "init": (
        "a function called as init(self, *params) after the base is constructed",
        "a function by dotted path",
    ),
    "stages": (
        "add_stage(config, targets) in order: a config and the nodes it sees",
        "a list of {config: ..., ops: [...]} or {config: ..., chains: [...]}",
    ),
    "pair": (
        "scopes: pairs: the class is one pair, Class(pattern, quantization_config), annotating "
        "the matches of the rule whose chain begins with the pattern's partition_types()",
        "true",
    ),
    "pairs": (
        "scopes: pairs: the pairs the constructor appends to its quantizers parameter, in order "
        "(qat: the config taken when is_qat is true)",
        "a list of {pattern: ..., config: ..., qat: ...} or names of pairs functions",
    ),
    "function": (
        "scopes: pairs: instead of name, a function NAME(params) returning its pairs",
        "a name, like get_cadence_default_quantizers",
    ),
}
STAGE_RECORD: dict[str, tuple[str, str]] = {
    "config": ("the stage's quantization config", "a parameter, or an object by dotted path"),
    "ops": ("the ATen ops the stage sees (none: every op)", "a list of ATen ops"),
    "chains": (
        "every op of the rules whose chain begins with one of these (of the rules the "
        "instance's given: parameters select)",
        "a list of ATen ops",
    ),
}
# The keys of a pair of a class record's ``pairs: [...]`` (``scopes: pairs``), for the language
# server; ``semantics/pt2e/pair_classes.py`` resolves them.
PAIR_RECORD: dict[str, tuple[str, str]] = {
    "pattern": (
        "the pair's pattern: an object with partition_types(), constructed when the class is "
        "(a list: one pair each)",
        "a class by dotted path, or a list of them",
    ),
    "config": ("the pair's quantization config", "a parameter, or an object by dotted path"),
    "qat": (
        "the config taken instead of config when the class's is_qat parameter is true",
        "a parameter, or an object by dotted path",
    ),
}

PT2E_KEY: dict[str, Key] = {k.word: k for k in PT2E_TABLE}
QUANTIZER_KEY: dict[str, Key] = {k.word: k for k in QUANTIZER_TABLE}

# The Rule attributes no key sets alone (the pattern and its dtype configs say them), with the
# bases that read each, as a key's row says it: the composable and pairs bases match by ATen
# op only and try a chain with any config its dtypes allow (not ``sources``, not ``qat``); the
# operators base configures by module type (``roots``) and finds a chain by source partitions
# (``partitions``).
PATTERN_FIELDS: dict[str, frozenset[Scopes]] = {
    **dict.fromkeys(("name", "kind", "chain", "weight", "bias", "allows"), ALL),
    **dict.fromkeys(("sources", "qat"), BOTH),
    **dict.fromkeys(("roots", "partitions"), OPERATORS),
}
STRUCTURAL = frozenset(f for f, bases in PATTERN_FIELDS.items() if bases == ALL)


def honoured(base: Scopes) -> frozenset[str]:
    """The Rule attributes a runtime base reads: of the pattern, and of its keys; one rule,
    the rows' ``bases``, for every base. The runtime states the same set as a class
    attribute (``SpecQuantizer.honours`` and the others); the consistency test compares them.
    """
    own = {a for k in PT2E_TABLE if base in k.bases for a in k.lands}
    return frozenset({f for f, bases in PATTERN_FIELDS.items() if base in bases} | own)
