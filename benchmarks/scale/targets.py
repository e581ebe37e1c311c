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
    # "module:Class" of the class that stands in for the reference (default: ``generated`` of
    # generated/<name>_quantizer.py); a wrapper taking the reference's arguments
    stands_in: str = ""
    # "function" of this module that makes a configured quantizer of a class (default: the
    # class called without arguments, set_global(config))
    setup: str = ""
    env: str = ""  # the environment the reference imports in (tests/live/envs.py)
    # Whether prepare_pt2e is timed: not for the Arm classes, whose transform_for_annotation
    # runs ExecuTorch's passes in C++, where the time limit's signal aborts the process.
    prepare: bool = True
    # Whether each annotate gets a new quantizer (untimed): ExecuTorch's composable classes
    # keep the last annotate's annotations and refuse a graph whose annotations were cleared.
    fresh: bool = False
    # Whether it annotates a strict export of each model (a graph of its own), as its flow
    # exports: its patterns match source partitions, which a non-strict export does not
    # record (ExecuTorch's Cadence quantizer and its stand-in annotate nothing there).
    strict: bool = False

    def generated_class(self, package: str) -> Any:
        if self.stands_in:
            return _load(self.stands_in)
        return getattr(importlib.import_module(f"{package}.{self.name}_quantizer"), self.generated)

    def reference_class(self) -> Any:
        return _load(self.reference)

    def make_config(self) -> Any:
        return _load(self.config)()

    def make(self, cls: Any) -> Any:
        """A quantizer of ``cls`` (the generated class or the reference), configured."""
        if self.setup:
            return globals()[self.setup](cls, self)
        return cls().set_global(self.make_config())

    def available(self) -> bool:
        """Whether the reference imports here (the Arm and Cadence ones only in their
        environments)."""
        try:
            self.reference_class()
            self.generated_class("generated")
        except ImportError:
            return False
        return True


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _no_config(cls: Any, target: Target) -> Any:
    """The class as ExecuTorch's flow makes it: no arguments, its own configs."""
    return cls()


def _tosa(cls: Any, target: Target) -> Any:
    """A TOSA quantizer for the TOSA-1.0+INT profile, ExecuTorch's symmetric config globally."""
    spec = _load("executorch.backends.arm.tosa:TosaSpecification")
    return cls(spec.create_from_string("TOSA-1.0+INT")).set_global(target.make_config())


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
    Target(
        "cortex_m",
        "CortexMQuantizer",
        "executorch.backends.cortex_m.quantizer.quantizer:CortexMQuantizer",
        "",
        setup="_no_config",
        env="arm",
        prepare=False,
        fresh=True,
    ),
    Target(
        "arm_tosa",
        "TOSAQuantizer",
        "executorch.backends.arm.quantizer:TOSAQuantizer",
        "executorch.backends.arm.quantizer:get_symmetric_quantization_config",
        setup="_tosa",
        env="arm",
        prepare=False,
        fresh=True,
    ),
    Target(
        "cadence",
        "CadenceQuantizer",
        "executorch.backends.cadence.aot.quantizer.quantizer:CadenceDefaultQuantizer",
        "",
        stands_in="generated.cadence_quantizer:CadenceDefaultQuantizer",
        setup="_no_config",
        env="cadence",
        fresh=True,
        strict=True,
    ),
)
