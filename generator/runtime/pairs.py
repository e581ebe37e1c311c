"""``PairsQuantizer`` (``scopes: pairs``): ExecuTorch's Cadence scheme of (pattern, config)
pairs over a spec's rules. Each ``PairQuantizer`` annotates every match of one rule with
one config, the first pair first: matches as ExecuTorch's ``find_sequential_partitions_aten``
(one node a partition), anchors by argument index (``inputs``, ``weight``, ``bias``,
``output_index``), a derived int32 bias, weights-only configs (W8A32). ``PatternPair`` is a
spec's pair class; ``last_matches`` lists the matches tried as the composable base's do.
docs/reference/pt2e.md (``scopes: pairs``) has the scheme in full.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    ComposableQuantizer,
    DerivedQuantizationSpec,
    QuantizationAnnotation,
    Quantizer,
    SharedQuantizationSpec,
)

from . import api, match_report, report, transforms
from .composable import MATCHED_FIRST
from .graph import is_annotated
from .matcher import sequences
from .model import Context, Decline, Match, Reason, failing, first_ops, view
from .validate import disallowed
from .values import KEY, STRUCTURAL, Rule

__all__ = [
    "PairQuantizer", "PairsQuantizer", "PatternPair", "bias_qparams", "partitions", "rule_of",
]  # fmt: skip


def bias_qparams(observers: list) -> tuple[torch.Tensor, torch.Tensor]:
    """The int32 bias's qparams: the input's scale times the weight's, zero point 0."""
    scale = observers[0].calculate_qparams()[0] * observers[1].calculate_qparams()[0]
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def derived_bias(node: Node, x: int, w: int) -> DerivedQuantizationSpec:
    return DerivedQuantizationSpec(
        derived_from=[(node.args[x], node), (node.args[w], node)],
        derive_qparams_fn=bias_qparams,
        dtype=torch.int32,
        quant_min=-(2**31),
        quant_max=2**31 - 1,
        qscheme=torch.per_tensor_affine,
    )


# Where a PairsQuantizer's annotate leaves ``sourced(model)`` for its pairs (on the graph,
# for the annotate only): one pass over the graph for every pair, not one per pair and op.
SOURCED = "_bcfg_sourced"


def sourced(model: GraphModule) -> dict[Any, list[Node]]:
    """The nodes with a ``source_fn_stack`` (what partitions are made of), by target, in graph
    order."""
    out: dict[Any, list[Node]] = {}
    for n in model.graph.nodes:
        if n.meta.get("source_fn_stack") is not None:
            out.setdefault(n.target, []).append(n)
    return out


def partitions(
    model: GraphModule, ops: list, index: dict[Any, list[Node]] | None = None
) -> list[list[Node]]:
    """ExecuTorch's ``find_sequential_partitions_aten`` (one node a partition), as node lists
    (``index``: ``sourced(model)``, if made already)."""
    index = sourced(model) if index is None else index
    typed = []
    for op in ops:
        groups: dict[Any, list[Node]] = {}
        for n in index.get(op, ()):
            groups.setdefault(n.meta["source_fn_stack"][-1][1], []).append(n)
        typed.append([n for g in groups.values() for n in g])
    return [list(found) for found in sequences(typed, _alone)]


def _alone(node: Node) -> tuple[Node]:
    return (node,)


def annotate_input(node: Any, arg: Any, spec: Any) -> None:
    """Add ``arg -> spec`` to ``node``'s input specs (an annotation made if it has none)."""
    annotation = node.meta.get(KEY, QuantizationAnnotation(_annotated=True))
    annotation.input_qspec_map[arg] = spec
    node.meta[KEY] = annotation


def _tensor_or_unknown(node: Node) -> bool:
    """Whether ``node``'s value is a tensor, or not recorded (a graph without values)."""
    return "val" not in node.meta or isinstance(node.meta["val"], torch.Tensor)


class PairQuantizer(Quantizer):
    """One (pattern, config) pair: ``rule`` annotated with ``config`` wherever it matches."""

    api = api  # the hooks API of this runtime copy (a pair class mixin's ``self.api``)

    def __init__(
        self,
        rule: Rule,
        config: Any,
        label: str = "",
        refuse: bool = True,
        rules: Sequence[Rule] = (),
    ) -> None:
        """``rules``: the spec's (what ``when:`` conditions count as quantized; default the
        pair's own rule)."""
        super().__init__()
        reasons = [disallowed(a, config) for a in rule.allows]
        # A config the rule's dtypes do not allow: an error, or (``refuse=False``, a pair of
        # ``set_global``'s) every match is recorded as not tried, with why.
        self.refused = "; ".join(reasons) if rule.allows and all(reasons) else ""
        if self.refused and refuse:
            raise ValueError(f"{rule.name}: a config the spec does not allow: {self.refused}")
        self.rule, self.config, self.specs = rule, config, view(config)
        self.label = label or type(self).__name__
        self.last_matches: list[Match] = []
        self.float_activations = self.specs.input() is None
        self.checks = rule.when + (rule.weights_only_when if self.float_activations else ())
        self.quantizable = first_ops(rules or [rule])

    def annotate(self, model: GraphModule) -> GraphModule:
        self.last_matches = []
        index = getattr(model.graph, SOURCED, None)
        for nodes in partitions(model, [ops[0] for ops in self.rule.chain], index):
            why = Decline(Reason.NOT_TRIED, self.refused) if self.refused else self.skipped(nodes)
            self.last_matches.append(Match(nodes, why, self.label, self.config, self.rule.name))
            if why is not None:
                continue
            if self.float_activations:  # weights only
                self.annotate_parameters(nodes[0])
            else:
                self.annotate_match(nodes)
        return model

    def skipped(self, nodes: list[Node]) -> Decline | None:
        """Why the match ``nodes`` is not annotated, or None."""
        other = next((n for n in nodes[:-1] if len(n.users) != 1), None)
        if other is not None:
            return Decline(Reason.SKIP, f"{other.name}'s output has another user")
        failed = failing(self.checks, Context(nodes, self.config, self.quantizable))
        if failed is not None:
            name = getattr(failed, "__name__", "a condition")
            return Decline(Reason.SKIP, f"a when: condition ({name}) rules the match out")
        if not self.float_activations:
            missing = self.not_a_tensor(nodes[0])
            if missing is not None:
                return Decline(Reason.NON_FLOAT_INPUT, missing)
        anchored = self.anchored(nodes)
        if any(n is None for n in anchored):
            why = (
                f"{nodes[-1].name} has no getitem of index {self.rule.output_index} (output_index)"
            )
            return Decline(Reason.SKIP, why)
        if is_annotated(n for n in anchored if n is not None):
            return MATCHED_FIRST  # an earlier pair's (the report says which node it took)
        return None

    def not_a_tensor(self, first: Node) -> str | None:
        """Why an argument ``inputs`` names is not a tensor of this graph (beyond the op's
        arguments, a scalar, None), or None: torchao's prepare_pt2e observes nodes only."""
        for i in self.rule.inputs:
            arg = first.args[i] if i < len(first.args) else None
            items = arg if isinstance(arg, (list, tuple)) else [arg]
            if not items or not all(isinstance(x, Node) and _tensor_or_unknown(x) for x in items):
                what = "no argument" if i >= len(first.args) else f"{arg!r}, not a tensor"
                return f"argument {i} of {first.name} (inputs) is {what} in this graph"
        return None

    def output_node(self, nodes: list[Node]) -> Node | None:
        """The node that takes the output spec: the last op, or (``output_index``) the getitem of
        that index among its users (None if it has none)."""
        last, item = nodes[-1], self.rule.output_index
        if item is None:
            return last
        getitems = (u for u in last.users if u.target is operator.getitem and u.args[1] == item)
        return next(getitems, None)

    def anchored(self, nodes: list[Node]) -> list[Node | None]:
        """The nodes that must not be annotated yet: the first, and the output's (if any)."""
        return [nodes[0]] if self.float_activations else [nodes[0], self.output_node(nodes)]

    def annotate_match(self, nodes: list[Node]) -> None:
        first: Any = nodes[0]
        rule, specs = self.rule, self.specs
        head = first.args[rule.inputs[0]]
        head = head[0] if isinstance(head, (list, tuple)) else head
        out_spec = specs.output()
        if rule.kind == "shared":  # the output shares the first input's spec
            out_spec = SharedQuantizationSpec((head, first))
        out = self.output_node(nodes)
        assert out is not None  # annotate() skips a match without it
        out.meta[KEY] = QuantizationAnnotation(output_qspec=out_spec, _annotated=True)
        for i in rule.inputs:
            arg = first.args[i]
            if isinstance(arg, (list, tuple)):  # the first element's spec, shared by the rest
                for k, x in enumerate(arg):
                    spec = SharedQuantizationSpec((arg[0], first)) if k else specs.input()
                    annotate_input(first, x, spec)
            else:
                annotate_input(first, arg, specs.input())
        self.annotate_parameters(first)

    def annotate_parameters(self, node: Any) -> None:
        """The weight and bias anchors (``weights``: those its function gives): the weight
        spec, and the bias's (derived, or the config's with ``bias_spec: config`` or a
        weights-only config, which annotates a None bias too)."""
        rule, config = self.rule, self.config
        if rule.weights is not None:
            for owner, arg, spec in rule.weights(node, config):
                annotate_input(owner, arg, spec)
            return
        if rule.weight is None or rule.parameters == "float":
            return
        annotate_input(node, node.args[rule.weight], self.specs.weight())
        bias = rule.bias
        if bias is None or len(node.args) <= bias:
            return
        arg = node.args[bias]
        if arg is None and not (rule.none_bias or self.float_activations):
            return
        derived = rule.bias_spec == "derived" and not self.float_activations
        annotate_input(
            node,
            arg,
            derived_bias(node, rule.inputs[0], rule.weight) if derived else self.specs.bias(),
        )

    def validate(self, model: GraphModule) -> None:
        pass

    @classmethod
    def get_supported_operators(cls) -> list:
        return []


def rule_of(rules: Sequence[Rule], ops: Any, spec: str) -> Rule:
    """The rule whose chain's ops (each position's first) are ``ops`` (an op or a sequence)."""
    ops = tuple(ops) if isinstance(ops, (list, tuple)) else (ops,)
    for r in rules:
        if tuple(o[0] for o in r.chain) == ops:
            return r
    raise ValueError(f"{spec} has no pattern of the ops {ops}")


class PatternPair(PairQuantizer):
    """One pair of a pattern object and a config (ExecuTorch's ``CadenceAtenQuantizer(pattern,
    quantization_config)``): the rule of ``rules`` whose chain begins with the pattern's
    ``partition_types()``. A spec's pair class (``classes: [{name: ..., pair: true}]``) sets
    ``rules`` and ``spec``."""

    rules: Sequence[Rule] = ()
    spec = ""

    def __init__(self, pattern: Any, quantization_config: Any) -> None:
        try:
            rule = rule_of(self.rules, pattern.partition_types(), self.spec)
        except ValueError as e:
            raise ValueError(f"{type(pattern).__name__}: {e}") from None
        super().__init__(rule, quantization_config, rules=self.rules)
        self.pattern, self.quantization_config = pattern, quantization_config


class PairsQuantizer(report.Reports, ComposableQuantizer):
    """The base of a ``scopes: pairs`` spec's quantizer: its (pattern, config) pairs in
    order, each a ``PairQuantizer`` of the rule whose first ops are the pattern's."""

    # Its transforms run in annotate; torchao's runs those of the quantizers it composes.
    transform_for_annotation = ComposableQuantizer.transform_for_annotation
    unseen = "no pair has its pattern (add_pair, set_global)"  # match_report's words
    # The Rule fields this base reads (bcfg's table of PT2E keys says the same).
    honours: frozenset[str] = STRUCTURAL | {
        *("when", "inputs", "output_index", "bias_spec", "none_bias", "parameters"),
        *("weights_only_when", "weights"),
    }

    def __init__(self, quantizers: Sequence[Quantizer] = ()) -> None:
        """``quantizers`` (pairs, other quantizers) annotate in order: the list itself is kept,
        as torchao's ComposableQuantizer keeps it."""
        super().__init__(quantizers if isinstance(quantizers, list) else list(quantizers))

    def get_ops_to_preserve_from_decomposition(self) -> list:
        """The ops of its pairs' patterns (each position's first op), and of the composed
        quantizers of this base: what a trace keeps from decomposition (ExecuTorch's
        ``CadenceQuantizer`` method of that name)."""
        ops: set = set()
        for q in self.quantizers:
            if isinstance(q, PairQuantizer):
                ops.update(o[0] for o in q.rule.chain)
            elif isinstance(q, PairsQuantizer):
                ops.update(q.get_ops_to_preserve_from_decomposition())
        return list(ops)

    def add_pair(self, ops: Any, config: Any) -> PairsQuantizer:
        """Annotate every match of the rule of ``ops`` with ``config``, after the pairs before."""
        rule = rule_of(self.rules, ops, self.spec or type(self).__name__)
        label = f"pair {len(self.quantizers) + 1} ({rule.name})"
        self.quantizers.append(PairQuantizer(rule, config, label, rules=self.rules))
        return self

    def set_global(self, config: Any) -> PairsQuantizer:
        """A pair of every pattern of the spec with ``config``, in the spec's order, after the
        pairs before; a pattern whose dtypes refuse ``config`` records its matches as not tried
        (what ``bcfg compat`` configures with a global config)."""
        for rule in self.rules:
            if rule.kind != "propagate":
                pair = PairQuantizer(rule, config, "global", refuse=False, rules=self.rules)
                self.quantizers.append(pair)
        return self

    def _paired(self) -> set[Any]:
        return {op for q in self.quantizers if isinstance(q, PairQuantizer) for o in q.rule.chain
                for op in o}  # fmt: skip

    def seen(self, model: GraphModule) -> set[Node]:
        """The nodes whose op some pair's pattern has, or no pattern of the spec has."""
        paired = self._paired()
        ruled = {op for r in self.rules for o in r.chain for op in o}
        return {n for n in model.graph.nodes if n.target in paired or n.target not in ruled}

    def unmatched(self, model: GraphModule) -> Callable[[Node], str | None]:
        """Why a pair's op in no match is float, when it is not the pattern's doing: a test
        of a node of ``model`` (the pairs' ops worked out once, for one explanation)."""
        paired = self._paired()

        def why(node: Node) -> str | None:
            if node.target in paired and "source_fn_stack" not in node.meta:
                return (
                    "no source_fn_stack in its meta: pairs match source partitions, which a "
                    "strict export records (torch.export.export(..., strict=True); compat "
                    "--strict-export)"
                )
            return None

        return why

    def annotate(self, model: GraphModule) -> GraphModule:
        model = transforms.run(self.transforms, model)
        mine = getattr(model.graph, SOURCED, None) is None  # else an enclosing annotate's
        if mine:
            setattr(model.graph, SOURCED, sourced(model))
        try:
            model = super().annotate(model)
        finally:
            if mine:
                delattr(model.graph, SOURCED)
        if self.reporter is not None:
            self.last_matches = [m for q in self.quantizers for m in getattr(q, "last_matches", ())]
            self.added: dict[Node, str] = {}
            match_report.publish(model, self)
        return model
