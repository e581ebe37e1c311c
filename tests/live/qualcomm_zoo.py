"""Models for ExecuTorch's QnnQuantizer against generated/qualcomm_quantizer.py's.

    python -m tests.live.vendor_zoo qualcomm [MODEL ...]

Each kind of Qualcomm's annotation (one input and output, two, one input only, ops
sharing their input's spec, constants, getitem, split and unbind, conv and linear,
scatter, where and masked_fill, matmul, the norms, sigmoid's and tanh's fixed qparams,
cat's ConcatObserver, stack, index_copy and index_put, embedding, topk and sort,
slice_scatter; leaky_relu rewritten to prelu by Qualcomm's passes; infinities replaced
by the quantized range) in small and mixed models; for each backend (HTP, and LPAI with
its own registry), under each of the eight QuantDtype schemes, per-channel convs, linears
and embeddings, QAT (conv and batch norm as one partition), a block size by node name, a
submodule's config, a custom annotation and discarded nodes and ops. Qualcomm's modules
are imported with ``QNN_SDK_ROOT`` set empty
(else building the class tries to download the QNN SDK).
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

from tests.live.pt2e_support import Fn


def install() -> None:
    """``QNN_SDK_ROOT`` set (empty unless it is): Qualcomm's modules then build a QnnQuantizer
    without downloading the QNN SDK (its op constraints are then not checked, on either side)."""
    os.environ.setdefault("QNN_SDK_ROOT", "")


install()

F = nn.functional
r = torch.randn


def _cnn() -> nn.Module:
    def fwd(s: Any, x: torch.Tensor) -> Any:
        y = F.relu(s.bn(s.c1(x)))
        y = F.hardtanh(s.c2(y), 0.0, 6.0)
        y = torch.cat([F.max_pool2d(y, 2), F.avg_pool2d(y, 2)], 1)
        y = F.hardswish(s.gn(y))
        y = F.pixel_shuffle(s.t(y), 2)
        return s.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))

    return Fn(
        fwd,
        c1=nn.Conv2d(3, 4, 3, padding=1),
        bn=nn.BatchNorm2d(4),
        c2=nn.Conv2d(4, 4, 3, padding=1, bias=False),
        gn=nn.GroupNorm(2, 8),
        t=nn.ConvTranspose2d(8, 8, 2),
        fc=nn.Linear(2, 4),
    )


def _block() -> nn.Module:
    def fwd(s: Any, ids: torch.Tensor) -> Any:
        x = s.emb(ids)
        q, k, v = (t.view(1, 6, 2, 4).transpose(1, 2) for t in (s.q(x), s.k(x), s.v(x)))
        mask = torch.triu(torch.ones(6, 6, dtype=torch.bool), 1)
        scores = (q @ k.transpose(-1, -2) / 2.0).masked_fill(mask, float("-inf"))
        a = torch.softmax(scores, -1) @ v
        x = s.ln(x + s.o(a.transpose(1, 2).reshape(1, 6, 8)))
        h = F.gelu(s.up(x)) * torch.sigmoid(s.gate(x))
        return s.rms(x + s.down(h))

    mods = {n: nn.Linear(8, 8) for n in ("q", "k", "v", "o", "up", "gate", "down")}
    return Fn(fwd, emb=nn.Embedding(16, 8), ln=nn.LayerNorm(8), rms=nn.RMSNorm(8), **mods)


# (name, model factory, example inputs): a plain list.
ZOO: list[tuple[str, Any, tuple]] = [
    (
        "conv2d relu",
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv2d(3, 4, 3)),
        (r(1, 3, 8, 8),),
    ),
    (
        "conv bn",
        lambda: Fn(
            lambda s, x: s.bn(s.c(x)), c=nn.Conv2d(3, 4, 3, bias=False), bn=nn.BatchNorm2d(4)
        ),
        (r(1, 3, 8, 8),),
    ),
    (
        "conv1d sigmoid",
        lambda: Fn(lambda s, x: torch.sigmoid(s.c(x)), c=nn.Conv1d(4, 4, 3)),
        (r(1, 4, 8),),
    ),
    ("linear tanh", lambda: Fn(lambda s, x: torch.tanh(s.l(x)), l=nn.Linear(8, 8)), (r(2, 8),)),
    ("binary", lambda: Fn(lambda s, x, y: torch.maximum(x * y - y, x) + 1.0), (r(2, 8), r(2, 8))),
    ("div", lambda: Fn(lambda s, x, y: x / y / 4.0), (r(2, 8), r(2, 8))),
    ("matmul", lambda: Fn(lambda s, x, y: torch.bmm(x, y).sum(-1)), (r(2, 4, 4), r(2, 4, 4))),
    ("argmax max", lambda: Fn(lambda s, x: (x.argmax(-1), x.max(-1).values)), (r(2, 8),)),
    (
        "shared chain",
        lambda: Fn(
            lambda s, x: torch.sqrt(x.abs())
            .permute(1, 0)
            .reshape(4, 4)
            .unsqueeze(0)
            .expand(2, 4, 4)
        ),
        (r(2, 8),),
    ),
    ("shared of input", lambda: Fn(lambda s, x: x.transpose(0, 1).flatten()), (r(2, 8),)),
    ("leaky_relu", lambda: Fn(lambda s, x: F.leaky_relu(x, 0.1) * 2), (r(2, 8),)),
    ("hardsigmoid", lambda: Fn(lambda s, x: F.hardsigmoid(torch.tanh(x))), (r(2, 8),)),
    (
        "split unbind",
        lambda: Fn(lambda s, x: sum(torch.unbind(x.chunk(2)[0], 0)) + x.split(1)[1]),
        (r(2, 8),),
    ),
    (
        "cat stack",
        lambda: Fn(lambda s, x, y: torch.stack([torch.cat([x, y]), torch.cat([y, torch.tanh(x)])])),
        (r(2, 8),) * 2,
    ),
    ("topk sort", lambda: Fn(lambda s, x: x.topk(3).values + x.sort(-1).values[:, :3]), (r(2, 8),)),
    ("where", lambda: Fn(lambda s, x, y: torch.where(x > y, x, y)), (r(2, 8), r(2, 8))),
    ("constants", lambda: Fn(lambda s, x: x + torch.arange(8.0) + torch.ones(8)), (r(2, 8),)),
    (
        "index",
        lambda: Fn(lambda s, x, i: torch.tanh(x)[i] + x.index_select(0, i)),
        (r(4, 8), torch.tensor([0, 2])),
    ),
    (
        "index_put copy",
        lambda: Fn(
            lambda s, x, v: x.index_put((torch.tensor([0, 1]),), torch.tanh(v)).index_copy(
                0, torch.tensor([2]), v[:1]
            )
        ),
        (r(4, 8), r(2, 8)),
    ),
    (
        "scatter",
        lambda: Fn(
            lambda s, x, v: x.scatter(1, torch.tensor([[0, 1]]), v).slice_scatter(v, 1, 0, 2)
        ),
        (r(1, 8), r(1, 2)),
    ),
    (
        "norms",
        lambda: Fn(lambda s, x: s.rms(s.ln(x)), ln=nn.LayerNorm(8), rms=nn.RMSNorm(8)),
        (r(2, 8),),
    ),
    (
        "norms unweighted",
        lambda: Fn(
            lambda s, x: s.rms(s.ln(x)),
            ln=nn.LayerNorm(8, elementwise_affine=False),
            rms=nn.RMSNorm(8, elementwise_affine=False),
        ),
        (r(2, 8),),
    ),
    (
        "instance norm",
        lambda: Fn(lambda s, x: s.n(x), n=nn.InstanceNorm2d(4, affine=True)),
        (r(1, 4, 4, 4),),
    ),
    ("cnn", _cnn, (r(1, 3, 8, 8),)),
    ("transformer block", _block, (torch.tensor([[1, 5, 7, 2, 9, 3]]),)),
]


def _dtype(name: str, qat: bool = False, **kw: Any) -> Any:
    def setup(q: Any) -> Any:
        from executorch.backends.qualcomm.quantizer.quantizer import QuantDtype

        q.set_default_quant_config(getattr(QuantDtype, name), is_qat=qat, **kw)
        return q

    return setup


def _then(*setups: Any) -> Any:
    def setup(q: Any) -> Any:
        for s in setups:
            q = s(q) or q
        return q

    return setup


def _blocks(q: Any) -> Any:
    q.set_block_size_map({"linear": (1, 4), "conv2d": (1, 1, 1, 1)})
    return q


def _submodule(q: Any) -> Any:
    from executorch.backends.qualcomm.quantizer import quantizer as qnn

    ModuleQConfig, QuantDtype = qnn.ModuleQConfig, qnn.QuantDtype
    get_submodule_name_predicate = qnn.get_submodule_name_predicate

    q.set_submodule_qconfig_list([(get_submodule_name_predicate("fc"), ModuleQConfig(QuantDtype.use_16a8w))])  # fmt: skip
    return q


def _custom(q: Any) -> Any:
    """Samsung's zoo's custom annotation (tanh's output left float), nodes and ops discarded."""
    from tests.live.samsung_zoo import _unquantize_tanh

    q.add_custom_quant_annotations([_unquantize_tanh])
    q.add_discard_nodes(["relu", "cat"])
    q.add_discard_ops([torch.ops.aten.sigmoid.default, torch.ops.aten.add.Tensor])
    return q


SCHEMES = ("16a16w", "16a8w", "16a4w", "16a4w_block", "8a8w", "8a4w", "fp16a8w", "16a2w")


def _lpai(q: Any) -> Any:
    """A quantizer of the same class for Qualcomm's LPAI backend (its own registry)."""
    from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchBackendType

    return type(q)(backend=QnnExecuTorchBackendType.kLpaiBackend)


# name -> fn(quantizer) -> the quantizer configured.
HTP: dict[str, Any] = {
    "default": lambda q: q,
    **{s: _dtype(f"use_{s}") for s in SCHEMES},
    "8a8w per channel": _dtype("use_8a8w", is_conv_per_channel=True, is_linear_per_channel=True, is_embedding_per_channel=True),  # fmt: skip
    "16a4w per channel": _dtype("use_16a4w", is_conv_per_channel=True, is_linear_per_channel=True),  # fmt: skip
    "8a8w qat": _dtype("use_8a8w", qat=True, is_conv_per_channel=True),
    "16a4w qat": _dtype("use_16a4w", qat=True),
    "16a4w_block blocks": _then(_dtype("use_16a4w_block", is_conv_per_channel=True, is_linear_per_channel=True), _blocks),  # fmt: skip
    "submodule": _then(_dtype("use_8a8w"), _submodule),
    "custom discard": _then(_dtype("use_8a8w", act_symmetric=True), _custom),
}
# Each setup for HTP (the default backend), then for LPAI.
SETUPS: dict[str, Any] = {**HTP, **{f"lpai {k}": _then(_lpai, v) for k, v in HTP.items()}}
