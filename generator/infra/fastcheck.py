"""Fast check: prove ``generated/`` current without torch, lark, jinja2 or black.

A full ``bcfg check`` imports torch (over a second) to regenerate every module
and compare. When nothing changed since the last full run that left the tree
up to date, that work can be skipped. After such a run ``record`` stores, in
the cache (see ``cache``), a hash of every input file (every spec in the spec
folder and every file they import, found by ``import_closure``) and of every
generated file, under a key made of everything else that can change the output:
the project's settings, the generator's fingerprint, and the versions of torch,
black, lark, jinja2 and Python. ``verified`` recomputes those hashes and
answers only if all agree: a changed or new spec, an imported file, a hand edit
of a generated file (header or body), a stale generated file, a different torch
or generator, or a missing cache entry all fall back to the full path.

Specs also resolve names in the allow-listed user modules (``[tool.bcfg]
allow``), whose versions the key cannot hold. ``record`` keeps, for every
module a full run had loaded from such a package, and for every other module
the run loaded from outside the standard library and the installed packages
(a user module's local helpers), the file it came from, as imported and
resolved, and its hash, and for each allowed package the file Python's import
system finds for it, also resolved (``usermodules``). A change to any of them
(a function dropped, a file shadowing the package, the package moved, a
symlink on the way pointed at another version) falls back to the full path,
which reports what the change broke. The caller makes the project importable first
(``Project.make_importable``), so both look where a full run imports from.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import Project
from ..diagnostics import Diagnostic, format_all
from ..sources import MAX_SPEC_BYTES, is_library, read_regular_file, resolved_path
from . import cache
from .usermodules import found_at, loaded_files, module_digest, user_tops
from .write import DOCS, MODULES, Outputs

# Generated modules are read whole to be hashed, up to this size (10,000 patterns take ~5 MB).
MAX_OUTPUT_BYTES = 1 << 30

# An import declaration, generously: `import` then a string, with blanks and
# comments between. It may also match inside strings or comments; that only
# adds files to watch, so it can make the fast path miss, never lie.
_IMPORT = re.compile(r'(?<![A-Za-z0-9_$])import(?:\s|#[^\n]*)*"((?:[^"\\\n]|\\.)*)"')


@dataclass(frozen=True)
class Verified:
    """What a full run printed for the tree it verified."""

    files: int
    warnings: list[list[str]]  # each warning as [plain, coloured]


def _digest(path: Path) -> str | None:
    """The hash of a spec's bytes; None if it is not a regular file (a FIFO is never read)."""
    try:
        return hashlib.sha256(read_regular_file(path, MAX_SPEC_BYTES)).hexdigest()
    except OSError:
        return None


def _unquote(literal: str) -> str | None:
    import ast

    try:
        value = ast.literal_eval(f'"{literal}"')
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def import_closure(specs: list[Path]) -> list[Path]:
    """``specs`` and every file they import, transitively (a superset: see ``_IMPORT``)."""
    seen: dict[Path, None] = {}
    todo = [resolved_path(p) for p in specs]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        try:
            text = read_regular_file(path, MAX_SPEC_BYTES).decode("utf-8-sig", errors="replace")
        except OSError:
            continue
        if "import" not in text:
            continue
        for m in _IMPORT.finditer(text):
            target = _unquote(m.group(1))
            if target and not is_library(target):  # a shipped library is in the fingerprint
                todo.append(resolved_path(path.parent / target))
    return sorted(seen)


def _input_hashes(project: Project, specs: list[Path]) -> dict[str, str | None]:
    return {project.rel(p): _digest(p) for p in import_closure(specs)}


def _output_hashes(project: Project, out_dir: Path) -> dict[str, str | None]:
    """Every file bcfg generated (by its first line) in ``out_dir`` and the docs folder, hashed."""
    out: dict[str, str | None] = {}
    folders = [(out_dir, MODULES)] + ([(project.docs, DOCS)] if project.docs else [])
    for folder, owned in folders:
        for path in owned.files(folder):
            try:
                data = read_regular_file(path, MAX_OUTPUT_BYTES)
            except OSError:
                continue
            out[project.rel(path)] = hashlib.sha256(data).hexdigest()
    return out


def _key(project: Project, specs: list[Path], out_dir: Path) -> str:
    return cache.key(
        "tree",
        str(resolved_path(project.root)),
        project.rel(project.specs),
        str(resolved_path(out_dir)),
        str(resolved_path(project.docs)) if project.docs else None,
        list(project.allow),
        list(project.examples),
        project.import_path(),
        [project.rel(p) for p in specs],
    )


@dataclass(frozen=True)
class Snapshot:
    """What a full run is about to read: the inputs' hashes and the modules already loaded."""

    inputs: dict[str, str | None]
    modules: frozenset[str]


def _tops(project: Project) -> dict[str, list[str | None]]:
    """Each allowed user package: the file an import would load it from, and where that file
    resolves (a symlink on its path pointed elsewhere is another package)."""
    out: dict[str, list[str | None]] = {}
    for top in user_tops(project):
        origin = found_at(top)
        out[top] = [origin, None if origin is None else str(Path(origin).resolve())]
    return out


def _user_modules_unchanged(project: Project, entry: dict) -> bool:
    """The user modules a full run imported would be imported from the same files, resolved
    through the same symlinks, with the same bytes."""
    if entry["tops"] != _tops(project):
        return False
    for imported, (resolved, digest) in entry["modules"].items():
        path = Path(imported)
        if str(path.resolve()) != resolved or module_digest(path) != digest:
            return False
    return True


def verified(project: Project, specs: list[Path], out_dir: Path) -> Verified | None:
    """The record of a full run that found exactly this tree up to date, or None."""
    entry = cache.load("tree", _key(project, specs, out_dir))
    if not isinstance(entry, dict):
        return None
    try:
        if entry["outputs"] != _output_hashes(project, out_dir):
            return None
        if entry["inputs"] != _input_hashes(project, specs):
            return None
        if not _user_modules_unchanged(project, entry):
            return None
        return Verified(len(entry["outputs"]), entry["warnings"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def snapshot(project: Project, specs: list[Path]) -> Snapshot:
    """The hashes of the inputs and the loaded modules, taken before a full run reads them."""
    return Snapshot(_input_hashes(project, specs), frozenset(sys.modules))


def record(
    project: Project,
    specs: list[Path],
    out_dir: Path,
    before: Snapshot,
    outputs: list[Outputs],
    warnings: list[Diagnostic],
    sources: dict[str, str],
) -> None:
    """Remember that the output folders hold exactly ``outputs``, made from the inputs hashed ``before``.

    Nothing is recorded if an input changed while the run was reading them.
    """
    if _input_hashes(project, specs) != before.inputs:
        return
    value = {
        "inputs": before.inputs,
        "tops": _tops(project),
        "modules": loaded_files(project, before.modules),
        "outputs": {
            project.rel(o.out_dir / name): hashlib.sha256(text.encode("utf-8")).hexdigest()
            for o in outputs
            for name, text in sorted(o.files.items())
        },
        "warnings": [
            [plain, colored]
            for plain, colored in zip(
                format_all(warnings, sources, color=False),
                format_all(warnings, sources, color=True),
            )
        ],
    }
    cache.store("tree", _key(project, specs, out_dir), value)
