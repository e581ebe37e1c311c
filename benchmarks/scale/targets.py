"""The targets table: each shipped PT2E target, the hand-written class it replaces, the config.

One row a target. A later target (ExecuTorch's Cortex-M or Arm quantizers) is
one more row: the generated module and class, the hand-written class's module
and name, and the module and function giving the config both are set up with.
A hand-written class too slow for the large graphs (ExecuTorch's XNNPACK
quantizer, about 20 s for 1,000 nodes) is stopped by the benchmark's time limit.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    name: str  # the generated module, generated/<name>_quantizer.py
    generated: str  # its class
    reference: str  # "module:Class" of the hand-written quantizer
    config: str  # "module:function" giving the quantization config, called without arguments

    def generated_class(self, package: str) -> Any:
        return getattr(importlib.import_module(f"{package}.{self.name}_quantizer"), self.generated)

    def reference_class(self) -> Any:
        return _load(self.reference)

    def make_config(self) -> Any:
        return _load(self.config)()


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


_TORCHAO_X86 = "torchao.quantization.pt2e.quantizer.x86_inductor_quantizer"
_TORCHAO_ARM = "torchao.quantization.pt2e.quantizer.arm_inductor_quantizer"
_TORCHAO_XNNPACK = "torchao.testing.pt2e._xnnpack_quantizer"
_ET_XNNPACK = "executorch.backends.xnnpack.quantizer.xnnpack_quantizer"

TARGETS = (
    Target(
        "xnnpack",
        "XnnpackQuantizer",
        f"{_TORCHAO_XNNPACK}:XNNPACKQuantizer",
        f"{_TORCHAO_XNNPACK}:get_symmetric_quantization_config",
    ),
    Target(
        "xnnpack_executorch",
        "XnnpackExecutorchQuantizer",
        f"{_ET_XNNPACK}:XNNPACKQuantizer",
        f"{_ET_XNNPACK}:get_symmetric_quantization_config",
    ),
    Target(
        "x86_inductor",
        "X86InductorQuantizer",
        f"{_TORCHAO_X86}:X86InductorQuantizer",
        f"{_TORCHAO_X86}:get_default_x86_inductor_quantization_config",
    ),
    Target(
        "arm_inductor",
        "ArmInductorQuantizer",
        f"{_TORCHAO_ARM}:ArmInductorQuantizer",
        f"{_TORCHAO_ARM}:get_default_arm_inductor_quantization_config",
    ),
)
