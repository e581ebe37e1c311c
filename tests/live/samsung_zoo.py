"""Models for ExecuTorch's EnnQuantizer against generated/enn_quantizer.py's.

    python -m tests.live.vendor_zoo samsung [MODEL ...]

Each kind of Samsung's annotation (two inputs, a shared pair, add and its special
cases, one input, ops sharing the spec of the nearest annotated op above, softmax,
index, index_put, unbind, conv and linear with and without a folded relu, embedding,
cat, the norms, sigmoid's fixed qparams), in chains and mixed models; under the
default config, per-tensor weights, QAT observers and a custom annotation.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tests.live.pt2e_support import Fn

F = nn.functional
r = torch.randn


def _block() -> nn.Module:
    def fwd(s: Any, ids: torch.Tensor) -> Any:
        x = s.emb(ids)
        q, k, v = (t.view(1, 6, 2, 4).transpose(1, 2) for t in (s.q(x), s.k(x), s.v(x)))
        a = torch.softmax(q @ k.transpose(-1, -2) / 2.0, -1) @ v
        x = s.ln(x + s.o(a.transpose(1, 2).reshape(1, 6, 8)))
        h = F.gelu(s.up(x)) * torch.sigmoid(s.gate(x))
        return x + s.down(h)

    mods = {n: nn.Linear(8, 8) for n in ("q", "k", "v", "o", "up", "gate", "down")}
    return Fn(fwd, emb=nn.Embedding(16, 8), ln=nn.LayerNorm(8), **mods)


def _cnn() -> nn.Module:
    def fwd(s: Any, x: torch.Tensor) -> Any:
        y = F.relu(s.c1(x))
        y = F.hardtanh(s.bn(s.c2(y)), 0.0, 6.0)
        y = torch.cat([F.max_pool2d(y, 2), F.avg_pool2d(y, 2)], 1)
        y = F.hardswish(s.gn(y))
        return s.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))

    return Fn(
        fwd,
        c1=nn.Conv2d(3, 4, 3, padding=1),
        c2=nn.Conv2d(4, 4, 3, padding=1),
        bn=nn.BatchNorm2d(4),
        gn=nn.GroupNorm(2, 8),
        fc=nn.Linear(8, 4),
    )


# (name, model factory, example inputs): a plain list.
ZOO: list[tuple[str, Any, tuple]] = [
    (
        "conv2d relu",
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv2d(3, 4, 3)),
        (r(1, 3, 8, 8),),
    ),
    ("conv1d relu6", lambda: Fn(lambda s, x: F.relu6(s.c(x)), c=nn.Conv1d(4, 4, 3)), (r(1, 4, 8),)),
    (
        "linear hardtanh -1..1",
        lambda: Fn(lambda s, x: F.hardtanh(s.l(x)), l=nn.Linear(8, 8)),
        (r(2, 8),),
    ),
    (
        "linear linear",
        lambda: Fn(lambda s, x: s.b(s.a(x).view(2, 8)), a=nn.Linear(8, 8), b=nn.Linear(8, 8)),
        (r(2, 8),),
    ),
    (
        "two inputs",
        lambda: Fn(lambda s, x, y: torch.bmm(x, y).sum(-1) / y.sum(-1)),
        (r(2, 4, 4),) * 2,
    ),
    ("shared pair", lambda: Fn(lambda s, x, y: (x - y) * y * 2.0), (r(2, 8), r(2, 8))),
    ("rsub", lambda: Fn(lambda s, x: 1 - torch.tanh(x)), (r(2, 8),)),
    ("add tensors", lambda: Fn(lambda s, x, y: (x + y) + y), (r(2, 8), r(2, 8))),
    ("add scalar", lambda: Fn(lambda s, x: x + 1.5), (r(2, 8),)),
    ("add scalar after op", lambda: Fn(lambda s, x: torch.tanh(x) + 1.5), (r(2, 8),)),
    ("add int", lambda: Fn(lambda s, x: torch.tanh(x) + 2), (r(2, 8),)),
    ("add dropout", lambda: Fn(lambda s, x, y: F.dropout(x, 0.0, True) + y), (r(2, 8), r(2, 8))),
    (
        "add softmax",
        lambda: Fn(lambda s, x, y: torch.softmax(torch.tanh(x) + y, -1)),
        (r(2, 8), r(2, 8)),
    ),
    ("softmax of input", lambda: Fn(lambda s, x: F.log_softmax(x, -1)), (r(2, 8),)),
    (
        "shared chain",
        lambda: Fn(
            lambda s, x: torch.sqrt(x.abs()).permute(1, 0).reshape(4, 4).unsqueeze(0).squeeze(0)
        ),
        (r(2, 8),),
    ),
    ("shared of input", lambda: Fn(lambda s, x: x.transpose(0, 1).flatten()), (r(2, 8),)),
    ("index", lambda: Fn(lambda s, x, i: torch.tanh(x)[i]), (r(4, 8), torch.tensor([0, 2]))),
    (
        "index_put",
        lambda: Fn(lambda s, x, v: x.index_put((torch.tensor([0, 1]),), torch.tanh(v))),
        (r(4, 8), r(2, 8)),
    ),
    ("unbind", lambda: Fn(lambda s, x: sum(torch.unbind(torch.tanh(x), 0))), (r(3, 8),)),
    (
        "cat stack",
        lambda: Fn(lambda s, x, y: torch.stack([torch.cat([x, y]), torch.cat([y, x])])),
        (r(2, 8),) * 2,
    ),
    ("rms_norm", lambda: Fn(lambda s, x: s.n(x), n=nn.RMSNorm(8)), (r(2, 8),)),
    ("sigmoid", lambda: Fn(lambda s, x: torch.sigmoid(torch.tanh(x))), (r(2, 8),)),
    ("cnn", _cnn, (r(1, 3, 8, 8),)),
    ("transformer block", _block, (torch.tensor([[1, 5, 7, 2, 9, 3]]),)),
]


def _params(**kw: Any) -> Any:
    def setup(q: Any) -> Any:
        from executorch.backends.samsung.quantizer.qconfig import Precision

        q.setup_quant_params(Precision.A8W8, **kw)
        return q

    return setup


def _unquantize_tanh(gm: torch.fx.GraphModule) -> None:
    """A custom annotation: tanh's output left float."""
    for n in gm.graph.nodes:
        if n.target == torch.ops.aten.tanh.default and "quantization_annotation" in n.meta:
            n.meta["quantization_annotation"].output_qspec = None


def _custom(q: Any) -> Any:
    q.add_custom_quant_annotations([_unquantize_tanh])
    return q


# name -> fn(quantizer) -> the quantizer configured.
SETUPS: dict[str, Any] = {
    "default": lambda q: q,
    "per_tensor": _params(is_per_channel=False),
    "qat": _params(is_qat=True),
    "custom": _custom,
}
