"""What specs/neuropilot.bcfg says in Python: MediaTek's scheme of annotating outputs.

bcfg's presets give a matched op input specs; MediaTek's annotator gives its ops output
specs only, the model's float inputs the activation spec, and RMSNorm's result alone
one. ``Outputs`` is that scheme over the spec's rules (an op and its relu; single ops; a
weight quantized where the rule says ``weight_axis``, embedding's table, at argument 0,
with the activation spec), with MediaTek's configs and ``setup_precision``;
``decompose_sdpa`` is MediaTek's own pass. MediaTek's modules are imported when used:
its package ``__init__`` needs the NeuroPilot SDK (``tests/live/vendor_zoo.py`` shows
how to import them without it)."""

from __future__ import annotations

from typing import Any

KEY = "quantization_annotation"


def decompose_sdpa(model: Any) -> Any:
    """MediaTek's transform: scaled_dot_product_attention decomposed into its ops."""
    from executorch.backends.mediatek._passes import decompose_scaled_dot_product_attention as p

    return p.DecomposeScaledDotProductAttention()(model).graph_module


def _annotate(node: Any, inputs: Any = (), output: Any = None) -> None:
    """``node`` marked annotated, with these input specs and output spec (if not None)."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    annotation = node.meta.setdefault(KEY, QuantizationAnnotation())
    annotation.input_qspec_map.update(inputs)
    annotation.output_qspec = annotation.output_qspec if output is None else output
    annotation._annotated = True


def _rmsnorm(graph: Any, q: Any, ops: Any) -> None:
    """MediaTek's two RMSNorm graphs (x * x, x.pow(2)): their ops of the registry marked,
    the result given the activation spec (MediaTek exports them at each call too)."""
    import torch
    from torch.fx.passes.utils import matcher_with_name_node_map_utils as m

    for square in (lambda x: x * x, lambda x: x.pow(2)):

        def fn(s: Any, x: Any, sq: Any = square) -> Any:
            return x * torch.rsqrt(sq(x).mean(-1, keepdim=True) + 1e-6), {}

        mod = type("RMSNorm", (torch.nn.Module,), {"forward": fn})()
        pattern = torch.export.export(mod, (torch.randn(3, 3),), strict=True).module()
        for match in m.SubgraphMatcherWithNameNodeMap(pattern, ignore_literals=True, remove_overlapping_matches=False).match(graph):  # fmt: skip
            found = [n for n in match.nodes_map.values() if n not in match.placeholder_nodes and n.target in ops]  # fmt: skip
            for n in (
                found if not any(getattr(n.meta.get(KEY), "_annotated", 0) for n in found) else ()
            ):
                _annotate(n, output=q.activation if n in match.returning_nodes else None)


class Outputs:
    """MediaTek's NeuropilotQuantizer(): A8W8 per channel until ``setup_precision``."""

    def __init__(self) -> None:
        from executorch.backends.mediatek.quantizer import qconfig

        super().__init__()
        self._qconfig, self._precision, self._is_per_channel, self._is_qat = qconfig, qconfig.Precision.A8W8, True, False  # fmt: skip

    def setup_precision(self, precision: Any) -> None:
        self._precision = precision

    def annotate(self, model: Any) -> Any:
        """RMSNorm first; then in graph order an op and its relu (MediaTek's fused pass, done
        at the op: it is before its relu, which nothing else annotates), the model's inputs
        and the single ops not annotated yet."""
        # MediaTek's config: its activation spec is a fresh copy at each read.
        q = self._qconfig.get_quant_config(self._precision, self._is_per_channel, self._is_qat)
        single = {op: r for r in self.rules if len(r.chain) == 1 for op in r.chain[0]}
        fused = {(a, b): r for r in self.rules if len(r.chain) == 2 for a in r.chain[0] for b in r.chain[1]}  # fmt: skip
        _rmsnorm(model.graph, q, single)
        for node in model.graph.nodes:
            user = next(iter(node.users)) if len(node.users) == 1 else None
            pair = fused.get((node.target, getattr(user, "target", None)))
            rule = pair or single.get(node.target)
            if pair is None and (getattr(node.meta.get(KEY), "_annotated", 0) or (rule is None and node.op != "placeholder")):  # fmt: skip
                continue
            weight = {node.args[rule.weight]: q.weight} if rule and rule.weight_axis is not None else {}  # fmt: skip
            if rule is None:  # a model input: the activation spec if a float32 tensor
                _annotate(node, output=q.activation if str(getattr(node.meta.get("val"), "dtype", "")) == "torch.float32" else None)  # fmt: skip
            elif rule.weight == 0:  # embedding: the table gets the activation spec, no output
                _annotate(node, {node.args[0]: q.activation})
            else:  # the op's weight and output; with its relu, the relu's output instead
                _annotate(node, weight, None if pair else q.activation)
                for relu in [user] if pair else []:
                    _annotate(relu, output=q.activation)
            for w in weight:
                _annotate(w)
        return model
