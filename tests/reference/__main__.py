"""python -m tests.reference {x86,arm,all,xnnpack} [--cache DIR] [--from-git PATH | --download] [-k EXPR]

Runs torchao 0.18's test files for its inductor quantizers (``all``: both), or
its PT2E test files that use its XNNPACK copy (``xnnpack``), with torchao's
class and with the generated one (see ``tests/reference/__init__.py``) and
compares them test by test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

TAG = "v0.18.0"
FOLDER = "test/quantization/pt2e"
FILES = {
    "x86": ("test_x86inductor_quantizer.py",),
    "arm": ("test_arm_inductor_quantizer.py",),
    # torchao's tests of prepare/convert and QAT, written with its XNNPACKQuantizer copy.
    "xnnpack": ("test_quantize_pt2e.py", "test_quantize_pt2e_qat.py", "test_representation.py"),
}
ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = Path.home() / ".cache" / "bcfg" / f"torchao-{TAG}"


def fill_cache(cache: Path, from_git: str | None, download: bool) -> None:
    """Put torchao's test files into ``cache``, from a clone (at TAG) or from GitHub."""
    cache.mkdir(parents=True, exist_ok=True)
    for name in [n for names in FILES.values() for n in names]:
        target = cache / name
        if target.exists():
            continue
        if from_git:
            text = subprocess.run(
                ["git", f"--git-dir={from_git}", "show", f"{TAG}:{FOLDER}/{name}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        elif download:
            url = f"https://raw.githubusercontent.com/pytorch/ao/{TAG}/{FOLDER}/{name}"
            with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - a fixed https URL
                text = r.read().decode("utf-8")
        else:
            sys.exit(
                f"{target} is missing: fill the cache with --from-git PATH (a clone of "
                "pytorch/ao) or --download"
            )
        target.write_text(text, encoding="utf-8")


def run(cache: Path, which: str, swap: str, select: str | None) -> dict[str, str]:
    """Outcome of every test of torchao's file for ``which``: passed, failed, skipped, error."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        cmd = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
            "-p", "tests.reference.swap", f"--junitxml={report}", "--rootdir", str(cache),
            "-o", "addopts=", "-o", "pythonpath=", *(str(cache / f) for f in FILES[which]),
        ]  # fmt: skip
        if select:
            cmd += ["-k", select]
        env = dict(os.environ, BCFG_SWAP=swap, PYTHONPATH=str(ROOT))
        subprocess.run(cmd, cwd=cache, env=env, check=False)
        out = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = {"failure": "failed"}.get(child.tag, child.tag)
            name = case.get("name", "?")
            if len(FILES[which]) > 1:  # test names repeat across files and classes
                name = f"{case.get('classname', '?').rpartition('.')[2]}::{name}"
            out[name] = outcome
        return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.reference", description=__doc__)
    p.add_argument("which", choices=["x86", "arm", "all", "xnnpack"])
    p.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("BCFG_TORCHAO_TESTS", DEFAULT_CACHE))
    )
    p.add_argument(
        "--from-git", help="a clone of pytorch/ao (its git directory) to read the tests from"
    )
    p.add_argument("--download", action="store_true", help="read the tests from GitHub")
    p.add_argument("--swapped-only", action="store_true", help="skip the run with torchao's class")
    p.add_argument("-k", dest="select", help="pytest -k expression")
    args = p.parse_args(argv)
    fill_cache(args.cache, args.from_git, args.download)
    differ = 0
    for which in ["x86", "arm"] if args.which == "all" else [args.which]:
        original = {} if args.swapped_only else run(args.cache, which, "", args.select)
        swapped = run(args.cache, which, which, args.select)
        same = 0
        for name in sorted(swapped):
            a, b = original.get(name, "-"), swapped[name]
            mark = "same" if a == b or args.swapped_only and b == "passed" else "DIFFERENT"
            same += mark == "same"
            print(f"{which}  {name:60} original {a:8} swapped {b:8} {mark}", flush=True)
        print(
            f"{which}: {same} of {len(swapped)} tests give torchao's result with the generated "
            f"class ({sum(v == 'passed' for v in swapped.values())} passed swapped, "
            f"{sum(v == 'passed' for v in original.values())} passed original)"
        )
        differ += len(swapped) - same
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
