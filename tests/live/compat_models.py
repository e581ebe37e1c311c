"""Small models and QConfigMappings the ``bcfg compat`` tests judge and compare with prepare_fx.

Each model exercises a part of prepare's decision: fusion (conv-bn-relu,
linear-relu), functional ops with weights as graph inputs, fixed-qparams ops
(sigmoid, tanh), reuse-input ops (reshape), ops no backend has a pattern
for (cumsum), ops without Tensor inputs (size), weight-only embeddings,
dynamic LSTMs, ops inside a non-leaf module (the enclosing module's
object_type), and unfused multi-node patterns (F.linear then F.relu).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization import (
    QConfig,
    QConfigMapping,
    get_default_qat_qconfig_mapping,
    get_default_qconfig_mapping,
)
from torch.ao.quantization.observer import HistogramObserver, MinMaxObserver
from torch.ao.quantization.qconfig import (
    default_dynamic_qconfig,
    default_qconfig,
    default_symmetric_qnnpack_qconfig,
    float16_dynamic_qconfig,
)


class ConvBnReluLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.linear = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.bn(self.conv(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.linear(x)


class Mixed(nn.Module):
    """A functional linear with its weight as a graph input, fixed-qparams ops, reshape,
    an op without a pattern (cumsum), a max pool on the graph input, cat, size."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16))
        self.b = nn.Parameter(torch.randn(16))
        self.lin = nn.Linear(16, 16)
        self.pool = nn.MaxPool1d(2)
        self.sub = nn.Sequential(nn.Linear(16, 16), nn.ReLU())

    def forward(self, x: torch.Tensor) -> Any:
        p = self.pool(x.unsqueeze(1)).squeeze(1)
        y = F.linear(x, self.w, self.b)
        y = torch.sigmoid(y) + torch.tanh(self.lin(x))
        z = torch.cumsum(y, 1)
        z = self.sub(z).reshape(-1, 16)
        z = torch.cat([z, y], 1)
        return z + x.size(0), p


class Block(nn.Module):
    """A non-leaf module: its functions take the QConfig of object_type[Block]."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.add(self.fc(x), x)


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(F.linear(x, self.w))  # an unfused two-node pattern (F.linear, F.relu)
        return torch.add(self.block(x), x)


class Emb(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.fc = nn.Linear(8, 8)

    def forward(self, i: torch.Tensor) -> torch.Tensor:
        return self.fc(self.emb(i))


class Lstm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 8)
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.fc(y)


class Transposed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 2)
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(self.up(x)))


ModelMaker = Callable[[], tuple[nn.Module, tuple[Any, ...]]]

MODELS: dict[str, ModelMaker] = {
    "conv_bn_relu_linear": lambda: (ConvBnReluLinear().eval(), (torch.randn(2, 3, 8, 8),)),
    "mixed": lambda: (Mixed().eval(), (torch.randn(4, 16),)),
    "outer": lambda: (Outer().eval(), (torch.randn(2, 8),)),
    "embedding": lambda: (Emb().eval(), (torch.randint(0, 10, (3,)),)),
    "lstm": lambda: (Lstm().eval(), (torch.randn(2, 3, 8),)),
    "transposed": lambda: (Transposed().eval(), (torch.randn(1, 3, 4, 4),)),
    "between": lambda: (Between().eval(), (torch.randn(2, 2, 8),)),
}

QINT8 = QConfig(
    activation=HistogramObserver.with_args(dtype=torch.qint8),
    weight=MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
)


class Between(nn.Module):
    """Ops a backend may have no pattern for, between quantized ops: a copy op (flatten), a
    module (ReLU), cat of two quantized outputs; and such ops that are not between two: two
    shape ops in a row, one whose only consumer is the model's output."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(16, 16)
        self.relu = nn.ReLU()
        self.c = nn.Linear(16, 8)
        self.e = nn.Linear(8, 8)
        self.d = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> Any:
        y = torch.flatten(self.a(x), 1)
        z = self.c(self.relu(self.b(y))).reshape(2, 4, 2).reshape(2, 8)
        w = torch.cat([self.e(z), self.e(z)], 1)
        return self.d(w), torch.flatten(self.e(z), 0)


def overrides() -> QConfigMapping:
    """The default x86 mapping with entries of every other kind, including None."""
    return (
        get_default_qconfig_mapping("x86")
        .set_object_type(torch.cumsum, default_qconfig)
        .set_object_type(Block, QINT8)
        .set_object_type(F.relu, None)
        .set_module_name("sub.1", None)
        .set_module_name_regex("li.*", QINT8)
        .set_module_name_object_type_order("", F.linear, 0, default_dynamic_qconfig)
    )


MAPPINGS: dict[str, Callable[[], QConfigMapping]] = {
    "default": lambda: get_default_qconfig_mapping("x86"),
    "default_qnnpack": lambda: get_default_qconfig_mapping("qnnpack"),
    "symmetric_qnnpack": lambda: QConfigMapping().set_global(default_symmetric_qnnpack_qconfig),
    "qint8": lambda: QConfigMapping().set_global(QINT8),
    "dynamic": lambda: QConfigMapping().set_global(default_dynamic_qconfig),
    "fp16_dynamic": lambda: QConfigMapping().set_global(float16_dynamic_qconfig),
    "overrides": overrides,
}


def default_for(backend: str) -> QConfigMapping:
    """torch's default PTQ mapping for a backend it has one for (x86 for the others)."""
    name = backend if backend in ("x86", "fbgemm", "qnnpack", "onednn") else "x86"
    return get_default_qconfig_mapping(name)


def qat_default_for(backend: str) -> QConfigMapping:
    name = backend if backend in ("x86", "fbgemm", "qnnpack", "onednn") else "x86"
    return get_default_qat_qconfig_mapping(name)
