"""``OperatorScopedQuantizer`` (``scopes: operators``): the configuration API and annotation
scheme of torchao's inductor quantizers (``X86InductorQuantizer``, ``ArmInductorQuantizer``)
over a spec's rules: module names, then operator types, then the global config; per config
the rules in order, then the shared-observer ops; a pattern's output observed by its
quantized consumers (flagged ``_is_output_of_quantized_pattern``). docs/reference/pt2e.md
(``scopes: operators``) has the scheme in full.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    QuantizationAnnotation,
    QuantizationConfig,
    SharedQuantizationSpec,
)
from torchao.quantization.pt2e.quantizer.utils import get_module_name_filter

from . import report
from .annotate import Annotating
from .conditions import quantized, unmet
from .graph import is_annotated, is_op, mark
from .matcher import nodes_calling, sequential_partitions, source_partitions
from .model import Context, Reason, first_ops, view
from .quantizer import SpecQuantizer
from .scopes import Scope, all_nodes
from .values import KEY, STRUCTURAL, Accept, Rule

__all__ = ["Annotation", "OperatorScopedQuantizer"]


@dataclass
class Annotation(QuantizationAnnotation):
    """torchao's annotation, flagged on the output of a quantized pattern (as X86's)."""

    _is_output_of_quantized_pattern: bool = False


def _claim(nodes: list[Node]) -> None:
    """Annotate ``nodes`` as not quantized (a config of None)."""
    for n in nodes:
        n.meta[KEY] = Annotation(_annotated=True)


class OperatorScopedQuantizer(SpecQuantizer):
    """A torchao Quantizer configured by module name, operator type and a global config."""

    honours = STRUCTURAL | {
        *("sources", "qat", "reused_weight", "partitions", "roots", "other", "when", "opt_in"),
    }

    def __init__(self) -> None:
        super().__init__()
        self.operator_type_qconfig: dict[Any, Any] = {}
        self.module_name_qconfig: dict[str, Any] = {}

    # ------------------------------------------------------------ configuration

    @property
    def module_function_to_aten_operator_type(self) -> dict[Any, Any]:
        """The module classes and functions set_module_type_qconfig takes, with their ATen op."""
        out: dict[Any, Any] = {}
        for rule in self.rules:
            for root in rule.roots:
                out.setdefault(root, rule.chain[0][0])
        return out

    def _mode(self) -> tuple[bool | None, bool | None]:
        """(is_qat, is_dynamic) of the configs set so far; None where none says."""
        qat = dynamic = None
        configs = [*self.module_name_qconfig.values(), *self.operator_type_qconfig.values()]
        for config in [*configs, self.global_config]:
            if config is None:
                continue
            qat = view(config).is_qat() if qat is None else qat
            act = view(config).input()
            if act is not None and dynamic is None:
                dynamic = act.is_dynamic
        return qat, dynamic

    def _need_skip_config(self, config: Any) -> bool:
        """Whether ``config`` mixes QAT and not, or static and dynamic, with the configs set."""
        if config is None:
            return False
        qat, dynamic = self._mode()
        skip = False
        if qat is not None and qat != view(config).is_qat():
            warnings.warn(
                "Mixed QAT and Non-QAT quantization config is not supported.", stacklevel=2
            )
            skip = True
        act = view(config).input()
        if dynamic is not None and act is not None and dynamic != act.is_dynamic:
            warnings.warn(
                "Mixed dynamic and static quantization config is not supported.", stacklevel=2
            )
            skip = True
        return skip

    def set_global(self, quantization_config: Any) -> Any:
        if self._need_skip_config(quantization_config):
            warnings.warn("Skip the global quantization config.", stacklevel=2)
            return self
        self.global_config = quantization_config
        return self

    def get_global_quantization_config(self) -> Any:
        if not isinstance(self.global_config, QuantizationConfig):
            warnings.warn(
                f"The global_config for {type(self).__name__} is currently invalid. "
                "Please ensure that you use set_global to establish the global quantization "
                "configuration.",
                stacklevel=2,
            )
        return self.global_config

    def set_module_name_qconfig(self, module_name: str, quantization_config: Any) -> Any:
        return self._set(self.module_name_qconfig, module_name, quantization_config)

    def set_module_type_qconfig(self, module_type: Any, quantization_config: Any) -> Any:
        return self._set_by_root(module_type, quantization_config, "Module")

    def set_function_type_qconfig(self, function_type: Any, quantization_config: Any) -> Any:
        return self._set_by_root(function_type, quantization_config, "function")

    # SpecQuantizer's names, as torchao's XNNPACK quantizer spells them, mean the same here.
    def set_module_name(self, module_name: str, quantization_config: Any) -> Any:
        return self.set_module_name_qconfig(module_name, quantization_config)

    def set_module_type(self, module_type: Any, quantization_config: Any) -> Any:
        return self.set_module_type_qconfig(module_type, quantization_config)

    def set_operator_type(self, operator_type: Any, quantization_config: Any) -> Any:
        return self._set(self.operator_type_qconfig, operator_type, quantization_config)

    def _set(
        self, table: dict[Any, Any], key: Any, config: Any, root: Any = None, what: str = ""
    ) -> Any:
        """``table[key] = config``, unless the config is skipped, or ``root`` (a module or
        function type, said for the key) has no ATen op (``key`` None)."""
        shown = key if root is None else root
        if self._need_skip_config(config):
            warnings.warn(f"Skip the quantization config for {shown}.", stacklevel=3)
        elif key is None:
            warnings.warn(
                f"{what}: Unable to customize quantization config for {shown} by "
                f"{type(self).__name__}.",
                stacklevel=3,
            )
        else:
            table[key] = config
        return self

    def _set_by_root(self, root: Any, quantization_config: Any, what: str) -> Any:
        op = self.module_function_to_aten_operator_type.get(root)
        return self._set(self.operator_type_qconfig, op, quantization_config, root, what)

    # ------------------------------------------------------------ annotation

    def _ops(self, opt_in: bool) -> frozenset[Any]:
        """The first ops of the rules (those not opt_in unless ``opt_in``)."""
        return first_ops([r for r in self.rules if opt_in or not r.opt_in])

    def scopes(self) -> list[Scope]:
        """The configs set, in order of precedence, each with the matches it accepts."""
        out = [
            Scope(f"module_name {name!r}", config, all_nodes(get_module_name_filter(name)))
            for name, config in self.module_name_qconfig.items()
        ]
        for op, config in self.operator_type_qconfig.items():
            out.append(Scope(f"operator_type {op}", config, _exactly_one({op})))
        if self.global_config:
            out.append(Scope("global", self.global_config, _exactly_one(self._ops(False))))
        return out

    def _annotate(
        self, model: GraphModule, scopes: list[Scope], rec: report.Recorder | None
    ) -> None:
        quantizable = self._ops(True)
        share = first_ops([r for r in self.rules if r.kind == "propagate"])
        for at, scope in enumerate(scopes):
            label, config, accept = scope.label, scope.config, scope.accept
            if rec is not None:
                rec.at = at
            scoped = Annotating(model, config, None, share, rec, quantizable)
            for index, rule in enumerate(self.rules):
                if rule.kind == "propagate" or (rule.opt_in and label == "global"):
                    continue
                if config is not None and rule.qat and not view(config).is_qat():
                    continue
                if self._annotate_rule(rule, accept, scoped) and config:
                    self._used.setdefault((index, label), config)
            for node in nodes_calling(model, share):  # only their ops can propagate
                for index, rule in enumerate(self.rules):
                    done = rule.kind == "propagate" and self._propagate(node, rule, accept, scoped)
                    if done and config:
                        self._used.setdefault((index, label), config)
        for node in nodes_calling(model, share):
            qa = node.meta.get(KEY)
            if qa is not None and quantized(node):
                qa.output_qspec = SharedQuantizationSpec((node.all_input_nodes[0], node))

    def _annotate_rule(self, rule: Rule, accept: Accept, at: Annotating) -> bool:
        model, config, quantizable, rec = at.model, at.config, at.quantizable, at.rec
        done = False
        for chain, other, parts in _matches(model, rule):
            if is_annotated(chain) or not accept(chain[::-1]):
                if rec is not None:
                    rec.declined_chain(rule, chain, [], accept)
                continue
            reused = _reused(chain[0], rule) if rule.reused_weight == "decline" else None
            if reused is not None:
                why = f"{reused[0].name} was quantized by {reused[1].name}"
                if rec is not None:
                    rec.declined(rule, chain, Reason.ANNOTATED, why)
                continue
            if config is None:
                _claim(chain)
                mark(parts if rule.qat else [], Annotation)  # a QAT chain's own (batch norm)
                done = True
                continue
            root, last = chain[0], chain[-1]
            if not _holds(rule, chain, config, quantizable, rec):
                continue
            specs = view(config)
            qmap: dict[Node, Any] = {}
            for i, arg in enumerate(root.args):
                spec = {rule.weight: specs.weight(), rule.bias: specs.bias()}.get(i, specs.input())
                if isinstance(arg, Node):
                    qmap[arg] = spec
            output = specs.output() if rule.qat else None
            for node in chain:
                node.meta[KEY] = Annotation(_annotated=True)
            root.meta[KEY].input_qspec_map = qmap
            if other is not None:
                binary, extra = other
                binary.meta[KEY].input_qspec_map = (
                    {extra: specs.input()} if rule.other == "quantized" else {}
                )
            last.meta[KEY] = Annotation(
                input_qspec_map=last.meta[KEY].input_qspec_map,
                output_qspec=output,
                _annotated=True,
                _is_output_of_quantized_pattern=True,
            )
            mark(parts if rule.qat else [], Annotation)
            if rec is not None:
                rec.matched(rule, chain)
                rec.part_of(parts if rule.qat else [], root)
            done = True
        return done

    def _propagate(self, node: Node, rule: Rule, accept: Accept, at: Annotating) -> bool:
        """A shared-observer op after quantized patterns: its inputs quantized as one."""
        config, quantizable, rec = at.config, at.quantizable, at.rec
        if not is_op(node, rule.chain[0]) or is_annotated([node]) or not accept([node]):
            return False
        if config is None:
            _claim([node])
            return True
        if not _holds(rule, [node], config, quantizable, rec):
            return False
        inputs = node.all_input_nodes
        first = inputs[0]
        qmap: dict[Node, Any] = {first: view(config).input()}
        for other in inputs[1:]:
            qmap[other] = SharedQuantizationSpec((first, node))
        node.meta[KEY] = Annotation(
            input_qspec_map=qmap, _annotated=True, _is_output_of_quantized_pattern=True
        )
        if rec is not None:
            rec.matched(rule, [node], "shared")
        return True


def _holds(
    rule: Rule, nodes: list[Node], config: Any, quantizable: Any, rec: report.Recorder | None
) -> bool:
    """Whether the rule's ``when:`` conditions hold for a match (the report gets which not)."""
    if not rule.when:
        return True
    why = unmet(rule.when, Context(nodes, config, quantizable))
    if why is not None and rec is not None:
        rec.declined(rule, nodes, why.reason, why.detail)
    return why is None


def _reused(root: Node, rule: Rule) -> tuple[Node, Node] | None:
    """The first weight or bias of a match's first op that another annotated op quantizes
    (the same module called twice, a tied weight), with that op; None if there is none."""
    for i, param in enumerate(root.args):
        if i not in (rule.weight, rule.bias) or not isinstance(param, Node):
            continue
        for user in param.users:
            qa = user.meta.get(KEY)
            if user is not root and qa is not None and qa._annotated:
                if qa.input_qspec_map.get(param) is not None:
                    return param, user
    return None


def _exactly_one(ops: set[Any] | frozenset[Any]) -> Accept:
    """Accept a match with exactly one node calling one of ``ops`` (more: torchao refuses)."""

    def accept(nodes: Any) -> bool:
        count = sum(n.target in ops for n in nodes)
        if count > 1:
            raise NotImplementedError(f"Several nodes within a single pattern are {set(ops)}.")
        return count == 1

    return accept


# A match: its chain of ops, the binary op with its other input, all nodes of its partitions.
Match = tuple[list[Node], "tuple[Node, Node] | None", list[Node]]


def _matches(model: GraphModule, rule: Rule) -> list[Match]:
    """The matches of a rule: its chains (by source partitions or ATen ops), each with the
    binary op and its other input if the rule has one."""
    out: list[Match] = []
    if rule.partitions:
        for types in rule.partitions:
            for parts in sequential_partitions(model, types):
                if any(len(p.output_nodes) != 1 for p in parts):
                    continue
                match = _chain([p.output_nodes[0] for p in parts], rule)
                if match is not None:
                    out.append((*match, [n for p in parts for n in p.nodes]))
    elif rule.sources:
        for p in source_partitions(model, rule.sources):
            out.extend(([n], None, []) for n in p.output_nodes if is_op(n, rule.chain[0]))
    else:
        out.extend(([n], None, []) for n in nodes_calling(model, rule.chain[0]))
    return out


def _chain(nodes: list[Node], rule: Rule) -> tuple[list[Node], tuple[Node, Node] | None] | None:
    """A chain of partition outputs; with a binary op (``other``), the op before it has no
    other user and the binary op's other input is a node."""
    if not is_op(nodes[0], rule.chain[0]):
        return None
    if rule.other is None:
        return nodes, None
    at = next(i for i, ops in enumerate(rule.chain) if len(ops) and i and _binary(ops))
    prev, binary = nodes[at - 1], nodes[at]
    if len(prev.users) != 1 or len(binary.args) < 2:
        return None
    for i in (0, 1):
        arg = binary.args[i]
        if isinstance(arg, Node) and arg.op == "call_function" and arg is prev:
            extra = binary.args[1 - i]
            return (nodes, (binary, extra)) if isinstance(extra, Node) else None
    return None


def _binary(ops: tuple[Any, ...]) -> bool:
    return any(str(op).startswith(("aten.add", "aten.mul", "aten.sub")) for op in ops)
