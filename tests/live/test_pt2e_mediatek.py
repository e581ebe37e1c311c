"""generated/neuropilot_quantizer.py's NeuropilotQuantizer (specs/neuropilot.bcfg) annotates as
ExecuTorch's MediaTek quantizer.

ExecuTorch's ``executorch.backends.mediatek`` package imports its partitioner, which needs
the NeuroPilot SDK (``mtk_converter``, ``mtk_neuron``: not on the package index); the
quantizer needs neither, and ``tests/live/vendor_zoo.py``'s ``import_past_init`` imports it
without running the package's ``__init__``. No tests ship with it: a few models of
``tests/live/mediatek_zoo.py`` under two precisions and both export modes here
(``python -m tests.live.vendor_zoo mediatek`` runs the whole zoo). The full tier
(tests/conftest.py's FULL): the PR tier compares the generated class with the recording
of tests/targets.py's ``neuropilot`` row; tests/live/test_vendor_targets.py has the
import check.
"""

from __future__ import annotations

import pytest

pytest.importorskip("executorch.exir", reason="ExecuTorch is not installed")


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .vendor_zoo import clean, compare

    names = ["conv with two users", "rmsnorm pow relu", "embedding linear"]
    result = compare("mediatek", names, ["default", "A16W4"])
    assert len(result) == 3 * 2 * 2
    assert [k for k, v in result.items() if not clean(v)] == []
    # RMSNorm: its inner ops marked, only the result (then its relu) observed.
    assert result["rmsnorm pow relu default strict"]["annotated"] == [5, 5]


def test_the_comparison_sees_a_quantizer_without_the_relu_fusion():
    import torch

    from generated.neuropilot_quantizer import NeuropilotQuantizer

    from .vendor_zoo import compare_one, zoo

    class Unfused(NeuropilotQuantizer):
        rules = tuple(r for r in NeuropilotQuantizer.rules if len(r.chain) == 1)

    name, factory, args = next(z for z in zoo("mediatek").ZOO if z[0] == "linear relu_")
    torch.manual_seed(0)
    gm = torch.export.export(factory().eval(), args).module()
    setup = zoo("mediatek").SETUPS["default"]
    assert compare_one(gm, args, setup, "mediatek")["differ"] == []
    differ = compare_one(gm, args, setup, "mediatek", Unfused)["differ"]
    assert differ and "relu_" in differ[0]
