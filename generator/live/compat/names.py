"""How ``bcfg compat`` names live objects: as a spec would (``nn.Conv2d``, ``F.linear``)."""

from __future__ import annotations

from typing import Any

from ...lang.vocabulary import spell
from ..names import public_names


def object_text(obj: Any) -> str:
    """A pattern element or mapping key as a spec writes it; a method name in quotes."""
    if isinstance(obj, str):
        return f'"{obj}"'
    if isinstance(obj, int):
        return str(obj)
    name = public_names().name(obj)
    if name is not None:
        return spell(name.path)
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module and qualname:
        return f"{module}.{qualname}"
    return repr(obj)


def pattern_text(pattern: Any) -> str:
    """``(nn.Conv2d, nn.ReLU)``; nested tuples for complex patterns."""
    if isinstance(pattern, tuple):
        return "(" + ", ".join(pattern_text(p) for p in pattern) + ")"
    return object_text(pattern)
