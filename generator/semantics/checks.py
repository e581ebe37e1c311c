"""Checks on resolved values: what a ``BackendConfig`` would otherwise get silently wrong.

Pure functions over the resolved model (no spec text, no I/O). Each returns
``Finding``s; the resolver reports them at the spans it passes in, with the
notes of the group expansion it is in.

Decisions worth knowing (docs/reference/diagnostics.md):

* ``fused`` without a fuser is an error: nothing would ever build that module.
* A fuser without ``fused`` is an error, unless ``root`` is set (a fuser such
  as ``fuse_convtranspose_bn`` folds the pattern into its root module, as in
  torch's own configs). For ``sequential(M)`` it is a warning: the fuser says
  what it builds, but torch's convert only converts fused modules some config
  names in ``fused``.
* ``root`` without ``reference`` is a warning, and only on patterns without a
  fuser: torch maps root to reference only when both are set, but torch's own
  fusion patterns set ``root`` alone (``(nn.Conv${n}d, nn.BatchNorm${n}d,
  F.relu)``), where it is harmless. ``reference`` without ``root`` is a
  warning too.
* Dtypes FX can never match are warnings (``dtype_findings``): a pattern
  without dtype configs (unless it is a fusion pattern, whose dtype configs
  torch never reads), a plain ``uint8``/``int8``/``int32`` where FX's
  quantized ops take ``quint8``/``qint8``/``qint32`` (``convert_fx`` leaves
  such observers in place; only patterns of aten operators, which the
  decomposed representation quantizes to plain integers, may use them), a
  bias that is not float (FX observes biases as float), and a dynamic dtype
  config with fixed qparams on its input. So are constraints no observer can
  satisfy, and bounds FX never checks (``constraint_findings``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Severity
from ..lang.vocabulary import CONSTRAINT_WORDS, QUANT_RANGES, QUANTIZED_DTYPE_OF, spell
from ..sources import Span
from . import model as m
from .facts import CallSignature, SignatureOf


@dataclass(frozen=True)
class Finding:
    severity: Severity
    span: Span
    message: str
    hint: str | None = None


def pattern_text(p: m.PatternValue) -> str:
    """A pattern as messages show it, as specs write it: (nn.Conv2d, nn.ReLU)."""
    if isinstance(p, tuple):
        return "(" + ", ".join(pattern_text(x) for x in p) + ")"
    if isinstance(p, m.Symbol):
        return spell(p.path)
    return repr(p) if isinstance(p, str) else str(p)


def config_findings(
    c: m.PatternConfig, spans: dict[str, Span], signature: SignatureOf, fx: bool = True
) -> list[Finding]:
    """Checks across the fields of one pattern config; ``spans`` locates each field set.

    ``signature`` tells what a fuser function takes (``SymbolTable.signature``); ``fx``
    false: the backend is PT2E-only, where a pattern without dtypes takes any config.
    """
    out: list[Finding] = []
    n = len(c.pattern) if isinstance(c.pattern, tuple) else 1
    if c.fused_module is not None and c.fuser is None:
        out.append(
            Finding(
                Severity.ERROR,
                spans["fused"],
                f"'fused: {c.fused_module.path}' without a fuser: nothing fuses the pattern into it",
                f"add 'fuser: sequential({spell(c.fused_module.path)})' or a fuse definition, or remove 'fused'",
            )
        )
    if c.fuser is not None and c.fused_module is None and c.root_module is None:
        if isinstance(c.fuser, m.SequentialFuser):
            built = spell(c.fuser.fused.path)
            out.append(
                Finding(
                    Severity.WARNING,
                    spans["fuser"],
                    f"the fuser builds {built} but 'fused' is not set: torch's convert only converts fused modules a config names",
                    f"add 'fused: {built}'",
                )
            )
        else:
            out.append(
                Finding(
                    Severity.ERROR,
                    spans["fuser"],
                    "a fuser without 'fused': say which module class the fuser builds",
                    "add 'fused: <module class>', or 'root: <module class>' when the fuser folds the pattern into its root module",
                )
            )
    out.extend(_fuser_fit(c, n, spans, signature))
    out.extend(dtype_findings(c, spans, fx))
    if c.root_module is not None and c.reference_module is None and c.fuser is None:
        out.append(
            Finding(
                Severity.WARNING,
                spans["root"],
                f"root module {c.root_module.path} has no reference module: torch swaps a root module only when both are set",
                f"add 'reference: nnqr.{c.root_module.path.rsplit('.', 1)[-1]}' (or the right reference class), or remove 'root'",
            )
        )
    if c.reference_module is not None and c.root_module is None:
        out.append(
            Finding(
                Severity.WARNING,
                spans["reference"],
                f"reference module {c.reference_module.path} has no root module: torch never uses it",
                "add 'root: <the float module class>'",
            )
        )
    return out


def _fuser_fit(
    c: m.PatternConfig, n: int, spans: dict[str, Span], signature: SignatureOf
) -> list[Finding]:
    """Does the fuser take as many modules, in the same shape, as the pattern matches?"""
    if isinstance(c.fuser, m.SequentialFuser):
        if n != 2:
            # torch calls the fuser with one argument per top-level element (the
            # elements of a complex pattern as they are nested), and
            # _sequential_wrapper2 takes exactly two.
            return [
                Finding(
                    Severity.ERROR,
                    spans["fuser"],
                    f"sequential() fuses exactly two modules, but the pattern has {n} element{'s' if n != 1 else ''}",
                    "write a 'fuse' definition for other patterns",
                )
            ]
        if c.fused_module is not None and c.fused_module.path != c.fuser.fused.path:
            return [
                Finding(
                    Severity.ERROR,
                    spans["fused"],
                    f"'fused: {c.fused_module.path}' differs from the module sequential() builds, {c.fuser.fused.path}",
                )
            ]
    elif isinstance(c.fuser, m.DefinedFuser):
        problem = params_mismatch(c.fuser.params, c.pattern, c.complex)
        if problem:
            return [
                Finding(
                    Severity.ERROR,
                    spans["fuser"],
                    f"fuser '{c.fuser.name}' does not fit the pattern {pattern_text(c.pattern)}: {problem}",
                    f"it is defined at {c.fuser.span}",
                )
            ]
    elif isinstance(c.fuser, m.SymbolFuser):
        problem = arity_mismatch(signature(c.fuser.function.path), n + 1)
        if problem:
            return [
                Finding(
                    Severity.ERROR,
                    spans["fuser"],
                    f"fuser '{c.fuser.function.path}' does not fit the pattern {pattern_text(c.pattern)}: {problem}",
                    "torch calls a fuser with is_qat and one module per pattern element",
                )
            ]
    return []


def dtype_findings(c: m.PatternConfig, spans: dict[str, Span], fx: bool = True) -> list[Finding]:
    """Dtype configs FX can never match (warnings), each located where its dtype is written.

    Messages do not name the pattern: a dtype set used by many patterns is
    reported once, at its definition.
    """
    if c.fuser is not None:  # torch reads the dtype configs of the fused module, not these
        return []
    where = spans.get("dtypes") or spans["pattern"]
    out: list[Finding] = []
    if not c.dtype_configs and fx:
        out.append(
            Finding(
                Severity.WARNING,
                where,
                f"pattern {pattern_text(c.pattern)} has no dtype configs: FX never quantizes it",
                "add 'dtypes: ...' with the dtypes the backend runs it in, or remove the pattern",
            )
        )
    aten = _all_ops(c.pattern)
    for dc in c.dtype_configs:
        out.extend(_plain_integer(dc, where) if not aten else [])
        out.extend(_bias_dtype(dc, where))
        out.extend(_dynamic_fixed(dc, where))
    return out


def named_modules(backend: m.Backend, key: Callable[[m.Symbol], Any]) -> set[Any]:
    """The ``key`` of every single-module pattern of the backend: the modules it has configs for."""
    return {key(c.pattern) for c in backend.configs if isinstance(c.pattern, m.Symbol)}


def unconfigured_fusions(
    backend: m.Backend, key: Callable[[m.Symbol], Any]
) -> list[tuple[int, m.PatternConfig, m.Symbol]]:
    """Fusion configs (index, config, fused module) whose fused module no pattern config names.

    ``key`` says when two symbols are one module (the facts' identity, or
    ``bcfg diff``'s canonical value).
    """
    named = named_modules(backend, key)
    return [
        (j, c, c.fused_module)
        for j, c in enumerate(backend.configs)
        if c.fuser is not None and c.fused_module is not None and key(c.fused_module) not in named
    ]


def dead_fusions(backend: m.Backend, identity: Callable[[str], str]) -> list[Finding]:
    """Fusions into a module that no pattern config of the backend names (warnings).

    FX fuses the matched modules into the fused module, then quantizes it only
    by that module's own pattern config: without one, the fused modules stay
    float and torch says nothing. Each fusion is said once, at its ``fused``
    field (one field may place many configs, through loops and groups).
    """
    out: dict[tuple[Span, str], Finding] = {}
    for _, c, fused in unconfigured_fusions(backend, lambda s: identity(s.path)):
        span = c.field_span("fused")
        if span is None:
            continue
        name = spell(fused.path)
        message = (
            f"pattern {pattern_text(c.pattern)} is fused into {name}, which no pattern config "
            f"of backend {backend.module} names: FX fuses the modules and never quantizes them"
        )
        hint = f"add 'pattern {name} {{ dtypes: ... }}' (with its root, reference and qat modules)"
        out.setdefault((span, name), Finding(Severity.WARNING, span, message, hint))
    return list(out.values())


def _all_ops(p: m.PatternValue) -> bool:
    """Every operator of the pattern is an aten operator (a pattern for exported graphs)."""
    if isinstance(p, tuple):
        return all(_all_ops(x) for x in p if not isinstance(x, int))
    return isinstance(p, m.Symbol) and p.kind == m.SymbolKind.OP


def _plain_integer(dc: m.DTypeConfig, fallback: Span) -> list[Finding]:
    out = []
    for key in ("input", "output", "weight"):
        d: m.DType | None = getattr(dc, key)
        if d is None or d.dtype not in QUANTIZED_DTYPE_OF:
            continue
        want = QUANTIZED_DTYPE_OF[d.dtype]
        out.append(
            Finding(
                Severity.WARNING,
                dc.span(key) or fallback,
                f"{key} dtype {d.dtype} is a plain integer type: FX's quantized ops take {want}, "
                f"and convert_fx leaves {d.dtype} observers in the model, unconverted",
                f"did you mean '{want}'? ({d.dtype} is for patterns of aten operators, "
                "which the decomposed representation quantizes to plain integers)",
            )
        )
    return out


def _bias_dtype(dc: m.DTypeConfig, fallback: Span) -> list[Finding]:
    if dc.bias is None or dc.bias in ("float32", "float16"):
        return []
    kind = "an integer" if dc.bias in QUANT_RANGES else "a"
    return [
        Finding(
            Severity.WARNING,
            dc.span("bias") or fallback,
            f"bias dtype {dc.bias} never matches: FX observes biases as float (float16 when "
            "activation and weight are float16), so no QConfig fits this dtype config",
            "did you mean 'bias: float'? (quantized kernels quantize the bias themselves; "
            f"{kind} {dc.bias} bias is nothing a QConfig can ask for)",
        )
    ]


def _dynamic_fixed(dc: m.DTypeConfig, fallback: Span) -> list[Finding]:
    d = dc.input
    if not dc.is_dynamic or d is None:
        return []
    if d.scale_exact_match is None or d.zero_point_exact_match is None:
        return []
    return [
        Finding(
            Severity.WARNING,
            dc.span("input") or fallback,
            "no observer can satisfy a dynamic dtype config whose input has fixed qparams: "
            "FX wants a FixedQParamsObserver for fixed qparams, and none is dynamic",
            "remove 'dynamic: true', or the input's scale and zero_point",
        )
    ]


def params_mismatch(
    params: tuple[m.Param, ...], pattern: m.PatternValue, is_complex: bool
) -> str | None:
    """Why a fuse definition's parameters cannot take the modules of ``pattern``, or None."""
    shape = pattern if isinstance(pattern, tuple) else (pattern,)
    if len(params) != len(shape):
        return f"it takes {len(params)} module(s), the pattern has {len(shape)} element(s)"
    for p, el in zip(params, shape):
        if p.name is not None:
            continue
        if not is_complex:
            return "a sequential pattern has no nested elements to unpack"
        if not isinstance(el, tuple):
            return f"({', '.join(q.name or '(...)' for q in p.items)}) unpacks an element that is not a tuple"
        inner = params_mismatch(p.items, el, is_complex)
        if inner:
            return inner
    return None


def arity_mismatch(sig: CallSignature | None, n: int) -> str | None:
    """Why a callable of signature ``sig`` cannot take ``n`` positional arguments; None if it can or cannot be told."""
    problem = None if sig is None else sig.bind_error(n)
    if sig is None or problem is None:
        return None
    plural = "s" if n != 1 else ""
    return f"cannot take {n} argument{plural} ({problem}); its signature is {sig.text}"


# ----------------------------------------------------------------- constraints

# The short name of each DType constraint field, for messages.
_WORD = CONSTRAINT_WORDS


def constraint_findings(
    dtype: str, values: dict[str, Any], spans: dict[str, Span]
) -> list[Finding]:
    """Bounds within the dtype's range and in order, scales positive, exact values within bounds.

    ``values`` maps DType field names to numbers; ``spans`` locates each value.
    Findings come in source order.
    """
    found: list[Finding] = []

    def bad(key: str, message: str, hint: str | None = None) -> None:
        found.append(Finding(Severity.ERROR, spans[key], message, hint))

    rng = QUANT_RANGES.get(dtype)
    for key in ("quant_min_lower_bound", "quant_max_upper_bound", "zero_point_exact_match"):
        v = values.get(key)
        if v is None:
            continue
        if not isinstance(v, int):
            bad(key, f"{_WORD[key]} must be an integer, got {v!r}")
        elif rng is None:
            bad(
                key,
                f"{_WORD[key]} needs an integer dtype; {dtype} has no quantized range",
                "integer ranges exist for quint8, qint8, qint32, quint4x2, int8, uint8, ...",
            )
        elif not rng[0] <= v <= rng[1]:
            bad(key, f"{_WORD[key]} {v} is outside the range of {dtype}, {rng[0]}..{rng[1]}")
    for key in ("scale_min_lower_bound", "scale_max_upper_bound", "scale_exact_match"):
        v = values.get(key)
        if v is not None and not v > 0:
            bad(key, f"{_WORD[key]} must be positive, got {v!r}")
    if not found:  # every value is of the right kind and in range: now their order
        qmin, qmax = values.get("quant_min_lower_bound"), values.get("quant_max_upper_bound")
        smin, smax = values.get("scale_min_lower_bound"), values.get("scale_max_upper_bound")
        zp, scale = values.get("zero_point_exact_match"), values.get("scale_exact_match")
        if qmin is not None and qmax is not None and qmin > qmax:
            bad("quant_max_upper_bound", f"quant_max {qmax} is below quant_min {qmin}")
        if smin is not None and smax is not None and smin > smax:
            bad("scale_max_upper_bound", f"scale_max {smax!r} is below scale_min {smin!r}")
        if zp is not None and rng is not None:
            lo = qmin if qmin is not None else rng[0]
            hi = qmax if qmax is not None else rng[1]
            if not lo <= zp <= hi:
                bad(
                    "zero_point_exact_match",
                    f"zero_point {zp} is outside quant_min..quant_max, {lo}..{hi}",
                )
        if scale is not None and (
            smin is not None and scale < smin or smax is not None and scale > smax
        ):
            bad("scale_exact_match", f"scale {scale!r} is outside scale_min..scale_max")
    if not found:
        found += _unsatisfiable(dtype, values, spans) + _unchecked(dtype, values, spans)
    return sorted(found, key=lambda f: (f.span.line, f.span.column))


def _unsatisfiable(dtype: str, values: dict[str, Any], spans: dict[str, Span]) -> list[Finding]:
    """Constraints no observer can meet (warnings): FX would skip every QConfig."""
    qmin, qmax = values.get("quant_min_lower_bound"), values.get("quant_max_upper_bound")
    fixed = (
        values.get("scale_exact_match") is not None
        and values.get("zero_point_exact_match") is not None
    )
    out = []
    if qmin is not None and qmax is not None and not fixed and (qmin > 0 or qmax <= 0):
        why = (
            "an observer's range includes 0 (quant_min <= 0 <= quant_max)"
            if qmin > 0 or qmax < 0
            else "an observer's range needs quant_min < quant_max"
        )
        out.append(
            Finding(
                Severity.WARNING,
                spans["quant_min_lower_bound" if qmin > 0 else "quant_max_upper_bound"],
                f"no observer can satisfy quant_min {qmin}, quant_max {qmax}: {why}",
                "widen the bounds: FX wants the observer's whole range inside them",
            )
        )
    if fixed and values.get("scale_min_lower_bound") is not None:
        out.append(
            Finding(
                Severity.WARNING,
                spans["scale_min_lower_bound"],
                "no observer can satisfy scale_min with a fixed scale and zero_point: FX compares "
                "scale_min with the observer's eps, and a FixedQParamsObserver has none",
                "remove scale_min: a fixed scale needs no lower bound",
            )
        )
    return out


def _unchecked(dtype: str, values: dict[str, Any], spans: dict[str, Span]) -> list[Finding]:
    """Bounds FX never checks (warnings): a range or fixed qparams with one half missing, scale_max."""
    out = []
    rng = QUANT_RANGES.get(dtype)
    for key, other, default in (
        ("quant_min_lower_bound", "quant_max_upper_bound", rng[1] if rng else None),
        ("quant_max_upper_bound", "quant_min_lower_bound", rng[0] if rng else None),
        ("scale_exact_match", "zero_point_exact_match", None),
        ("zero_point_exact_match", "scale_exact_match", None),
    ):
        if values.get(key) is not None and values.get(other) is None:
            value = default if default is not None else f"<the fixed {_WORD[other]}>"
            add = f"add '{_WORD[other]}: {value}'"
            out.append(
                Finding(
                    Severity.WARNING,
                    spans[key],
                    f"FX checks {_WORD[key]} only together with {_WORD[other]}: on its own it is never enforced",
                    f"{add} to enforce it, or remove it",
                )
            )
    if values.get("scale_max_upper_bound") is not None:
        out.append(
            Finding(
                Severity.WARNING,
                spans["scale_max_upper_bound"],
                "FX never checks scale_max: it has no effect",
                "remove it (FX checks scale_min against the observer's eps, and no maximum)",
            )
        )
    return out
