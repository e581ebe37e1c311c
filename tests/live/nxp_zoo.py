"""Models quantized by ExecuTorch's NeutronQuantizer and by generated/nxp_quantizer.py's.

    python -m tests.live.nxp_zoo [NAME ...]

Each model of ``MODELS`` is exported strictly (NXP's patterns are found by
source partitions, which only a strict export records on torch 2.13), then
quantized by both classes (``REFERENCE`` and ``GENERATED``, built on
tests/live/nxp_sdk.py's stand-in for NXP's SDK: NXP's ``transform_for_annotation``
passes run on both sides) through torchao's ``prepare_pt2e`` (``prepare_qat_pt2e``
for a QAT model), calibrated on the same seeded data and converted
(``tests/live/pt2e_support.run``). It prints one JSON object: per model, the nodes
whose annotation differs (node by node, right after ``annotate``; the int32
bias's derive function compared by role, not name), whether the converted
outputs and graphs are equal, and how many nodes each annotated. The exit
status is 1 if anything differs.
"""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import torch
from torch import nn

F = nn.functional

# The classes compared, by module and name (the reference needs the SDK stand-in).
REFERENCE = ("executorch.backends.nxp.quantizer.neutron_quantizer", "NeutronQuantizer")
GENERATED = ("generated.nxp_quantizer", "NeutronQuantizer")


class Fn(nn.Module):
    """``fn(modules, *inputs)`` over the modules given."""

    def __init__(self, fn: Any, *mods: nn.Module) -> None:
        super().__init__()
        self.mods, self.fn = nn.ModuleList(mods), fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(self.mods, *xs)


def _models() -> list[tuple[str, nn.Module, tuple, bool]]:
    torch.manual_seed(0)
    r = torch.randn
    conv, conv2, lin = nn.Conv2d(3, 8, 3), nn.Conv2d(3, 8, 3), nn.Linear(8, 8)
    img, vec = (r(1, 3, 10, 10),), (r(2, 8),)

    def cat_cluster(m: Any, x: Any) -> Any:
        return torch.cat([torch.relu(m[0](x)), torch.relu(m[1](x))], 1)

    def pools(m: Any, x: Any) -> Any:
        y = F.avg_pool2d(F.max_pool2d(m[0](x), 2), 2)
        return m[1](torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))

    def activations(m: Any, x: Any) -> Any:
        y = F.leaky_relu(torch.sigmoid(m[0](x)) + torch.tanh(m[0](x)))
        return F.hardtanh(torch.clamp(F.hardswish(y), -2.0, 3.0)) - F.relu6(y)

    def mixed(m: Any, x: Any) -> Any:
        y = F.max_pool2d(torch.relu(m[1](m[0](x))), 2).permute(0, 2, 3, 1)
        z = y.reshape(1, 16, 8).mean(1)
        return torch.bmm(
            y.reshape(1, 16, 8), torch.maximum(z, torch.minimum(z, z - 1)).view(1, 8, 1)
        )

    return [
        ("conv", Fn(lambda m, x: m[0](x), conv), img, False),
        ("conv_relu", Fn(lambda m, x: torch.relu(m[0](x)), conv), img, False),
        ("conv_relu6", Fn(lambda m, x: F.relu6(m[0](x)), conv), img, False),
        ("linear", Fn(lambda m, x: m[0](x), lin), vec, False),
        ("linear_relu_3d", Fn(lambda m, x: torch.relu(m[0](x)), lin), (r(2, 3, 8),), False),
        ("addmm_relu", Fn(lambda m, x: torch.relu(torch.addmm(m[0].bias, x, m[0].weight)), lin), vec, False),
        ("mm_tanh", Fn(lambda m, x: torch.tanh(x @ m[0].weight), lin), vec, False),
        ("cat_cluster", Fn(cat_cluster, conv, conv2), img, False),
        ("cat_plain", Fn(lambda m, x: torch.cat([x, x * 2], 1)), img, False),
        ("add_mul", Fn(lambda m, x: (m[0](x) + m[0](x)) * m[0](x), conv), img, False),
        ("pooling", Fn(pools, conv, lin), img, False),
        ("softmax", Fn(lambda m, x: torch.softmax(m[0](x), -1), lin), vec, False),
        ("activations", Fn(activations, conv), img, False),
        ("mixed", Fn(mixed, conv, nn.BatchNorm2d(8).eval()), img, False),
        ("conv_transpose_grouped", Fn(lambda m, x: torch.relu(m[1](m[0](x))), conv, nn.ConvTranspose2d(8, 8, 3, groups=2)), img, False),
        ("prelu_clamp", Fn(lambda m, x: torch.clamp(m[1](m[0](x)), 0.0, 6.0), conv, nn.PReLU()), img, False),
        # A shared op after an op NXP leaves float waits; one after a later conv is annotated.
        ("shared_waits", Fn(lambda m, x: (torch.sin(x).reshape(1, -1), m[0](x).reshape(1, -1)), conv), img, False),
        ("conv_bn_relu_qat", Fn(lambda m, x: torch.relu(m[1](m[0](x))), conv, nn.BatchNorm2d(8)), img, True),
        ("linear_tanh_qat", Fn(lambda m, x: torch.tanh(m[0](x)), lin), vec, True),
    ]  # fmt: skip


def models() -> list[tuple[str, nn.Module, tuple, bool]]:
    """(name, model, inputs, QAT or not), every model of the zoo."""
    return _models()


MODELS = [name for name, *_ in _models()]


def _class(where: tuple[str, str]) -> Any:
    import importlib

    return getattr(importlib.import_module(where[0]), where[1])


def compare(names: list[str]) -> dict[str, Any]:
    from tests.live.cadence_zoo import canon  # the int32 bias's derive function by role
    from tests.live.nxp_sdk import target_spec
    from tests.live.pt2e_support import differences, flat, run

    spec = target_spec()
    theirs, ours = _class(REFERENCE), _class(GENERATED)
    report: dict[str, Any] = {}
    for name, module, inputs, qat in models():
        if names and name not in names:
            continue
        module = module.train() if qat else module.eval()
        gm = torch.export.export(module, inputs, strict=True).module()
        a = run(copy.deepcopy(gm), inputs, theirs(spec, is_qat=qat), qat)
        b = run(copy.deepcopy(gm), inputs, ours(spec, is_qat=qat), qat)
        da, db = a[0], b[0]  # a dump, or the failure of prepare_pt2e
        if isinstance(da, list) and isinstance(db, list):
            differ = differences(canon(da), canon(db))
        else:
            differ = [] if da == db else [f"failures differ: {da} vs {db}"]
        equal = a[1] is not None and b[1] is not None
        equal = equal and all(torch.equal(x, y) for x, y in zip(flat(a[1]), flat(b[1])))
        report[name] = {
            "differ": differ + ([] if a[2] == b[2] else ["converted graphs differ"]),
            "outputs_equal": equal,
            "annotated": [len(a[0]), len(b[0])],
        }
    return report


if __name__ == "__main__":
    result = compare(sys.argv[1:])
    print(json.dumps(result, indent=1))
    bad = [k for k, v in result.items() if v["differ"] or not v["outputs_equal"]]
    sys.exit(1 if bad else 0)
