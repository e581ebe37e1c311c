"""ExecuTorch's constructor over the generated class, and the shared call targets that are
not ATen ops, which the spec cannot say yet.

``CortexMQuantizer(per_tensor_config=None, use_explicit_layout=False)``: the
per-channel config on the conv patterns' ops, then ``per_tensor_config``
(default ExecuTorch's ``INT8_PER_TENSOR_CONFIG``) on every op."""

from __future__ import annotations

import operator
from typing import Any

import torch

from generated.cortex_m_quantizer import CortexMQuantizer as Generated

CONVS = (torch.ops.aten.conv2d.default, torch.ops.aten.conv_transpose2d.input)


class CortexMQuantizer(Generated):
    shared_targets = (
        operator.getitem,
        torch.ops.higher_order.while_loop,
        torch.ops.higher_order.cond,
    )

    def __init__(self, per_tensor_config: Any = None, use_explicit_layout: bool = False) -> None:
        super().__init__()
        from executorch.backends.cortex_m.quantizer import quantization_configs as configs

        if use_explicit_layout:
            raise NotImplementedError("use_explicit_layout: not in specs/cortex_m.bcfg yet")
        convs = [r for r in self.rules if r.kind == "chain" and set(r.chain[0]) & set(CONVS)]
        self.add_stage(
            configs.INT8_PER_CHANNEL_CONFIG, {op for r in convs for o in r.chain for op in o}
        )
        self.add_stage(per_tensor_config or configs.INT8_PER_TENSOR_CONFIG)
