"""The comparison of two PT2E quantizers on graphs: the proof engine of ``bcfg compare`` and
of the PT2E import.

Each graph is exported once per export mode and given, as a copy, to each
quantizer twice (``live.probe.annotations.annotate``): a quantizer that
annotates the same graph differently twice is a report entry of its own, and
so is one that raises or runs past the per-graph time limit (the run goes on
with the next graph). Annotations compare by value, node by node
(``live.probe.annotations.dump``); a graph that torch cannot export is listed,
not compared.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...live.probe.annotations import Annotated, annotate, describe_record
from ...live.targets import NOT_THE_USERS, failure, one_line

MODES = {"strict": (True,), "non-strict": (False,), "both": (False, True)}


@dataclass
class Graph:
    """A graph to compare on: ``build()`` returns ``(model, example_inputs)``."""

    name: str
    kind: str  # probe, model or random
    build: Callable[[], tuple[Any, tuple[Any, ...]]]
    train: bool = False
    dynamic: bool = False


@dataclass
class NodeDiff:
    node: str
    op: str
    a: dict[str, Any] | None
    b: dict[str, Any] | None

    def lines(self) -> tuple[list[str], list[str]]:
        """Each side's lines that the other side does not have (the difference, side by side)."""
        la, lb = describe_record(self.a), describe_record(self.b)
        return [x for x in la if x not in lb], [x for x in lb if x not in la]


@dataclass
class Outcome:
    """One side on one graph: what it annotated, or why not."""

    annotated: Annotated | None = None
    error: str | None = None
    unstable: bool = False  # annotated the same graph differently twice


@dataclass
class GraphResult:
    name: str
    kind: str
    export: str  # strict or non-strict
    status: str  # same, differ, not exported
    reason: str = ""  # why not exported; why the outcomes differ
    diffs: list[NodeDiff] = field(default_factory=list)
    ops: dict[str, tuple[int, int]] = field(default_factory=dict)  # op: (nodes, differing)
    a_error: str | None = None
    b_error: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.export})"


@dataclass
class Result:
    a: str
    b: str
    graphs: list[GraphResult]
    seconds: float = 0.0

    @property
    def differing(self) -> list[GraphResult]:
        return [g for g in self.graphs if g.status == "differ"]

    def ops(self) -> dict[str, tuple[int, int]]:
        """Per op: annotated nodes compared, and of those, differing."""
        out: dict[str, tuple[int, int]] = {}
        for g in self.graphs:
            for op, (n, d) in g.ops.items():
                m, e = out.get(op, (0, 0))
                out[op] = (m + n, e + d)
        return dict(sorted(out.items()))


class GraphTimeout(BaseException):
    """A quantizer ran past the per-graph time limit (a BaseException, so that the user's
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _limit(seconds: float | None) -> Iterator[None]:
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise GraphTimeout()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_users(fn: Callable[[], Any], seconds: float | None) -> tuple[Any, str | None]:
    """``fn()`` (which runs the user's quantizer) within the per-graph limit, its prints on
    standard error: (its value, None), or (None, why it failed in one line)."""
    import sys
    import warnings

    try:
        with _limit(seconds), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            return fn(), None
    except GraphTimeout:
        return None, f"ran past the limit of {seconds:g} s per graph"
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (the user's quantizer: anything)
        return None, f"raised {one_line(exc)}"


def run_side(quantizer: Any, gm: Any, seconds: float | None, twice: bool = True) -> Outcome:
    """One quantizer on one graph, twice (``twice``): its annotations, or why not."""
    got = []
    for _ in range(2 if twice else 1):
        value, error = call_users(lambda: annotate(quantizer, gm), seconds)
        if error is not None:
            return Outcome(error=error)
        got.append(value)
    unstable = len(got) == 2 and got[0].dump != got[1].dump
    return Outcome(annotated=got[0], unstable=unstable)


def compare_graph(
    qa: Any, qb: Any, graph: Graph, strict: bool, seconds: float | None, twice: bool = True
) -> GraphResult:
    from ...live.probe.zoo import export_model

    export = "strict" if strict else "non-strict"
    try:
        with _limit(seconds):
            import torch

            torch.manual_seed(0)
            model, inputs = graph.build()
            model.train(graph.train)
            gm = export_model(model, inputs, strict, graph.dynamic)
    except GraphTimeout:
        return GraphResult(graph.name, graph.kind, export, "not exported", "export ran too long")
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (torch.export of a model: anything)
        return GraphResult(
            graph.name, graph.kind, export, "not exported", failure(exc).split("\n")[0]
        )
    a = run_side(qa, gm, seconds, twice)
    b = run_side(qb, gm, seconds, twice)
    return judge(graph, export, a, b)


def judge(graph: Graph, export: str, a: Outcome, b: Outcome) -> GraphResult:
    r = GraphResult(graph.name, graph.kind, export, "same", a_error=a.error, b_error=b.error)
    unstable = [side for side, o in (("A", a), ("B", b)) if o.unstable]
    if unstable:
        r.status, r.reason = "differ", (
            f"{' and '.join(unstable)} annotated this graph differently twice"
        )
    if a.annotated is None or b.annotated is None:
        if a.error is not None and b.error is not None:
            # both refuse the graph: the same behaviour if they raise the same kind of error
            if a.error.split(":")[0] != b.error.split(":")[0]:
                r.status, r.reason = "differ", "both failed, differently"
            return r
        r.status = "differ"
        r.reason = f"{'A' if a.error else 'B'} failed: {a.error or b.error}"
        return r
    da, db = _observing(a.annotated.dump), _observing(b.annotated.dump)
    order = [n for n, _ in a.annotated.dump if n in da]
    order += [n for n, _ in b.annotated.dump if n in db and n not in da]
    for node in order:
        op = a.annotated.ops.get(node) or b.annotated.ops.get(node) or "?"
        n, d = r.ops.get(op, (0, 0))
        differs = da.get(node) != db.get(node)
        r.ops[op] = (n + 1, d + differs)
        if differs:
            r.diffs.append(NodeDiff(node, op, da.get(node), db.get(node)))
    if r.diffs:
        r.status = "differ"
    return r


def _observing(dump: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The annotations that observe something: one with no input spec and no output spec
    (XNNPACK marks the weights it took so) makes prepare_pt2e insert nothing, as none does."""
    return {n: r for n, r in dump if r["inputs"] or r["output"] is not None}


def compare(
    qa: Any,
    qb: Any,
    graphs: list[Graph],
    modes: tuple[bool, ...],
    seconds: float | None,
    names: tuple[str, str],
    progress: Callable[[str], None] = lambda s: None,
    twice: bool = True,
) -> Result:
    """Both quantizers on every graph in every export mode (torchao's pattern traces once:
    ``live.probe.traces``)."""
    from ...live.probe.traces import pattern_cache

    start = time.monotonic()
    results = []
    with pattern_cache():
        for graph in graphs:
            for strict in modes:
                progress(f"comparing on {graph.name} ({'strict' if strict else 'non-strict'})")
                results.append(compare_graph(qa, qb, graph, strict, seconds, twice))
    return Result(names[0], names[1], results, time.monotonic() - start)


def probe_graphs(names: list[str] | None = None) -> list[Graph]:
    from ...live.probe.zoo import select

    return [Graph(p.name, "probe", p.build, p.train, p.dynamic) for p in select(names)]


def random_graphs(count: int, seed: int = 0) -> list[Graph]:
    from ...live.probe.zoo import random_models

    return [Graph(name, "random", build) for name, build in random_models(count, seed)]
