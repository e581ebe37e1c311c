"""The package's layers: what each part of ``generator`` may import.

Two checks (ARCHITECTURE.md, "Layers" and "Import budgets"):

- the layer order (``LAYERS``): every import of a ``generator`` module, at module
  level, inside a function or for type checking alone, goes to the module's own
  layer or a lower one, and no modules import each other in a circle;
- the import budgets (``BUDGETS``): what each part may import at module level.
  ``bcfg check`` on an up-to-date tree must not import torch, lark, jinja2 or
  black, so the fast path (``cli``, ``config``, ``diagnostics``, ``sources``,
  ``infra``) imports only the standard library at module level; the language
  never imports torch; the emitter imports jinja2 and black only inside the
  functions that need them. Third-party imports inside functions are deferred
  on purpose and are not budgeted, except that nothing outside ``live`` and
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
}

# module (or package prefix) -> (internal modules it may import, third-party top-level modules)
BUDGETS: list[tuple[str, set[str], set[str]]] = [
    ("generator.__main__", {"generator.cli"}, set()),
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
            "generator.lang.pt2e_keys",  # the key table (stdlib only): each scopes word's base
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


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.Import | ast.ImportFrom, package: str, root: Path) -> list[str]:
    """The absolute module names one import statement imports."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    out = []
    for a in node.names:  # `from .semantics import model` imports generator.semantics.model
        sub = f"{target}.{a.name}"
        out.append(sub if is_module(sub, root) else target)
    return list(dict.fromkeys(out))


def imports(path: Path, root: Path = REPO, everywhere: bool = False) -> list[tuple[str, int]]:
    """(absolute module name, line) of the module's imports.

    By default those executed when the module is imported (module level, not
    under ``if TYPE_CHECKING:``); ``everywhere`` adds those inside functions and
    classes and those for type checking alone.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    if everywhere:
        nodes = list(ast.walk(tree))
    else:  # `if TYPE_CHECKING:` imports never run
        nodes = [n for n in tree.body if not isinstance(n, ast.If)]
    return [
        (target, node.lineno)
        for node in nodes
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for target in _targets(node, package, root)
    ]


def module_level_imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import executed when the module is imported."""
    return imports(path)


def is_module(name: str, root: Path = REPO) -> bool:
    if not name.startswith("generator."):
        return False
    path = root.joinpath(*name.split("."))
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


# The layers, lowest first. A module imports only modules of its own layer or of a lower
# one, wherever the import sits (module level, inside a function, for type checking only).
# `runtime` stands apart: it imports none of the package and nothing imports it (above).
LAYERS: list[tuple[str, ...]] = [
    # the base: the version, package data, text and spans, diagnostics, the project's settings
    (
        "generator",
        "generator.resources",
        "generator.escape",
        "generator.sources",
        "generator.diagnostics",
        "generator.config",
    ),
    ("generator.infra",),  # files, caches, headers, isolation: the standard library only
    ("generator.lang",),
    ("generator.semantics",),
    ("generator.emit",),
    ("generator.pipeline",),
    ("generator.live",),
    ("generator.cli",),  # finds a command's module by name: it imports no tool
    ("generator.tools", "generator.__main__"),
]
RUNTIME = "generator.runtime"


def layer(name: str) -> int:
    """The rank in ``LAYERS`` of the module ``name`` (its longest matching part)."""
    best: tuple[int, int] | None = None
    for rank, parts in enumerate(LAYERS):
        for part in parts:
            if name == part or (part != "generator" and name.startswith(part + ".")):
                if best is None or len(part) > best[1]:
                    best = (rank, len(part))
    if best is None:
        raise AssertionError(f"{name} is in no layer: add it to LAYERS")
    return best[0]


def import_graph(root: Path = REPO) -> dict[str, list[tuple[str, int]]]:
    """Every module of the package under ``root`` but the runtime -> the package modules it
    imports anywhere in its text, with the line."""
    graph = {}
    for path in sorted((root / "generator").rglob("*.py")):
        name = module_name(path, root)
        if name == RUNTIME or name.startswith(RUNTIME + "."):
            continue
        graph[name] = [
            (t, line)
            for t, line in imports(path, root, everywhere=True)
            if t.split(".")[0] == "generator" and t != name
        ]
    return graph


def climbing(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """The imports that run up the layers, as ``module:line -> target``."""
    return [
        f"{name}:{line} imports {target} (layer {layer(target)} above {layer(name)})"
        for name, targets in graph.items()
        for target, line in targets
        if target in graph and layer(target) > layer(name)
    ]


def circles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The sets of modules that import each other in a circle (strongly connected, > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w, _ in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(part) > 1:
                out.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer() -> None:
    for name in import_graph():
        layer(name)


def test_no_import_runs_up_the_layers() -> None:
    assert climbing(import_graph()) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(import_graph()) == []


def _plant(root: Path, files: dict[str, str]) -> dict[str, list[tuple[str, int]]]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in (root / "generator").rglob("*"):
        if folder.is_dir() and not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("", encoding="utf-8")
    (root / "generator" / "__init__.py").touch()
    return import_graph(root)


def test_the_checks_find_a_planted_upward_import_inside_a_function(tmp_path: Path) -> None:
    graph = _plant(
        tmp_path,
        {
            "generator/semantics/model.py": "X = 1\n",
            "generator/lang/parse.py": "def f():\n    from ..semantics import model\n",
            "generator/lang/syntax.py": "from . import parse\n",
        },
    )
    assert climbing(graph) == [
        "generator.lang.parse:2 imports generator.semantics.model (layer 3 above 2)"
    ]
    assert circles(graph) == []


def test_the_checks_find_a_planted_circle_through_type_checking(tmp_path: Path) -> None:
    graph = _plant(
        tmp_path,
        {
            "generator/semantics/a.py": "from . import b\n",
            "generator/semantics/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
            ),
            "generator/semantics/c.py": "def f():\n    from generator.semantics import a\n",
            "generator/semantics/d.py": "from . import a\n",
        },
    )
    assert circles(graph) == [
        ["generator.semantics.a", "generator.semantics.b", "generator.semantics.c"]
    ]
    assert climbing(graph) == []


def architecture_drift(text: str) -> list[str]:
    """Where ARCHITECTURE.md names modules that are not there: a path of its "Layout" tree
    that does not exist, a row of the PT2E runtime's table that is no module of
    ``generator/runtime``, or a runtime module without its row."""
    import re

    layout = text[text.index("## Layout") : text.index("### Layers")]
    out, stack = [], []  # stack: (indent, folder) of the tree's enclosing folders
    for line in layout.splitlines():
        m = re.match(r"^( *)([A-Za-z_][\w.]*?)(/|\.py)?(?: {2,}|$)", line)
        if m is None or line.startswith("```"):
            continue
        indent, name = len(m.group(1)), m.group(2) + (m.group(3) or "")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([*(folder for _, folder in stack), name.rstrip("/")])
        if not (REPO / path).exists():
            out.append(f"Layout names {path}, which does not exist")
        if name.endswith("/"):
            stack.append((indent, name.rstrip("/")))
    runtime = text[text.index("| module | what it holds |") :]
    runtime = runtime[: runtime.index("\n\n")]
    rows = set(re.findall(r"^\| `(\w+)` \|", runtime, re.M))
    modules = {p.stem for p in (PACKAGE / "runtime").glob("*.py")} - {"__init__"}
    out += [f"the runtime table's {r} is no runtime module" for r in sorted(rows - modules)]
    out += [f"runtime module {r} has no row" for r in sorted(modules - rows)]
    return out


def test_architecture_names_the_modules_there_are() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert architecture_drift(text) == []
    stale = text.replace("| `report` |", "| `recorder` |").replace("    diff.py ", "    diffs.py ")
    assert architecture_drift(stale) == [
        "Layout names generator/tools/diffs.py, which does not exist",
        "the runtime table's recorder is no runtime module",
        "runtime module report has no row",
    ]
