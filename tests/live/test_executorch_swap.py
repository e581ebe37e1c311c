"""ExecuTorch's own XNNPACK quantizer tests, run from its wheel with its class swapped (a few in CI).

``python -m tests.live.executorch_suites`` runs all of them, and the op tests that
quantize, original against swapped; these cases show the plugin works: the
generated class passes ExecuTorch's tests for what ExecuTorch's quantizer gained
over torchao's copy (transposed convs, observer sharing, set_filter_function,
cat), and a class that annotates nothing fails them.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip(
    "executorch", reason="ExecuTorch's tests need ExecuTorch (pip install '.[executorch]')"
)

from . import executorch_suites  # noqa: E402
from .executorch_suites import SWAP, run  # noqa: E402

CASES = [
    "test_q_tconv_and_conv2d",
    "test_obs_sharing_ops",
    "test_set_filter_fn",
    "test_cat_same_node",
]


def targets() -> list[str]:
    # (imported by name, tests_dir would be collected as a test)
    path = executorch_suites.tests_dir(None, "xnnpack") / "quantizer" / "test_xnnpack_quantizer.py"
    return [f"{path}::TestXNNPACKQuantizer::{case}" for case in CASES]


def outcomes(result: dict) -> dict[str, str]:
    return {k.rpartition("::")[2]: v["outcome"] for k, v in result.items()}


def test_the_generated_class_passes_executorchs_tests(tmp_path):
    assert outcomes(run(targets(), SWAP, tmp_path / "swapped.json")) == dict.fromkeys(
        CASES, "passed"
    )


def test_a_class_that_annotates_nothing_fails_them(tmp_path):
    result = outcomes(
        run(targets(), "tests.live.executorch_swap:AnnotatesNothing", tmp_path / "nothing.json")
    )
    assert set(result) == set(CASES) and all(o == "failed" for o in result.values()), json.dumps(
        result
    )
