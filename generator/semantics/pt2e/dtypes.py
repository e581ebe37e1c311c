"""A rule's dtypes: the quantization configs its patterns' dtype configs allow, and the
warnings where FX and PT2E would read those dtype configs differently."""

from __future__ import annotations

from ...lang.vocabulary import PT2E_DTYPES, spell
from .. import model as m
from ..checks import pattern_text as shown
from ..context import Ctx
from .keys import NOT_OBSERVED, SHARED, fail
from .mapping import Fusions


def dtypes_of(ctx: Ctx, c: m.PatternConfig, fusions: Fusions) -> m.PatternConfig:
    """The config whose dtype configs a rule allows: a fusion's own, or, when it has none,
    its fused module's (by which FX quantizes the fusion); a rule with none would take any
    quantization config. A fusion into a module no pattern quantizes is warned about."""
    if c.dtype_configs or c.fused_module is None:
        return c
    fused = fusions.modules.get(ctx.facts.identity(c.fused_module.path))
    if fused is not None and fused.dtype_configs:
        return fused
    ctx.warning(
        c.field_span("fused"),
        f"pattern {shown(c.pattern)} has no dtypes, nor has its fused module "
        f"{spell(c.fused_module.path)} a pattern with dtypes: FX never quantizes the fusion, "
        "and the PT2E rule would allow any quantization config",
        f"give pattern {spell(c.fused_module.path)} dtypes, or give pattern "
        f"{shown(c.pattern)} the dtypes its kernel takes",
    )
    return c


def mixed_dtypes(ctx: Ctx, c: m.PatternConfig, kind: m.RuleKind) -> None:
    """A static dtype config whose quantized input and output dtypes differ: FX never matches
    it (one QConfig activation observes both), PT2E can (a QuantizationConfig has an input
    and an output spec), and a shared-observer op follows its input whatever it says."""
    for d in c.dtype_configs:
        i, o = d.input, d.output
        if d.is_dynamic or i is None or o is None:
            continue
        if PT2E_DTYPES.get(i.dtype) is None or PT2E_DTYPES.get(o.dtype) is None:
            continue
        if PT2E_DTYPES[i.dtype] == PT2E_DTYPES[o.dtype]:
            continue
        named = f"dtype config {d.name}" if d.name else "a dtype config"
        if kind in (m.RuleKind.PROPAGATE, m.RuleKind.SHARED):
            pt2e = (
                "the PT2E quantizer quantizes it anyway, with its input's spec (a "
                "shared-observer op follows its input)"
            )
        else:
            pt2e = (
                "the PT2E quantizer quantizes it with a config whose input and output "
                "specs differ"
            )
        ctx.warning(
            c.field_span("dtypes"),
            f"pattern {shown(c.pattern)}: {named} has input {i.dtype} and output "
            f"{o.dtype}; FX observes both with one QConfig activation, so it never matches "
            f"and leaves the pattern float, while {pt2e}: the spec means two things",
            "give input and output the same dtype",
        )
        return


def allows(ctx: Ctx, c: m.PatternConfig) -> tuple[m.Allows, ...]:
    out = []
    for d in c.dtype_configs:
        out.append(
            m.Allows(
                input=_quant(ctx, c, d.input),
                output=_quant(ctx, c, d.output),
                weight=_quant(ctx, c, d.weight),
                bias=_quant(ctx, c, m.DType(d.bias)) if d.bias is not None else None,
                dynamic=d.is_dynamic,
                name=d.name,
            )
        )
    return tuple(dict.fromkeys(out))


def _quant(ctx: Ctx, c: m.PatternConfig, d: m.DType | None) -> m.Quant | None:
    if d is None:
        return None
    if d.dtype not in PT2E_DTYPES:
        raise fail(
            ctx,
            c,
            "dtypes",
            f"dtype {d.dtype} has no PT2E equivalent: a PT2E quantizer cannot quantize to it",
            f"PT2E dtypes are {', '.join(k for k in PT2E_DTYPES if k != 'float32')} and float; "
            "leave the pattern out of the quantizer with pt2e: {aten: []}",
        )
    if d.scale_max_upper_bound is not None:
        raise fail(
            ctx,
            c,
            "dtypes",
            f"constraint {d.name or d.dtype} sets scale_max, which no PT2E observer has: "
            "the quantizer could not check it",
            "remove scale_max, or leave the pattern out of the quantizer with pt2e: {aten: []}",
        )
    return m.Quant(
        PT2E_DTYPES[d.dtype],
        d.quant_min_lower_bound,
        d.quant_max_upper_bound,
        d.scale_min_lower_bound,
        d.scale_exact_match,
        d.zero_point_exact_match,
        name=d.name,
    )


def follow_warnings(ctx: Ctx, backend: m.Backend, rules: tuple[m.Rule, ...]) -> None:
    """A shared-observer op that only follows (propagates) takes whatever its quantized input
    has; FX quantizes it only with a QConfig its dtype configs allow. Warn where another
    pattern's static output dtype is one its dtypes do not name: FX would leave the op float
    after that pattern, the PT2E quantizer quantizes it."""
    produced: dict[str, tuple[str, m.PatternConfig]] = {}
    for c in backend.configs:
        if c.observation in (SHARED, NOT_OBSERVED):
            continue
        for d in c.dtype_configs:
            out = d.output
            if d.is_dynamic or out is None or PT2E_DTYPES.get(out.dtype) is None:
                continue
            produced.setdefault(str(PT2E_DTYPES[out.dtype]), (out.dtype, c))
    followers = {id(o): r for r in rules if r.kind is m.RuleKind.PROPAGATE for o in r.origins}
    for c in backend.configs:
        if c.observation != SHARED or c.origin is None or id(c.origin) not in followers:
            continue
        taken = {
            str(PT2E_DTYPES[d.input.dtype]): d.input.dtype
            for d in c.dtype_configs
            if d.input is not None and PT2E_DTYPES.get(d.input.dtype) is not None
        }
        if not taken:
            continue
        missing = [produced[k][0] for k in sorted(set(produced) - set(taken))]
        if not missing:
            continue
        word, other = next(v for v in produced.values() if v[0] == missing[0])
        ctx.warning(
            c.field_span("dtypes"),
            f"pattern {shown(c.pattern)} shares its input's observer, and its dtypes take "
            f"{', '.join(sorted(taken.values()))} only: after pattern "
            f"{shown(other.pattern)}, whose output is {word}, FX leaves it float, while "
            "the PT2E quantizer follows its quantized input",
            f"add a dtype config for {', '.join(missing)}, or pt2e: {{aten: []}} to "
            "keep the PT2E quantizer from following",
        )
