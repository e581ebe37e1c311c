"""The canonical dump of PT2E annotations: plain data that compares by value (and saves as JSON).

Split from ``pt2e_support`` (which re-exports it) so that it imports only torch and torchao:
``python -m tests.record`` runs it in the Arm environment too, where bcfg's generator does
not import. ``pt2e_support``'s docstring says what a dump holds.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import torch
from torch.fx import Node

KEY = "quantization_annotation"


def _qual(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"


def canon_ctr(ctr: Any) -> Any:
    """An observer or fake-quant constructor: its class and its with_args keywords, sorted."""
    if ctr is None or isinstance(ctr, type):
        return None if ctr is None else _qual(ctr)
    kwargs: dict[str, Any] = {}
    f = getattr(ctr, "p", ctr)
    while isinstance(f, functools.partial):
        for k, v in f.keywords.items():
            kwargs.setdefault(k, v)  # the outer call wins, as functools.partial does
        f = getattr(f.func, "p", f.func)
    items = tuple(sorted((k, _canon_value(v)) for k, v in kwargs.items()))
    extra = tuple(
        sorted((k, _canon_value(v)) for k, v in getattr(ctr, "callable_args", {}).items())
    )
    return (_qual(f), items) + ((("callable_args", extra),) if extra else ())


def _canon_value(v: Any) -> Any:
    if isinstance(v, type) or getattr(v, "p", None) is not None or isinstance(v, functools.partial):
        return canon_ctr(v)
    if isinstance(v, (torch.dtype, torch.qscheme)):
        return str(v)
    if isinstance(v, float):
        return float.hex(v)
    if isinstance(v, torch.fx.Graph):  # an observer bound to its node (Qualcomm's cat's)
        return "the annotated graph"
    return repr(v)


def _ref(edge_or_node: Any) -> tuple:
    if isinstance(edge_or_node, Node):
        return ("node", edge_or_node.name)
    a, b = edge_or_node
    return ("edge", a.name, b.name)


def canon_spec(spec: Any) -> Any:
    from torchao.quantization.pt2e.quantizer import (
        DerivedQuantizationSpec,
        FixedQParamsQuantizationSpec,
        QuantizationSpec,
        SharedQuantizationSpec,
    )

    if spec is None:
        return None
    if isinstance(spec, SharedQuantizationSpec):
        return ("shared", _ref(spec.edge_or_node))
    common = (str(spec.dtype), spec.quant_min, spec.quant_max, str(spec.qscheme))
    if isinstance(spec, DerivedQuantizationSpec):
        refs = [_ref(e) for e in spec.derived_from]
        return (
            "derived",
            refs,
            _qual(spec.derive_qparams_fn),
            *common,
            spec.ch_axis,
            spec.is_dynamic,
        )
    if isinstance(spec, FixedQParamsQuantizationSpec):
        return ("fixed", float.hex(float(spec.scale)), spec.zero_point, *common, spec.is_dynamic)
    if isinstance(spec, QuantizationSpec):
        return (
            "qspec",
            *common,
            spec.ch_axis,
            spec.is_dynamic,
            canon_ctr(spec.observer_or_fake_quant_ctr),
        )
    raise TypeError(f"unknown spec type {type(spec)}")


def dump(gm: torch.fx.GraphModule) -> list[tuple[str, dict]]:
    """Every annotated node, in graph order, with its annotation as plain data."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    base = {f.name for f in dataclasses.fields(QuantizationAnnotation)}
    out = []
    for n in gm.graph.nodes:
        qa = n.meta.get(KEY)
        if qa is None:
            continue
        record = {
            "annotated": qa._annotated,
            "implicit_sharing": qa.allow_implicit_sharing,
            "inputs": [(i.name, canon_spec(s)) for i, s in qa.input_qspec_map.items()],
            "output": canon_spec(qa.output_qspec),
        }
        extra = {f.name: getattr(qa, f.name) for f in dataclasses.fields(qa) if f.name not in base}
        if extra or type(qa) is not QuantizationAnnotation:
            record["extra"] = (type(qa).__name__, tuple(sorted(extra.items())))
        out.append((n.name, record))
    return out


def differences(a: list[tuple[str, dict]], b: list[tuple[str, dict]]) -> list[str]:
    """Node by node, how two dumps differ (empty: equal)."""
    da, db = dict(a), dict(b)
    out = []
    if [n for n, _ in a] != [n for n, _ in b]:
        out.append(
            f"annotated nodes differ: only torchao's: {sorted(set(da) - set(db))}, "
            f"only the other's: {sorted(set(db) - set(da))}"
        )
    out.extend(f"{n}: {da[n]} != {db[n]}" for n in da if n in db and da[n] != db[n])
    return out
