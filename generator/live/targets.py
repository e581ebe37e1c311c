"""Targets: ``MODULE:FUNCTION`` named on the command line, imported and called.

``bcfg import`` and ``bcfg diff --configs`` load the BackendConfig a user's
function returns; any failure of the user's code is one line (``ImportFailure``).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings
from typing import Any


class ImportFailure(Exception):
    """Why a target cannot be imported, in one line."""


def load_backend_config(target: str) -> tuple[Any, str]:
    """Import ``MODULE:FUNCTION``, call it, return (BackendConfig, function name)."""
    config, function, _, _ = load_target(target)
    return config, function


def load_target(target: str) -> tuple[Any, str, str, set[str]]:
    """``load_backend_config``, and the module's name and the modules loaded before it."""
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

    before = set(sys.modules)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise ImportFailure(f"no module named '{module_name}'") from None
        raise ImportFailure(f"importing {module_name} failed: {_exc(exc)}") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (any failure of the user's module)
        raise ImportFailure(f"importing {module_name} failed: {_exc(exc)}") from None
    obj: Any = module
    for i, part in enumerate(func_path.split(".")):
        try:
            nxt = getattr(obj, part, _MISSING)
        except (Exception, SystemExit) as exc:  # noqa: BLE001  (a module __getattr__ that raises)
            raise ImportFailure(f"reading {part} of {module_name} failed: {_exc(exc)}") from None
        if nxt is _MISSING:
            where = ".".join([module_name, *func_path.split(".")[:i]])
            raise ImportFailure(f"{where} has no attribute '{part}'")
        obj = nxt
    if not callable(obj):
        raise ImportFailure(f"{target} is not a function (it is {type(obj).__name__})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = obj()
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (sys.exit() in the user's code too)
        raise ImportFailure(f"calling {target}() failed: {_exc(exc)}") from None
    if not isinstance(result, BackendConfig):
        raise ImportFailure(f"{target}() returned {type(result).__name__}, not a BackendConfig")
    return result, func_path.split(".")[-1], module_name, before


_MISSING = object()


def _exc(exc: BaseException) -> str:
    """One line about an exception of the user's code (whose ``__str__`` may raise too)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    try:
        text = str(exc).strip().splitlines()
    except Exception:  # noqa: BLE001
        text = []
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
