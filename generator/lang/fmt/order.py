"""Canonical order, and meaning: what a spec says without spans, comments or meaningless order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass, replace
from typing import Any

from .. import syntax as m
from ..vocabulary import (
    CONSTRAINT_FIELDS,
    DTYPE_KEY_WORDS,
    FMT_FIELD_ORDER,
    FUSE_FLAGS,
    PT2E_KEYS,
    QUANTIZER_FIELDS,
)

WIDTH = 88
INDENT = 4

# Canonical orders of the fields and keys whose order carries no meaning.
FIELD_ORDER = FMT_FIELD_ORDER
DTYPE_KEY_ORDER = DTYPE_KEY_WORDS
# Either spelling of a constraint sorts to torch's order.
CONSTRAINT_KEY_ORDER = {name: i for i, names in enumerate(CONSTRAINT_FIELDS) for name in names}
FUSE_FLAG_ORDER = FUSE_FLAGS
PT2E_KEY_ORDER = tuple(PT2E_KEYS)
QUANTIZER_FIELD_ORDER = tuple(QUANTIZER_FIELDS)


def _rank(order: Sequence[str] | Mapping[str, int], key: Any) -> tuple[int, int]:
    if isinstance(order, Mapping):
        return (0, order[key]) if key in order else (1, 0)
    return (0, order.index(key)) if key in order else (1, 0)


def _sorted_entries(
    entries: tuple[m.Entry, ...], order: Sequence[str] | Mapping[str, int]
) -> tuple[m.Entry, ...]:
    return tuple(sorted(entries, key=lambda e: _rank(order, e.key)))


def _dtype_expr(e: m.Expr) -> m.Expr:
    """A dtype-set expression with the keys of its dtype configs in canonical order."""
    if isinstance(e, m.Record):
        return replace(e, entries=_sorted_entries(e.entries, DTYPE_KEY_ORDER))
    if isinstance(e, m.ListExpr):
        return replace(e, items=tuple(_dtype_expr(x) for x in e.items))
    if isinstance(e, m.Call) and e.func.text == "constrain" and e.args:
        return replace(e, args=(_dtype_expr(e.args[0]), *e.args[1:]))
    return e


def _canon_field(f: m.Field) -> m.Field:
    if f.name == "dtypes":
        return replace(f, value=_dtype_expr(f.value))
    if f.name == "pt2e" and isinstance(f.value, m.Record):
        return replace(
            f, value=replace(f.value, entries=_sorted_entries(f.value.entries, PT2E_KEY_ORDER))
        )
    return f


def _canon_item(item: m.Item) -> m.Item:
    if isinstance(item, m.PatternItem):
        flds = tuple(_canon_field(f) for f in item.fields)
        return replace(item, fields=tuple(sorted(flds, key=lambda f: _rank(FIELD_ORDER, f.name))))
    if isinstance(item, m.ForItem):
        return replace(item, body=tuple(_canon_item(i) for i in item.body))
    return item


def _canon_decl(d: m.Decl) -> m.Decl:
    if isinstance(d, m.ConstraintDecl):
        return replace(d, entries=_sorted_entries(d.entries, CONSTRAINT_KEY_ORDER))
    if isinstance(d, m.DTypesDecl):
        return replace(d, value=_dtype_expr(d.value))
    if isinstance(d, m.FuseDecl):
        return replace(d, flags=tuple(sorted(d.flags, key=lambda f: _rank(FUSE_FLAG_ORDER, f))))
    if isinstance(d, (m.GroupDecl, m.BackendDecl)):
        return replace(d, body=tuple(_canon_item(i) for i in d.body))
    if isinstance(d, m.QuantizerDecl):
        rank = lambda f: _rank(QUANTIZER_FIELD_ORDER, f.name)  # noqa: E731
        return replace(d, fields=tuple(sorted(d.fields, key=rank)))
    return d


def canonical_order(spec: m.Spec) -> m.Spec:
    """The same spec with every order that carries no meaning made canonical."""
    return replace(spec, decls=tuple(_canon_decl(d) for d in spec.decls))


# The fields of each node type but its span, found once per type (``fields`` is slow).
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _strip(node: Any) -> Any:
    if isinstance(node, tuple):
        return tuple(map(_strip, node))
    kind = type(node)
    names = _FIELDS.get(kind, ())
    if names == ():
        names = _FIELDS[kind] = (
            tuple(f.name for f in fields(node) if f.name != "span")
            if is_dataclass(node) and not isinstance(node, type)
            else None
        )
    if names is not None:
        return (kind.__name__,) + tuple(_strip(getattr(node, n)) for n in names)
    if isinstance(node, float):
        return ("float", node)
    return node


def meaning(spec: m.Spec) -> tuple:
    """What a spec says, without spans, comments or meaningless order: equal iff same meaning."""
    return _strip(canonical_order(spec).decls)
