"""``bcfg compat`` for PT2E: why each op of an exported model is quantized or left float.

``build_quantizer`` renders a spec's quantizer and the runtime into a scratch
package and imports it (the code ``bcfg generate`` writes, never the files of
the output folder, which may be stale). ``analyse`` exports the model (strict
or not), runs torchao's ``prepare_pt2e`` (or ``prepare_qat_pt2e``) with the
quantizer's report on (``quantizer.report()``, the runtime's ``report``
module), and checks the report against a second, plain run of the same
prepare on a copy of the same exported graph: the ops that run annotated
(right after ``annotate``, as prepare calls it) must be the ops the report
says are quantized, and prepare must raise exactly when the report finds a
config a rule does not allow. Any difference is a ``Disagreement``: a bug of
the report, reported as one.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ...infra.isolate import SCRATCH_ENV
from ...semantics import model as m
from ..targets import NOT_THE_USERS, failure
from .nodes import Disagreement

KEY = "quantization_annotation"


@dataclass(frozen=True)
class PT2EResult:
    """The report of one run (``report`` is the runtime's ``Report``), or prepare's error."""

    backend: str
    qat: bool
    strict: bool
    report: Any = None
    error: str | None = None  # prepare_pt2e (or export) raised, for another reason than validate
    rejected_error: str | None = None  # validate's error, when a config is not allowed
    where: dict[str, str] = field(default_factory=dict)  # rule name -> its spec location

    @property
    def entries(self) -> list[Any]:
        return list(self.report.entries) if self.report is not None else []

    @property
    def not_quantized(self) -> list[Any]:
        """The entries a user should look at: float and not on purpose, or rejected."""
        return [
            e
            for e in self.entries
            if (not e.quantized and not e.deliberate) or e.reason == "disallowed"
        ]


def import_torchao() -> None:
    """Import torchao without its import-time log lines (kernels this build lacks, torch's
    notice about its enums), which would land in the report's standard error."""
    import logging

    loggers = [logging.getLogger(name) for name in ("torchao", "torch.utils._pytree")]
    levels = [x.level for x in loggers]
    for x in loggers:
        x.setLevel(logging.ERROR)
    try:
        with _quiet():
            import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401
    finally:
        for x, level in zip(loggers, levels):
            x.setLevel(level)


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A folder for the scratch package, removed on the way out, whatever the outcome.

    It is made inside ``$BCFG_SCRATCH`` when the parent process set it (``infra.isolate``:
    the parent removes that folder even when this process is killed), else in the
    temporary directory.
    """
    import shutil

    parent = os.environ.get(SCRATCH_ENV) or None
    root = Path(tempfile.mkdtemp(prefix="bcfg-compat-", dir=parent))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build_quantizer(q: m.Quantizer, root: Path) -> Callable[[], Any]:
    """The quantizer class of ``q``, rendered with the runtime into a scratch package in
    ``root`` (``scratch``: its modules are imported from there while the check runs)."""
    from ...emit.pt2e import render_quantizer, render_runtime

    name = f"bcfg_compat_{abs(hash((q.module, str(root)))) % 10**8}"
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for path, text in render_runtime().items():
        (pkg / path).parent.mkdir(parents=True, exist_ok=True)
        (pkg / path).write_text(text, encoding="utf-8")
    module = m.quantizer_module(q.module)
    (pkg / f"{module}.py").write_text(render_quantizer(q), encoding="utf-8")
    sys.path.insert(0, str(root))
    try:
        generated = importlib.import_module(f"{name}.{module}")
    finally:
        sys.path.remove(str(root))
    return getattr(generated, f"get_{q.module}_quantizer")


# The fields every PT2E quantizer reads a quantization config by (torchao's, bcfg's, and the
# copies of the dataclass torchao's XNNPACK test helpers and ExecuTorch backends return).
CONFIG_FIELDS = ("input_activation", "output_activation", "weight", "bias")
CONFIG_CLASS = "torchao.quantization.pt2e.quantizer.QuantizationConfig"


def configure(quantizer: Any, target: str, function: Callable[..., Any]) -> tuple[Any, str]:
    """Configure ``quantizer`` with the user's function, called once, and say how (a
    sentence for the report). One meaning whatever the quantizer's base:

    - ``f()`` returns a QuantizationConfig: the global config;
    - ``f(quantizer)`` configures the quantizer (set_global, set_operator_type, ...); if it
      also returns a QuantizationConfig, that config becomes the global config too (before,
      ``scopes: modules`` dropped it without a word and left what it would have quantized
      float "on purpose"); anything else it returns (None, the quantizer) is ignored.

    A config is taken by its fields, as the generated quantizer takes it: torchao's class,
    or any of its copies (torchao's XNNPACK test helpers, ExecuTorch's backends). A
    composable quantizer's global config is its global stage.
    """
    from ..targets import ImportFailure, _guarded, _UserFailure

    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    takes = [p for p in params.values() if p.default is p.empty and p.kind != p.VAR_KEYWORD]
    try:
        with _guarded(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(quantizer) if takes else function()
    except _UserFailure as exc:
        raise ImportFailure(f"calling {target}() failed: {exc}") from None
    is_config = result is not quantizer and all(hasattr(result, f) for f in CONFIG_FIELDS)
    if takes and not is_config:
        how = f"{target}(quantizer) configured the quantizer"
        if not _has_global(quantizer):
            how += "; it set no global config: an op no other setting selects is left float"
        return quantizer, how
    if not is_config:
        raise ImportFailure(
            f"{target}() returned {_class_name(result)}, not a QuantizationConfig ({CONFIG_CLASS}"
            f", or an object with its fields {', '.join(CONFIG_FIELDS)}); or take the quantizer "
            "as its one argument and configure it: set_global, set_module_name, ..."
        )
    # A composable quantizer's global config is its global stage (ExecuTorch's Arm classes
    # name it set_global too).
    setter = getattr(quantizer, "set_global", None) or quantizer.set_global_stage
    try:
        setter(result)
    except ValueError as exc:  # a config no pattern takes (weight_qscheme, activation_qscheme)
        raise ImportFailure(
            f"the quantizer refuses the config {target}() returned: {exc}"
        ) from None
    if takes:
        return quantizer, (
            f"{target}(quantizer) configured the quantizer and returned a config: "
            "the global config"
        )
    return quantizer, f"{target}() returned the global config"


def _has_global(quantizer: Any) -> bool:
    """Whether ``quantizer`` has a global config (a composable one: a global stage)."""
    if getattr(quantizer, "global_stage", None) is not None:
        return True
    return getattr(quantizer, "global_config", None) is not None


def _class_name(value: Any) -> str:
    """``value``'s class, fully qualified (a builtin's bare: ``dict``)."""
    if value is None:
        return "None"
    cls = type(value)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")
        yield


def export(model: torch.nn.Module, example_inputs: tuple[Any, ...], strict: bool) -> Any:
    """The exported module without torch's ``_guards_fn`` call, as ExecuTorch's own flow
    hands a program to a quantizer (Cortex-M's passes refuse that ``call_module``)."""
    with _quiet():
        return torch.export.export(model, example_inputs, strict=strict).module(check_guards=False)


class _Snapshot:
    """A quantizer that delegates to another and notes the ops annotated right after annotate."""

    def __new__(cls, inner: Any) -> Any:
        from torchao.quantization.pt2e.quantizer import Quantizer

        class Snapshot(Quantizer):
            annotated: set[str] | None = None

            def transform_for_annotation(self, model: Any) -> Any:
                return inner.transform_for_annotation(model)

            def annotate(self, model: Any) -> Any:
                model = inner.annotate(model)
                self.annotated = {
                    n.name
                    for n in model.graph.nodes
                    if n.op == "call_function" and KEY in n.meta and n.meta[KEY]._annotated
                }
                return model

            def validate(self, model: Any) -> None:
                inner.validate(model)

        return Snapshot()


def _prepare(gm: Any, quantizer: Any, qat: bool) -> tuple[Any, str | None]:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

    snap = _Snapshot(quantizer)
    try:
        with _quiet():
            (prepare_qat_pt2e if qat else prepare_pt2e)(gm, snap)
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (torchao's failure, or the model's: any kind)
        return snap, failure(exc)
    return snap, None


def analyse(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    quantizer: Any,
    *,
    qat: bool = False,
    strict: bool = False,
    where: dict[str, str] | None = None,
) -> PT2EResult:
    """Export ``model``, prepare it with the configured ``quantizer`` reporting, and check
    that against a plain prepare with it (the same quantizer: the user's configuring
    function is called once; ``annotate`` starts afresh each time).
    """
    backend = str(getattr(quantizer, "backend", ""))
    try:
        gm = export(model, example_inputs, strict)
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (torch.export's failure, or the model's)
        return PT2EResult(backend, qat, strict, error=f"torch.export fails: {failure(exc)}")
    with _quiet():
        first, second = copy.deepcopy(gm), copy.deepcopy(gm)
    quantizer.reporter = None  # the plain run first: the user's function may have opted in
    truth, truth_error = _prepare(second, quantizer, qat)
    reporting = quantizer.report(None)
    reporting.last_report = None
    _, error = _prepare(first, reporting, qat)
    report = reporting.last_report
    if report is None:  # raised before or in annotate: nothing to explain
        if truth_error is None:
            raise Disagreement(f"the reporting prepare raised {error}, the plain one does not")
        return PT2EResult(backend, qat, strict, error=f"prepare_pt2e fails: {truth_error}")
    _agree(report, truth.annotated, truth_error)
    if truth_error is not None and not report.rejected:
        return PT2EResult(backend, qat, strict, error=f"prepare_pt2e fails: {truth_error}")
    return PT2EResult(backend, qat, strict, report, None, truth_error, dict(where or {}))


def _agree(report: Any, annotated: set[str] | None, error: str | None) -> None:
    """The report against what the plain prepare annotated, and whether its validate raised."""
    problems = []
    if annotated is not None:
        # The ops inside a chain: annotated by some schemes (operators), not by others.
        inside = {e.node for e in report.entries if e.role == "inside"}
        annotated = annotated - inside
        predicted = {
            e.node
            for e in report.entries
            if (e.quantized and e.role != "inside") or e.role == "marked"
        }
        extra, missing = sorted(predicted - annotated), sorted(annotated - predicted)
        if extra:
            problems.append(f"reported quantized but not annotated: {', '.join(extra)}")
        if missing:
            problems.append(f"annotated but reported float: {', '.join(missing)}")
    unknown = [e.node for e in report.entries if e.quantized and e.rule is None]
    if unknown:
        problems.append(f"annotated by no rule the report names: {', '.join(unknown)}")
    validate_raised = error is not None and "do not allow the quantization config" in error
    if bool(report.rejected) != validate_raised:
        problems.append(
            f"the report finds {len(report.rejected)} config(s) not allowed, "
            f"but prepare_pt2e {'raises ' + error if error else 'does not raise'}"
        )
    if problems:
        raise Disagreement("; ".join(problems))
