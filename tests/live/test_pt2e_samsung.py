"""generated/enn_quantizer.py's EnnQuantizer (specs/enn.bcfg) annotates as ExecuTorch's Samsung
quantizer.

ExecuTorch's Samsung tests need the ENN SDK's Python wrapper
(``executorch.backends.samsung.python``, not in the wheel), so none run here: the proof
is the zoo, ``tests/live/samsung_zoo.py`` (``python -m tests.live.vendor_zoo samsung``
runs all of it); here a few of its models under two setups and both export modes.

The full tier (tests/conftest.py's FULL): the PR tier compares the generated class with
the recording of tests/targets.py's ``enn`` row (tests/test_conformance.py).
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "executorch.backends.samsung.quantizer.quantizer",
    reason="ExecuTorch's Samsung quantizer is not installed",
)


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .vendor_zoo import clean, compare

    names = ["add softmax", "shared chain", "unbind", "sigmoid"]
    result = compare("samsung", names, ["default", "custom"])
    assert len(result) == 4 * 2 * 2
    assert [k for k, v in result.items() if not clean(v)] == []
    # softmax drops the annotation of the add before it: only the tanh, softmax, inputs.
    assert result["add softmax default strict"]["annotated"] == [4, 4]


def test_the_comparison_sees_a_quantizer_without_the_spec_of_the_op_above():
    import torch

    import specs.hooks.samsung as hooks
    from generated.enn_quantizer import EnnQuantizer

    from .vendor_zoo import compare_one, zoo

    class Unshared(EnnQuantizer):  # view and the like: always the input spec
        rules = tuple(
            r for r in EnnQuantizer.rules if not r.when or r.when[0] is not hooks.one_in_shared
        )

    name, factory, args = next(z for z in zoo("samsung").ZOO if z[0] == "shared chain")
    torch.manual_seed(0)
    gm = torch.export.export(factory().eval(), args).module()
    setup = zoo("samsung").SETUPS["default"]
    assert compare_one(gm, args, setup, "samsung")["differ"] == []
    assert compare_one(gm, args, setup, "samsung", Unshared)["differ"]
