"""torch's support checks restated with reasons: why a QConfig does or does not fit a dtype config.

FX decides silently (pytorch/pytorch#85851). These functions decide the same
way (torch 2.13, ``fx/prepare.py`` and ``fx/utils.py``) but say what failed,
in torch's terms, for every dtype config of a pattern:

* ``dtype_config_failures``: ``_is_pattern_dtype_config_and_qconfig_supported_by_backend``
  for one dtype config (prepare: input, weight and bias arguments, then the
  output);
* ``constraint_failures``: ``_qconfig_satisfies_dtype_config_constraints``
  (quant range, ``scale_min`` against the observer's ``eps``, fixed qparams;
  ``scale_max`` is never checked by FX);
* ``convert_failures``: ``_is_qconfig_supported_by_dtype_configs``, the
  dtypes-only check ``convert_fx`` makes before it swaps a weighted module.

Comparisons use the observer's own values (``eps`` and fixed ``scale`` are
float32 tensors), so a float that rounds in float32 compares as torch does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.ao.quantization.backend_config import DTypeConfig, DTypeWithConstraints
from torch.ao.quantization.fake_quantize import FakeQuantizeBase, FixedQParamsFakeQuantize
from torch.ao.quantization.observer import FixedQParamsObserver, ObserverBase
from torch.ao.quantization.qconfig import (
    float16_dynamic_qconfig,
    float16_static_qconfig,
    qconfig_equals,
)

from ...lang.vocabulary import CONSTRAINT_FIELDS
from ..targets import NOT_THE_USERS, one_line
from .verdict import Failure


class MappingError(Exception):
    """The user's QConfigMapping cannot be used: an observer it names fails to build."""


def dtype_text(dtype: Any) -> str:
    """``torch.quint8`` -> ``quint8``; None -> ``none``."""
    return "none" if dtype is None else str(dtype).removeprefix("torch.")


def number_text(x: Any) -> str:
    """A number as messages show it: a power of two as ``2**-12``, else ``%g``."""
    if isinstance(x, torch.Tensor):
        x = x.reshape(-1)[0].item()
    if isinstance(x, float) and x > 0:
        exponent = math.log2(x)
        if exponent == int(exponent) and abs(exponent) >= 4:
            return f"2**{int(exponent)}"
        return f"{x:g}"
    return str(x)


@dataclass(frozen=True)
class ObserverFacts:
    """What FX reads from the observer (or fake-quantize) a QConfig constructor builds.

    ``dtype``, ``is_dynamic`` and ``fixed`` come from the object itself; range,
    ``eps`` and fixed qparams from the observer inside a fake-quantize
    (``_get_observer_from_activation_post_process``).
    """

    name: str
    dtype: Any
    is_dynamic: bool
    quant_min: int | None
    quant_max: int | None
    eps: Any  # a float, a 1-element tensor, or None
    fixed: bool
    scale: Any = field(default=None, compare=False)
    zero_point: Any = field(default=None, compare=False)

    @classmethod
    def build(cls, ctr: Any) -> ObserverFacts:
        """Instantiate ``ctr`` (quietly: reduce_range warns on every build) and read it."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                made = ctr()
        except NOT_THE_USERS:
            raise
        except BaseException as exc:  # noqa: BLE001  (the user's observer arguments)
            raise MappingError(f"building the observer {ctr!r} failed: {one_line(exc)}") from None
        if not isinstance(made, (ObserverBase, FakeQuantizeBase)):
            raise MappingError(
                f"{ctr!r} builds a {type(made).__name__}, not an observer or fake-quantize"
            )
        inner = made if isinstance(made, ObserverBase) else made.activation_post_process
        fixed = isinstance(made, (FixedQParamsObserver, FixedQParamsFakeQuantize))
        return cls(
            name=type(made).__name__,
            dtype=made.dtype,
            is_dynamic=bool(getattr(made, "is_dynamic", False)),
            quant_min=getattr(inner, "quant_min", None),
            quant_max=getattr(inner, "quant_max", None),
            eps=getattr(inner, "eps", None),
            fixed=fixed,
            scale=getattr(inner, "scale", None) if fixed else None,
            zero_point=getattr(inner, "zero_point", None) if fixed else None,
        )


class Observers:
    """``ObserverFacts`` of each constructor, built once per analysis."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Any, ObserverFacts]] = {}

    def of(self, ctr: Any) -> ObserverFacts | None:
        if ctr is None:
            return None
        hit = self._seen.get(id(ctr))
        if hit is not None and hit[0] is ctr:
            return hit[1]
        facts = ObserverFacts.build(ctr)
        self._seen[id(ctr)] = (ctr, facts)  # keeps ctr alive, so its id stays its own
        return facts


@dataclass(frozen=True)
class Targets:
    """The observer constructors FX puts in a node's ``target_dtype_info``."""

    input: Any
    output: Any
    weight: Any = None
    bias: Any = None


@dataclass(frozen=True)
class Args:
    """Which kinds of graph inputs the root node of a match has (each is checked)."""

    activation: bool = True
    weight: bool = False
    bias: bool = False


def bias_observer(qconfig: Any, observers: Observers) -> Any:
    """The bias constructor FX uses: float16 when activation and weight are float16 and static."""
    from torch.ao.quantization.observer import PlaceholderObserver

    act, weight = observers.of(qconfig.activation), observers.of(qconfig.weight)
    half = (
        act is not None
        and weight is not None
        and act.dtype == torch.float16
        and weight.dtype == torch.float16
        and not act.is_dynamic
    )
    return PlaceholderObserver.with_args(dtype=torch.float16 if half else torch.float)


def dtype_config_failures(
    dc: DTypeConfig, qconfig: Any, targets: Targets, args: Args, observers: Observers
) -> list[Failure]:
    """Why ``dc`` does not fit: empty if it does.

    ``targets`` are the constructors FX compares dtypes with; the constraints
    are read from ``qconfig``, the node's own QConfig, as torch does.
    """
    out: list[Failure] = []
    if args.activation and dc.input_dtype is not None:
        out += _input_failures(dc, qconfig, observers.of(targets.input), observers)
    if args.weight and dc.weight_dtype is not None:
        weight = observers.of(targets.weight)
        got = weight.dtype if weight is not None else None
        if got != dc.weight_dtype:
            out.append(_dtype_failure("weight dtype", got, dc.weight_dtype))
        else:
            out += constraint_failures(
                qconfig, dc.weight_dtype_with_constraints, "weight", observers
            )
    if args.bias and dc.bias_dtype is not None:
        bias = observers.of(targets.bias)
        got = bias.dtype if bias is not None else None
        if got != dc.bias_dtype:
            out.append(
                _dtype_failure("bias dtype", got, dc.bias_dtype, " (FX observes biases as float)")
            )
    if dc.output_dtype is not None:
        out += _output_failures(dc, qconfig, observers.of(targets.output), observers)
    return out


def _dtype_failure(what: str, got: Any, want: Any, why: str = "") -> Failure:
    return Failure(what, f"{dtype_text(got)}{why}; the backend wants {dtype_text(want)}", True)


def _input_failures(
    dc: DTypeConfig, qconfig: Any, act: ObserverFacts | None, observers: Observers
) -> list[Failure]:
    got, dynamic = (act.dtype, act.is_dynamic) if act is not None else (None, False)
    out = []
    if got != dc.input_dtype:
        out.append(_dtype_failure("input dtype", got, dc.input_dtype))
    if bool(dc.is_dynamic) != dynamic:
        said = {True: "dynamic (is_dynamic=True)", False: "static (is_dynamic=False)"}
        out.append(
            Failure(
                "is_dynamic",
                f"the activation is {said[dynamic]}; the backend wants {said[bool(dc.is_dynamic)]}",
                True,
            )
        )
    if out:  # torch checks the constraints only once dtype and is_dynamic match
        return out
    return constraint_failures(qconfig, dc.input_dtype_with_constraints, "input", observers)


def _output_failures(
    dc: DTypeConfig, qconfig: Any, act: ObserverFacts | None, observers: Observers
) -> list[Failure]:
    got = act.dtype if act is not None else None
    why = ""
    if act is not None and act.is_dynamic:  # a dynamic activation's output is float
        got, why = torch.float32, " (the output of a dynamic activation is float)"
    if got != dc.output_dtype:
        return [_dtype_failure("output dtype", got, dc.output_dtype, why)]
    return constraint_failures(qconfig, dc.output_dtype_with_constraints, "output", observers)


def constraint_failures(
    qconfig: Any, dwc: DTypeWithConstraints | None, role: str, observers: Observers
) -> list[Failure]:
    """``_qconfig_satisfies_dtype_config_constraints`` with its reason: at most one failure.

    Constraints apply only when the observer's dtype is the constrained dtype.
    """
    if qconfig is None or dwc is None or dwc.dtype is None:
        return []
    ctr = qconfig.weight if role == "weight" else qconfig.activation
    obs = observers.of(ctr)
    if obs is None or obs.dtype != dwc.dtype:
        return []
    lo, hi = dwc.quant_min_lower_bound, dwc.quant_max_upper_bound
    if lo is not None and hi is not None:  # FX checks a range only when both bounds are set
        if obs.quant_min is None or obs.quant_max is None:
            return [
                Failure(
                    f"{role} quant_min/quant_max",
                    f"{obs.name} sets no quant_min/quant_max; the backend wants a range within {lo}..{hi}",
                )
            ]
        if obs.quant_min < lo or obs.quant_max > hi:
            return [
                Failure(
                    f"{role} quant_min/quant_max",
                    f"{obs.quant_min}..{obs.quant_max} is outside the backend's {lo}..{hi}",
                )
            ]
    smin = dwc.scale_min_lower_bound
    if smin is not None:
        if obs.eps is None:
            return [
                Failure(
                    f"{role} scale_min",
                    f"{obs.name} has no eps; the backend wants eps >= {number_text(smin)}",
                )
            ]
        if bool(obs.eps < smin):
            return [
                Failure(
                    f"{role} scale_min",
                    f"eps {number_text(obs.eps)} is below the backend's scale_min {number_text(smin)}",
                )
            ]
    return _fixed_failures(qconfig, dwc, role, obs)


def _fixed_failures(
    qconfig: Any, dwc: DTypeWithConstraints, role: str, obs: ObserverFacts
) -> list[Failure]:
    scale, zero_point = dwc.scale_exact_match, dwc.zero_point_exact_match
    if scale is None or zero_point is None:  # FX checks fixed qparams only when both are set
        return []
    if any(qconfig_equals(qconfig, ok) for ok in (float16_static_qconfig, float16_dynamic_qconfig)):
        return []
    wants = f"the backend fixes scale={number_text(scale)}, zero_point={zero_point}"
    if not obs.fixed:
        return [
            Failure(
                f"{role} fixed qparams",
                f"{obs.name} is not a FixedQParamsObserver or FixedQParamsFakeQuantize; {wants}",
            )
        ]
    if bool(obs.scale != scale) or bool(obs.zero_point != zero_point):
        got = f"scale={number_text(obs.scale)}, zero_point={number_text(obs.zero_point)}"
        return [Failure(f"{role} fixed qparams", f"{got}; {wants}")]
    return []


def convert_failures(qconfig: Any, dc: DTypeConfig, observers: Observers) -> list[Failure]:
    """``_is_qconfig_supported_by_dtype_configs`` for one dtype config, with reasons (dtypes only)."""
    act, weight = observers.of(qconfig.activation), observers.of(qconfig.weight)
    assert act is not None and weight is not None
    dynamic = bool(dc.is_dynamic)
    want_in = dc.input_dtype or torch.float
    want_out = dc.output_dtype or torch.float
    want_weight = dc.weight_dtype or torch.float
    out = []
    if dynamic and not act.is_dynamic:
        out.append(
            Failure("is_dynamic", "the activation is static; the backend wants it dynamic", True)
        )
    if want_in != act.dtype:
        out.append(_dtype_failure("input dtype", act.dtype, want_in))
    got_out = torch.float if dynamic else act.dtype
    if want_out != got_out:
        out.append(_dtype_failure("output dtype", got_out, want_out))
    if want_weight != weight.dtype:
        out.append(_dtype_failure("weight dtype", weight.dtype, want_weight))
    if not dynamic:
        half = act.dtype == torch.float16 and weight.dtype == torch.float16
        got_bias = torch.float16 if half else torch.float
        if (dc.bias_dtype or torch.float) != got_bias:
            out.append(_dtype_failure("bias dtype", got_bias, dc.bias_dtype))
    return out


def closest(failures: Sequence[Sequence[Failure]]) -> int:
    """The index of the closest dtype config: fewest dtype and is_dynamic mismatches,
    then fewest constraint failures, then the first in the order torch tries them."""

    def key(i: int) -> tuple[int, int, int]:
        hard = sum(f.dtype for f in failures[i])
        return hard, len(failures[i]) - hard, i

    return min(range(len(failures)), key=key)


def dtype_config_text(dc: DTypeConfig) -> str:
    """A dtype config as a spec writes it: ``{input: qint8 {scale_min: 2**-12}, output: ...}``."""
    parts = []
    for key, dwc in (
        ("input", dc.input_dtype_with_constraints),
        ("output", dc.output_dtype_with_constraints),
        ("weight", dc.weight_dtype_with_constraints),
    ):
        if dwc is not None and dwc.dtype is not None:
            parts.append(f"{key}: {_constrained_text(dwc)}")
    if dc.bias_dtype is not None:
        parts.append(f"bias: {dtype_text(dc.bias_dtype)}")
    if dc.is_dynamic is not None:
        parts.append(f"dynamic: {str(bool(dc.is_dynamic)).lower()}")
    return "{" + ", ".join(parts) + "}"


def _constrained_text(dwc: DTypeWithConstraints) -> str:
    bounds = [
        f"{word}: {number_text(getattr(dwc, attr))}"
        for attr, word in CONSTRAINT_FIELDS
        if getattr(dwc, attr) is not None
    ]
    base = dtype_text(dwc.dtype)
    return f"{base} {{{', '.join(bounds)}}}" if bounds else base
