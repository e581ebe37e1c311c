"""generated/vulkan_quantizer.py's VulkanQuantizer (specs/vulkan.bcfg) annotates as ExecuTorch's.

A few models of ``tests/live/vulkan_zoo.py`` under every setup and both export modes
(``python -m tests.live.vendor_zoo vulkan`` runs the whole zoo), and WebGPU's test of
the 4-bit linear the class makes, with the class swapped and with a do-nothing one
(``python -m tests.live.executorch_suites vulkan``).

The full tier (tests/conftest.py's FULL): the PR tier compares the generated class with
the recording of tests/targets.py's ``vulkan`` row (tests/test_conformance.py).
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "executorch.backends.vulkan.quantizer.vulkan_quantizer",
    reason="ExecuTorch's Vulkan quantizer is not installed",
)


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .vendor_zoo import clean, compare

    result = compare("vulkan", ["linear relu linear", "scalars add mul", "attention"])
    assert len(result) == 3 * 7 * 2
    assert [k for k, v in result.items() if not clean(v)] == []
    # The propagation acts: relu shares linear's output spec when the config gives one.
    assert result["linear relu linear static output strict"]["annotated"] == [7, 7]
    assert result["linear relu linear w4 strict"]["annotated"] == [6, 6]


def test_the_comparison_sees_a_quantizer_without_the_propagation():
    import torch

    from generated.vulkan_quantizer import VulkanQuantizer

    from .vendor_zoo import compare_one, zoo

    class Unpropagated(VulkanQuantizer):
        rules = tuple(r for r in VulkanQuantizer.rules if r.kind != "propagate")

    name, factory, args = next(z for z in zoo("vulkan").ZOO if z[0] == "linear relu linear")
    torch.manual_seed(0)
    gm = torch.export.export(factory().eval(), args).module()
    setup = zoo("vulkan").SETUPS["static output"]
    assert compare_one(gm, args, setup, "vulkan")["differ"] == []
    differ = compare_one(gm, args, setup, "vulkan", Unpropagated)["differ"]
    assert differ and "relu" in differ[0]


def test_webgpus_linear_test_passes_swapped_and_fails_with_nothing(tmp_path):
    from tests.support import REPO

    from .executorch_suites import NOTHING, VULKAN_SWAP, paths, run

    here = ("-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO))
    files = paths("vulkan")

    def outcomes(swap: str, name: str) -> list[str]:
        result = run(files, swap, tmp_path / name, here, None, "vulkan")
        return [v["outcome"] for v in result.values()]

    assert outcomes(VULKAN_SWAP, "swapped.json") == ["passed"]
    assert outcomes(NOTHING, "nothing.json") == ["failed"]
