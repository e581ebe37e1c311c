"""Write the analysis of the grammar bcfg ships: ``grammar/bcfg.lark.analysis``.

    python -m generator.lang.analysis           # after editing grammar/bcfg.lark
    python -m generator.lang.analysis --check   # exit 1 if the shipped one does not fit

Lark's LALR analysis of the grammar takes longer than parsing every spec of a
project, so ``parse.make_lark`` saves it in bcfg's cache folder; so that a
first run on an empty cache (a new install, a CI job) does not make it either,
the package ships one. A saved analysis is used only if it was made from this
grammar, these options and these versions of Lark and Python (its first line,
``parse.analysis_key``); else Lark makes it again. tests/lang/test_parse.py
checks that the shipped one fits the grammar, the installed Lark and Python.
"""

from __future__ import annotations

import argparse
import sys

from ..resources import resource_path
from .parse import SHIPPED_ANALYSIS, analysis_key, make_lark, save_analysis


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.lang.analysis", description=__doc__)
    ap.add_argument("--check", action="store_true", help="only say whether it fits")
    args = ap.parse_args(argv)
    grammar = resource_path("grammar", "bcfg.lark")
    target = grammar.parent / SHIPPED_ANALYSIS
    key = analysis_key(grammar.read_bytes())
    fits = target.is_file() and target.read_bytes().split(b"\n", 1)[0] == key
    if args.check:
        print(f"{target.name}: {'fits' if fits else 'does not fit the grammar, Lark or Python'}")
        return 0 if fits else 1
    save_analysis(make_lark(saved=False), target, key)
    print(f"wrote {target} (the same bytes from the same grammar, Lark and Python)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
