"""``bcfg compat``'s report on the Cortex-M and Arm TOSA targets (``scopes: composable``).

Their hooks import ExecuTorch's Arm stack, which imports only in the environment
of ``tests/live/envs.py``'s ``ARM``: ``tests/live/composable_compat.py`` runs compat's
analysis there (the report, checked against a plain prepare of the same
quantizer) and these tests check each op's verdict. They skip where that
environment has not been made (``python -m tests.live.envs arm --create``). The full
tier's (tests/conftest.py's ``FULL``): the PR tier makes no Arm environment.
"""

from __future__ import annotations

import json

import pytest

from .envs import ARM

pytestmark = ARM.needed("ExecuTorch's Arm stack")


@pytest.fixture(scope="module")
def reports() -> dict:
    run = ARM.run_module("tests.live.composable_compat")
    assert run.returncode == 0, run.stderr[-3000:]  # a Disagreement fails the run
    return json.loads(run.stdout)


@pytest.mark.parametrize("target", ["cortex_m", "arm_tosa"])
def test_what_compat_says_is_quantized_is_what_a_prepare_annotates(reports, target):
    entries = reports[target]["entries"]
    quantized = sorted(n for n, e in entries.items() if e[3] or e[0] == "no_config")
    assert quantized == reports[target]["annotated"]


def test_cortex_m_says_which_check_left_the_conv_float(reports):
    got = {n: e[:4] for n, e in reports["cortex_m"]["entries"].items()}
    assert got == {
        "conv2d": ["skip", "aten.conv2d.default", "stage 2", False],
        "relu": ["annotated", "aten.relu.default", "shared ops", True],
        "avg_pool2d": ["annotated", "aten.avg_pool2d.default", "stage 2", True],
        "view": ["annotated", "aten.view.default", "shared ops", True],
        "linear": ["annotated", "aten.linear.default", "stage 2", True],
        "sigmoid": ["annotated", "aten.sigmoid.default", "stage 2", True],
        "add": ["annotated", "aten.add.Tensor", "stage 2", True],
    }
    # The per-channel stage sees the conv first and rejects it too; the last word is stage 2's.
    assert (
        "a when: condition (channels_last) rules the match out"
        in reports["cortex_m"]["entries"]["conv2d"][4]
    )


def test_arm_tosa_quantizes_the_conv_relu_chain_by_the_global_config(reports):
    got = {n: e[:4] for n, e in reports["arm_tosa"]["entries"].items()}
    chain = "(aten.conv2d.default, aten.relu.default)"
    assert got["conv2d"] == got["relu"] == ["annotated", chain, "global", True]
    assert got["reshape"] == ["annotated", "aten.reshape.default", "shared ops", True]
    assert all(e[3] for e in got.values()), got
