"""Facts about the nodes of an exported graph that matching and annotating share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch._subclasses import FakeTensor
from torch.fx import Node
from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

from .values import KEY

__all__ = ["is_annotated", "is_op", "mark", "not_float", "shared_inputs"]


def is_op(node: Node, ops: Iterable[Any]) -> bool:
    """Whether ``node`` calls one of ``ops`` (overloads, or packets standing for all of theirs)."""
    if node.op != "call_function":
        return False
    packet = getattr(node.target, "overloadpacket", None)
    return any(node.target == op or packet == op for op in ops)


def is_annotated(nodes: Iterable[Node]) -> bool:
    """Whether any of ``nodes`` is annotated already (by a rule, or marked)."""
    return any(KEY in n.meta and n.meta[KEY]._annotated for n in nodes)


def mark(nodes: Iterable[Node]) -> None:
    """Mark ``nodes`` annotated without a spec, so that no later rule takes them."""
    for n in nodes:
        if KEY not in n.meta:
            n.meta[KEY] = QuantizationAnnotation()
        n.meta[KEY]._annotated = True


def not_float(node: Node) -> bool:
    """Whether ``node``'s value is not a float32 tensor (an int, a bool tensor, a scalar)."""
    val = node.meta.get("val")
    return not isinstance(val, FakeTensor) or val.dtype != torch.float32


def shared_inputs(node: Node) -> list[Node]:
    """The tensor inputs of a shared-observer op: its first argument, or that list's nodes."""
    first = node.args[0] if node.args else None
    if isinstance(first, (list, tuple)):
        return [a for a in first if isinstance(a, Node)]
    return [first] if isinstance(first, Node) else []
