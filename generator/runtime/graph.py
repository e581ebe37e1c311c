"""Facts about the nodes of an exported graph that matching and annotating share.

``GraphIndex`` is one pass over a graph that answers what matching asks again
and again (which nodes call an op, which source partitions a set of sources
gives): a quantizer builds it once at the start of ``annotate`` (``reindex``),
and every rule's matching reads it (``index``) instead of walking the graph.
Annotating changes only ``meta``, never the graph, so the index holds for the
whole call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import torch
from torch._subclasses import FakeTensor
from torch.fx import Graph, GraphModule, Node
from torch.fx.passes.utils.source_matcher_utils import SourcePartition, get_source_partitions
from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

from .values import KEY

__all__ = [
    "GraphIndex",
    "calls",
    "index",
    "is_annotated",
    "is_op",
    "mark",
    "float_tensor",
    "not_float",
    "reindex",
    "shared_inputs",
]


def is_op(node: Node, ops: Collection[Any]) -> bool:
    """Whether ``node`` calls one of ``ops`` (overloads, or packets standing for all of theirs)."""
    if node.op != "call_function":
        return False
    target = node.target
    if target in ops:  # `in` is ==, with identity first: the test below, one op at a time
        return True
    packet = getattr(target, "overloadpacket", None)
    return packet is not None and packet in ops


def calls(op: Any, ops: Collection[Any]) -> bool:
    """Whether ``op`` (an overload, or a packet standing for all of its) is one of ``ops``."""
    return any(op == o or getattr(o, "overloadpacket", None) == op for o in ops)


def is_annotated(nodes: Iterable[Node]) -> bool:
    """Whether any of ``nodes`` is annotated already (by a rule, or marked)."""
    return any(KEY in n.meta and n.meta[KEY]._annotated for n in nodes)


def mark(nodes: Iterable[Node], annotation: type = QuantizationAnnotation) -> None:
    """Mark ``nodes`` annotated without a spec, so that no later rule takes them (a node
    without an annotation gets an ``annotation``)."""
    for n in nodes:
        if KEY not in n.meta:
            n.meta[KEY] = annotation()
        n.meta[KEY]._annotated = True


def float_tensor(node: Node, dtype: torch.dtype | None = None, kind: type = torch.Tensor) -> bool:
    """Whether ``node``'s value is a tensor (a ``kind``: torchao's XNNPACK asks a FakeTensor) of
    a floating dtype (``dtype``: of that one only)."""
    val = node.meta.get("val")
    if not isinstance(val, kind):
        return False
    return val.dtype == dtype if dtype is not None else val.dtype.is_floating_point  # type: ignore[attr-defined]


def not_float(node: Node) -> bool:
    """Whether ``node``'s value is not a float32 tensor (an int, a bool tensor, a scalar)."""
    return not float_tensor(node, torch.float32, FakeTensor)


def shared_inputs(node: Node) -> list[Node]:
    """The tensor inputs of a shared-observer op: its first argument, or that list's nodes."""
    first = node.args[0] if node.args else None
    if isinstance(first, (list, tuple)):
        return [a for a in first if isinstance(a, Node)]
    return [first] if isinstance(first, Node) else []


class GraphIndex:
    """The call_function nodes of a graph by target and by overload packet, their order, and
    the source partitions asked for so far (each set of sources once)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.order: dict[Node, int] = {n: i for i, n in enumerate(graph.nodes)}
        self._calling: dict[tuple[Any, ...], list[Node]] = {}
        self._partitions: dict[tuple[Any, ...], dict[Any, list[SourcePartition]]] = {}
        self.memo: dict[Any, Any] = {}  # what matchers derive from the index, by their key
        # The tables below, each made on the first question that needs it (the targets', the
        # sources'): a quantizer that matches by ATen op never reads a node's sources.
        self._by_target: dict[Any, list[Node]] = {}
        self._by_packet: dict[Any, list[Node]] = {}
        self._by_source: dict[Any, list[Node]] = {}
        self._by_torch_fn: dict[Any, list[Node]] = {}
        self._by_module: dict[Any, list[Node]] = {}
        self._built: set[str] = set()

    def _build(self) -> None:
        """The call_function nodes by target, then by overload packet (each target's packet
        looked up once)."""
        self._built.add("targets")
        by_target = self._by_target
        for n in self.order:
            if n.op == "call_function":
                got = by_target.get(n.target)
                if got is None:
                    by_target[n.target] = [n]
                else:
                    got.append(n)
        mixed = set()  # packets of more than one overload: their nodes put in graph order
        for target, nodes in by_target.items():
            packet = getattr(target, "overloadpacket", None)
            if packet is not None:
                got = self._by_packet.setdefault(packet, [])
                if got:
                    mixed.add(packet)
                got += nodes
        for packet in mixed:
            self._by_packet[packet].sort(key=self.order.__getitem__)

    def calling(self, ops: Iterable[Any]) -> list[Node]:
        """The nodes ``is_op(node, ops)`` holds for, in graph order."""
        key = tuple(ops)
        try:
            found = self._calling.get(key)
        except TypeError:  # an unhashable op: asked afresh each time
            key, found = (), None
        if found is not None:
            return found
        if "targets" not in self._built:
            self._build()
        lists = []
        for op in ops:
            try:
                lists += [self._by_target.get(op, []), self._by_packet.get(op, [])]
            except TypeError:  # unhashable: no node's target is it
                continue
        lists = [nodes for nodes in lists if nodes]
        if len(lists) == 1:
            found = lists[0]
        else:
            found = sorted({n for nodes in lists for n in nodes}, key=self.order.__getitem__)
        if key:
            self._calling[key] = found
        return found

    def _sources(self, n: Node) -> None:
        """Index ``n`` by the source of its innermost source_fn_stack entry, else by torch_fn's
        name and its innermost module class."""
        stack = n.meta.get("source_fn_stack")
        try:
            if stack is not None:
                self._by_source.setdefault(stack[-1][1], []).append(n)
                return
            torch_fn = n.meta.get("torch_fn")
            if torch_fn is not None:
                self._by_torch_fn.setdefault(torch_fn[1].split(".")[1], []).append(n)
            modules = n.meta.get("nn_module_stack") if n.op == "call_function" else None
            if modules:
                self._by_module.setdefault(list(modules.values())[-1][1], []).append(n)
        except (TypeError, IndexError):  # a source that is no key: partitions found by torch
            self._by_source.setdefault(_UNINDEXED, []).append(n)

    def source_partitions(self, wanted: Sequence[Any]) -> dict[Any, list[SourcePartition]]:
        """What ``get_source_partitions(graph, wanted)`` gives, once per ``wanted``: its own
        steps over only the nodes the index says a wanted source may take."""
        key = tuple(wanted)
        found = self._partitions.get(key)
        if found is None:
            found = self._partitions[key] = self._find_partitions(list(wanted))
        return found

    def _find_partitions(self, wanted: list[Any]) -> dict[Any, list[SourcePartition]]:
        if "sources" not in self._built:  # the nodes each source could put in a partition
            self._built.add("sources")
            for n in self.order:
                self._sources(n)
        if _UNINDEXED in self._by_source or not all(_hashable(w) for w in wanted):
            return get_source_partitions(self.graph, wanted)
        nodes = [n for w in wanted for n in self._by_source.get(w, [])]
        nodes += [n for w in wanted for n in self._by_torch_fn.get(w, [])]
        for cls, some in self._by_module.items():
            if any(_same_module(cls, src) for src in wanted):
                nodes += some
        modules: dict[Any, dict[str, list[Node]]] = {}
        for n in sorted(set(nodes), key=self.order.__getitem__):
            found = _source_of(n, wanted)
            if found is not None:
                modules.setdefault(found[0], {}).setdefault(found[1], []).append(n)
        return {
            src: [_partition(part, src) for part in parts.values()]
            for src, parts in modules.items()
        }

    def derived(self, key: Any, make: Callable[[], Any]) -> Any:
        """What ``make`` derives from the graph, made once per index under ``key``."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]


_INDEXES: weakref.WeakKeyDictionary[Graph, GraphIndex] = weakref.WeakKeyDictionary()


def reindex(model: GraphModule) -> GraphIndex:
    """A fresh index of ``model``'s graph, which ``index`` gives until the next ``reindex``:
    a quantizer's ``annotate`` makes one first, so that a graph changed since is read anew."""
    found = _INDEXES[model.graph] = GraphIndex(model.graph)
    return found


def index(model: GraphModule) -> GraphIndex:
    """The index of ``model``'s graph made by the last ``reindex`` (made now if none was)."""
    found = _INDEXES.get(model.graph)
    return found if found is not None else reindex(model)


_UNINDEXED = object()


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _same_module(cls: Any, src: Any) -> bool:
    """Whether an innermost module class ``cls`` is taken by source ``src`` (as torch's)."""
    if isinstance(src, type):
        if isinstance(cls, type):
            return issubclass(cls, src)
        return isinstance(cls, str) and cls == src.__module__ + "." + src.__qualname__
    return bool(cls == src)


def _source_of(node: Node, wanted: list[Any]) -> tuple[Any, str] | None:
    """(source, module path) a node is put under by ``get_source_partitions(graph, wanted)``,
    or None: torch's steps, node by node."""
    stack = node.meta.get("source_fn_stack")
    if stack is not None:
        fqn, source = stack[-1][0], stack[-1][1]
        return (source, fqn) if source in wanted else None
    torch_fn = node.meta.get("torch_fn")
    if torch_fn is not None:
        name = torch_fn[1].split(".")[1]
        if name in wanted:
            return name, torch_fn[0]
    modules = node.meta.get("nn_module_stack") if node.op == "call_function" else None
    if modules:
        fqn, cls = list(modules.values())[-1]
        for src in wanted:
            if isinstance(src, type):
                if isinstance(cls, (type, str)) and _same_module(cls, src):
                    return src, fqn
            elif cls == src:
                return src, fqn
    return None


def _partition(nodes: list[Node], source: Any) -> SourcePartition:
    """torch's ``make_partition``: inputs, outputs and parameters of a partition's nodes."""
    members = set(nodes)
    inputs, outputs, params = set(), set(), set()
    for node in nodes:
        for arg in node.args:
            if isinstance(arg, Node) and arg not in members and arg.op != "get_attr":
                inputs.add(arg)
        if node.op == "get_attr":
            params.add(node)
            continue
        for user in node.users:
            if user not in members:
                outputs.add(node)
    return SourcePartition(nodes, source, list(inputs), list(outputs), list(params))
