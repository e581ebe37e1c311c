"""The generated Cortex-M quantizer annotates as ExecuTorch's CortexMQuantizer, node by node.

ExecuTorch's Cortex-M quantizer imports only in the environment of
``tests/live/envs.py``'s ``ARM`` (``executorch[ethos-u]``, whose tosa-tools pins numpy
below 2.2), so these tests run its zoo (``tests/live/cortex_m_zoo.py``) there
in a child process, and skip where that environment has not been made
(``python -m tests.live.envs arm --create``, about 4 minutes; .ci/full makes it). They run a
subset of the zoo, one model per kind of rule (about 40 seconds);
``python -m tests.live.cortex_m_zoo`` runs all of it, and
``python -m tests.live.executorch_suites cortex_m`` ExecuTorch's own tests.
"""

from __future__ import annotations

import json

import pytest

from . import config_errors
from .envs import ARM

pytestmark = ARM.needed("ExecuTorch's Cortex-M quantizer")

# One model per kind of rule: a conv chain by the per-channel config, a contiguous
# conv of the same shapes after it (the layout check remembers its answer per shape and
# strides, specs/hooks/cortex_m.py: a key without strides would annotate it), a linear
# reused, a binary op with an activation, a broadcast the check refuses, int16
# div, fixed-qparams softmax, a pool chain with its tag, and shared clusters.
SUBSET = [
    "conv_relu_channels_last",
    "conv_contiguous",
    "linear_twice",
    "add_relu_sub",
    "add_broadcast",
    "div_int16",
    "softmax_last",
    "max_pool_dilated_relu",
    "clusters",
    "split",
]


def zoo(names: list[str]) -> dict:
    run = ARM.run_module("tests.live.cortex_m_zoo", *names)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


# Deployed through ExecuTorch's Cortex-M flow: a conv chain and a binary op with an activation.
DEPLOYED = ["conv_relu_channels_last", "add_relu_sub"]


@pytest.fixture(scope="module")
def ran() -> dict:
    """SUBSET and EXPLICIT compared and DEPLOYED deployed in one child process (each one
    imports torch and ExecuTorch)."""
    return zoo(["--deploy-also", ",".join(DEPLOYED), *SUBSET, *EXPLICIT])


@pytest.fixture(scope="module")
def compared(ran) -> dict:
    return ran["compare"]


def test_the_subset_is_annotated_as_executorch_does(compared):
    result = {name: compared[name] for name in SUBSET}
    differ = {name: r["differ"] for name, r in result.items() if r["differ"]}
    assert not differ, json.dumps(differ, indent=1)
    # Every model has an op annotated, not only its input and output; but the contiguous
    # conv, which the legacy table leaves float.
    counts = {name: r["annotated"] for name, r in result.items()}
    assert counts.pop("conv_contiguous") == [2, 2], counts
    assert all(theirs == ours and ours >= 3 for theirs, ours in counts.values()), counts


# use_explicit_layout=True (the patterns given: {use_explicit_layout: true}): a contiguous
# conv, conv1d, a contiguous transposed conv; and conv1d, which the legacy table leaves.
EXPLICIT = [
    "explicit_conv_contiguous_relu",
    "explicit_conv1d_hardtanh",
    "explicit_transposed_conv_contiguous",
    "legacy_conv1d",
]


def test_explicit_layout_is_annotated_and_converted_as_executorch_does(compared):
    assert sorted(compared) == sorted(SUBSET + EXPLICIT)
    result = {name: compared[name] for name in EXPLICIT}
    assert not any(r["differ"] for r in result.values()), json.dumps(result, indent=1)
    explicit = {name: r for name, r in result.items() if name.startswith("explicit")}
    assert all(r["annotated"] == [r["annotated"][0]] * 2 for r in result.values()), result
    # The explicit table quantizes the convs (input, conv, activation, output at least);
    # the legacy one leaves conv1d float (fewer nodes annotated).
    assert all(r["annotated"][1] >= 4 for r in explicit.values()), result
    assert (
        result["legacy_conv1d"]["annotated"][1]
        < explicit["explicit_conv1d_hardtanh"]["annotated"][1]
    )
    converted = [r["converted"] for r in explicit.values()]
    assert converted == [{"same_graph": True, "same_output": True}] * 3, converted


def test_a_config_executorchs_accessors_refuse_raises_its_error_in_both_classes():
    """configs: validated: a per-channel activation raises ExecuTorch's ValueError, the same
    message at the same config and model (``tests/live/config_errors.py``)."""
    config_errors.check(config_errors.run("cortex_m"))


def test_the_deployed_programs_are_executorchs_byte_for_byte(ran):
    """ExecuTorch's Cortex-M flow (the Cortex-M passes, to_executorch) gives the same .pte."""
    result = ran["deploy"]
    assert sorted(result) == sorted(DEPLOYED), result
    assert all(r["same"] and r["bytes"] > 0 for r in result.values()), result


# ExecuTorch's own tests the class swapped in must pass and a do-nothing class fails:
# shared clusters, an int8 linear, a fixed-qparams softmax.
CASES = [
    "misc/test_quantization.py::test_shared_qspec_quantizer[many_forks]",
    "ops/test_linear.py::test_dialect_linear[cortex-m55-linear_bias]",
    "ops/test_softmax.py::test_dialect_softmax[cortex-m55-rank2]",
]


def swapped_run(cls: str, out) -> dict[str, str]:
    from .executorch_suites import run, tests_dir

    root = tests_dir(ARM.python(), "cortex_m")
    targets = [str(root / case) for case in CASES]
    result = run(targets, cls, out, (), ARM.python(), "cortex_m")
    # Node ids are relative to pytest's rootdir, which depends on where the environment is.
    return {k.split("/cortex_m/test/", 1)[-1]: v["outcome"] for k, v in result.items()}


def test_executorchs_tests_pass_with_the_generated_class_and_fail_with_nothing(tmp_path):
    from .executorch_suites import CORTEX_M_SWAP, NOTHING

    assert swapped_run(CORTEX_M_SWAP, tmp_path / "swapped.json") == dict.fromkeys(CASES, "passed")
    assert swapped_run(NOTHING, tmp_path / "nothing.json") == dict.fromkeys(CASES, "failed")
