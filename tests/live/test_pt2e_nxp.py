"""The NeutronQuantizer of generated/nxp_quantizer.py (specs/nxp.bcfg's classes:) annotates
as ExecuTorch's own, NXP's eIQ Neutron SDK replaced by tests/live/nxp_sdk.py's stand-in.

The full tier (tests/conftest.py's FULL; the PR tier compares the generated class with
the recording of tests/targets.py's ``nxp`` row, and tests/live/test_vendor_targets.py
has NXP's quick checks). Here: five models of tests/live/nxp_zoo.py against ExecuTorch's
class (``python -m tests.live.nxp_zoo`` runs all of them), and three of ExecuTorch's
shipped NXP quantizer tests with its class swapped for the generated one and for one
that annotates nothing (``python -m tests.live.executorch_suites nxp`` runs the whole
file, original against swapped, test by test).
"""

from __future__ import annotations

import pytest

pytest.importorskip("executorch.backends.nxp", reason="ExecuTorch's NXP backend is not installed")


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .nxp_zoo import compare

    names = ["conv_relu", "cat_cluster", "mixed", "shared_waits", "conv_bn_relu_qat"]
    result = compare(names)
    assert sorted(result) == sorted(names)
    assert {k: (v["differ"], v["outputs_equal"]) for k, v in result.items()} == dict.fromkeys(
        names, ([], True)
    )
    # The cluster: both convs, both relus, cat and the input; the QAT chain through batch norm;
    # of the two reshapes, the one after the float sin not (it waits, and waits in vain).
    assert result["cat_cluster"]["annotated"] == [6, 6]
    assert result["shared_waits"]["annotated"] == [3, 3]
    assert result["conv_bn_relu_qat"]["annotated"] == [4, 4]


# ExecuTorch's tests that tell a quantizer that annotates from one that does not, quickly.
SHIPPED = "test_quantizer_conv2d_relu or test_quantizer_softmax or test_multiple_shared"


def outcomes(swap: str, out) -> dict[str, str]:
    from .executorch_suites import run, tests_dir

    path = tests_dir(None, "nxp") / "generic_tests" / "test_quantizer.py"
    result = run([str(path)], swap, out, ("-k", SHIPPED), None, "nxp")
    return {k.split("::")[-1]: v["outcome"] for k, v in result.items()}


def test_executorchs_quantizer_tests_pass_swapped_and_fail_with_nothing(tmp_path):
    from .executorch_suites import NXP_NOTHING, NXP_SWAP

    swapped = outcomes(NXP_SWAP, tmp_path / "swapped.json")
    assert len(swapped) == 3 and set(swapped.values()) == {"passed"}, swapped
    nothing = outcomes(NXP_NOTHING, tmp_path / "nothing.json")
    assert set(nothing.values()) == {"failed"}, nothing
