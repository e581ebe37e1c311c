"""The live suites' shared work: torchao's pattern graphs exported once a session.

torchao's ``prepare_qat_pt2e`` and ``convert_pt2e`` export each of their conv + batch
norm patterns (``qat_utils._get_aten_graph_module_for_pattern``, about 110
``torch.export`` calls a convert of a QAT conv + bn model) every time they run, and
the live suites run them for torchao's class and the generated one, on many models:
those exports were most of the QAT cases' time (a QAT conv + bn + relu comparison
took about 30 s on 2 free cores). A pattern's graph depends only on the pattern's
code, its closure (conv function, flags) and its inputs' shapes and dtypes, so it is
exported once and each call gets a fresh deep copy (``test_pattern_cache.py`` checks
the copy is the graph a fresh export gives).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pytest


def _tensor_key(value: Any) -> Any:
    import torch

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
        pattern = pattern.fn
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


def cached(export: Callable) -> Callable:
    graphs: dict[tuple, Any] = {}

    @functools.wraps(export)
    def wrapper(pattern, example_inputs, is_cuda=False, **kwargs):
        key = pattern_key(pattern, example_inputs, is_cuda, kwargs)
        if key is None:
            return export(pattern, example_inputs, is_cuda, **kwargs)
        if key not in graphs:
            graphs[key] = export(pattern, example_inputs, is_cuda, **kwargs)
        return copy.deepcopy(graphs[key])

    wrapper.graphs = graphs  # type: ignore[attr-defined]
    return wrapper


@pytest.fixture(autouse=True, scope="session")
def _export_each_pattern_once() -> Iterator[None]:
    try:
        from torchao.quantization.pt2e import qat_utils
    except ImportError:
        yield
        return
    original = qat_utils._get_aten_graph_module_for_pattern
    qat_utils._get_aten_graph_module_for_pattern = cached(original)
    try:
        yield
    finally:
        qat_utils._get_aten_graph_module_for_pattern = original
