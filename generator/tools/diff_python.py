"""``bcfg diff``: the project's own Python that the specs name, compared by content.

The specs of both revisions are resolved against the working tree's Python (a
project's modules are imported, not read at a revision), so a change of a hook,
a config class or a function that a spec names is invisible to the comparison of
the resolved specs. This reads, for each dotted path into a project module that
either side's specs name, the definition in that module's file at each revision
and lists those whose code differs. Definitions are compared by their syntax
tree (a comment or a layout change is no change), with the module's other
top-level names they use (a config built from the module's specs); what they
import from elsewhere is not followed.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterable, Iterator
from typing import Any

from ..config import Project
from ..semantics import model as m
from ..sources import SourceError, SourceSet


@dataclasses.dataclass(frozen=True)
class PythonChange:
    """A definition a spec names whose code differs between the revisions."""

    path: str  # the dotted path the spec names
    file: str  # the module's file, relative to the project root
    how: str  # "changed", "added" or "removed"


def named(objects: Iterable[Any], tops: Iterable[str]) -> set[str]:
    """Every dotted path into one of the modules ``tops`` that ``objects`` (resolved backends
    and quantizers) hold: symbols, and strings that name an object by path."""
    prefixes = tuple(f"{t}." for t in tops)
    out: set[str] = set()
    if not prefixes:
        return out
    seen: set[int] = set()
    todo = list(objects)
    while todo:
        x = todo.pop()
        if isinstance(x, str):
            if x.startswith(prefixes) and all(p.isidentifier() for p in x.split(".")):
                out.add(x)
            continue
        if isinstance(x, (int, float, bool, type(None))) or id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, m.Symbol):
            todo.append(x.path)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            todo.extend(getattr(x, f.name) for f in dataclasses.fields(x) if f.compare)
        elif isinstance(x, (tuple, list, frozenset, set)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
    return out


def changed(
    project: Project, paths: Iterable[str], base: SourceSet, head: SourceSet
) -> list[PythonChange]:
    """The definitions at ``paths`` whose code differs between ``base`` and ``head``; each side
    reads the module where its own tree has it (a module moved to another folder of the
    import path, as a src layout, is not a change)."""
    out: list[PythonChange] = []
    trees: dict[tuple[int, str], ast.Module | None] = {}
    for path in sorted(paths):
        before = _find(trees, base, project, path)
        after = _find(trees, head, project, path)
        if before is None and after is None:
            continue  # no module of the project's on either side
        if before is not None and after is not None and before[1] == after[1]:
            continue
        how = (
            "added"
            if before is None or before[1] is None
            else "removed" if after is None or after[1] is None else "changed"
        )
        out.append(PythonChange(path, (after or before)[0], how))  # type: ignore[index]
    return out


def _find(
    trees: dict[tuple[int, str], ast.Module | None], sources: SourceSet, project: Project, path: str
) -> tuple[str, str | None] | None:
    """(the file, the definition of ``path`` in it, None if it defines none) at the first
    module file of ``path`` that ``sources`` has; None: no such file."""
    for file, name in _candidates(project, path):
        found = _definition(trees, sources, file, name)
        if found != _NO_FILE:
            return file, found
    return None


_NO_FILE = "<no file>"


def _candidates(project: Project, path: str) -> Iterator[tuple[str, str]]:
    """(module file relative to the project root, top-level name in it) for ``path``: the
    longest module prefix first, in each folder of the project's import path."""
    parts = path.split(".")
    root = os.path.realpath(project.root)
    folders = []
    for folder in project.import_path():
        rel = os.path.relpath(folder, root)
        if not rel.startswith(".."):
            folders.append("" if rel == "." else rel.replace(os.sep, "/") + "/")
    for k in range(len(parts) - 1, 0, -1):
        module = "/".join(parts[:k])
        for folder in folders:
            yield f"{folder}{module}.py", parts[k]
            yield f"{folder}{module}/__init__.py", parts[k]


def _definition(
    trees: dict[tuple[int, str], ast.Module | None], sources: SourceSet, file: str, name: str
) -> str | None:
    """The syntax tree of the top-level definition ``name`` in ``file`` as text, with those of
    the module's other top-level names it uses (transitively: a config built from the
    module's specs); None if the file does not define it, ``_NO_FILE`` if there is no such
    file (or it does not parse)."""
    key = (id(sources), file)
    if key not in trees:
        try:
            trees[key] = ast.parse(sources.read(file).text)
        except (SourceError, SyntaxError, ValueError):
            trees[key] = None
    tree = trees[key]
    if tree is None:
        return _NO_FILE
    defined = _top_level(tree)
    if name not in defined:
        return None
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for node in defined[n]:
            todo.extend(x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in defined)
    return "\n".join(ast.dump(node) for n in sorted(seen) for node in defined[n])


def _top_level(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """The module's top-level statements by the names they bind."""
    out: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.asname or a.name.split(".")[0] for a in node.names]
        for n in names:
            out.setdefault(n, []).append(node)
    return out


def text(changes: list[PythonChange]) -> str:
    """The lines ``bcfg diff`` adds for ``changes`` (empty: none)."""
    if not changes:
        return ""
    lines = [
        "\nPython the specs name, changed by content (bcfg compares what the specs say, not "
        "what this code does: review it):",
    ]
    sign = {"changed": "~", "added": "+", "removed": "-"}
    for c in changes:
        lines.append(f"  {sign[c.how]} {c.path}  {c.how}, in {c.file}")
    return "\n".join(lines) + "\n"
