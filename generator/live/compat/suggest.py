"""A QConfig that would fit: the smallest edit of the user's QConfig that satisfies a dtype config.

The observer classes and ``with_args`` arguments are kept; only what the dtype
config asks for changes: ``dtype``, ``quant_min``/``quant_max`` (to the
backend's bounds, dropping ``reduce_range``), ``eps`` (up to ``scale_min``),
fixed qparams (a ``FixedQParamsObserver``, in a ``FixedQParamsFakeQuantize``
for QAT), ``is_dynamic`` (a ``PlaceholderObserver``). A class that cannot take
those arguments is replaced by torch's usual one. Every suggestion is checked
with the same rules as the user's QConfig; one that does not pass is not made.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import torch
from torch.ao.quantization import QConfig
from torch.ao.quantization.backend_config import DTypeConfig
from torch.ao.quantization.fake_quantize import FakeQuantize, FixedQParamsFakeQuantize
from torch.ao.quantization.observer import (
    FixedQParamsObserver,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    _PartialWrapper,
)

from ...lang.vocabulary import QUANT_RANGES
from .observers import (
    Args,
    MappingError,
    ObserverFacts,
    Observers,
    Targets,
    bias_observer,
    closest,
    convert_failures,
    dtype_config_failures,
    dtype_config_text,
    dtype_text,
    number_text,
)
from .verdict import Closest, Failure, Status, Verdict


def suggest(qconfig: Any, dc: DTypeConfig, args: Args, is_qat: bool, weighted: bool) -> Any:
    """A QConfig like ``qconfig`` that fits ``dc``, or None if no such edit passes the check.

    ``weighted``: the pattern's module is converted by ``convert_fx``'s
    weighted-module path, whose dtype check the suggestion must pass too.
    """
    act = qconfig.activation if qconfig is not None else None
    weight = qconfig.weight if qconfig is not None else None
    want = _activation_wants(dc)
    new_act = _fitted(act, want, bool(dc.is_dynamic), is_qat, is_weight=False)
    new_weight = weight
    if _weight_only(dc):  # embeddings: torch's kernels take float qparams per row
        new_weight = PerChannelMinMaxObserver.with_args(
            dtype=dc.weight_dtype, qscheme=torch.per_channel_affine_float_qparams, ch_axis=0
        )
    elif dc.weight_dtype is not None:
        new_weight = _fitted(weight, _wants(dc.weight_dtype_with_constraints), False, is_qat, True)
    candidate = QConfig(activation=new_act, weight=new_weight)
    observers = Observers()
    try:
        targets = Targets(new_act, new_act, new_weight, bias_observer(candidate, observers))
        if dtype_config_failures(dc, candidate, targets, args, observers):
            return None
        if weighted and convert_failures(candidate, dc, observers):
            return None
    except Exception:  # noqa: BLE001  (an edit the observer class rejects: no suggestion)
        return None
    return candidate


def _weight_only(dc: DTypeConfig) -> bool:
    """A weight-only dtype config (float activations, a quint8 or quint4x2 weight)."""
    floats = (None, torch.float32, torch.float16)
    return (
        dc.input_dtype in floats
        and dc.output_dtype in floats
        and dc.weight_dtype in (torch.quint8, torch.quint4x2)
    )


def _wants(dwc: Any) -> dict[str, Any]:
    if dwc is None or dwc.dtype is None:
        return {}
    return {k: v for k, v in vars(dwc).items() if v is not None}


def _activation_wants(dc: DTypeConfig) -> dict[str, Any]:
    """What one activation observer must be for both input and output: their constraints merged."""
    first = _wants(dc.input_dtype_with_constraints)
    second = _wants(dc.output_dtype_with_constraints)
    if not first:
        return second
    if second.get("dtype") == first["dtype"]:
        return {**second, **first}
    return first


def _fitted(ctr: Any, want: dict[str, Any], dynamic: bool, is_qat: bool, is_weight: bool) -> Any:
    """``ctr`` edited to satisfy ``want``; torch's usual class if ``ctr``'s cannot take the edit."""
    if ctr is not None:
        edited = _edit(ctr, want, dynamic, is_qat)
        if _builds(edited):
            return edited
    return _edit(_usual(is_qat, is_weight), want, dynamic, is_qat)


def _usual(is_qat: bool, is_weight: bool) -> Any:
    symmetric = {"qscheme": torch.per_tensor_symmetric} if is_weight else {}
    if is_qat:
        return FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, **symmetric)
    return MinMaxObserver.with_args(**symmetric) if is_weight else HistogramObserver


def _builds(ctr: Any) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ctr()
    except Exception:  # noqa: BLE001
        return False
    return True


def _edit(ctr: Any, want: dict[str, Any], dynamic: bool, is_qat: bool) -> Any:
    dtype = want.get("dtype")
    if dtype is None:
        return ctr
    lo, hi = want.get("quant_min_lower_bound"), want.get("quant_max_upper_bound")
    scale, zero_point = want.get("scale_exact_match"), want.get("zero_point_exact_match")
    full = QUANT_RANGES.get(dtype_text(dtype))
    if scale is not None and zero_point is not None:
        ends = full or (0, 255)
        fixed = FixedQParamsObserver.with_args(
            scale=scale,
            zero_point=zero_point,
            dtype=dtype,
            quant_min=ends[0] if lo is None else lo,
            quant_max=ends[1] if hi is None else hi,
        )
        return FixedQParamsFakeQuantize.with_args(observer=fixed) if is_qat else fixed
    if dynamic or dtype in (torch.float16, torch.float32):
        kw: dict[str, Any] = {"dtype": dtype}
        if dynamic:
            kw["is_dynamic"] = True
            if full is not None:
                kw["quant_min"] = full[0] if lo is None else lo
                kw["quant_max"] = full[1] if hi is None else hi
        return PlaceholderObserver.with_args(**kw)
    cls, kw = parts(ctr)
    current = _facts(ctr)
    if cls is PlaceholderObserver:  # a static integer activation needs a real observer
        cls, kw, current = HistogramObserver, {}, None
    kw.pop("is_dynamic", None)
    if current is None or current.dtype != dtype or current.is_dynamic:
        kw["dtype"] = dtype
        current = None  # what the observer was says nothing about what it will be
        if kw.get("reduce_range") and dtype != torch.quint8:
            kw["reduce_range"] = False
    if lo is not None and hi is not None:
        if not (
            current
            and current.quant_min is not None
            and current.quant_max is not None
            and lo <= current.quant_min
            and current.quant_max <= hi
        ):
            kw.pop("reduce_range", None)
            kw["quant_min"], kw["quant_max"] = lo, hi
    elif "quant_min" in kw and full is not None:
        if not (full[0] <= kw["quant_min"] and kw.get("quant_max", full[1]) <= full[1]):
            kw.pop("quant_min")
            kw.pop("quant_max", None)
    smin = want.get("scale_min_lower_bound")
    if smin is not None and (current is None or current.eps is None or bool(current.eps < smin)):
        kw["eps"] = max(float(kw.get("eps", 0.0)), smin)
    return cls.with_args(**kw)


def _facts(ctr: Any) -> ObserverFacts | None:
    try:
        return ObserverFacts.build(ctr)
    except MappingError:
        return None


def parts(ctr: Any) -> tuple[Any, dict[str, Any]]:
    """(class, keyword arguments) of an observer constructor: a class or ``with_args`` partials."""
    kw: dict[str, Any] = {}
    p = ctr.p if isinstance(ctr, _PartialWrapper) else ctr
    while isinstance(p, functools.partial):
        kw = {**p.keywords, **kw}
        p = p.func
        if isinstance(p, _PartialWrapper):
            p = p.p
    return p, kw


def constructor_text(ctr: Any) -> str:
    """``HistogramObserver.with_args(dtype=torch.qint8, eps=2**-12)``, as Python."""
    if ctr is None:
        return "None"
    cls, kw = parts(ctr)
    name = getattr(cls, "__name__", repr(cls))
    if not kw:
        return name
    return f"{name}.with_args({', '.join(f'{k}={_value_text(v)}' for k, v in kw.items())})"


def _value_text(v: Any) -> str:
    if isinstance(v, (torch.dtype, torch.qscheme)):
        return str(v)
    if isinstance(v, (_PartialWrapper, functools.partial, type)):
        return constructor_text(v)
    if isinstance(v, float) and number_text(v).startswith("2**"):
        return number_text(v)
    return repr(v)


def qconfig_text(qconfig: Any) -> str:
    """A QConfig as Python: ``QConfig(activation=..., weight=...)``; ``None``."""
    if qconfig is None:
        return "None"
    return (
        f"QConfig(activation={constructor_text(qconfig.activation)}, "
        f"weight={constructor_text(qconfig.weight)})"
    )


def rejected(
    pattern: str | None,
    given: Any,
    dcs: list[DTypeConfig],
    failures: list[list[Failure]],
    args: Args,
    is_qat: bool,
    weighted: bool,
    **fields: Any,
) -> Verdict:
    """The verdict on a QConfig (``given``) no dtype config fits: the closest one, what failed,
    and what would fit; ``fields`` are the verdict's other fields."""
    k = closest(failures)
    near = Closest(k, len(dcs), dtype_config_text(dcs[k]), tuple(failures[k]))
    fit = suggest(given, dcs[k], args, is_qat, weighted)
    return Verdict(
        pattern,
        Status.REJECTED,
        "; ".join(str(f) for f in failures[k]),
        closest=near,
        suggestion=qconfig_text(fit) if fit is not None else None,
        **fields,
    )
