"""The resolved model said in the spec's own words, for people: docs and ``bcfg explain``.

``nn.Conv2d``, not ``torch.nn.Conv2d``; ``quint8 → quint8, w qint8, b float``
for a dtype config; constraints as ranges (``qint8[-127..127, scale ≥ 2^-12]``);
``sequential(nni.ConvReLU2d)`` for a fuser. Every function is pure and
deterministic: the same model gives the same words, byte for byte.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from ..lang.vocabulary import (
    DEFAULT_OBSERVATION,
    PATTERN_FIELDS,
    FieldKind,
    FieldSpec,
    spell,
)
from ..semantics import model as m
from ..semantics.spelling import field_value

# The fields in the order specs write them (``bcfg fmt``'s), which docs and explain follow.
SPEC_ORDER: tuple[FieldSpec, ...] = tuple(sorted(PATTERN_FIELDS, key=lambda f: f.fmt_rank))
# How the kinds of patterns are called in the docs' filters.
KINDS = ("module", "functional", "fused", "method")
# Canonical torch dtype names as specs write them.
_DTYPE_WORDS = {"float32": "float", "float64": "double"}


def atom(a: m.Atom) -> str:
    """One element of a pattern: ``nn.ReLU``, ``"relu_"``, ``0``."""
    if isinstance(a, m.Symbol):
        return spell(a.path)
    if isinstance(a, str):
        return '"' + a.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(a)


def pattern(p: m.PatternValue) -> str:
    """A pattern as a spec writes it: ``(nn.Conv2d, nn.ReLU)``."""
    if isinstance(p, tuple):
        return "(" + ", ".join(pattern(x) for x in p) + ")"
    return atom(p)


def config_pattern(c: m.PatternConfig) -> str:
    """A config's pattern as written after ``pattern``: with ``complex`` for the nested form."""
    return ("complex " if c.complex else "") + pattern(c.pattern)


def full_pattern(p: m.PatternValue) -> str:
    """A pattern with full dotted paths: ``(torch.nn.Conv2d, torch.nn.ReLU)``."""
    if isinstance(p, tuple):
        return "(" + ", ".join(full_pattern(x) for x in p) + ")"
    return p.path if isinstance(p, m.Symbol) else atom(p)


def kind(c: m.PatternConfig) -> str:
    """``fused`` (two or more ops), ``method`` (a method name), ``module`` or ``functional``."""
    p = c.pattern
    if isinstance(p, tuple):
        return "fused"
    if isinstance(p, str):
        return "method"
    if isinstance(p, m.Symbol) and p.kind == m.SymbolKind.MODULE:
        return "module"
    return "functional"


def number(x: int | float) -> str:
    """A bound as people read it: ``255``, ``0.5``, ``1/256``, ``2^-12``."""
    if isinstance(x, int) or float(x).is_integer():
        return str(int(x))
    f = Fraction(x)
    if f.numerator == 1 and f.denominator > 1024 and f.denominator & (f.denominator - 1) == 0:
        return f"2^-{f.denominator.bit_length() - 1}"
    if f.denominator <= 1024 and abs(f.numerator) < 1024 and len(repr(x)) > 6:
        return f"{f.numerator}/{f.denominator}"
    return repr(x)


def dtype_name(name: str) -> str:
    return _DTYPE_WORDS.get(name, name)


@functools.lru_cache(maxsize=4096)
def dtype(d: m.DType) -> str:
    """A dtype with its constraints as ranges: ``qint8[-127..127, scale ≥ 2^-12]``."""
    parts = []
    lo, hi = d.quant_min_lower_bound, d.quant_max_upper_bound
    if lo is not None or hi is not None:
        parts.append(f"{'' if lo is None else number(lo)}..{'' if hi is None else number(hi)}")
    smin, smax = d.scale_min_lower_bound, d.scale_max_upper_bound
    if smin is not None and smax is not None:
        parts.append(f"{number(smin)} ≤ scale ≤ {number(smax)}")
    elif smin is not None:
        parts.append(f"scale ≥ {number(smin)}")
    elif smax is not None:
        parts.append(f"scale ≤ {number(smax)}")
    if d.scale_exact_match is not None:
        parts.append(f"scale {number(d.scale_exact_match)}")
    if d.zero_point_exact_match is not None:
        parts.append(f"zp {number(d.zero_point_exact_match)}")
    name = dtype_name(d.dtype)
    return f"{name}[{', '.join(parts)}]" if parts else name


@functools.lru_cache(maxsize=4096)
def dtype_config(c: m.DTypeConfig) -> str:
    """``quint8 → quint8, w qint8, b float``; ``dynamic`` first for a dynamic config."""
    return " ".join(dtype_config_parts(c))


@functools.lru_cache(maxsize=4096)
def dtype_config_parts(c: m.DTypeConfig) -> tuple[str, ...]:
    """``dtype_config`` in the parts a page may wrap between: ``("quint8", "→ quint8,", ...)``."""
    head = {True: "dynamic ", False: "static ", None: ""}[c.is_dynamic]
    parts = [head + _or_dash(c.input), "→ " + _or_dash(c.output)]
    if c.weight is not None:
        parts.append(f"w {dtype(c.weight)}")
    if c.bias is not None:
        parts.append(f"b {dtype_name(c.bias)}")
    return (parts[0], *(p + "," for p in parts[1:-1]), parts[-1])


def _or_dash(d: m.DType | None) -> str:
    return "—" if d is None else dtype(d)


def dtypes_used(c: m.PatternConfig) -> list[str]:
    """The dtypes a config's activations and weights take, sorted (for the docs' dtype filter)."""
    names = {
        dtype_name(d.dtype)
        for cfg in c.dtype_configs
        for d in (cfg.input, cfg.output, cfg.weight)
        if d is not None
    }
    return sorted(names)


def field(c: m.PatternConfig, spec: FieldSpec) -> str | None:
    """The value of one field in spec words; None if the config does not set it.

    ``observation`` is always set (``different_observer`` by default); ``dtypes``
    is said one config per item by ``dtype_config``, here joined by ``; ``.
    """
    value = getattr(c, spec.attr)
    if m.unset(value):
        return None
    if spec.kind is FieldKind.DTYPES:
        return "; ".join(dtype_config(d) for d in value)
    return field_value(spec.kind, value)


def is_default(c: m.PatternConfig, spec: FieldSpec) -> bool:
    """The field holds the value a config has when the spec does not set it."""
    return spec.kind == FieldKind.OBSERVATION and c.observation == DEFAULT_OBSERVATION


def fields(c: m.PatternConfig) -> list[tuple[FieldSpec, str]]:
    """Every field the config sets, in the order specs write them, with its value in spec words."""
    out = []
    for spec in SPEC_ORDER:
        text = field(c, spec)
        if text is not None:
            out.append((spec, text))
    return out


def sort_key(c: m.PatternConfig) -> tuple[str, int, str]:
    """Where a pattern goes in the cross-backend matrix: by the name of the op it starts with.

    ``nn.Conv2d``, ``F.conv2d``, ``(nn.Conv2d, nn.ReLU)``, ``nnqat.Conv2d`` and
    ``aten.conv2d.default`` sort together; the order does not move when a backend gains
    a pattern.
    """
    first = c.pattern  # a sequential pattern's first op; a complex pattern's last (its root)
    while isinstance(first, tuple):
        first = first[0]
    name = first.path.rsplit(".", 1)[-1] if isinstance(first, m.Symbol) else str(first)
    if isinstance(first, m.Symbol) and first.path.startswith("torch.ops."):
        # an ATen op by its name, not its overload's (aten.add.Tensor beside torch.add)
        name = first.path.split(".")[3]
    n = len(c.pattern) if isinstance(c.pattern, tuple) else 1
    return (name.lower(), n, config_pattern(c))
