"""Quantize a small CNN for the npu backend (specs/npu.bcfg) with FX graph mode quantization.

Run ``python npu_example.py`` from this folder, after ``bcfg generate``.
``bcfg compat`` loads ``model`` and the mappings from here (this module is on
the allow-list in pyproject.toml):

    bcfg compat npu --qconfig-mapping npu_example:npu_qconfig_mapping --model npu_example:model
"""

from __future__ import annotations

import copy
import warnings
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torch.ao.quantization import QConfig, QConfigMapping
from torch.ao.quantization.observer import HistogramObserver, MinMaxObserver

if TYPE_CHECKING:
    from torchao.quantization.pt2e.quantizer import QuantizationConfig


class SmallNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.conv1(x))
        x = self.relu2(self.conv2(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def model() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The float model and example inputs (what ``bcfg compat --model`` asks for)."""
    torch.manual_seed(0)
    return SmallNet().eval(), (torch.randn(1, 3, 16, 16),)


class ResidualNet(nn.Module):
    """SmallNet with a residual connection: what the npu runs, and an add it does not."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv1(x))
        y = F.relu(self.conv2(y)) + y
        x = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.fc(x)


def residual_model() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """ResidualNet and example inputs (the PT2E guide's model that is not all quantized)."""
    torch.manual_seed(0)
    return ResidualNet().eval(), (torch.randn(1, 3, 16, 16),)


def npu_qconfig_mapping() -> QConfigMapping:
    """A QConfigMapping the npu backend honours.

    Activations: quint8 in 0..127 with eps (FX's name for the smallest scale)
    at least 2**-10. Weights: symmetric qint8 in -127..127.
    """
    qconfig = QConfig(
        activation=HistogramObserver.with_args(
            dtype=torch.quint8, quant_min=0, quant_max=127, eps=2**-10
        ),
        weight=MinMaxObserver.with_args(
            dtype=torch.qint8, qscheme=torch.per_tensor_symmetric, quant_min=-127, quant_max=127
        ),
    )
    return QConfigMapping().set_global(qconfig)


def npu_quantization_config() -> QuantizationConfig:
    """The same fit for the PT2E quantizer (generated/npu_quantizer.py): torchao's terms.

    ``bcfg compat npu --quantization-config npu_example:npu_quantization_config
    --model npu_example:model`` says, op by op, what it quantizes and why not.
    """
    from torchao.quantization.pt2e import HistogramObserver, MinMaxObserver
    from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec

    act = QuantizationSpec(
        dtype=torch.uint8,
        observer_or_fake_quant_ctr=HistogramObserver.with_args(eps=2**-10),
        quant_min=0,
        quant_max=127,
        qscheme=torch.per_tensor_affine,
    )
    weight = QuantizationSpec(
        dtype=torch.int8,
        observer_or_fake_quant_ctr=MinMaxObserver,
        quant_min=-127,
        quant_max=127,
        qscheme=torch.per_tensor_symmetric,
    )
    return QuantizationConfig(act, act, weight, None)


def main() -> None:
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    from generated import get_npu_backend_config

    # torch.ao.quantization and its quantized dtypes are deprecated (torchao is their
    # successor); torch says so on every call. This example quiets those notices.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions")
    float_model, example_inputs = model()
    backend_config = get_npu_backend_config()
    prepared = prepare_fx(
        copy.deepcopy(float_model),
        npu_qconfig_mapping(),
        example_inputs,
        backend_config=backend_config,
    )
    with torch.no_grad():  # calibration: the observers record activation ranges
        for _ in range(8):
            prepared(torch.randn(8, 3, 16, 16))
    quantized = convert_fx(prepared, backend_config=backend_config)
    for name in ("conv1", "conv2", "fc"):
        cls = type(getattr(quantized, name))
        print(f"{name}: {cls.__module__.partition('.modules')[0]}.{cls.__name__}")
    x = torch.randn(64, 3, 16, 16)
    with torch.no_grad():
        reference, result = float_model(x), quantized(x)
    error = (result - reference).abs().max().item()
    largest = reference.abs().max().item()
    print(f"largest difference from the float model: {error:.4f} (outputs up to {largest:.2f})")


if __name__ == "__main__":
    main()
