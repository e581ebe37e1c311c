"""Models for ExecuTorch's NeuropilotQuantizer against generated/neuropilot_quantizer.py's.

    python -m tests.live.vendor_zoo mediatek [MODEL ...]

The ops of MediaTek's registry alone and in chains, the op + relu fusions (and a
producer with another user, which is not fused), both RMSNorm forms, embedding, an
SDPA its transform decomposes, and models mixing them with ops it leaves float;
each under every precision of its Precision enum (A8W8 by default).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tests.live.pt2e_support import Fn

F = nn.functional
r = torch.randn


def _rms(x: torch.Tensor, pow: bool = False) -> torch.Tensor:
    sq = x.pow(2) if pow else x * x
    return x * torch.rsqrt(sq.mean(-1, keepdim=True) + 1e-5)


def _block() -> nn.Module:
    def fwd(s: Any, ids: torch.Tensor) -> torch.Tensor:
        x = s.emb(ids)
        h = _rms(x)
        q, k, v = (t.view(1, 6, 2, 4).transpose(1, 2) for t in (s.q(h), s.k(h), s.v(h)))
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, 6, 8)
        x = x + s.o(a)
        return x + s.down(F.silu(s.up(_rms(x, True))) * s.gate(x))

    lin = {n: nn.Linear(8, 8, bias=False) for n in ("q", "k", "v", "o", "down")}
    up = {n: nn.Linear(8, 8) for n in ("up", "gate")}
    return Fn(fwd, emb=nn.Embedding(16, 8), **lin, **up)


# (name, model factory, example inputs): a plain list.
ZOO: list[tuple[str, Any, tuple]] = [
    (
        "conv2d relu",
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv2d(3, 8, 3)),
        (r(1, 3, 8, 8),),
    ),
    ("conv1d relu6", lambda: Fn(lambda s, x: F.relu6(s.c(x)), c=nn.Conv1d(4, 4, 3)), (r(1, 4, 8),)),
    ("linear", lambda: Fn(lambda s, x: s.l(x), l=nn.Linear(8, 8)), (r(2, 8),)),
    (
        "linear relu_",
        lambda: Fn(lambda s, x: F.relu(s.l(x), inplace=True), l=nn.Linear(8, 8)),
        (r(2, 8),),
    ),
    (
        "conv with two users",
        lambda: Fn(lambda s, x: (lambda y: F.relu(y) + y)(s.c(x)), c=nn.Conv2d(3, 3, 1)),
        (r(1, 3, 4, 4),),
    ),
    ("add relu", lambda: Fn(lambda s, x, y: F.relu(x + y)), (r(2, 8), r(2, 8))),
    ("arith", lambda: Fn(lambda s, x, y: ((x - y) * 2.0 / (y + 3)).pow(2) - 1), (r(2, 8), r(2, 8))),
    ("rsub relu", lambda: Fn(lambda s, x: F.relu(1 - x)), (r(2, 8),)),
    ("rmsnorm x*x", lambda: Fn(lambda s, x: _rms(x)), (r(2, 8),)),
    ("rmsnorm pow relu", lambda: Fn(lambda s, x: F.relu(_rms(x, True))), (r(2, 8),)),
    (
        "embedding linear",
        lambda: Fn(lambda s, i: s.l(s.e(i)), e=nn.Embedding(10, 8), l=nn.Linear(8, 4)),
        (torch.tensor([[1, 2, 3]]),),
    ),
    (
        "norms activations",
        lambda: Fn(
            lambda s, x: s.pr(F.leaky_relu(F.gelu(s.gn(s.ln(x).transpose(1, 2)))).transpose(1, 2)),
            ln=nn.LayerNorm(8),
            gn=nn.GroupNorm(2, 8),
            pr=nn.PReLU(),
        ),
        (r(2, 4, 8),),
    ),
    (
        "bmm matmul",
        lambda: Fn(lambda s, x, y: torch.matmul(torch.bmm(x, y), y)),
        (r(2, 4, 4), r(2, 4, 4)),
    ),
    (
        "sdpa",
        lambda: Fn(lambda s, q, k, v: F.scaled_dot_product_attention(q, k, v)),
        (r(1, 2, 4, 8),) * 3,
    ),
    (
        "pool float ops",
        lambda: Fn(
            lambda s, x: F.max_pool2d(torch.tanh(s.c(x)), 2).flatten(1), c=nn.Conv2d(3, 4, 3)
        ),
        (r(1, 3, 8, 8),),
    ),
    ("llama-like block", _block, (torch.tensor([[1, 5, 7, 2, 9, 3]]),)),
]


def _precision(name: str) -> Any:
    def setup(q: Any) -> Any:
        from executorch.backends.mediatek.quantizer.qconfig import Precision

        q.setup_precision(Precision[name])
        return q

    return setup


# name -> fn(quantizer) -> the quantizer configured.
SETUPS: dict[str, Any] = {
    "default": lambda q: q,
    **{p: _precision(p) for p in ("A16W16", "A16W8", "A16W4", "A8W4")},
}
