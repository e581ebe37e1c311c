"""Spelling: resolved values written back the way a spec writes them.

``bcfg diff`` and origin anchors speak in spec terms: ``nn.Conv2d``, not
``torch.nn.Conv2d``; ``shared_observer``, not
``OUTPUT_SHARE_OBSERVER_WITH_INPUT``; a dtype set by the name it was defined
under (``weighted_int8``), else as a record
(``{input: quint8, output: quint8}``). Every word comes from
``lang.vocabulary``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..lang.pt2e_keys import PT2E_KEY, Key, Kind
from ..lang.vocabulary import (
    CONSTRAINT_FIELDS,
    DTYPE_CONFIG_KEYS,
    OBSERVATION_WORDS,
    FieldKind,
    quote,
    spell,
)
from . import model as m


def dtype_word(name: str) -> str:
    """A canonical dtype name as specs write it: ``float32`` is ``float``."""
    return "float" if name == "float32" else name


def constraints(d: m.DType) -> str:
    """A dtype with its constraints, as a constraint declaration writes them: ``qint8 {quant_min: -127}``."""
    bounds = [
        f"{short}: {number(getattr(d, long))}"
        for long, short in CONSTRAINT_FIELDS
        if getattr(d, long) is not None
    ]
    return dtype_word(d.dtype) + (" {" + ", ".join(bounds) + "}" if bounds else "")


def dtype(d: m.DType) -> str:
    """A dtype by its constraint's name when it has one, else written out."""
    if d.constrained and d.name:
        return d.name
    return constraints(d)


def dtype_record(c: m.DTypeConfig) -> str:
    """A dtype config written out: ``{input: quint8, output: quint8, weight: qint8, bias: float}``."""
    values = (c.input, c.output, c.weight, c.bias, c.is_dynamic)
    entries = []
    for key, value in zip(DTYPE_CONFIG_KEYS, values):
        if value is None:
            continue
        if isinstance(value, m.DType):
            shown = dtype(value)
        elif isinstance(value, bool):
            shown = "true" if value else "false"
        else:
            shown = dtype_word(value)
        entries.append(f"{key.word}: {shown}")
    return "{" + ", ".join(entries) + "}"


def dtype_config(c: m.DTypeConfig) -> str:
    """A dtype config by the name it was defined under, else written out."""
    return c.name or dtype_record(c)


def dtype_set(configs: tuple[m.DTypeConfig, ...]) -> str:
    """The value of a ``dtypes`` field: one config, or a list of them."""
    if len(configs) == 1:
        return dtype_config(configs[0])
    return "[" + ", ".join(dtype_config(c) for c in configs) + "]"


def number(value: Any) -> str:
    """A constraint's number; a small power of two as specs write it (``2 ** -12``)."""
    if isinstance(value, float) and 0 < value < 1:
        mantissa, exponent = math.frexp(value)
        if mantissa == 0.5 and exponent <= -3:
            return f"2 ** {exponent - 1}"
    return repr(value)


def atom(a: m.PatternValue) -> str:
    """A pattern or one of its elements: ``(nn.Conv2d, nn.ReLU)``, ``"relu_"``, ``F.relu``."""
    if isinstance(a, tuple):
        return "(" + ", ".join(atom(x) for x in a) + ")"
    if isinstance(a, m.Symbol):
        return spell(a.path)
    if isinstance(a, str):
        return quote(a)
    return repr(a)


def pattern(c: m.PatternConfig) -> str:
    """A config's pattern as ``pattern`` writes it: ``(nn.Conv2d, nn.ReLU)``, ``complex (...)``."""
    return ("complex " if c.complex else "") + atom(c.pattern)


def fuser(f: m.Fuser) -> str:
    if isinstance(f, m.SequentialFuser):
        return f"sequential({spell(f.fused.path)})"
    if isinstance(f, m.SymbolFuser):
        return spell(f.function.path)
    return f.name


def node_index(path: tuple[int, ...]) -> str:
    """A node getter as specs write it: ``pattern[1][0]``."""
    return "pattern" + "".join(f"[{i}]" for i in path)


def hook(h: m.Hook) -> str:
    """A PT2E hook as specs write it: ``large_scalar``, ``scalars_to_tensors(aten.add.Tensor)``, ``my.fn``."""
    if h.function is not None:
        return spell(h.function.path)
    if h.ops:
        return f"{h.name}({', '.join(spell(op.path) for op in h.ops)})"
    return h.name


def hooks(hs: tuple[m.Hook, ...]) -> str:
    """Hooks as a spec writes them: one alone, several as a list."""
    texts = [hook(h) for h in hs]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _aten(chain: m.AtenChain) -> str:
    def position(ops: tuple[m.Symbol, ...]) -> str:
        names = [spell(op.path) for op in ops]
        return names[0] if len(names) == 1 else "[" + ", ".join(names) + "]"

    if not chain:
        return "[]"
    if len(chain) == 1:
        return position(chain[0])
    return "(" + ", ".join(position(ops) for ops in chain) + ")"


def pt2e_options(o: m.PT2EOptions) -> str:
    """A pattern's ``pt2e`` field as specs write it: ``{match: source, eager: true}``."""
    return (
        "{" + ", ".join(f"{k}: {key_text(PT2E_KEY[k], getattr(o, k))}" for k in o.set_keys()) + "}"
    )


def key_text(key: Key, value: Any) -> str:
    """A pt2e key's value as specs write it, by the key's kind."""
    if key.kind is Kind.ATEN:
        return _aten(value)
    if key.kind is Kind.FLAG:
        return "true" if value else "false"
    if key.kind is Kind.HOOKS:
        return hooks(value)
    if key.kind is Kind.HOOK:
        return hook(value)
    if key.kind is Kind.OPS:
        return f"[{', '.join(spell(op.path) for op in value)}]"
    if key.kind is Kind.INDICES:
        return str(value[0]) if len(value) == 1 else f"[{', '.join(map(str, value))}]"
    if key.kind is Kind.LEVELS:
        return f"[{', '.join(value)}]"
    if key.kind is Kind.GIVEN:
        return "{" + ", ".join(f"{name}: {literal(v)}" for name, v in value) + "}"
    return str(value)


def literal(v: Any) -> str:
    """A literal as specs write it: true, false, none, a number, a string."""
    words = {True: "true", False: "false", None: "none"}
    return words[v] if v is None or isinstance(v, bool) else repr(v)


_FIELD_TEXT: dict[FieldKind, Callable[[Any], str]] = {
    FieldKind.OBSERVATION: lambda v: OBSERVATION_WORDS.get(v, v),
    FieldKind.DTYPES: dtype_set,
    FieldKind.MODULE: lambda v: spell(v.path),
    FieldKind.FUSER: fuser,
    FieldKind.NODE_GETTER: lambda v: node_index(v.path),
    FieldKind.INPUTS_GETTER: lambda v: "[" + ", ".join(node_index(p) for p in v.paths) + "]",
    FieldKind.NUM_TENSOR_ARGS: lambda v: "{"
    + ", ".join(f"{k}: {OBSERVATION_WORDS.get(o, o)}" for k, o in v)
    + "}",
    FieldKind.INPUT_INDEX: lambda v: "{" + ", ".join(f"{k}: {i}" for k, i in v) + "}",
    FieldKind.PT2E: pt2e_options,
}


def field_value(kind: FieldKind, value: Any) -> str:
    """The value of a pattern field as the spec writes it."""
    return _FIELD_TEXT[kind](value)


def _param(p: Any) -> str:
    return p.name if p.name is not None else "(" + ", ".join(_param(q) for q in p.items) + ")"


def _fuse_expr(e: m.FuseExpr) -> str:
    if isinstance(e, m.FuseArg):
        return e.name
    if isinstance(e, m.FuseQat):
        return "is_qat"
    if isinstance(e, m.FuseConst):
        return ("true" if e.value else "false") if isinstance(e.value, bool) else repr(e.value)
    return f"{spell(e.function.path)}({', '.join(_fuse_expr(a) for a in e.args)})"


def fuse_definition(f: m.DefinedFuser) -> str:
    """A ``fuse`` declaration on one line: ``fuse conv_add(add, conv, _) = nni.ConvAdd2d(conv, add)``."""
    flags = [flag for flag, on in (("eval_only", f.eval_only), ("same_mode", f.same_mode)) if on]
    params = ", ".join(_param(p) for p in f.params)
    return " ".join([f"fuse {f.name}({params})", *flags, "=", _fuse_expr(f.body)])
