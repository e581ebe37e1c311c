"""generated/coreml_quantizer.py's CoreMLQuantizer (specs/coreml.bcfg) annotates as ExecuTorch's
Core ML quantizer.

ExecuTorch's ``CoreMLQuantizer(config)`` takes coremltools' ``LinearQuantizerConfig`` and
traces each of its registry's pattern graphs at every ``annotate`` (about a minute here); the
comparison traces them once per process (``tests/live/coreml_zoo.py``'s ``prepare``: the
same graphs, handed out as copies). A few models of the zoo under two of its configs and
both export modes here (``python -m tests.live.vendor_zoo coreml`` runs the whole zoo);
ExecuTorch's own 6 tests, original against swapped, are ``python -m
tests.live.executorch_suites coreml``. The full tier (tests/conftest.py's FULL): the PR
tier compares the generated class with the recording of tests/targets.py's ``coreml`` row.
"""

from __future__ import annotations

import pytest

pytest.importorskip("executorch.exir", reason="ExecuTorch is not installed")
pytest.importorskip("coremltools", reason="coremltools is not installed")


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .vendor_zoo import clean, compare

    names = ["conv bn hardswish", "linear sigmoid conv1d", "x + x", "pools flatten"]
    result = compare("coreml", names, ["test config", "name and type"])
    assert len(result) == 4 * 2 * 2
    assert [k for k, v in result.items() if not clean(v)] == []
    # x + x is no match of add's pattern (one node cannot be both of its inputs): silu alone.
    assert result["x + x test config strict"]["annotated"] == [3, 3]


def test_the_comparison_sees_a_quantizer_in_bcfgs_order(monkeypatch):
    """bcfg tries the longest chain first; ExecuTorch's registry tries conv alone before linear
    + sigmoid, so the conv's input is not annotated yet and gets the input spec, not sigmoid's (affine).
    """
    import torch

    import specs.hooks.coreml

    from .vendor_zoo import compare_one, zoo

    z = zoo("coreml")
    z.prepare()
    name, factory, args = next(m for m in z.ZOO if m[0] == "linear sigmoid conv1d")
    torch.manual_seed(0)
    gm = torch.export.export(factory().eval(), args).module()
    setup = z.SETUPS["test config"]
    assert compare_one(gm, args, setup, "coreml")["differ"] == []
    monkeypatch.setattr(specs.hooks.coreml, "_registry", lambda rule: 0)
    differ = compare_one(gm, args, setup, "coreml")["differ"]
    assert differ and "conv1d" in str(differ)
