"""Compare: the semantic difference between two sets of resolved backends (``bcfg diff``).

Pure over the resolved model: no I/O, no torch. Backends are matched by module
name and pattern configs by identity, never by position: the pattern in the
reversed nested form torch keys configs by (``complex`` included), each symbol
by ``identity`` (two paths naming one object are one symbol). So renaming a
definition, moving an item into a group or re-wrapping a spec changes nothing,
and a change to a shared definition shows in every pattern of every backend
that uses it.

Each ``Change`` says what happened to one pattern (``added``, ``removed``,
``moved``) or to one field of it (``changed``: the field in spec words, its
value before and after as a spec writes it) and how it may affect users:
``narrowing`` when a model that was quantized may silently stop being
quantized (a pattern or dtype config removed, a dtype changed, a range or
exact-match constraint tightened), ``widening`` when more is supported, else
``neutral``. ``where`` is the spec location a reviewer should look at, in the
newer specs.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum, StrEnum
from typing import Any

from ..lang.pt2e_keys import PT2E_KEY, PT2E_TABLE, QUANTIZER_TABLE, Kind
from ..lang.vocabulary import CONSTRAINT_FIELDS, DTYPE_CONFIG_KEYS, PATTERN_FIELDS, FieldKind
from ..sources import Span
from . import checks, compare_classes, spelling
from . import model as m
from .pt2e.order import tried_order


class Action(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    MOVED = "moved"


class Severity(StrEnum):
    NARROWING = "narrowing"  # user models may silently stop being quantized
    WIDENING = "widening"
    NEUTRAL = "neutral"


@dataclass(frozen=True)
class Part:
    """One part of a grouped change: ``input.quant_max`` of a dtype config, its values and
    severity."""

    field: str
    before: str | None
    after: str | None
    severity: Severity


@dataclass(frozen=True)
class Change:
    """One difference: a backend or pattern added, removed or moved, or one field of a pattern changed.

    ``pattern`` is None for a change of the backend itself; ``field``,
    ``before`` and ``after`` are None where they do not apply. ``origin`` is
    the config's origin anchor (the newer one; the older one when removed).
    ``where`` is always in the newer specs (for a removed pattern, its
    backend; None for a removed backend or quantizer); ``was`` is where a
    removed pattern, backend or quantizer was written.
    """

    backend: str
    pattern: str | None
    action: Action
    field: str | None
    before: str | None
    after: str | None
    severity: Severity
    where: Span | None = None
    origin: str | None = None
    was: Span | None = None  # where what was removed was written, in the older specs
    # A change of one dtype config in several parts (slots, constraints) is one change:
    # ``before``/``after`` say all of it, each part is here (its field relative to ``field``).
    parts: tuple[Part, ...] = ()


# How a dotted path is identified: the path itself, or the first path that names the same object.
Identity = Callable[[str], str]


@dataclass(frozen=True)
class _Row:
    """One field difference of a pattern config, before it is placed and located."""

    field: str
    before: str | None
    after: str | None
    severity: Severity
    definition: tuple[str, str] | None = None  # (kind, name) of the definition it is about
    parts: tuple[Part, ...] = ()


def compare(
    base: Sequence[m.Backend],
    head: Sequence[m.Backend],
    identity: Identity | None = None,
    quantizers: tuple[Sequence[m.Quantizer], Sequence[m.Quantizer]] = ((), ()),
) -> list[Change]:
    """Every difference from the backends ``base`` to the backends ``head``, by backend then position.

    ``quantizers`` are the PT2E quantizer declarations of each side: a
    quantizer asked for or dropped, and its transforms, are changes of its
    backend (its rules follow from the backend's patterns, compared with them).
    """
    canon = _Canon(identity or (lambda path: path))
    old = {b.module: b for b in base}
    new = {b.module: b for b in head}
    old_q = {q.module: q for q in quantizers[0]}
    new_q = {q.module: q for q in quantizers[1]}
    out: list[Change] = []
    for module in sorted(old.keys() | new.keys()):
        a, b = old.get(module), new.get(module)
        if a is None:
            assert b is not None
            n = _configs(b, new_q.get(module))
            out.append(Change(module, None, Action.ADDED, None, None, n, Severity.WIDENING, b.span))
        elif b is None:
            n = _configs(a, old_q.get(module))
            removed = Change(module, None, Action.REMOVED, None, n, None, Severity.NARROWING)
            out.append(replace(removed, was=a.span))
        else:
            qa, qb = old_q.get(module), new_q.get(module)
            out.extend(_fx_side_changes(a, b, qa, qb))
            out.extend(_quantizer_changes(module, qa, qb, canon))
            kept = _backend_changes(a, b, canon, qa is not None or qb is not None)
            out.extend(_order_changes(b, qa, qb, kept, canon))
    return out


FX_FIELD = "FX BackendConfig"
QUANTIZER_FIELD = "PT2E quantizer"
ORDER_FIELD = "PT2E order"


def _fx_side_changes(
    a: m.Backend, b: m.Backend, qa: m.Quantizer | None, qb: m.Quantizer | None
) -> list[Change]:
    """A backend's FX side dropped (its quantizer now says ``fx: false``: no BackendConfig, no
    ``generated/<backend>.py`` for FX users to import) or given back. Dropping it is narrowing:
    every FX user of the backend loses its getter."""
    fx_a, fx_b = qa is None or qa.fx, qb is None or qb.fx
    if fx_a == fx_b:
        return []
    none = "none (fx: false)"
    if fx_a:  # dropped: at the quantizer that says fx: false
        assert qb is not None
        before, after, severity, where, was = _configs(a), none, Severity.NARROWING, qb.span, None
    else:  # given back: fx: false taken out, or the whole quantizer (was: where it was)
        before, after, severity = none, _configs(b), Severity.WIDENING
        where = qb.span if qb is not None else b.span
        was = qa.span if qa is not None and qb is None else None
    change = Change(b.module, None, Action.CHANGED, FX_FIELD, before, after, severity, where)
    return [replace(change, was=was)]


def _quantizer_changes(
    module: str, a: m.Quantizer | None, b: m.Quantizer | None, canon: _Canon
) -> list[Change]:
    """A backend's PT2E quantizer asked for or dropped, or a field of it changed: each field
    as its row of the key table grades it (``fx`` is the FX side's, ``_fx_side_changes``)."""
    if a is None and b is None:
        return []
    if a is None or b is None:
        q = b or a
        assert q is not None
        rules = f"{len(q.rules)} rule{'s' if len(q.rules) != 1 else ''}"
        before, after = (None, rules) if a is None else (rules, None)
        severity = Severity.WIDENING if a is None else Severity.NARROWING
        where, was = (b.span, None) if b is not None else (None, q.span)
        change = Change(
            module, None, Action.CHANGED, QUANTIZER_FIELD, before, after, severity, where
        )
        return [replace(change, was=was)]
    out = []
    for key in QUANTIZER_TABLE:
        if key.word == "fx":
            continue
        va, vb = (getattr(q, key.lands[0]) for q in (a, b))
        if key.kind is Kind.HOOKS:
            if canon.value(va) == canon.value(vb):
                continue
            va, vb = (spelling.hooks(v) if v else None for v in (va, vb))
        elif key.kind is Kind.CLASSES:  # each class, parameter, stage and pair: its own row
            spans = {c.name: c.span for c in vb or ()}
            for name, (field, before, after, grade) in compare_classes.rows(va or (), vb or ()):
                where = spans.get(name) or b.span
                change = Change(module, None, Action.CHANGED, field, before, after, Severity(grade))
                out.append(replace(change, where=where))
            continue
        elif va == vb:
            continue
        elif key.kind is Kind.LEVELS:  # select: as specs write it
            va, vb = (spelling.key_text(key, v) for v in (va, vb))
        severity = _GRADES[key.grade(va, vb)]
        field_name = f"{QUANTIZER_FIELD} {key.word}"
        out.append(Change(module, None, Action.CHANGED, field_name, va, vb, severity, b.span))
    return out


def _pattern(c: m.PatternConfig) -> str:
    """A config's pattern as the diff names it: with its ``given``, which tells variants of
    one pattern apart (``aten.conv2d.default given use_explicit_layout=false``)."""
    given = () if c.pt2e is None else c.pt2e.given
    text = ", ".join(f"{k}={spelling.literal(v)}" for k, v in given)
    return spelling.pattern(c) + (f" given {text}" if given else "")


_GRADES = {1: Severity.NARROWING, -1: Severity.WIDENING, 0: Severity.NEUTRAL}


def _order_changes(
    b: m.Backend,
    qa: m.Quantizer | None,
    qb: m.Quantizer | None,
    changes: list[Change],
    canon: _Canon,
) -> list[Change]:
    """Moves that change which PT2E rule claims a node are narrowing, and say so.

    A quantizer's rules are in the order it tries them (``quantizers.tried_order``:
    chains longest first, hooks and eager shared ops in their place), and a node
    belongs to the first rule that annotates it. Two rules that share an op (or a
    hook, which may annotate anything) compete for nodes: if a reorder of the
    spec flips their order in the quantizer, some node is claimed by the other
    rule (a fusion now lost, or now made), so the move is narrowing, and a
    ``PT2E order`` row says which rules now come the other way round. A move
    that leaves the tried order of competing rules as it was stays neutral.
    """
    if qa is None or qb is None or not any(c.action == Action.MOVED for c in changes):
        return changes
    before, after = _tried(qa, canon), _tried(qb, canon)
    common = [k for k in after if k in before]
    if sorted(common, key=lambda k: before[k][0]) == common:
        return changes
    # rule -> [(a rule it swapped places with, whether it was tried before that one at base)]
    flipped: dict[Any, list[tuple[Any, bool]]] = {}
    for k, other in _competing(common, after, canon):  # k is tried before other now
        if before[k][0] > before[other][0]:
            flipped.setdefault(k, []).append((other, False))
            flipped.setdefault(other, []).append((k, True))
    configs = {c.origin.anchor: c for c in b.configs if c.origin is not None}
    rule_of = {o.anchor: k for k in after for o in after[k][1].origins}
    moved = {rule_of[c.origin] for c in changes if c.action == Action.MOVED and c.origin in rule_of}

    def first_config(k: Any) -> m.PatternConfig | None:
        return next((configs[o.anchor] for o in after[k][1].origins if o.anchor in configs), None)

    def shown(k: Any) -> str:
        config = first_config(k)
        return _pattern(config) if config is not None else after[k][1].name

    # Said at the rule that moved; where neither of two rules moved (a hook moved between
    # them), at both.
    said = [k for k, ps in flipped.items() if k in moved or not any(p in moved for p, _ in ps)]

    def row(k: Any, pattern: str, where: Span | None, origin: str | None) -> Change:
        was, now = _relative(flipped[k], shown, base=True), _relative(flipped[k], shown, base=False)
        return Change(
            b.module,
            pattern,
            Action.CHANGED,
            ORDER_FIELD,
            was,
            now,
            Severity.NARROWING,
            where,
            origin,
        )

    out = []
    for c in changes:
        k = rule_of.get(c.origin) if c.action == Action.MOVED and c.origin else None
        if k is not None and k in said:
            out += [
                replace(c, severity=Severity.NARROWING),
                row(k, c.pattern or shown(k), c.where, c.origin),
            ]
            said.remove(k)
        else:
            out.append(c)
    for k in said:
        config = first_config(k)
        origin = config.origin if config is not None else None
        out.append(
            row(k, shown(k), origin.item if origin else None, origin.anchor if origin else None)
        )
    return out


def _tried(q: m.Quantizer, canon: _Canon) -> dict[Any, tuple[int, m.Rule]]:
    """The rules a quantizer tries in order (propagated shared ops are not), by what they match.

    ``q.rules`` are already in that order; ``tried_order`` is applied again (it leaves
    an ordered list as it is) so that this judgement holds whatever order they are kept in.
    """
    out: dict[Any, tuple[int, m.Rule]] = {}
    for i, r in enumerate(tried_order(q.rules)):
        if r.kind is not m.RuleKind.PROPAGATE:
            key = canon.value((r.kind.value, r.chain, r.sources, r.annotate, r.qat))
            out.setdefault(key, (i, r))
    return out


def _competing(
    keys: list[Any], rules: dict[Any, tuple[int, m.Rule]], canon: _Canon
) -> list[tuple[Any, Any]]:
    """The pairs of ``keys`` (in order) whose rules may claim the same node: rules that share an
    op (or a source callable), and a hook with any rule (it may annotate anything)."""
    by_op: dict[Any, list[Any]] = {}
    hooks = []
    for k in keys:
        r = rules[k][1]
        if r.kind is m.RuleKind.HOOK:
            hooks.append(k)
        ops = {canon.value(op) for step in r.chain for op in step}
        for op in ops | {canon.value(src) for src in r.sources}:
            by_op.setdefault(op, []).append(k)
    rank = {k: i for i, k in enumerate(keys)}
    pairs = {
        (a, b) for group in by_op.values() for i, a in enumerate(group) for b in group[i + 1 :]
    }
    pairs |= {tuple(sorted((h, k), key=rank.__getitem__)) for h in hooks for k in keys if k != h}
    return sorted(pairs, key=lambda p: (rank[p[0]], rank[p[1]]))


def _relative(partners: list[tuple[Any, bool]], shown: Callable[[Any], str], base: bool) -> str:
    """``tried before A, B; after C``: where a rule stood among the rules it swapped with."""
    first = [shown(p) for p, was_first in partners if was_first == base]
    then = [shown(p) for p, was_first in partners if was_first != base]
    parts = [f"before {', '.join(first)}"] if first else []
    parts += [f"after {', '.join(then)}"] if then else []
    return "tried " + "; ".join(parts)


def _configs(b: m.Backend, q: m.Quantizer | None = None) -> str:
    """A backend's size; with its PT2E quantizer (added or removed), the classes it exports."""
    n = f"{len(b.configs)} pattern config{'s' if len(b.configs) != 1 else ''}"
    if q is None:
        return n
    names = ", ".join(dict.fromkeys([m.quantizer_class(q.module), *(c.name for c in q.classes)]))
    return f"{n}; PT2E quantizer {names}{'' if q.fx else ' (PT2E only)'}"


def _backend_changes(a: m.Backend, b: m.Backend, canon: _Canon, pt2e: bool = False) -> list[Change]:
    """The changes of a backend kept on both sides; ``pt2e``: it has a PT2E quantizer on
    either side (a change of ``observation`` grades by what the quantizer does)."""
    out: list[tuple[tuple[int, int, int], Change]] = []
    if a.name != b.name:
        change = Change(
            b.module, None, Action.CHANGED, "name", a.name, b.name, Severity.NEUTRAL, b.span
        )
        out.append(((-1, 0, 0), change))
    keys_a = [canon.pattern_key(c) for c in a.configs]
    keys_b = [canon.pattern_key(c) for c in b.configs]
    where_b = {k: j for j, k in enumerate(keys_b)}
    where_a = {k: i for i, k in enumerate(keys_a)}
    stay = _kept_in_order(keys_a, where_b)
    for j, c in enumerate(b.configs):
        old_index = where_a.get(keys_b[j])
        if old_index is None:
            out.append(((j, 0, 0), _pattern_change(b.module, c, Action.ADDED, Severity.WIDENING)))
            continue
        if keys_b[j] not in stay:
            out.append(((j, 0, 0), _moved(b, a, old_index, j)))
        if a.configs[old_index] == c:  # the same config, down to where it was said: no row
            continue
        for row in _config_rows(a.configs[old_index], c, canon, pt2e):
            out.append(((j, 1, 0), _placed(b.module, a.configs[old_index], c, row)))
    last_kept = -1
    for i, c in enumerate(a.configs):
        new_index = where_b.get(keys_a[i])
        if new_index is not None:
            last_kept = new_index
            continue
        change = _pattern_change(b.module, c, Action.REMOVED, Severity.NARROWING)
        out.append(((last_kept, 2, i), replace(change, where=b.span)))
    out += [((j, 1, 1), change) for j, change in _orphaned_fusions(a, b, canon)]
    return [change for _, change in sorted(out, key=lambda x: x[0])]


def _orphaned_fusions(a: m.Backend, b: m.Backend, canon: _Canon) -> list[tuple[int, Change]]:
    """Fusions whose fused module lost its pattern config: FX still fuses, then never quantizes.

    The fusion pattern itself did not change, so without this its part in a
    narrowing would go unsaid.
    """
    before = checks.named_modules(a, canon.value)
    out = []
    for j, c, fused in checks.unconfigured_fusions(b, canon.value):
        if canon.value(fused) in before:
            name = spelling.field_value(FieldKind.MODULE, fused)
            where = c.field_span("fused")
            change = Change(
                b.module,
                _pattern(c),
                Action.CHANGED,
                "fused",
                name,
                f"{name}, no pattern config left: never quantized",
                Severity.NARROWING,
                where,
                c.origin.anchor if c.origin is not None else None,
            )
            out.append((j, change))
    return out


def _kept_in_order(keys_a: list[Any], where_b: dict[Any, int]) -> set[Any]:
    """The common patterns that keep their relative order; every other common pattern moved.

    Patterns are unique in a backend, so the longest common subsequence of the
    two orders is the longest increasing run of newer positions taken in the
    older order: O(n log n) by patience sorting.
    """
    seq = [(where_b[k], k) for k in keys_a if k in where_b]
    tail_pos: list[int] = []  # tail_pos[n]: smallest last position of an increasing run of n + 1
    tail_idx: list[int] = []
    prev = [-1] * len(seq)
    for idx, (pos, _) in enumerate(seq):
        n = bisect.bisect_left(tail_pos, pos)
        prev[idx] = tail_idx[n - 1] if n > 0 else -1
        if n == len(tail_pos):
            tail_pos.append(pos)
            tail_idx.append(idx)
        else:
            tail_pos[n], tail_idx[n] = pos, idx
    kept: set[Any] = set()
    t = tail_idx[-1] if tail_idx else -1
    while t >= 0:
        kept.add(seq[t][1])
        t = prev[t]
    return kept


def _pattern_change(backend: str, c: m.PatternConfig, action: Action, severity: Severity) -> Change:
    origin = c.origin.anchor if c.origin is not None else None
    item = c.origin.item if c.origin is not None else None
    where, was = (item, None) if action == Action.ADDED else (None, item)
    pattern = _pattern(c)
    return Change(backend, pattern, action, None, None, None, severity, where, origin, was)


def _moved(b: m.Backend, a: m.Backend, i: int, j: int) -> Change:
    def after(configs: tuple[m.PatternConfig, ...], k: int) -> str:
        return f"after {_pattern(configs[k - 1])}" if k > 0 else "first"

    c = b.configs[j]
    origin = c.origin.anchor if c.origin is not None else None
    where = c.origin.item if c.origin is not None else None
    return Change(
        b.module,
        _pattern(c),
        Action.MOVED,
        "position",
        after(a.configs, i),
        after(b.configs, j),
        Severity.NEUTRAL,
        where,
        origin,
    )


def _placed(backend: str, a: m.PatternConfig, b: m.PatternConfig, row: _Row) -> Change:
    return Change(
        backend,
        _pattern(b),
        Action.CHANGED,
        row.field,
        row.before,
        row.after,
        row.severity,
        _where(a, b, row),
        b.origin.anchor if b.origin is not None else None,
        parts=row.parts,
    )


def _where(a: m.PatternConfig, b: m.PatternConfig, row: _Row) -> Span | None:
    """Where in the newer specs the change of ``row`` is best seen.

    The first step of the chain that differs (a ``use`` whose arguments
    changed), else the definition the row is about, else the field, else the
    pattern item.
    """
    if b.origin is None:
        return None
    if a.origin is not None:
        for x, y in zip(a.origin.chain, b.origin.chain):
            if x.anchor != y.anchor:
                return y.span
    if row.definition is not None:
        kind, name = row.definition
        refs = [*b.origin.definitions, *(r for step in b.origin.chain for r in step.definitions)]
        for ref in refs:
            if (ref.kind, ref.name) == (kind, name):
                return ref.span
    word = row.field.split("[")[0].split(".")[0]
    return b.field_span(word)


# ---------------------------------------------------------------- fields


def _config_rows(
    a: m.PatternConfig, b: m.PatternConfig, canon: _Canon, pt2e: bool = False
) -> list[_Row]:
    rows: list[_Row] = []
    for spec in PATTERN_FIELDS:
        x, y = getattr(a, spec.attr), getattr(b, spec.attr)
        if spec.kind is FieldKind.DTYPES:
            rows += _dtype_set_rows(x, y)
            continue
        x = None if m.unset(x) else x
        y = None if m.unset(y) else y
        if canon.value(x) == canon.value(y):
            continue
        before = _field_text(spec.kind, x, y)
        after = _field_text(spec.kind, y, x)
        if spec.kind is FieldKind.PT2E:
            severity = _pt2e_severity(x, y)
        elif spec.kind is FieldKind.OBSERVATION and pt2e and (x, y) == UNSHARED:
            # PT2E: the op's output gets the config's own spec instead of its input's (the
            # numerics change), and one without dtype configs is no longer quantized
            severity = Severity.NARROWING
        elif x is None:
            severity = Severity.WIDENING
        elif y is None:
            severity = Severity.NARROWING
        else:
            severity = Severity.NEUTRAL
        rows.append(_Row(spec.word, before, after, severity))
    return rows


# shared_observer -> different_observer, as the model holds them.
UNSHARED = ("OUTPUT_SHARE_OBSERVER_WITH_INPUT", "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT")


def _pt2e_severity(x: m.PT2EOptions | None, y: m.PT2EOptions | None) -> Severity:
    """How a change of a ``pt2e`` field grades, from each key's grade in the key table:
    narrowing where it quantizes fewer nodes (``aten: []``, a ``when:`` condition or a
    ``skip:`` predicate added, ``opt_in: true``, ``qat_config: required``,
    ``reused_weight: decline``, ``eager`` or ``any_float`` dropped), widening the other
    way; both ways at once is neutral. ``aten: []`` (the pattern left out) decides alone."""
    a, b = x or m.PT2EOptions(), y or m.PT2EOptions()
    out = PT2E_KEY["aten"].grade(a.aten, b.aten)
    if out:
        return Severity.NARROWING if out > 0 else Severity.WIDENING
    grades = [k.grade(getattr(a, k.word), getattr(b, k.word)) for k in PT2E_TABLE]
    narrower, wider = any(g > 0 for g in grades), any(g < 0 for g in grades)
    if narrower != wider:
        return Severity.NARROWING if narrower else Severity.WIDENING
    return Severity.NEUTRAL


def _field_text(kind: FieldKind, value: Any, other: Any) -> str | None:
    if value is None:
        return None
    text = spelling.field_value(kind, value)
    if isinstance(value, m.DefinedFuser) and other is not None:
        if text == spelling.field_value(kind, other):  # same name, other definition
            return spelling.fuse_definition(value)
    return text


def _shape(c: m.DTypeConfig) -> tuple[Any, ...]:
    dt = [d.dtype if d is not None else None for d in (c.input, c.output, c.weight)]
    return (*dt, c.bias, c.is_dynamic)


def _dtype_set_rows(
    before: tuple[m.DTypeConfig, ...], after: tuple[m.DTypeConfig, ...]
) -> list[_Row]:
    """The differences of two ``dtypes`` fields: configs added, removed, changed or reordered.

    Configs are paired when equal, then by the name they were defined under,
    then by their dtypes (a range that changed); what is left was removed or added.
    """
    if before == after:
        return []
    rest_a, rest_b = list(before), list(after)
    pairs: list[tuple[m.DTypeConfig, m.DTypeConfig]] = []
    for same in (
        lambda x, y: x == y,
        lambda x, y: x.name is not None and x.name == y.name,
        lambda x, y: _shape(x) == _shape(y),
    ):
        for x in list(rest_a):
            y = next((y for y in rest_b if same(x, y)), None)
            if y is not None:
                pairs.append((x, y))
                rest_a.remove(x)
                rest_b.remove(y)
    rows: list[_Row] = []
    for x, y in pairs:
        if x != y:
            rows += _dtype_config_rows(x, y, after.index(y))
    rows += [_Row("dtypes", spelling.dtype_config(x), None, Severity.NARROWING) for x in rest_a]
    rows += [_Row("dtypes", None, spelling.dtype_config(y), Severity.WIDENING) for y in rest_b]
    if not rows:  # the same configs in another order
        rows.append(
            _Row("dtypes", spelling.dtype_set(before), spelling.dtype_set(after), Severity.NEUTRAL)
        )
    return rows


def _named(c: m.DTypeConfig) -> tuple[str, str] | None:
    return ("dtypes", c.name) if c.name else None


def _dtype_config_rows(x: m.DTypeConfig, y: m.DTypeConfig, index: int) -> list[_Row]:
    """What changed inside one dtype config: a dtype of a slot, or a constraint on it."""
    label = f"dtypes[{y.name or x.name or index}]"
    about = _named(y) or _named(x)
    rows: list[_Row] = []
    slots = zip(DTYPE_CONFIG_KEYS, (x.input, x.output, x.weight), (y.input, y.output, y.weight))
    for key, dx, dy in slots:
        if dx == dy:
            continue
        if dx is None or dy is None or dx.dtype != dy.dtype:
            before = spelling.dtype(dx) if dx is not None else None
            after = spelling.dtype(dy) if dy is not None else None
            severity = Severity.WIDENING if dy is None else Severity.NARROWING
            rows.append(_Row(f"{label}.{key.word}", before, after, severity, about))
            continue
        constraint = (
            ("constraint", dy.name) if dy.name else (("constraint", dx.name) if dx.name else about)
        )
        for long, short in CONSTRAINT_FIELDS:
            vx, vy = getattr(dx, long), getattr(dy, long)
            if vx != vy or type(vx) is not type(vy):
                rows.append(
                    _Row(
                        f"{label}.{key.word}.{short}",
                        None if vx is None else spelling.number(vx),
                        None if vy is None else spelling.number(vy),
                        _bound_severity(long, vx, vy),
                        constraint,
                    )
                )
    for word, vx, vy in (("bias", x.bias, y.bias), ("dynamic", x.is_dynamic, y.is_dynamic)):
        if vx != vy:
            shown = [None if v is None else _plain(v) for v in (vx, vy)]
            severity = Severity.WIDENING if vy is None else Severity.NARROWING
            rows.append(_Row(f"{label}.{word}", shown[0], shown[1], severity, about))
    return [_one_config(label, rows, about)] if len(rows) > 1 else rows


def _one_config(label: str, rows: list[_Row], about: tuple[str, str] | None) -> _Row:
    """The rows of one dtype config's change as one row with its parts: narrowing if any part
    is, else widening if any part is; located at the definition they share, if they do."""
    parts = tuple(
        Part(r.field.removeprefix(label + "."), r.before, r.after, r.severity) for r in rows
    )
    severities = {p.severity for p in parts}
    severity = next(
        (s for s in (Severity.NARROWING, Severity.WIDENING) if s in severities), Severity.NEUTRAL
    )
    definitions = {r.definition for r in rows}
    definition = definitions.pop() if len(definitions) == 1 else about
    before = _parts_text(parts, before=True)
    after = _parts_text(parts, before=False)
    return _Row(label, before, after, severity, definition, parts)


def _parts_text(parts: tuple[Part, ...], before: bool) -> str | None:
    """One side of a grouped change: ``input, output {quant_min: 0, quant_max: 127}, bias: float``.

    Slots with the same changes are said together; a value absent on this side is ``—``,
    and a side where every value is absent is None (the change adds or removes them all).
    """
    values = [p.before if before else p.after for p in parts]
    if all(v is None for v in values):
        return None
    # slot -> [(constraint or None for the slot itself, value)], in the order of the parts
    by_slot: dict[str, list[tuple[str | None, str]]] = {}
    for p, v in zip(parts, values):
        slot, _, short = p.field.partition(".")
        by_slot.setdefault(slot, []).append((short or None, "—" if v is None else v))
    together: dict[tuple[tuple[str | None, str], ...], list[str]] = {}
    for slot, changed in by_slot.items():
        together.setdefault(tuple(changed), []).append(slot)
    out = []
    for items, slots in together.items():
        named = ", ".join(slots)
        whole = [v for short, v in items if short is None]
        bounds = [f"{short}: {v}" for short, v in items if short is not None]
        text = f"{named}: {whole[0]}" if whole else named
        out.append(text + (" {" + ", ".join(bounds) + "}" if bounds else ""))
    return ", ".join(out)


def _plain(v: str | bool) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return spelling.dtype_word(v)


# Bounds a larger value of which admits fewer observers, and those a smaller one does.
_LOWER_BOUNDS = ("quant_min_lower_bound", "scale_min_lower_bound")
_UPPER_BOUNDS = ("quant_max_upper_bound", "scale_max_upper_bound")


def _bound_severity(field: str, before: Any, after: Any) -> Severity:
    """Narrowing when fewer quantization parameters satisfy the constraint after the change."""
    if after is None:
        return Severity.WIDENING
    if before is None:
        return Severity.NARROWING
    if field in _LOWER_BOUNDS:
        return Severity.NARROWING if after > before else Severity.WIDENING
    if field in _UPPER_BOUNDS:
        return Severity.NARROWING if after < before else Severity.WIDENING
    return Severity.NARROWING  # an exact match moved: what matched before no longer does


# ---------------------------------------------------------------- identity


class _Canon:
    """Comparable forms of model values, with every symbol by its identity."""

    def __init__(self, identity: Identity):
        self.identity = identity

    def pattern_key(self, c: m.PatternConfig) -> Any:
        pattern = c.pattern if c.complex else m.reversed_nested(c.pattern)
        given = () if c.pt2e is None else c.pt2e.given  # variants of one pattern (given:)
        return (c.complex, self.value(pattern), *((("given", given),) if given else ()))

    def value(self, v: Any) -> Any:
        if isinstance(v, m.Symbol):
            return ("symbol", self.identity(v.path))
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        if isinstance(v, m.SequentialFuser):
            return ("sequential", self.value(v.fused))
        if isinstance(v, m.SymbolFuser):
            return ("function", self.value(v.function))
        if isinstance(v, m.DefinedFuser):
            return self._fuse(v)
        if isinstance(v, m.PT2EOptions):
            return ("pt2e", *(self.value(getattr(v, k.word)) for k in PT2E_TABLE))
        if isinstance(v, m.Hook):
            return ("hook", v.name, self.value(v.function), self.value(v.ops))
        if isinstance(v, Enum):
            return ("str", v.value)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            return (type(v).__name__, v)
        return v

    def _fuse(self, f: m.DefinedFuser) -> Any:
        """A ``fuse`` definition up to the names of its parameters (and its own name)."""
        names: dict[str, int] = {}

        def shape(p: Any) -> Any:
            if p.name is None:
                return tuple(shape(q) for q in p.items)
            if p.name == "_":
                return "_"
            return names.setdefault(p.name, len(names))

        def body(e: m.FuseExpr) -> Any:
            if isinstance(e, m.FuseArg):
                return ("arg", names.get(e.name, e.name))
            if isinstance(e, m.FuseQat):
                return ("is_qat",)
            if isinstance(e, m.FuseConst):
                return ("const", type(e.value).__name__, e.value)
            return (self.value(e.function), tuple(body(x) for x in e.args))

        params = tuple(shape(p) for p in f.params)
        return ("fuse", f.eval_only, f.same_mode, params, body(f.body))
