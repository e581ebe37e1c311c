"""ExecuTorch's own XNNPACK tests, original against swapped, test by test.

    python -m tests.live.executorch_suites [quantizer|ops|all] [--swap module:Class]

runs ExecuTorch's XNNPACK quantizer tests (``backends/xnnpack/test/quantizer``,
57 tests) and the op tests that may quantize through the ``Tester``
(``backends/xnnpack/test/ops``, the 17 files below), where pip installed them,
twice: with ExecuTorch's XNNPACKQuantizer, and with it swapped for the generated
class (tests/live/executorch_swap.py). It prints the figures (passed of each
run; for the op tests, only those that ran the Tester's Quantize stage) and
every test whose outcome differs; the exit status is 1 if one does. The
quantizer tests take about 5 minutes a run on 2 free cores, the op files about
25: this is run before resolving, not in CI (tests/live/test_executorch_swap.py
runs a few of them there).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SWAP = "generated.xnnpack_executorch_quantizer:XnnpackExecutorchQuantizer"
OP_FILES = (
    "add cat clamp conv1d conv2d elu hardtanh leaky_relu linear maxpool2d mean_dim "
    "multiply permute slice_copy static_constant_pad sub to_copy"
).split()


def suite_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("executorch")  # a namespace package: no __file__
    assert spec is not None and spec.submodule_search_locations
    return Path(list(spec.submodule_search_locations)[0]) / "backends" / "xnnpack" / "test"


def paths(suite: str) -> list[str]:
    root = suite_dir()
    if suite == "quantizer":
        return [str(root / "quantizer")]
    return [str(root / "ops" / f"test_{name}.py") for name in OP_FILES]


def run(targets: list[str], swap: str, out: Path, extra: tuple[str, ...] = ()) -> dict[str, dict]:
    """One pytest run of ``targets`` (swapped for ``swap`` unless empty): each test's outcome."""
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "tests.live.executorch_swap",
    ]
    cmd += ["--bcfg-outcomes", str(out), *(["--bcfg-swap", swap] if swap else []), *extra, *targets]
    subprocess.run(
        cmd, cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL, check=False
    )
    return json.loads(out.read_text())


def compare(
    original: dict[str, dict], swapped: dict[str, dict], ops: bool
) -> tuple[list[str], list[str]]:
    """(the tests counted, those whose outcome differs) - for op tests, those that quantize."""
    counted = [k for k, v in original.items() if not ops or v.get("quantizes")]
    differ = [k for k in counted if swapped.get(k, {}).get("outcome") != original[k]["outcome"]]
    return counted, differ


def figures(name: str, original: dict, swapped: dict, ops: bool) -> list[str]:
    counted, differ = compare(original, swapped, ops)

    def passed(d: dict) -> int:
        return sum(d.get(k, {}).get("outcome") == "passed" for k in counted)

    print(
        f"{name}: {len(counted)} tests{' that quantize' if ops else ''}; passed: "
        f"original {passed(original)}, swapped {passed(swapped)}; outcomes differ: {len(differ)}"
    )
    for k in differ:
        print(
            f"  {k}: {original[k]['outcome']} -> {swapped.get(k, {}).get('outcome')} {swapped.get(k, {}).get('message', '')}"
        )
    return differ


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.live.executorch_suites")
    parser.add_argument("suite", nargs="?", default="all", choices=["quantizer", "ops", "all"])
    parser.add_argument("--swap", default=SWAP)
    args = parser.parse_args(argv)
    differ: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for suite in ("quantizer", "ops") if args.suite == "all" else (args.suite,):
            original = run(paths(suite), "", Path(tmp) / f"{suite}-original.json")
            swapped = run(paths(suite), args.swap, Path(tmp) / f"{suite}-swapped.json")
            differ += figures(suite, original, swapped, suite == "ops")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
