"""The generated XNNPACK-ExecuTorch quantizer configures as ExecuTorch's XNNPACKQuantizer does.

Each case exports a small model, runs ``prepare_pt2e`` (``prepare_qat_pt2e``
for the QAT cases) with ExecuTorch 1.5.1's ``XNNPACKQuantizer`` and with the
generated class, both configured the same way, and compares the annotations
node by node right after ``annotate``. The cases are the ones issue 23 found
different before the spec said so:

* fp16 cat and adaptive pooling (``pt2e: {any_float: true}``);
* ``set_operator_type``, which selects pattern groups by overload in
  ExecuTorch (``operator_type: patterns``, ``pt2e: {operator_types: [...]}``);
* conv + batch norm under ``prepare_qat_pt2e`` with a non-QAT or a dynamic QAT
  config (``pt2e: {qat: required_if_dynamic}``), judged by its conv alone
  (``pt2e: {scope: first_op}``);
* cat, which ExecuTorch annotates with every config in turn wherever it is
  (``pt2e: {scope: none}``).

Annotation only (no calibration): about 10 s in all.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("executorch", reason="ExecuTorch comparisons need '.[executorch]'")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from .pt2e_support import differences, recording  # noqa: E402


def _config(**kw: Any) -> Any:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
    )

    return get_symmetric_quantization_config(**kw)


def _quantizers() -> tuple[Any, Any]:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer

    from generated.xnnpack_executorch_quantizer import XnnpackExecutorchQuantizer

    return XNNPACKQuantizer(), XnnpackExecutorchQuantizer()


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., Any], **mods: nn.Module) -> None:
        super().__init__()
        for k, v in mods.items():
            setattr(self, k, v)
        self.fn = fn

    def forward(self, *xs: Any) -> Any:
        return self.fn(self, *xs)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.l(x), x], 1)


def _annotations(model: nn.Module, args: tuple, setup: Callable[[Any], Any], qat: bool) -> tuple:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

    torch.manual_seed(0)
    model.train(qat)
    gm = torch.export.export(model, args, strict=True).module()
    dumps = []
    for q in _quantizers():
        rec = recording(setup(q))
        (prepare_qat_pt2e if qat else prepare_pt2e)(copy.deepcopy(gm), rec)
        dumps.append(rec.dump)
    return tuple(dumps)


x8 = (torch.randn(2, 8),)
x4 = (torch.randn(2, 4, 8, 8),)
x3 = (torch.randn(2, 4, 8),)


def PC() -> Any:
    return _config(is_per_channel=True)


def PT() -> Any:
    return _config(is_per_channel=False)


def linear_relu() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU())


def convs() -> nn.Module:
    return Fn(
        lambda s, x: s.c1(s.c2(x).flatten(2)).relu(), c2=nn.Conv2d(4, 4, 1), c1=nn.Conv1d(4, 4, 1)
    )


# name: (model, args, configure, QAT)
CASES: dict[str, tuple[Callable[[], nn.Module], tuple, Callable[[Any], Any], bool]] = {
    # (a) fp16 cat and pool; cat with every config, anywhere
    "fp16_cat": (
        lambda: Fn(lambda s, x: torch.cat([x.half(), x.half() * 2], 1)),
        x8,
        lambda q: q.set_global(PC()),
        False,
    ),
    "fp16_adaptive_pool": (
        lambda: Fn(lambda s, x: s.g(x.half()), g=nn.AdaptiveAvgPool2d(1)),
        x4,
        lambda q: q.set_global(PC()),
        False,
    ),
    "cat_outside_module_name": (
        lambda: Fn(lambda s, x: torch.cat([s.a(x), x], 1), a=nn.Linear(8, 8)),
        x8,
        lambda q: q.set_module_name("a", PC()),
        False,
    ),
    "cat_in_module_type_none": (
        lambda: Fn(lambda s, x: s.b(x) + 1, b=Block()),
        x8,
        lambda q: q.set_module_type(Block, None).set_global(PC()),
        False,
    ),
    "cat_filter_rejects_it": (
        lambda: Fn(
            lambda s, x: torch.cat([s.a(x), s.b(x)], 1), a=nn.Linear(8, 8), b=nn.Linear(8, 8)
        ),
        x8,
        lambda q: q.set_global(PC()).set_filter_function(
            lambda n: n.target != torch.ops.aten.cat.default
        ),
        False,
    ),
    "cat_before_global_linear": (
        lambda: Fn(
            lambda s, x: torch.cat([x, s.b(x)], 1) + s.a(x).sum(),
            a=nn.Linear(8, 8),
            b=nn.Linear(8, 8),
        ),
        x8,
        lambda q: q.set_module_name("a", PC()).set_global(PC()),
        False,
    ),
    # (b) set_operator_type selects pattern groups
    "op_conv1d_selects_conv2d": (
        convs,
        x4,
        lambda q: q.set_operator_type(torch.ops.aten.conv1d.default, PC()),
        False,
    ),
    "op_convolution": (
        convs,
        x4,
        lambda q: q.set_operator_type(torch.ops.aten.convolution.default, PC()),
        False,
    ),
    "op_relu_selects_nothing": (
        linear_relu,
        x8,
        lambda q: q.set_operator_type(torch.ops.aten.relu.default, PT()).set_global(PC()),
        False,
    ),
    "op_packet_selects_nothing": (
        linear_relu,
        x8,
        lambda q: q.set_operator_type(torch.ops.aten.linear, PT()).set_global(PC()),
        False,
    ),
    "op_none_then_global": (
        linear_relu,
        x8,
        lambda q: q.set_operator_type(torch.ops.aten.linear.default, None).set_global(PC()),
        False,
    ),
    "op_conv2d_selects_conv3d": (
        lambda: nn.Sequential(nn.Conv3d(4, 4, 1)),
        (torch.randn(1, 4, 4, 4, 4),),
        lambda q: q.set_operator_type(torch.ops.aten.conv2d.default, PC()),
        False,
    ),
    "op_conv3d_selects_nothing": (
        lambda: nn.Sequential(nn.Conv3d(4, 4, 1)),
        (torch.randn(1, 4, 4, 4, 4),),
        lambda q: q.set_operator_type(torch.ops.aten.conv3d.default, PC()),
        False,
    ),
    "op_add_inplace_selects_nothing": (
        lambda: Fn(lambda s, x: s.c(x).add_(x), c=nn.Conv2d(4, 4, 1)),
        x4,
        lambda q: q.set_operator_type(torch.ops.aten.add_.Tensor, PC()),
        False,
    ),
    # (c) conv + batch norm under prepare_qat_pt2e
    "qat_graph_ptq_config_conv_bn": (
        lambda: nn.Sequential(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU()),
        x4,
        lambda q: q.set_global(PC()),
        True,
    ),
    "qat_dynamic_conv1d_bn": (
        lambda: nn.Sequential(nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4)),
        x3,
        lambda q: q.set_global(_config(is_per_channel=True, is_qat=True, is_dynamic=True)),
        True,
    ),
    "qat_filter_rejects_batch_norm": (
        lambda: nn.Sequential(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU()),
        x4,
        lambda q: q.set_global(_config(is_per_channel=True, is_qat=True)).set_filter_function(
            lambda n: "BatchNorm" not in str(n.meta.get("nn_module_stack", ""))
        ),
        True,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_annotates_as_executorch(name: str) -> None:
    make, args, setup, qat = CASES[name]
    ref, new = _annotations(make(), args, setup, qat)
    assert differences(ref, new) == []


def test_a_difference_is_seen() -> None:
    """The comparison can fail: a global config against none differs node by node."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    gm = torch.export.export(linear_relu().eval(), x8, strict=True).module()
    et, gen = _quantizers()
    a, b = recording(et.set_global(PC())), recording(gen)
    prepare_pt2e(copy.deepcopy(gm), a)
    prepare_pt2e(copy.deepcopy(gm), b)
    assert differences(a.dump, b.dump)
