"""Hooks a test spec names by dotted path: what a backend writes in Python for its quantizer."""

from __future__ import annotations

from typing import Any

import torch
from torch.fx import GraphModule, Node

CALLS: list[str] = []


def annotate_matmul(model: GraphModule, config: Any, accept: Any) -> bool:
    """Annotate both operands of every matmul in scope with the input spec."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    CALLS.append("annotate")
    done = False
    for n in model.graph.nodes:
        if n.target == torch.ops.aten.matmul.default and accept([n]):
            n.meta["quantization_annotation"] = QuantizationAnnotation(
                input_qspec_map={a: config.input_activation for a in n.args[:2]},
                output_qspec=config.output_activation,
                _annotated=True,
            )
            done = True
    return done


def from_placeholder(node: Node, model: GraphModule) -> bool:
    """Skip a match whose input is a model input."""
    CALLS.append("skip")
    return node.op == "placeholder"


def mark_transformed(model: GraphModule) -> GraphModule:
    CALLS.append("transform")
    return model


def never(match: Any) -> bool:
    """A check of a whole match (``scopes: composable``) that refuses every match."""
    return False
