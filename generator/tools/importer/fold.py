"""Step 3: syntax, and loops: runs of patterns that differ only in some values become ``for`` loops.

A loop repeats a block of ``k`` items ``r`` times; the template of the block is
the least general generalisation (anti-unification) of the repetitions, with a
``Hole`` wherever an expression differs and a ``PartHole`` where only a digit
run of a name differs (``nn.Conv${n}d``). A loop may need at most ``MAX_VARS``
variables (holes holding the same column of values share one).

The search is linear in the number of items for a fixed block size: for each
``k`` it extends runs only from the starts that are not inside a run already
tried (the start of a list, where the items' signatures stop repeating with
period ``k``, and where an earlier run stopped), and remembers every run, so
choosing the best loop, then the best in what is left on either side of it,
never repeats the work. A run repeats at most ``MAX_REPEAT`` times; the header
of a loop (``for x in [...] {``) is measured by arithmetic on the width of each
value, rendered once.
"""

from __future__ import annotations

import bisect
import keyword
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from ...lang import syntax as m
from .common import MAX_BLOCK, MAX_VARS, SPAN, is_spec_word, spec_name
from .naming import Names

MAX_REPEAT = 96  # repetitions of one loop; a longer run becomes several loops
WORK_PER_ITEM = 32  # items anti-unified per item of the list, at most (then runs stop being tried)
WIDTH, INDENT = 88, 4  # fmt's line width, and the indentation a loop header is measured at


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
    if not all(x.isascii() and x.isdigit() for x in mids) and last and not single:
        prefix, suffix, mids = "", "", list(strings)
    if not all(_MID.match(x) for x in mids):
        return None
    if not _NAME.match(prefix + "${v}" + suffix):
        return None
    if not all(x.isascii() and x.isdigit() for x in mids) and (single or not last):
        return None
    return PartHole(prefix, suffix, tuple(mids))


_PAIRS: dict[tuple[str, str, bool, bool], PartHole | None] = {}


def _pair_hole(a: str, b: str, r: int, last: bool, single: bool) -> PartHole | None:
    """``_part_hole`` of ``r`` times ``a`` then ``b``: the same split for every ``r``, computed once."""
    key = (a, b, last, single)
    if key not in _PAIRS:
        _PAIRS[key] = _part_hole([a, b], last, single)
    hole = _PAIRS[key]
    if hole is None:
        return None
    return PartHole(hole.prefix, hole.suffix, (hole.values[0],) * r + (hole.values[1],))


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

# The fields of each syntax node type, but its span, computed once.
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(t: Any) -> tuple[str, ...]:
    names = _FIELDS.get(type(t))
    if names is None:
        names = _FIELDS[type(t)] = tuple(f.name for f in fields(t) if f.name != "span")
    return names


def _au(t: Any, x: Any, r: int, role: str, expr_pos: bool) -> Any:
    """Generalise template ``t`` (of ``r`` repetitions) to also cover ``x``."""
    if isinstance(t, Hole):
        return Hole(t.values + (x,), t.role)
    if t is x or t == x:
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
                hole = _pair_hole(tp, xp, r, last, single)
                if hole is None:
                    raise _NoFold
                parts.append(hole)
                continue
            hole = _part_hole(strings, last, single)
            if hole is None:
                raise _NoFold
            parts.append(hole)
        return m.DottedName(tuple(parts), t.span)
    if not is_dataclass(t):
        raise _NoFold
    changes = {}
    for name in _fields_of(t):
        tv, xv = getattr(t, name), getattr(x, name)
        if tv is xv and not isinstance(tv, Hole):
            continue
        sub_role = f"{role}.{name}" if not isinstance(t, m.Field) else t.name
        if isinstance(t, m.PatternItem) and name == "head":
            sub_role = "op"
        changes[name] = _au_value(t, name, tv, xv, r, sub_role)
    return replace(t, **changes) if changes else t


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
        for name in _fields_of(t):
            _holes(getattr(t, name), out)
    return out


def _column_key(h: Hole | PartHole) -> tuple:
    # Imported syntax is built from interned nodes, so equal values are
    # (almost always) the same object: identity first, equality as the fallback.
    if isinstance(h, PartHole):
        return ("p", h.values)
    return ("e", tuple(v if isinstance(v, (str, int)) else _Same(v) for v in h.values))


class _Same:
    """A value compared by identity first and by equality only when that fails."""

    __slots__ = ("v", "h")

    def __init__(self, v: Any):
        self.v = v
        self.h = id(v)

    def __hash__(self) -> int:
        return hash(type(self.v))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and (self.v is other.v or self.v == other.v)


def _variables(template: tuple) -> list[tuple[str, tuple, str]] | None:
    """The loop variables a template needs: (kind, values, role); None if too many."""
    seen: dict[tuple, tuple[str, tuple, str]] = {}
    for h in _holes(template, []):
        key = _column_key(h)
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


@dataclass
class _Run:
    """The runs of one start and block size: the best saving at each length that improved it."""

    lengths: list[int] = field(default_factory=list)  # r, increasing
    savings: list[int] = field(default_factory=list)  # the saving at that r, increasing
    stop: int = 0  # where the run stopped: the first item it could not take


class _Search:
    """Runs over one list of items, computed once each and shared by every sub-search."""

    def __init__(self, folder: Folder, items: list[m.Item]):
        self.folder = folder
        self.items = items
        self.lines = [folder.measure(it) for it in items]
        sig_ids: dict[tuple, int] = {}
        self.sigs = [
            sig_ids.setdefault(
                (
                    type(it),
                    getattr(it, "complex", None),
                    tuple(f.name for f in getattr(it, "fields", ())),
                ),
                len(sig_ids),
            )
            for it in items
        ]
        self.runs: dict[tuple[int, int], _Run] = {}
        self._breaks: dict[int, list[int]] = {}
        self._full: dict[int, list[int]] = {}
        # A bound on the work, deterministic: lists whose every item looks alike
        # (thousands of distinct patterns with the same fields) would otherwise
        # try every block size from every phase. Small blocks are tried first.
        self.budget = WORK_PER_ITEM * len(items) + 4096

    def run(self, i: int, k: int) -> _Run:
        got = self.runs.get((i, k))
        if got is None:
            if self.budget <= 0:
                return _Run(stop=i + k)  # out of work: no loop from here
            got = self.runs[(i, k)] = self._extend(i, k)
        return got

    def _extend(self, i: int, k: int) -> _Run:
        items, sigs = self.items, self.sigs
        template = tuple(items[i : i + k])
        block = sum(self.lines[i : i + k])
        run = _Run(stop=i + k)
        r, best = 1, 0
        while i + (r + 1) * k <= len(items) and r < MAX_REPEAT:
            nxt = i + r * k
            if sigs[nxt : nxt + k] != sigs[i : i + k]:
                break
            cand = self._step(template, items[nxt : nxt + k], r)
            if cand is None:
                break
            variables = _variables(cand)
            if variables is None:
                break
            template, r = cand, r + 1
            run.stop = i + r * k
            if (r - 1) * block - 2 <= best:
                continue
            saving = (r - 1) * block - self.folder.header(variables) - 1
            if saving > best:
                best = saving
                run.lengths.append(r)
                run.savings.append(saving)
        return run

    def _step(self, template: tuple, block: list, r: int) -> tuple | None:
        """The template generalised to one more block; None if it cannot be, or needs too many variables.

        Holes only accumulate, so the variables are counted as the block goes
        and the step stops at the first item that needs one too many.
        """
        out = []
        columns: set[tuple] = set()
        for a, b in zip(template, block):
            self.budget -= 1
            try:
                t = _au(a, b, r, "item", False)
            except _NoFold:
                return None
            for h in _holes(t, []):
                columns.add(_column_key(h))
            if len(columns) > MAX_VARS:
                return None
            out.append(t)
        return tuple(out)

    def breaks(self, k: int) -> list[int]:
        """Every ``i`` where the block of ``k`` signatures before ``i`` differs from the one at ``i``."""
        got = self._breaks.get(k)
        if got is None:
            sigs, n = self.sigs, len(self.sigs)
            # differ[j]: how many j' < j have sigs[j'] != sigs[j' + k]
            differ = [0]
            for j in range(n - k):
                differ.append(differ[-1] + (sigs[j] != sigs[j + k]))
            got = [i for i in range(k, n - k + 1) if differ[i] - differ[i - k]]
            self._breaks[k] = got
        return got

    def starts(self, k: int, lo: int, hi: int) -> list[int]:
        """Where runs of blocks of ``k`` may start in ``items[lo:hi]``, in order.

        A run from inside a stretch of period ``k`` is a tail of the run from
        its beginning, unless that run stopped before it: so the candidates are
        the first ``k`` items, the breaks of the period, and where runs stopped.
        Those of the whole list are found once; a part of it adds the chains
        from its own first items until they meet them.
        """
        full = self._full.get(k)
        if full is None:
            chain = self._chain(
                k, list(range(min(k, len(self.items)))), self.breaks(k), len(self.items)
            )
            # Only runs that save lines matter: most starts of a list without
            # repetition never do, and are not looked at again.
            full = self._full[k] = [i for i in chain if self.run(i, k).lengths]
        inner = full[bisect.bisect_left(full, lo + k) : bisect.bisect_right(full, hi - 2 * k)]
        known = set(inner)
        for i in range(lo, min(lo + k, hi)):
            while i not in known and i + 2 * k <= hi:
                known.add(i)
                i = self.run(i, k).stop
        return sorted(known)

    def _chain(self, k: int, first: list[int], brk: list[int], hi: int) -> list[int]:
        todo = sorted(set(first) | set(brk))
        seen = set(todo)
        found: list[int] = []
        while todo:
            i = todo.pop(0)
            found.append(i)
            if i + 2 * k > hi:
                continue
            stop = self.run(i, k).stop
            if stop < hi and stop not in seen and stop + 2 * k <= hi:
                seen.add(stop)
                bisect.insort(todo, stop)
        return found

    def best(self, lo: int, hi: int) -> Fold | None:
        """The loop saving the most lines in ``items[lo:hi]``; the first of equals."""
        choice: tuple[int, int, int, int] | None = None  # (-saving, start, k, r)
        for k in range(1, min(MAX_BLOCK, (hi - lo) // 2) + 1):
            for i in self.starts(k, lo, hi):
                if i + 2 * k > hi:
                    continue
                run = self.run(i, k)
                j = bisect.bisect_right(run.lengths, (hi - i) // k) - 1
                if j < 0:
                    continue
                cand = (-run.savings[j], i, k, run.lengths[j])
                if choice is None or cand < choice:
                    choice = cand
        if choice is None:
            return None
        saving, i, k, r = -choice[0], choice[1], choice[2], choice[3]
        template = tuple(self.items[i : i + k])
        for rep in range(1, r):
            nxt = i + rep * k
            template = tuple(
                _au(a, b, rep, "item", False) for a, b in zip(template, self.items[nxt : nxt + k])
            )
        variables = _variables(template)
        assert variables is not None
        return Fold(i, k, r, template, variables, saving)


class Folder:
    """Folds repetition in a list of items into ``for`` loops."""

    def __init__(
        self,
        names: Names,
        measure: Callable[[m.Item], int],
        width: Callable[[Any], int | None],
        header_lines: Callable[[m.ListExpr], int],
    ):
        self.names = names
        self.measure = measure  # lines of an item
        self.width = width  # one-line width of a loop value, None if it breaks
        self.header_lines = header_lines  # lines of `for x in [...] {`, rendered

    def fold(self, items: list[m.Item], taken: frozenset[str] = frozenset()) -> list[m.Item]:
        if len(items) < 2:
            return items
        return self._fold(_Search(self, items), 0, len(items), taken)

    def _fold(self, search: _Search, lo: int, hi: int, taken: frozenset[str]) -> list[m.Item]:
        best = search.best(lo, hi) if hi - lo >= 2 else None
        if best is None:
            return search.items[lo:hi]
        end = best.start + best.k * best.r
        loop = self._loop(best, taken)
        return (
            self._fold(search, lo, best.start, taken) + [loop] + self._fold(search, end, hi, taken)
        )

    def header(self, variables: list) -> int:
        """Lines of ``for x in [...] {`` for these variables, at one level of indentation.

        fmt's layout of a list, by arithmetic: flat if it fits, else an opening
        line, the values packed at one more level of indentation, and a closing
        line. A value that does not fit on one line is measured by rendering.
        """
        columns = [vals for _, vals, _ in variables]
        widths: list[int | None]
        if len(columns) == 1:
            widths = [self.width(v) for v in columns[0]]
        else:
            widths = []
            for row in zip(*columns):
                parts = [self.width(v) for v in row]
                widths.append(
                    None if None in parts else 2 + sum(parts) + 2 * (len(parts) - 1)  # type: ignore[arg-type]
                )
        if None in widths:
            return self._rendered_header(columns)
        ws: list[int] = widths  # type: ignore[assignment]
        flat = INDENT + len("for x in ") + 2 + sum(ws) + 2 * (len(ws) - 1) + len(" {")
        if flat <= WIDTH:
            return 1
        lines, pos = 1, INDENT + ws[0] + (1 if len(ws) == 1 else 0)
        for j, w in enumerate(ws[1:], 1):
            last = j == len(ws) - 1
            if pos + 2 + w + (1 if last else 0) <= WIDTH:
                pos += 2 + w
            else:
                lines += 1
                pos = INDENT + w
            if last:
                pos += 1
        return lines + 2

    def _rendered_header(self, columns: list[tuple]) -> int:
        if len(columns) == 1:
            values = _value_exprs(columns[0])
        else:
            values = [m.TupleExpr(tuple(_value_exprs(col)), SPAN) for col in zip(*columns)]
        return self.header_lines(m.ListExpr(tuple(values), SPAN))

    def _loop(self, fold: Fold, taken: frozenset[str]) -> m.ForItem:
        names: dict[tuple, str] = {}
        var_exprs: list[list[m.Expr]] = []
        for kind, values, role in fold.variables:
            name = self._var_name(kind, values, role, taken | set(names.values()))
            names[_key(kind, values)] = name
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
        targets = tuple(names[_key(k, v)] for k, v, _ in fold.variables)
        return m.ForItem(targets, len(targets) > 1, iterable, body, SPAN)

    def _var_name(self, kind: str, values: tuple, role: str, taken: frozenset[str]) -> str:
        if kind == "p":
            base = "n" if all(v.isascii() and v.isdigit() for v in values) else "name"
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
        base = spec_name(base) or "x"
        if base[0].isdigit():
            base = "x"
        name, n = base, 2
        while name in taken or name in self.names.taken:
            name = f"{base}{n}"
            n += 1
        return name

    def _word(self, v: str) -> m.Expr:
        if v.isascii() and v.isdigit() and (v == "0" or not v.startswith("0")):
            return m.Int(int(v), SPAN)
        if is_spec_word(v) and v not in self.names.taken and not keyword.iskeyword(v):
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


def _key(kind: str, values: tuple) -> tuple:
    return _column_key(PartHole("", "", values) if kind == "p" else Hole(values, ""))


def _value_exprs(values: tuple) -> list:
    return [v if not isinstance(v, str) else m.Str(v, SPAN) for v in values]


def _realize(t: Any, names: dict[tuple, str]) -> Any:
    """A template with its holes replaced by references to the loop variables."""
    if isinstance(t, Hole):
        return m.DottedName((names[_key("e", t.values)],), SPAN)
    if isinstance(t, m.DottedName):
        return m.DottedName(
            tuple(
                (
                    f"{p.prefix}${{{names[_key('p', p.values)]}}}{p.suffix}"
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
        return replace(t, **{name: _realize(getattr(t, name), names) for name in _fields_of(t)})
    return t
