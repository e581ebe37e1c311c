"""The package's layers: what each part of ``generator`` may import when it is imported.

Each sub-package has one import budget (README, "Layout"). ``bcfg check`` on
an up-to-date tree must not import torch, lark, jinja2 or black, so the fast
path (``cli``, ``config``, ``diagnostics``, ``sources``, ``infra``,
``emit.header``) imports only the standard library at module level; the
language never imports torch; the emitter imports jinja2 and black only inside
the functions that need them. Imports inside functions are deferred on
purpose and are not checked here, except that nothing outside ``live`` and
``tools`` may import torch at module level.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support import REPO

PACKAGE = REPO / "generator"
STDLIB = set(sys.stdlib_module_names)

FAST_PATH = {"generator", "generator.cli", "generator.config", "generator.diagnostics"}
FAST_PATH |= {
    "generator.escape",
    "generator.sources",
    "generator.resources",
    "generator.infra",
    "generator.emit.header",
}

# module (or package prefix) -> (internal modules it may import, third-party top-level modules)
BUDGETS: list[tuple[str, set[str], set[str]]] = [
    ("generator.__main__", {"generator.cli"}, set()),
    ("generator.emit.header", set(), set()),
    ("generator.infra", FAST_PATH, set()),
    ("generator.cli", FAST_PATH, set()),
    ("generator.config", FAST_PATH, set()),
    ("generator.diagnostics", FAST_PATH, set()),
    ("generator.escape", set(), set()),
    ("generator.sources", FAST_PATH, set()),
    ("generator.resources", set(), set()),
    # Loaded only by Pygments, through the `pygments.lexers` entry point: bcfg never imports it.
    ("generator.lang.pygments_lexer", {"generator.lang.highlight"}, {"pygments"}),
    ("generator.lang", FAST_PATH | {"generator.lang"}, {"lark"}),
    ("generator.semantics", FAST_PATH | {"generator.lang", "generator.semantics"}, {"lark"}),
    (
        "generator.emit",
        FAST_PATH
        | {
            "generator.lang.vocabulary",
            "generator.semantics.model",
            "generator.semantics.spelling",  # the model in spec words: lark-free, as docs need
            "generator.emit",
        },
        set(),
    ),
    ("generator.pipeline", FAST_PATH | {"generator.semantics.model"}, set()),
    ("generator.live", None, {"torch"}),  # type: ignore[list-item]
    # The PT2E runtime, copied beside generated quantizers: torch and torchao, never bcfg.
    ("generator.runtime", {"generator.runtime"}, {"torch", "torchao"}),
    ("generator.tools", None, None),  # type: ignore[list-item]
    ("generator", set(), set()),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_level_imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import executed when the module is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports never run
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:  # `from .semantics import model` imports generator.semantics.model
                sub = f"{target}.{a.name}"
                out.append((sub if is_module(sub) else target, node.lineno))
    return out


def is_module(name: str) -> bool:
    if not name.startswith("generator."):
        return False
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def budget(name: str) -> tuple[set[str] | None, set[str] | None]:
    for prefix, internal, third in BUDGETS:
        if name == prefix or name.startswith(prefix + "."):
            return internal, third
    raise AssertionError(f"{name} has no import budget: add it to BUDGETS")


def allowed(target: str, internal: set[str]) -> bool:
    """``target`` is one of ``internal`` or inside one of them (``generator`` itself: exactly)."""
    return any(target == p or (p != "generator" and target.startswith(p + ".")) for p in internal)


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_module_level_imports_keep_to_the_layer(path: Path) -> None:
    name = module_name(path)
    internal, third = budget(name)
    for target, line in module_level_imports(path):
        top = target.split(".")[0]
        where = f"{path.relative_to(REPO)}:{line}"
        if top == "generator":
            if internal is not None:
                assert target == name or allowed(
                    target, internal | {name}
                ), f"{where}: {name} imports {target}, outside its layer"
        elif top not in STDLIB and third is not None:
            assert top in third, f"{where}: {name} imports {target} at module level"


def test_sub_package_inits_import_nothing() -> None:
    """An eager import in a package's ``__init__`` would load it for every module below."""
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent == PACKAGE or init.parent.name == "fmt":
            continue  # the package's version; fmt's API module (fmt is imported whole anyway)
        if init.parent.name == "runtime":
            continue  # checks the torchao every module of it imports, before they import it
        tree = ast.parse(init.read_text(encoding="utf-8"))
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert all(
            isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in imports
        ), init


def test_every_module_has_a_budget() -> None:
    for path in MODULES:
        budget(module_name(path))


def test_nothing_in_the_compiler_imports_the_pt2e_runtime() -> None:
    """``generator/runtime`` is copied beside generated quantizers: the compiler reads it as text.

    No import of it anywhere else in the package, inside functions included.
    """
    for path in MODULES:
        name = module_name(path)
        if name.startswith("generator.runtime"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
                if node.level:
                    base = name.split(".")[: len(name.split(".")) - node.level]
                    targets = [".".join(base + [t]) if t else ".".join(base) for t in targets]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            assert not any(
                t == "generator.runtime" or t.startswith("generator.runtime.") for t in targets
            ), f"{path.relative_to(REPO)}:{node.lineno} imports the PT2E runtime"
