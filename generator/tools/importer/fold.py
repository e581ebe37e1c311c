"""Step 3: syntax, and loops: runs of patterns that differ only in some values become ``for`` loops."""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from ...lang import syntax as m
from .common import MAX_BLOCK, MAX_VARS, SPAN
from .naming import Names


@dataclass(frozen=True)
class Hole:
    """In a loop template: an expression that differs between repetitions."""

    values: tuple
    role: str


@dataclass(frozen=True)
class PartHole:
    """In a loop template: the part of a name segment that differs (``Conv${n}d``)."""

    prefix: str
    suffix: str
    values: tuple[str, ...]


class _NoFold(Exception):
    pass


_MID = re.compile(r"[A-Za-z0-9_]+\Z")
_NAME = re.compile(
    r"(?:[A-Za-z_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?:[A-Za-z0-9_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\Z"
)


def _part_hole(strings: list[str], last: bool, single: bool) -> PartHole | None:
    """The name-segment hole that covers ``strings``, if the language can write it.

    Digits in any segment (``Conv${n}d``); otherwise the whole last segment of a
    dotted path (``nn.${name}``).
    """
    prefix = os.path.commonprefix(strings)
    rests = [s[len(prefix) :] for s in strings]
    suffix = os.path.commonprefix([r[::-1] for r in rests])[::-1]
    mids = [r[: len(r) - len(suffix)] for r in rests]
    if not all(x.isdigit() for x in mids) and last and not single:
        prefix, suffix, mids = "", "", list(strings)
    if not all(_MID.match(x) for x in mids):
        return None
    if not _NAME.match(prefix + "${v}" + suffix):
        return None
    if not all(x.isdigit() for x in mids) and (single or not last):
        return None
    return PartHole(prefix, suffix, tuple(mids))


def _inst(t: Any, j: int) -> Any:
    """Repetition ``j`` of a template."""
    if isinstance(t, Hole):
        return t.values[j]
    if isinstance(t, m.DottedName):
        return m.DottedName(
            tuple(
                p.prefix + p.values[j] + p.suffix if isinstance(p, PartHole) else p for p in t.parts
            ),
            t.span,
        )
    if isinstance(t, tuple):
        return tuple(_inst(x, j) for x in t)
    if is_dataclass(t) and not isinstance(t, type):
        return replace(
            t, **{f.name: _inst(getattr(t, f.name), j) for f in fields(t) if f.name != "span"}
        )
    return t


_EXPR_TYPES = (
    m.DottedName,
    m.Str,
    m.Int,
    m.Float,
    m.BinOp,
    m.Neg,
    m.TupleExpr,
    m.ListExpr,
    m.Record,
    m.PatternRef,
    m.Index,
    m.Call,
)


def _au(t: Any, x: Any, r: int, role: str, expr_pos: bool) -> Any:
    """Generalise template ``t`` (of ``r`` repetitions) to also cover ``x``."""
    if isinstance(t, Hole):
        return Hole(t.values + (x,), t.role)
    if t == x:
        return t
    try:
        return _au_struct(t, x, r, role)
    except _NoFold:
        if not expr_pos:
            raise
    return Hole(tuple(_inst(t, j) for j in range(r)) + (x,), role)


def _au_struct(t: Any, x: Any, r: int, role: str) -> Any:
    if type(t) is not type(x):
        raise _NoFold
    if isinstance(t, m.DottedName):
        if len(t.parts) != len(x.parts):
            raise _NoFold
        parts: list[Any] = []
        for n, (tp, xp) in enumerate(zip(t.parts, x.parts)):
            last, single = n == len(t.parts) - 1, len(t.parts) == 1
            if isinstance(tp, PartHole):
                strings = [tp.prefix + v + tp.suffix for v in tp.values] + [xp]
            elif tp == xp:
                parts.append(tp)
                continue
            else:
                strings = [tp] * r + [xp]
            hole = _part_hole(strings, last, single)
            if hole is None:
                raise _NoFold
            parts.append(hole)
        return m.DottedName(tuple(parts), t.span)
    if not is_dataclass(t):
        raise _NoFold
    changes = {}
    for f in fields(t):
        if f.name == "span":
            continue
        tv, xv = getattr(t, f.name), getattr(x, f.name)
        sub_role = f"{role}.{f.name}" if not isinstance(t, m.Field) else t.name
        if isinstance(t, m.PatternItem) and f.name == "head":
            sub_role = "op"
        changes[f.name] = _au_value(t, f.name, tv, xv, r, sub_role)
    return replace(t, **changes)


def _au_value(owner: Any, name: str, tv: Any, xv: Any, r: int, role: str) -> Any:
    if isinstance(tv, tuple) or isinstance(xv, tuple):
        if not (isinstance(tv, tuple) and isinstance(xv, tuple)) or len(tv) != len(xv):
            raise _NoFold
        return tuple(_au_value(owner, name, a, b, r, role) for a, b in zip(tv, xv))
    if isinstance(tv, (Hole, *_EXPR_TYPES)):
        expr_pos = not (isinstance(owner, m.Call) and name == "func")
        return _au(tv, xv, r, role, expr_pos)
    if is_dataclass(tv) and not isinstance(tv, type):
        return _au(tv, xv, r, role, False)
    if tv != xv or type(tv) is not type(xv):
        raise _NoFold
    return tv


def _holes(t: Any, out: list) -> list:
    if isinstance(t, (Hole, PartHole)):
        out.append(t)
    elif isinstance(t, m.DottedName):
        out.extend(p for p in t.parts if isinstance(p, PartHole))
    elif isinstance(t, tuple):
        for x in t:
            _holes(x, out)
    elif is_dataclass(t) and not isinstance(t, type):
        for f in fields(t):
            if f.name != "span":
                _holes(getattr(t, f.name), out)
    return out


def _variables(template: tuple) -> list[tuple[str, tuple, str]] | None:
    """The loop variables a template needs: (kind, values, role); None if too many."""
    seen: dict[tuple, tuple[str, tuple, str]] = {}
    for h in _holes(template, []):
        key = ("e", h.values) if isinstance(h, Hole) else ("p", h.values)
        if key not in seen:
            seen[key] = (key[0], h.values, h.role if isinstance(h, Hole) else "name")
            if len(seen) > MAX_VARS:
                return None
    return list(seen.values())


@dataclass
class Fold:
    start: int
    k: int
    r: int
    template: tuple
    variables: list
    saving: int


class Folder:
    """Folds repetition in a list of items into ``for`` loops."""

    def __init__(
        self, names: Names, measure: Callable[[m.Item], int], text: Callable[[m.Expr], str]
    ):
        self.names = names
        self.measure = measure
        self.text = text

    def fold(self, items: list[m.Item], taken: frozenset[str] = frozenset()) -> list[m.Item]:
        if len(items) < 2:
            return items
        lines = [self.measure(it) for it in items]
        sigs = [
            (
                type(it),
                getattr(it, "complex", None),
                tuple(f.name for f in getattr(it, "fields", ())),
            )
            for it in items
        ]
        best: Fold | None = None
        n = len(items)
        for i in range(n):
            for k in range(1, min(MAX_BLOCK, (n - i) // 2) + 1):
                fold = self._longest(items, sigs, lines, i, k)
                if fold is not None and (best is None or fold.saving > best.saving):
                    best = fold
        if best is None:
            return items
        end = best.start + best.k * best.r
        loop = self._loop(best, taken)
        return self.fold(items[: best.start], taken) + [loop] + self.fold(items[end:], taken)

    def _longest(
        self, items: list[m.Item], sigs: list[Any], lines: list[int], i: int, k: int
    ) -> Fold | None:
        """The best loop over blocks of ``k`` items from ``i``, by lines saved."""
        template = tuple(items[i : i + k])
        block = sum(lines[i : i + k])
        r = 1
        best: Fold | None = None
        while i + (r + 1) * k <= len(items):
            nxt = i + r * k
            if sigs[nxt : nxt + k] != sigs[i : i + k]:
                break
            try:
                cand = tuple(
                    _au(a, b, r, "item", False) for a, b in zip(template, items[nxt : nxt + k])
                )
            except _NoFold:
                break
            variables = _variables(cand)
            if variables is None:
                break
            template, r = cand, r + 1
            if (r - 1) * block - 2 <= (best.saving if best else 0):
                continue
            saving = (r - 1) * block - self.header(variables) - 1
            if saving > (best.saving if best else 0):
                best = Fold(i, k, r, template, variables, saving)
        return best

    def header(self, variables: list) -> int:
        """Lines of ``for x in [...] {`` for these variables, at one level of indentation."""
        columns = [_value_exprs(vals) for _, vals, _ in variables]
        if len(columns) == 1:
            values = columns[0]
        else:
            values = [m.TupleExpr(tuple(col), SPAN) for col in zip(*columns)]
        return self.text(m.ListExpr(tuple(values), SPAN)).count("\n") + 1

    def _loop(self, fold: Fold, taken: frozenset[str]) -> m.ForItem:
        names: dict[tuple, str] = {}
        var_exprs: list[list[m.Expr]] = []
        for kind, values, role in fold.variables:
            name = self._var_name(kind, values, role, taken | set(names.values()))
            names[(kind, values)] = name
            var_exprs.append(
                _value_exprs(values) if kind == "e" else [self._word(v) for v in values]
            )
        body = tuple(_realize(t, names) for t in fold.template)
        inner = taken | set(names.values())
        body = tuple(self.fold(list(body), frozenset(inner)))
        if len(var_exprs) == 1:
            iterable = m.ListExpr(tuple(var_exprs[0]), SPAN)
        else:
            iterable = m.ListExpr(
                tuple(m.TupleExpr(tuple(col), SPAN) for col in zip(*var_exprs)), SPAN
            )
        targets = tuple(names[(k, v)] for k, v, _ in fold.variables)
        return m.ForItem(targets, len(targets) > 1, iterable, body, SPAN)

    def _var_name(self, kind: str, values: tuple, role: str, taken: frozenset[str]) -> str:
        if kind == "p":
            base = "n" if all(v.isdigit() for v in values) else "name"
        else:
            lasts = {v.parts[-1].lower() if isinstance(v, m.DottedName) else None for v in values}
            ops = {
                (
                    v.parts[-2].lower()
                    if isinstance(v, m.DottedName) and v.parts[0] == "aten" and len(v.parts) > 2
                    else None
                )
                for v in values
            }
            op, last = next(iter(ops)), next(iter(lasts))
            if len(ops) == 1 and op is not None:
                base = op.strip("_")
            elif len(lasts) == 1 and last is not None:
                base = last.strip("_")
            else:
                base = _ROLE_VARS.get(role.split(".")[0], "x")
        base = re.sub(r"\W", "_", base) or "x"
        if base[0].isdigit():
            base = "x"
        name, n = base, 2
        while name in taken or name in self.names.taken:
            name = f"{base}{n}"
            n += 1
        return name

    def _word(self, v: str) -> m.Expr:
        if v.isdigit() and (v == "0" or not v.startswith("0")):
            return m.Int(int(v), SPAN)
        if v.isidentifier() and v not in self.names.taken and not keyword.iskeyword(v):
            return m.DottedName((v,), SPAN)
        return m.Str(v, SPAN)


_ROLE_VARS = {
    "op": "op",
    "dtypes": "ds",
    "root": "root",
    "reference": "ref",
    "qat": "qat",
    "fused": "fused",
    "fuser": "fn",
    "root_node": "node",
    "extra_inputs": "extra",
    "observation": "obs",
    "num_tensor_args": "counts",
    "input_index": "index",
}


def _value_exprs(values: tuple) -> list:
    return [v if not isinstance(v, str) else m.Str(v, SPAN) for v in values]


def _realize(t: Any, names: dict[tuple, str]) -> Any:
    """A template with its holes replaced by references to the loop variables."""
    if isinstance(t, Hole):
        return m.DottedName((names[("e", t.values)],), SPAN)
    if isinstance(t, m.DottedName):
        return m.DottedName(
            tuple(
                (
                    f"{p.prefix}${{{names[('p', p.values)]}}}{p.suffix}"
                    if isinstance(p, PartHole)
                    else p
                )
                for p in t.parts
            ),
            t.span,
        )
    if isinstance(t, tuple):
        return tuple(_realize(x, names) for x in t)
    if is_dataclass(t) and not isinstance(t, type):
        return replace(
            t,
            **{f.name: _realize(getattr(t, f.name), names) for f in fields(t) if f.name != "span"},
        )
    return t
