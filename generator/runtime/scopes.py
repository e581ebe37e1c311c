"""Scopes: which quantization config annotates which nodes.

A scope is a config and the test of a match's nodes that says whether the
config annotates them (``accept``). ``module_scopes`` gives the usual
precedence: module names (in the order set), then module types, then
operator types, then the global config; a node claimed by an earlier kind of
scope is in no later one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch.fx import Node
from torchao.quantization.pt2e.quantizer.utils import get_module_name_filter

from .graph import is_op
from .values import Accept

__all__ = ["Scope", "module_scopes", "module_type_filter", "ranked", "scope_of"]


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


def ranked(levels: Sequence[tuple[str, Any, Callable[[Node], bool]]]) -> list[Scope]:
    """Scopes in order of precedence, one a level ``(label, config, test of a node)``: a node
    is in the first level whose test holds for it (a selector of a composition's own order,
    as Qualcomm's: node name, then submodule, then per-op, then default)."""
    tests = [test for _, _, test in levels]

    def first(k: int) -> Callable[[Node], bool]:
        return lambda n: tests[k](n) and not any(f(n) for f in tests[:k])

    return [
        Scope(label, config, all_nodes(first(k))) for k, (label, config, _) in enumerate(levels)
    ]


def scope_of(scopes: Sequence[Scope], nodes: Sequence[Node]) -> Scope | None:
    """The first of ``scopes`` that accepts ``nodes``, or None."""
    return next((s for s in scopes if s.accept(nodes)), None)
