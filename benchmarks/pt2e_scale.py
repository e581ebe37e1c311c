#!/usr/bin/env python3
"""PT2E annotate at scale: every generated quantizer against the hand-written class it replaces.

    python benchmarks/pt2e_scale.py            # ~1k, 4k, 16k nodes, medians of 3 rounds
    python benchmarks/pt2e_scale.py --quick    # small graphs, one round: a smoke test
    python benchmarks/pt2e_scale.py --docs     # also write the table and plot into the docs
    python benchmarks/pt2e_scale.py --envs     # and the Arm targets, in the Arm environment

Exports each model family (benchmarks/scale/models.py: conv nets with batch
norm and residual adds, transformer blocks, cat-heavy nets) at each size, and
for every target of benchmarks/scale/targets.py times, on the same exported
graph in one process: ``annotate`` of the generated class (report off and on)
and of the hand-written class, and ``prepare_pt2e`` with each. Each quantizer
annotates its own ``transform_for_annotation`` of the graph (untimed);
annotations are cleared between calls; ``prepare_pt2e`` gets a fresh copy
(copying untimed). Rounds interleave all variants; the table shows medians.
``--generated-from REV`` times the generated quantizers of git revision REV
instead of this checkout's (for before/after figures). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if not __package__:  # run as a script: the repository is the root
    sys.path.insert(0, str(REPO))

from benchmarks.scale.models import FAMILIES, exported  # noqa: E402
from benchmarks.scale.plot import Lines, svg  # noqa: E402
from benchmarks.scale.targets import ALL, TARGETS, Target  # noqa: E402

KEY = "quantization_annotation"
SIZES = (1000, 4000, 16000)
QUICK_SIZES = (150, 300)
LIMIT, SLOW = 20.0, 5.0  # seconds: a call is stopped after LIMIT; one over SLOW runs once
FIGURES = REPO / "benchmarks" / "scale" / "figures.json"  # the last --docs run's figures
PLOT = REPO / "docs" / "assets" / "pt2e-scale.svg"
PAGE = REPO / "docs" / "contributing" / "benchmarks.md"
BEGIN, END = "<!-- pt2e-scale:begin -->", "<!-- pt2e-scale:end -->"
# The variants timed per target and graph: (key, what).
VARIANTS = (
    ("gen", "generated annotate"),
    ("gen_report", "generated annotate, report() on"),
    ("gen_read", "generated annotate, report() on, and its entries read"),
    ("ref", "hand-written annotate"),
    ("gen_prepare", "generated prepare_pt2e"),
    ("ref_prepare", "hand-written prepare_pt2e"),
)


def generated_package(rev: str | None, tmp: Path) -> str:
    """The package the generated quantizers are imported from: ``generated``, or REV's copy."""
    if rev is None:
        return "generated"
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "generated"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    (tmp / "generated").rename(tmp / "generated_rev")
    sys.path.insert(0, str(tmp))
    return "generated_rev"


def pristine(gm: Any) -> Callable[[], None]:
    """What undoes an annotate of ``gm``: each node's meta put back as it is now. Not only the
    annotations: ExecuTorch's Arm classes (and the generated ones, as theirs) also mark the
    nodes they matched (``quantizer_matched``, ``custom``, ``_arm_disallow_tfa``) and pass
    over marked nodes, so a second annotate of a graph whose annotations alone were cleared
    annotates nothing. Dict values (``custom``) are copied, being changed in place."""
    kept = [(n.meta, dict(n.meta)) for n in gm.graph.nodes]

    def undo() -> None:
        for meta, was in kept:
            meta.clear()
            meta.update({k: dict(v) if type(v) is dict else v for k, v in was.items()})

    return undo


class AnnotateCall:
    """One timed annotate (a call returns its seconds) on a graph of its own, ``graph``."""

    def __init__(
        self, q: Any, graph: Any, read: bool, fresh: Callable[[], Any] | None, reported: bool
    ) -> None:
        self.q, self.graph, self.read, self.fresh, self.reported = q, graph, read, fresh, reported
        self.undo = pristine(graph)

    def __call__(self) -> float:
        self.undo()
        who = self.fresh() if self.fresh is not None else self.q
        start = time.perf_counter()
        who.annotate(self.graph)
        if self.reported and who.last_report is None:
            raise NoReport(f"{type(who).__name__}.annotate kept no report with report() on")
        if self.read:
            len(who.last_report.entries)
        return time.perf_counter() - start

    def annotated(self) -> set[str]:
        """The names of the nodes the last call annotated."""
        return {n.name for n in self.graph.graph.nodes if KEY in n.meta}


def annotate_call(
    q: Any,
    gm: Any,
    read: bool = False,
    fresh: Callable[[], Any] | None = None,
    like: AnnotateCall | None = None,
    reported: bool = False,
) -> AnnotateCall:
    """One timed annotate of ``q`` on its own transform of ``gm`` (annotations cleared first);
    ``read``: and the entries of its report read (the report explains the annotate then);
    ``fresh``: each call annotates with a new quantizer it makes (untimed); ``like``: a call of
    the same class and config, not yet called, whose transform is copied rather than made
    again (ExecuTorch's Arm passes take minutes on a 16k-node graph); ``reported``: report()
    is on, and a call after which the quantizer keeps no report raises ``NoReport`` (its
    class's annotate does not record one: those figures would time no report)."""
    if like is not None:
        mine = copy.deepcopy(like.graph)
    else:
        mine = q.transform_for_annotation(copy.deepcopy(gm))
    return AnnotateCall(q, mine, read, fresh, reported)


class NoReport(Exception):
    """A quantizer with report() on kept no ``last_report`` after its annotate."""


class Raises:
    """A call that could not be made (its quantizer's ``transform_for_annotation`` raised on the
    graph, or making the quantizer did): calling it raises what was raised then."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __call__(self) -> float:
        raise self.error


def attempt(make: Callable[[], Callable[[], float]]) -> Callable[[], float]:
    """``make()``, or a call raising what ``make()`` raised (timed, it is recorded as such)."""
    try:
        return make()
    except Exception as e:  # the vendor's own code: anything it raises is its outcome
        return Raises(e)


def prepare_call(q: Any, gm: Any) -> Callable[[], float]:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    def call() -> float:
        mine = copy.deepcopy(gm)
        start = time.perf_counter()
        prepare_pt2e(mine, q)
        return time.perf_counter() - start

    return call


def calls(target: Target, package: str, gm: Any) -> dict[str, Callable[[], float]]:
    """The timed calls of one target on one graph (report on: where the class has
    ``report()``)."""
    gen, ref = target.generated_class(package), target.reference_class()

    def fresh(cls: Any, report: bool = False) -> Callable[[], Any] | None:
        if not target.fresh:
            return None
        return lambda: target.make(cls).report(None) if report else target.make(cls)

    out: dict[str, Callable[[], float]] = {}
    out["gen"] = first = attempt(lambda: annotate_call(target.make(gen), gm, fresh=fresh(gen)))
    if hasattr(gen, "report"):
        like = first if isinstance(first, AnnotateCall) else None
        for key, read in (("gen_report", False), ("gen_read", True)):

            def on(read: bool = read) -> AnnotateCall:
                return annotate_call(
                    target.make(gen).report(None), gm, read, fresh(gen, True), like, True
                )

            out[key] = attempt(on)
    out["ref"] = attempt(lambda: annotate_call(target.make(ref), gm, fresh=fresh(ref)))
    if target.prepare:
        out["gen_prepare"] = prepare_call(target.make(gen), gm)
        out["ref_prepare"] = prepare_call(target.make(ref), gm)
    return out


class TimedOut(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise TimedOut


def timed(call: Callable[[], float], limit: float) -> float | None:
    """``call()``'s seconds, or None when it runs past ``limit`` seconds (then stopped); what
    it raises is raised (the alarm cancelled first). The
    alarm repeats each second: raised inside a weakref callback or a ``__del__``, Python
    prints it and goes on, and the next one stops the call.

    Garbage is collected before the call, and what is alive then is frozen (``gc.freeze``)
    for its length: the benchmark's process holds every graph it exported and each
    quantizer's copies of them, which a user's does not, and a full collection that falls
    inside a call walks all of them (a 0.23 s annotate measured over 20 s so). The call's
    own garbage is still collected as it goes."""
    gc.collect()
    gc.freeze()
    before = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit, 1.0)
    try:
        got = call()
        return got if got <= limit else None
    except TimedOut:
        return None
    except Exception as e:  # the alarm, raised inside code that wraps what it catches?
        if _stopped(e):
            return None
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
        gc.unfreeze()


def _stopped(e: BaseException | None) -> bool:
    """Whether ``e`` is the time limit's alarm, wrapped: torch's pass manager, where the alarm
    stops a pass, raises an ``Exception`` "from" it (Qualcomm's pipeline at 20 s)."""
    seen = 0
    while e is not None and seen < 20:
        if isinstance(e, TimedOut):
            return True
        e, seen = e.__cause__ or e.__context__, seen + 1
    return False


# What a variant depends on: a prepare_pt2e is not timed once its class's annotate ran over.
_NEEDS = {"gen_prepare": "gen", "ref_prepare": "ref", "gen_read": "gen_report"}
# What a variant that was not timed shows: ran over the limit, not run (over it on a smaller
# graph), raised (``Figures.errors`` says what), or its class keeps no report.
SHOWN = {"crashed": "raised", "no report": "no report"}


@dataclass
class Figures:
    """Seconds of each round by (family, nodes, target, variant); the node count of each graph;
    the variants that ran over the limit (or were not run: over it on a smaller graph)."""

    limit: float
    slow: float
    times: dict[tuple[str, int, str, str], list[float]] = field(default_factory=dict)
    counts: dict[tuple[str, int], int] = field(default_factory=dict)
    # "over", "skipped", "crashed" (what it raised: ``errors``) or "no report"
    over: dict[tuple[str, int, str, str], str] = field(default_factory=dict)
    errors: dict[tuple[str, int, str, str], str] = field(default_factory=dict)
    # The node counts a graph had in other runs merged by ``--from``: another environment's
    # torch may export the same model with a node more or less.
    more: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    # Nodes annotated by (family, nodes, target): generated, hand-written, whether the same
    # nodes (by name); what makes the two times a comparison of the same work.
    annotated: dict[tuple[str, int, str], tuple[int, int, bool]] = field(default_factory=dict)
    # The (family, nodes, target, variant)s of which a round annotated other nodes than the
    # first round: rounds that did not time the same work.
    unsteady: set[tuple[str, int, str, str]] = field(default_factory=set)
    _first: dict[tuple[str, int, str, str], set[str]] = field(default_factory=dict)

    def compare(
        self, family: str, nodes: int, target: str, variants: dict[str, Any], round: int
    ) -> None:
        """Note what each annotate of round ``round`` annotated (after the round): the
        generated and the hand-written class's first, and any round that differs from it."""
        for key, call in variants.items():
            k = (family, nodes, target, key)
            if hasattr(call, "annotated") and len(self.times.get(k, ())) == round + 1:
                got = call.annotated()
                if self._first.setdefault(k, got) != got:
                    self.unsteady.add(k)
        a, b = (self._first.get((family, nodes, target, v)) for v in ("gen", "ref"))
        if a is not None and b is not None:
            self.annotated[(family, nodes, target)] = (len(a), len(b), a == b)

    def counts_of(self, family: str, size: int) -> list[int]:
        """The node counts of the family's model at ``size``: the first graph's, then those
        of the others (a strict export, another environment's)."""
        return [self.counts[(family, size)], *self.more.get((family, size), ())]

    def graphs(self, family: str) -> list[int]:
        """The node counts of the family's graphs, every size, every export."""
        return [n for f, size in self.counts if f == family for n in self.counts_of(f, size)]

    def graph(self, family: str, size: int, nodes: int) -> None:
        """Note a graph measured: the family's model at ``size`` has ``nodes`` nodes (a
        second graph of it, a strict export or another environment's, is noted beside)."""
        key = (family, size)
        if self.counts.setdefault(key, nodes) != nodes and nodes not in self.more.get(key, ()):
            self.more.setdefault(key, []).append(nodes)

    def nodes(self, family: str, size: int, target: str) -> int | None:
        """The node count of the graph ``target`` was measured on (of the runs merged, the
        last one that measured it), or None: not measured on it."""
        got = None
        for n in self.counts_of(family, size):
            if any(
                (family, n, target, v) in d for v, _ in VARIANTS for d in (self.times, self.over)
            ):
                got = n
        return got

    def ran_over(self, family: str, nodes: int, target: str, key: str | None) -> bool:
        return self.over.get((family, nodes, target, key or "")) in ("over", "skipped")

    def run(
        self, family: str, nodes: int, target: str, key: str, call: Callable[[], float]
    ) -> None:
        """One round of a variant: timed, unless it ran over (here or on a smaller graph), or
        its first round was slow (then it is not repeated), or it raised (recorded with what
        it raised; a call that raised on one graph is still made on the others)."""
        k = (family, nodes, target, key)
        if k in self.over or len(self.times.get(k, ())) and self.times[k][0] > self.slow:
            return
        smaller = [n for n in self.graphs(family) if n < nodes]
        if any(
            self.ran_over(family, n, target, w) for n in smaller for w in (key, _NEEDS.get(key))
        ):
            self.over[k] = "skipped"
            return
        if self.ran_over(family, nodes, target, _NEEDS.get(key)):
            self.over[k] = "skipped"
            return
        try:
            got = timed(call, self.limit)
        except NoReport:
            self.over[k] = "no report"
            return
        except Exception as e:  # the quantizer's own code: what it raised is its outcome
            self.over[k] = "crashed"
            first = (str(e).strip().splitlines() or [""])[0]
            self.errors[k] = f"{type(e).__name__}: {first[:200]}".rstrip(": ")
            self.times.pop(k, None)  # a call that raised in a later round: not its figures
            return
        if got is None:
            self.over[k] = "over"
        else:
            self.times.setdefault(k, []).append(round(got, 4))  # as --json saves it


def measure(
    sizes: Sequence[int],
    rounds: int,
    families: Sequence[str],
    targets: Sequence[Target],
    package: str,
    figures: Figures,
    done: Callable[[Figures], None] = lambda f: None,
) -> Figures:
    """Every variant of every target on every family and size, into ``figures`` (``done`` is
    called after each graph: a long run saves what it has)."""
    for family in (f for f in FAMILIES if f.name in families):
        for size in sizes:
            for strict, some in by_export(targets):
                how = "strict" if strict else "non-strict"
                print(f"  exporting {family.name} at ~{size} nodes ({how})", file=sys.stderr)
                start = time.perf_counter()
                gm, _ = exported(family, size, strict)
                nodes = len(gm.graph.nodes)
                print(f"  exported in {time.perf_counter() - start:.0f} s", file=sys.stderr)
                todo = {t.name: calls(t, package, gm) for t in some}
                for r in range(rounds):
                    print(f"  {family.name} {nodes} nodes: round {r + 1}/{rounds}", file=sys.stderr)
                    for name, variants in todo.items():
                        for key, call in variants.items():
                            figures.run(family.name, nodes, name, key, call)
                        figures.compare(family.name, nodes, name, variants, r)
                figures.graph(family.name, size, nodes)
                del todo, gm
                done(figures)
    return figures


def median(figures: Figures, *key: Any) -> float | None:
    got = figures.times.get(key)
    return statistics.median(got) if got else None


def _s(f: Figures, *key: Any) -> str:
    """A median in seconds, or how a variant ran over the limit."""
    what = f.over.get(key)
    if what in SHOWN:
        return SHOWN[what]
    if what is not None:
        return f"> {f.limit:g} s" + ("" if what == "over" else "*")
    v = median(f, *key)
    return "—" if v is None else f"{v:.3f}"


def _x(f: Figures, a: tuple, b: tuple) -> str:
    """``a``'s median over ``b``'s (``< r`` when ``b`` ran over the limit)."""
    ta, tb = median(f, *a), median(f, *b)
    if ta is not None and f.ran_over(*b):
        return f"< {math.ceil(ta / f.limit * 100) / 100:.2f}x"  # rounded up: still a bound
    return "—" if ta is None or tb is None else f"{ta / tb:.2f}x"


def table(f: Figures, targets: Sequence[Target]) -> str:
    """The figures as a Markdown table, a row per family, size and target (seconds, medians)."""
    head = (
        "| model | nodes | target | hand-written annotate | generated annotate | ratio "
        "| report on | on/off | report read | read/off "
        "| hand-written prepare | generated prepare | ratio |"
    )
    lines = [head, "|" + " --- |" * 13]
    for family, size in f.counts:
        for t in targets:
            nodes = f.nodes(family, size, t.name)
            if nodes is None:
                continue  # not measured on this graph (another environment's run)
            k = {v: (family, nodes, t.name, v) for v, _ in VARIANTS}
            lines.append(
                f"| {family} | {nodes:,} | {t.name} | {_s(f, *k['ref'])} | {_s(f, *k['gen'])} "
                f"| {_x(f, k['gen'], k['ref'])} | {_s(f, *k['gen_report'])} "
                f"| {_x(f, k['gen_report'], k['gen'])} | {_s(f, *k['gen_read'])} "
                f"| {_x(f, k['gen_read'], k['gen'])} | {_s(f, *k['ref_prepare'])} "
                f"| {_s(f, *k['gen_prepare'])} | {_x(f, k['gen_prepare'], k['ref_prepare'])} |"
            )
    return "\n".join(lines)


def growth(f: Figures, targets: Sequence[Target]) -> str:
    """How annotate time grows with nodes: the exponent k of time ~ nodes^k between each size
    and the next, and between the smallest and the largest (less at the mercy of one noisy
    figure); 1: linear, doubling nodes at most doubles time while k <= 1. A row a model and
    target, the generated class beside the hand-written one."""
    lines = [
        "| model | target | nodes | generated: k each step | overall "
        "| hand-written: k each step | overall |",
        "|" + " --- |" * 7,
    ]
    families = list(dict.fromkeys(fam for fam, _ in f.counts))
    for family in families:
        for t in targets:
            got = (f.nodes(fam, s, t.name) for fam, s in f.counts if fam == family)
            sizes = [n for n in got if n is not None]
            if len(sizes) < 2:
                continue
            cells = []
            for key in ("gen", "ref"):
                ks = [_k(f, family, t.name, key, a, b) for a, b in zip(sizes, sizes[1:])]
                cells += [", ".join(ks), _k(f, family, t.name, key, sizes[0], sizes[-1])]
            nodes = " → ".join(f"{n:,}" for n in sizes)
            lines.append(f"| {family} | {t.name} | {nodes} | {' | '.join(cells)} |")
    return "\n".join(lines)


def by_export(targets: Sequence[Target]) -> list[tuple[bool, list[Target]]]:
    """The targets by the export they annotate (``Target.strict``), non-strict first: each
    model is exported once per kind any target needs."""
    return [(s, [t for t in targets if t.strict == s]) for s in sorted({t.strict for t in targets})]


def exponent(a: int, ta: float, b: int, tb: float) -> float:
    """k of t ~ nodes^k through (a nodes, ta) and (b nodes, tb)."""
    return math.log(tb / ta) / math.log(b / a)


def _k(f: Figures, family: str, target: str, key: str, a: int, b: int) -> str:
    """k of time ~ nodes^k from a nodes to b; a lower bound when b's call ran over the limit;
    "-" when a's did too, or either is missing."""
    ta, tb = median(f, family, a, target, key), median(f, family, b, target, key)
    if ta and tb:
        return f"{exponent(a, ta, b, tb):.2f}"
    if ta and f.ran_over(family, b, target, key):
        return f"> {exponent(a, ta, b, f.limit):.2f}"
    return "-"


def plot_lines(f: Figures, targets: Sequence[Target]) -> Lines:
    """The plot's points; a variant that ran over the limit is a point at the limit, open."""
    lines: Lines = {}
    for family, size in f.counts:
        for t in targets:
            nodes = f.nodes(family, size, t.name)
            for key, who in (("gen", "generated"), ("ref", "hand-written")):
                if nodes is None:
                    continue
                m = median(f, family, nodes, t.name, key)
                if f.over.get((family, nodes, t.name, key)) == "over":
                    lines.setdefault((family, t.name, who), []).append((nodes, f.limit, False))
                elif m is not None:
                    lines.setdefault((family, t.name, who), []).append((nodes, m, True))
    return lines


def as_json(f: Figures, rounds: int, targets: Sequence[Target]) -> str:
    """The figures as JSON (sorted, seconds to 4 places): what ``--from`` reads back, and what
    the docs site's ``<!-- bcfg:scale TARGET -->`` marker shows (docs/hooks.py)."""
    data = {
        "targets": {
            t.name: {"generated": t.generated, "reference": t.reference}
            | ({"strict": True} if t.strict else {})
            for t in targets
        },
        "families": {fam.name: fam.what for fam in FAMILIES},
        "limit": f.limit,
        "slow": f.slow,
        "rounds": rounds,
        "graphs": [
            {"family": fam, "size": s, "nodes": n}
            for fam, s in f.counts
            for n in f.counts_of(fam, s)
        ],
        "times": [
            {
                "family": k[0],
                "nodes": k[1],
                "target": k[2],
                "variant": k[3],
                "seconds": [round(x, 4) for x in v],
            }
            for k, v in sorted(f.times.items())
        ],
        "over": [
            {"family": k[0], "nodes": k[1], "target": k[2], "variant": k[3], "what": w}
            | ({"error": f.errors[k]} if k in f.errors else {})
            for k, w in sorted(f.over.items())
        ],
        "unsteady": [list(k) for k in sorted(f.unsteady)],
        "annotated": [
            {"family": k[0], "nodes": k[1], "target": k[2], "generated": a, "reference": b}
            | {"same": same}
            for k, (a, b, same) in sorted(f.annotated.items())
        ],
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


class SavedError(Exception):
    """A --from file that holds no saved figures: its path and why."""


def _saved_key(t: dict[str, Any]) -> tuple[str, int, str, str]:
    return (t["family"], t["nodes"], t["target"], t["variant"])


def from_json(paths: Sequence[Path]) -> tuple[Figures, int]:
    """Saved figures (several files: merged; a variant measured in two files on the same graph
    keeps the later file's figures; a graph another environment exported with another node count
    keeps both counts, each target's row showing the one it was measured on)."""
    f, rounds = Figures(0.0, 0.0), 0
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            f.limit, f.slow, rounds = data["limit"], data["slow"], max(rounds, data["rounds"])
            for g in data["graphs"]:
                f.graph(g["family"], g["size"], g["nodes"])
            # a variant this file has replaces an earlier file's (its times, over or error)
            for k in {_saved_key(t) for t in data["times"] + data["over"]}:
                for d in (f.times, f.over, f.errors):
                    d.pop(k, None)
            for t in data["times"]:
                f.times[_saved_key(t)] = t["seconds"]
            for o in data["over"]:
                k = _saved_key(o)
                f.over[k] = o["what"]
                if "error" in o:
                    f.errors[k] = o["error"]
            f.unsteady.update(tuple(k) for k in data.get("unsteady", ()))
            for a in data.get("annotated", ()):  # not in the figures of before it was recorded
                key = (a["family"], a["nodes"], a["target"])
                f.annotated[key] = (a["generated"], a["reference"], a["same"])
        except OSError as e:
            raise SavedError(f"{path}: cannot be read ({e.strerror or e})") from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            what = f"no {e}" if isinstance(e, KeyError) else str(e).splitlines()[0]
            raise SavedError(
                f"{path}: not figures saved with --json ({type(e).__name__}: {what})"
            ) from None
    order = {fam.name: i for i, fam in enumerate(FAMILIES)}
    f.counts = dict(sorted(f.counts.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])))
    return f, rounds


def write_docs(text: str, plot: str, page: Path = PAGE, where: Path = PLOT) -> None:
    """The table between the page's markers, the plot at ``where``."""
    where.write_text(plot, encoding="utf-8")
    old = page.read_text(encoding="utf-8")
    head, _, rest = old.partition(BEGIN)
    _, _, tail = rest.partition(END)
    page.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")


def render(f: Figures, rounds: int, targets: Sequence[Target]) -> str:
    """The text: what the figures are, the table, how time grows."""
    return (
        f"Seconds, medians of up to {rounds} round(s) (a variant whose first round took over "
        f"{f.slow:g} s ran once); ratio: generated / hand-written (on/off: report on / off; "
        "report read is annotate and reading the report). "
        f"`> {f.limit:g} s`: stopped after {f.limit:g} s; `> {f.limit:g} s*`: not run, over "
        f"{f.limit:g} s on a smaller graph; `raised`: the call raised (said below the table); "
        f"`no report`: the class keeps no report.{_strict(targets)}\n\n"
        f"{table(f, targets)}\n\n{raised(f, targets)}{annotated(f, targets)}Growth of annotate time, time ~ nodes^k:\n\n"
        f"{growth(f, targets)}"
    )


def raised(f: Figures, targets: Sequence[Target]) -> str:
    """What each call that raised raised (``raised`` in the table), and which generated
    classes keep no report (``no report``). Empty when none."""
    names = {t.name for t in targets}
    lines = []
    for (family, nodes, target, variant), error in sorted(f.errors.items()):
        if target in names:
            what = dict(VARIANTS)[variant]
            lines.append(f"- {target}, {what}, on {family} {nodes:,} nodes: `{error}`")
    none = sorted({k[2] for k, w in f.over.items() if w == "no report" and k[2] in names})
    if none:
        lines.append(
            f"- {', '.join(none)}: the generated class's annotate keeps no report with "
            "report() on (its hooks' annotate replaces the engine's): not timed"
        )
    return "Calls that raised, or did not report:\n\n" + "\n".join(lines) + "\n\n" if lines else ""


def annotated(f: Figures, targets: Sequence[Target]) -> str:
    """Whether each row's two classes annotated the same nodes, and each round what its first
    did: a sentence when all did (and annotated some), else what did not. Empty for figures
    saved before this was recorded."""
    names = {t.name for t in targets}
    got = {k: v for k, v in f.annotated.items() if k[2] in names}
    if not got:
        return ""
    odd = {k: v for k, v in got.items() if not v[2] or not v[0]}
    unsteady = sorted(k for k in f.unsteady if k[2] in names)
    both = {
        k[:3] for k in f.times if k[3] == "ref" and k[2] in names and k[:3] + ("gen",) in f.times
    }
    unchecked = len(both - set(got))  # rows of figures saved before this was recorded
    if not odd and not unsteady:
        least, most = min(v[0] for v in got.values()), max(v[0] for v in got.values())
        before = (
            f" (the other {unchecked} such rows are of a run before this was recorded)"
            if unchecked
            else ""
        )
        return (
            f"On each of the {len(got)} rows where both annotates finished{before}, the "
            f"generated and the hand-written class annotated the same nodes ({least:,} to "
            f"{most:,}), and each round of each annotate the nodes its first round did.\n\n"
        )
    lines = []
    if odd:
        lines += [
            "Rows where the two classes did not annotate the same nodes, or annotated none:",
            "",
            "| model | nodes | target | generated annotated | hand-written annotated | same nodes |",
            "|" + " --- |" * 6,
        ]
        for (family, nodes, target), (a, b, same) in odd.items():
            yes = "yes" if same else "no"
            lines.append(f"| {family} | {nodes:,} | {target} | {a:,} | {b:,} | {yes} |")
        lines.append("")
    if unsteady:
        shown = ", ".join(f"{t} {v} on {fam} {n:,}" for fam, n, t, v in unsteady)
        lines += [f"Annotates of which a round annotated other nodes than the first: {shown}.", ""]
    return "\n".join(lines) + "\n"


def in_envs(
    missing: list[Target],
    args: argparse.Namespace,
    sizes: Sequence[int],
    rounds: int,
    figures: Figures,
    targets: list[Target],
) -> tuple[Figures, list[Target]]:
    """The targets whose reference imports only in another environment (``--envs``): each
    environment's measured by this benchmark run with its Python, after this run (the same
    sizes, rounds, families and limits), and merged with this run's figures as ``--from``
    merges them. An environment not made is said and left out."""
    from tests.live.envs import ENVS

    by_env: dict[str, list[Target]] = {}
    for t in missing:
        by_env.setdefault(t.env, []).append(t)
    with tempfile.TemporaryDirectory(prefix="bcfg-scale-envs-") as tmp:
        files = [Path(tmp) / "here.json"]
        files[0].write_text(as_json(figures, rounds, targets), encoding="utf-8")
        for name, some in by_env.items():
            names = [t.name for t in some]
            env = ENVS.get(name)
            if env is None or not env.ready():
                how = f"`{env.command()}` makes it" if env is not None else "no such environment"
                print(f"  {', '.join(names)}: not measured: {how}", file=sys.stderr)
                continue
            out = Path(tmp) / f"{name}.json"
            command = [str(env.python()), str(Path(__file__).resolve()), "--targets", *names]
            command += ["--sizes", *map(str, sizes), "--rounds", str(rounds)]
            command += ["--families", *args.families, "--timeout", str(args.timeout)]
            command += ["--slow", str(args.slow), "--json", str(out)]
            command += ["--plot", str(Path(tmp) / f"{name}.svg")]
            if args.generated_from:
                command += ["--generated-from", args.generated_from]
            print(f"  the {name} environment: {', '.join(names)}", file=sys.stderr)
            run = subprocess.run(
                command,
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
                stdout=subprocess.DEVNULL,
            )
            if run.returncode != 0 or not out.is_file():
                print(
                    f"  the {name} environment's run failed (exit {run.returncode})",
                    file=sys.stderr,
                )
                continue
            files.append(out)
            targets = targets + some
        merged, _ = from_json(files)
    return merged, [t for t in ALL if t in targets]


def _strict(targets: Sequence[Target]) -> str:
    names = [t.name for t in targets if t.strict]
    if not names:
        return ""
    return (
        f" {', '.join(names)}: on a strict export of the same model, as its flow exports (its "
        "patterns match source partitions, which a non-strict export does not record), with "
        "its own node count."
    )


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}, one round")
    ap.add_argument("--sizes", type=int, nargs="+", help=f"node counts (default {SIZES})")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--families", nargs="+", default=[f.name for f in FAMILIES])
    ap.add_argument(
        "--targets",
        nargs="+",
        help="targets of the registry (default: those it benches; with --from, every one the "
        "figures have)",
    )
    ap.add_argument(
        "--timeout", type=float, default=LIMIT, help=f"seconds a call may take (default {LIMIT:g})"
    )
    ap.add_argument(
        "--slow",
        type=float,
        default=SLOW,
        help=f"a call slower than this is not repeated (default {SLOW:g})",
    )
    ap.add_argument("--generated-from", metavar="REV", help="the generated quantizers of git REV")
    ap.add_argument(
        "--envs",
        action="store_true",
        help="also measure the targets whose reference imports only in another environment "
        "(the Arm ones: python -m tests.live.envs arm --create), with its Python, after this run",
    )
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    ap.add_argument(
        "--from",
        dest="saved",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="do not measure: render figures saved with --json (merged in order)",
    )
    ap.add_argument(
        "--docs",
        action="store_true",
        help=f"write the table, plot and {FIGURES.name} into the docs",
    )
    ap.add_argument("--plot", type=Path, help="where the SVG goes (default: pt2e-scale.svg here)")
    args = ap.parse_args(argv)
    for option, given, known in (
        ("--families", args.families, [f.name for f in FAMILIES]),
        ("--targets", args.targets or (), [t.name for t in ALL]),
    ):
        for name in given:
            if name not in known:
                ap.error(f"argument {option}: unknown {name!r} (choose from {', '.join(known)})")
    for option, value, least in (
        ("--timeout", args.timeout, 0.0),
        ("--slow", args.slow, 0.0),
        ("--rounds", args.rounds, 1),
    ):
        if not (least <= value < float("inf")):  # nan compares false
            ap.error(f"argument {option}: {value!r} is not a number of at least {least:g}")
    if args.timeout == 0:
        ap.error("argument --timeout: 0 leaves no time for a call")
    for size in args.sizes or ():
        if size < 1:
            ap.error(f"argument --sizes: {size} is not a node count (at least 1)")
    for path in args.saved or ():
        try:
            from_json([path])
        except SavedError as e:
            ap.error(f"argument --from: {e}")
    return args


def chosen(names: Sequence[str] | None, saved: bool) -> list[Target]:
    """The targets a run measures or renders: those named (any registry row: its ``bench``
    flag says only the default), else the benched ones (with ``--from``, every one)."""
    if names:
        return [t for t in ALL if t.name in names]
    return list(ALL if saved else TARGETS)


def main(argv: Sequence[str] | None = None) -> int:
    args = _args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    rounds = 1 if args.quick else max(1, args.rounds)
    targets = chosen(args.targets, saved=bool(args.saved))
    missing: list[Target] = []
    if not args.saved:  # measured: the targets whose reference imports in this environment
        missing = [t for t in targets if not t.available()]
        for t in missing:
            later = "measured there after this run (--envs)" if args.envs else "--envs measures it"
            where = (
                f"imports in the {t.env} environment (`python -m tests.live.envs {t.env}`): "
                f"{later}"
                if t.env
                else "does not import here"
            )
            print(f"  {t.name}: not here: {t.reference} {where}", file=sys.stderr)
        targets = [t for t in targets if t not in missing]
    if args.saved:
        figures, rounds = from_json(args.saved)
        measured = {k[2] for k in [*figures.times, *figures.over]}
        targets = [t for t in targets if t.name in measured]
    else:
        warnings.filterwarnings("ignore")
        with tempfile.TemporaryDirectory(prefix="bcfg-scale-") as tmp:
            package = generated_package(args.generated_from, Path(tmp))
            figures = measure(
                sizes,
                rounds,
                args.families,
                targets,
                package,
                Figures(args.timeout, args.slow),
                lambda f: args.json and args.json.write_text(as_json(f, rounds, targets)),
            )
        if args.envs and missing:
            figures, targets = in_envs(missing, args, sizes, rounds, figures, targets)
    if not targets:
        print("pt2e_scale: no target measured here (see above)", file=sys.stderr)
        return 2
    text = render(figures, rounds, targets)
    print(text)
    saved = as_json(figures, rounds, targets)
    if args.json:
        args.json.write_text(saved, encoding="utf-8")
    plot = svg(
        plot_lines(figures, targets), "annotate: seconds against nodes (log-log)", figures.limit
    )
    if args.docs:
        write_docs(text, plot, where=args.plot or PLOT)
        FIGURES.write_text(saved, encoding="utf-8")
    else:
        out: Path = args.plot or Path("pt2e-scale.svg")
        out.write_text(plot, encoding="utf-8")
        print(f"\nplot: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
