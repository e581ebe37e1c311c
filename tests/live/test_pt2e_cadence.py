"""The Cadence classes of generated/cadence_quantizer.py (specs/cadence.bcfg's classes:)
annotate as ExecuTorch's own.

ExecuTorch's ``test_quantizer_ops.py`` (its annotation cases: every class
tested, qspecs compared by their observers' identity) imports on the
project's Python; its fusion tests import ``typing.override`` (Python 3.12) and
run with ``python -m tests.live.executorch_suites cadence``, on this Python with
``tests/live/typing_backport.py``. Here: that file with every
Cadence class swapped, and with a do-nothing ``CadenceAtenQuantizer``, and two
models of ``tests/live/cadence_zoo.py`` (``python -m tests.live.cadence_zoo``
runs all of it).
"""

from __future__ import annotations

import pytest

from tests.support import REPO

pytest.importorskip(
    "executorch.backends.cadence.aot.quantizer.quantizer",
    reason="ExecuTorch's Cadence quantizer is not installed",
)


def outcomes(swap: str, out) -> dict[str, str]:
    from .executorch_suites import run, tests_dir

    root = tests_dir(None, "cadence")
    # This checkout's settings and root: its plugin, even if the venv is in another checkout.
    here = ("-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO))
    result = run([str(root / "test_quantizer_ops.py")], swap, out, here, None, "cadence")
    return {k: v["outcome"] for k, v in result.items()}


def test_executorchs_annotation_tests_pass_swapped_and_fail_with_nothing(tmp_path):
    from .executorch_suites import CADENCE_NOTHING, CADENCE_SWAP

    swapped = outcomes(CADENCE_SWAP, tmp_path / "swapped.json")
    assert len(swapped) == 25 and set(swapped.values()) == {"passed"}
    nothing = outcomes(CADENCE_NOTHING, tmp_path / "nothing.json")
    failed = [k for k, v in nothing.items() if v == "failed"]
    assert len(failed) == 19 and all("test_quantizer_annotation_" in k for k in failed)


# ExecuTorch's test_all_quantizers_have_annotation_tests: the CadenceQuantizer subclasses
# it finds in the quantizer module by __module__ (run in a child: the swap is for good).
FOUND = """
import importlib, inspect, sys
from tests.live import executorch_swap as sw
if sys.argv[1:]:
    replacements = sw.load("generated.cadence_quantizer", "cadence")
    sw.swap(replacements, "cadence")
    sw.rename(replacements, "cadence")
t = importlib.import_module("executorch.backends.cadence.aot.tests.test_quantizer_ops")
m = t.quantizer_module
found = [o for _, o in inspect.getmembers(m, inspect.isclass) if issubclass(o, t.CadenceQuantizer)
         and o is not t.CadenceQuantizer and o.__module__ == m.__name__]
print(sorted(f"{c.__name__} {c in t.TESTED_QUANTIZER_CLASSES | t.EXCLUDED_FROM_ANNOTATION_TESTING}"
             for c in found))
"""


def test_the_swapped_classes_are_the_ones_executorchs_completeness_check_finds():
    import subprocess
    import sys

    def found(*swap: str) -> str:
        run = [sys.executable, "-c", FOUND, *swap]
        out = subprocess.run(run, cwd=REPO, capture_output=True, text=True, check=True)
        return out.stdout.strip().splitlines()[-1]

    theirs, ours = found(), found("swap")
    assert ours == theirs and theirs.count("True") == 11, (theirs, ours)


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .cadence_zoo import compare

    result = compare(["conv2d_relu_pool", "linear_add_cat"])
    assert len(result) == 12
    assert {k: (v["differ"], v["outputs_equal"]) for k, v in result.items()} == dict.fromkeys(
        result, ([], True)
    )
    assert result["linear_add_cat WakeWord"]["annotated"] == [3, 3]
