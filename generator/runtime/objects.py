"""Python objects a generated class names by dotted path (a spec's ``classes:``
field): imported when the class is constructed, not when its module is
imported, so that a quantizer module imports without the package that defines
its default configs (ExecuTorch's Arm dependencies)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["load_object", "refuse"]


def load_object(path: str) -> Any:
    """The object ``path`` names: the longest prefix that imports as a module, then
    attributes (``pkg.module.CONFIG``, ``pkg.module.Class.attribute``)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is None or not ".".join(parts[:cut]).startswith(exc.name):
                raise
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(f"no module of '{path}' imports")


def refuse(cls: str, param: str, value: Any, only: Any, spec: str) -> None:
    """A constructor argument the spec does not reproduce: only its default is taken."""
    if value is not only and value != only:
        raise NotImplementedError(f"{cls}({param}={value!r}): only {param}={only!r} is in {spec}")
