"""Public names: the public dotted name of a live object (for ``bcfg import``, ``diff``).

``semantics.facts.resolve`` goes from a name to an object; this goes back. An object is
named by the shortest public path that reaches it, found by walking public
namespaces (``torch.nn.functional.max_pool2d``, not
``boolean_dispatch.<locals>.fn``; ``torch.nn.Conv2d``, not
``torch.nn.modules.conv.Conv2d``), and spelled with the spec's built-in aliases
(``F.max_pool2d``, ``nn.Conv2d``). Aten overloads are named from their schema
(``aten.add.Tensor``). Anything else is named ``module.qualname`` when that
path leads back to the very same object: torch's private helpers and the
functions of the user's own module.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from dataclasses import dataclass
from typing import Any

from ..lang.vocabulary import spell

# Namespaces whose every public attribute is a public name, in order of preference.
PUBLIC_NAMESPACES = (
    "torch.nn",
    "torch.nn.functional",
    "torch.ao.nn.intrinsic",
    "torch.ao.nn.intrinsic.qat",
    "torch.ao.nn.intrinsic.quantized",
    "torch.ao.nn.qat",
    "torch.ao.nn.qat.dynamic",
    "torch.ao.nn.quantized",
    "torch.ao.nn.quantized.reference",
    "torch.ao.nn.quantized.dynamic",
    "torch.ao.nn.quantizable",
    "torch",
    "operator",
)
# Modules that name only what they define themselves (they import much else).
DEFINING_NAMESPACES = (
    "torch.ao.quantization.fuser_method_mappings",
    "torch.ao.quantization.utils",
    "torch.nn.utils.fusion",
)


@dataclass(frozen=True)
class Name:
    """A public dotted path of an object; ``top`` is the module a spec must be allowed to import."""

    path: str

    @property
    def top(self) -> str:
        return self.path.split(".")[0]


class PublicNames:
    """Maps live objects to their public dotted paths."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[Any, str]] = {}
        for ns in PUBLIC_NAMESPACES + DEFINING_NAMESPACES:
            try:
                module = importlib.import_module(ns)
            except ImportError:  # a namespace this torch does not have
                continue
            defining = ns in DEFINING_NAMESPACES
            for attr, obj in vars(module).items():
                if attr.startswith("_") or isinstance(obj, types.ModuleType):
                    continue
                if not (isinstance(obj, type) or callable(obj)):
                    continue
                if defining and getattr(obj, "__module__", None) != ns:
                    continue
                path = f"{ns}.{attr}"
                prev = self._names.get(id(obj))
                if prev is None or len(spell(path)) < len(spell(prev[1])):
                    self._names[id(obj)] = (obj, path)

    def name(self, obj: Any) -> Name | None:
        """The public dotted path of ``obj``, or None if no importable path reaches it."""
        op = _op_path(obj)
        if op is not None:
            return Name(op) if _lookup(op) is obj else None
        entry = self._names.get(id(obj))
        if entry is not None and entry[0] is obj:
            return Name(entry[1])
        module = _attribute(obj, "__module__")
        qualname = _attribute(obj, "__qualname__")
        if not isinstance(module, str) or module in ("builtins", "__main__"):
            return None
        if isinstance(qualname, str) and "<" not in qualname:
            path = f"{module}.{qualname}"
            if _lookup(path) is obj:
                return Name(path)
        mod = sys.modules.get(module)
        if mod is not None:
            for attr, value in vars(mod).items():
                if value is obj and not attr.startswith("__"):
                    return Name(f"{module}.{attr}")
        return None


@functools.lru_cache(maxsize=1)
def public_names() -> PublicNames:
    """The process's table of public names (torch's namespaces do not change while it runs)."""
    return PublicNames()


def sequential_class(fn: Any) -> Any:
    """The class a ``_sequential_wrapper2(cls)`` closure wraps, or None if ``fn`` is not one.

    Recognised by code object and closure cell, never by name.
    """
    from torch.ao.quantization.fuser_method_mappings import _sequential_wrapper2

    code = getattr(fn, "__code__", None)
    if code is None or code is not _sequential_wrapper2(object).__code__:
        return None
    return fn.__closure__[code.co_freevars.index("sequential")].cell_contents


def _op_path(obj: Any) -> str | None:
    """``torch.ops.ns.name.overload`` for an aten-style operator, else None."""
    import torch

    if isinstance(obj, torch._ops.OpOverload):
        ns, _, name = obj._schema.name.partition("::")
        return f"torch.ops.{ns}.{name}.{obj._overloadname}"
    if isinstance(obj, torch._ops.OpOverloadPacket):
        ns, _, name = obj._qualified_op_name.partition("::")
        return f"torch.ops.{ns}.{name}"
    return None


_MISSING = object()


def _attribute(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)``, or None when the object's own code raises."""
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001  (a property of a user's class may raise anything)
        return None


def _lookup(path: str) -> Any:
    """The object at a full dotted path, or a sentinel.

    Only modules already imported are walked: a name an object claims for
    itself (``__module__``) is never imported, so an object cannot make bcfg run
    a module's code (``__module__ = "this"`` would print).
    """
    parts = path.split(".")
    obj: Any = sys.modules.get(parts[0], _MISSING)
    if obj is _MISSING:
        return _MISSING
    for i, part in enumerate(parts[1:], start=1):
        try:
            nxt = getattr(obj, part, _MISSING)
        except Exception:  # noqa: BLE001  (a module's __getattr__ may raise anything)
            return _MISSING
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            nxt = sys.modules.get(".".join(parts[: i + 1]), _MISSING)
        if nxt is _MISSING:
            return _MISSING
        obj = nxt
    return obj
