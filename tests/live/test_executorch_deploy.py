"""The generated XNNPACK quantizer deploys on ExecuTorch as ExecuTorch's own XNNPACKQuantizer does.

Each case quantizes one zoo model (tests/live/executorch_support.py) with
ExecuTorch's XNNPACKQuantizer and with the generated class, each configured by
ExecuTorch's ``get_symmetric_quantization_config``, lowers both with
``to_edge_transform_and_lower(..., partitioner=[XnnpackPartitioner()])``,
writes the .pte and runs it in ``executorch.runtime``, and asserts the same
program on the device: bit-identical runtime outputs, the same delegated
XNNPACK calls and ATen ops inside them, the same ops left outside, the same
quantize/dequantize nodes. The full tier runs the cases below (about a minute);
``python -m tests.live.executorch_matrix`` runs every zoo model with every
config form in both export modes. And each recorded program of the target
(``tests/recordings/xnnpack_executorch/``), deployed with the generated class,
gives the reference's recorded deployment: the .pte's bytes, delegation and
runtime outputs.
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "executorch", reason="deployment tests need ExecuTorch (pip install '.[executorch]')"
)

from .executorch_support import (
    CANDIDATE,
    compare_deploy,
    deploy_zoo,
    et_quantizer,
    spec_size,
)  # noqa: E402

# (model, config form, strict export): the default set, one of each kind of gap.
CASES = [
    ("conv_bn_relu", "per_channel", True),
    ("transposed_conv", "per_channel", True),
    ("padding_same", "per_tensor", False),
    ("residual", "dynamic", True),
    ("attention", "per_channel", False),
    ("cat_mean_pool", "per_tensor", False),
    ("class_token", "per_channel", True),
    ("conv1d", "per_tensor", True),
    ("reused_linear", "per_channel", False),
    ("reused_conv", "per_tensor", True),
]


@pytest.mark.parametrize(("model", "config", "strict"), CASES)
def test_deploys_as_executorch(model, config, strict):
    assert compare_deploy(model, config, CANDIDATE, strict) == []


def test_the_comparison_notices_a_wrong_quantizer():
    """A quantizer that annotates nothing deploys a float program: delegation and outputs must differ."""

    def nothing():
        q = et_quantizer()
        q.annotate = lambda model: model
        return q

    problems = compare_deploy("mlp", "per_tensor", nothing)
    assert "runtime outputs differ" in problems
    assert any(p.startswith("q/dq nodes") for p in problems)


def test_deployment_is_deterministic():
    a = deploy_zoo("mlp", "per_channel", CANDIDATE)
    b = deploy_zoo("mlp", "per_channel", CANDIDATE)
    assert not a.failed and a.delegates == 1
    assert a.outputs is not None and b.outputs is not None
    assert all(x.equal(y) for x, y in zip(a.outputs, b.outputs))


def test_the_spec_is_within_15_percent_of_executorchs_code_lines():
    ours, ref = spec_size()
    print(
        f"specs/xnnpack_executorch.bcfg: {ours} code lines, {ours / ref:.0%} of ExecuTorch's {ref}"
    )
    assert ref > 1000 and 0 < ours <= 0.15 * ref


def _recorded() -> list[str]:
    from tests.record import load
    from tests.targets import BY_NAME

    return sorted(load(BY_NAME["xnnpack_executorch"])["models"])


@pytest.mark.parametrize("model", _recorded())
def test_the_generated_class_deploys_as_recorded(model):
    """Each recorded program (tests/recordings/xnnpack_executorch/) through the deploy flow
    with the generated class, lowered and run: the .pte's bytes, the delegation and the
    runtime's outputs are the reference's recorded ones (the PR tier compares up to
    convert_pt2e: tests/test_conformance.py)."""
    from tests.record import compare_deployment
    from tests.targets import BY_NAME

    assert compare_deployment(BY_NAME["xnnpack_executorch"], model, lower=True) == []
