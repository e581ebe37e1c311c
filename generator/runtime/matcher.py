"""Where a rule matches: chains of ATen ops, or the nodes torch's source partitions give."""

from __future__ import annotations

import itertools

from torch.fx import GraphModule, Node
from torch.fx.passes.utils.source_matcher_utils import get_source_partitions

from .graph import is_op
from .values import Accept, Rule

__all__ = ["candidates", "chain_at"]


def chain_at(node: Node, rule: Rule) -> list[Node] | None:
    """The ops of ``rule.chain`` ending at ``node``, in forward order, or None."""
    if not is_op(node, rule.chain[-1]):
        return None
    found = [node]
    for ops in reversed(rule.chain[:-1]):
        prev = found[-1].args[0] if found[-1].args else None
        if not isinstance(prev, Node) or not is_op(prev, ops) or len(prev.users) != 1:
            return None
        found.append(prev)
    found.reverse()
    return found


def candidates(model: GraphModule, rule: Rule, accept: Accept) -> list[Node]:
    """The nodes a single-op rule annotates: by ATen op, or by source partition."""
    if not rule.sources:
        return [n for n in model.graph.nodes if is_op(n, rule.chain[0]) and accept([n])]
    found = get_source_partitions(model.graph, list(rule.sources))
    parts = itertools.chain.from_iterable(found.values())
    return [
        p.output_nodes[0]
        for p in parts
        if accept(p.nodes) and p.output_nodes and is_op(p.output_nodes[0], rule.chain[0])
    ]
