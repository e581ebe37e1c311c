"""``bcfg compare`` of ExecuTorch's vendor quantizers against the generated classes on the probe
zoo (tests/live/vendor_compare.py): every graph the same, as each target's docs page says.

The full tier (tests/conftest.py's FULL): each comparison exports the zoo's 195 probes
both ways and runs both classes twice on each, minutes a target.
"""

from __future__ import annotations

import pytest

pytest.importorskip("executorch.exir", reason="ExecuTorch is not installed")

from .vendor_compare import NAMES, compare, summary  # noqa: E402


@pytest.mark.parametrize("name", NAMES)
def test_the_generated_class_annotates_every_probe_as_executorchs(name):
    """Every graph the same (a derived bias compares by what its function computes: NXP's
    hooks' own ``bias_qparams`` computes what ExecuTorch's ``get_bias_qparams`` does, which
    lives in a module that imports NXP's SDK)."""
    result = summary(compare(name))
    assert result["differing"] == [] and result["graphs"] >= 390, result
    assert result["graphs"] == result.get("same", 0) and result["nodes"] > 0, result


def test_the_comparison_sees_a_class_without_the_propagation():
    """The generated Vulkan class without its propagation through shared ops: the probe where
    linear's output spec reaches a relu differs (compared in process, one probe)."""
    from generator.tools.compare.engine import compare as run
    from generator.tools.compare.engine import probe_graphs

    from . import vendor_compare

    reference, generated = vendor_compare.vulkan_reference(), vendor_compare.vulkan_generated()
    graphs = probe_graphs(["linear->relu"])
    same = run(reference, generated, graphs, (False,), 60, ("A", "B"))
    assert same.differing == [] and same.ops(), same
    cls = type(generated)
    rules = tuple(r for r in cls.rules if r.kind != "propagate")
    unpropagated = type("Unpropagated", (cls,), {"rules": rules})
    generated.__class__ = unpropagated
    differ = run(reference, generated, graphs, (False,), 60, ("A", "B"))
    assert [g.name for g in differ.differing] == ["linear->relu"], differ
