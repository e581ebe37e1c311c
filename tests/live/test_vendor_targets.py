"""The vendor targets' quick checks, in the PR tier: what needs no reference comparison.

ExecuTorch's Vulkan, MediaTek, Samsung and NXP quantizers are compared with the generated
classes on recordings in every run (``tests/test_conformance.py``: the registry rows
``vulkan``, ``neuropilot``, ``enn``, ``nxp``); the reference runs themselves (each zoo
under every setup and both export modes, ExecuTorch's own tests swapped) are the full
tier's ``tests/live/test_pt2e_{vulkan,mediatek,samsung,nxp}.py``. Here: how the
references import (NXP's SDK stand-in, MediaTek's package past its ``__init__``), one
spec object of NXP's, and each spec's size against ExecuTorch's code.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.reference.size import VENDORS

pytest.importorskip("executorch.exir", reason="ExecuTorch is not installed")


def test_mediateks_package_needs_the_sdk_and_its_quantizer_does_not():
    """ExecuTorch's ``executorch.backends.mediatek`` imports its partitioner, which needs the
    NeuroPilot SDK (``mtk_converter``, ``mtk_neuron``: not on the package index); the quantizer
    needs neither: ``tests/live/vendor_zoo.py``'s ``import_past_init`` (the registry row's
    ``before``) imports it without running the package's ``__init__``."""
    code = "import executorch.backends.mediatek"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode != 0 and "mtk_" in run.stderr, run.stderr[-500:]
    code = (
        "from tests.targets import BY_NAME; t = BY_NAME['neuropilot']; "
        "print(t.reference_class().__module__, t.generated_class().__name__)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.split() == [
        "executorch.backends.mediatek.quantizer.quantizer",
        "NeuropilotQuantizer",
    ], run.stderr[-500:]


def test_the_nxp_stand_in_refuses_what_it_cannot_do():
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


@pytest.mark.parametrize("target", sorted(VENDORS))
def test_spec_and_hooks_are_within_a_quarter_of_executorchs_code(target):
    """Each registry row with ``counted`` files: ExecuTorch's code lines there are the
    compass's figure (tests/reference/sizes.json), and the spec and hooks within the budget."""
    import json

    from tests.reference.size import BUDGET, SIZES, vendor_figures

    figures = vendor_figures(target)
    assert figures is not None
    ours, theirs = figures
    assert theirs == json.loads(SIZES.read_text())[target] and ours <= theirs * BUDGET, figures


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


def test_the_compass_reference_sizes_are_counted_from_the_installed_code():
    """tests/reference/sizes.json (the docs home page's compass: each target's reference in
    code lines) is what tests/reference/size.py counts in the installed torchao and
    ExecuTorch: ``python -m tests.reference.size --write`` after an upgrade."""
    import json

    from tests.reference.size import SIZES, reference_lines
    from tests.targets import BY_NAME

    recorded = json.loads(SIZES.read_text())
    counted = reference_lines()
    assert set(recorded) <= set(BY_NAME)
    assert {k: v for k, v in counted.items() if k in recorded} == recorded
