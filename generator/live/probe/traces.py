"""Each of torchao's pattern traces once a process: a speed-up, nothing else.

torchao's QAT annotators and matchers (and ExecuTorch's XNNPACK quantizer's) re-trace the
same fixed pattern functions with torch.export at every call, seconds a probe graph: bcfg
import and compare run the user's quantizer on hundreds of graphs, each twice, so they trace
them once (``pattern_cache``); tests/live keeps the cache on for its session.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
from collections.abc import Callable
from typing import Any

import torch

# Modules that call torchao's pattern tracer by a name of their own (ExecuTorch's where it
# is installed); torchao's export_utils looks the name up in utils at each call.
_TRACER_USERS = (
    "torchao.quantization.pt2e.utils",
    "torchao.quantization.pt2e.qat_utils",
    "torchao.testing.pt2e._xnnpack_quantizer_utils",
    "executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils",
)

# The patterns' graphs, for the whole process: every module's cases and the session's share it.
_TRACES: dict[tuple, Any] = {}


def _tensor_key(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype, value.device.type, value.requires_grad)
    hash(value)  # anything else is a literal of the pattern, or not cacheable
    return value


def pattern_key(
    pattern: Callable, example_inputs: tuple[Any, ...], is_cuda: bool, kwargs: dict
) -> tuple | None:
    """What a pattern's exported graph depends on, or None where that is not known
    (a module of its own, a closure over something unhashable): such a pattern is exported.
    torchao wraps its pattern functions in ``export_utils.WrapperModule``: the key is the
    function's."""
    from torchao.quantization.pt2e.export_utils import WrapperModule

    if type(pattern) is WrapperModule:
        pattern = pattern.fn  # type: ignore[attr-defined]
    code = getattr(pattern, "__code__", None)
    if code is None:
        return None
    try:
        cells = tuple(c.cell_contents for c in pattern.__closure__ or ())
        hash(cells)
        return (
            code,
            cells,
            tuple(_tensor_key(x) for x in example_inputs),
            is_cuda,
            tuple(sorted((k, _tensor_key(v)) for k, v in kwargs.items())),
        )
    except (TypeError, ValueError):
        return None


def cached(export: Callable, graphs: dict[tuple, Any] | None = None) -> Callable:
    """``export`` (torchao's pattern tracer) keeping each pattern's graph in ``graphs`` (a
    store of its own if None) and handing out a deep copy of it at each call."""
    store: dict[tuple, Any] = {} if graphs is None else graphs

    @functools.wraps(export)
    def wrapper(pattern, example_inputs, is_cuda=False, **kwargs):
        key = pattern_key(pattern, example_inputs, is_cuda, kwargs)
        if key is None:
            return export(pattern, example_inputs, is_cuda, **kwargs)
        if key not in store:
            store[key] = export(pattern, example_inputs, is_cuda, **kwargs)
        return copy.deepcopy(store[key])

    wrapper.graphs = store  # type: ignore[attr-defined]
    wrapper.uncached = export  # type: ignore[attr-defined]
    return wrapper


@contextlib.contextmanager
def pattern_cache():
    """Trace each of torchao's QAT conv-bn patterns once: a test-time speed-up, nothing else.

    prepare_qat_pt2e, convert_pt2e and XNNPACK's QAT annotators re-trace the
    same fixed patterns with torch.export on every call (96 traces in one
    QAT convert_pt2e, a minute on a loaded machine). A trace depends only on
    the pattern function's code and captured values and on the shapes of its
    example inputs (``pattern_key``); the cache hands out a deep copy of the first trace, the
    same graph a new trace would give (the matchers edit the pattern they get,
    so each caller needs its own; tests/live/test_pattern_cache.py checks both). Both
    quantizers of a comparison get the same patterns, so it cannot make two quantizers
    look alike. The traces are kept for the process (tests/live/conftest.py keeps the
    cache on for the session): a module's first QAT case does not trace them again.
    Nested uses restore what they found.
    """
    from torchao.quantization.pt2e import utils

    current = utils._get_aten_graph_module_for_pattern
    traced = cached(getattr(current, "uncached", current), _TRACES)
    users = []
    for name in _TRACER_USERS:
        try:
            users.append(importlib.import_module(name))
        except ImportError:  # ExecuTorch is an extra
            continue
    attr = "_get_aten_graph_module_for_pattern"
    saved = [(module, getattr(module, attr)) for module in users]
    for module in users:
        setattr(module, attr, traced)
    try:
        yield _TRACES
    finally:
        for module, previous in saved:
            setattr(module, attr, previous)
