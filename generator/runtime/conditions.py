"""The conditions that rule a match out, and the skip predicates specs name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch._subclasses import FakeTensor
from torch.fx import GraphModule, Node

from .graph import not_float
from .values import KEY, Rule

__all__ = [
    "FLAG",
    "HISTC_UPPER_BOUND",
    "input_quantized",
    "inputs_quantized",
    "large_scalar",
    "quantized",
    "same_shape",
    "skipped",
    "user_quantizable",
]

# torch.histc, which HistogramObserver uses, works up to this bound.
HISTC_UPPER_BOUND = 3.4028235e15


def skipped(rule: Rule, inputs: Iterable[Node], model: GraphModule) -> bool:
    """Whether an activation input rules the match out: not a float32 tensor, or a skip predicate holds."""
    for n in inputs:
        if any(skip(n, model) for skip in rule.skip) or not_float(n):
            return True
    return False


def large_scalar(node: Node, model: GraphModule) -> bool:
    """Skip predicate: a one-element tensor constant beyond what HistogramObserver can observe."""
    if node.op != "get_attr":
        return False
    path, _, name = str(node.target).rpartition(".")
    tensor = getattr(model.get_submodule(path), name)
    return bool(tensor.numel() == 1 and abs(tensor.item()) > HISTC_UPPER_BOUND)


# Conditions a match must meet (``pt2e: {when: ...}``), for operator-scoped quantizers:
# ``fn(node, quantizable_ops) -> bool`` on the pattern's first op, checked when a config
# quantizes it. "Quantized" is the output of a quantized pattern (operators.quantized).


def input_quantized(node: Node, quantizable: frozenset[Any]) -> bool:
    """The first input comes from a quantized pattern."""
    inputs = node.all_input_nodes
    return bool(inputs) and quantized(inputs[0])


def inputs_quantized(node: Node, quantizable: frozenset[Any]) -> bool:
    """Every input comes from a quantized pattern."""
    return all(quantized(n) for n in node.all_input_nodes)


def user_quantizable(node: Node, quantizable: frozenset[Any]) -> bool:
    """No user, or a user the quantizer quantizes (one of its patterns' first ops)."""
    return not node.users or any(u.target in quantizable for u in node.users)


def same_shape(node: Node, quantizable: frozenset[Any]) -> bool:
    """Two tensor arguments of one shape (a mul of tensors, not by a scalar)."""
    vals = [a.meta.get("val") for a in node.args if isinstance(a, Node)]
    tensors = [v for v in vals if isinstance(v, FakeTensor)]
    return len(node.args) == 2 and len(tensors) == 2 and tensors[0].shape == tensors[1].shape


def quantized(node: Node) -> bool:
    """Whether ``node`` is annotated as the output of a quantized pattern."""
    qa = node.meta.get(KEY)
    return qa is not None and qa._annotated and bool(getattr(qa, FLAG, False))


# The flag an operator-scoped quantizer's annotation sets on a quantized pattern's output.
FLAG = "_is_output_of_quantized_pattern"
