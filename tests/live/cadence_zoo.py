"""Models quantized by ExecuTorch's Cadence quantizers and by generated/cadence_quantizer.py's.

    python -m tests.live.cadence_zoo [NAME ...]

For each model and each quantizer class that annotates it, traces the model as
Cadence's flow does (``compiler_funcs.trace``: strict export, decomposed except for
the ops the class preserves, which must be the same for both), runs both classes
through torchao's ``prepare_pt2e``, calibrates on the same seeded data and converts (``tests/live/pt2e_support.run``),
and prints one JSON object: per model and class, the nodes whose annotation
differs (node by node, right after ``annotate``; the int32 bias's derive
function compared by role, not name), whether the converted outputs are
equal, and how many nodes each annotated. The exit status is 1 if anything
differs. It needs ExecuTorch's Cadence quantizer (the project's environment
imports it).
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import torch
from torch import nn

F = nn.functional


class Seq(nn.Module):
    def __init__(self, fn: Any, *mods: nn.Module) -> None:
        super().__init__()
        self.mods, self.fn = nn.ModuleList(mods), fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(self.mods, *xs)


def models() -> dict[str, tuple[nn.Module, tuple, list[str]]]:
    """name -> (model, inputs, the classes compared on it (``Cadence...Quantizer`` names))."""
    torch.manual_seed(0)
    r = torch.randn
    conv1, conv2, lin = nn.Conv1d(4, 8, 3), nn.Conv2d(3, 8, 3), nn.Linear(8, 8)
    bn = nn.BatchNorm2d(8).eval()
    every = ["Default", "FusedConvRelu", "WakeWord", "WithLayerNorm", "WithSoftmax"]
    return {
        "conv2d_relu_pool": (
            Seq(lambda m, x: F.max_pool2d(torch.relu(m[0](x)), 2), conv2),
            (r(1, 3, 10, 10),),
            [*every, "With16BitConvActivations"],
        ),
        "conv2d_bn_relu": (
            Seq(lambda m, x: torch.relu(m[1](m[0](x))), conv2, bn),
            (r(1, 3, 8, 8),),
            ["FusedConvRelu"],
        ),
        "conv1d_relu": (
            Seq(lambda m, x: torch.relu(m[0](x)), conv1),
            (r(1, 4, 12),),
            [*every, "With16BitConvActivations"],
        ),
        "linear_add_cat": (
            Seq(lambda m, x, y: torch.cat([m[0](x) + y, y]), lin),
            (r(2, 8), r(2, 8)),
            [*every, "With16BitLinearActivations"],
        ),
        "matmul_softmax_layer_norm": (
            Seq(lambda m, x, y: m[0](torch.softmax(torch.matmul(x, y), -1)), nn.LayerNorm(4)),
            (r(2, 4, 4), r(2, 4, 4)),
            [*every, "With16BitMatmulActivations"],
        ),
        "w8a32_linear": (Seq(lambda m, x: m[0](x), lin), (r(1, 1, 8),), ["W8A32Mixed"]),
    }


def canon(dump: list) -> list:
    """A dump with each derived spec's function named by role (the int32 bias's)."""
    out = []
    for name, record in dump:
        inputs = [
            (i, (s[0], s[1], "bias", *s[3:]) if s and s[0] == "derived" else s)
            for i, s in record["inputs"]
        ]
        out.append((name, {**record, "inputs": inputs}))
    return out


def compare(names: list[str]) -> dict[str, Any]:
    from executorch.backends.cadence.aot.compiler_funcs import trace
    from executorch.backends.cadence.aot.quantizer import quantizer as theirs

    from generated import cadence_quantizer as ours
    from tests.live.pt2e_support import differences, run

    report: dict[str, Any] = {}
    for name, (module, inputs, classes) in models().items():
        if names and name not in names:
            continue
        for cls in classes:
            full = f"Cadence{cls}Quantizer"
            keep = getattr(theirs, full)().get_ops_to_preserve_from_decomposition()
            same_ops = set(keep) == set(
                getattr(ours, full)().get_ops_to_preserve_from_decomposition()
            )
            # Cadence's own trace: strict export, decomposed but for the quantizer's ops
            gm = trace(module, inputs, strict=True, ops_to_keep=keep).module()
            a = run(copy.deepcopy(gm), inputs, getattr(theirs, full)(), False)
            b = run(copy.deepcopy(gm), inputs, getattr(ours, full)(), False)
            equal = a[1] is not None and b[1] is not None
            equal = equal and all(torch.equal(x, y) for x, y in zip(_flat(a[1]), _flat(b[1])))
            report[f"{name} {cls}"] = {
                "differ": differences(canon(a[0]), canon(b[0]))
                + ([] if same_ops else ["ops kept"]),
                "outputs_equal": equal,
                "annotated": [len(a[0]), len(b[0])],
            }
    return report


def _flat(o: Any) -> list:
    return list(o) if isinstance(o, (tuple, list)) else [o]


if __name__ == "__main__":
    result = compare(sys.argv[1:])
    print(json.dumps(result, indent=1))
    bad = [k for k, v in result.items() if v["differ"] or not v["outputs_equal"]]
    sys.exit(1 if bad else 0)
