"""``PairQuantizer``: ExecuTorch's Cadence scheme, (pattern, config) pairs, over a spec's rules.

ExecuTorch's Cadence quantizers compose ``CadenceAtenQuantizer(pattern,
config)``s, each annotating every match of one pattern with one config, the
first pair first. A ``PairQuantizer`` is one pair, its pattern a rule of a
``scopes: composable`` spec (found by its ops):

* **Matches**: as ExecuTorch's ``find_sequential_partitions_aten``, each node
  calling one of the rule's ops that has a ``source_fn_stack`` is a
  partition; the partitions of each op (grouped by source, then in graph
  order) are combined in ``itertools.product`` order, each used by the next.
  A match is skipped if an op before the last has another user, if a
  ``when:`` condition fails, or if its anchors (the first op, the node that
  takes the output spec) are annotated already.
* **Anchors** by argument index: the first op's ``inputs`` (default the first
  argument) get the input activation spec; its ``weight`` argument the weight
  spec and its ``bias`` argument (if given) an int32 spec derived from the
  first input's and the weight's scales (their product, zero point 0); the
  last op's output the output spec. ``anchors`` overrides these per first op.
  A ``shared`` rule's output shares its first input's spec (max pool with
  indices: on the getitem of its values); one whose first argument is a list
  (cat) gives the first element the input spec and shares it with the rest.
* **Float activations** (a config whose input activation is None, W8A32):
  only the weight and bias arguments are annotated, with the config's weight
  and bias specs.

``last_matches`` lists the matches of the last ``annotate`` as the composable
base's do (``composable.Match``: accepted, or with why it was skipped, the
pair's class, config and rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    QuantizationAnnotation,
    Quantizer,
    SharedQuantizationSpec,
)

from .composable import Match
from .validate import disallowed
from .values import KEY, Rule

__all__ = ["PairQuantizer", "bias_qparams", "partitions"]

aten = torch.ops.aten
WITH_INDICES = aten.max_pool2d_with_indices.default


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


def partitions(model: GraphModule, ops: list) -> list[list[Node]]:
    """ExecuTorch's ``find_sequential_partitions_aten`` (one node a partition), as node lists."""
    typed = []
    for op in ops:
        groups: dict[Any, list[Node]] = {}
        for n in model.graph.nodes:
            stack = n.meta.get("source_fn_stack")
            if stack is not None and n.target == op:
                groups.setdefault(stack[-1][1], []).append(n)
        typed.append([n for g in groups.values() for n in g])
    out: list[list[Node]] = []

    def extend(prefix: list[Node], k: int) -> None:
        if k == len(typed):
            out.append(prefix)
            return
        for n in typed[k]:
            if n in prefix[-1].users:  # torch's check_subgraphs_connected, of one node each
                extend([*prefix, n], k + 1)

    for first in typed[0] if typed else ():
        extend([first], 1)
    return out


def annotate_input(node: Any, arg: Any, spec: Any) -> None:
    """Add ``arg -> spec`` to ``node``'s input specs (an annotation made if it has none)."""
    annotation = node.meta.get(KEY, QuantizationAnnotation(_annotated=True))
    annotation.input_qspec_map[arg] = spec
    node.meta[KEY] = annotation


def annotated(node: Node) -> bool:
    return KEY in node.meta and node.meta[KEY]._annotated


class PairQuantizer(Quantizer):
    """One (pattern, config) pair: ``rule`` annotated with ``config`` wherever it matches."""

    def __init__(
        self,
        rule: Rule,
        config: Any,
        anchors: dict[str, Any] | None = None,
        float_checks: tuple[Callable[..., bool], ...] = (),
    ) -> None:
        super().__init__()
        reasons = [disallowed(a, config) for a in rule.allows]
        if rule.allows and all(reasons):
            raise ValueError(f"{rule.name}: a config the spec does not allow: {'; '.join(reasons)}")
        self.rule, self.config, self.anchors = rule, config, anchors or {}
        self.last_matches: list[Match] = []
        self.float_activations = config.input_activation is None
        self.checks = rule.when + (float_checks if self.float_activations else ())

    def annotate(self, model: GraphModule) -> GraphModule:
        self.last_matches = []
        for nodes in partitions(model, [ops[0] for ops in self.rule.chain]):
            why = self.skipped(nodes)
            match = Match(nodes, why is None, why or "")
            match.stage, match.config, match.rule = type(self).__name__, self.config, self.rule.name
            self.last_matches.append(match)
            if why is not None:
                continue
            if self.float_activations:
                self.parameters_only(nodes[0])
            else:
                self.annotate_match(nodes)
        return model

    def skipped(self, nodes: list[Node]) -> str | None:
        """Why the match ``nodes`` is not annotated, or None."""
        other = next((n for n in nodes[:-1] if len(n.users) != 1), None)
        if other is not None:
            return f"{other.name}'s output has another user"
        failed = next((c for c in self.checks if not c(nodes[0], nodes)), None)  # in order
        if failed is not None:
            name = getattr(failed, "__name__", "a condition")
            return f"a when: condition ({name}) rules the match out"
        taken = [n.name for n in dict.fromkeys(self.anchored(nodes)) if annotated(n)]
        if taken:
            return f"{', '.join(taken)} was annotated first (by an earlier pair)"
        return None

    def output_node(self, nodes: list[Node]) -> Node:
        last = nodes[-1]
        return next(iter(last.users)) if last.target == WITH_INDICES else last

    def anchored(self, nodes: list[Node]) -> list[Node]:
        """The nodes that must not be annotated yet: the first, and the output's (if any)."""
        return nodes[:1] if self.float_activations else [nodes[0], self.output_node(nodes)]

    def annotate_match(self, nodes: list[Node]) -> None:
        first: Any = nodes[0]
        config = self.config
        out_spec = config.output_activation
        listed = bool(first.args) and isinstance(first.args[0], (list, tuple))
        if self.rule.kind == "shared":  # the output shares the first input's spec
            out_spec = SharedQuantizationSpec(
                (first.args[0][0] if listed else first.args[0], first)
            )
        self.output_node(nodes).meta[KEY] = QuantizationAnnotation(
            output_qspec=out_spec, _annotated=True
        )
        if listed:
            for i, x in enumerate(first.args[0]):
                annotate_input(first, x, out_spec if i else config.input_activation)
            return
        inputs = self.anchors.get("inputs", (0,))
        for i in inputs:
            annotate_input(first, first.args[i], config.input_activation)
        weight = self.anchors.get("weight", self.rule.weight)
        if weight is None:
            return
        annotate_input(first, first.args[weight], config.weight)
        bias = self.anchors.get("bias", self.rule.bias)
        if bias is not None and len(first.args) > bias:
            if first.args[bias] is not None or self.anchors.get("none_bias"):
                annotate_input(first, first.args[bias], derived_bias(first, inputs[0], weight))

    def parameters_only(self, node: Any) -> None:
        """Float activations: the weight and bias get the config's weight and bias specs."""
        params = self.anchors.get("parameters")
        if params is not None:  # a hook's: (owner, argument, spec) triples
            for owner, arg, spec in params(node, self.config):
                annotate_input(owner, arg, spec)
            return
        annotate_input(node, node.args[self.rule.weight], self.config.weight)
        annotate_input(node, node.args[self.rule.bias], self.config.bias)

    def validate(self, model: GraphModule) -> None:
        pass

    @classmethod
    def get_supported_operators(cls) -> list:
        return []
