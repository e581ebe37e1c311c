#!/usr/bin/env python3
"""What ``report()`` costs at scale: annotate with the report off, on, and on and read.

    python benchmarks/pt2e_report_scale.py                    # transformer and cat, 4k and 16k
    python benchmarks/pt2e_report_scale.py --against HEAD~3   # and REV's quantizers beside
    python benchmarks/pt2e_report_scale.py --profile xnnpack  # where the report's time goes

The graphs and targets of ``benchmarks/pt2e_scale.py`` (report off, on, on and
read are its ``gen``, ``gen_report`` and ``gen_read`` calls). Every variant of
every target (and of REV's generated quantizers, ``--against``) runs once per
round, interleaved, in one process; the table shows the minimum of the rounds
(a busy machine only ever adds time) and the ratios on/off and read/off of
those minimums. ``--profile TARGET`` runs cProfile over the report-on-and-read
calls of TARGET instead and prints where the time beyond annotate goes. A
measurement, not a test.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if not __package__:  # run as a script: the repository is the root
    sys.path.insert(0, str(REPO))

from benchmarks.pt2e_scale import (  # noqa: E402
    AnnotateCall,
    annotate_call,
    by_export,
    generated_package,
    timed,
)
from benchmarks.scale.models import FAMILIES, exported  # noqa: E402
from benchmarks.scale.targets import TARGETS, Target  # noqa: E402

FAMILY_NAMES = ("transformer", "cat")
SIZES = (4000, 16000)
MAIN = ("xnnpack", "xnnpack_executorch", "x86_inductor", "arm_inductor")
VARIANTS = ("off", "on", "read")


def variant_specs(target: Target, package: str) -> dict[str, tuple[Any, bool, Any]]:
    """Report off, on, and on with its entries read: (quantizer, read, fresh) for each, as
    ``pt2e_scale.annotate_call`` takes them."""
    cls = target.generated_class(package)

    def fresh(report: bool) -> Callable[[], Any] | None:
        if not target.fresh:
            return None
        return lambda: target.make(cls).report(None) if report else target.make(cls)

    on = target.make(cls).report(None)
    return {
        "off": (target.make(cls), False, fresh(False)),
        "on": (on, False, fresh(True)),
        "read": (on, True, fresh(True)),
    }


def variants(
    target: Target, package: str, gm: Any, which: Sequence[str] = VARIANTS
) -> dict[str, AnnotateCall]:
    """Report off, on, and on with its entries read (those in ``which``): one timed annotate
    each, on copies of one transform of ``gm`` (the variants are one class and config;
    ExecuTorch's Arm pass pipeline, which the Cortex-M and TOSA classes run in it, takes
    minutes on a large graph)."""
    out: dict[str, AnnotateCall] = {}
    for v, (q, read, fresh) in variant_specs(target, package).items():
        if v in which:
            out[v] = annotate_call(q, gm, read, fresh, like=next(iter(out.values()), None))
    return out


def measure(
    gm: Any, targets: Sequence[Target], packages: dict[str, str], rounds: int, limit: float
) -> dict[tuple[str, str, str], list[float]]:
    """Seconds by (target, package label, variant): ``rounds`` interleaved rounds."""
    todo = {
        (t.name, label): variants(t, package, gm)
        for t in targets
        for label, package in packages.items()
    }
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(rounds):
        for (name, label), calls in todo.items():
            for v, call in calls.items():
                got = timed(call, limit)
                if got is not None:
                    times.setdefault((name, label, v), []).append(got)
    return times


def rows(family: str, nodes: int, times: dict[tuple[str, str, str], list[float]]) -> list[str]:
    out = []
    for name, label in dict.fromkeys((k[0], k[1]) for k in times):
        best = {v: min(times.get((name, label, v), [float("nan")])) for v in VARIANTS}
        off = best["off"]
        out.append(
            f"| {family} | {nodes:,} | {name} | {label} | {off:.3f} | {best['on']:.3f} "
            f"| {best['read']:.3f} | {best['on'] / off:.2f} | {best['read'] / off:.2f} |"
        )
    return out


def profile(gm: Any, target: Target, package: str, calls: int, top: int) -> str:
    """cProfile of ``calls`` report-on annotates whose report is read (after one unprofiled;
    garbage frozen as ``timed`` does)."""
    call = variants(target, package, gm)["read"]
    call()
    gc.collect()
    gc.freeze()  # as ``timed``: a full collection walks only what the calls make
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        call()
    prof.disable()
    gc.unfreeze()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime")
    stats.print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(FAMILY_NAMES))
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--targets", nargs="+", default=list(MAIN))
    ap.add_argument("--rounds", type=int, default=5, help="rounds; the minimum is shown")
    ap.add_argument("--against", metavar="REV", help="also REV's generated quantizers")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a call may take")
    ap.add_argument("--profile", metavar="TARGET", help="cProfile TARGET's read calls instead")
    ap.add_argument("--top", type=int, default=30, help="functions --profile prints")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    targets = [t for t in TARGETS if t.name in args.targets and t.available()]
    if args.profile:
        targets = [t for t in targets if t.name == args.profile]
        if not targets:
            ap.error(f"--profile {args.profile}: not among the targets available here")
    families = [f for f in FAMILIES if f.name in args.families]
    with tempfile.TemporaryDirectory(prefix="bcfg-report-") as tmp:
        packages = {"here": "generated"}
        if args.against:
            packages[args.against] = generated_package(args.against, Path(tmp))
        print(f"load average at start: {os.getloadavg()}", file=sys.stderr)
        lines = [
            "| model | nodes | target | runtime | off | on | read | on/off | read/off |",
            "|" + " --- |" * 9,
        ]
        for family in families:
            for size in args.sizes:
                for strict, some in by_export(targets):  # as pt2e_scale exports
                    gm, _ = exported(family, size, strict)
                    nodes = len(gm.graph.nodes)
                    if args.profile:
                        (target,) = some
                        print(f"{family.name} {nodes} nodes, {target.name}:")
                        print(profile(gm, target, "generated", args.rounds, args.top))
                        continue
                    times = measure(gm, some, packages, args.rounds, args.limit)
                    lines += rows(family.name, nodes, times)
                    print(f"  {family.name} {nodes:,}: load {os.getloadavg()}", file=sys.stderr)
        if not args.profile:
            print(f"seconds, minimum of {args.rounds} interleaved rounds, one process")
            print("\n".join(lines))
        print(f"load average at end: {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
