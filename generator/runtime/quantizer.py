"""``SpecQuantizer``: the torchao Quantizer every generated quantizer class derives from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import Quantizer

from . import report
from .annotate import ANNOTATORS, Annotating, follow, propagate
from .graph import calls, reindex
from .model import first_ops
from .scopes import Scope, all_nodes, both, module_scopes
from .validate import refuse, refuse_when_set, rejections
from .values import STRUCTURAL

__all__ = ["SpecQuantizer"]


class SpecQuantizer(report.Reports, Quantizer):
    """A torchao Quantizer whose rules are the patterns of a spec (``scopes: modules``),
    configured as torchao's XNNPACK quantizer (``set_global``, ``set_module_name``,
    ``set_module_type``, ``set_operator_type``, ``set_filter_function``) with its precedence
    (``scopes.module_scopes``)."""

    outputs = "patterns"
    # What set_operator_type selects: "nodes" (matches with an op of that type) or
    # "patterns" (the rules whose operator_types name that overload).
    operator_type = "nodes"
    # The Rule fields this base reads; a rule that sets another is refused (bcfg's table of
    # PT2E keys says the same, and bcfg refuses such a spec at the key).
    honours: frozenset[str] = STRUCTURAL | {
        *(
            "sources",
            "qat",
            "skip",
            "annotate",
            "weight_axis",
            "qparams",
            "any_float",
            "reused_weight",
        ),
        *("operator_types", "qat_if_dynamic", "scope", "weight_qscheme", "activation_qscheme"),
    }

    def __init__(self) -> None:
        super().__init__()
        self.global_config: Any = None
        self.operator_type_config: dict[Any, Any] = {}
        self.module_type_config: dict[Any, Any] = {}
        self.module_name_config: dict[str, Any] = {}
        self.filter_fn: Callable[[Node], bool] | None = None
        self._used: dict[tuple[int, str], Any] = {}

    def set_global(self, quantization_config: Any) -> SpecQuantizer:
        refuse_when_set(self, "set_global", quantization_config, self.rules)
        self.global_config = quantization_config
        return self

    def set_operator_type(self, operator_type: Any, quantization_config: Any) -> SpecQuantizer:
        if self.operator_type == "patterns":
            rules = [r for r in self.rules if r.selected_by(operator_type)]
        else:
            rules = [r for r in self.rules if any(calls(operator_type, ops) for ops in r.chain)]
        refuse_when_set(self, "set_operator_type", quantization_config, rules)
        self.operator_type_config[operator_type] = quantization_config
        return self

    def set_module_type(self, module_type: Any, quantization_config: Any) -> SpecQuantizer:
        refuse_when_set(self, "set_module_type", quantization_config, self.rules)
        self.module_type_config[module_type] = quantization_config
        return self

    def set_module_name(self, module_name: str, quantization_config: Any) -> SpecQuantizer:
        refuse_when_set(self, "set_module_name", quantization_config, self.rules)
        self.module_name_config[module_name] = quantization_config
        return self

    def set_filter_function(self, filter_fn: Callable[[Node], bool]) -> SpecQuantizer:
        """Quantize only nodes ``filter_fn`` accepts: a match is annotated if it accepts all its ops."""
        self.filter_fn = filter_fn
        return self

    def annotate(self, model: GraphModule) -> GraphModule:
        self._used = {}
        reindex(model)
        rec, scopes = self.reporter, self.scopes()
        if rec is not None:  # the report takes a match's scope from here, not a test of its own
            rec.start(scopes)
        self._annotate(model, scopes, rec)
        if rec is not None:
            self.last_report = rec.finish(model, self)
        return model

    def _annotate(
        self, model: GraphModule, scopes: list[Scope], rec: report.Recorder | None
    ) -> None:
        share = first_ops([r for r in self.rules if r.kind in ("propagate", "shared")])
        # The outputs of quantized patterns, when consumers observe them.
        outputs: set[Node] | None = set() if self.outputs == "consumers" else None
        for at, scope in enumerate(scopes):
            if scope.config is None:
                continue
            if rec is not None:
                rec.at = at
            annotating = Annotating(model, scope.config, outputs, share, rec)
            for index, rule in enumerate(self.rules):
                if rule.kind == "propagate" or not rule.applies(scope.config):
                    continue
                if scope.selects is not None and not rule.selected_by(scope.selects):
                    continue
                if ANNOTATORS[rule.kind](rule, rule.accept(scope.accept), annotating):
                    self._used.setdefault((index, scope.label), scope.config)
            if outputs is not None:
                follow(model, share, scope.config, scope.accept, outputs)
        if outputs is None:
            propagate(model, share)

    def validate(self, model: GraphModule) -> None:
        """Raise ValueError if a config annotated a pattern whose dtype configs do not allow it."""
        refuse(self, self.problems())

    def problems(self) -> list[str]:
        """Why each config the last ``annotate`` used is not allowed by its pattern (empty: all are)."""
        return [
            f"pattern {self.rules[index].name}, {label} config: {why}"
            for (index, label), why in rejections(self.rules, self._used).items()
        ]

    def scopes(self) -> list[Scope]:
        """The quantizer's configs in order of precedence, each with the nodes it accepts."""
        scopes = module_scopes(
            self.global_config,
            self.module_name_config,
            self.module_type_config,
            self.operator_type_config,
            self.operator_type,
        )
        if self.filter_fn is not None:
            for scope in scopes:
                scope.accept = both(scope.accept, all_nodes(self.filter_fn))
        return scopes
