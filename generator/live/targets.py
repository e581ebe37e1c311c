"""Targets: ``MODULE:FUNCTION`` named on the command line, imported and called.

``bcfg import`` and ``bcfg diff --configs`` load the BackendConfig a user's
function returns; ``bcfg compat`` loads a QConfigMapping and a model, and
only from modules on the allow-list, as specs name symbols
(``semantics.facts.check_allowed``). Any failure of the user's code is one
line (``ImportFailure``): an import that fails, a function that raises
(any ``BaseException``: ``class Abort(BaseException)`` and pytest's ``Skipped``
too) or calls ``sys.exit()``, a value of the wrong type. What the user's code prints
goes to stderr, so that it cannot mix with a command's output.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..semantics.facts import UnknownSymbol, check_allowed


class ImportFailure(Exception):
    """Why a target cannot be imported, in one line."""


class QuantizerTarget(ImportFailure):
    """The target returned a PT2E quantizer, not a BackendConfig (``quantizer``: it):
    ``bcfg import`` imports it by probing, other commands refuse it."""

    def __init__(self, message: str, quantizer: Any) -> None:
        super().__init__(message)
        self.quantizer = quantizer


def _dotted(name: str) -> bool:
    """A dotted path of Python identifiers (``pkg.mod``; ``get_café`` is one too)."""
    return all(part.isidentifier() for part in name.split("."))


def load_backend_config(target: str) -> tuple[Any, str]:
    """Import ``MODULE:FUNCTION``, call it, return (BackendConfig, function name)."""
    config, function, _, _ = load_target(target)
    return config, function


def load_target(target: str) -> tuple[Any, str, str, set[str]]:
    """``load_backend_config``, and the module's name and the modules loaded before it."""
    import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it)
    from torch.ao.quantization.backend_config import BackendConfig

    before = set(sys.modules)
    function = find_function(target)
    result = call_function(target, function)
    if not isinstance(result, BackendConfig):
        if any(c.__name__ == "Quantizer" for c in type(result).__mro__[1:]):
            raise QuantizerTarget(
                f"{target}() returned {type(result).__name__}, a PT2E quantizer, not a BackendConfig (FX's)",
                result,
            )
        raise ImportFailure(f"{target}() returned {type(result).__name__}, not a BackendConfig")
    module_name, _, func_path = target.partition(":")
    return result, func_path.split(".")[-1], module_name, before


def load_qconfig_mapping(target: str, allow: tuple[str, ...]) -> Any:
    """The QConfigMapping ``MODULE:FUNCTION`` returns; ``MODULE`` must be allowed."""
    from torch.ao.quantization import QConfigMapping

    result = call_function(target, find_function(target, allow))
    if not isinstance(result, QConfigMapping):
        hint = (
            " (QConfigMapping.from_dict turns a dict into one)" if isinstance(result, dict) else ""
        )
        raise ImportFailure(f"{target}() returned {_kind(result)}, not a QConfigMapping{hint}")
    return result


def load_model(target: str, allow: tuple[str, ...]) -> tuple[Any, tuple[Any, ...]]:
    """The ``(model, example_inputs)`` ``MODULE:FUNCTION`` returns; ``MODULE`` must be allowed."""
    import torch

    result = call_function(target, find_function(target, allow))
    expected = "(model, example_inputs): an nn.Module and a tuple of inputs"
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ImportFailure(f"{target}() returned {_kind(result)}, not {expected}")
    model, example_inputs = result
    if not isinstance(model, torch.nn.Module):
        raise ImportFailure(f"{target}() returned ({_kind(model)}, ...), not {expected}")
    if not isinstance(example_inputs, tuple):
        raise ImportFailure(
            f"{target}() returned (model, {_kind(example_inputs)}): example_inputs must be a tuple, like (torch.randn(1, 3, 8, 8),)"
        )
    return model, example_inputs


def _kind(value: Any) -> str:
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return "None" if value is None else type(value).__name__


def find_function(target: str, allow: tuple[str, ...] | None = None) -> Callable[..., Any]:
    """Import ``MODULE`` (only an allowed one, when ``allow`` is given) and find ``FUNCTION`` in it."""
    module_name, sep, func_path = target.partition(":")
    if not sep or not _dotted(module_name) or not _dotted(func_path):
        raise ImportFailure(
            f"expected MODULE:FUNCTION (like mypkg.backend:get_config), got {target!r}"
        )
    if allow is not None:
        try:
            check_allowed(module_name, allow)
        except UnknownSymbol as exc:
            raise ImportFailure(f"{exc.message}; {exc.suggestion}") from None
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: Any = _import(module_name)
    for i, part in enumerate(func_path.split(".")):
        try:
            with _guarded():
                nxt = getattr(obj, part, _MISSING)
        except _UserFailure as exc:  # a module __getattr__ that raises
            raise ImportFailure(f"reading {part} of {module_name} failed: {exc}") from None
        if nxt is _MISSING:
            where = ".".join([module_name, *func_path.split(".")[:i]])
            raise ImportFailure(f"{where} has no attribute '{part}'")
        obj = nxt
    if not callable(obj):
        raise ImportFailure(
            f"{target} is not a function (it is {type(obj).__name__}): name a function that "
            f"returns it (def {func_path.rpartition('.')[2].lower()}(): return ...)"
        )
    return obj


_MISSING = object()


def _import(module_name: str) -> Any:
    try:
        with _guarded():
            return importlib.import_module(module_name)
    except _UserFailure as exc:
        missing = exc.missing
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise ImportFailure(f"no module named '{module_name}'") from None
        raise ImportFailure(f"importing {module_name} failed: {exc}") from None


def call_function(target: str, function: Callable[..., Any]) -> Any:
    """Call the user's function without arguments; any failure becomes an ``ImportFailure``."""
    try:
        with _guarded(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function()
    except _UserFailure as exc:
        raise ImportFailure(f"calling {target}() failed: {exc}") from None


# What user code may raise is any BaseException (pytest's Skipped, a project's own
# `class Abort(BaseException)`, SystemExit); these two are not failures of the user's code:
# an interrupt (Ctrl-C, SIGINT) and a generator being closed.
NOT_THE_USERS = (KeyboardInterrupt, GeneratorExit)


def failure(exc: BaseException) -> str:
    """What the user's code (or torch running it) raised: its type and message, the message's
    lines kept (a multi-line error stays readable); its ``__str__`` may raise too."""
    try:
        lines = [line.rstrip() for line in str(exc).strip().splitlines()]
    except Exception:  # noqa: BLE001
        lines = []
    text = "\n".join(line for line in lines if line)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _UserFailure(Exception):
    """The user's code raised (or tried to exit); the message says what, in one line.

    ``missing`` is the module a ``ModuleNotFoundError`` names.
    """

    def __init__(self, message: str, missing: str | None = None) -> None:
        super().__init__(message)
        self.missing = missing


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    """Run user code: its prints go to stderr, its exceptions and ``sys.exit()`` become one line."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (anything the user's code raises)
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        raise _UserFailure(one_line(exc), missing) from None


def one_line(exc: BaseException) -> str:
    """One line about an exception of the user's code (whose ``__str__`` may raise too)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    try:
        text = str(exc).strip().splitlines()
    except Exception:  # noqa: BLE001
        text = []
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
