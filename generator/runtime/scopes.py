"""Scopes: which quantization config annotates which nodes.

A scope is a config and the test of a match's nodes that says whether the
config annotates them (``accept``). ``module_scopes`` gives the usual
precedence: module names (in the order set), then module types, then
operator types, then the global config; a node claimed by an earlier kind of
scope is in no later one. ``Select`` gives a config per node by the levels a spec's
``select:`` ranks (the ``scopes: registry`` preset's selector).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch.fx import Node
from torchao.quantization.pt2e.quantizer.utils import get_module_name_filter

from .graph import is_op
from .values import Accept

__all__ = ["LEVELS", "Scope", "Select", "module_scopes", "module_type_filter"]


@dataclass
class Scope:
    """One config of a quantizer, with what it is set for (``label``) and what it accepts."""

    label: str
    config: Any
    accept: Accept
    # An operator-type scope of a quantizer whose operator_type is "patterns": the op
    # whose rules it tries (Rule.selected_by); None: it tries every rule.
    selects: Any = None


def all_nodes(f: Callable[[Node], bool]) -> Accept:
    return lambda nodes: all(f(n) for n in nodes)


def everything(nodes: Sequence[Node]) -> bool:
    """The test of a scope that accepts every match (a global config with nothing set before)."""
    return True


def both(a: Accept, b: Accept) -> Accept:
    if a is everything:
        return b
    if b is everything:
        return a
    return lambda nodes: a(nodes) and b(nodes)


def module_type_filter(tp: Any) -> Callable[[Node], bool]:
    """Whether a node comes from a module of type ``tp`` (exactly, as torchao's quantizers)."""
    wanted = tp.__module__ + "." + tp.__qualname__

    def module_type_filter(n: Node) -> bool:
        for _, t in n.meta.get("nn_module_stack", {}).values():
            if (t.__module__ + "." + t.__qualname__ if isinstance(t, type) else t) == wanted:
                return True
        return False

    return module_type_filter


def module_scopes(
    global_config: Any,
    module_name_config: dict[str, Any],
    module_type_config: dict[Any, Any],
    operator_type_config: dict[Any, Any],
    operator_type: str = "nodes",
) -> list[Scope]:
    """The scopes of a quantizer configured by module name, module type, operator type, global.

    ``operator_type`` "nodes": an operator-type scope takes the matches with an op of
    its type, and the global one leaves them; "patterns": it tries only the rules that
    type selects, on whatever is not in a module name's or type's scope, and the global
    one takes all that is not (what an operator type annotated is annotated already).
    """
    names = [get_module_name_filter(n) for n in module_name_config]
    types = [module_type_filter(t) for t in module_type_config]
    ops = list(operator_type_config)

    def free(n: Node, filters: list[Callable[[Node], bool]]) -> bool:
        return not any(f(n) for f in filters)

    scopes = [
        Scope(f"module_name {name!r}", config, all_nodes(f))
        for (name, config), f in zip(module_name_config.items(), names)
    ]
    for (tp, config), f in zip(module_type_config.items(), types):
        label = f"module_type {tp.__module__}.{tp.__qualname__}"
        scopes.append(
            Scope(label, config, all_nodes(lambda n, f=f: f(n) and free(n, names)))  # type: ignore[misc]
        )
    # Nothing set by module: every node is unclaimed (the test asks nothing of a node).
    unclaimed = all_nodes(lambda n: free(n, names + types)) if names or types else everything
    if operator_type == "patterns":
        for op, config in operator_type_config.items():
            scopes.append(Scope(f"operator_type {op}", config, unclaimed, selects=op))
        scopes.append(Scope("global", global_config, unclaimed))
        return scopes
    for op, config in operator_type_config.items():
        accept = both(unclaimed, lambda nodes, op=op: any(is_op(n, (op,)) for n in nodes))  # type: ignore[misc]
        scopes.append(Scope(f"operator_type {op}", config, accept))
    last = (
        both(unclaimed, lambda nodes: not any(is_op(n, ops) for n in nodes)) if ops else unclaimed
    )
    scopes.append(Scope("global", global_config, last))
    return scopes


# The levels a ``Select`` may rank (a spec's ``select:`` words), and what a level's key is.
LEVELS = {
    "node_name": "a node's name",
    "module_name": "a module's qualified name (the node comes from it or a submodule of it)",
    "module_type": "a module type (the node comes from a module of exactly that type)",
    "submodule": "a predicate of a node",
    "op_set": "an op or a collection of ops (the node calls one of them)",
    "default": "none (it takes every node)",
}


class Select:
    """A config per node by levels in order of precedence (a spec's ``select:``, Qualcomm's
    node name > submodule predicate > per-op set > default; torchao's module name > module
    type > global). Each level holds ``(key, config)`` entries, set by ``set``; a node gets
    the config of the first entry of the first level whose key takes it (``choose``), one
    a config that is a function of the node called with it (a config the node decides:
    Qualcomm's per-block weight axis). A node no entry takes gets no config."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = tuple(order)
        self.entries: dict[str, list[tuple[Any, Any]]] = {level: [] for level in self.order}
        self._tests: list[tuple[str, Callable[[Node], Any]]] = []

    def set(self, level: str, entries: Any) -> None:
        """The entries of ``level``, replacing its earlier ones: ``(key, config)`` pairs, or a
        dict of them."""
        if level not in self.entries:
            raise ValueError(
                f"this quantizer selects a config by {', '.join(self.order)}, not by {level} "
                f"(its spec's select: says the levels)"
            )
        self.entries[level] = list(entries.items() if isinstance(entries, dict) else entries)
        self._tests = []

    def add(self, level: str, key: Any, config: Any) -> None:
        """One more entry of ``level``, after its others."""
        self.set(level, [*self.entries.get(level, ()), (key, config)])

    def levels(self) -> list[tuple[str, Callable[[Node], tuple[Any, Any] | None]]]:
        """Each level with its lookup: the ``(key, config)`` of the entry that takes a node,
        or None (node names and ops looked up in a dict, other keys tried in order)."""
        if not self._tests:
            self._tests = [(level, _lookup(level, self.entries[level])) for level in self.order]
        return self._tests

    def choose(self, node: Node) -> Scope | None:
        """The entry that takes ``node`` (its config called with it if a function), or None."""
        for level, lookup in self.levels():
            hit = lookup(node)
            if hit is not None:
                return self._scope(level, hit[0], hit[1], node)
        return None

    @staticmethod
    def _scope(level: str, key: Any, config: Any, node: Node) -> Scope:
        label = level if level == "default" else f"{level} {getattr(key, '__name__', key)}"
        return Scope(label, config(node) if callable(config) else config, everything)


def _lookup(level: str, entries: list[tuple[Any, Any]]) -> Callable[[Node], Any]:
    """The lookup of one level's entries, the first entry of a key winning."""
    if level == "node_name":
        names = dict(reversed(entries))
        return lambda n: (n.name, names[n.name]) if n.name in names else None
    if level == "op_set":
        ops = {
            op: c
            for k, c in reversed(entries)
            for op in (k if isinstance(k, (list, tuple, set, frozenset)) else (k,))
        }
        return lambda n: (n.target, ops[n.target]) if _calls(n) and n.target in ops else None
    tests = [(k, _test(level, k), c) for k, c in entries]
    return lambda n: next(((k, c) for k, f, c in tests if f(n)), None)


def _calls(node: Node) -> bool:
    return not isinstance(node.target, str)  # a placeholder's or module's name, not an op


def _test(level: str, key: Any) -> Callable[[Node], bool]:
    if level == "module_name":
        return get_module_name_filter(key)
    if level == "module_type":
        return module_type_filter(key)
    if level == "submodule":
        return key
    return lambda n: True  # default
