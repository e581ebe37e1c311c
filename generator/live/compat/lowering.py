"""What ``convert_fx`` does with an op no pattern config matches, between quantized neighbours.

Prepare leaves such an op float (it inserts no observer of its own), but its
input may come from a quantized op (an output observer: ``quantize`` then
``dequantize`` at convert) and a quantized op may read its output (an input
observer: ``quantize``). ``convert_fx`` then lowers the model
(``_lower_to_native_backend.special_pattern_replacement``): for an op torch
knows to work on quantized tensors (``is_special_pattern_node``: copy ops
such as ``torch.flatten`` and ``nn.ReLU``, shape ops, ``torch.cat``, ...)
whose input is a ``dequantize`` and whose output goes to a
``quantize_per_tensor``, it removes both, so the op runs on the quantized
tensor, with its input's scale and zero point. ``convert_to_reference_fx``
keeps both: there the op runs on float values between the two.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.ao.quantization.fx._lower_to_native_backend import is_special_pattern_node
from torch.ao.quantization.observer import _is_activation_post_process
from torch.fx import GraphModule, Node

# The observer dtypes convert_fx quantizes with ``torch.quantize_per_tensor``.
QUANTIZED = (torch.quint8, torch.qint8)


def lowered(prepared: GraphModule) -> dict[str, list[str]]:
    """The nodes of a model prepare_fx observed that convert_fx runs on quantized tensors
    although no pattern quantizes them, each with the nodes whose quantized outputs it
    takes: its input is a quantizing observer's output, and a quantizing observer reads its
    output (what convert turns into ``dequantize`` before it and ``quantize_per_tensor``
    after it, and the lowering then removes)."""
    modules = dict(prepared.named_modules(remove_duplicate=False))
    out: dict[str, list[str]] = {}
    for node in prepared.graph.nodes:
        if node.op not in ("call_module", "call_method", "call_function"):
            continue
        if _observer(node, modules) is not None or not any(is_special_pattern_node(node, modules)):
            continue
        if node.args:
            first = node.args[0]
        elif node.kwargs:
            first = next(iter(node.kwargs.values()))
        else:
            continue
        args: list[Any] = list(first) if isinstance(first, (list, tuple)) else [first]
        inputs = [a for a in args if isinstance(a, Node) and _quantizing(a, modules)]
        if inputs and len(inputs) == len(args) and any(_quantizing(u, modules) for u in node.users):
            out[node.name] = [str(getattr(a.args[0], "name", a.args[0])) for a in inputs]
    return out


def _observer(node: Node, modules: dict[str, Any]) -> Any:
    if node.op != "call_module":
        return None
    module = modules.get(str(node.target))
    return module if module is not None and _is_activation_post_process(module) else None


def _quantizing(node: Node, modules: dict[str, Any]) -> bool:
    """Whether ``node`` is an observer (or fake-quantize) convert_fx makes a static
    ``quantize_per_tensor`` of a quint8 or qint8 tensor."""
    observer = _observer(node, modules)
    if observer is None or not node.args or not isinstance(node.args[0], Node):
        return False
    return observer.dtype in QUANTIZED and not getattr(observer, "is_dynamic", False)
