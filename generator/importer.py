"""Import: a live ``BackendConfig`` to an idiomatic spec (``bcfg import``).

``import_target("pkg.mod:get_config")`` imports the module, calls the function
and turns the ``BackendConfig`` it returns into spec text, in three steps:

1. *Read* every ``BackendPatternConfig`` into plain values: objects become
   public dotted paths (``symtable``), ``_sequential_wrapper2(cls)`` fusers
   become ``sequential(cls)``, getters that only pick elements of the pattern
   (found by calling them on a pattern of sentinels) become ``pattern[i][j]``.
2. *Name* what is shared: constraints become ``constraint`` declarations and
   dtype configs used more than once become ``dtypes`` declarations, both named
   by content (``quint8_quint8_qint8_float``); long module paths used more than
   once get an ``alias``.
3. *Fold* repetition: runs of consecutive patterns, or of blocks of patterns,
   that differ only in some values become ``for`` loops, with ``${n}`` holes
   where the difference is part of a name (``nn.Conv${n}d``).

The text is printed by ``fmt``, so it is already canonical. Anything the
language cannot say is a one-line ``ImportFailure``.
"""

from __future__ import annotations

import importlib
import keyword
import math
import os
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from . import model as m
from .fmt import Printer, format_text, render
from .symbols import BUILTIN_ALIASES, DEFAULT_ALLOW, DTYPE_NAMES
from .symtable import SymbolTable, spell, symbol_table

SPAN = m.Span("<import>", 1, 1, 1, 1)
OBSERVATION_WORDS = m.OBSERVATION_WORDS
KEYWORDS = {
    "import", "alias", "constraint", "dtypes", "fuse", "group", "backend", "pattern",
    "override", "use", "for", "in", "complex", "fuser", "sequential", "constrain",
    "true", "false", *OBSERVATION_WORDS.values(), *OBSERVATION_WORDS,
}  # fmt: skip
MAX_BLOCK = 32  # longest block of patterns a loop may repeat
MAX_VARS = 2  # loop variables per loop


class ImportFailure(Exception):
    """Why a target cannot be imported, in one line."""


# ==========================================================================
# Loading the target
# ==========================================================================


def load_backend_config(target: str) -> tuple[Any, str]:
    """Import ``MODULE:FUNCTION``, call it, return (BackendConfig, function name)."""
    module_name, sep, func_path = target.partition(":")
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
    if not sep or not ident.match(module_name) or not ident.match(func_path):
        raise ImportFailure(
            f"expected MODULE:FUNCTION (like mypkg.backend:get_config), got {target!r}"
        )
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it)
    from torch.ao.quantization.backend_config import BackendConfig

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ImportFailure(f"no module named '{module_name}'") from None
        raise ImportFailure(f"importing {module_name} failed: {_exc(exc)}") from None
    except Exception as exc:  # noqa: BLE001  (any failure of the user's module)
        raise ImportFailure(f"importing {module_name} failed: {_exc(exc)}") from None
    obj: Any = module
    for i, part in enumerate(func_path.split(".")):
        if not hasattr(obj, part):
            where = ".".join([module_name, *func_path.split(".")[:i]])
            raise ImportFailure(f"{where} has no attribute '{part}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ImportFailure(f"{target} is not a function (it is {type(obj).__name__})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = obj()
    except Exception as exc:  # noqa: BLE001
        raise ImportFailure(f"calling {target}() failed: {_exc(exc)}") from None
    if not isinstance(result, BackendConfig):
        raise ImportFailure(f"{target}() returned {type(result).__name__}, not a BackendConfig")
    return result, func_path.split(".")[-1]


def _exc(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ==========================================================================
# Step 1: read the configs into plain values
# ==========================================================================


@dataclass(frozen=True)
class Sym:
    """An object by its full public dotted path."""

    path: str


@dataclass(frozen=True)
class DT:
    """A dtype with constraints: ``bounds`` are (short key, value) in canonical order."""

    dtype: str  # full torch attribute name, e.g. "quint8", "float32"
    bounds: tuple[tuple[str, int | float], ...] = ()

    def key(self) -> tuple:
        return (self.dtype, tuple((k, type(v).__name__, v) for k, v in self.bounds))


@dataclass(frozen=True)
class DC:
    """A dtype config."""

    input: DT | None
    output: DT | None
    weight: DT | None
    bias: str | None
    dynamic: bool | None

    def key(self) -> tuple:
        return tuple(
            x.key() if isinstance(x, DT) else x
            for x in (self.input, self.output, self.weight, self.bias, self.dynamic)
        )


@dataclass
class Config:
    """One pattern config, read."""

    index: int
    pattern: Any  # Sym | str | int | tuple
    complex: bool
    observation: str
    dtypes: tuple[DC, ...]
    modules: dict[str, Sym]  # field name (root, reference, qat, fused) -> class
    fuser: tuple[str, Sym] | None  # ("sequential" | "path", symbol)
    root_node: tuple[int, ...] | None
    extra_inputs: tuple[tuple[int, ...], ...] | None
    num_tensor_args: tuple[tuple[int, str], ...]
    input_index: tuple[tuple[str, int], ...]


class Reader:
    """Reads ``BackendPatternConfig``s, naming every object through a symbol table."""

    def __init__(self, table: SymbolTable):
        self.table = table
        self.where = ""

    def fail(self, i: int, what: str) -> ImportFailure:
        return ImportFailure(f"config {i}{self.where}: {what}")

    def sym(self, i: int, obj: Any, role: str) -> Sym:
        name = self.table.name(obj)
        if name is None:
            raise self.fail(
                i,
                f"{role} {_show(obj)} has no importable dotted path (a lambda or a local function?)",
            )
        return Sym(name.path)

    def read(self, i: int, pc: Any) -> Config:
        import torch

        d = pc.to_dict()
        complex_ = pc._pattern_complex_format is not None
        shown = _show_pattern(pc._pattern_complex_format if complex_ else pc.pattern)
        self.where = f" (pattern {'complex ' if complex_ else ''}{shown})"
        if complex_ and pc.pattern is not None:
            raise self.fail(i, "it has both a pattern and a complex-format pattern")
        pattern = self.pattern(
            i, pc._pattern_complex_format if complex_ else pc.pattern, complex_, True
        )
        obs = d["observation_type"]
        if getattr(obs, "name", None) not in OBSERVATION_WORDS:
            raise self.fail(i, f"unknown observation type {obs!r}")
        modules = {}
        for key, fname in (
            ("root_module", "root"),
            ("reference_quantized_module_for_root", "reference"),
            ("qat_module", "qat"),
            ("fused_module", "fused"),
        ):
            if key in d:
                cls = d[key]
                if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
                    raise self.fail(i, f"{key} {_show(cls)} is not an nn.Module class")
                modules[fname] = self.sym(i, cls, key)
        reversed_pattern = pc._pattern_complex_format if complex_ else _reversed(pc.pattern)
        return Config(
            index=i,
            pattern=pattern,
            complex=complex_,
            observation=OBSERVATION_WORDS[obs.name],
            dtypes=tuple(self.dtype_config(i, dc) for dc in d.get("dtype_configs", [])),
            modules=modules,
            fuser=self.fuser(i, d["fuser_method"]) if "fuser_method" in d else None,
            root_node=(
                self.getter(i, d["root_node_getter"], reversed_pattern, False)
                if "root_node_getter" in d
                else None
            ),
            extra_inputs=(
                self.getter(i, d["extra_inputs_getter"], reversed_pattern, True)
                if "extra_inputs_getter" in d
                else None
            ),
            num_tensor_args=self.num_tensor_args(
                i, d.get("num_tensor_args_to_observation_type", {})
            ),
            input_index=self.input_index(i, d.get("input_type_to_index", {})),
        )

    def pattern(self, i: int, p: Any, complex_: bool, top: bool) -> Any:
        if isinstance(p, tuple):
            if not complex_:
                if not top or not 2 <= len(p) <= 3 or any(isinstance(x, tuple) for x in p):
                    raise self.fail(
                        i,
                        f"the pattern {_show(p)} is not 2 or 3 ops in sequence; bcfg writes such patterns only in complex format",
                    )
            elif len(p) < 2:
                raise self.fail(
                    i, f"the complex pattern {_show(p)} needs an operator and an argument"
                )
            return tuple(self.pattern(i, x, complex_, False) for x in p)
        if isinstance(p, str):
            return p
        if isinstance(p, int) and not isinstance(p, bool):
            if top or p < 0:
                raise self.fail(i, f"the pattern element {p!r} cannot be written in bcfg")
            return p
        if isinstance(p, (bool, float)) or p is None:
            raise self.fail(i, f"the pattern element {p!r} cannot be written in bcfg")
        return self.sym(i, p, "the pattern element")

    def dtype(self, i: int, value: Any, slot: str) -> DT | None:
        import torch
        from torch.ao.quantization.backend_config import DTypeWithConstraints

        if value is None:
            return None
        if isinstance(value, torch.dtype):
            return DT(_dtype_name(value))
        if not isinstance(value, DTypeWithConstraints) or not isinstance(value.dtype, torch.dtype):
            raise self.fail(i, f"{slot} {_show(value)} is not a dtype")
        bounds = []
        for long, short in m.CONSTRAINT_FIELDS:
            v = getattr(value, long)
            if v is None:
                continue
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or (isinstance(v, float) and not math.isfinite(v))
            ):
                raise self.fail(i, f"{slot} constraint {long}={v!r} is not a finite number")
            bounds.append((short, v))
        if bounds and slot == "bias_dtype":
            raise self.fail(i, "bias_dtype cannot have constraints in bcfg")
        return DT(_dtype_name(value.dtype), tuple(bounds))

    def dtype_config(self, i: int, dc: dict) -> DC:
        unknown = set(dc) - {
            "input_dtype",
            "output_dtype",
            "weight_dtype",
            "bias_dtype",
            "is_dynamic",
        }
        if unknown:
            raise self.fail(i, f"unknown dtype config key {min(unknown)!r}")
        dyn = dc.get("is_dynamic")
        if dyn is not None and not isinstance(dyn, bool):
            raise self.fail(i, f"is_dynamic={dyn!r} is not a bool")
        bias = self.dtype(i, dc.get("bias_dtype"), "bias_dtype")
        return DC(
            self.dtype(i, dc.get("input_dtype"), "input_dtype"),
            self.dtype(i, dc.get("output_dtype"), "output_dtype"),
            self.dtype(i, dc.get("weight_dtype"), "weight_dtype"),
            bias.dtype if bias is not None else None,
            dyn,
        )

    def fuser(self, i: int, fn: Any) -> tuple[str, Sym]:
        wrapped = sequential_class(fn)
        if wrapped is not None:
            import torch

            if isinstance(wrapped, type) and issubclass(wrapped, torch.nn.Module):
                return ("sequential", self.sym(i, wrapped, "the fused module of the fuser"))
        if not callable(fn) or isinstance(fn, type):
            raise self.fail(i, f"fuser_method {_show(fn)} is not a function")
        return ("path", self.sym(i, fn, "fuser_method"))

    def getter(self, i: int, fn: Any, reversed_pattern: Any, many: bool) -> Any:
        what = "extra_inputs_getter" if many else "root_node_getter"
        paths = pick_paths(fn, reversed_pattern, many)
        if paths is None:
            raise self.fail(
                i,
                f"{what} {_show(fn)} does not just pick elements of the pattern; "
                "bcfg can only write getters like pattern[1][0]",
            )
        return paths

    def num_tensor_args(self, i: int, mapping: dict) -> tuple[tuple[int, str], ...]:
        out = []
        for k, v in mapping.items():
            if isinstance(k, bool) or not isinstance(k, int) or k < 0:
                raise self.fail(
                    i, f"num_tensor_args_to_observation_type key {k!r} is not a non-negative int"
                )
            if getattr(v, "name", None) not in OBSERVATION_WORDS:
                raise self.fail(
                    i, f"num_tensor_args_to_observation_type value {v!r} is not an ObservationType"
                )
            out.append((k, OBSERVATION_WORDS[v.name]))
        return tuple(out)

    def input_index(self, i: int, mapping: dict) -> tuple[tuple[str, int], ...]:
        out = []
        for k, v in mapping.items():
            if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self.fail(
                    i,
                    f"input_type_to_index entry {k!r}: {v!r} is not a name and a non-negative int",
                )
            out.append((k, v))
        return tuple(out)


def _show(obj: Any) -> str:
    text = getattr(obj, "__qualname__", None) or repr(obj)
    return text if len(text) < 80 else text[:77] + "..."


def _show_pattern(p: Any) -> str:
    if isinstance(p, tuple):
        return "(" + ", ".join(_show_pattern(x) for x in p) + ")"
    if isinstance(p, (str, int)):
        return repr(p)
    return getattr(p, "__name__", None) or repr(p)


def _dtype_name(dt: Any) -> str:
    return str(dt).removeprefix("torch.")


def _reversed(pattern: Any) -> Any:
    """The reversed nested tuple form torch passes getters: (a, b, c) -> (c, (b, a))."""
    if not isinstance(pattern, tuple):
        return pattern
    if len(pattern) == 2:
        return (pattern[1], pattern[0])
    return (pattern[2], (pattern[1], pattern[0]))


def sequential_class(fn: Any) -> Any:
    """The class a ``_sequential_wrapper2(cls)`` closure wraps, or None."""
    from torch.ao.quantization.fuser_method_mappings import _sequential_wrapper2

    code = getattr(fn, "__code__", None)
    if code is None or code is not _sequential_wrapper2(object).__code__:
        return None
    return fn.__closure__[code.co_freevars.index("sequential")].cell_contents


class _Node:
    """A sentinel standing for one element of a matched pattern."""

    __slots__ = ("path",)

    def __init__(self, path: tuple[int, ...]):
        self.path = path


def pick_paths(fn: Callable, reversed_pattern: Any, many: bool) -> Any:
    """If ``fn`` returns elements of the pattern (one, or a list), their index paths; else None."""

    where: dict[int, tuple[int, ...]] = {}

    def sentinels(p: Any, path: tuple[int, ...]) -> Any:
        if isinstance(p, tuple):
            node: Any = tuple(sentinels(x, path + (j,)) for j, x in enumerate(p))
        else:
            node = _Node(path)
        where[id(node)] = path
        return node

    nodes = sentinels(reversed_pattern, ())
    keep = [nodes]  # noqa: F841  (keeps every sentinel alive while ids are compared)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(nodes)
    except Exception:  # noqa: BLE001  (a getter that needs real nodes is no picker)
        return None
    if many:
        if type(result) is not list or not all(id(x) in where for x in result):
            return None
        return tuple(where[id(x)] for x in result)
    return where.get(id(result))


# ==========================================================================
# Step 2: names for what is shared
# ==========================================================================

SPEC_DTYPES = {str(n): n for n in DTYPE_NAMES}


def dtype_word(name: str) -> str:
    """How a spec writes a dtype: ``float32`` -> ``float``; unknown ones by path."""
    if name == "float32":
        return "float"
    if name in SPEC_DTYPES:
        return name
    return f"torch.{name}"


def _num_word(v: int | float) -> str:
    text = repr(v).replace("-", "m").replace(".", "p").replace("+", "")
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _signed_word(x: float) -> str:
    return f"minus_{int(-x)}" if x < 0 else str(int(x))


def constraint_name(dt: DT) -> str:
    """A name by content: ``qint8_min_scale``, ``quint8_fixed_0_to_1``."""
    base = re.sub(r"\W", "_", dt.dtype)
    b = dict(dt.bounds)
    qmin, qmax, scale, zp = (
        b.get("quant_min"),
        b.get("quant_max"),
        b.get("scale"),
        b.get("zero_point"),
    )
    if None not in (qmin, qmax, scale, zp) and set(b) <= {
        "quant_min",
        "quant_max",
        "scale",
        "zero_point",
    }:
        assert qmin is not None and qmax is not None and scale is not None and zp is not None
        lo, hi = (qmin - zp) * scale, (qmax + 1 - zp) * scale
        if float(lo).is_integer() and float(hi).is_integer():
            return f"{base}_fixed_{_signed_word(lo)}_to_{_signed_word(hi)}"
    tags = []
    if qmin is not None or qmax is not None:
        tags.append(
            f"range_{_num_word(qmin) if qmin is not None else 'any'}_{_num_word(qmax) if qmax is not None else 'any'}"
        )
    for key, tag in (
        ("scale_min", "min_scale"),
        ("scale_max", "max_scale"),
        ("scale", "scale"),
        ("zero_point", "zero_point"),
    ):
        if key in b:
            tags.append(tag)
    return "_".join([base, *tags])


class Names:
    """Unique names for definitions and loop variables, clear of everything a spec knows."""

    def __init__(self) -> None:
        self.taken: set[str] = (
            set(KEYWORDS) | set(BUILTIN_ALIASES) | set(DTYPE_NAMES) | set(keyword.kwlist)
        )

    def fresh(self, base: str) -> str:
        base = re.sub(r"\W", "_", base) or "x"
        if base[0].isdigit():
            base = "_" + base
        name, n = base, 2
        while name in self.taken:
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name


# ==========================================================================
# Step 3: syntax, loops
# ==========================================================================


def _path(text: str) -> m.Path:
    return m.Path(tuple(text.split(".")), SPAN)


def _int(v: int) -> m.Expr:
    return m.Int(v, SPAN) if v >= 0 else m.Neg(m.Int(-v, SPAN), SPAN)


def number_expr(v: int | float) -> m.Expr:
    """A number as the spec writes it; exact negative powers of two as ``2 ** -k``."""
    if isinstance(v, int):
        return _int(v)
    if v < 0:
        return m.Neg(number_expr(-v), SPAN)
    mant, exp = math.frexp(v)
    if mant == 0.5 and exp - 1 <= -4:
        return m.BinOp("**", m.Int(2, SPAN), m.Neg(m.Int(1 - exp, SPAN), SPAN), SPAN)
    return m.Float(v, SPAN)


def _getter_expr(path: tuple[int, ...]) -> m.Expr:
    e: m.Expr = m.PatternRef(SPAN)
    for i in path:
        e = m.Index(e, m.Int(i, SPAN), SPAN)
    return e


def _field(name: str, value: m.Expr) -> m.Field:
    return m.Field(name, value, SPAN)


@dataclass(frozen=True)
class Hole:
    """In a loop template: an expression that differs between repetitions."""

    values: tuple
    role: str


@dataclass(frozen=True)
class PartHole:
    """In a loop template: the part of a name segment that differs (``Conv${n}d``)."""

    prefix: str
    suffix: str
    values: tuple[str, ...]


class _NoFold(Exception):
    pass


_MID = re.compile(r"[A-Za-z0-9_]+\Z")
_NAME = re.compile(
    r"(?:[A-Za-z_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?:[A-Za-z0-9_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\Z"
)


def _part_hole(strings: list[str], last: bool, single: bool) -> PartHole | None:
    """The name-segment hole that covers ``strings``, if the language can write it.

    Digits in any segment (``Conv${n}d``); otherwise the whole last segment of a
    dotted path (``nn.${name}``).
    """
    prefix = os.path.commonprefix(strings)
    rests = [s[len(prefix) :] for s in strings]
    suffix = os.path.commonprefix([r[::-1] for r in rests])[::-1]
    mids = [r[: len(r) - len(suffix)] for r in rests]
    if not all(x.isdigit() for x in mids) and last and not single:
        prefix, suffix, mids = "", "", list(strings)
    if not all(_MID.match(x) for x in mids):
        return None
    if not _NAME.match(prefix + "${v}" + suffix):
        return None
    if not all(x.isdigit() for x in mids) and (single or not last):
        return None
    return PartHole(prefix, suffix, tuple(mids))


def _inst(t: Any, j: int) -> Any:
    """Repetition ``j`` of a template."""
    if isinstance(t, Hole):
        return t.values[j]
    if isinstance(t, m.Path):
        return m.Path(
            tuple(
                p.prefix + p.values[j] + p.suffix if isinstance(p, PartHole) else p for p in t.parts
            ),
            t.span,
        )
    if isinstance(t, tuple):
        return tuple(_inst(x, j) for x in t)
    if is_dataclass(t) and not isinstance(t, type):
        return replace(
            t, **{f.name: _inst(getattr(t, f.name), j) for f in fields(t) if f.name != "span"}
        )
    return t


_EXPR_TYPES = (
    m.Path,
    m.Str,
    m.Int,
    m.Float,
    m.BinOp,
    m.Neg,
    m.TupleExpr,
    m.ListExpr,
    m.Record,
    m.PatternRef,
    m.Index,
    m.Call,
)


def _au(t: Any, x: Any, r: int, role: str, expr_pos: bool) -> Any:
    """Generalise template ``t`` (of ``r`` repetitions) to also cover ``x``."""
    if isinstance(t, Hole):
        return Hole(t.values + (x,), t.role)
    if t == x:
        return t
    try:
        return _au_struct(t, x, r, role)
    except _NoFold:
        if not expr_pos:
            raise
    return Hole(tuple(_inst(t, j) for j in range(r)) + (x,), role)


def _au_struct(t: Any, x: Any, r: int, role: str) -> Any:
    if type(t) is not type(x):
        raise _NoFold
    if isinstance(t, m.Path):
        if len(t.parts) != len(x.parts):
            raise _NoFold
        parts: list[Any] = []
        for n, (tp, xp) in enumerate(zip(t.parts, x.parts)):
            last, single = n == len(t.parts) - 1, len(t.parts) == 1
            if isinstance(tp, PartHole):
                strings = [tp.prefix + v + tp.suffix for v in tp.values] + [xp]
            elif tp == xp:
                parts.append(tp)
                continue
            else:
                strings = [tp] * r + [xp]
            hole = _part_hole(strings, last, single)
            if hole is None:
                raise _NoFold
            parts.append(hole)
        return m.Path(tuple(parts), t.span)
    if not is_dataclass(t):
        raise _NoFold
    changes = {}
    for f in fields(t):
        if f.name == "span":
            continue
        tv, xv = getattr(t, f.name), getattr(x, f.name)
        sub_role = f"{role}.{f.name}" if not isinstance(t, m.Field) else t.name
        if isinstance(t, m.PatternItem) and f.name == "head":
            sub_role = "op"
        changes[f.name] = _au_value(t, f.name, tv, xv, r, sub_role)
    return replace(t, **changes)


def _au_value(owner: Any, name: str, tv: Any, xv: Any, r: int, role: str) -> Any:
    if isinstance(tv, tuple) or isinstance(xv, tuple):
        if not (isinstance(tv, tuple) and isinstance(xv, tuple)) or len(tv) != len(xv):
            raise _NoFold
        return tuple(_au_value(owner, name, a, b, r, role) for a, b in zip(tv, xv))
    if isinstance(tv, (Hole, *_EXPR_TYPES)):
        expr_pos = not (isinstance(owner, m.Call) and name == "func")
        return _au(tv, xv, r, role, expr_pos)
    if is_dataclass(tv) and not isinstance(tv, type):
        return _au(tv, xv, r, role, False)
    if tv != xv or type(tv) is not type(xv):
        raise _NoFold
    return tv


def _holes(t: Any, out: list) -> list:
    if isinstance(t, (Hole, PartHole)):
        out.append(t)
    elif isinstance(t, m.Path):
        out.extend(p for p in t.parts if isinstance(p, PartHole))
    elif isinstance(t, tuple):
        for x in t:
            _holes(x, out)
    elif is_dataclass(t) and not isinstance(t, type):
        for f in fields(t):
            if f.name != "span":
                _holes(getattr(t, f.name), out)
    return out


def _variables(template: tuple) -> list[tuple[str, tuple, str]] | None:
    """The loop variables a template needs: (kind, values, role); None if too many."""
    seen: dict[tuple, tuple[str, tuple, str]] = {}
    for h in _holes(template, []):
        key = ("e", h.values) if isinstance(h, Hole) else ("p", h.values)
        if key not in seen:
            seen[key] = (key[0], h.values, h.role if isinstance(h, Hole) else "name")
            if len(seen) > MAX_VARS:
                return None
    return list(seen.values())


@dataclass
class Fold:
    start: int
    k: int
    r: int
    template: tuple
    variables: list
    saving: int


class Folder:
    """Folds repetition in a list of items into ``for`` loops."""

    def __init__(
        self, names: Names, measure: Callable[[m.Item], int], text: Callable[[m.Expr], str]
    ):
        self.names = names
        self.measure = measure
        self.text = text

    def fold(self, items: list[m.Item], taken: frozenset[str] = frozenset()) -> list[m.Item]:
        if len(items) < 2:
            return items
        lines = [self.measure(it) for it in items]
        sigs = [
            (
                type(it),
                getattr(it, "complex", None),
                tuple(f.name for f in getattr(it, "fields", ())),
            )
            for it in items
        ]
        best: Fold | None = None
        n = len(items)
        for i in range(n):
            for k in range(1, min(MAX_BLOCK, (n - i) // 2) + 1):
                fold = self._longest(items, sigs, lines, i, k)
                if fold is not None and (best is None or fold.saving > best.saving):
                    best = fold
        if best is None:
            return items
        end = best.start + best.k * best.r
        loop = self._loop(best, taken)
        return self.fold(items[: best.start], taken) + [loop] + self.fold(items[end:], taken)

    def _longest(self, items, sigs, lines, i: int, k: int) -> Fold | None:
        """The best loop over blocks of ``k`` items from ``i``, by lines saved."""
        template = tuple(items[i : i + k])
        block = sum(lines[i : i + k])
        r = 1
        best: Fold | None = None
        while i + (r + 1) * k <= len(items):
            nxt = i + r * k
            if sigs[nxt : nxt + k] != sigs[i : i + k]:
                break
            try:
                cand = tuple(
                    _au(a, b, r, "item", False) for a, b in zip(template, items[nxt : nxt + k])
                )
            except _NoFold:
                break
            variables = _variables(cand)
            if variables is None:
                break
            template, r = cand, r + 1
            if (r - 1) * block - 2 <= (best.saving if best else 0):
                continue
            saving = (r - 1) * block - self.header(variables) - 1
            if saving > (best.saving if best else 0):
                best = Fold(i, k, r, template, variables, saving)
        return best

    def header(self, variables: list) -> int:
        """Lines of ``for x in [...] {`` for these variables, at one level of indentation."""
        columns = [_value_exprs(vals) for _, vals, _ in variables]
        if len(columns) == 1:
            values = columns[0]
        else:
            values = [m.TupleExpr(tuple(col), SPAN) for col in zip(*columns)]
        return self.text(m.ListExpr(tuple(values), SPAN)).count("\n") + 1

    def _loop(self, fold: Fold, taken: frozenset[str]) -> m.ForItem:
        names: dict[tuple, str] = {}
        var_exprs: list[list[m.Expr]] = []
        for kind, values, role in fold.variables:
            name = self._var_name(kind, values, role, taken | set(names.values()))
            names[(kind, values)] = name
            var_exprs.append(
                _value_exprs(values) if kind == "e" else [self._word(v) for v in values]
            )
        body = tuple(_realize(t, names) for t in fold.template)
        inner = taken | set(names.values())
        body = tuple(self.fold(list(body), frozenset(inner)))
        if len(var_exprs) == 1:
            iterable = m.ListExpr(tuple(var_exprs[0]), SPAN)
        else:
            iterable = m.ListExpr(
                tuple(m.TupleExpr(tuple(col), SPAN) for col in zip(*var_exprs)), SPAN
            )
        targets = tuple(names[(k, v)] for k, v, _ in fold.variables)
        return m.ForItem(targets, len(targets) > 1, iterable, body, SPAN)

    def _var_name(self, kind: str, values: tuple, role: str, taken: frozenset[str]) -> str:
        if kind == "p":
            base = "n" if all(v.isdigit() for v in values) else "name"
        else:
            lasts = {v.parts[-1].lower() if isinstance(v, m.Path) else None for v in values}
            ops = {
                (
                    v.parts[-2].lower()
                    if isinstance(v, m.Path) and v.parts[0] == "aten" and len(v.parts) > 2
                    else None
                )
                for v in values
            }
            op, last = next(iter(ops)), next(iter(lasts))
            if len(ops) == 1 and op is not None:
                base = op.strip("_")
            elif len(lasts) == 1 and last is not None:
                base = last.strip("_")
            else:
                base = _ROLE_VARS.get(role.split(".")[0], "x")
        base = re.sub(r"\W", "_", base) or "x"
        if base[0].isdigit():
            base = "x"
        name, n = base, 2
        while name in taken or name in self.names.taken:
            name = f"{base}{n}"
            n += 1
        return name

    def _word(self, v: str) -> m.Expr:
        if v.isdigit() and (v == "0" or not v.startswith("0")):
            return m.Int(int(v), SPAN)
        if v.isidentifier() and v not in self.names.taken and not keyword.iskeyword(v):
            return m.Path((v,), SPAN)
        return m.Str(v, SPAN)


_ROLE_VARS = {
    "op": "op",
    "dtypes": "ds",
    "root": "root",
    "reference": "ref",
    "qat": "qat",
    "fused": "fused",
    "fuser": "fn",
    "root_node": "node",
    "extra_inputs": "extra",
    "observation": "obs",
    "num_tensor_args": "counts",
    "input_index": "index",
}


def _value_exprs(values: tuple) -> list:
    return [v if not isinstance(v, str) else m.Str(v, SPAN) for v in values]


def _realize(t: Any, names: dict[tuple, str]) -> Any:
    """A template with its holes replaced by references to the loop variables."""
    if isinstance(t, Hole):
        return m.Path((names[("e", t.values)],), SPAN)
    if isinstance(t, m.Path):
        return m.Path(
            tuple(
                (
                    f"{p.prefix}${{{names[('p', p.values)]}}}{p.suffix}"
                    if isinstance(p, PartHole)
                    else p
                )
                for p in t.parts
            ),
            t.span,
        )
    if isinstance(t, tuple):
        return tuple(_realize(x, names) for x in t)
    if is_dataclass(t) and not isinstance(t, type):
        return replace(
            t,
            **{f.name: _realize(getattr(t, f.name), names) for f in fields(t) if f.name != "span"},
        )
    return t


# ==========================================================================
# Assembling the spec
# ==========================================================================


@dataclass
class Imported:
    """The spec text of an imported backend and what the user should know about it."""

    text: str
    module: str
    notes: list[str]
    configs: int
    not_allowed: list[str] = field(
        default_factory=list
    )  # top-level modules to add to the allow-list
    findings: list[tuple[str, int, int, str]] = field(
        default_factory=list
    )  # (severity, line, column, message)

    @property
    def errors(self) -> int:
        return sum(f[0] == "error" for f in self.findings)


def check_spec(text: str, module: str, allow: tuple[str, ...]) -> list[tuple[str, int, int, str]]:
    """What ``bcfg generate`` would report about an imported spec: (severity, line, column, message).

    torch accepts configs that bcfg's checks reject (``fused`` without a fuser, a
    ``sequential`` fuser on three modules, ...); the spec is still written, so
    the user can fix them where the messages point.
    """
    import tempfile
    from pathlib import Path

    from .diagnostics import SpecError
    from .resolve import resolve_specs

    with tempfile.TemporaryDirectory(prefix="bcfg-import-") as tmp:
        path = Path(tmp) / f"{module}.bcfg"
        path.write_text(text, encoding="utf-8")
        try:
            diags = resolve_specs(Path(tmp), [path], allow).warnings
        except SpecError as exc:
            diags = exc.diagnostics
    out = []
    for d in diags:
        span = getattr(d, "span", None)
        out.append((d.severity, span.line if span else 0, span.column if span else 0, d.message))
    return out


def module_name_for(function: str, backend_name: str) -> str:
    """The backend's module name: ``get_x_backend_config`` -> ``x``."""
    for pat in (r"get_(\w+?)_backend_config\Z", r"get_(\w+?)_config\Z", r"get_(\w+)\Z"):
        mt = re.match(pat, function)
        if mt:
            cand = mt.group(1)
            break
    else:
        cand = re.sub(r"\W+", "_", backend_name).strip("_") or function
    cand = re.sub(r"\W", "_", cand)
    if not cand.isidentifier() or keyword.iskeyword(cand):
        cand = "imported_" + cand.lstrip("_0123456789")
    return cand


class Builder:
    """Turns read configs into declarations."""

    def __init__(self, configs: list[Config], allow: tuple[str, ...]):
        self.configs = configs
        self.allow = allow
        self.names = Names()
        self.aliases: dict[str, str] = dict(BUILTIN_ALIASES)
        self.decls: list[m.Decl] = []
        self.constraints: dict[tuple, str] = {}
        self.dtype_names: dict[tuple, str] = {}
        self.list_names: dict[tuple, str] = {}

    # ---------------------------------------------------------- symbols

    def all_paths(self) -> list[str]:
        out: list[str] = []

        def pat(p: Any) -> None:
            if isinstance(p, tuple):
                for x in p:
                    pat(x)
            elif isinstance(p, Sym):
                out.append(p.path)

        for c in self.configs:
            pat(c.pattern)
            out.extend(s.path for s in c.modules.values())
            if c.fuser is not None:
                out.append(c.fuser[1].path)
        return out

    def make_aliases(self) -> list[m.AliasDecl]:
        """``alias x = long.module.path`` for module paths that would be spelled out twice or more."""
        counts: dict[str, int] = {}
        for path in self.all_paths():
            if spell(path, self.aliases) != path:
                continue
            module = path.rsplit(".", 1)[0]
            if module.count(".") >= 2:
                counts[module] = counts.get(module, 0) + 1
        decls = []
        for module, count in sorted(counts.items()):
            if count >= 2:
                name = self.names.fresh(module.rsplit(".", 1)[-1])
                self.aliases[name] = module
                decls.append(m.AliasDecl(name, _path(module), SPAN))
        return decls

    def sym(self, s: Sym) -> m.Path:
        return _path(spell(s.path, self.aliases))

    def pattern(self, p: Any) -> m.Expr:
        if isinstance(p, tuple):
            return m.TupleExpr(tuple(self.pattern(x) for x in p), SPAN)
        if isinstance(p, str):
            return m.Str(p, SPAN)
        if isinstance(p, int):
            return m.Int(p, SPAN)
        return self.sym(p)

    # ----------------------------------------------------------- dtypes

    def dtype_expr(self, dt: DT) -> m.Expr:
        if not dt.bounds:
            return _path(dtype_word(dt.dtype))
        return m.Path((self.constraints[dt.key()],), SPAN)

    def make_dtypes(self) -> list[m.Decl]:
        """Constraint decls, and dtypes decls for dtype configs and lists used more than once."""
        out: list[m.Decl] = []
        for c in self.configs:
            for dc in c.dtypes:
                for dt in (dc.input, dc.output, dc.weight):
                    if dt is not None and dt.bounds and dt.key() not in self.constraints:
                        name = self.names.fresh(constraint_name(dt))
                        self.constraints[dt.key()] = name
                        entries = tuple(m.Entry(k, number_expr(v), SPAN) for k, v in dt.bounds)
                        out.append(
                            m.ConstraintDecl(name, _path(dtype_word(dt.dtype)), entries, SPAN)
                        )
        uses: dict[tuple, int] = {}
        first: dict[tuple, DC] = {}
        for c in self.configs:
            for dc in c.dtypes:
                uses[dc.key()] = uses.get(dc.key(), 0) + 1
                first.setdefault(dc.key(), dc)
        for key, dc in first.items():
            if uses[key] >= 2:
                name = self.names.fresh(self.dtype_config_name(dc))
                self.dtype_names[key] = name
                out.append(m.DTypesDecl(name, self.record(dc), SPAN))
        list_uses: dict[tuple, list[Config]] = {}
        for c in self.configs:
            if len(c.dtypes) >= 2:
                list_uses.setdefault(tuple(d.key() for d in c.dtypes), []).append(c)
        for key, users in list_uses.items():
            if len(users) >= 2:
                name = self.names.fresh(self.list_name(users[0]))
                self.list_names[key] = name
                out.append(
                    m.DTypesDecl(name, self.dtypes_value(users[0].dtypes, named_list=False), SPAN)
                )
        return out

    def dtype_config_name(self, dc: DC) -> str:
        """By content: ``quint8_quint8_qint8_float``, ``dynamic_...``; constrained ones get the
        constraint's tag (``qint8_qint8_min_scale``, ``quint8_quint8_fixed_0_to_1``)."""
        slots = (dc.input, dc.output, dc.weight)
        tokens = [dtype_word(dt.dtype).removeprefix("torch.") if dt else "none" for dt in slots]
        tokens.append(dtype_word(dc.bias).removeprefix("torch.") if dc.bias else "none")
        while tokens and tokens[-1] == "none":
            tokens.pop()
        name = "_".join(tokens) or "empty"
        constrained = [dt for dt in slots if dt is not None and dt.bounds]
        if constrained:
            tag = self.constraints[constrained[0].key()]
            name += "_" + tag.removeprefix(re.sub(r"\W", "_", constrained[0].dtype) + "_")
        if dc.dynamic:
            name = "dynamic_" + name
        elif dc.dynamic is False:
            name += "_static"
        return re.sub(r"\W", "_", name)

    def list_name(self, c: Config) -> str:
        def words(p: Any) -> list[str]:
            if isinstance(p, tuple):
                return [w for x in p for w in words(x)]
            if isinstance(p, Sym):
                parts = p.path.split(".")
                return [
                    parts[-2] if p.path.startswith("torch.ops.") and len(parts) > 3 else parts[-1]
                ]
            return [str(p)]

        stem = "_".join(w.lower().strip("_") for w in words(c.pattern)[:3])
        return re.sub(r"\W", "_", stem) + "_dtypes"

    def record(self, dc: DC) -> m.Record:
        entries = []
        for key, dt in (("input", dc.input), ("output", dc.output), ("weight", dc.weight)):
            if dt is not None:
                entries.append(m.Entry(key, self.dtype_expr(dt), SPAN))
        if dc.bias is not None:
            entries.append(m.Entry("bias", _path(dtype_word(dc.bias)), SPAN))
        if dc.dynamic is not None:
            entries.append(m.Entry("dynamic", _path("true" if dc.dynamic else "false"), SPAN))
        return m.Record(tuple(entries), SPAN)

    def dtype_config_expr(self, dc: DC) -> m.Expr:
        name = self.dtype_names.get(dc.key())
        return m.Path((name,), SPAN) if name else self.record(dc)

    def dtypes_value(self, dcs: tuple[DC, ...], named_list: bool = True) -> m.Expr:
        if named_list and len(dcs) >= 2:
            name = self.list_names.get(tuple(d.key() for d in dcs))
            if name:
                return m.Path((name,), SPAN)
        if len(dcs) == 1:
            return self.dtype_config_expr(dcs[0])
        return m.ListExpr(tuple(self.dtype_config_expr(d) for d in dcs), SPAN)

    # ------------------------------------------------------------ items

    def item(self, c: Config) -> m.PatternItem:
        flds: list[m.Field] = []
        if c.observation != "different_observer":
            flds.append(_field("observation", _path(c.observation)))
        if c.dtypes:
            flds.append(_field("dtypes", self.dtypes_value(c.dtypes)))
        for name in ("root", "reference", "qat"):
            if name in c.modules:
                flds.append(_field(name, self.sym(c.modules[name])))
        if c.fuser is not None:
            kind, s = c.fuser
            value = (
                m.Call(_path("sequential"), (self.sym(s),), SPAN)
                if kind == "sequential"
                else self.sym(s)
            )
            flds.append(_field("fuser", value))
        if "fused" in c.modules:
            flds.append(_field("fused", self.sym(c.modules["fused"])))
        if c.root_node is not None:
            flds.append(_field("root_node", _getter_expr(c.root_node)))
        if c.extra_inputs is not None:
            flds.append(
                _field(
                    "extra_inputs", m.ListExpr(tuple(_getter_expr(p) for p in c.extra_inputs), SPAN)
                )
            )
        if c.num_tensor_args:
            entries = tuple(m.Entry(k, _path(v), SPAN) for k, v in c.num_tensor_args)
            flds.append(_field("num_tensor_args", m.Record(entries, SPAN)))
        if c.input_index:
            entries = tuple(m.Entry(k, m.Int(v, SPAN), SPAN) for k, v in c.input_index)
            flds.append(_field("input_index", m.Record(entries, SPAN)))
        return m.PatternItem(self.pattern(c.pattern), c.complex, False, tuple(flds), SPAN)

    def not_allowed(self) -> list[str]:
        tops = sorted({p.split(".")[0] for p in self.all_paths()} - set(self.allow))
        return tops


def _item_lines(printer: Printer) -> Callable[[m.Item], int]:
    def measure(it: m.Item) -> int:
        return render(printer.item(it)).count("\n") + 1

    return measure


def _expr_text(printer: Printer) -> Callable[[m.Expr], str]:
    def text(e: m.Expr) -> str:
        return render(["    for x in ", printer.expr(e), " {"])

    return text


def build_spec(
    config: Any,
    function: str,
    source: str,
    allow: tuple[str, ...] = DEFAULT_ALLOW,
    fold: bool = True,
) -> Imported:
    """Spec text for a live ``BackendConfig``; ``source`` is named in the header comment."""
    import torch

    reader = Reader(symbol_table())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        configs = [reader.read(i, pc) for i, pc in enumerate(config.configs)]
    builder = Builder(configs, allow)
    module = module_name_for(function, config.name)
    aliases = builder.make_aliases()
    dtypes = builder.make_dtypes()
    items: list[m.Item] = [builder.item(c) for c in configs]
    printer = Printer()
    if fold:
        folder = Folder(builder.names, _item_lines(printer), _expr_text(printer))
        items = folder.fold(items)
    name = config.name if config.name != module else None
    backend = m.BackendDecl(module, name, tuple(items), SPAN)
    spec = m.Spec("<import>", (*aliases, *dtypes, backend))
    notes = []
    header = [f"# Imported by `bcfg import {source}` (torch {torch.__version__.split('+')[0]})."]
    for top in builder.not_allowed():
        note = f"'{top}' is not on the allow-list: add it to [tool.bcfg] allow in pyproject.toml"
        notes.append(note)
        header.append(f"# Note: {note}.")
    text = "\n".join(header) + "\n\n" + Printer().spec(spec)
    return Imported(
        format_text(text, "<import>"), module, notes, len(configs), builder.not_allowed()
    )


def import_target(
    target: str, allow: tuple[str, ...] = DEFAULT_ALLOW, check: bool = True
) -> Imported:
    """``bcfg import``: the spec text for the BackendConfig ``MODULE:FUNCTION`` returns.

    With ``check``, the spec is also resolved, and what ``bcfg generate`` would
    report about it is in ``findings``.
    """
    config, function = load_backend_config(target)
    result = build_spec(config, function, target, allow)
    if check:
        needed = tuple(dict.fromkeys([*allow, *result.not_allowed]))
        result.findings = check_spec(result.text, result.module, needed)
    return result


# ==========================================================================
# Command line
# ==========================================================================


def run_import(target: str, output: str | None) -> int:
    """The ``bcfg import`` command: print or write the spec; 2 on any failure."""
    from pathlib import Path

    from .config import ConfigError, find_project

    try:
        allow = find_project().allow
    except ConfigError as exc:
        print(f"bcfg import: {exc}", file=sys.stderr)
        return 2
    try:
        result = import_target(target, allow)
    except ImportFailure as exc:
        print(f"bcfg import: {exc}", file=sys.stderr)
        return 2
    for note in result.notes:
        print(f"bcfg import: note: {note}", file=sys.stderr)
    shown = output if output not in (None, "-") else "<stdout>"
    for severity, line, column, message in result.findings:
        print(f"bcfg import: {shown}:{line}:{column}: {severity}: {message}", file=sys.stderr)
    if output is None or output == "-":
        sys.stdout.write(result.text)
    else:
        try:
            Path(output).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            print(f"bcfg import: cannot write {output}: {exc.strerror}", file=sys.stderr)
            return 2
        lines = sum(
            1 for ln in result.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
        )
        print(
            f"bcfg import: wrote {output}: backend {result.module}, {result.configs} pattern configs in {lines} lines",
            file=sys.stderr,
        )
    todo = []
    if result.not_allowed:
        todo.append("extend [tool.bcfg] allow")
    if result.errors:
        todo.append(
            f"fix the {result.errors} error(s) above in the spec (torch accepts them, bcfg's checks do not)"
        )
    if todo:
        print(
            f"bcfg import: before bcfg generate accepts the spec: {'; '.join(todo)}",
            file=sys.stderr,
        )
        return 1
    return 0
