"""A hand-written PT2E quantizer whose bias is derived by a local closure, as ExecuTorch
Arm's ``QuantizationConfig.get_bias_qspec`` derives its own: the closure has no importable
dotted path, so ``bcfg import`` can only name it by what it computes.

``get_quantizer``: the closure computes the standard bias (input scale times weight scale,
as float32; zero point 0 of the weight scale's shape, int32); the import writes the
standard form. ``get_doubling_quantizer``: a closure computing twice that scale, which no
form a spec can say computes; the import warns and the proof reports the biased ops.

The subject of ``tests/tools/test_import_pt2e.py``'s closure tests.
"""

from __future__ import annotations

import torch
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    QuantizationAnnotation,
    Quantizer,
)

from tests.tools.pt2e_subjects.acme_npu import ACT, WEIGHT  # int8 histogram, per-channel

aten = torch.ops.aten


class ClosureBiasQuantizer(Quantizer):
    """Conv2d and linear (a fused relu after), their bias derived by a closure made per op."""

    def __init__(self, factor: float = 1.0) -> None:
        super().__init__()
        self.factor = factor

    def bias_spec(self, node: Node) -> DerivedQuantizationSpec:
        factor = self.factor

        def _derive_qparams_fn(obs_or_fqs):
            act_scale, _ = obs_or_fqs[0].calculate_qparams()
            weight_scale, _ = obs_or_fqs[1].calculate_qparams()
            scale = (act_scale * weight_scale * factor).to(torch.float32)
            return scale, torch.full_like(weight_scale, fill_value=0, dtype=torch.int32)

        return DerivedQuantizationSpec(
            derived_from=[(node.args[0], node), (node.args[1], node)],
            derive_qparams_fn=_derive_qparams_fn,
            dtype=torch.int32,
            quant_min=torch.iinfo(torch.int32).min + 1,
            quant_max=torch.iinfo(torch.int32).max,
            qscheme=torch.per_channel_symmetric,
            ch_axis=0,
        )

    def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
        for node in model.graph.nodes:
            if node.op != "call_function" or node.target not in (
                aten.conv2d.default,
                aten.linear.default,
            ):
                continue
            if "quantization_annotation" in node.meta:
                continue
            inputs = {node.args[0]: ACT, node.args[1]: WEIGHT}
            if len(node.args) > 2 and node.args[2] is not None:
                inputs[node.args[2]] = self.bias_spec(node)
            users = list(node.users)
            relu = users[0] if len(users) == 1 and users[0].target == aten.relu.default else None
            node.meta["quantization_annotation"] = QuantizationAnnotation(
                input_qspec_map=inputs, output_qspec=None if relu else ACT, _annotated=True
            )
            if relu is not None:
                relu.meta["quantization_annotation"] = QuantizationAnnotation(
                    output_qspec=ACT, _annotated=True
                )
        return model

    def validate(self, model: torch.fx.GraphModule) -> None:
        pass


def get_quantizer() -> ClosureBiasQuantizer:
    return ClosureBiasQuantizer()


def get_doubling_quantizer() -> ClosureBiasQuantizer:
    return ClosureBiasQuantizer(factor=2.0)
