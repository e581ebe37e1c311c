"""Groups: runs of configs that a group already says, and groups found across backends.

**Known groups** are those of bcfg's library (``bcfg:torch``) and of the
project's own specs. A run of configs is a ``use`` of one when the group,
expanded by bcfg's resolver and built, gives exactly those configs: the group
itself decides, not a pattern language. Candidates come from an index of each
group's first pattern; the dtype set argument is the dtype set of the run's
first config (or that set without the constraints a group like
``fixed_qparams`` adds), and a group's other parameters take the values the
group's own callers pass it (``conv_fusions(ds, n)`` for ``n`` in 1, 2, 3, as
``conv`` calls it). Every expansion is built in one batch per step.

**Discovered groups** (``discover``): with several backends, the longest run of
configs that occurs in two places or more, equal but for its dtype set,
becomes a group with a dtype-set parameter, again and again while runs of at
least ``MIN_GROUP`` configs repeat (anti-unification over the dtype set: the
granularity in which backends share code shows where their dtype sets
differ).
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ...diagnostics import SpecError
from ...lang import syntax as m
from ...lang.fmt import Printer, render
from ...sources import LIBRARY_SCHEME, SourceSet
from .reader import DC, DT, Config, Reader

MIN_GROUP = 4  # the fewest configs a discovered group holds
_PROBE_DTYPES = (DC(DT("quint8"), DT("quint8"), None, None, None),)


@dataclass(frozen=True)
class Known:
    """A group of a library or of the project, called with its non-dtype arguments fixed."""

    name: str
    file: str  # display name of the file that declares it
    params: tuple[str, ...]
    ds_param: str
    extra: tuple[tuple[str, m.Expr], ...]  # the other parameters' arguments


@dataclass
class Use:
    """A run of configs placed by one group call."""

    group: str
    file: str | None  # where the group is declared; None for a group this import declares
    ds: tuple[DC, ...]
    extra: tuple[tuple[str, m.Expr], ...]
    params: tuple[str, ...]
    ds_param: str
    configs: list[Config]


Seq = list  # list[Config | Use]


def _ds_param(decl: m.GroupDecl) -> str | None:
    """The parameter a group passes as a dtype set (``dtypes: ds``, ``constrain(ds, c)``)."""
    for item in m.walk(decl):
        if isinstance(item, m.Field) and item.name == "dtypes":
            v = item.value
            if isinstance(v, m.Call) and v.func.text == "constrain" and v.args:
                v = v.args[0]
            if isinstance(v, m.DottedName) and len(v.parts) == 1 and v.parts[0] in decl.params:
                return v.parts[0]
        if isinstance(item, m.UseItem):
            for a in item.args:
                if isinstance(a, m.DottedName) and a.parts == ("ds",) and "ds" in decl.params:
                    return "ds"
    return "ds" if "ds" in decl.params else None


def _callers(specs: list[m.Spec]) -> dict[str, list[dict[str, m.Expr]]]:
    """For each group, the arguments its callers in these files pass (loop variables expanded)."""
    out: dict[str, list[dict[str, m.Expr]]] = {}
    groups = {d.name: d for s in specs for d in s.decls if isinstance(d, m.GroupDecl)}

    def walk(items: tuple, env: dict[str, m.Expr]) -> None:
        for it in items:
            if isinstance(it, m.ForItem) and isinstance(it.iterable, m.ListExpr):
                for value in it.iterable.items:
                    if it.destructure and isinstance(value, m.TupleExpr):
                        bound = dict(zip(it.targets, value.items))
                    else:
                        bound = {it.targets[0]: value}
                    walk(it.body, {**env, **bound})
            elif isinstance(it, m.UseItem) and it.group in groups:
                params = groups[it.group].params
                args = {}
                for p, a in zip(params, it.args):
                    if isinstance(a, m.DottedName) and len(a.parts) == 1 and a.parts[0] in env:
                        a = env[a.parts[0]]
                    args[p] = a
                out.setdefault(it.group, []).append(args)

    for s in specs:
        for d in s.decls:
            if isinstance(d, (m.GroupDecl, m.BackendDecl)):
                walk(d.body, {})
    return out


def known_groups(specs: dict[str, m.Spec]) -> list[Known]:
    """Every group of these files with each set of arguments its callers give its other parameters."""
    callers = _callers(list(specs.values()))
    out: list[Known] = []
    printer = Printer()
    for file, spec in specs.items():
        for d in spec.decls:
            if not isinstance(d, m.GroupDecl):
                continue
            ds = _ds_param(d)
            if ds is None:
                continue
            others = [p for p in d.params if p != ds]
            if not others:
                out.append(Known(d.name, file, d.params, ds, ()))
                continue
            seen: set[tuple[str, ...]] = set()
            for args in callers.get(d.name, []):
                if not all(p in args for p in others):
                    continue
                extra = tuple((p, args[p]) for p in others)
                text = tuple(render(printer.expr(e)) for _, e in extra)
                if re.search(
                    r"\b(ds|" + "|".join(map(re.escape, d.params)) + r")\b", " ".join(text)
                ):
                    continue  # still a parameter of the caller: not a value
                if text not in seen:
                    seen.add(text)
                    out.append(Known(d.name, file, d.params, ds, extra))
    return out


@dataclass
class Expander:
    """Expands group calls through the resolver, in batches, and reads what they build."""

    sources: SourceSet
    folder: str  # where the probe spec lives (imports are relative to it)
    allow: tuple[str, ...]
    reader: Reader
    dtype_text: Callable[[tuple[DC, ...]], tuple[list[str], str]]  # decl lines, expression
    cache: dict[tuple, list[Config] | None] = field(default_factory=dict)

    def expand(self, calls: list[tuple[Known, tuple[DC, ...]]]) -> None:
        todo = [c for c in dict.fromkeys(calls) if _call_key(*c) not in self.cache]
        if not todo:
            return
        try:
            results = self._batch(todo)
        except SpecError:
            results = []
            for c in todo:  # one bad call must not hide the others
                try:
                    results += self._batch([c])
                except SpecError:
                    results.append(None)
        for c, r in zip(todo, results):
            self.cache[_call_key(*c)] = r

    def get(self, known: Known, ds: tuple[DC, ...]) -> list[Config] | None:
        return self.cache.get(_call_key(known, ds))

    def _batch(self, calls: list[tuple[Known, tuple[DC, ...]]]) -> list[list[Config] | None]:
        from ...live.build import build_backend
        from ...semantics.driver import analyze
        from ...sources import MemorySources

        printer = Printer()
        probe = posixpath.join(self.folder, "bcfg_import_probe__.bcfg")
        lines: list[str] = []
        for file in dict.fromkeys(k.file for k, _ in calls):
            target = file if file.startswith(LIBRARY_SCHEME) else _relative(file, self.folder)
            lines.append(f'import "{target}"')
        for j, (known, ds) in enumerate(calls):
            decls, ds_text = self.dtype_text(ds)
            lines.extend(decls)
            extra = dict(known.extra)
            args = [
                ds_text if p == known.ds_param else render(printer.expr(extra[p]))
                for p in known.params
            ]
            lines.append(f"backend bcfg_import_probe_{j} {{ use {known.name}({', '.join(args)}) }}")
        text = "\n".join(dict.fromkeys(lines)) + "\n"
        analysis = analyze(MemorySources({probe: text}, self.sources), [probe], self.allow)
        out: list[list[Config] | None] = []
        for b in analysis.backends:
            live = build_backend(b)
            out.append([self.reader.read(i, pc) for i, pc in enumerate(live.configs)])
        return out


def _call_key(known: Known, ds: tuple[DC, ...]) -> tuple:
    return (known, tuple(d.key() for d in ds))


def _relative(file: str, folder: str) -> str:
    return posixpath.relpath(file, folder or ".")


def _unconstrained(ds: tuple[DC, ...]) -> tuple[DC, ...]:
    """The dtype set without the fixed quantization parameters ``constrain(ds, c)`` adds."""

    def strip(dt: DT | None) -> DT | None:
        if dt is None or not {"scale", "zero_point"} & {k for k, _ in dt.bounds}:
            return dt
        return DT(dt.dtype)

    return tuple(replace(d, input=strip(d.input), output=strip(d.output)) for d in ds)


def recognise(backends: list[list[Config]], groups: list[Known], expander: Expander) -> list[Seq]:
    """Each backend's configs, with every run a known group places replaced by a ``Use``."""
    expander.expand([(g, _PROBE_DTYPES) for g in groups])
    index: dict[tuple, list[Known]] = {}
    for g in groups:
        first = expander.get(g, _PROBE_DTYPES)
        if first:
            index.setdefault(first[0].shape_key(), []).append(g)
    wanted: list[tuple[Known, tuple[DC, ...]]] = []
    for configs in backends:
        for c in configs:
            for g in index.get(c.shape_key(), ()):
                wanted += [(g, c.dtypes), (g, _unconstrained(c.dtypes))]
    expander.expand(wanted)
    out: list[Seq] = []
    for configs in backends:
        keys = [c.key() for c in configs]
        seq: Seq = []
        i = 0
        while i < len(configs):
            best: tuple[int, Known, tuple[DC, ...]] | None = None
            for g in index.get(configs[i].shape_key(), ()):
                for ds in (configs[i].dtypes, _unconstrained(configs[i].dtypes)):
                    placed = expander.get(g, ds)
                    if not placed or (best is not None and len(placed) <= best[0]):
                        continue
                    if [c.key() for c in placed] == keys[i : i + len(placed)]:
                        best = (len(placed), g, ds)
            if best is None:
                seq.append(configs[i])
                i += 1
                continue
            n, g, ds = best
            seq.append(Use(g.name, g.file, ds, g.extra, g.params, g.ds_param, configs[i : i + n]))
            i += n
        out.append(seq)
    return out


# ------------------------------------------------------------------ discovery


@dataclass
class Found:
    """A group this import declares: its body configs (taken from its first use)."""

    name: str
    configs: list[Config]


def discover(
    seqs: list[Seq], fresh: Callable[[str], str], budget: int = 4000
) -> tuple[list[Seq], list[Found]]:
    """Groups for runs of configs that repeat across (or within) backends, equal but for their dtype set."""
    found: list[Found] = []
    if sum(1 for s in seqs for x in s if isinstance(x, Config)) > budget:
        return seqs, found  # quadratic below: leave very large imports to loops
    ids: dict[tuple, int] = {}
    while True:
        runs = _runs(seqs)
        keyed = [[ids.setdefault(c.shape_key(), len(ids)) for c in run] for _, _, run in runs]
        best = _longest_repeat(keyed)
        if best is None or best[2] < MIN_GROUP:
            seqs, found = _split_nested(seqs, found)
            return _name(seqs, found, fresh)
        a, start, length = best
        body = runs[a][2][start : start + length]
        group = Found(f"<group {len(found)}>", body)
        found.append(group)
        pattern = keyed[a][start : start + length]
        seqs = [_replace_runs(seq, pattern, group, ids) for seq in seqs]


def _name(
    seqs: list[Seq], found: list[Found], fresh: Callable[[str], str]
) -> tuple[list[Seq], list[Found]]:
    """Names for the groups that remain, from their first patterns, in the order they are first used."""
    names: dict[str, str] = {}
    for seq in seqs:
        for x in seq:
            if isinstance(x, Use) and x.file is None and x.group not in names:
                names[x.group] = fresh(_stem(x.configs))
    for seq in seqs:
        for x in seq:
            if isinstance(x, Use) and x.file is None:
                x.group = names[x.group]
    for g in found:
        g.name = names.get(g.name, g.name)
    order = list(names.values())
    return seqs, sorted(found, key=lambda g: order.index(g.name) if g.name in order else len(order))


def _split_nested(seqs: list[Seq], found: list[Found]) -> tuple[list[Seq], list[Found]]:
    """A group that is another group plus a few configs becomes a use of that one plus them."""
    changed = True
    while changed:
        changed = False
        for a in sorted(found, key=lambda g: -len(g.configs)):
            keys_a = [c.shape_key() for c in a.configs]
            for b in found:
                n = len(b.configs)
                if b is a or n >= len(a.configs):
                    continue
                keys_b = [c.shape_key() for c in b.configs]
                if keys_a[:n] == keys_b:
                    cut = "prefix"
                elif keys_a[-n:] == keys_b:
                    cut = "suffix"
                else:
                    continue
                seqs = [_respell(seq, a, b, cut) for seq in seqs]
                found = [g for g in found if g is not a]
                changed = True
                break
            if changed:
                break
    return seqs, found


def _respell(seq: Seq, a: Found, b: Found, cut: str) -> Seq:
    out: Seq = []
    n = len(b.configs)
    for x in seq:
        if not (isinstance(x, Use) and x.group == a.name and x.file is None):
            out.append(x)
            continue
        inner = x.configs[:n] if cut == "prefix" else x.configs[-n:]
        rest = x.configs[n:] if cut == "prefix" else x.configs[:-n]
        use = Use(b.name, None, x.ds, (), ("ds",), "ds", list(inner))
        out.extend([use, *rest] if cut == "prefix" else [*rest, use])
    return out


def _runs(seqs: list[Seq]) -> list[tuple[int, int, list[Config]]]:
    """Maximal stretches of consecutive inline configs with one dtype set: (backend, start, configs)."""
    out = []
    for b, seq in enumerate(seqs):
        for _, grp in itertools.groupby(
            enumerate(seq),
            key=lambda e: (
                tuple(d.key() for d in e[1].dtypes) if isinstance(e[1], Config) else id(e[1])
            ),
        ):
            members = list(grp)
            if isinstance(members[0][1], Config) and members[0][1].dtypes:
                out.append((b, members[0][0], [c for _, c in members]))
    return out


def _longest_repeat(keyed: list[list[int]]) -> tuple[int, int, int] | None:
    """The longest common stretch of two runs (or two places in one run): (run, start, length)."""
    best: tuple[int, int, int] | None = None
    for a in range(len(keyed)):
        for b in range(a, len(keyed)):
            x, y = keyed[a], keyed[b]
            prev = [0] * (len(y) + 1)
            for i in range(1, len(x) + 1):
                cur = [0] * (len(y) + 1)
                xi = x[i - 1]
                for j in range(1, len(y) + 1):
                    if xi == y[j - 1] and (a != b or j < i - prev[j - 1]):
                        cur[j] = prev[j - 1] + 1
                        if best is None or cur[j] > best[2]:
                            best = (a, i - cur[j], cur[j])
                prev = cur
    return best


def _replace_runs(seq: Seq, pattern: list[int], group: Found, ids: dict[tuple, int]) -> Seq:
    out: Seq = []
    i, n = 0, len(pattern)
    while i < len(seq):
        window = seq[i : i + n]
        if (
            len(window) == n
            and all(isinstance(c, Config) for c in window)
            and [ids.get(c.shape_key()) for c in window] == pattern
            and len({tuple(d.key() for d in c.dtypes) for c in window}) == 1
        ):
            out.append(Use(group.name, None, window[0].dtypes, (), ("ds",), "ds", list(window)))
            i += n
        else:
            out.append(seq[i])
            i += 1
    return out


def _stem(configs: list[Config]) -> str:
    """A group's name from its first pattern's leading word: ``nn.Conv1d`` -> ``conv``."""

    def first(p: Any) -> Any:
        return first(p[-1] if configs[0].complex else p[0]) if isinstance(p, tuple) else p

    atom = first(configs[0].pattern)
    text = atom.path.rsplit(".", 1)[-1] if hasattr(atom, "path") else str(atom)
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\b|\d)|[A-Z]?[a-z]+", text)
    word = (words[0] if words else "ops").lower()
    return {"batch": "bn"}.get(word, word) + "_ops"
