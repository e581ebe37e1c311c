"""Step 1: read every ``BackendPatternConfig`` into plain values (``Config``)."""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...lang.vocabulary import CONSTRAINT_FIELDS, FIELDS, OBSERVATION_WORDS, FieldKind, spell
from ...live.getters import pick_paths
from ...live.names import PublicNames, sequential_class
from ...live.targets import ImportFailure
from ...semantics.model import DefinedFuser, FuseArg, FuseConst, FuseQat, reversed_nested
from .common import is_spec_word
from .prove import Call, Const, NotProvable, Param, Proof, Qat, normalised_code, trace


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


@dataclass(frozen=True)
class FuseCall:
    """A call in a proven fuser's body: ``target(args)``; args are names, calls, flags, constants."""

    target: Sym
    args: tuple[Any, ...]  # str (a parameter) | FuseCall | QAT | bool | int | float


QAT = "<is_qat>"  # ``is_qat`` in a proven fuser's body


@dataclass(frozen=True)
class FuseDef:
    """A fuser proven by tracing (``prove``), to be written as a ``fuse`` declaration.

    Equal when they do the same: parameters compare by position, not by name.
    """

    params: Any  # nested tuple of parameter names, "_" for an unused element
    body: FuseCall
    eval_only: bool
    same_mode: bool

    def _canonical(self) -> tuple:
        names: dict[str, str] = {}

        def param(p: Any) -> Any:
            if isinstance(p, tuple):
                return tuple(param(x) for x in p)
            if p != "_":
                names[p] = f"p{len(names)}"
            return names.get(p, "_")

        def expr(e: Any) -> Any:
            if isinstance(e, FuseCall):
                return (e.target, tuple(expr(a) for a in e.args))
            if isinstance(e, str) and e != QAT:
                return ("param", names.get(e, e))
            return (type(e).__name__, e)

        shape = param(self.params)
        return (shape, expr(self.body), self.eval_only, self.same_mode)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FuseDef) and self._canonical() == other._canonical()

    def __hash__(self) -> int:
        return hash(self._canonical())


def _from_model(f: DefinedFuser) -> FuseDef:
    """A fuse declaration bcfg resolved, as the reader writes proven fusers."""

    def param(p: Any) -> Any:
        return tuple(param(q) for q in p.items) if p.name is None else p.name

    def expr(e: Any) -> Any:
        if isinstance(e, FuseArg):
            return e.name
        if isinstance(e, FuseQat):
            return QAT
        if isinstance(e, FuseConst):
            return e.value
        return FuseCall(Sym(e.function.path), tuple(expr(a) for a in e.args))

    body = expr(f.body)
    assert isinstance(body, FuseCall)
    return FuseDef(tuple(param(p) for p in f.params), body, f.eval_only, f.same_mode)


@dataclass
class Config:
    """One pattern config, read."""

    index: int
    pattern: Any  # Sym | str | int | tuple
    complex: bool
    observation: str
    dtypes: tuple[DC, ...]
    modules: dict[str, Sym]  # field name (root, reference, qat, fused) -> class
    fuser: tuple[str, Any] | None  # ("sequential" | "path", Sym) or ("fuse", FuseDef)
    root_node: tuple[int, ...] | None
    extra_inputs: tuple[tuple[int, ...], ...] | None
    num_tensor_args: tuple[tuple[int, str], ...]
    input_index: tuple[tuple[str, int], ...]

    def key(self) -> tuple:
        """Everything but the position: equal keys build equal configs."""
        return (
            self.pattern,
            self.complex,
            self.observation,
            tuple(d.key() for d in self.dtypes),
            tuple(self.modules.items()),
            self.fuser,
            self.root_node,
            self.extra_inputs,
            self.num_tensor_args,
            self.input_index,
        )

    def shape_key(self) -> tuple:
        """The key without the dtypes: configs a group with a dtype-set parameter can place."""
        k = self.key()
        return k[:3] + k[4:]


MAX_PATTERN_DEPTH = 32  # as deep as a spec's brackets may nest


class Reader:
    """Reads ``BackendPatternConfig``s, naming every object through a symbol table."""

    def __init__(self, table: PublicNames):
        self.table = table
        self.where = ""
        self.proofs: dict[int, FuseDef] = {}  # config index -> its traced fuser

    def fail(self, i: int, what: str) -> ImportFailure:
        return ImportFailure(f"config {i}{self.where}: {what}")

    def sym(self, i: int, obj: Any, role: str) -> Sym:
        name = self.table.name(obj)
        if name is None:
            raise self.fail(
                i,
                f"{role} {_show(obj)} has no importable dotted path (a lambda or a local function?)",
            )
        if not _writable(name.path):
            raise self.fail(
                i,
                f"{role} {name.path} cannot be named in a spec: spec names are ASCII "
                "(give it an ASCII name, or an ASCII alias in its module)",
            )
        return Sym(name.path)

    def read(self, i: int, pc: Any) -> Config:
        import torch

        complex_ = pc._pattern_complex_format is not None
        raw = pc._pattern_complex_format if complex_ else pc.pattern
        if _depth(raw) > MAX_PATTERN_DEPTH:
            self.where = ""
            raise self.fail(
                i,
                f"the pattern nests more than {MAX_PATTERN_DEPTH} levels deep; bcfg writes patterns nested at most {MAX_PATTERN_DEPTH} deep",
            )
        d = pc.to_dict()
        shown = _show_pattern(raw)
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
        for spec in sorted(FIELDS, key=lambda f: f.fmt_rank):
            key, fname = spec.dict_key, spec.word
            if spec.kind is FieldKind.MODULE and key in d:
                cls = d[key]
                if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
                    raise self.fail(i, f"{key} {_show(cls)} is not an nn.Module class")
                modules[fname] = self.sym(i, cls, key)
        reversed_pattern = pc._pattern_complex_format if complex_ else reversed_nested(pc.pattern)
        return Config(
            index=i,
            pattern=pattern,
            complex=complex_,
            observation=OBSERVATION_WORDS[obs.name],
            dtypes=tuple(self.dtype_config(i, dc) for dc in d.get("dtype_configs", [])),
            modules=modules,
            fuser=(
                self.fuser(i, d["fuser_method"], reversed_pattern if complex_ else pc.pattern, d)
                if "fuser_method" in d
                else None
            ),
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
        for long, short in CONSTRAINT_FIELDS:
            v = getattr(value, long)
            if v is None:
                continue
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or (isinstance(v, float) and not math.isfinite(v))
            ):
                raise self.fail(i, f"{slot} constraint {long}={v!r} is not a finite number")
            if short.startswith("scale") and v <= 0:  # -0.0 included
                raise self.fail(
                    i,
                    f"{slot} constraint {long}={v!r} is not positive; a scale bound is a positive number",
                )
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

    def fuser(self, i: int, fn: Any, pattern: Any, d: dict) -> tuple[str, Any]:
        """``sequential(C)``, a dotted path, or a ``fuse`` declaration proven by tracing, in that order.

        ``pattern`` is what torch passes the fuser: the forward pattern, or the
        complex pattern as it nests.
        """
        try:
            return self._fuser(i, fn, pattern, d)
        except ImportFailure:
            raise
        except Exception as exc:  # noqa: BLE001  (the user's object raised when looked at)
            raise self.fail(
                i, f"fuser_method {_show(fn)} raised {type(exc).__name__} when bcfg looked at it"
            ) from None

    def _fuser(self, i: int, fn: Any, pattern: Any, d: dict) -> tuple[str, Any]:
        import torch

        wrapped = sequential_class(fn)
        if wrapped is None:
            wrapped = copied_sequential_class(fn)
        if isinstance(wrapped, type) and issubclass(wrapped, torch.nn.Module):
            return ("sequential", self.sym(i, wrapped, "the fused module of the fuser"))
        if not callable(fn) or isinstance(fn, type):
            raise self.fail(i, f"fuser_method {_show(fn)} is not a function")
        defined = getattr(fn, "bcfg_definition", None)
        if isinstance(defined, DefinedFuser):  # built by bcfg from a fuse declaration
            return ("fuse", _from_model(defined))
        name = self.table.name(fn)
        if name is not None and _writable(name.path):  # the function itself, by its dotted path
            return ("path", Sym(name.path))
        shape, types_of = param_shape(pattern)
        try:
            proof = trace(fn, shape, self._named, types_of)
        except NotProvable as exc:
            raise self.fail(
                i,
                f"fuser_method {_show(fn)} has no importable dotted path and bcfg cannot prove what it builds ({exc}); "
                f"say it in the spec with a fuse declaration, e.g. `{_suggested_fuse(shape, d, self)}`",
            ) from None
        fused = _sequential_of(proof, shape)
        if fused is not None and isinstance(fused, type) and issubclass(fused, torch.nn.Module):
            return ("sequential", self.sym(i, fused, "the fused module of the fuser"))
        self.proofs[i] = self._fuse_def(i, proof)
        return ("fuse", self.proofs[i])

    def _named(self, obj: Any) -> str | None:
        name = self.table.name(obj)
        return None if name is None else name.path

    def _fuse_def(self, i: int, proof: Proof) -> FuseDef:
        def expr(node: Any) -> Any:
            if isinstance(node, Param):
                return node.name
            if isinstance(node, Qat):
                return QAT
            if isinstance(node, Const):
                return node.value
            if not isinstance(node, Call):  # modules passed on as they nest
                raise self.fail(
                    i,
                    "fuser_method passes the matched modules on as a tuple, which a fuse declaration cannot say; "
                    "give the fuser a dotted path (define it at module level)",
                )
            return FuseCall(
                self.sym(i, node.target, "a function the fuser calls"),
                tuple(expr(a) for a in node.args),
            )

        body = expr(proof.body)
        assert isinstance(body, FuseCall)
        return FuseDef(proof.params, body, proof.eval_only, proof.same_mode)

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


def _safe(fn: Callable[[], Any], default: str) -> str:
    """The text ``fn`` makes, or ``default`` when the user's object raises (or is no text)."""
    try:
        text = fn()
    except Exception:  # noqa: BLE001  (a hostile __repr__ or __qualname__)
        return default
    return text if isinstance(text, str) else default


def _show(obj: Any) -> str:
    fallback = f"<{type(obj).__name__} object>"
    text = _safe(lambda: getattr(obj, "__qualname__", None) or repr(obj), fallback)
    text = " ".join(text.split()) or fallback
    return text if len(text) < 80 else text[:77] + "..."


def _show_pattern(p: Any) -> str:
    if isinstance(p, tuple):
        return "(" + ", ".join(_show_pattern(x) for x in p) + ")"
    if isinstance(p, (str, int)):
        return repr(p)
    fallback = f"<{type(p).__name__} object>"
    return _safe(lambda: getattr(p, "__name__", None) or repr(p), fallback)


def _depth(p: Any) -> int:
    """How deep a pattern nests, without recursion (a pattern may nest thousands deep)."""
    deepest, todo = 0, [(p, 0)]
    while todo:
        x, level = todo.pop()
        if isinstance(x, tuple):
            if level + 1 > deepest:
                deepest = level + 1
                if deepest > MAX_PATTERN_DEPTH:
                    return deepest
            todo.extend((y, level + 1) for y in x)
    return deepest


def copied_sequential_class(fn: Any) -> Any:
    """The class a byte-identical copy of torch's ``_sequential_wrapper2`` wraps, or None.

    Projects copy torch's wrapper (spconv does): the code is the same once where
    it was written is left out, and the closure cell holds the fused class.
    """
    from torch.ao.quantization.fuser_method_mappings import _sequential_wrapper2

    theirs = _sequential_wrapper2(object)
    if normalised_code(fn) is None or normalised_code(fn) != normalised_code(theirs):
        return None
    try:
        cell = fn.__closure__[fn.__code__.co_freevars.index("sequential")]
        return cell.cell_contents
    except (TypeError, ValueError, IndexError):
        return None


_PARAM_WORDS = {
    "batchnorm": "bn",
    "leakyrelu": "leaky_relu",
    "convtranspose": "conv_transpose",
    "matchallnode": "x",
}


def _writable(path: str) -> bool:
    """Whether a spec can write the dotted path ``path`` (its names are ASCII identifiers)."""
    return all(is_spec_word(part) for part in path.split("."))


def _param_name(atom: Any) -> str:
    """A fuser parameter's name from the pattern element it takes: ``Conv2d`` -> ``conv``."""
    if isinstance(atom, str):
        text = atom
    else:
        text = _safe(lambda: getattr(atom, "__name__", None) or "", "")
    word = re.sub(r"(\d+d)$", "", text).lower().strip("_")
    word = _PARAM_WORDS.get(word, word)
    if word.startswith("batchnorm"):
        word = "bn"
    ok = word.isascii() and word.isidentifier() and not keyword.iskeyword(word) and word != "is_qat"
    return word if ok else "m"


def param_shape(pattern: Any) -> tuple[Any, dict[str, Any]]:
    """Parameter names in the shape torch passes the fuser, and each one's class."""
    taken: dict[str, int] = {}
    types_of: dict[str, Any] = {}

    def walk(p: Any) -> Any:
        if isinstance(p, tuple):
            return tuple(walk(x) for x in p)
        base = _param_name(p)
        if base == "_":
            base = "x"
        taken[base] = taken.get(base, 0) + 1
        name = base if taken[base] == 1 else f"{base}{taken[base]}"
        if isinstance(p, type):
            types_of[name] = p
        return name

    shape = walk(pattern) if isinstance(pattern, tuple) else (walk(pattern),)
    return shape, types_of


def _sequential_of(proof: Proof, shape: Any) -> Any:
    """The class if the proof is ``C(p1, p2)`` on the two parameters in order, with no flags."""
    body = proof.body
    if proof.eval_only or proof.same_mode or not isinstance(shape, tuple) or len(shape) != 2:
        return None
    if not all(isinstance(s, str) for s in shape):
        return None
    if body.args != (Param(shape[0]), Param(shape[1])):
        return None
    return body.target


def _suggested_fuse(shape: Any, d: dict, reader: Reader) -> str:
    """A ``fuse`` declaration to start from: the parameters, and the fused module if the config names one."""

    def params(s: Any) -> str:
        return "(" + ", ".join(params(x) for x in s) + ")" if isinstance(s, tuple) else s

    def leaves(s: Any) -> list[str]:
        return [n for x in s for n in leaves(x)] if isinstance(s, tuple) else [s]

    fused = d.get("fused_module")
    name = reader.table.name(fused) if fused is not None else None
    module = spell(name.path) if name is not None else "FusedModule"
    top = shape if isinstance(shape, tuple) else (shape,)
    return f"fuse my_fuser{params(top)} = {module}({', '.join(leaves(top))})"


def _dtype_name(dt: Any) -> str:
    return str(dt).removeprefix("torch.")
