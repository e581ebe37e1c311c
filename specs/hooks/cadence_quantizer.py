"""ExecuTorch's Cadence quantizer classes over specs/cadence.bcfg's rules.

The same names, constructors and composition as ExecuTorch 1.5.1's
``executorch.backends.cadence.aot.quantizer.quantizer``: a ``CadenceQuantizer``
composes ``CadenceAtenQuantizer(pattern, config)``s, each annotating the
matches of one of ExecuTorch's pattern objects (kept: its ``fuse`` is the
post-convert fusion pass's) with one config. The rule of a pattern is the
spec's rule of its ops (``partition_types()``): its checks (``when:``), the
configs it allows (``dtypes:``; another raises at construction), its weight
and bias arguments (the op table's), and whether its output shares its input's
spec (``shared_observer``). What the spec cannot say yet is ``ANCHORS`` below:
the inputs of ops that take two activations or put them elsewhere, by argument
index, and W8A32's variant (weights only). The ``qconfig_*`` objects are
ExecuTorch's own (its tests compare observer factories by identity).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

import torch
from executorch.backends.cadence.aot.quantizer import patterns as P
from executorch.backends.cadence.aot.quantizer.quantizer import (  # noqa: F401 (re-exported)
    qconfig_A8W8,
    qconfig_A8W8_qat,
    qconfig_A8W8sym,
    qconfig_A8W8sym_qat,
    qconfig_A16,
    qconfig_A32W8sym,
)
from torch.fx import GraphModule, Node
from torch.fx.passes.utils.source_matcher_utils import check_subgraphs_connected
from torchao.quantization.pt2e.quantizer import (
    ComposableQuantizer,
    DerivedQuantizationSpec,
    QuantizationAnnotation,
    Quantizer,
    SharedQuantizationSpec,
)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY

from generated._bcfg_pt2e.validate import disallowed
from generated.cadence_quantizer import RULES
from specs.hooks import cadence as checks

__all__ = [
    "CadenceAtenQuantizer", "CadenceQuantizer", "CadenceDefaultQuantizer",
    "CadenceFusedConvReluQuantizer", "CadenceNopQuantizer", "CadenceRmsNormNopQuantizer",
    "CadenceW8A32MixedQuantizer", "CadenceWakeWordQuantizer", "CadenceWithLayerNormQuantizer",
    "CadenceWithSoftmaxQuantizer", "CadenceWith16BitConvActivationsQuantizer",
    "CadenceWith16BitLinearActivationsQuantizer", "CadenceWith16BitMatmulActivationsQuantizer",
    "get_cadence_default_quantizers",
]  # fmt: skip

aten = torch.ops.aten
# Activation inputs by argument index where they are not the first argument alone
# (addmm(bias, input, weight): input 1, weight 2, bias 0 derived from both).
ANCHORS: dict[Any, dict[str, Any]] = {
    aten.addmm.default: {"inputs": (1,), "weight": 2, "bias": 0},
    aten.bmm.default: {"inputs": (0, 1)},
    aten.matmul.default: {"inputs": (0, 1)},
    aten.add.Tensor: {"inputs": (0, 1)},
    aten.layer_norm.default: {"weight": None, "bias": None},  # float weight and bias
}
W8A32_CHECKS = {aten.linear.default: checks.w8a32_linear, aten.conv1d.default: checks.w8a32_conv}
BY_CHAIN = {tuple(ops[0] for ops in r.chain): r for r in RULES}


def bias_qparams(observers: list) -> tuple[torch.Tensor, torch.Tensor]:
    """The int32 bias's qparams: the input's scale times the weight's, zero point 0."""
    scale = observers[0].calculate_qparams()[0] * observers[1].calculate_qparams()[0]
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def derived_bias(node: Node, x: int, w: int) -> DerivedQuantizationSpec:
    return DerivedQuantizationSpec(
        derived_from=[(node.args[x], node), (node.args[w], node)],
        derive_qparams_fn=bias_qparams,
        dtype=torch.int32,
        quant_min=-(2**31),
        quant_max=2**31 - 1,
        qscheme=torch.per_tensor_affine,
    )


def partitions(model: GraphModule, ops: list) -> list[tuple[list[Node], ...]]:
    """ExecuTorch's ``find_sequential_partitions_aten``: one node per partition (those with a
    ``source_fn_stack``, grouped by source), each used by the next, in product order."""
    typed = []
    for op in ops:
        groups: dict[Any, list[list[Node]]] = {}
        for n in model.graph.nodes:
            stack = n.meta.get("source_fn_stack")
            if stack is not None and n.target == op:
                groups.setdefault(stack[-1][1], []).append([n])
        typed.append([p for g in groups.values() for p in g])
    out: list[tuple[list[Node], ...]] = []

    def extend(prefix: list[list[Node]], k: int) -> None:
        if k == len(typed):
            out.append(tuple(prefix))
            return
        for p in typed[k]:
            if check_subgraphs_connected(_Part(prefix[-1]), _Part(p)):
                extend([*prefix, p], k + 1)

    for first in typed[0] if typed else ():
        extend([first], 1)
    return out


@dataclass
class _Part:
    nodes: list[Node]


def _annotate(node: Any, arg: Any, spec: Any) -> None:
    annotation = node.meta.get(Q_ANNOTATION_KEY, QuantizationAnnotation(_annotated=True))
    annotation.input_qspec_map[arg] = spec
    node.meta[Q_ANNOTATION_KEY] = annotation


class CadenceAtenQuantizer(Quantizer):
    """One of ExecuTorch's patterns with one config, annotated by the spec's rule of its ops."""

    def __init__(self, pattern: Any, quantization_config: Any) -> None:
        super().__init__()
        self.pattern, self.quantization_config = pattern, quantization_config
        ops = tuple(pattern.partition_types())
        self.rule = BY_CHAIN.get(ops)
        if self.rule is None:
            raise ValueError(f"{type(pattern).__name__}: specs/cadence.bcfg has no pattern {ops}")
        if self.rule.allows and all(disallowed(a, quantization_config) for a in self.rule.allows):
            reasons = "; ".join(disallowed(a, quantization_config) for a in self.rule.allows)
            raise ValueError(
                f"{type(pattern).__name__}: a config specs/cadence.bcfg does not allow: {reasons}"
            )
        self.w8a32 = quantization_config.input_activation is None

    def annotate(self, model: GraphModule) -> GraphModule:
        config, rule = self.quantization_config, self.rule
        for parts in partitions(model, list(self.pattern.partition_types())):
            if any(len(p) != 1 or len(p[0].users) != 1 for p in parts[:-1]):
                continue  # an op before the last with another user
            nodes = [p[0] for p in parts]
            first = nodes[0]
            if not all(check(first, nodes) for check in rule.when):
                continue
            if self.w8a32 and not W8A32_CHECKS.get(first.target, lambda *a: True)(first, nodes):
                continue
            if any(
                Q_ANNOTATION_KEY in n.meta and n.meta[Q_ANNOTATION_KEY]._annotated
                for n in self._anchored(nodes)
            ):
                continue
            if self.w8a32:
                self._weights_only(first)
            else:
                self._annotate(nodes, config)
        return model

    def _anchored(self, nodes: list[Node]) -> list[Node]:
        """The nodes that must not be annotated yet: the first (its inputs) and the output's
        (none for W8A32)."""
        if self.w8a32:
            return nodes[:1]
        out = nodes[-1]
        if out.target == aten.max_pool2d_with_indices.default:
            out = next(iter(out.users))
        return [nodes[0], out]

    def _annotate(self, nodes: list[Node], config: Any) -> None:
        first, last = nodes[0], nodes[-1]
        anchors = ANCHORS.get(first.target, {})
        rule = self.rule
        out_node, out_spec = last, config.output_activation
        if rule.kind == "shared":  # max pools and cat: the output shares the first input's spec
            source = first.args[0][0] if first.target == aten.cat.default else first.args[0]
            out_spec = SharedQuantizationSpec((source, first))
            if first.target == aten.max_pool2d_with_indices.default:
                out_node = next(iter(first.users))
        out_node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            output_qspec=out_spec, _annotated=True
        )
        if first.target == aten.cat.default:
            for i, x in enumerate(first.args[0]):
                _annotate(first, x, out_spec if i else config.input_activation)
            return
        for i in anchors.get("inputs", (0,)):
            _annotate(first, first.args[i], config.input_activation)
        weight = anchors.get("weight", rule.weight)
        if weight is None:
            return
        _annotate(first, first.args[weight], config.weight)
        bias = anchors.get("bias", rule.bias)
        present = len(first.args) > bias and (
            first.target == aten.linear.default or first.args[bias] is not None
        )
        if present:
            x = anchors.get("inputs", (0,))[0]
            _annotate(first, first.args[bias], derived_bias(first, x, weight))

    def _weights_only(self, node: Node) -> None:
        """W8A32: weights and biases take the config's weight and bias specs; activations stay
        float (GRU: its parameters' list, hidden-to-hidden bias sharing input-to-hidden's)."""
        config = self.quantization_config
        if node.target == aten.gru.input:
            params = node.args[2]
            _annotate(node, params[0], config.weight)
            _annotate(node, params[1], config.weight)
            _annotate(node, params[2], config.bias)
            _annotate(node, params[3], SharedQuantizationSpec((params[2], node)))
            return
        _annotate(node, node.args[1], config.weight)
        _annotate(node, node.args[2], config.bias)

    def validate(self, model: GraphModule) -> None:
        pass

    @classmethod
    def get_supported_operators(cls) -> list:
        return []


def get_cadence_default_quantizers(is_qat: bool = False) -> list[Quantizer]:
    a8w8 = qconfig_A8W8_qat if is_qat else qconfig_A8W8
    a8w8sym = qconfig_A8W8sym_qat if is_qat else qconfig_A8W8sym
    return [
        CadenceAtenQuantizer(P.AddmmPattern(), a8w8),
        CadenceAtenQuantizer(P.BmmPattern(), a8w8),
        CadenceAtenQuantizer(P.Conv1dPattern(), a8w8sym),
        CadenceAtenQuantizer(P.Conv2dPattern(), a8w8sym),
        CadenceAtenQuantizer(P.LinearPattern(), a8w8),
        CadenceAtenQuantizer(P.MatmulPattern(), a8w8),
        CadenceAtenQuantizer(P.MaxPool2dPattern(), a8w8),
        CadenceAtenQuantizer(P.MaxPool2dWithoutIndicesPattern(), a8w8),
        CadenceAtenQuantizer(P.ReluPattern0(), a8w8),
        CadenceAtenQuantizer(P.ReluPattern1(), a8w8),
    ]


class CadenceQuantizer(ComposableQuantizer):
    """Quantizers in order: the first to annotate a node wins."""

    def __init__(self, quantizers: list[Quantizer]) -> None:
        super().__init__(quantizers)

    @final
    def get_ops_to_preserve_from_decomposition(self) -> list:
        ops: set = set()
        for q in self.quantizers:
            if isinstance(q, CadenceAtenQuantizer):
                ops.update(q.pattern.partition_types())
            elif isinstance(q, CadenceQuantizer):
                ops.update(q.get_ops_to_preserve_from_decomposition())
        return list(ops)


def _family(
    name: str, *patterns: Any, defaults: bool = False, config: Any = None, qat: bool = False
) -> type:
    """A CadenceQuantizer subclass: ``quantizers`` (default: the default ones if ``defaults``),
    then each pattern (a name of ExecuTorch's patterns, or (name, config))."""

    def __init__(self: Any, quantizers: list | None = None, is_qat: bool = False) -> None:
        if quantizers is None:
            quantizers = get_cadence_default_quantizers(is_qat=is_qat) if defaults else []
        a8w8 = qconfig_A8W8_qat if is_qat else qconfig_A8W8
        for p in patterns:
            pattern, cfg = p if isinstance(p, tuple) else (p, config or a8w8)
            quantizers.append(CadenceAtenQuantizer(getattr(P, pattern)(), cfg))
        CadenceQuantizer.__init__(self, quantizers)

    return type(name, (CadenceQuantizer,), {"__init__": __init__, "__module__": __name__})


CadenceDefaultQuantizer = _family("CadenceDefaultQuantizer", defaults=True)
CadenceWithLayerNormQuantizer = _family(
    "CadenceWithLayerNormQuantizer", "LayerNormPattern", defaults=True
)
CadenceWakeWordQuantizer = _family(
    "CadenceWakeWordQuantizer", "AddPattern", "CatPattern", defaults=True
)
CadenceWithSoftmaxQuantizer = _family(
    "CadenceWithSoftmaxQuantizer", "SoftmaxPattern", defaults=True, config=qconfig_A16
)
CadenceWith16BitLinearActivationsQuantizer = _family(
    "CadenceWith16BitLinearActivationsQuantizer", "LinearPattern", config=qconfig_A16
)
CadenceWith16BitConvActivationsQuantizer = _family(
    "CadenceWith16BitConvActivationsQuantizer", "Conv1dPattern", "Conv2dPattern", config=qconfig_A16
)
CadenceWith16BitMatmulActivationsQuantizer = _family(
    "CadenceWith16BitMatmulActivationsQuantizer", "MatmulPattern", config=qconfig_A16
)


class CadenceNopQuantizer(CadenceQuantizer):
    def __init__(self) -> None:
        super().__init__([])


class CadenceRmsNormNopQuantizer(CadenceQuantizer):
    def __init__(self) -> None:
        super().__init__([CadenceAtenQuantizer(P.RmsNormPattern(), qconfig_A8W8)])


class CadenceW8A32MixedQuantizer(CadenceQuantizer):
    def __init__(self) -> None:
        super().__init__(
            [
                CadenceAtenQuantizer(getattr(P, f"MixedW8A32{op}Pattern")(), qconfig_A32W8sym)
                for op in ("Linear", "Conv", "Gru")
            ]
        )


class CadenceFusedConvReluQuantizer(CadenceQuantizer):
    """Fused conv (+ batch norm) + relu and add + relu first, then the defaults, add, cat."""

    def __init__(self, quantizers: list | None = None, is_qat: bool = False) -> None:
        quantizers = [] if quantizers is None else quantizers
        a8w8 = qconfig_A8W8_qat if is_qat else qconfig_A8W8
        a8w8sym = qconfig_A8W8sym_qat if is_qat else qconfig_A8W8sym
        fused = [f"Conv{d}dBNReluPattern{i}" for d in (1, 2) for i in (0, 1)]
        fused += [f"Conv{d}dReluPattern{i}" for d in (1, 2) for i in (0, 1)]
        quantizers += [CadenceAtenQuantizer(getattr(P, p)(), a8w8sym) for p in fused]
        quantizers += [
            CadenceAtenQuantizer(getattr(P, f"AddReluPattern{i}")(), a8w8) for i in (0, 1)
        ]
        quantizers = quantizers + get_cadence_default_quantizers(is_qat=is_qat)
        quantizers += [
            CadenceAtenQuantizer(P.AddPattern(), a8w8),
            CadenceAtenQuantizer(P.CatPattern(), a8w8),
        ]
        super().__init__(quantizers)
