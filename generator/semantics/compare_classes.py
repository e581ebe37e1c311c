"""``bcfg diff`` on a quantizer's ``classes:``: each class added or removed, and in a class
each parameter added, removed, renamed or given another default, each base or init hook
changed, each stage's ops gained or lost, each pair added or dropped, one change each,
graded by what it does to users: what breaks a caller (a parameter removed, renamed or
required, a class removed) or leaves ops float (a stage or pair dropped, a stage seeing
fewer ops) is narrowing; what only adds is widening."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable

from . import model as m

# (field, before, after, severity word): the compare module makes its Changes of them.
Row = tuple[str, str | None, str | None, str]
NARROWING, WIDENING, NEUTRAL = "narrowing", "widening", "neutral"


def _default(p: m.ClassParam) -> str:
    if p.required:
        return "required"
    if p.path is not None:
        return p.path
    if p.calls is not None:
        return p.calls or "[]"
    return repr(p.value) + (" (fixed)" if p.fixed else "")


def _param(p: m.ClassParam) -> str:
    return p.name if p.required else f"{p.name}={_default(p)}"


def signature(c: m.QuantClass) -> str:
    kind = "def" if c.function else "class"
    return f"{kind} {c.name}({', '.join(map(_param, c.params))})"


def _op(s: m.Symbol) -> str:
    return s.path.removeprefix("torch.ops.")


def _stage(s: m.ClassStage) -> str:
    config = s.param or s.path or "?"
    if s.firsts:
        return f"{config} on the chains of {', '.join(map(_op, s.firsts))}"
    if s.targets is None:
        return f"{config} on every op"
    return f"{config} on {', '.join(map(_op, s.targets))}"


def _pair(p: m.ClassPair) -> str:
    if p.splice is not None:
        return f"the pairs of {p.splice}"
    assert p.config is not None
    config = p.config.param or p.config.path
    qat = "" if p.qat is None else f" (qat: {p.qat.param or p.qat.path})"
    return f"{p.pattern} with {config}{qat}"


def rows(a: tuple[m.QuantClass, ...], b: tuple[m.QuantClass, ...]) -> list[tuple[str, Row]]:
    """Every difference of the classes from ``a`` to ``b``, each with the name of its class:
    the classes removed, then class by class in ``b``'s order."""
    old = {c.name: c for c in a}
    new = {c.name: c for c in b}
    out: list[tuple[str, Row]] = []
    for c in a:
        if c.name not in new:
            out.append((c.name, ("PT2E class", signature(c), None, NARROWING)))
    for c in b:
        if c.name not in old:
            out.append((c.name, ("PT2E class", None, signature(c), WIDENING)))
        elif old[c.name] != c:
            out += [(c.name, row) for row in _class_rows(old[c.name], c)]
    return out


def _class_rows(a: m.QuantClass, b: m.QuantClass) -> list[Row]:
    field = f"PT2E class {b.name}"
    out = _param_rows(field, a.params, b.params)
    bases_a = [s.path for s in a.mixins] + [a.parent or "(the generated class)"]
    bases_b = [s.path for s in b.mixins] + [b.parent or "(the generated class)"]
    if bases_a != bases_b:
        out.append((f"{field} bases", ", ".join(bases_a), ", ".join(bases_b), NEUTRAL))
    init_a, init_b = (c.init.path if c.init else None for c in (a, b))
    if init_a != init_b:
        out.append((f"{field} init", init_a, init_b, NEUTRAL))
    if (a.pair, a.function) != (b.pair, b.function):
        out.append((f"{field} kind", signature(a), signature(b), NARROWING))
    out += _stage_rows(field, a.stages, b.stages)
    out += _multiset_rows(f"{field} pair", a.pairs, b.pairs, _pair)
    return out


def _param_rows(field: str, a: tuple[m.ClassParam, ...], b: tuple[m.ClassParam, ...]) -> list[Row]:
    """Parameters by name; one that left where one of another name came, with the same
    default, is a rename (keyword callers break)."""
    out: list[Row] = []
    names_a, names_b = [p.name for p in a], [p.name for p in b]
    gone = [p for p in a if p.name not in names_b]
    came = [p for p in b if p.name not in names_a]
    renamed = []
    for p in list(gone):
        q = next((q for q in came if _default(q) == _default(p)), None)
        if q is not None and names_a.index(p.name) == names_b.index(q.name):
            renamed.append((p, q))
            gone.remove(p)
            came.remove(q)
    for p, q in renamed:
        out.append(
            (f"{field} parameter renamed (keyword callers break)", _param(p), _param(q), NARROWING)
        )
    for p in gone:
        out.append((f"{field} parameter", _param(p), None, NARROWING))
    for q in came:
        out.append((f"{field} parameter", None, _param(q), NARROWING if q.required else WIDENING))
    for p in a:
        q = next((q for q in b if q.name == p.name), None)
        if q is None or q == p:
            continue
        if q.required and not p.required:
            severity = NARROWING
        elif q.fixed != p.fixed:
            severity = NARROWING if q.fixed else WIDENING
        else:
            severity = NEUTRAL
        out.append((f"{field} parameter {p.name}", _default(p), _default(q), severity))
    kept_a = [n for n in names_a if n in names_b]
    kept_b = [n for n in names_b if n in names_a]
    if kept_a != kept_b:  # positional callers break
        out.append((f"{field} parameter order", ", ".join(kept_a), ", ".join(kept_b), NARROWING))
    return out


def _stage_rows(field: str, a: tuple[m.ClassStage, ...], b: tuple[m.ClassStage, ...]) -> list[Row]:
    """Stages aligned by their configs (a stage taken out is one row, not a shift of every
    later one): one removed is narrowing, one added widening, and of one kept the ops it
    lost (narrowing) or gained (widening)."""
    out: list[Row] = []
    config = [(s.param, s.path) for s in a], [(s.param, s.path) for s in b]
    matcher = difflib.SequenceMatcher(None, config[0], config[1], autojunk=False)
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        kept = list(zip(range(i1, i2), range(j1, j2)))
        for i, j in kept:
            out += _one_stage(f"{field} stage {j + 1}", a[i], b[j])
        for i in range(i1 + len(kept), i2):
            out.append((f"{field} stage {i + 1}", _stage(a[i]), None, NARROWING))
        for j in range(j1 + len(kept), j2):
            out.append((f"{field} stage {j + 1}", None, _stage(b[j]), WIDENING))
    return out


def _one_stage(label: str, x: m.ClassStage, y: m.ClassStage) -> list[Row]:
    if x == y:
        return []
    out: list[Row] = []
    if (x.param, x.path) != (y.param, y.path):
        out.append((f"{label} config", x.param or x.path, y.param or y.path, NEUTRAL))
    if (x.targets is None) != (y.targets is None) or bool(x.firsts) != bool(y.firsts):
        every = x.targets is None and not x.firsts
        out.append((f"{label} ops", _stage(x), _stage(y), NARROWING if every else NEUTRAL))
        return out
    ops_x, ops_y = (x.firsts or x.targets or ()), (y.firsts or y.targets or ())
    what = "chains of" if x.firsts else "ops"
    out += [(f"{label} {what}", _op(op), None, NARROWING) for op in ops_x if op not in ops_y]
    out += [(f"{label} {what}", None, _op(op), WIDENING) for op in ops_y if op not in ops_x]
    return out


def _multiset_rows(
    field: str, a: tuple[m.ClassPair, ...], b: tuple[m.ClassPair, ...], text: Callable
) -> list[Row]:
    """Pairs dropped (narrowing: their ops left float) and added (widening)."""
    ca, cb = Counter(a), Counter(b)
    out: list[Row] = []
    for p in dict.fromkeys(a):
        out += [(field, text(p), None, NARROWING)] * max(0, ca[p] - cb[p])
    for p in dict.fromkeys(b):
        out += [(field, None, text(p), WIDENING)] * max(0, cb[p] - ca[p])
    return out
