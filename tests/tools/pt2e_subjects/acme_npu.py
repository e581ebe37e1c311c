"""A vendor-style PT2E quantizer, written as NPU teams write theirs (not in bcfg's style):
op by op over the graph with torchao's API, checks on shapes, shared observers, a bias
derived from the input's and weight's scales, int16 fixed-qparams outputs.

The subject of ``bcfg import``'s and ``bcfg compare``'s tests (``tests/tools/test_import_pt2e.py``).
"""

from __future__ import annotations

import torch
from torch.fx import Node
from torchao.quantization.pt2e import HistogramObserver, MinMaxObserver, PerChannelMinMaxObserver
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    QuantizationSpec,
    Quantizer,
    SharedQuantizationSpec,
)

aten = torch.ops.aten

ACT = QuantizationSpec(
    dtype=torch.int8,
    quant_min=-128,
    quant_max=127,
    qscheme=torch.per_tensor_affine,
    observer_or_fake_quant_ctr=HistogramObserver.with_args(eps=2**-12),
)
WEIGHT = QuantizationSpec(
    dtype=torch.int8,
    quant_min=-127,
    quant_max=127,
    qscheme=torch.per_channel_symmetric,
    ch_axis=0,
    observer_or_fake_quant_ctr=PerChannelMinMaxObserver.with_args(eps=2**-12),
)
LINEAR_WEIGHT = QuantizationSpec(
    dtype=torch.int8,
    quant_min=-127,
    quant_max=127,
    qscheme=torch.per_tensor_symmetric,
    observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=2**-12),
)
# The NPU's lookup-table activations write int16 of a fixed scale.
LUT_OUT = FixedQParamsQuantizationSpec(
    dtype=torch.int16,
    scale=1.0 / 32768.0,
    zero_point=0,
    quant_min=-32768,
    quant_max=32767,
    qscheme=torch.per_tensor_affine,
)


def derive_bias_qparams(observers):
    act, weight = observers
    act_scale, _ = act.calculate_qparams()
    weight_scale, _ = weight.calculate_qparams()
    scale = (act_scale * weight_scale).float()
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def _bias_spec(node: Node, per_channel: bool) -> DerivedQuantizationSpec:
    return DerivedQuantizationSpec(
        derived_from=[(node.args[0], node), (node.args[1], node)],
        derive_qparams_fn=derive_bias_qparams,
        dtype=torch.int32,
        quant_min=-(2**31),
        quant_max=2**31 - 1,
        qscheme=torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric,
        ch_axis=0,
    )


FUSABLE = {aten.relu.default, aten.relu_.default, aten.hardtanh.default}
SHARED = {aten.max_pool2d.default, aten.flatten.using_ints, aten.view.default,
          aten.reshape.default, aten.permute.default}  # fmt: skip
LUT = {aten.sigmoid.default, aten.tanh.default}


def _annotated(node: Node) -> bool:
    return "quantization_annotation" in node.meta


def _mark(node: Node, inputs: dict, output) -> None:
    node.meta["quantization_annotation"] = QuantizationAnnotation(
        input_qspec_map=inputs, output_qspec=output, _annotated=True
    )


def _fused_act(node: Node) -> Node | None:
    users = list(node.users)
    if len(users) == 1 and users[0].target in FUSABLE and not _annotated(users[0]):
        return users[0]
    return None


class AcmeNPUQuantizer(Quantizer):
    """Conv2d (rank 4, not depthwise) and linear with a fused relu, add of equal shapes,
    shared-observer pools and views after a quantized op, cat sharing its first input's
    observer, sigmoid and tanh to int16 lookup tables."""

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        for node in model.graph.nodes:
            if node.op != "call_function" or _annotated(node):
                continue
            if node.target in (aten.conv2d.default, aten.linear.default):
                self._weighted(node)
            elif node.target == aten.add.Tensor:
                self._add(node)
            elif node.target in LUT:
                _mark(node, {node.args[0]: ACT}, LUT_OUT)
            elif node.target == aten.cat.default:
                self._cat(node)
            elif node.target in SHARED:
                src = node.args[0]
                if isinstance(src, Node) and _annotated(src):
                    _mark(node, {src: SharedQuantizationSpec(src)}, SharedQuantizationSpec(src))
        return model

    def _weighted(self, node: Node) -> None:
        x = node.args[0]
        if node.target == aten.conv2d.default:
            weight_shape = node.args[1].meta["val"].shape
            groups = node.args[6] if len(node.args) > 6 else 1
            if len(weight_shape) != 4 or (groups > 1 and weight_shape[1] == 1):
                return  # the NPU has no depthwise or non-2-d convs
            weight = WEIGHT
        else:
            weight = LINEAR_WEIGHT
        inputs = {x: ACT, node.args[1]: weight}
        if len(node.args) > 2 and node.args[2] is not None:
            inputs[node.args[2]] = _bias_spec(node, weight is WEIGHT)
        act = _fused_act(node)
        _mark(node, inputs, None if act is not None else ACT)
        if act is not None:
            _mark(act, {}, ACT)

    def _add(self, node: Node) -> None:
        a, b = node.args[0], node.args[1]
        if not (isinstance(a, Node) and isinstance(b, Node)):
            return  # scalars stay float
        if a.meta["val"].shape != b.meta["val"].shape:
            return  # no broadcasting on the NPU
        act = _fused_act(node)
        _mark(node, {a: ACT, b: ACT}, None if act is not None else ACT)
        if act is not None:
            _mark(act, {}, ACT)

    def _cat(self, node: Node) -> None:
        inputs = node.args[0]
        first = inputs[0]
        spec = {first: ACT}
        for other in inputs[1:]:
            if other not in spec:
                spec[other] = SharedQuantizationSpec((first, node))
        _mark(node, spec, SharedQuantizationSpec((first, node)))

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass


def get_quantizer() -> AcmeNPUQuantizer:
    return AcmeNPUQuantizer()
