"""The syntax model of bcfg: what ``parse`` produces from a spec's text.

One frozen dataclass per construct of the language, each carrying the ``Span``
it was read from. Names are still names; groups and loops are not expanded
(that is ``semantics``). No I/O, no torch, no lark: fmt, the language server
and the resolver all read this model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from ..sources import Span


@dataclass(frozen=True)
class DottedName:
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
    func: DottedName
    args: tuple[Expr, ...]
    span: Span


Expr = (
    DottedName
    | Str
    | Int
    | Float
    | BinOp
    | Neg
    | TupleExpr
    | ListExpr
    | Record
    | PatternRef
    | Index
    | Call
)


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


Item = PatternItem | UseItem | ForItem


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
    target: DottedName
    span: Span


@dataclass(frozen=True)
class ConstraintDecl:
    name: str
    dtype: DottedName
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


@dataclass(frozen=True)
class QuantizerDecl:
    """``quantizer NAME { fields }``: a PT2E quantizer for the backend NAME of the same file."""

    name: str
    fields: tuple[Field, ...]
    span: Span


Decl = (
    ImportDecl
    | AliasDecl
    | ConstraintDecl
    | DTypesDecl
    | FuseDecl
    | GroupDecl
    | BackendDecl
    | QuantizerDecl
)


@dataclass(frozen=True)
class Spec:
    """One parsed ``.bcfg`` file."""

    file: str
    decls: tuple[Decl, ...]
    comments: tuple[tuple[Span, str], ...] = ()


# --------------------------------------------------------------------------
# Traversal
# --------------------------------------------------------------------------

Node = Any  # any syntax node: a dataclass above that carries a ``span``


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that can hold child nodes (everything but its own span)."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in fields(cls) if f.name not in ("span", "comments", "file"))
        _CHILD_FIELDS[cls] = names
    return names


def _is_node(value: object) -> bool:
    return is_dataclass(value) and not isinstance(value, type) and hasattr(value, "span")


def start(node: Node) -> tuple[int, int]:
    return (node.span.line, node.span.column)


def end(node: Node) -> tuple[int, int]:
    return (node.span.end_line, node.span.end_column)


def children(node: Node) -> list[Node]:
    """The child nodes of ``node`` (a node or a ``Spec``), in source order."""
    kids: list[Node] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, tuple):
            kids.extend(x for x in value if _is_node(x))
        elif _is_node(value):
            kids.append(value)
    return sorted(kids, key=start)


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node below it, parents before children, in source order."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(reversed(children(n)))


def path_to(spec: Spec, line: int, column: int) -> list[Node]:
    """The nodes whose span holds the 1-based position, outermost first (empty if none does)."""
    out: list[Node] = []
    nodes: list[Node] = list(spec.decls)
    while nodes:
        inside = [n for n in nodes if start(n) <= (line, column) < end(n)]
        if not inside:
            break
        out.append(inside[0])
        nodes = children(inside[0])
    return out


def node_at(spec: Spec, line: int, column: int) -> Node | None:
    """The innermost node at the 1-based position, or None."""
    nodes = path_to(spec, line, column)
    return nodes[-1] if nodes else None
