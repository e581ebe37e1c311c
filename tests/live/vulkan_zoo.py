"""Models for ExecuTorch's VulkanQuantizer against generated/vulkan_quantizer.py's.

    python -m tests.live.vendor_zoo vulkan [MODEL ...]

Linear alone and in chains through the ops Vulkan's propagation shares observers
through, the scalar operands its transform turns into tensors, and models mixing them
with ops it leaves float; each under ExecuTorch's configs (weight-only int8 and 4-bit,
dynamic), a config with an output spec (which makes the propagation act) and a filter.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tests.live.pt2e_support import Fn

F = nn.functional
r = torch.randn


def _lin(i: int = 8, o: int = 8, bias: bool = True) -> nn.Linear:
    return nn.Linear(i, o, bias=bias)


def _tied() -> nn.Module:
    a, b = _lin(), _lin()
    b.weight = a.weight
    return Fn(lambda s, x: s.b(s.a(x)), a=a, b=b)


def _attention() -> nn.Module:
    def fwd(s: Any, x: torch.Tensor) -> torch.Tensor:
        q, k, v = s.q(x), s.k(x), s.v(x)
        a = torch.softmax(q @ k.transpose(-1, -2) * 0.35, -1)
        return s.o((a @ v).permute(0, 2, 1).flatten(1))

    return Fn(fwd, q=_lin(), k=_lin(), v=_lin(), o=_lin(32, 8))


# (name, model factory, example inputs): a plain list.
ZOO: list[tuple[str, Any, tuple]] = [
    ("linear", lambda: Fn(lambda s, x: s.l(x), l=_lin()), (r(4, 8),)),
    ("linear no bias", lambda: Fn(lambda s, x: s.l(x), l=_lin(bias=False)), (r(4, 8),)),
    ("linear 3d", lambda: Fn(lambda s, x: s.l(x), l=_lin(8, 16)), (r(2, 3, 8),)),
    (
        "linear relu linear",
        lambda: Fn(lambda s, x: s.b(F.relu(s.a(x))), a=_lin(), b=_lin()),
        (r(4, 8),),
    ),
    (
        "linear hardtanh relu6",
        lambda: Fn(lambda s, x: F.relu6(F.hardtanh(s.a(x), -1.0, 1.0)), a=_lin()),
        (r(4, 8),),
    ),
    (
        "linear view permute flatten",
        lambda: Fn(lambda s, x: s.a(x).view(2, 2, 8).permute(0, 2, 1).flatten(1), a=_lin()),
        (r(4, 8),),
    ),
    (
        "linear mean squeeze linear",
        lambda: Fn(
            lambda s, x: s.b(torch.squeeze(s.a(x).mean(1, keepdim=True), 1)), a=_lin(), b=_lin()
        ),
        (r(2, 3, 8),),
    ),
    (
        "linear max_pool adaptive_avg_pool",
        lambda: Fn(lambda s, x: F.adaptive_avg_pool2d(F.max_pool2d(s.a(x), 2), 1), a=_lin()),
        (r(1, 4, 8, 8),),
    ),
    (
        "scalars add mul",
        lambda: Fn(lambda s, x: s.a(x * 0.5 + 1) * 2.0 + s.a(x), a=_lin()),
        (r(4, 8),),
    ),
    (
        "conv pool flatten linear",
        lambda: Fn(
            lambda s, x: s.l(torch.flatten(F.adaptive_avg_pool2d(F.relu(s.c(x)), 1), 1)),
            c=nn.Conv2d(3, 8, 3),
            l=_lin(),
        ),
        (r(1, 3, 8, 8),),
    ),
    ("same linear twice", lambda: Fn(lambda s, x: s.a(s.a(x)), a=_lin()), (r(4, 8),)),
    ("tied linear weights", _tied, (r(4, 8),)),
    ("attention", _attention, (r(2, 4, 8),)),
    (
        "mlp slice cat",
        lambda: Fn(
            lambda s, x: s.c(torch.cat([F.gelu(s.a(x))[:, :4], s.b(x)[:, 4:]], 1)),
            a=_lin(),
            b=_lin(),
            c=_lin(),
        ),
        (r(4, 8),),
    ),
]


def _config(**kw: Any) -> Any:
    from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
        get_symmetric_quantization_config,
    )

    return get_symmetric_quantization_config(**kw)


def _static(q: Any) -> Any:
    """XNNPACK's static per-channel config: linear then has an output spec to propagate."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
    )

    return q.set_global(get_symmetric_quantization_config(is_per_channel=True))


# name -> fn(quantizer) -> the quantizer configured.
SETUPS: dict[str, Any] = {
    "w8": lambda q: q.set_global(_config()),
    "w4": lambda q: q.set_global(_config(weight_bits=4)),
    "dynamic w8": lambda q: q.set_global(_config(is_dynamic=True)),
    "dynamic w4": lambda q: q.set_global(_config(is_dynamic=True, weight_bits=4)),
    "static output": _static,
    "filter": lambda q: _static(q.set_filter_function(lambda n: n.name != "linear")),
    "none": lambda q: q,
}
