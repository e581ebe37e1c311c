"""Validation: whether a quantization config is one a pattern's dtype configs allow, and why not."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from .model import view
from .values import Allows, Quant, Rule

__all__ = ["disallowed", "refuse", "refuse_when_set", "rejections", "required"]


def refuse(quantizer: Any, problems: Sequence[str], outcome: str = "") -> None:
    """Raise the ValueError of a quantizer's ``validate`` for ``problems`` (none: nothing):
    its patterns that do not allow the config they matched with (``outcome``: what
    happened to them, after a comma)."""
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise ValueError(
            f"{quantizer.backend} quantizer: {len(problems)} pattern(s) of {quantizer.spec} "
            f"do not allow the quantization config they matched with{outcome}:\n{lines}"
        )


def refuse_when_set(quantizer: Any, method: str, config: Any, rules: Sequence[Rule]) -> None:
    """Raise ValueError when ``config``, given to ``method`` (``set_global``, a stage), states
    a weight spec or a quantized activation spec that no pattern of ``rules`` (those the
    config could quantize) takes: each has a ``weight_qscheme`` or ``activation_qscheme``
    that refuses it. A config some pattern takes is left to ``validate``, which judges the
    patterns it did quantize; one leaving the weight float is a config for unweighted ops."""
    if config is None or all(
        r.weight_qscheme == "any" and r.activation_qscheme == "any" for r in rules
    ):  # nothing to refuse: the config is not read
        return
    weighted = spec_of(config, "weight") is not None  # a float weight: unweighted ops'
    for check, rules_of in (
        (weight_required, [r for r in rules if r.weight is not None and weighted]),
        (activation_required, [r for r in rules if r.kind != "propagate"]),
    ):
        reasons = {r.name: check(r, config) for r in rules_of}
        if not reasons or not all(reasons.values()):
            continue
        lines = "\n".join(f"  pattern {name}: {why}" for name, why in reasons.items())
        raise ValueError(
            f"{quantizer.backend} quantizer: {type(quantizer).__name__}.{method} was given a "
            f"config that no pattern of {quantizer.spec} it could quantize takes:\n{lines}\n"
            "Give a config whose specs these patterns take (their weight_qscheme and "
            "activation_qscheme in the spec), or None to leave them float."
        )


def rejections(
    rules: Sequence[Rule], used: Mapping[tuple[int, str], Any]
) -> dict[tuple[int, str], str]:
    """Why the configs an annotate used are not ones their rule allows: by (rule index, scope
    label) as ``used`` keys them, the reasons, one per dtype config of the rule, in words.
    A rule with no dtype configs takes any config; one reason that is empty allows it."""
    out: dict[tuple[int, str], str] = {}
    for (index, label), config in used.items():
        rule = rules[index]
        need = required(rule, config)
        if need:
            out[(index, label)] = need
            continue
        if not rule.allows:
            continue
        reasons = [disallowed(a, config) for a in rule.allows]
        if all(reasons):
            out[(index, label)] = "; or ".join(
                f"{r} (dtype config {a.name})" for a, r in zip(rule.allows, reasons)
            )
    return out


PER_CHANNEL = (
    torch.per_channel_symmetric,
    torch.per_channel_affine,
    torch.per_channel_affine_float_qparams,
)


def required(rule: Rule, config: Any) -> str:
    """Why ``config`` is not what the rule requires of its specs: ``weight_qscheme`` (the
    weight per channel on the rule's channel axis, or per tensor) and ``activation_qscheme``
    (the quantized activations symmetric or affine); empty if it is."""
    if config is None:
        return ""
    return weight_required(rule, config) or activation_required(rule, config)


def weight_required(rule: Rule, config: Any) -> str:
    """Why ``config``'s weight spec is not what ``weight_qscheme`` requires; empty if it is."""
    if rule.weight_qscheme == "any" or rule.weight is None:
        return ""
    spec = spec_of(config, "weight")
    qscheme = getattr(spec, "qscheme", None)
    per_channel = qscheme in PER_CHANNEL
    want = f"weight_qscheme: {rule.weight_qscheme}"
    if spec is None:
        return f"weight is None (float), the spec requires {want}"
    if rule.weight_qscheme == "per_channel" and not per_channel:
        return f"weight.qscheme is {qscheme}, the spec requires per-channel weights ({want})"
    if rule.weight_qscheme == "per_tensor" and per_channel:
        return f"weight.qscheme is {qscheme}, the spec requires per-tensor weights ({want})"
    axis = getattr(spec, "ch_axis", None)
    if per_channel and rule.weight_axis is None and axis not in (None, 0):
        return f"weight.ch_axis is {axis}, the spec's weights are per channel on axis 0"
    return ""


SYMMETRIC = (torch.per_tensor_symmetric, torch.per_channel_symmetric)
AFFINE = (torch.per_tensor_affine, torch.per_channel_affine)


def activation_required(rule: Rule, config: Any) -> str:
    """Why one of ``config``'s quantized activation specs is not what ``activation_qscheme``
    requires (a float one, None or float32, is the dtypes' business); empty if none."""
    want = rule.activation_qscheme
    if want == "any":
        return ""
    for field, role in (("input_activation", "input"), ("output_activation", "output")):
        spec = spec_of(config, role)
        dtype = getattr(spec, "dtype", None)
        if spec is None or (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            continue
        qscheme = getattr(spec, "qscheme", None)
        if qscheme not in (SYMMETRIC if want == "symmetric" else AFFINE):
            return (
                f"{field}.qscheme is {qscheme}, the spec requires {want} activations "
                f"(activation_qscheme: {want})"
            )
    return ""


def disallowed(allows: Allows, config: Any) -> str:
    """Why ``config`` is not one ``allows`` describes; empty if it is."""
    specs = view(config)
    if allows.dynamic is not None and specs.dynamic() != allows.dynamic:
        want = "dynamic" if allows.dynamic else "static"
        return f"input_activation.is_dynamic is {specs.dynamic()}, the dtype config is {want}"
    for field, read, quant in (
        ("input_activation", specs.input, allows.input),
        ("output_activation", specs.output, allows.output),
        ("weight", specs.weight, allows.weight),
        ("bias", specs.bias, allows.bias),
    ):
        problem = spec_problem(field, read(), quant)
        if problem:
            return problem
    return ""


def spec_of(config: Any, role: str) -> Any:
    """The spec of ``role`` (``input``, ``output``, ``weight``) a config's view gives; None
    for an object without it (a check of what a setter was given)."""
    try:
        return getattr(view(config), role)()
    except AttributeError:
        return None


def spec_problem(field: str, spec: Any, quant: Quant | None) -> str:
    """Why the spec of one field of a config is not what ``quant`` allows; empty if it is."""
    if quant is None:
        return ""
    dtype = getattr(spec, "dtype", None)
    if quant.dtype is None:
        if spec is None or dtype == torch.float32:
            return ""
        return f"{field} quantizes to {dtype}, the spec leaves it float"
    if spec is None:
        return f"{field} is None, the spec quantizes it to {quant.dtype}"
    if dtype != quant.dtype:
        return f"{field}.dtype is {dtype}, the spec allows {quant.dtype}"
    if quant.scale is not None:
        return ""  # fixed qparams: the quantizer supplies the spec
    low, high = _range(spec)
    if isinstance(dtype, torch.dtype) and not dtype.is_floating_point and low is not None:
        info = torch.iinfo(dtype)
        if low < info.min or high is None or high > info.max:
            return f"{field} range {low}..{high} is outside {dtype}'s {info.min}..{info.max}"
    if quant.quant_min is not None and low is not None and low < quant.quant_min:
        return f"{field}.quant_min is {low}, the spec allows {quant.quant_min} or more"
    if quant.quant_max is not None and high is not None and high > quant.quant_max:
        return f"{field}.quant_max is {high}, the spec allows {quant.quant_max} or less"
    if quant.scale_min is not None:
        eps = _eps(spec)
        if eps is None or eps < quant.scale_min:
            shown = "not set" if eps is None else repr(eps)
            return f"{field} observer eps is {shown}, the spec's scale_min is {quant.scale_min!r}"
    return ""


def _range(spec: Any) -> tuple[int | None, int | None]:
    low, high = getattr(spec, "quant_min", None), getattr(spec, "quant_max", None)
    dtype = getattr(spec, "dtype", None)
    if isinstance(dtype, torch.dtype) and not dtype.is_floating_point and dtype != torch.bool:
        info = torch.iinfo(dtype)
        low = info.min if low is None else low
        high = info.max if high is None else high
    return low, high


def _keywords(ctr: Any) -> dict[str, Any]:
    """The keyword arguments a with_args() constructor passes (the outermost call wins)."""
    out: dict[str, Any] = {}
    seen = 0
    while ctr is not None and seen < 16:
        seen += 1
        partial = getattr(ctr, "p", None)
        if isinstance(partial, functools.partial):
            ctr = partial
        if isinstance(ctr, functools.partial):
            for k, v in ctr.keywords.items():
                out.setdefault(k, v)
            ctr = ctr.func
            continue
        break
    return out


def _eps(spec: Any) -> float | None:
    """The smallest scale the spec's observer produces (its eps), or None if it cannot be told."""
    ctr = getattr(spec, "observer_or_fake_quant_ctr", None)
    eps = _keywords(ctr).get("eps")
    if eps is None and ctr is not None:
        try:
            observer = ctr()
        except Exception:  # an observer that needs arguments: eps cannot be told
            return None
        observer = getattr(observer, "activation_post_process", observer)
        eps = getattr(observer, "eps", None)
    if isinstance(eps, torch.Tensor):
        eps = eps.item()
    return None if eps is None else float(eps)
