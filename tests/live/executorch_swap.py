"""A pytest plugin: run ExecuTorch's own tests with one of its quantizers replaced by another class.

    python -m pytest -p tests.live.executorch_swap [--bcfg-target cortex_m] \\
        --bcfg-swap generated.xnnpack_executorch_quantizer:XnnpackExecutorchQuantizer \\
        --bcfg-outcomes swapped.json  <site-packages>/executorch/backends/xnnpack/test/quantizer

ExecuTorch ships its tests in its wheel; they are run where pip installed them,
never copied. ``--bcfg-target`` names the classes replaced (a row of ``TARGETS``:
``xnnpack``, the default, is ``XNNPACKQuantizer``; ``cortex_m`` is
``CortexMQuantizer``; ``arm`` is ``TOSAQuantizer``, ``EthosUQuantizer`` and
``VgfQuantizer``; ``cadence`` is ``CadenceAtenQuantizer``; ``vulkan`` is
``VulkanQuantizer``; ``coreml`` is ``CoreMLQuantizer``; ``nxp`` is ``NeutronQuantizer``,
imported after tests/live/nxp_sdk.py's stand-in for NXP's SDK; ``qualcomm`` is ``QnnQuantizer``,
imported with ``QNN_SDK_ROOT`` set). ``--bcfg-swap
module:Class`` puts one class in place of each of them; ``--bcfg-swap module``
(no class) puts each module attribute of the same name in place of each
(``--bcfg-swap generated.arm_tosa_quantizer``), and each other name of the
module's ``__all__`` that ExecuTorch's module also defines in place of that
(ExecuTorch's Cadence tests check that its classes subclass one another and
compare qspecs by their observers' identity, so the whole family goes
together: ``--bcfg-swap generated.cadence_quantizer``; and they find the
classes by ``__module__``, so a Cadence replacement of the same name takes the
quantizer module's name for the run: ``RENAMED``).
Before collection (``pytest_configure``) the plugin imports the classes'
defining module and replaces each class on every loaded module attribute that
holds it (a package ``__init__`` that re-exports it included: Arm's
``executorch.backends.arm.quantizer``), so every test module and the tester
bind the replacement when they import it. Without ``--bcfg-swap`` the
original runs: the same plugin records both sides. ``--bcfg-path DIR`` puts
another checkout of the project first on ``sys.path`` before the replacement
is imported (its ``specs/`` and ``generated/``; this plugin stays this
checkout's).
``--bcfg-outcomes`` writes each test's outcome (``passed``, ``failed``,
``skipped``, with the first line of a failure) to a JSON file, for
``tests/live/executorch_suites.py`` to compare test by test.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import pytest

from tests.targets import TARGETS as REGISTRY

# The classes a run may replace: suite's target -> (defining module, class names), from the
# target registry (tests/targets.py: a row's ``swap``, under its first suite's name).
TARGETS = {t.suites[0]: t.swap for t in REGISTRY if t.swap}
# Targets whose modules import only after something is loaded first: the registry's row's
# ``before`` (NXP's import NXP's eIQ Neutron SDK, not on the package index: its stand-in,
# tests/live/nxp_sdk.py, is installed; Qualcomm's try to download the QNN SDK unless
# QNN_SDK_ROOT is set), under the same suite's name as ``TARGETS``.
BEFORE = {t.suites[0]: t for t in REGISTRY if t.swap and t.before}
# Targets whose tests find the classes by ``__module__`` (Cadence's
# ``test_all_quantizers_have_annotation_tests``: every CadenceQuantizer subclass whose
# ``__module__`` is the quantizer module's must be tested): a replacement of the same name
# takes the defining module's name for the run, as that module's attribute now holds it.
RENAMED = {"cadence"}
# The stage whose run says a test quantized (patched by Recorder): ExecuTorch's test harness's
# for every target (by ``TARGETS``' key) but Arm, whose tester has a stage of its own.
STAGES = dict.fromkeys(TARGETS, ("executorch.backends.test.harness.stages.quantize", "Quantize"))
STAGES["arm"] = ("executorch.backends.arm.test.tester.quantize", "ArmQuantize")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("bcfg-swap")
    group.addoption(
        "--bcfg-target",
        default="xnnpack",
        choices=sorted(TARGETS),
        help="which of ExecuTorch's quantizers --bcfg-swap replaces",
    )
    group.addoption(
        "--bcfg-swap",
        default="",
        help="module:Class to put in place of ExecuTorch's quantizers (--bcfg-target), "
        "or a module whose classes of the same names replace them",
    )
    group.addoption(
        "--bcfg-path",
        default="",
        help="a checkout of the project to import --bcfg-swap from (put first on sys.path)",
    )
    group.addoption(
        "--bcfg-outcomes", default="", help="write each test's outcome to this JSON file"
    )


def load(spec: str, target: str = "xnnpack") -> dict[str, type]:
    """The replacement of each of ``target``'s classes: ``module:Class`` for all of them, or
    ``module`` for its attributes of the same names."""
    module_name, _, name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise pytest.UsageError(f"--bcfg-swap {spec}: {e}") from e
    names = TARGETS[target][1]
    if name:
        return dict.fromkeys(names, getattr(module, name))
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise pytest.UsageError(f"--bcfg-swap {spec}: the module has no {', '.join(missing)}")
    theirs = importlib.import_module(TARGETS[target][0])
    family = [n for n in getattr(module, "__all__", ()) if n not in names and hasattr(theirs, n)]
    return {n: getattr(module, n) for n in (*names, *family)}


def swap(cls: type | dict[str, type], target: str = "xnnpack") -> tuple[type, list[str]]:
    """Put ``cls`` (or ``cls[name]`` for each class name) in place of ExecuTorch's classes of
    ``target`` on every loaded module that holds them; return the (first) original and the
    ``module.name`` attributes replaced."""
    module_name, names = TARGETS[target]
    module = importlib.import_module(module_name)
    by_name = cls if isinstance(cls, dict) else dict.fromkeys(names, cls)
    first = getattr(module, names[0])
    originals = {id(getattr(module, n)): (getattr(module, n), new) for n, new in by_name.items()}
    # The replacements' own modules keep what they import (a class may wrap the original).
    own = {getattr(c, "__module__", None) for c in by_name.values()}
    replaced = []
    for mod_name, mod in list(sys.modules.items()):
        if mod_name in own:
            continue
        for attr, value in list(getattr(mod, "__dict__", {}).items()):
            # By identity: some module attributes warn when compared (torch.distributed.reduce_op).
            if id(value) in originals and value is originals[id(value)][0]:
                setattr(mod, attr, originals[id(value)][1])
                replaced.append(f"{mod_name}.{attr}")
    return first, replaced


def rename(replacements: dict[str, type], target: str) -> None:
    """Under a ``RENAMED`` target, each replacement of the same name takes the name of the
    module whose attribute it now is (after ``swap``, which skips the replacements' own
    modules by that name)."""
    if target not in RENAMED:
        return
    for name, cls in replacements.items():
        if isinstance(cls, type) and cls.__name__ == name:
            cls.__module__ = TARGETS[target][0]


class Recorder:
    """Each test's outcome, and whether it ran the Tester's Quantize stage (``quantizes``)."""

    def __init__(self, path: str, target: str = "xnnpack") -> None:
        self.path = path
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.quantized = False
        module_name, name = STAGES[target]
        try:
            stage_class = getattr(importlib.import_module(module_name), name)
        except ImportError:  # not every target's tests use a tester
            return
        run = stage_class.run
        recorder = self

        def recording_run(stage: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.quantized = True
            return run(stage, *args, **kwargs)

        stage_class.run = recording_run

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.quantized = False
        yield
        key = _key(item.nodeid, item.location[0])
        self.outcomes.setdefault(key, {"outcome": "passed", "message": ""})[
            "quantizes"
        ] = self.quantized

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: Any) -> None:
        key = _key(report.nodeid, report.location[0])
        entry = self.outcomes.setdefault(key, {"outcome": "passed", "message": ""})
        if report.when == "call" or report.outcome != "passed":
            if report.outcome != "passed" or entry["outcome"] == "passed":
                entry["outcome"] = "xfailed" if hasattr(report, "wasxfail") else report.outcome
                if report.outcome == "failed":
                    crash = getattr(report.longrepr, "reprcrash", None)
                    entry["message"] = (
                        crash.message if crash else str(report.longrepr)
                    ).splitlines()[0][:300]

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: Any) -> None:
        with open(self.path, "w") as f:
            json.dump(dict(sorted(self.outcomes.items())), f, indent=1)


def _key(nodeid: str, where: str) -> str:
    """A test's name in the outcome files: its file under site-packages and its name in the
    file. From the test's location, not its node id, whose path is empty when the file is
    outside the rootdir (a worktree whose venv lies in another checkout)."""
    name = nodeid.split("::", 1)[1] if "::" in nodeid else nodeid
    return f"{where.split('site-packages/')[-1]}::{name}"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: Any) -> None:
    spec = config.getoption("--bcfg-swap")
    target = config.getoption("--bcfg-target")
    config.bcfg_target = TARGETS[target]
    if target in BEFORE:
        BEFORE[target].prepare_imports()
    if config.getoption("--bcfg-path"):
        sys.path.insert(0, config.getoption("--bcfg-path"))
    if spec:
        replacements = load(spec, target)
        original, replaced = swap(replacements, target)
        module_name, names = TARGETS[target]
        # The swap must be live: the defining module now hands out the replacements.
        module = importlib.import_module(module_name)
        live = all(getattr(module, n) is replacements[n] for n in replacements)
        assert live and original not in replacements.values(), replaced
        homes = {n: f"{c.__module__}.{c.__qualname__}" for n, c in replacements.items()}
        rename(replacements, target)
        config.bcfg_swapped = (original, replacements, replaced, homes)
    path = config.getoption("--bcfg-outcomes")
    if path:
        config.pluginmanager.register(Recorder(path, target), "bcfg-outcomes")


def pytest_report_header(config: Any) -> str:
    module_name, names = config.bcfg_target
    swapped = getattr(config, "bcfg_swapped", None)
    if swapped is None:
        return f"bcfg: {module_name}.{'/'.join(names)} are ExecuTorch's own"
    by = ", ".join(f"{n} by {swapped[3][n]}" for n, c in swapped[1].items() if isinstance(c, type))
    return f"bcfg: {module_name}: {by} (on {', '.join(swapped[2])})"


class AnnotatesNothing:
    """A quantizer that annotates nothing (``--bcfg-swap tests.live.executorch_swap:AnnotatesNothing``):
    ExecuTorch's tests must fail with it, or the swap is not live.

    It takes any constructor's arguments and every configuration call (``set_*``,
    ``add_quantizer``), and has what Arm's test pipelines read of a ``TOSAQuantizer``
    (``compile_spec``, ``tosa_spec``, ``global_config``, ``_quantize_with_submodules``),
    so that a test fails on what was not annotated, not on a missing method."""

    def __init__(self, compile_spec_or_tosa_spec: Any = None, *args: Any, **kwargs: Any) -> None:
        self.compile_spec = compile_spec_or_tosa_spec
        # An Arm compile spec carries its TOSA spec; a TOSA spec is its own.
        self.tosa_spec = getattr(compile_spec_or_tosa_spec, "tosa_spec", compile_spec_or_tosa_spec)
        self.global_config = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("set_") or name == "add_quantizer":
            return lambda *args, **kwargs: self
        raise AttributeError(name)

    def _quantize_with_submodules(
        self,
        model: Any,
        calibration_samples: list,
        is_qat: bool = False,
        fold_quantize: bool = True,
    ) -> Any:
        """Arm's ``ArmQuantize`` stage: prepare with this quantizer, calibrate, convert."""
        from torchao.quantization.pt2e.quantize_pt2e import (
            convert_pt2e,
            prepare_pt2e,
            prepare_qat_pt2e,
        )

        prepared = (prepare_qat_pt2e if is_qat else prepare_pt2e)(model, self)
        for sample in calibration_samples:
            prepared(*sample)
        return convert_pt2e(prepared, fold_quantize=fold_quantize)

    def transform_for_annotation(self, model: Any) -> Any:
        return model

    def annotate(self, model: Any) -> Any:
        return model

    def validate(self, model: Any) -> None:
        pass

    def prepare_obs_or_fq_callback(self, model: Any, edge_or_node_to_obs_or_fq: Any) -> None:
        pass


class CadenceAnnotatesNothing(AnnotatesNothing):
    """``CadenceAtenQuantizer(pattern, quantization_config)`` that annotates nothing
    (``--bcfg-target cadence --bcfg-swap tests.live.executorch_swap:CadenceAnnotatesNothing``):
    it keeps the pattern, which ExecuTorch's ``CadenceQuantizer`` and fusion pass read."""

    def __init__(self, pattern: Any = None, quantization_config: Any = None) -> None:
        self.pattern, self.quantization_config = pattern, quantization_config


class NeutronAnnotatesNothing(AnnotatesNothing):
    """``NeutronQuantizer(neutron_target_spec, is_qat=False)`` that annotates nothing
    (``--bcfg-target nxp``): it has the ``quantizers`` list ExecuTorch's tests reorder."""

    def __init__(self, neutron_target_spec: Any = None, is_qat: bool = False) -> None:
        super().__init__(neutron_target_spec)
        self.neutron_target_spec, self.is_qat, self.quantizers = neutron_target_spec, is_qat, []


class QnnAnnotatesNothing(AnnotatesNothing):
    """``QnnQuantizer(backend, soc_model, strict)`` that annotates nothing (``--bcfg-target
    qualcomm``): Qualcomm's pass pipeline runs before it, as before Qualcomm's annotate."""

    def __init__(self, backend: Any = None, soc_model: Any = None, strict: bool = True) -> None:
        super().__init__()
        self.backend = backend

    def transform_for_annotation(self, model: Any) -> Any:
        from executorch.backends.qualcomm._passes.qnn_pass_manager import get_qnn_pass_manager_cls
        from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchBackendType

        backend = self.backend or QnnExecuTorchBackendType.kHtpBackend
        return get_qnn_pass_manager_cls(backend)().transform_for_annotation_pipeline(model)
