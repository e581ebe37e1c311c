"""A stand-in for ``tosa_serializer``, so that bcfg's Cortex-M and Arm TOSA classes annotate here.

    python -m tests.live.tosa_stand_in MODULE|SCRIPT.py [ARGS ...]

runs ``python -m MODULE ARGS`` (or ``python SCRIPT.py ARGS``) with the stand-in installed: the PR tier's way to
annotate with the generated Cortex-M and Arm TOSA classes in the project's
environment (``tests/test_conformance.py`` against the recordings,
``tests/live/test_compat_composable.py``), where ExecuTorch's Arm code does not
import: ``executorch.backends.arm`` (which ``executorch.backends.cortex_m``
imports) imports ``tosa_serializer`` at module level, from ``tosa-tools``,
which only ``executorch[ethos-u]`` installs, and which pins numpy below 2.2
(``tests/live/envs.py``'s ``ARM``). Annotating uses nothing of it: the
serializer writes TOSA flatbuffers when a program is lowered.

``install()`` puts a module ``tosa_serializer`` in ``sys.modules`` (unless the
real one imports) whose every attribute (and theirs) is a placeholder, so that
the modules that import it at module level load (``ts.DType.INT8`` in a table,
a class derived from one of its classes). Calling a placeholder raises, so
anything that serializes TOSA, or builds a TOSA operator, fails instead of
passing on a fake: lowering, the TOSA reference model and ExecuTorch's own
tests stay the full tier's, in the Arm environment. It is part of the test
harness only, and runs in a process of its own (never in a pytest worker,
whose other tests ask whether ExecuTorch's Arm code imports).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import runpy
import sys
import types
from typing import Any

NAME = "tosa_serializer"
CALLED = "tosa_serializer stand-in (tests/live/tosa_stand_in.py): {} was called; TOSA "
CALLED += "serialization needs the real tosa_serializer: the Arm environment (tests/live/envs.py)"


class Placeholder:
    """One attribute of the stand-in: has attributes of its own, and raises when called."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, name: str) -> Placeholder:
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self._name}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(CALLED.format(self._name))

    def __mro_entries__(self, bases: tuple) -> tuple[type, ...]:
        return (_Base,)

    def __repr__(self) -> str:
        return f"<{self._name} (stand-in)>"

    def __hash__(self) -> int:
        return hash(self._name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placeholder) and other._name == self._name


class _Base:
    """What a class derived from one of the stand-in's classes derives from: making one raises."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(CALLED.format(f"a subclass of a {NAME} class ({type(self).__name__})"))


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name == NAME or name.startswith(f"{NAME}."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name, "tests/live/tosa_stand_in.py's placeholders")
        module.__path__ = []

        def attribute(name: str) -> Placeholder:
            if name.startswith("__"):
                raise AttributeError(name)
            return Placeholder(f"{spec.name}.{name}")

        module.__getattr__ = attribute  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install() -> bool:
    """Install the stand-in unless ``tosa_serializer`` imports; whether it was installed."""
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return True
    try:
        importlib.import_module(NAME)
        return False
    except ImportError:
        pass
    sys.meta_path.insert(0, _Finder())
    return True


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m tests.live.tosa_stand_in MODULE|SCRIPT.py [ARGS ...]")
    install()
    sys.argv = list(argv)
    if argv[0].endswith(".py"):
        runpy.run_path(argv[0], run_name="__main__")
    else:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
