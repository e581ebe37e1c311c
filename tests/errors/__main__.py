"""``python -m tests.errors [--accept] [NAME ...]``: show or re-accept the error corpus."""

from __future__ import annotations

import argparse
import difflib
import sys
import warnings

from . import accept, cases, expected_path, run_case


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m tests.errors", description=__doc__)
    p.add_argument(
        "--accept",
        action="store_true",
        help="write each case's current output as its expected output",
    )
    p.add_argument("names", nargs="*", help="cases to run (default: all)")
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    names = args.names or cases()
    if args.accept:
        changed = accept(names)
        print(
            f"accepted {len(names)} case(s); {len(changed)} changed: {', '.join(changed) or 'none'}"
        )
        return 0
    failed = 0
    for name in names:
        got = run_case(name)
        path = expected_path(name)
        want = path.read_text(encoding="utf-8") if path.is_file() else ""
        if got != want:
            failed += 1
            sys.stdout.writelines(
                difflib.unified_diff(
                    want.splitlines(True), got.splitlines(True), f"{name}.expected", f"{name} (now)"
                )
            )
    print(f"{len(names) - failed} of {len(names)} case(s) match")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
