"""The proof: generated/xnnpack_quantizer.py quantizes as torchao's XNNPACKQuantizer does.

Each case exports a model (the export mode pinned: strict and non-strict
graphs differ, and so does XNNPACK's result on them), quantizes it with
torchao's quantizer and with the generated one through the real
prepare_pt2e / prepare_qat_pt2e and convert_pt2e, and compares annotation by
annotation (every annotated node, every input spec in order, every output
spec: dtype, range, qscheme, channel axis, observer or fake-quant
constructor, shared specs), the converted outputs (torch.equal) and the
converted graphs. CI runs the matrix below (about a minute with the other PT2E tests);
``python -m tests.live.pt2e_matrix`` runs every zoo model with every
config form, every edge case and both export modes.
"""

from __future__ import annotations

import pytest

from .pt2e_support import (
    EDGES,
    QAT_EDGES,
    compare,
    compare_zoo,
    export_edge,
    symmetric_config,
)

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")


def xnnpack():
    from generated.xnnpack_quantizer import get_xnnpack_quantizer

    return get_xnnpack_quantizer()


# The zoo with the forms of get_symmetric_quantization_config, strict export.
STRICT = [
    ("conv_bn_relu", "per_channel"),
    ("conv_bn_relu", "per_tensor"),
    ("residual_add_relu", "per_channel"),
    ("linear_stack", "per_tensor"),
    ("cat_pool", "per_channel"),
    ("mul", "per_tensor"),
    ("hardtanh_relu6", "per_channel"),
    ("depthwise", "per_channel"),
    ("view_chain", "per_channel"),
    ("view_first", "per_tensor"),
    ("dyn_linear", "dynamic"),
    ("qat_conv_bn_relu", "qat"),
    ("qat_conv_bn", "qat_per_tensor"),
]
# Non-strict export: the graphs carry no source_fn_stack, which changes what
# XNNPACK's source-partition matching finds (cat_pool) and what it does not.
NON_STRICT = [
    ("cat_pool", "per_tensor"),
    ("residual_add_relu", "per_tensor"),
    ("linear_stack", "per_channel"),
    ("dyn_linear", "dynamic"),
    ("qat_conv_bn_relu", "qat_per_tensor"),
]


@pytest.mark.parametrize(("model", "config"), STRICT)
def test_zoo_strict(model, config):
    assert compare_zoo(model, config, True, xnnpack) == []


@pytest.mark.parametrize(("model", "config"), NON_STRICT)
def test_zoo_non_strict(model, config):
    assert compare_zoo(model, config, False, xnnpack) == []


EDGE_CASES = [
    ("conv2d.padding alone", True),
    ("conv3d + relu", True),
    ("relu_ after maxpool", False),
    ("cat([a, a, b])", True),
    ("add of a large scalar", False),
    ("add of int tensors", False),
    ("conv -> adaptive_avg_pool2d", True),
    ("conv_transpose2d + bn", False),
    ("same Linear module twice", True),
    ("same Linear module twice + relu", False),
    ("same Conv2d module twice", False),
    ("same Conv2d module twice + relu", True),
    ("tied Linear weights", True),
    ("same Conv2d twice, each + its BatchNorm2d", True),
]


@pytest.mark.parametrize(("name", "strict"), EDGE_CASES)
def test_edge_cases(name, strict):
    gm, args, config = export_edge(name, strict)
    cfg = symmetric_config(config)
    assert compare(gm, args, lambda q: q.set_global(cfg), xnnpack, cfg.is_qat) == []


def test_every_edge_case_is_in_the_matrix_script():
    from . import pt2e_matrix

    assert {n for n, _ in EDGE_CASES} <= set(EDGES) | set(QAT_EDGES)
    assert pt2e_matrix.plan()  # the full matrix has cases


def test_the_comparison_notices_a_wrong_quantizer():
    """A per-tensor quantizer against torchao's per-channel one: every check must differ."""
    per_tensor = symmetric_config("per_tensor")

    def wrong():
        q = xnnpack()
        q.set_global = lambda cfg: type(q).set_global(q, per_tensor)  # ignores the config
        return q

    problems = compare_zoo("conv_bn_relu", "per_channel", True, wrong)
    assert any("!=" in p for p in problems)
    assert "converted outputs differ" in problems
