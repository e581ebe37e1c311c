"""The NeutronQuantizer of generated/nxp_quantizer.py (specs/nxp.bcfg's classes:) annotates
as ExecuTorch's own, NXP's eIQ Neutron SDK replaced by tests/live/nxp_sdk.py's stand-in.

Here: five models of tests/live/nxp_zoo.py (``python -m tests.live.nxp_zoo``
runs all of them), and three of ExecuTorch's shipped NXP quantizer tests with
its class swapped for the generated one and for one that annotates nothing
(``python -m tests.live.executorch_suites nxp`` runs the whole file, original
against swapped, test by test).
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


def test_the_stand_in_refuses_what_it_cannot_do():
    """The SDK stand-in builds ExecuTorch's target spec for a Neutron-C target and refuses
    another target and a conversion to Neutron microcode."""
    from .nxp_sdk import target_spec

    spec = target_spec("imxrt700")
    assert type(spec.neutron_target_info).__name__ == "NeutronTargetNeutronC"
    with pytest.raises(ValueError, match="is not a valid target"):  # ExecuTorch's check
        target_spec("imx95")
    import eiq_neutron_sdk  # type: ignore[import-not-found]

    with pytest.raises(NotImplementedError, match="cannot convert"):
        eiq_neutron_sdk.neutron_converter.convertModel([], None)


def test_spec_and_hooks_are_within_a_quarter_of_executorchs_code():
    from tests.reference.size import BUDGET, vendor_figures

    figures = vendor_figures("NXP")
    assert figures is not None
    ours, theirs = figures
    assert theirs == 1428 and ours <= theirs * BUDGET, figures


def test_a_pair_of_executorchs_pattern_object_annotates_as_the_spec_says():
    """NeutronAtenQuantizer(pattern, config) takes ExecuTorch's pattern objects: its conv gets
    ExecuTorch's input, weight and bias specs (without an owner quantizer's pairs, no fusion:
    the conv keeps its output spec)."""
    import torch

    from generated.nxp_quantizer import NeutronAtenQuantizer

    from .cadence_zoo import canon
    from .nxp_sdk import target_spec
    from .pt2e_support import dump

    spec = target_spec()  # ExecuTorch's NXP modules import after the stand-in's install
    from executorch.backends.nxp.quantizer import neutron_quantizer as theirs
    from executorch.backends.nxp.quantizer import patterns

    owner = theirs.NeutronQuantizer(spec)
    act, weight = theirs.act_qspec(False), theirs.wgt_qspec(False)
    config = theirs.QuantizationConfig(act, act, weight, None)
    dumps = []
    for cls in (theirs.NeutronAtenQuantizer, NeutronAtenQuantizer):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
        gm = torch.export.export(model, (torch.randn(1, 3, 8, 8),), strict=True).module()
        cls(patterns.Conv2dPattern(owner), config).annotate(gm)
        dumps.append(dict(canon(dump(gm))))  # the bias's derive function by role
    assert dumps[1]["conv2d"]["inputs"] == dumps[0]["conv2d"]["inputs"]
    assert len(dumps[1]["conv2d"]["inputs"]) == 3 and dumps[1]["conv2d"]["output"] is not None
