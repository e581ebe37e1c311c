"""Step 1: read every ``BackendPatternConfig`` into plain values (``Config``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...lang.vocabulary import CONSTRAINT_FIELDS, FIELDS, OBSERVATION_WORDS, FieldKind
from ...live.getters import pick_paths
from ...live.names import PublicNames, sequential_class
from ...live.targets import ImportFailure
from ...semantics.model import reversed_nested


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

    def __init__(self, table: PublicNames):
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
