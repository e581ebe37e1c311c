#!/usr/bin/env python3
"""What ``report()`` costs, counted in instructions: annotate with the report off, on, and on and read.

    python benchmarks/pt2e_report_instructions.py                       # transformer and cat, 1k
    python benchmarks/pt2e_report_instructions.py --sizes 1000 4000 --targets xnnpack
    python benchmarks/pt2e_report_instructions.py --families conv transformer cat \
        --sizes 1000 4000 16000 --variants off      # how annotate grows with the graph

The graphs, targets and variants of ``benchmarks/pt2e_report_scale.py``, but
each annotate's instructions are counted by valgrind's callgrind instead of
timed: a count does not move with the machine's load, which a 2-core machine
shared with other jobs makes of any wall-clock ratio. The script runs itself
under ``valgrind --tool=callgrind --instr-atstart=no`` and turns the counting on
around each annotate only (through a five-line C library built with gcc from
``valgrind/callgrind.h``), after one uncounted warm-up call per variant, with
garbage frozen; making the quantizer, clearing the graph's annotations and
exporting are not counted. A target the timed script measures on a strict export
(Cadence) is counted on one here too. Needs valgrind, its headers and gcc (Debian's
valgrind and gcc). About 50x slower than the timed script: 1k nodes take
minutes. Given more than one size, it also prints how the count grows with the
graph: the exponent k of instructions ~ nodes^k between each size and the next
(k = 1: linear; a count, unlike a time, has no cache misses in it, so k above 1
is work the code does per node that grows with the graph). A measurement, not a
test.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if not __package__:  # run as a script: the repository is the root
    sys.path.insert(0, str(REPO))

from benchmarks.pt2e_report_scale import FAMILY_NAMES, MAIN, VARIANTS, variants  # noqa: E402
from benchmarks.pt2e_scale import AnnotateCall, by_export, exponent  # noqa: E402

CONTROL = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void stop(const char *label) { CALLGRIND_DUMP_STATS_AT(label); CALLGRIND_STOP_INSTRUMENTATION; }
"""
CHILD = "BCFG_CALLGRIND_CONTROL"  # set in the run under valgrind: the control library's path


def counted(lib: Any, label: str, call: AnnotateCall) -> None:
    """One warm-up annotate of ``call`` (its quantizer, or a ``fresh()`` one, on its graph),
    then one counted, dumped as ``label``."""
    for count in (False, True):
        call.undo()
        who = call.fresh() if call.fresh is not None else call.q
        gc.collect()
        gc.freeze()
        if count:
            lib.start()
        who.annotate(call.graph)
        if call.read:
            len(who.last_report.entries)
        if count:
            lib.stop(label.encode())
        gc.unfreeze()


def child(args: argparse.Namespace) -> None:
    """Under valgrind: annotate every (family, size, target, variant), each counted once."""
    from benchmarks.scale.models import FAMILIES, exported
    from benchmarks.scale.targets import TARGETS

    warnings.filterwarnings("ignore")
    lib = ctypes.CDLL(os.environ[CHILD])
    targets = [t for t in TARGETS if t.name in args.targets and t.available()]
    for family in [f for f in FAMILIES if f.name in args.families]:
        for size in args.sizes:
            for strict, some in by_export(targets):  # as pt2e_scale exports
                gm, _ = exported(family, size, strict)
                nodes = len(gm.graph.nodes)
                for t in some:
                    for v, call in variants(t, "generated", gm, args.variants).items():
                        counted(lib, f"{family.name}|{nodes}|{t.name}|{v}", call)


def counts(folder: Path) -> dict[tuple[str, str, str], dict[str, int]]:
    """Instructions by (family, nodes, target) and variant, from callgrind's dump files."""
    out: dict[tuple[str, str, str], dict[str, int]] = {}
    for dump in sorted(folder.glob("cg.out.*"), key=lambda p: int(p.suffix[1:])):
        text = dump.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if label and total:
            family, nodes, target, variant = label.group(1).split("|")
            out.setdefault((family, nodes, target), {})[variant] = int(total.group(1))
    return out


def table(found: dict[tuple[str, str, str], dict[str, int]]) -> str:
    lines = [
        "| model | nodes | target | off | on | read | on/off | read/off |",
        "|" + " --- |" * 8,
    ]
    for (family, nodes, target), c in found.items():
        off, on, read = (c.get(v, 0) for v in VARIANTS)
        ratios = [f"{x / off:.3f}" if off and x else "-" for x in (on, read)]
        shown = [f"{x / 1e6:.1f}M" if x else "-" for x in (off, on, read)]
        lines.append(f"| {family} | {int(nodes):,} | {target} | {' | '.join(shown + ratios)} |")
    return "\n".join(lines)


def growth(found: dict[tuple[str, str, str], dict[str, int]]) -> str:
    """The exponent k of instructions ~ nodes^k, each variant, between each size of a family
    and the next, and overall (the smallest to the largest): a row a model, target and
    variant."""
    lines = ["| model | target | variant | nodes | k each step | overall |", "|" + " --- |" * 6]
    by: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for (family, nodes, target), c in found.items():
        for v, n in c.items():
            by.setdefault((family, target, v), []).append((int(nodes), n))
    for (family, target, v), points in by.items():
        points.sort()
        if len(points) < 2:
            continue
        ks = [_k(a, b) for a, b in zip(points, points[1:])]
        sizes = " → ".join(f"{n:,}" for n, _ in points)
        lines.append(
            f"| {family} | {target} | {v} | {sizes} | {', '.join(ks)} "
            f"| {_k(points[0], points[-1])} |"
        )
    return "\n".join(lines) if len(lines) > 2 else ""


def _k(a: tuple[int, int], b: tuple[int, int]) -> str:
    """k of count ~ nodes^k between two (nodes, count) points."""
    return f"{exponent(*a, *b):.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(FAMILY_NAMES))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000])
    ap.add_argument("--targets", nargs="+", default=list(MAIN))
    ap.add_argument(
        "--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS), help="default: all"
    )
    args = ap.parse_args(argv)
    if os.environ.get(CHILD):
        child(args)
        return 0
    missing = [tool for tool in ("valgrind", "gcc") if shutil.which(tool) is None]
    if missing:
        print(f"pt2e_report_instructions: needs {' and '.join(missing)} (Debian: valgrind, gcc)")
        return 2
    with tempfile.TemporaryDirectory(prefix="bcfg-callgrind-") as tmp:
        folder = Path(tmp)
        (folder / "control.c").write_text(CONTROL)
        lib = folder / "libcontrol.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, folder / "control.c"], check=True)
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "-q"]
        command += [f"--callgrind-out-file={folder / 'cg.out'}", sys.executable, __file__]
        run = subprocess.run(
            [*command, *(argv if argv is not None else sys.argv[1:])],
            env={**os.environ, CHILD: str(lib)},
        )
        if run.returncode != 0:
            return run.returncode
        print("instructions of one annotate (callgrind), report off / on / on and read")
        found = counts(folder)
        print(table(found))
        if grown := growth(found):
            print("\ngrowth: instructions ~ nodes^k")
            print(grown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
