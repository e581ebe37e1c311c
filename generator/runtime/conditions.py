"""The conditions that rule a match out, and the skip predicates specs name."""

from __future__ import annotations

from collections.abc import Iterable

from torch.fx import GraphModule, Node

from .graph import not_float
from .values import Rule

__all__ = ["HISTC_UPPER_BOUND", "large_scalar", "skipped"]

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
