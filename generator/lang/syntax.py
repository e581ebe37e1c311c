"""The syntax model of bcfg: what ``parse`` produces from a spec's text.

One frozen dataclass per construct of the language, each carrying the ``Span``
it was read from. Names are still names; groups and loops are not expanded
(that is ``semantics``). No I/O, no torch, no lark: fmt, the language server
and the resolver all read this model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Union

from ..sources import Span

__all__ = ["Span"]  # re-exported: every node carries one


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


Expr = Union[
    DottedName, Str, Int, Float, BinOp, Neg, TupleExpr, ListExpr, Record, PatternRef, Index, Call
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


Decl = Union[ImportDecl, AliasDecl, ConstraintDecl, DTypesDecl, FuseDecl, GroupDecl, BackendDecl]


@dataclass(frozen=True)
class Spec:
    """One parsed ``.bcfg`` file."""

    file: str
    decls: tuple[Decl, ...]
    comments: tuple[tuple[Span, str], ...] = ()
