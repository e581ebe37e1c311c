#!/usr/bin/env python3
"""PT2E annotate at scale: every generated quantizer against the hand-written class it replaces.

    python benchmarks/pt2e_scale.py            # ~1k, 4k, 16k nodes, medians of 3 rounds
    python benchmarks/pt2e_scale.py --quick    # small graphs, one round: a smoke test
    python benchmarks/pt2e_scale.py --docs     # also write the table and plot into the docs

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
import math
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if not __package__:  # run as a script: the repository is the root
    sys.path.insert(0, str(REPO))

from benchmarks.scale.models import FAMILIES, exported  # noqa: E402
from benchmarks.scale.plot import svg  # noqa: E402
from benchmarks.scale.targets import TARGETS, Target  # noqa: E402

KEY = "quantization_annotation"
SIZES = (1000, 4000, 16000)
QUICK_SIZES = (150, 300)
PLOT = REPO / "docs" / "assets" / "pt2e-scale.svg"
PAGE = REPO / "docs" / "contributing" / "benchmarks.md"
BEGIN, END = "<!-- pt2e-scale:begin -->", "<!-- pt2e-scale:end -->"
# The variants timed per target and graph: (key, what).
VARIANTS = (
    ("gen", "generated annotate"),
    ("gen_report", "generated annotate, report() on"),
    ("ref", "hand-written annotate"),
    ("gen_prepare", "generated prepare_pt2e"),
    ("ref_prepare", "hand-written prepare_pt2e"),
)
# (family, nodes, target, variant) -> seconds of each round
Times = dict[tuple[str, int, str, str], list[float]]


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


def clear(gm: Any) -> None:
    for n in gm.graph.nodes:
        n.meta.pop(KEY, None)


def annotate_call(q: Any, gm: Any) -> Callable[[], None]:
    """One timed annotate of ``q`` on its own transform of ``gm`` (annotations cleared first)."""
    mine = q.transform_for_annotation(copy.deepcopy(gm))

    def call() -> float:
        clear(mine)
        start = time.perf_counter()
        q.annotate(mine)
        return time.perf_counter() - start

    return call  # type: ignore[return-value]


def prepare_call(q: Any, gm: Any) -> Callable[[], float]:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    def call() -> float:
        mine = copy.deepcopy(gm)
        start = time.perf_counter()
        prepare_pt2e(mine, q)
        return time.perf_counter() - start

    return call


def calls(target: Target, package: str, gm: Any, nodes: int) -> dict[str, Callable[[], float]]:
    """The timed calls of one target on one graph (the hand-written class's only within its cap)."""
    gen, config = target.generated_class(package), target.make_config()
    out: dict[str, Callable[[], float]] = {
        "gen": annotate_call(gen().set_global(config), gm),  # type: ignore[dict-item]
        "gen_report": annotate_call(gen().set_global(config).report(None), gm),  # type: ignore[dict-item]
        "gen_prepare": prepare_call(gen().set_global(config), gm),
    }
    if target.reference_max_nodes is None or nodes <= target.reference_max_nodes:
        ref = target.reference_class()
        out["ref"] = annotate_call(ref().set_global(config), gm)  # type: ignore[assignment]
        out["ref_prepare"] = prepare_call(ref().set_global(config), gm)
    return out


def measure(
    sizes: Sequence[int],
    rounds: int,
    families: Sequence[str],
    targets: Sequence[Target],
    package: str,
) -> tuple[Times, dict[tuple[str, int], int]]:
    """Every variant of every target on every family and size: seconds of each round, and the
    node count of each exported graph."""
    times: Times = {}
    counts: dict[tuple[str, int], int] = {}
    for family in (f for f in FAMILIES if f.name in families):
        for size in sizes:
            print(f"  exporting {family.name} at ~{size} nodes", file=sys.stderr)
            gm, _ = exported(family, size)
            nodes = len(gm.graph.nodes)
            counts[(family.name, size)] = nodes
            todo = {t.name: calls(t, package, gm, nodes) for t in targets}
            for r in range(rounds):
                print(f"  {family.name} {nodes} nodes: round {r + 1}/{rounds}", file=sys.stderr)
                for name, variants in todo.items():
                    for key, call in variants.items():
                        times.setdefault((family.name, nodes, name, key), []).append(call())
    return times, counts


def median(times: Times, *key: Any) -> float | None:
    got = times.get(key)  # type: ignore[arg-type]
    return statistics.median(got) if got else None


def _s(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def _x(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None else f"{a / b:.2f}x"


def table(times: Times, counts: dict[tuple[str, int], int], targets: Sequence[Target]) -> str:
    """The figures as a Markdown table, a row per family, size and target (seconds, medians)."""
    head = (
        "| model | nodes | target | hand-written annotate | generated annotate | ratio "
        "| report on | on/off | hand-written prepare | generated prepare | ratio |"
    )
    lines = [head, "|" + " --- |" * 11]
    for (family, _), nodes in counts.items():
        for t in targets:
            m = {k: median(times, family, nodes, t.name, k) for k, _ in VARIANTS}
            lines.append(
                f"| {family} | {nodes:,} | {t.name} | {_s(m['ref'])} | {_s(m['gen'])} "
                f"| {_x(m['gen'], m['ref'])} | {_s(m['gen_report'])} | {_x(m['gen_report'], m['gen'])} "
                f"| {_s(m['ref_prepare'])} | {_s(m['gen_prepare'])} | {_x(m['gen_prepare'], m['ref_prepare'])} |"
            )
    return "\n".join(lines)


def growth(times: Times, counts: dict[tuple[str, int], int], targets: Sequence[Target]) -> str:
    """How annotate time grows with nodes: the exponent k of time ~ nodes^k between each size
    and the next (1: linear; doubling nodes at most doubles time while k <= 1)."""
    lines = ["| model | target | quantizer | nodes | k |", "| --- | --- | --- | --- | --- |"]
    families = list(dict.fromkeys(f for f, _ in counts))
    for family in families:
        sizes = [n for (f, _), n in counts.items() if f == family]
        for t in targets:
            for key, who in (("gen", "generated"), ("ref", "hand-written")):
                for a, b in zip(sizes, sizes[1:]):
                    ta, tb = median(times, family, a, t.name, key), median(
                        times, family, b, t.name, key
                    )
                    if ta and tb:
                        k = math.log(tb / ta) / math.log(b / a)
                        lines.append(f"| {family} | {t.name} | {who} | {a:,} → {b:,} | {k:.2f} |")
    return "\n".join(lines)


def plot_lines(times: Times, counts: dict[tuple[str, int], int], targets: Sequence[Target]) -> dict:
    lines: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for (family, _), nodes in counts.items():
        for t in targets:
            for key, who in (("gen", "generated"), ("ref", "hand-written")):
                m = median(times, family, nodes, t.name, key)
                if m is not None:
                    lines.setdefault((family, t.name, who), []).append((nodes, m))
    return lines


def write_docs(text: str, plot: str, page: Path = PAGE, where: Path = PLOT) -> None:
    """The table between the page's markers, the plot at ``where``."""
    where.write_text(plot, encoding="utf-8")
    old = page.read_text(encoding="utf-8")
    head, _, rest = old.partition(BEGIN)
    _, _, tail = rest.partition(END)
    page.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}, one round")
    ap.add_argument("--sizes", type=int, nargs="+", help=f"node counts (default {SIZES})")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--families", nargs="+", default=[f.name for f in FAMILIES])
    ap.add_argument("--targets", nargs="+", default=[t.name for t in TARGETS])
    ap.add_argument("--generated-from", metavar="REV", help="the generated quantizers of git REV")
    ap.add_argument("--docs", action="store_true", help="write the table and plot into the docs")
    ap.add_argument("--plot", type=Path, help="where the SVG goes (default: pt2e-scale.svg here)")
    args = ap.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    rounds = 1 if args.quick else max(1, args.rounds)
    targets = [t for t in TARGETS if t.name in args.targets]
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory(prefix="bcfg-scale-") as tmp:
        package = generated_package(args.generated_from, Path(tmp))
        times, counts = measure(sizes, rounds, args.families, targets, package)
    capped = [
        f"{t.name} (over {t.reference_max_nodes:,} nodes)" for t in targets if t.reference_max_nodes
    ]
    text = (
        f"Seconds, medians of {rounds} round(s); ratio: generated / hand-written "
        f"(on/off: report on / off). Hand-written class not timed: {', '.join(capped) or 'none'}.\n\n"
        f"{table(times, counts, targets)}\n\nGrowth of annotate time, time ~ nodes^k:\n\n"
        f"{growth(times, counts, targets)}"
    )
    print(text)
    plot = svg(plot_lines(times, counts, targets), "annotate: seconds against nodes (log-log)")
    if args.docs:
        write_docs(text, plot, where=args.plot or PLOT)
    else:
        where = args.plot or Path("pt2e-scale.svg")
        where.write_text(plot, encoding="utf-8")
        print(f"\nplot: {where}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
