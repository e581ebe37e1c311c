"""What generated quantizers do beyond XNNPACK: scopes and precedence, validate, fixed qparams, hooks."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from .pt2e_support import KEY, Fn, export, generate, symmetric_config

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.quantization.pt2e.quantizer import (  # noqa: E402
    FixedQParamsQuantizationSpec,
    QuantizationConfig,
    QuantizationSpec,
)

ATEN = torch.ops.aten


def xnnpack():
    from generated.xnnpack_quantizer import get_xnnpack_quantizer

    return get_xnnpack_quantizer()


def annotated(gm) -> dict[str, object]:
    """Annotated op nodes (weights' empty marks left out): name -> output spec."""
    return {
        n.name: n.meta[KEY].output_qspec
        for n in gm.graph.nodes
        if KEY in n.meta and n.op == "call_function"
    }


def weight_scheme(gm, op) -> set[str]:
    """The weight qschemes of the annotated ``op`` nodes."""
    out = set()
    for n in gm.graph.nodes:
        if n.target == op and KEY in n.meta:
            spec = n.meta[KEY].input_qspec_map.get(n.args[1])
            out.add(str(spec.qscheme) if spec is not None else "none")
    return out


def annotate(quantizer, model="nested", strict=True):
    gm, _ = export(model, strict)
    gm = quantizer.transform_for_annotation(gm)
    quantizer.annotate(gm)
    return gm


PC, PT = symmetric_config("per_channel"), symmetric_config("per_tensor")


# ------------------------------------------------------------------ scopes


def test_module_name_scope_annotates_convs_and_fusions_in_the_module():
    gm = annotate(xnnpack().set_module_name("block", PC))
    assert set(annotated(gm)) == {"conv2d", "relu", "flatten"}  # conv + relu, then flatten shares


def test_operator_type_has_the_usual_precedence():
    gm = annotate(xnnpack().set_operator_type(ATEN.linear.default, PC))
    names = set(annotated(gm))
    assert {"linear", "linear_1", "linear_2", "linear_3"} <= names and "conv2d" not in names
    # a linear + relu chain is in the scope of its linear
    assert "relu_1" in names and annotated(gm)["linear_1"] is None


def test_precedence_module_name_then_type_then_operator_then_global():
    from .pt2e_support import LinearStack

    q = (
        xnnpack()
        .set_global(PT)
        .set_operator_type(ATEN.linear.default, PC)
        .set_module_type(LinearStack, PT)
        .set_module_name("sub.fc3", None)
    )
    gm = annotate(q)
    names = set(annotated(gm))
    assert "linear_3" not in names  # sub.fc3: None leaves it unquantized
    assert {"linear_1", "linear_2"} <= names  # sub: its module type (per-tensor)
    per_node = {
        n.name: str(n.meta[KEY].input_qspec_map[n.args[1]].qscheme)
        for n in gm.graph.nodes
        if n.target == ATEN.linear.default and KEY in n.meta
    }
    assert per_node == {
        "linear": "torch.per_channel_symmetric",  # fc: operator type beats global
        "linear_1": "torch.per_tensor_symmetric",
        "linear_2": "torch.per_tensor_symmetric",
    }
    assert weight_scheme(gm, ATEN.conv2d.default) == {"torch.per_tensor_symmetric"}  # global


def test_dynamic_scope_tries_the_dynamic_rules_only():
    gm = annotate(xnnpack().set_module_name("sub", symmetric_config("dynamic")))
    specs = annotated(gm)
    assert {"linear_1", "linear_2", "linear_3"} <= set(specs)
    assert all(specs[n] is None for n in ("linear_1", "linear_2", "linear_3"))  # dynamic: no output


def test_instances_are_fresh():
    a, b = xnnpack(), xnnpack()
    a.set_global(PC).set_module_name("x", None)
    assert b.global_config is None and b.module_name_config == {}


# ---------------------------------------------------------------- validate


@pytest.mark.parametrize(
    "form", ["per_channel", "per_tensor", "dynamic", "qat", "qat_per_tensor", "qat_dynamic"]
)
def test_validate_accepts_every_torchao_form(form):
    cfg = symmetric_config(form)
    q = xnnpack().set_global(cfg)
    model = (
        "qat_conv_bn_relu" if cfg.is_qat and not cfg.input_activation.is_dynamic else "linear_stack"
    )
    gm = annotate(q, model)
    assert q._used, "something was annotated"
    q.validate(gm)
    assert q.problems() == []


def _config(**changes):
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    return get_symmetric_quantization_config.__wrapped__(is_per_channel=True, **changes)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            lambda: _config(weight_qmin=-128),
            "pattern (nn.Linear, nn.ReLU), global config: weight.quant_min is -128, "
            "the spec allows -127 or more (dtype config static)",
        ),
        (
            lambda: _config(act_qmin=0, act_qmax=255),
            "input_activation range 0..255 is outside torch.int8's -128..127",
        ),
        (
            lambda: QuantizationConfig(
                QuantizationSpec(torch.int8, _observer(), -128, 127, torch.per_tensor_affine),
                _config().output_activation,
                _config().weight,
                None,
            ),
            "input_activation observer eps is 1.1920928955078125e-07, the spec's scale_min is 0.000244140625",
        ),
        (
            lambda: QuantizationConfig(
                _config().input_activation,
                _config().output_activation,
                _config().weight,
                QuantizationSpec(torch.int32, _observer(), qscheme=torch.per_tensor_symmetric),
            ),
            "bias quantizes to torch.int32, the spec leaves it float",
        ),
    ],
)
def test_validate_rejects_what_the_spec_does_not_allow_naming_pattern_and_field(config, message):
    q = xnnpack().set_global(config())
    gm, _ = export("linear_stack", True)
    with pytest.raises(ValueError) as exc:
        prepare_pt2e(gm, q)
    text = str(exc.value)
    assert text.startswith("xnnpack quantizer: ") and "specs/xnnpack.bcfg" in text
    assert message in text


def _observer():
    from torchao.quantization.pt2e.observer import HistogramObserver

    return HistogramObserver


# ------------------------------------------------- generated from a test spec


def test_fixed_qparams_ops_get_a_fixed_output_spec(tmp_path):
    get = generate(
        tmp_path,
        """
        constraint range_0_to_1 = qint8 {quant_min: -128, quant_max: 127, scale: 1.0 / 256.0, zero_point: -128}
        dtypes io = {input: qint8, output: qint8}
        quantizer b {}
        backend b {
            pattern nn.Sigmoid { dtypes: constrain(io, range_0_to_1) }
        }
        """,
    )
    gm = torch.export.export(nn.Sequential(nn.Sigmoid()), (torch.randn(2, 4),)).module()
    q = get().set_global(PT)
    q.annotate(gm)
    (sigmoid,) = [n for n in gm.graph.nodes if n.target == ATEN.sigmoid.default]
    out = sigmoid.meta[KEY].output_qspec
    assert isinstance(out, FixedQParamsQuantizationSpec)
    assert (out.dtype, out.scale, out.zero_point, out.quant_min, out.quant_max) == (
        torch.int8,
        1.0 / 256.0,
        -128,
        -128,
        127,
    )
    assert sigmoid.meta[KEY].input_qspec_map == {sigmoid.args[0]: PT.input_activation}
    assert q.problems() == []  # the fixed output is the quantizer's, not the config's


def test_outputs_consumers_leaves_outputs_to_quantized_consumers(tmp_path):
    get = generate(
        tmp_path,
        """
        constraint range_0_to_1 = qint8 {quant_min: -128, quant_max: 127, scale: 1.0 / 256.0, zero_point: -128}
        dtypes s = {input: qint8, output: qint8, weight: qint8, bias: float}
        dtypes io = {input: qint8, output: qint8}
        quantizer b { outputs: consumers }
        backend b {
            pattern (nn.Linear, nn.ReLU) { dtypes: s }
            pattern nn.Linear { dtypes: s }
            pattern nn.Sigmoid { dtypes: constrain(io, range_0_to_1) }
            pattern torch.matmul { dtypes: io  pt2e: {annotate: tests.live.pt2e_hooks.annotate_matmul} }
            pattern torch.flatten { observation: shared_observer  dtypes: io }
        }
        """,
    )

    def forward(s, x):
        y = s.fc2(torch.flatten(torch.relu(s.fc1(x)), 1))  # flatten after a quantized pattern
        m = torch.flatten(torch.matmul(x, x), 1)  # after a hook's output spec
        return y, torch.flatten(x, 1), torch.sigmoid(x), m  # a model input's: float

    model = Fn(forward, fc1=nn.Linear(4, 4), fc2=nn.Linear(16, 2))
    args = (torch.randn(4, 4, 4),)
    gm = torch.export.export(model, args).module()
    get().set_global(PT).annotate(gm)
    nodes = {n.name: n for n in gm.graph.nodes}
    specs = annotated(gm)
    # A pattern's last op has no output spec, unless the spec fixes its qparams.
    assert specs["linear"] is None and specs["relu"] is None and specs["linear_1"] is None
    assert isinstance(specs["sigmoid"], FixedQParamsQuantizationSpec)
    # Shared ops follow quantized patterns (a hook's counts by its output spec):
    # the input spec on the edge, the output shares it.
    for flat, producer in (("flatten", "relu"), ("flatten_1", "matmul")):
        qa = nodes[flat].meta[KEY]
        assert qa.input_qspec_map == {nodes[producer]: PT.input_activation}
        assert qa.output_qspec.edge_or_node == (nodes[producer], nodes[flat])
    assert "flatten_2" not in specs  # its input is the model's

    # After convert_pt2e, an output no quantized op reads stays float.
    gm = torch.export.export(model, args).module()
    prepared = prepare_pt2e(gm, get().set_global(PT))
    prepared(*args)
    converted = convert_pt2e(prepared)
    (outputs,) = [n for n in converted.graph.nodes if n.op == "output"]
    assert outputs.args[0][0].target == ATEN.linear.default
    assert "dequantize" in str(outputs.args[0][2].target)  # sigmoid's fixed output


def test_hooks_are_called(tmp_path):
    from . import pt2e_hooks

    get = generate(
        tmp_path,
        """
        dtypes io = {input: qint8, output: qint8}
        quantizer b { transform: tests.live.pt2e_hooks.mark_transformed }
        backend b {
            pattern torch.matmul { dtypes: io  pt2e: {annotate: tests.live.pt2e_hooks.annotate_matmul} }
            pattern torch.add { dtypes: io  pt2e: {skip: tests.live.pt2e_hooks.from_placeholder} }
        }
        """,
    )
    model = Fn(lambda s, x, y: torch.matmul(x, y) + torch.matmul(x, y).relu().add(x))
    args = (torch.randn(2, 2), torch.randn(2, 2))
    gm = torch.export.export(model, args).module()
    pt2e_hooks.CALLS.clear()
    q = get().set_global(PT)
    gm = q.transform_for_annotation(gm)
    q.annotate(gm)
    assert pt2e_hooks.CALLS[0] == "transform" and "annotate" in pt2e_hooks.CALLS
    specs = annotated(gm)
    assert {"matmul", "matmul_1"} <= set(specs)
    assert "add_1" in specs and "add" not in specs  # add (relu + x) takes a model input: skipped
