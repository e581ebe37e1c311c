"""Where a rule matches: chains of ATen ops, or the nodes torch's source partitions give.

Every lookup reads the graph's index (``graph.index``), made once per
``annotate``: the nodes that call an op, and the source partitions of a set of
sources, are found once, not once a rule. ``sequential_partitions`` finds
what torchao's ``find_sequential_partitions`` finds, in the same order, from
each partition's users instead of from every pair of partitions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from torch.fx import GraphModule, Node
from torch.fx.passes.utils.source_matcher_utils import SourcePartition
from torchao.quantization.pt2e import graph_utils

from .graph import index, is_op
from .model import Match
from .values import Accept, Rule

T = TypeVar("T")

__all__ = [
    "LongestChains",
    "candidates",
    "chain_at",
    "near",
    "nodes_calling",
    "sequences",
    "sequential_partitions",
    "source_partitions",
]


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


def near(node: Node, rule: Rule, k: int) -> tuple[int, tuple[Any, ...] | None]:
    """A near miss of ``rule.chain`` at ``node`` as its ``k``-th op: how many ops match around
    it (``chain_at``'s walk, both ways), and where it broke: None (nowhere), ``("before",
    prev, cur, ops)``, ``("others", prev, cur)`` (prev has other users), ``("users", cur)``
    (cur has no single user) or ``("after", user, ops)``."""
    got, cur = 1, node
    for j in range(k - 1, -1, -1):
        prev = cur.args[0] if cur.args else None
        if not isinstance(prev, Node) or not is_op(prev, rule.chain[j]):
            return got, ("before", prev, cur, rule.chain[j])
        if len(prev.users) != 1:
            return got, ("others", prev, cur)
        cur, got = prev, got + 1
    cur = node
    for j in range(k + 1, len(rule.chain)):
        if len(cur.users) != 1:
            return got, ("users", cur)
        (u,) = cur.users
        if not is_op(u, rule.chain[j]) or u.args[0] is not cur:
            return got, ("after", u, rule.chain[j])
        cur, got = u, got + 1
    return got, None


def nodes_calling(model: GraphModule, ops: Any) -> list[Node]:
    """The nodes that call one of ``ops`` (``is_op``), in graph order."""
    return index(model).calling(ops) if ops else []


def source_partitions(model: GraphModule, wanted: Any) -> list[SourcePartition]:
    """The source partitions of ``wanted`` sources, as ``get_source_partitions`` gives them,
    one list in its order."""
    found = index(model).source_partitions(list(wanted))
    return list(itertools.chain.from_iterable(found.values()))


def candidates(model: GraphModule, rule: Rule, accept: Accept) -> list[Node]:
    """The nodes a single-op rule annotates: by ATen op, or by source partition."""
    if not rule.sources:
        return [n for n in index(model).calling(rule.chain[0]) if accept([n])]
    return [
        p.output_nodes[0]
        for p in source_partitions(model, rule.sources)
        if accept(p.nodes) and p.output_nodes and is_op(p.output_nodes[0], rule.chain[0])
    ]


def _matching_types(source: Any) -> list[Any]:
    """A source and those torchao counts as the same (``nn.Conv2d`` and ``F.conv2d``), in
    torchao's order (its ``_get_matching_types``)."""
    same = getattr(graph_utils, "_get_matching_types", None)
    if same is not None:
        return list(same(source))
    for group in graph_utils.get_equivalent_types():
        if source in group:
            return [source, *group]
    return [source]


def sequential_partitions(model: GraphModule, types: Any) -> list[tuple[SourcePartition, ...]]:
    """What ``find_sequential_partitions(model, types)`` gives: the tuples of one source
    partition of each type, each with a node used by the next, in the order of
    ``itertools.product`` over the partitions of each type. Found from each partition's
    users (linear in the graph), not by trying every tuple; once per ``types`` an index."""
    types = tuple(types)
    return index(model).derived(("sequential", types), lambda: _sequential(model, types))


def _sequential(model: GraphModule, types: tuple[Any, ...]) -> list[tuple[SourcePartition, ...]]:
    valid = getattr(graph_utils, "_valid_type_sequence", None)
    if valid is not None and not valid(list(types)):
        raise ValueError(
            f"Invalid partition types: {list(types)}. Each type in the sequence must be unique"
        )
    typed = [source_partitions(model, _matching_types(t)) for t in types]
    return sequences(typed, lambda p: p.nodes)


def sequences(
    typed: Sequence[Sequence[T]], nodes: Callable[[T], Iterable[Node]]
) -> list[tuple[T, ...]]:
    """The tuples of one item of each of ``typed`` (partitions, or nodes: ``nodes`` gives an
    item's), each with a node used by the next's, in the order of ``itertools.product`` over
    them (torch's ``find_sequential_partitions``; ExecuTorch's of one node a partition).
    Found from each item's users (linear in the graph), not by trying every tuple."""
    # For each list after the first: node -> the positions of that list's items holding it.
    owners: list[dict[Node, list[int]]] = [{}]
    for items in typed[1:]:
        where: dict[Node, list[int]] = {}
        for i, item in enumerate(items):
            for n in nodes(item):
                where.setdefault(n, []).append(i)
        owners.append(where)
    out: list[tuple[T, ...]] = []

    def extend(prefix: list[T], k: int) -> None:
        if k == len(typed):
            out.append(tuple(prefix))
            return
        after = {i for n in nodes(prefix[-1]) for u in n.users for i in owners[k].get(u, ())}
        for i in sorted(after):
            extend([*prefix, typed[k][i]], k + 1)

    for first in typed[0] if typed else ():
        extend([first], 1)
    return out


class LongestChains:
    """Where the chains of a support table match (ExecuTorch's PatternMatcher): a run of
    nodes, each the only user of the one before, is cut from the front into the longest
    chains of ``table`` (tuples of targets); a placeholder or the output is a match of its
    own. A subclass says whether a chain found is accepted (``validate``; a declined one is
    tried shorter) and what a node is under a config of None (``alone``)."""

    table: Any = {}
    longest = 0

    def validate(self, nodes: list[Node], config: Any) -> Match:
        raise NotImplementedError

    def alone(self, node: Node) -> Match:
        raise NotImplementedError

    def longest_at(self, queue: list[Node]) -> list[Node]:
        if queue[0].op in ("placeholder", "output"):
            return queue[:1]
        for end in range(len(queue), 0, -1):
            if tuple(n.target for n in queue[:end]) in self.table:
                return queue[:end]
        return []

    def dequeue(self, queue: list[Node], config: Any) -> list[Match]:
        """The matches tried at the front of ``queue`` (the last accepted), which they leave."""
        if config is None:
            return [self.alone(queue.pop(0))]
        tried: list[Match] = []
        end = len(queue)
        while end > 0 and not (tried and tried[-1].accepted):
            found = self.longest_at(queue[:end])
            end = len(found) - 1
            if found:
                tried.append(self.validate(found, config))
        del queue[: len(tried[-1].nodes) if tried and tried[-1].accepted else 1]
        return tried

    def matches(self, nodes: Iterator[Node], config: Any) -> Iterator[Match]:
        node, queue = next(nodes, None), []
        while node is not None:
            queue.append(node)
            after = next(nodes, None)
            users = list(node.users)
            if len(users) != 1 or users[0] is not after:
                while queue:
                    yield from self.dequeue(queue, config)
            elif len(queue) >= self.longest:
                yield from self.dequeue(queue, config)
            node = after
