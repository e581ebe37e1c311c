"""A second vendor-style PT2E quantizer, in another style than ``acme_npu.py``: a registry of
per-op rules (a validate function and a config name each), walked from the graph's end so
that an activation claims its producer, then a forward pass for the ops that share their
input's observer; uint8 activations, int16 multiplies, fixed-qparams outputs of lookup
tables, a bias derived from the input's and weight's scales.

The hidden-subject check of ``bcfg import`` (``tests/tools/test_import_pt2e_full.py``): its
author did not write it for bcfg, and its import must be the same on every graph.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    QuantizationSpec,
    Quantizer,
    SharedQuantizationSpec,
)

aten = torch.ops.aten
KEY = "quantization_annotation"


@dataclass(frozen=True)
class DSPConfig:
    """What one kind of op gets: its activations' spec, its weight's (if any), its output's."""

    act: QuantizationSpec
    weight: QuantizationSpec | None
    out: QuantizationSpec | FixedQParamsQuantizationSpec


U8 = QuantizationSpec(
    dtype=torch.uint8,
    quant_min=0,
    quant_max=255,
    qscheme=torch.per_tensor_affine,
    observer_or_fake_quant_ctr=MovingAverageMinMaxObserver.with_args(averaging_constant=0.02),
)
I16 = QuantizationSpec(
    dtype=torch.int16,
    quant_min=-32767,
    quant_max=32767,
    qscheme=torch.per_tensor_symmetric,
    observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=2**-20),
)
W8 = QuantizationSpec(
    dtype=torch.int8,
    quant_min=-127,
    quant_max=127,
    qscheme=torch.per_channel_symmetric,
    ch_axis=0,
    observer_or_fake_quant_ctr=PerChannelMinMaxObserver,
)
TABLE = FixedQParamsQuantizationSpec(
    dtype=torch.uint8, scale=1.0 / 256.0, zero_point=0, quant_min=0, quant_max=255,
    qscheme=torch.per_tensor_affine,
)  # fmt: skip

CONFIGS = {
    "a8w8": DSPConfig(U8, W8, U8),
    "a16": DSPConfig(I16, None, I16),
    "a8": DSPConfig(U8, None, U8),
    "table": DSPConfig(U8, None, TABLE),
}


def _bias_qparams(observers):
    act, weight = observers
    scale = act.calculate_qparams()[0] * weight.calculate_qparams()[0]
    return scale.float(), torch.zeros_like(scale, dtype=torch.int32)


def _shape(n) -> tuple[int, ...] | None:
    val = n.meta.get("val") if isinstance(n, Node) else None
    return tuple(val.shape) if isinstance(val, torch.Tensor) else None


# ---------------------------------------------------------------- validate functions


def conv_ok(node: Node) -> bool:
    """The DSP's conv engine: 4-d inputs only, no grouped convs."""
    shape = _shape(node.args[0])
    groups = node.args[6] if len(node.args) > 6 else 1
    return shape is not None and len(shape) == 4 and groups == 1


def linear_ok(node: Node) -> bool:
    shape = _shape(node.args[0])
    return shape is not None and len(shape) == 2  # batched matrices only


def both_tensors(node: Node) -> bool:
    return all(isinstance(a, Node) for a in node.args[:2])


def always(node: Node) -> bool:
    return True


@dataclass(frozen=True)
class OpRule:
    validate: Callable[[Node], bool]
    config: str
    weighted: bool = False


RULES: dict = {
    aten.conv2d.default: OpRule(conv_ok, "a8w8", weighted=True),
    aten.linear.default: OpRule(linear_ok, "a8w8", weighted=True),
    aten.add.Tensor: OpRule(both_tensors, "a8"),
    aten.mul.Tensor: OpRule(both_tensors, "a16"),
    aten.softmax.int: OpRule(always, "table"),
    aten.hardsigmoid.default: OpRule(always, "table"),
}
ACTIVATIONS = {aten.relu.default, aten.hardtanh.default}
PASSTHROUGH = {aten.max_pool2d.default, aten.flatten.using_ints, aten.permute.default}


class BorealisDSPQuantizer(Quantizer):
    """The rules of ``RULES``, an activation fused into a conv, linear or add producing it alone,
    max pooling, flatten and permute sharing their input's observer where it is quantized."""

    def annotate(self, model: GraphModule) -> GraphModule:
        for node in reversed(model.graph.nodes):  # an activation claims its producer first
            if node.op != "call_function" or KEY in node.meta:
                continue
            if node.target in ACTIVATIONS:
                self._fused(node)
            elif node.target in RULES:
                self._op(node, RULES[node.target], output=True)
        for node in model.graph.nodes:  # then what shares, in order
            if node.op == "call_function" and node.target in PASSTHROUGH and KEY not in node.meta:
                src = node.args[0]
                if isinstance(src, Node) and KEY in src.meta:
                    shared = SharedQuantizationSpec((src, node))
                    node.meta[KEY] = QuantizationAnnotation(
                        input_qspec_map={src: U8}, output_qspec=shared, _annotated=True
                    )
        return model

    def _fused(self, act: Node) -> None:
        producer = act.args[0]
        if not isinstance(producer, Node) or len(producer.users) != 1 or KEY in producer.meta:
            return
        rule = RULES.get(producer.target)
        if rule is None or (rule.config != "a8w8" and producer.target != aten.add.Tensor):
            return
        if self._op(producer, rule, output=False):
            act.meta[KEY] = QuantizationAnnotation(
                output_qspec=CONFIGS[rule.config].out, _annotated=True
            )

    def _op(self, node: Node, rule: OpRule, output: bool) -> bool:
        if not rule.validate(node):
            return False
        cfg = CONFIGS[rule.config]
        inputs = {}
        if rule.weighted:
            inputs[node.args[0]] = cfg.act
            inputs[node.args[1]] = cfg.weight
            if len(node.args) > 2 and node.args[2] is not None:
                inputs[node.args[2]] = DerivedQuantizationSpec(
                    derived_from=[(node.args[0], node), (node.args[1], node)],
                    derive_qparams_fn=_bias_qparams,
                    dtype=torch.int32,
                    quant_min=-(2**31),
                    quant_max=2**31 - 1,
                    qscheme=torch.per_channel_symmetric,
                    ch_axis=0,
                )
        else:
            for a in node.args[:2]:
                if isinstance(a, Node):
                    inputs[a] = cfg.act
        node.meta[KEY] = QuantizationAnnotation(
            input_qspec_map=inputs, output_qspec=cfg.out if output else None, _annotated=True
        )
        return True

    def validate(self, model: GraphModule) -> None:
        pass


def get_quantizer() -> BorealisDSPQuantizer:
    return BorealisDSPQuantizer()
