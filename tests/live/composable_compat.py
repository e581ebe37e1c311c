"""``bcfg compat``'s report on ExecuTorch's Cortex-M and Arm TOSA classes (the generated ones).

    python -m tests.live.composable_compat

runs in the environment of ``tests/live/envs.py``'s ``ARM`` (their hooks import
ExecuTorch's Arm stack) and prints one JSON object: for each target, each op's
(reason, pattern, config, quantized) as compat's PT2E analysis reports it.
The analysis checks the report against a plain prepare of the same quantizer
(a ``Disagreement`` fails the run); ``tests/live/test_compat_composable.py``
checks the verdicts by name.
"""

from __future__ import annotations

import json
from typing import Any

import torch
from torch import nn

from generator.live.compat.pt2e import analyse


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> Any:
        y = torch.relu(self.conv(x)).mean((2, 3))
        z = self.fc(y)
        return torch.sigmoid(z) + z


def entries(make: Any) -> dict[str, Any]:
    """Each op's verdict as compat reports it, and the ops the quantizer annotates when this
    script prepares the model itself (torchao's prepare_pt2e, no report)."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    model, example = Net().eval(), (torch.randn(1, 3, 8, 8),)
    result = analyse(model, example, make())
    assert result.error is None, result.error
    quantizer = make()  # a quantizer of its own, never reporting
    gm = torch.export.export(model, example).module()
    annotate, seen = quantizer.annotate, set()

    def snapshot(m: Any) -> Any:
        out = annotate(m)
        calls = [n for n in out.graph.nodes if n.op == "call_function"]
        seen.clear()  # the last annotate's (Arm's transform annotates once before it)
        seen.update(n.name for n in calls if "quantization_annotation" in n.meta)
        return out

    quantizer.annotate = snapshot
    prepare_pt2e(gm, quantizer)
    verdicts = {e.node: [e.reason, e.rule, e.scope, e.quantized, e.detail] for e in result.entries}
    return {"entries": verdicts, "annotated": sorted(seen)}


def main() -> None:
    from executorch.backends.arm.quantizer import get_symmetric_quantization_config
    from executorch.backends.arm.tosa.specification import TosaSpecification

    from generated.arm_tosa_quantizer import TOSAQuantizer
    from generated.cortex_m_quantizer import CortexMQuantizer

    def arm() -> Any:
        q = TOSAQuantizer(TosaSpecification.create_from_string("TOSA-1.0+INT"))
        return q.set_global(get_symmetric_quantization_config())

    print(json.dumps({"cortex_m": entries(CortexMQuantizer), "arm_tosa": entries(arm)}))


if __name__ == "__main__":
    main()
