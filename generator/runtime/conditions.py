"""The conditions that rule a match out, and the skip predicates specs name."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch._subclasses import FakeTensor
from torch.fx import GraphModule, Node

from .graph import float_tensor, not_float
from .model import Check, Context, Decline, Reason, failing
from .values import KEY, Rule

__all__ = [
    "FLAG",
    "HISTC_UPPER_BOUND",
    "decline",
    "unmet",
    "depthwise",
    "grouped",
    "relu_user",
    "input_quantized",
    "inputs_quantized",
    "large_scalar",
    "quantized",
    "same_shape",
    "user_quantizable",
]

# torch.histc, which HistogramObserver uses, works up to this bound.
HISTC_UPPER_BOUND = 3.4028235e15


def decline(
    rule: Rule, inputs: Iterable[Node], model: GraphModule, root: Node | None = None
) -> Decline | None:
    """Why the match is ruled out, or None: a skip predicate of the first op holds for
    ``root``, or, for an activation input, the input is not a float32 tensor (any floating
    dtype with ``any_float``) or a skip predicate holds for it."""
    for skip in rule.skip:
        if getattr(skip, "first_op", False) and root is not None and skip(root, model):
            return Decline(Reason.SKIP, f"skip predicate {_name(skip)} holds for {root.name}")
    for n in inputs:
        for skip in rule.skip:
            if not getattr(skip, "first_op", False) and skip(n, model):
                return Decline(Reason.SKIP, f"skip predicate {_name(skip)} holds for {n.name}")
        if not_floating(n) if rule.any_float else not_float(n):
            val = n.meta.get("val")
            what = f"a {val.dtype} tensor" if isinstance(val, torch.Tensor) else "not a tensor"
            want = "floating" if rule.any_float else "float32"
            return Decline(
                Reason.NON_FLOAT_INPUT, f"activation input {n.name} is {what}, not {want}"
            )
    return None


def unmet(checks: Sequence[Check], context: Context) -> Decline | None:
    """The first of a rule's ``when:`` conditions that does not hold for a match."""
    failed = failing(checks, context)
    if failed is None:
        return None
    return Decline(Reason.SKIP, f"condition {_name(failed)} does not hold for {context.node.name}")


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", repr(fn))


def not_floating(node: Node) -> bool:
    """Whether ``node``'s value is not a tensor of a floating dtype (float16 and bfloat16 are)."""
    return not float_tensor(node, kind=FakeTensor)


def first_op(fn: Callable[[Node, GraphModule], bool]) -> Callable[[Node, GraphModule], bool]:
    """Mark a skip predicate as one of the pattern's first op, not of its activation inputs."""
    fn.first_op = True  # type: ignore[attr-defined]
    return fn


def _shape(node: Any) -> tuple[int, ...] | None:
    val = node.meta.get("val") if isinstance(node, Node) else None
    return tuple(val.shape) if val is not None and hasattr(val, "shape") else None


@first_op
def depthwise(node: Node, model: GraphModule) -> bool:
    """Skip predicate of a conv: its weight has one input channel per group (ExecuTorch's
    ``is_depthwise_conv`` of the weight's shape with groups=1)."""
    shape = _shape(node.args[1]) if len(node.args) > 1 else None
    return shape is not None and len(shape) >= 2 and shape[1] == 1


@first_op
def grouped(node: Node, model: GraphModule) -> bool:
    """Skip predicate of a conv: it has more than one group (ExecuTorch's ``get_groups_from_conv``:
    input channels over the weight's per group, or for a transposed conv output channels)."""
    weight = _shape(node.args[1]) if len(node.args) > 1 else None
    transposed = "conv_transpose" in str(getattr(node.target, "__name__", node.target))
    channels = _shape(node if transposed else node.args[0])
    if weight is None or channels is None or len(weight) < 2 or len(channels) < 2:
        return False
    return channels[1] // weight[1] != 1


@first_op
def relu_user(node: Node, model: GraphModule) -> bool:
    """Skip predicate: the op's only user is a relu (ExecuTorch fuses the two, or neither)."""
    users = list(node.users)
    return len(users) == 1 and users[0].op == "call_function" and users[0].target in RELU


RELU = (torch.ops.aten.relu.default, torch.ops.aten.relu_.default)


def large_scalar(node: Node, model: GraphModule) -> bool:
    """Skip predicate: a one-element tensor constant beyond what HistogramObserver can observe."""
    if node.op != "get_attr" or not isinstance(node.target, str):
        return False
    tensor = operator.attrgetter(node.target)(model)
    return bool(tensor.numel() == 1 and abs(tensor.item()) > HISTC_UPPER_BOUND)


# Conditions a match must meet (``pt2e: {when: ...}``), under every composition: each a
# ``model.Check``, ``fn(match) -> bool`` of a ``model.Context``. "Quantized" is the output
# of a quantized pattern (``quantized``).


def input_quantized(match: Context) -> bool:
    """The first input of the match's first op comes from a quantized pattern."""
    inputs = match.node.all_input_nodes
    return bool(inputs) and quantized(inputs[0])


def inputs_quantized(match: Context) -> bool:
    """Every input of the match's first op comes from a quantized pattern."""
    return all(quantized(n) for n in match.node.all_input_nodes)


def user_quantizable(match: Context) -> bool:
    """No user, or a user the quantizer quantizes (one of its patterns' first ops)."""
    users = match.node.users
    return not users or any(u.target in match.quantizable for u in users)


def same_shape(match: Context) -> bool:
    """Two tensor arguments of one shape (a mul of tensors, not by a scalar)."""
    node = match.node
    vals = [a.meta.get("val") for a in node.args if isinstance(a, Node)]
    tensors = [v for v in vals if isinstance(v, FakeTensor)]
    return len(node.args) == 2 and len(tensors) == 2 and tensors[0].shape == tensors[1].shape


def quantized(node: Node) -> bool:
    """Whether ``node`` is annotated as the output of a quantized pattern: flagged so (an
    operator-scoped quantizer's outputs, observed by their consumers), or with an output
    spec (every other composition's)."""
    qa = node.meta.get(KEY)
    if qa is None or not qa._annotated:
        return False
    return bool(getattr(qa, FLAG, False)) or qa.output_qspec is not None


# The flag an operator-scoped quantizer's annotation sets on a quantized pattern's output.
FLAG = "_is_output_of_quantized_pattern"
