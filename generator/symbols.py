"""Symbols: public dotted names of the installed torch, resolved to objects.

A spec names Python objects by dotted path (``torch.nn.Conv2d``,
``F.max_pool2d``, ``torch.ops.aten.add.Tensor``, ``operator.add``). This module
turns such a path into the object by importing modules and walking attributes,
never by ``__qualname__`` (``F.max_pool2d`` is a ``boolean_dispatch`` closure,
``torch.add`` reports ``_VariableFunctionsClass.add``). Only top-level modules
on the allow-list are ever imported, so a spec cannot make the generator import
``os`` or run anything else.
"""

from __future__ import annotations

import difflib
import importlib
import sys
import types
from dataclasses import dataclass
from typing import Any

DEFAULT_ALLOW = ("torch", "operator")

# Short names every spec may use, as torch's own backend code does.
BUILTIN_ALIASES: dict[str, str] = {
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "nni": "torch.ao.nn.intrinsic",
    "nniqat": "torch.ao.nn.intrinsic.qat",
    "nnqat": "torch.ao.nn.qat",
    "nnq": "torch.ao.nn.quantized",
    "nnqr": "torch.ao.nn.quantized.reference",
    "aten": "torch.ops.aten",
    "MatchAllNode": "torch.ao.quantization.utils.MatchAllNode",
}

# Dtype names a spec may use bare: `quint8` is `torch.quint8`.
DTYPE_NAMES = (
    "quint8",
    "qint8",
    "qint32",
    "quint4x2",
    "quint2x4",
    "float",
    "float32",
    "float16",
    "half",
    "bfloat16",
    "float64",
    "double",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
    "float8_e4m3fn",
    "float8_e5m2",
)

# Ranges of the quantized dtypes, for constraint checks.
QUANT_RANGES: dict[str, tuple[int, int]] = {
    "quint8": (0, 255),
    "qint8": (-128, 127),
    "qint32": (-(2**31), 2**31 - 1),
    "quint4x2": (0, 15),
    "quint2x4": (0, 3),
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
}


@dataclass(frozen=True)
class Resolved:
    """An object found at ``path``; ``module`` is the module to import for it."""

    path: str
    obj: Any
    module: str


class UnknownSymbol(LookupError):
    """``path`` names nothing; ``at`` is how many segments did resolve."""

    def __init__(self, path: str, message: str, suggestion: str | None = None):
        super().__init__(message)
        self.path = path
        self.message = message
        self.suggestion = suggestion


def _is_importable_module(obj: Any, name: str) -> bool:
    """True if ``import name`` works and gives ``obj`` (torch.ops.aten is no such module)."""
    return isinstance(obj, types.ModuleType) and sys.modules.get(name) is obj


def resolve(path: str, allow: tuple[str, ...] = DEFAULT_ALLOW) -> Resolved:
    """Resolve a full dotted path (no aliases) to the object it names."""
    allow = tuple(allow)
    found = _found.get((path, allow))
    if found is None:
        found = _resolve(path, allow)
        _found[(path, allow)] = found
    return found


# Paths resolved so far: a spec names the same few hundred objects thousands of times.
_found: dict[tuple[str, tuple[str, ...]], Resolved] = {}


def _resolve(path: str, allow: tuple[str, ...]) -> Resolved:
    parts = path.split(".")
    if parts[0] not in allow:
        hint = difflib.get_close_matches(parts[0], allow, n=1)
        raise UnknownSymbol(
            path,
            f"'{parts[0]}' is not an allowed module (allowed: {', '.join(allow)})",
            f"did you mean '{hint[0]}'?" if hint else "extend [tool.bcfg] allow in pyproject.toml",
        )
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        raise UnknownSymbol(path, f"cannot import module '{parts[0]}'") from None
    module = parts[0]
    for i, part in enumerate(parts[1:], start=1):
        prefix = ".".join(parts[: i + 1])
        nxt = getattr(obj, part, _MISSING) if not part.startswith("__") else _MISSING
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            try:
                nxt = importlib.import_module(prefix)
            except ImportError:
                nxt = _MISSING
        if nxt is _MISSING:
            raise UnknownSymbol(
                path, f"unknown symbol '{path}'", _did_you_mean(obj, parts[:i], part)
            )
        obj = nxt
        if module == ".".join(parts[:i]) and _is_importable_module(obj, prefix):
            module = prefix
    return Resolved(path, obj, module)


_MISSING = object()


def _did_you_mean(parent: Any, parent_parts: list[str], part: str) -> str | None:
    try:
        names = [n for n in dir(parent) if not n.startswith("__")]
    except Exception:  # an exotic object whose dir() fails: no suggestion
        return None
    close = difflib.get_close_matches(part, names, n=1, cutoff=0.75)
    if not close:
        lowered = {n.lower(): n for n in names}
        if part.lower() in lowered:
            close = [lowered[part.lower()]]
    return f"did you mean '{'.'.join([*parent_parts, close[0]])}'?" if close else None


def kind_of(obj: Any) -> str:
    """Classify an object for the resolver's checks."""
    import torch

    if isinstance(obj, torch.dtype):
        return "dtype"
    if isinstance(obj, type):
        return "module" if issubclass(obj, torch.nn.Module) else "class"
    if isinstance(obj, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return "op"
    if isinstance(obj, types.ModuleType):
        return "namespace"
    if callable(obj):
        return "function"
    return "value"
