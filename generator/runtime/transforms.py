"""Graph rewrites a quantizer runs before annotating (``transform_for_annotation``)."""

from __future__ import annotations

from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.utils import get_new_attr_name_with_prefix

__all__ = ["run", "scalars_to_tensors"]


def run(transforms: Any, model: GraphModule) -> GraphModule:
    """``model`` through each of ``transforms`` in turn (a quantizer's transform_for_annotation)."""
    for transform in transforms:
        model = transform(model)
    return model


class scalars_to_tensors:  # noqa: N801 - named as the spec names it
    """Transform hook: scalar arguments of ``ops`` become tensor constants, so they are observed."""

    def __init__(self, *ops: Any) -> None:
        self.ops = ops

    def __repr__(self) -> str:
        return f"scalars_to_tensors({', '.join(map(str, self.ops))})"

    def __call__(self, model: GraphModule) -> GraphModule:
        for n in model.graph.nodes:
            if n.op != "call_function" or n.target not in self.ops:
                continue
            args = []
            for a in n.args:
                if isinstance(a, Node):
                    args.append(a)
                    continue
                name = get_new_attr_name_with_prefix("_tensor_constant_")(model)
                value = torch.tensor(float(a))
                model.register_buffer(name, value)
                with model.graph.inserting_before(n):
                    attr = model.graph.create_node("get_attr", name, (), {})
                    attr.meta["val"] = n.meta["val"].fake_mode.from_tensor(
                        value, static_shapes=True
                    )
                args.append(attr)
            n.args = tuple(args)
        model.recompile()
        return model
