"""ExecuTorch's Cadence quantizer classes over specs/cadence.bcfg's rules.

The same names, constructors and composition as ExecuTorch 1.5.1's
``executorch.backends.cadence.aot.quantizer.quantizer``: a ``CadenceQuantizer``
composes ``CadenceAtenQuantizer(pattern, config)``s, each annotating the
matches of one of ExecuTorch's pattern objects (kept: its ``fuse`` is the
post-convert fusion pass's) with one config. The rule of a pattern is the
spec's rule of its ops (``partition_types()``): its checks, the configs it allows
(another raises at construction) and its anchors by argument index (pt2e keys:
``inputs``, ``output_index``, ``parameters``, ``none_bias``, ``weights_only_when``,
``weights``); bcfg's runtime (``_bcfg_pt2e.pairs.PairQuantizer``) matches and
annotates it. The ``qconfig_*`` objects are ExecuTorch's own (its tests compare
observer factories by identity).
"""

from __future__ import annotations

from typing import Any, final

from executorch.backends.cadence.aot.quantizer import patterns as P
from executorch.backends.cadence.aot.quantizer.quantizer import (  # noqa: F401 (re-exported)
    qconfig_A8W8,
    qconfig_A8W8_qat,
    qconfig_A8W8sym,
    qconfig_A8W8sym_qat,
    qconfig_A16,
    qconfig_A32W8sym,
)
from torchao.quantization.pt2e.quantizer import ComposableQuantizer, Quantizer

from generated._bcfg_pt2e.pairs import PairQuantizer
from generated.cadence_quantizer import CadenceQuantizer as Spec

__all__ = [
    "CadenceAtenQuantizer", "CadenceQuantizer", "CadenceDefaultQuantizer",
    "CadenceFusedConvReluQuantizer", "CadenceNopQuantizer", "CadenceRmsNormNopQuantizer",
    "CadenceW8A32MixedQuantizer", "CadenceWakeWordQuantizer", "CadenceWithLayerNormQuantizer",
    "CadenceWithSoftmaxQuantizer", "CadenceWith16BitConvActivationsQuantizer",
    "CadenceWith16BitLinearActivationsQuantizer", "CadenceWith16BitMatmulActivationsQuantizer",
    "get_cadence_default_quantizers",
]  # fmt: skip


class CadenceAtenQuantizer(PairQuantizer):
    """One of ExecuTorch's patterns (its ``partition_types()``: the spec's rule) with one config."""

    def __init__(self, pattern: Any, quantization_config: Any) -> None:
        try:
            rule = Spec.rule_of(pattern.partition_types())
        except ValueError as e:
            raise ValueError(f"{type(pattern).__name__}: {e}") from None
        super().__init__(rule, quantization_config)
        self.pattern, self.quantization_config = pattern, quantization_config


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
