"""The target registry: one row a shipped PT2E target, read by everything that covers targets.

A row says what the target is (its spec and generated class), what it reproduces (the
hand-written reference class and the config both are set up with), where that reference
imports (``env``: an environment of ``tests/live/envs.py``), the zoo of models it is
recorded and compared on, the shipped suites swapped for it in the full tier and its docs
page. Read by:

- ``python -m tests.record`` (recordings: the zoo exported, the reference's annotations, a
  deploy target's deployments), and ``tests/test_conformance.py``, which compares the
  generated class against them;
- the benchmarks (``benchmarks/scale/targets.py`` re-exports ``TARGETS``);
- the swap harness (``tests/live/executorch_swap.py``: ``swap``, the classes replaced)
  and ``tests/live/envs.py``'s ``TARGET_ENV``;
- the size count (``tests/reference/size.py``: ``spec``, ``hooks``).

Adding a target is a row here, its spec (and hooks) and its zoo list (a ``zoo`` function
below, or one of the existing zoos), then ``python -m tests.record NAME``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Target:
    name: str  # the generated module, generated/<name>_quantizer.py (and specs/<name>.bcfg)
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
    # "function" of this module: the zoo the target is recorded and compared on,
    # name -> (model, its inputs), each model in the mode it is quantized in.
    zoo: str = ""
    # Whether its zoo is recorded strictly exported (default: ``strict``; a transformed
    # target's always is, as ExecuTorch's Arm flow exports). torchao's Inductor classes:
    # strict, where they raise on no zoo model (non-strict, X86 raises on a module called
    # twice in a fusion, the generated class does not: tests/live/test_pt2e_x86.py).
    record_strict: bool | None = None
    # Where its reference is recorded: the environment (``env``) unless it imports here too.
    record_env: str = ""
    # The recording holds the graph after ``transform_for_annotation`` (the generated class
    # runs the reference's own pass pipeline there): the comparison only annotates.
    transformed: bool = False
    # The swap harness: the module defining the reference's classes and the names replaced
    # (tests/live/executorch_swap.py), and the shipped suites swapped (tests/live/executorch_suites.py).
    swap: tuple[str, tuple[str, ...]] | None = None
    suites: tuple[str, ...] = ()
    docs: str = ""  # its guide under docs/guides/pt2e/
    hooks: tuple[str, ...] = field(default=())  # the hook modules its spec names
    # "function" of this module run before either class loads: NXP's modules import NXP's
    # SDK (its stand-in installed), MediaTek's package imports its SDK (imported past it).
    before: str = ""
    # "module:function" lowering a converted module and running it as the target's deploy
    # flow does (tests/live/executorch_support.py's ``Lower``): its recording holds the
    # reference's converted outputs (compared in the PR tier, nothing lowered) and its
    # deployment (the program's bytes, delegation and runtime outputs: the full tier's).
    deploy: str = ""
    # Whether the scale benchmark (benchmarks/pt2e_scale.py, its docs figures) times it:
    # not the vendor targets added after the last --docs run, until they are measured.
    bench: bool = True
    # The size count (tests/reference/size.py): the reference's files under
    # executorch/backends/, each counted whole, for a vendor quantizer reproduced whole (the
    # others have a function of their own there); their code lines are the compass's
    # reference figure (tests/reference/sizes.json: ``python -m tests.reference.size --write``).
    counted: tuple[str, ...] = ()
    # How it is proven beyond its recorded zoo: the shipped suites swapped and other
    # comparisons, as the docs home page's compass of targets says (docs/hooks.py renders it
    # from this registry; ``python docs/hooks.py --fill``).
    proof: str = ""

    @property
    def exports_strict(self) -> bool:
        """Whether its recordings are strict exports."""
        if self.record_strict is not None:
            return self.record_strict
        return self.strict or self.transformed

    @property
    def spec(self) -> str:
        return f"specs/{self.name}.bcfg"

    def prepare_imports(self) -> None:
        if self.before:
            globals()[self.before]()

    def generated_class(self, package: str = "generated") -> Any:
        self.prepare_imports()
        if self.stands_in:
            return _load(self.stands_in.replace("generated.", f"{package}.", 1))
        return getattr(importlib.import_module(f"{package}.{self.name}_quantizer"), self.generated)

    def reference_class(self) -> Any:
        self.prepare_imports()
        return _load(self.reference)

    def make_config(self) -> Any:
        return _load(self.config)()

    def make(self, cls: Any) -> Any:
        """A quantizer of ``cls`` (the generated class or the reference), configured."""
        if self.setup:
            return globals()[self.setup](cls, self)
        return cls().set_global(self.make_config())

    def models(self) -> dict[str, tuple[Any, tuple]]:
        """Its zoo: name -> (model, inputs)."""
        return globals()[self.zoo]()

    def available(self) -> bool:
        """Whether the reference imports here (the Arm ones only in their environment)."""
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


def xnnpack_per_channel() -> Any:
    """ExecuTorch's XNNPACK static per-channel config (the Vulkan zoo's ``static output``): on
    Vulkan, linear then has an output spec, which its propagation shares through the ops
    after it. torchao's objects: the recording's config.pkl loads without ExecuTorch."""
    return _load(f"{_ET_XNNPACK}:get_symmetric_quantization_config")(is_per_channel=True)


def _neutron(cls: Any, target: Target) -> Any:
    """NeutronQuantizer for ExecuTorch's test target (imxrt700, on the SDK stand-in), PTQ."""
    from tests.live.nxp_sdk import target_spec

    return cls(target_spec(), is_qat=False)


def _nxp_sdk() -> None:
    from tests.live.nxp_sdk import install

    install()


def _no_qnn_sdk() -> None:
    """Qualcomm's modules with ``QNN_SDK_ROOT`` set (empty unless set): without it, building a
    QnnQuantizer tries to download the QNN SDK."""
    from tests.live.qualcomm_zoo import install

    install()


def _mediatek_package() -> None:
    """MediaTek's quantizer module without its package's ``__init__`` (which imports the
    NeuroPilot SDK): tests/live/vendor_zoo.py's ``import_past_init``."""
    from tests.live.vendor_zoo import import_past_init

    module = BY_NAME["neuropilot"].reference.partition(":")[0]
    import_past_init(module, ("executorch.backends.mediatek",))


# --------------------------------------------------------------------- zoos


def _seeded(models: Callable[[], dict]) -> dict:
    import torch

    torch.manual_seed(0)
    return models()


def xnnpack_zoo() -> dict[str, tuple[Any, tuple]]:
    """torchao's XNNPACK copy: the PT2E zoo (train-mode models as they are) and the matching
    edge cases (eval), but the one where torchao itself is not deterministic."""
    import torch

    from tests.live.pt2e_support import EDGES, NONDETERMINISTIC, ZOO

    out: dict[str, tuple[Any, tuple]] = {}
    for name, (factory, args, train) in ZOO.items():
        torch.manual_seed(0)
        out[name] = (factory().train(train), args)
    for name, (factory, args) in EDGES.items():
        if (name, False) in NONDETERMINISTIC:
            continue
        torch.manual_seed(0)
        out[name] = (factory().eval(), args)
    return out


def inductor_zoo() -> dict[str, tuple[Any, tuple]]:
    """torchao's X86 and Arm Inductor classes: the PT2E zoo and their fusions' models, but
    ``nested``, on which torchao's X86 class raises (an AssertionError in its annotate) where
    the generated class annotates (tests/live/test_pt2e_x86.py leaves it out too)."""
    import torch

    from tests.live.test_pt2e_x86 import MODELS

    out: dict[str, tuple[Any, tuple]] = {}
    for name, (factory, args, train) in MODELS.items():
        if name == "nested":
            continue
        torch.manual_seed(0)
        out[name] = (factory().train(train), args)
    return out


def executorch_zoo() -> dict[str, tuple[Any, tuple]]:
    """ExecuTorch's XNNPACK quantizer: the deploy zoo (tests/live/executorch_support.py)."""
    from tests.live.executorch_support import ZOO, zoo_model

    return {name: zoo_model(name) for name in ZOO}


def cadence_zoo() -> dict[str, tuple[Any, tuple]]:
    """Cadence's default quantizer: the Cadence zoo's models it is compared on."""
    from tests.live.cadence_zoo import models

    return {n: (m.eval(), args) for n, (m, args, cls) in models().items() if "Default" in cls}


def cortex_m_zoo() -> dict[str, tuple[Any, tuple]]:
    """Cortex-M with its default constructor: the Cortex-M zoo's models of that variant."""
    from tests.live.cortex_m_zoo import models

    return {n: (m.eval(), args) for n, (m, args, variant) in models().items() if not variant}


def arm_tosa_zoo() -> dict[str, tuple[Any, tuple]]:
    """TOSA-1.0+INT, ExecuTorch's symmetric config: the Arm zoo's models of that setup."""
    from tests.live.arm_zoo import INT, models

    return {
        name: (case.module.eval(), case.inputs)
        for name, case in models().items()
        if case.kind == "tosa" and case.spec == INT and "_global" in case.setup.__qualname__
    }


def _vendor_zoo(vendor: str) -> dict[str, tuple[Any, tuple]]:
    """A vendor zoo (tests/live/<vendor>_zoo.py, run by tests/live/vendor_zoo.py): every
    model, in eval mode but those its TRAIN names."""
    import torch

    from tests.live.vendor_zoo import zoo

    out: dict[str, tuple[Any, tuple]] = {}
    z = zoo(vendor)
    for name, factory, args in z.ZOO:
        torch.manual_seed(0)
        out[name] = (factory().train(name in getattr(z, "TRAIN", ())), args)
    return out


def vulkan_zoo() -> dict[str, tuple[Any, tuple]]:
    return _vendor_zoo("vulkan")


def mediatek_zoo() -> dict[str, tuple[Any, tuple]]:
    return _vendor_zoo("mediatek")


def samsung_zoo() -> dict[str, tuple[Any, tuple]]:
    return _vendor_zoo("samsung")


def qualcomm_zoo() -> dict[str, tuple[Any, tuple]]:
    return _vendor_zoo("qualcomm")


def coreml_zoo() -> dict[str, tuple[Any, tuple]]:
    return _vendor_zoo("coreml")


def _coreml(cls: Any, target: Target) -> Any:
    """CoreMLQuantizer(config): ExecuTorch's test config (coremltools' LinearQuantizerConfig)."""
    from tests.live.coreml_zoo import SETUPS

    return SETUPS["test config"](cls)


def nxp_zoo() -> dict[str, tuple[Any, tuple]]:
    """NXP's zoo (tests/live/nxp_zoo.py) but its QAT models: the registry's setup is PTQ."""
    from tests.live.nxp_zoo import models

    return {name: (m.eval(), args) for name, m, args, qat in models() if not qat}


_TORCHAO_X86 = "torchao.quantization.pt2e.quantizer.x86_inductor_quantizer"
_TORCHAO_ARM = "torchao.quantization.pt2e.quantizer.arm_inductor_quantizer"
_TORCHAO_XNNPACK = "torchao.testing.pt2e._xnnpack_quantizer"
_ET_XNNPACK = "executorch.backends.xnnpack.quantizer.xnnpack_quantizer"
_ET_ARM = "executorch.backends.arm.quantizer"
_ET_CORTEX_M = "executorch.backends.cortex_m.quantizer.quantizer"
_ET_CADENCE = "executorch.backends.cadence.aot.quantizer.quantizer"
_ET_VULKAN = "executorch.backends.vulkan.quantizer.vulkan_quantizer"
_ET_NXP = "executorch.backends.nxp.quantizer.neutron_quantizer"
_ET_QNN = "executorch.backends.qualcomm.quantizer.quantizer"
# Qualcomm's counted files: every file of backends/qualcomm/quantizer/ (its recipes included,
# users' code the spec does not reproduce: docs/guides/pt2e/qualcomm.md).
_QNN_FILES = (
    "quantizer rules validators registry_loader backend_opinfo_adapter conv_bn qconfig "
    "custom_annotation quant_recipe annotators/__init__ annotators/htp_rules "
    "annotators/lpai_rules observers/concat_observer observers/per_block_param_observer "
    "observers/per_channel_param_observer"
).split()
_COREML_FILES = (
    "__init__ coreml_quantizer _coreml_quantizer _coreml_quantizer_utils _annotation_config"
).split()

TARGETS = (
    Target(
        "xnnpack",
        "XnnpackQuantizer",
        f"{_TORCHAO_XNNPACK}:XNNPACKQuantizer",
        f"{_TORCHAO_XNNPACK}:get_symmetric_quantization_config",
        zoo="xnnpack_zoo",
        docs="xnnpack.md",
        proof="torchao's PT2E zoo and edge cases",
    ),
    Target(
        "xnnpack_executorch",
        "XnnpackExecutorchQuantizer",
        f"{_ET_XNNPACK}:XNNPACKQuantizer",
        f"{_ET_XNNPACK}:get_symmetric_quantization_config",
        zoo="executorch_zoo",
        swap=(_ET_XNNPACK, ("XNNPACKQuantizer",)),
        suites=("xnnpack",),
        docs="executorch.md",
        deploy="tests.live.executorch_support:lower_xnnpack",
        proof="its programs lowered and run in ExecuTorch's runtime, bit for bit",
    ),
    Target(
        "x86_inductor",
        "X86InductorQuantizer",
        f"{_TORCHAO_X86}:X86InductorQuantizer",
        f"{_TORCHAO_X86}:get_default_x86_inductor_quantization_config",
        zoo="inductor_zoo",
        record_strict=True,
        docs="x86-inductor.md",
        proof="torchao's 73 tests of both classes, swapped",
    ),
    Target(
        "arm_inductor",
        "ArmInductorQuantizer",
        f"{_TORCHAO_ARM}:ArmInductorQuantizer",
        f"{_TORCHAO_ARM}:get_default_arm_inductor_quantization_config",
        zoo="inductor_zoo",
        record_strict=True,
        docs="x86-inductor.md",
        proof="torchao's 73 tests of both classes, swapped",
    ),
    Target(
        "cortex_m",
        "CortexMQuantizer",
        f"{_ET_CORTEX_M}:CortexMQuantizer",
        "",
        setup="_no_config",
        env="arm",
        prepare=False,
        fresh=True,
        zoo="cortex_m_zoo",
        record_env="arm",
        swap=(_ET_CORTEX_M, ("CortexMQuantizer",)),
        suites=("cortex_m",),
        docs="cortex-m.md",
        hooks=("specs/hooks/cortex_m.py",),
        proof="ExecuTorch's 143 Cortex-M tests, swapped; CMSIS-NN programs byte for byte",
    ),
    Target(
        "arm_tosa",
        "TOSAQuantizer",
        f"{_ET_ARM}:TOSAQuantizer",
        f"{_ET_ARM}:get_symmetric_quantization_config",
        setup="_tosa",
        env="arm",
        prepare=False,
        fresh=True,
        zoo="arm_tosa_zoo",
        record_env="arm",
        transformed=True,
        swap=(f"{_ET_ARM}.arm_quantizer", ("TOSAQuantizer", "EthosUQuantizer", "VgfQuantizer")),
        suites=("arm", "arm_ops"),
        docs="arm-tosa.md",
        hooks=("specs/hooks/arm.py", "specs/hooks/arm_quantizer.py"),
        proof="ExecuTorch's 69 Arm quantizer tests, swapped",
    ),
    Target(
        "cadence",
        "CadenceQuantizer",
        f"{_ET_CADENCE}:CadenceDefaultQuantizer",
        "",
        stands_in="generated.cadence_quantizer:CadenceDefaultQuantizer",
        setup="_no_config",
        fresh=True,
        strict=True,
        zoo="cadence_zoo",
        swap=(_ET_CADENCE, ("CadenceAtenQuantizer",)),
        suites=("cadence",),
        docs="cadence.md",
        hooks=("specs/hooks/cadence.py",),
        proof="ExecuTorch's 88 Cadence quantizer and fusion tests, swapped",
    ),
    Target(
        "vulkan",
        "VulkanQuantizer",
        f"{_ET_VULKAN}:VulkanQuantizer",
        "tests.targets:xnnpack_per_channel",
        zoo="vulkan_zoo",
        swap=(_ET_VULKAN, ("VulkanQuantizer",)),
        suites=("vulkan",),
        docs="vulkan.md",
        bench=False,
        counted=(
            "vulkan/quantizer/vulkan_quantizer.py",
            "vulkan/quantizer/vulkan_quantizer_utils.py",
        ),
        proof="WebGPU's 4-bit linear test, swapped; probe zoo: 390 of 390 graphs the same",
    ),
    Target(
        "neuropilot",
        "NeuropilotQuantizer",
        "executorch.backends.mediatek.quantizer.quantizer:NeuropilotQuantizer",
        "",
        setup="_no_config",
        zoo="mediatek_zoo",
        docs="mediatek.md",
        hooks=("specs/hooks/mediatek.py",),
        before="_mediatek_package",
        bench=False,
        counted=tuple(
            f"mediatek/quantizer/{f}.py" for f in ("__init__", "quantizer", "annotator", "qconfig")
        ),
        proof="probe zoo: 390 of 390 graphs the same",
    ),
    Target(
        "coreml",
        "CoreMLQuantizer",
        "executorch.backends.apple.coreml.quantizer:CoreMLQuantizer",
        "",
        setup="_coreml",
        zoo="coreml_zoo",
        swap=("executorch.backends.apple.coreml.quantizer._coreml_quantizer", ("CoreMLQuantizer",)),
        suites=("coreml",),
        docs="coreml.md",
        hooks=("specs/hooks/coreml.py",),
        counted=tuple(f"apple/coreml/quantizer/{f}.py" for f in _COREML_FILES),
        proof=(
            "ExecuTorch's 6 Core ML quantizer tests, generated class swapped in (6 "
            "passed; a class annotating nothing fails 2)"
        ),
    ),
    Target(
        "enn",
        "EnnQuantizer",
        "executorch.backends.samsung.quantizer.quantizer:EnnQuantizer",
        "",
        setup="_no_config",
        zoo="samsung_zoo",
        docs="samsung.md",
        hooks=("specs/hooks/samsung.py",),
        bench=False,
        counted=tuple(
            f"samsung/quantizer/{f}.py" for f in ("__init__", "quantizer", "annotator", "qconfig")
        ),
        proof="probe zoo: 390 of 390 graphs the same",
    ),
    Target(
        "nxp",
        "NeutronQuantizer",
        f"{_ET_NXP}:NeutronQuantizer",
        "",
        setup="_neutron",
        fresh=True,  # its annotate marks each op's quantizer applied, for good
        strict=True,
        zoo="nxp_zoo",
        swap=(_ET_NXP, ("NeutronQuantizer",)),
        suites=("nxp",),
        docs="nxp.md",
        hooks=("specs/hooks/nxp.py",),
        before="_nxp_sdk",
        # measured (docs/contributing/benchmarks.md) but not at every size: its annotate, as
        # ExecuTorch's, grows as nodes^2 and runs over the limit from 4k nodes (cat); no 16k run
        bench=False,
        counted=tuple(f"nxp/quantizer/{f}.py" for f in ("neutron_quantizer", "patterns", "utils")),
        proof=(
            "28 of ExecuTorch's NXP tests, swapped (20 passed, 8 skipped); probe zoo: 390"
            " of 390 graphs the same"
        ),
    ),
    Target(
        "qualcomm",
        "QnnQuantizer",
        f"{_ET_QNN}:QnnQuantizer",
        "",
        setup="_no_config",
        zoo="qualcomm_zoo",
        swap=(_ET_QNN, ("QnnQuantizer",)),
        suites=("qualcomm",),
        docs="qualcomm.md",
        hooks=("specs/hooks/qualcomm.py",),
        before="_no_qnn_sdk",
        bench=False,  # measured at every size but the cat model's 16k (docs: benchmarks.md)
        counted=tuple(f"qualcomm/quantizer/{f}.py" for f in _QNN_FILES),
        proof=(
            "ExecuTorch's 38 Qualcomm tests that run without the SDK, swapped (34 passed,"
            " 3 skipped, 1 failed both ways); zoo under the eight QuantDtype schemes,"
            " for the HTP and the LPAI backend;"
            " probe zoo: 390 of 390 graphs the same, for either backend"
        ),
    ),
)
BY_NAME = {t.name: t for t in TARGETS}
