"""A pytest plugin: run ExecuTorch's own tests with one of its quantizers replaced by another class.

    python -m pytest -p tests.live.executorch_swap [--bcfg-target cortex_m] \\
        --bcfg-swap generated.xnnpack_executorch_quantizer:XnnpackExecutorchQuantizer \\
        --bcfg-outcomes swapped.json  <site-packages>/executorch/backends/xnnpack/test/quantizer

ExecuTorch ships its tests in its wheel; they are run where pip installed them,
never copied. ``--bcfg-target`` names the class replaced (a row of ``TARGETS``:
``xnnpack``, the default, is ``XNNPACKQuantizer``; ``cortex_m`` is
``CortexMQuantizer``; ``cadence`` is ``CadenceAtenQuantizer``). A
``--bcfg-swap`` without ``:Class`` names a module that replaces a family of
classes together: each name of its ``__all__`` that ExecuTorch's module of the
target also defines (ExecuTorch's Cadence tests check that the classes
subclass one another and compare qspecs by their observers' identity, so the
classes and the ``qconfig_*`` objects go together). Before collection (``pytest_configure``) the plugin
imports the class's defining module and replaces the class on every loaded
module attribute that holds it (a package ``__init__`` that re-exports it
included), so every test module and the ``Tester`` bind the replacement when
they import it. Without ``--bcfg-swap`` the original runs: the same plugin
records both sides.
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

# The classes a run may replace: target -> (defining module, class name).
TARGETS = {
    "xnnpack": ("executorch.backends.xnnpack.quantizer.xnnpack_quantizer", "XNNPACKQuantizer"),
    "cortex_m": ("executorch.backends.cortex_m.quantizer.quantizer", "CortexMQuantizer"),
    "cadence": ("executorch.backends.cadence.aot.quantizer.quantizer", "CadenceAtenQuantizer"),
}


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
        help="module:Class to put in place of ExecuTorch's quantizer (--bcfg-target)",
    )
    group.addoption(
        "--bcfg-outcomes", default="", help="write each test's outcome to this JSON file"
    )


def load(spec: str, target: str = "xnnpack") -> dict[str, Any]:
    """The replacements ``spec`` names: ``module:Class`` for the target's class, or a module
    for each name of its ``__all__`` that ExecuTorch's module of ``target`` defines."""
    module, _, name = spec.partition(":")
    if name:
        return {TARGETS[target][1]: getattr(importlib.import_module(module), name)}
    family = importlib.import_module(module)
    theirs = importlib.import_module(TARGETS[target][0])
    names = [n for n in getattr(family, "__all__", ()) if hasattr(theirs, n)]
    if TARGETS[target][1] not in names:
        raise pytest.UsageError(
            f"--bcfg-swap {spec}: the module's __all__ has no {TARGETS[target][1]}; "
            "name module:Class, or a module that replaces it"
        )
    return {n: getattr(family, n) for n in names}


def swap(cls: Any, target: str = "xnnpack", name: str = "") -> tuple[Any, list[str]]:
    """Put ``cls`` in place of ExecuTorch's object ``name`` (default: the class ``target``
    names) on every loaded module that holds it; return the original and the
    ``module.name`` attributes replaced."""
    module_name, default = TARGETS[target]
    original = getattr(importlib.import_module(module_name), name or default)
    replaced = []
    for mod_name, mod in list(sys.modules.items()):
        for attr, value in list(getattr(mod, "__dict__", {}).items()):
            if value is original:
                setattr(mod, attr, cls)
                replaced.append(f"{mod_name}.{attr}")
    return original, replaced


class Recorder:
    """Each test's outcome, and whether it ran the Tester's Quantize stage (``quantizes``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.quantized = False
        try:
            from executorch.backends.test.harness.stages import quantize
        except ImportError:  # not every target's tests use the Tester
            return

        run = quantize.Quantize.run
        recorder = self

        def recording_run(stage: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.quantized = True
            return run(stage, *args, **kwargs)

        quantize.Quantize.run = recording_run  # type: ignore[method-assign]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.quantized = False
        yield
        key = item.nodeid.split("site-packages/")[-1]
        self.outcomes.setdefault(key, {"outcome": "passed", "message": ""})[
            "quantizes"
        ] = self.quantized

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: Any) -> None:
        key = report.nodeid.split("site-packages/")[-1]
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


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: Any) -> None:
    spec = config.getoption("--bcfg-swap")
    target = config.getoption("--bcfg-target")
    config.bcfg_target = TARGETS[target]
    if spec:
        replacements = load(spec, target)
        module_name, name = TARGETS[target]
        replaced: list[str] = []
        for attr, replacement in replacements.items():
            original, where = swap(replacement, target, attr)
            replaced += where
            # The swap must be live: the defining module now hands out the replacement.
            module = importlib.import_module(module_name)
            assert getattr(module, attr) is replacement and replacement is not original, where
        config.bcfg_swapped = (original, replacements[name], replaced)
    path = config.getoption("--bcfg-outcomes")
    if path:
        config.pluginmanager.register(Recorder(path), "bcfg-outcomes")


def pytest_report_header(config: Any) -> str:
    module_name, name = config.bcfg_target
    swapped = getattr(config, "bcfg_swapped", None)
    if swapped is None:
        return f"bcfg: {module_name}.{name} is ExecuTorch's own"
    cls = swapped[1]
    return f"bcfg: {module_name}.{name} swapped for {cls.__module__}.{cls.__qualname__} (on {', '.join(swapped[2])})"


class AnnotatesNothing:
    """A quantizer that annotates nothing (``--bcfg-swap tests.live.executorch_swap:AnnotatesNothing``):
    ExecuTorch's tests must fail with it, or the swap is not live."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("set_"):
            return lambda *args, **kwargs: self
        raise AttributeError(name)

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
