"""The backend as FX reads it: pattern configs by pattern, and what convert and QAT do after prepare.

prepare_fx decides which patterns are observed; a weighted module (Linear,
ConvNd, Embedding, LSTM, ...) is then swapped for a quantized one by
``convert_fx`` only if the backend names its reference module
(``root``/``reference``) and its QConfig passes convert's own dtype check;
under QAT its weights are fake-quantized only if the backend names a QAT
module (``qat``). ``after_prepare`` says when that goes wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.ao.nn.quantized.reference as nnqr
from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig, DTypeConfig
from torch.ao.quantization.backend_config.utils import (
    _get_pattern_in_reversed_nested_tuple_format,
    get_fused_module_classes,
    get_module_to_qat_module,
    get_qat_module_classes,
    get_root_module_to_quantized_reference_module,
)

from .names import object_text, pattern_text
from .observers import Observers, closest, convert_failures
from .verdict import Status

# Float module classes with weights: the ones torch has a reference quantized module for.
WEIGHTED: frozenset[type] = frozenset(
    getattr(torch.nn, n)
    for n in dir(nnqr)
    if isinstance(getattr(torch.nn, n, None), type)
    and issubclass(getattr(torch.nn, n), torch.nn.Module)
)


@dataclass(frozen=True)
class BackendIndex:
    """A BackendConfig's pattern configs by their reversed nested pattern, and its module tables."""

    config: BackendConfig
    keys: tuple[Any, ...]  # the reversed nested pattern of each config, in order
    position: dict[Any, int]
    roots: dict[Any, Any]  # root module -> reference module
    qat_modules: dict[Any, Any]  # float (or fused) module -> its QAT module
    qat_classes: tuple[type, ...]
    fused_classes: tuple[type, ...]

    @classmethod
    def of(cls, backend_config: BackendConfig) -> BackendIndex:
        keys = tuple(
            _get_pattern_in_reversed_nested_tuple_format(c) for c in backend_config.configs
        )
        return cls(
            backend_config,
            keys,
            {k: i for i, k in enumerate(keys)},
            get_root_module_to_quantized_reference_module(backend_config),
            get_module_to_qat_module(backend_config),
            get_qat_module_classes(backend_config),
            get_fused_module_classes(backend_config),
        )

    def pattern(self, i: int) -> BackendPatternConfig:
        return self.config.configs[i]

    def dtype_configs(self, key: Any) -> list[DTypeConfig]:
        i = self.position.get(key)
        return list(self.config.configs[i].dtype_configs) if i is not None else []

    def label(self, i: int) -> str:
        """Config ``i``'s pattern as a spec writes it: ``(nn.Conv2d, nn.ReLU)``, ``complex (...)``."""
        c = self.config.configs[i]
        if c.pattern is not None:
            return pattern_text(c.pattern)
        return "complex " + pattern_text(self.keys[i])


def after_prepare(
    index: BackendIndex,
    op: Any,
    parts: tuple[type, ...],
    qconfig: Any,
    is_qat: bool,
    observers: Observers,
) -> tuple[Status, str] | None:
    """What happens to a module op that prepare quantizes, if not what the user asked for.

    ``parts`` are the types of a fused module's parts (``nn.Conv2d, nn.ReLU``), else empty.
    """
    if not isinstance(op, type) or not issubclass(op, torch.nn.Module):
        return None
    name = object_text(op)
    weighted = parts[0] if parts else op
    if op in index.qat_classes or weighted not in WEIGHTED:
        return None  # QAT classes convert through their float class; no weights to swap
    if is_qat and op not in index.qat_modules:
        return (
            Status.NO_QAT_MODULE,
            f"the backend names no QAT module for {name}: QAT trains its weights without fake quantization",
        )
    if weighted not in index.roots:
        return (
            Status.FLOAT_AT_CONVERT,
            f"the backend names no reference module for {object_text(weighted)} (root and reference): "
            f"convert_fx keeps {name} float",
        )
    failures = [convert_failures(qconfig, dc, observers) for dc in index.dtype_configs(op)]
    if failures and all(failures):
        why = "; ".join(str(f) for f in failures[closest(failures)])
        return (
            Status.FLOAT_AT_CONVERT,
            f"prepare_fx observes it, but convert_fx's own check keeps {name} float: {why}",
        )
    return None
