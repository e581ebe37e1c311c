#!/usr/bin/env python3
"""bcfg's performance benchmark: every target of the performance issue, in one table.

    python benchmarks/run.py              # 5 rounds (the issue asks for medians of at least 5)
    python benchmarks/run.py --rounds 9   # steadier figures
    python benchmarks/run.py --quick      # 3 rounds and a smaller scale test, for a quick look

Run it with the Python that has bcfg's dependencies (torch, lark, jinja2, black).
It works on copies of the project's specs in a temporary folder, with its own
cache folders, and never touches the repository's generated/ or your cache.
Timings are of whole commands (``python -m generator ...``; the ``bcfg``
script, without PYTHONPATH, for the project with its own modules) unless said
otherwise, each taken in rounds that interleave all scenarios so that a noisy
machine slows all alike; the table shows medians and the ratio of medians.
Figures are noisy: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

if not __package__:  # run as a script, python benchmarks/run.py: the repository is the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.perf.table import print_table  # noqa: E402
from benchmarks.perf.targets import command_rows, lsp_rows  # noqa: E402
from benchmarks.perf.workspace import checkout  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds per measurement (default 5)")
    ap.add_argument(
        "--quick", action="store_true", help="3 rounds, scale test with 300 and 3,000 patterns"
    )
    ap.add_argument("--lsp", action="store_true", help="only the language server's measurement")
    ap.add_argument(
        "--against",
        metavar="REV",
        help="also run check, diff, generate, docs, import and the language server's first "
        "session at git revision REV (e.g. main), interleaved, and compare",
    )
    args = ap.parse_args()
    rounds = 3 if args.quick else max(args.rounds, 1)
    scale = (300, 3000) if args.quick else (1000, 10000)

    rows: list[tuple[str, str, str, str]] = []  # what, measured, target, verdict

    def row(what: str, measured: str, target: str, ok: bool | None) -> None:
        rows.append((what, measured, target, "" if ok is None else "met" if ok else "MISSED"))

    with tempfile.TemporaryDirectory(prefix="bcfg-bench-") as tmp:
        root = Path(tmp)
        print(f"bcfg benchmark: {rounds} rounds", file=sys.stderr)
        against = None
        if args.against:
            against = (args.against, checkout(args.against, root / "against-code"))
        if not args.lsp:
            command_rows(root, rounds, scale, row, against)
        lsp_rows(root, rounds, row, against)
    print_table(rows, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
