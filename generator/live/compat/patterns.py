"""Verdicts without a model: for each pattern config, will the mapping's QConfig be honoured?

What can be known without a model is the QConfig from ``global`` and
``object_type`` (after prepare's fusion and QAT updates); entries that name
modules or positions (``module_name``, regexes, orders, enclosing modules)
are listed as possible per-node overrides. The check is prepare's: the
activation is always an input; weight and bias are graph inputs only for a
functional root with ``input_index`` (a module's weight is an attribute,
checked only by convert). Fusion patterns are judged by what their fuser
builds, found by calling it on sample modules as FX fusion does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch.ao.nn.intrinsic import _FusedModule
from torch.ao.quantization import QConfigMapping
from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig
from torch.ao.quantization.backend_config.utils import (
    _get_fuser_method_in_reversed_nested_tuple_format,
    _get_pattern_in_reversed_nested_tuple_format,
)

from ..canonical import sample_fusion
from .backend import BackendIndex, after_prepare
from .mapping import Resolved, possible_overrides, qconfig_for_op, resolve_object_types
from .names import object_text
from .observers import (
    Args,
    Observers,
    Targets,
    bias_observer,
    dtype_config_failures,
)
from .suggest import qconfig_text, rejected
from .verdict import CompatResult, Status, Verdict


@dataclass(frozen=True)
class Fusion:
    """What a fusion pattern's fuser builds: a module type and its parts, or an exception."""

    made: type | None
    parts: tuple[type, ...] = ()
    raised: type[Exception] | None = None


def analyse_patterns(
    backend_config: BackendConfig, mapping: QConfigMapping, is_qat: bool = False
) -> CompatResult:
    """One verdict per pattern config of ``backend_config``, in order."""
    index = BackendIndex.of(backend_config)
    fusions = {
        i: _fusion(c, is_qat)
        for i, c in enumerate(backend_config.configs)
        if c.fuser_method is not None
    }
    parts = {f.made: f.parts for f in fusions.values() if f.made is not None and f.parts}
    judge = _PatternJudge(index, mapping, is_qat, fusions, parts)
    verdicts = tuple(judge.verdict(i) for i in range(len(backend_config.configs)))
    return CompatResult(backend_config.name, is_qat, verdicts)


def _fusion(config: BackendPatternConfig, is_qat: bool) -> Fusion:
    key = _key(config)
    made, raised = sample_fusion(
        _get_fuser_method_in_reversed_nested_tuple_format(config), key, is_qat
    )
    if raised is not None:
        return Fusion(None, raised=raised)
    if made is None:
        guess = config.fused_module or config.root_module
        return Fusion(guess)
    parts = tuple(type(m) for m in made._modules.values()) if isinstance(made, _FusedModule) else ()
    return Fusion(type(made), parts)


def _key(config: BackendPatternConfig) -> Any:
    return _get_pattern_in_reversed_nested_tuple_format(config)


def output_op(key: Any) -> Any:
    """The op whose node is the output of a match: the first element, recursively."""
    while isinstance(key, tuple):
        key = key[0]
    return key


class _PatternJudge:
    def __init__(
        self,
        index: BackendIndex,
        mapping: QConfigMapping,
        is_qat: bool,
        fusions: dict[int, Fusion],
        parts: dict[type, tuple[type, ...]],
    ) -> None:
        self.index = index
        self.mapping = mapping
        self.is_qat = is_qat
        self.fusions = fusions
        self.parts = parts
        self.resolved: Resolved = resolve_object_types(mapping, index.config, is_qat, parts)
        self.observers = Observers()

    def verdict(self, i: int) -> Verdict:
        label = self.index.label(i)
        if i in self.fusions:
            return self._fusion_verdict(i, label, self.fusions[i])
        op = output_op(self.index.keys[i])
        qconfig, source = qconfig_for_op(self.mapping, self.resolved, op)
        common: dict[str, Any] = {
            "config": i,
            "source": source,
            "qconfig": qconfig_text(qconfig),
            "overrides": possible_overrides(self.mapping, op),
        }
        early = self._early(op, qconfig, source)
        if early is not None:
            return Verdict(label, early[0], early[1], **common)
        return self._checked(i, label, op, qconfig, common)

    def _early(self, op: Any, qconfig: Any, source: str) -> tuple[Status, str] | None:
        """Verdicts that need no dtype config: errors, None QConfigs, ops FX never observes."""
        if op in self.resolved.fusion_errors:
            return Status.FAILS, self.resolved.fusion_errors[op]
        if qconfig is None:
            return Status.SKIPPED, f"{source} gives it the QConfig None"
        if op == "size":
            return Status.NOT_A_TENSOR_OP, "x.size() returns no Tensor: FX never quantizes it"
        swapped = self.index.qat_modules.get(op) if self.is_qat else None
        if swapped is not None:
            decider = self._config_of(swapped)
            return Status.SWAPPED, f"QAT swaps it for {object_text(swapped)}; {decider}"
        return None

    def _config_of(self, op: Any) -> str:
        i = self.index.position.get(op)
        if i is None:
            return f"no pattern config names {object_text(op)}: never quantized"
        return f"the pattern config of {object_text(op)} decides"

    def _checked(
        self, i: int, label: str, op: Any, qconfig: Any, common: dict[str, Any]
    ) -> Verdict:
        config = self.index.pattern(i)
        dcs = list(config.dtype_configs)
        if not dcs:
            reason = "the pattern config has no dtype configs: torch never quantizes it"
            return Verdict(label, Status.NO_DTYPE_CONFIGS, reason, **common)
        args = _args(config, self.index.keys[i])
        targets = Targets(
            qconfig.activation,
            qconfig.activation,
            qconfig.weight,
            bias_observer(qconfig, self.observers),
        )
        failures = [dtype_config_failures(dc, qconfig, targets, args, self.observers) for dc in dcs]
        fits = next((k for k, f in enumerate(failures) if not f), None)
        if fits is None:
            return self._rejected(label, op, qconfig, dcs, failures, args, common)
        concern = after_prepare(
            self.index, op, self.parts.get(op, ()), qconfig, self.is_qat, self.observers
        )
        if concern is not None:
            return Verdict(label, concern[0], concern[1], fits=fits, **common)
        reason = f"the QConfig from {common['source']} fits dtype config {fits + 1} of {len(dcs)}"
        return Verdict(label, Status.HONOURED, reason, fits=fits, **common)

    def _rejected(
        self,
        label: str,
        op: Any,
        qconfig: Any,
        dcs: list[Any],
        failures: list[list[Any]],
        args: Args,
        common: dict[str, Any],
    ) -> Verdict:
        parts = self.parts.get(op, ())
        weighted = isinstance(op, type) and (parts[:1] or (op,))[0] in self.index.roots
        return rejected(label, qconfig, dcs, failures, args, self.is_qat, weighted, **common)

    def _fusion_verdict(self, i: int, label: str, fusion: Fusion) -> Verdict:
        mode = "QAT" if self.is_qat else "eval (PTQ)"
        if fusion.raised is not None:
            reason = (
                f"its fuser raises {fusion.raised.__name__} on {mode} modules: "
                f"prepare_fx fails on any model where this pattern occurs"
            )
            return Verdict(label, Status.FAILS, reason, config=i)
        if fusion.made is None:
            reason = "fused by its fuser; what it builds cannot be told without a model"
            return Verdict(label, Status.FUSED, reason, config=i)
        made = fusion.made
        if made in self.resolved.fusion_errors:
            return Verdict(label, Status.FAILS, self.resolved.fusion_errors[made], config=i)
        decider = self.index.qat_modules.get(made, made) if self.is_qat else made
        into = object_text(made) + (
            f", then {object_text(decider)} for QAT" if decider is not made else ""
        )
        if decider not in self.index.position:
            reason = f"fused into {into}, which no pattern config names: never quantized"
            return Verdict(label, Status.NO_PATTERN, reason, config=i)
        reason = f"fused into {into}; the pattern config of {object_text(decider)} decides"
        return Verdict(label, Status.FUSED, reason, config=i)


def _args(config: BackendPatternConfig, key: Any) -> Args:
    """The graph inputs a match's root node has: weight and bias only for a functional root."""
    root = key
    if config._root_node_getter is not None:
        try:
            root = config._root_node_getter(key)
        except Exception:  # noqa: BLE001  (a getter written for nodes: take the default root)
            root = key
    while isinstance(root, tuple):  # _default_root_node_getter: the last element, recursively
        root = root[-1]
    functional = not isinstance(root, (type, str, int))
    index = config._input_type_to_index
    return Args(
        activation=True,
        weight=functional and "weight" in index,
        bias=functional and "bias" in index,
    )
