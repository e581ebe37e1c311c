"""X86InductorQuantizer's binary patterns as annotate hooks: the Python a backend writes for what is not a chain.

``tests/live/x86_inductor.bcfg`` names them. Each is called as
``fn(model, config, accept) -> bool`` and annotates as X86 does
(x86_inductor_quantizer.py: ``_annotate_conv2d_binary(_unary)``,
``_annotate_mul_tensor``), with outputs left to their consumers as the spec's
``outputs: consumers`` says.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._subclasses import FakeTensor
from torch.fx import GraphModule, Node

ATEN = torch.ops.aten
KEY = "quantization_annotation"
RELU = (ATEN.relu.default, ATEN.relu_.default)


def _annotated(nodes: list[Node]) -> bool:
    return any(KEY in n.meta and n.meta[KEY]._annotated for n in nodes)


def _conv_and_other(add: Node) -> tuple[Node, Node] | None:
    """For ``conv2d(...) + other`` (either order; the conv with no other user): (conv, other)."""
    if add.op != "call_function" or add.target != ATEN.add.Tensor or len(add.args) != 2:
        return None
    for i in (0, 1):
        conv, other = add.args[i], add.args[1 - i]
        if isinstance(conv, Node) and conv.op == "call_function":
            if conv.target != ATEN.conv2d.default or len(conv.users) != 1:
                return None
            return (conv, other) if isinstance(other, Node) else None
    return None


def _annotate(conv: Node, add: Node, other: Node, last: Node, config: Any) -> None:
    """The conv's inputs and the add's other input quantized; the pattern's output left to consumers."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    roles = {conv.args[0]: config.input_activation, conv.args[1]: config.weight}
    if len(conv.args) > 2 and isinstance(conv.args[2], Node):
        roles[conv.args[2]] = config.bias
    conv.meta[KEY] = QuantizationAnnotation(input_qspec_map=roles, _annotated=True)
    add.meta[KEY] = QuantizationAnnotation(
        input_qspec_map={other: config.input_activation}, _annotated=True
    )
    if last is not add:
        last.meta[KEY] = QuantizationAnnotation(_annotated=True)


def _conv_add(model: GraphModule, config: Any, accept: Any, relu: bool) -> bool:
    done = False
    for last in list(model.graph.nodes):
        add = last
        if relu:
            if last.op != "call_function" or last.target not in RELU:
                continue
            add = last.args[0]
        found = _conv_and_other(add) if isinstance(add, Node) else None
        if found is None:
            continue
        nodes = [last, add, found[0]] if relu else [add, found[0]]
        if _annotated(nodes) or not accept(nodes):
            continue
        _annotate(found[0], add, found[1], last, config)
        done = True
    return done


def conv_add_relu(model: GraphModule, config: Any, accept: Any) -> bool:
    """conv2d + add + relu: X86's binary-unary pattern."""
    return _conv_add(model, config, accept, relu=True)


def conv_add(model: GraphModule, config: Any, accept: Any) -> bool:
    """conv2d + add: X86's binary pattern."""
    return _conv_add(model, config, accept, relu=False)


def mul_of_tensors(model: GraphModule, config: Any, accept: Any) -> bool:
    """mul of two tensors of one shape, both inputs quantized (X86 leaves a scalar's alone)."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    done = False
    for mul in list(model.graph.nodes):
        if mul.op != "call_function" or mul.target != ATEN.mul.Tensor:
            continue
        if _annotated([mul]) or not accept([mul]):
            continue
        vals = [a.meta.get("val") if isinstance(a, Node) else None for a in mul.args]
        if not all(isinstance(v, FakeTensor) for v in vals) or vals[0].shape != vals[1].shape:
            continue
        mul.meta[KEY] = QuantizationAnnotation(
            input_qspec_map={a: config.input_activation for a in mul.args}, _annotated=True
        )
        done = True
    return done
