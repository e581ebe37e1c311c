"""The typed model of bcfg: the syntax tree of a spec and the resolved backend.

Two layers, both frozen dataclasses with no I/O and no torch imports:

* The *syntax* layer (``Spec`` and the ``Expr``/``Item``/``Decl`` nodes) is what
  ``parse`` produces: one node per construct of the language, each carrying the
  ``Span`` it was read from. Names are still names; groups and loops are not
  expanded.
* The *resolved* layer (``Backend`` and ``PatternConfig`` with their parts) is
  what ``resolve`` produces: every group call and loop expanded, every name
  bound to a public dotted path of the installed torch, every check passed.
  It says exactly what the generated module builds, config by config and in
  order, so ``render`` only has to print it and ``build`` can construct the
  same ``BackendConfig`` without generating code.

Invariants of the resolved layer: symbols are full dotted paths (no aliases);
dtypes are canonical ``torch`` attribute names (``float32``, never ``float``);
patterns of one backend are unique (overrides were applied in place, keeping
the position of the pattern they replace, as ``BackendConfig`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Span:
    """Where a node was read from: 1-based line and column, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


# --------------------------------------------------------------------------
# Syntax layer
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Path:
    """A dotted name such as ``nn.Conv${n}d``; segments may hold ``${var}`` holes."""

    parts: tuple[str, ...]
    span: Span

    @property
    def text(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class Str:
    value: str
    span: Span


@dataclass(frozen=True)
class Int:
    value: int
    span: Span


@dataclass(frozen=True)
class Float:
    value: float
    span: Span


@dataclass(frozen=True)
class BinOp:
    """Arithmetic on numbers: ``+ - * / **``."""

    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: Expr
    span: Span


@dataclass(frozen=True)
class TupleExpr:
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class Entry:
    key: str | int
    value: Expr
    span: Span


@dataclass(frozen=True)
class Record:
    """``{key: value, ...}``: a dtype config, an index map or a constraint body."""

    entries: tuple[Entry, ...]
    span: Span


@dataclass(frozen=True)
class PatternRef:
    """The keyword ``pattern`` inside a getter: the matched pattern."""

    span: Span


@dataclass(frozen=True)
class Index:
    target: Expr
    index: Expr
    span: Span


@dataclass(frozen=True)
class Call:
    func: Path
    args: tuple[Expr, ...]
    span: Span


Expr = Union[
    Path, Str, Int, Float, BinOp, Neg, TupleExpr, ListExpr, Record, PatternRef, Index, Call
]


@dataclass(frozen=True)
class Field:
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class PatternItem:
    head: Expr
    complex: bool
    override: bool
    fields: tuple[Field, ...]
    span: Span


@dataclass(frozen=True)
class UseItem:
    group: str
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class ForItem:
    targets: tuple[str, ...]
    destructure: bool
    iterable: Expr
    body: tuple[Item, ...]
    span: Span


Item = Union[PatternItem, UseItem, ForItem]


@dataclass(frozen=True)
class Param:
    """A fuser parameter: a name, or a tuple of them for a nested sub-pattern."""

    name: str | None
    items: tuple[Param, ...]
    span: Span


@dataclass(frozen=True)
class ImportDecl:
    path: str
    span: Span


@dataclass(frozen=True)
class AliasDecl:
    name: str
    target: Path
    span: Span


@dataclass(frozen=True)
class ConstraintDecl:
    name: str
    dtype: Path
    entries: tuple[Entry, ...]
    span: Span


@dataclass(frozen=True)
class DTypesDecl:
    name: str
    value: Expr
    span: Span


@dataclass(frozen=True)
class FuseDecl:
    name: str
    params: tuple[Param, ...]
    flags: tuple[str, ...]
    body: Expr
    span: Span


@dataclass(frozen=True)
class GroupDecl:
    name: str
    params: tuple[str, ...]
    body: tuple[Item, ...]
    span: Span


@dataclass(frozen=True)
class BackendDecl:
    name: str
    backend_name: str | None
    body: tuple[Item, ...]
    span: Span


Decl = Union[ImportDecl, AliasDecl, ConstraintDecl, DTypesDecl, FuseDecl, GroupDecl, BackendDecl]


@dataclass(frozen=True)
class Spec:
    """One parsed ``.bcfg`` file."""

    file: str
    decls: tuple[Decl, ...]
    comments: tuple[tuple[Span, str], ...] = ()


# --------------------------------------------------------------------------
# Resolved layer
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    """A Python object named by its public dotted path, e.g. ``torch.nn.Conv2d``."""

    path: str
    kind: str  # "module" (nn.Module class), "class", "function", "op", "dtype"
    module: str = field(default="", compare=False)  # the module to import for it


# A pattern atom: a symbol, a method name, or an integer literal.
Atom = Union[Symbol, str, int]
# A pattern: an atom or a (nested) tuple of patterns.
PatternValue = Union[Atom, tuple["PatternValue", ...]]


# ObservationType members and the words specs use for them.
OBSERVATION_WORDS: dict[str, str] = {
    "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT": "different_observer",
    "OUTPUT_SHARE_OBSERVER_WITH_INPUT": "shared_observer",
    "INPUT_OUTPUT_NOT_OBSERVED": "not_observed",
}

# The constraint fields of ``DTypeWithConstraints``, in torch's order, with the
# short names specs use for them: (torch field, spec key).
CONSTRAINT_FIELDS: tuple[tuple[str, str], ...] = (
    ("quant_min_lower_bound", "quant_min"),
    ("quant_max_upper_bound", "quant_max"),
    ("scale_min_lower_bound", "scale_min"),
    ("scale_max_upper_bound", "scale_max"),
    ("scale_exact_match", "scale"),
    ("zero_point_exact_match", "zero_point"),
)


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
        return any(
            v is not None
            for v in (
                self.quant_min_lower_bound,
                self.quant_max_upper_bound,
                self.scale_min_lower_bound,
                self.scale_max_upper_bound,
                self.scale_exact_match,
                self.zero_point_exact_match,
            )
        )


@dataclass(frozen=True)
class DTypeConfig:
    input: DType | None = None
    output: DType | None = None
    weight: DType | None = None
    bias: str | None = None
    is_dynamic: bool | None = None
    name: str | None = field(default=None, compare=False)


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
class FuseCall:
    function: Symbol
    args: tuple[FuseExpr, ...]


FuseExpr = Union[FuseArg, FuseCall]


@dataclass(frozen=True)
class DefinedFuser:
    """A fuser declared with ``fuse``: destructure the matched modules, build one."""

    name: str
    params: tuple[Param, ...]
    eval_only: bool
    same_mode: bool
    body: FuseCall
    span: Span = field(compare=False)


Fuser = Union[SequentialFuser, SymbolFuser, DefinedFuser]


@dataclass(frozen=True)
class NodeGetter:
    """``root_node: pattern[i][j]``: pick one element of the matched pattern."""

    path: tuple[int, ...]


@dataclass(frozen=True)
class ExtraInputsGetter:
    """``extra_inputs: [pattern[i], ...]``: pick the extra inputs of a fused node."""

    paths: tuple[tuple[int, ...], ...]


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
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Backend:
    """One backend: the generated module ``<module>.py`` builds it."""

    module: str
    name: str
    configs: tuple[PatternConfig, ...]
    spec_file: str
    inputs: tuple[tuple[str, str], ...]  # (spec file, sha256) of every file it was read from
    span: Span = field(compare=False)
