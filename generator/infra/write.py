"""Write: put generated files in place, or compare them with what is there.

Every file of a run is rendered in memory before anything is written, so a run
with an error writes nothing. Each file is written to a temporary file in the
same folder and renamed over the old one, so a killed run leaves every file
either old or new; a file whose content is unchanged is not touched. Files that
carry bcfg's header but no longer come from any spec are removed. One
``Outputs`` is one folder bcfg owns files in: ``generated/`` (``*.py``) or the
docs folder (``README.md``, ``index.html``, ``backends/*.md``), each kind of
file recognised by the first line bcfg writes into it.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..emit.header import DOCS_MARK, HEADER_MARK


@dataclass(frozen=True)
class Owned:
    """The files bcfg owns in a folder: those matching ``globs`` whose first line starts with ``mark``."""

    globs: tuple[str, ...]
    mark: str

    def files(self, folder: Path) -> list[Path]:
        """The files of ``folder`` bcfg wrote, sorted."""
        if not folder.is_dir():
            return []
        found = {p for g in self.globs for p in folder.glob(g) if p.is_file()}
        return sorted(p for p in found if _first_line(p).startswith(self.mark))


MODULES = Owned(("*.py",), HEADER_MARK)
DOCS = Owned(("README.md", "index.html", "backends/*.md"), DOCS_MARK)


@dataclass(frozen=True)
class Outputs:
    """The complete intended content of an output folder (``full``) or part of it."""

    out_dir: Path
    files: dict[str, str]  # path relative to out_dir (POSIX) -> content
    full: bool
    owned: Owned = MODULES

    def foreign(self) -> list[Path]:
        """Files this run would overwrite that bcfg did not write (no mark on their first line)."""
        out = []
        for name in sorted(self.files):
            path = self.out_dir / name
            if path.exists() and not _first_line(path).startswith(self.owned.mark):
                out.append(path)
        return out


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline()
    except OSError:
        return ""


def _stale(outputs: Outputs) -> list[Path]:
    if not outputs.full:
        return []
    return [
        p
        for p in outputs.owned.files(outputs.out_dir)
        if p.relative_to(outputs.out_dir).as_posix() not in outputs.files
    ]


def atomic_write(path: Path, content: str, durable: bool = True) -> None:
    """Write ``content`` to a temporary file beside ``path`` and rename it over ``path``.

    A reader sees the old file or the new one, never part of one. ``durable``
    also flushes the data to disk before the rename (a cache entry need not be).
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write_outputs(outputs: Outputs) -> tuple[list[Path], list[Path]]:
    """Write changed files, remove stale ones; return (written, removed)."""
    outputs.out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in sorted(outputs.files.items()):
        path = outputs.out_dir / name
        if _read(path) != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, content)
            written.append(path)
    removed = _stale(outputs)
    for p in removed:
        p.unlink()
    # Temporary files of a run that was killed before its rename: never modules, safe to drop.
    for name in outputs.files:
        path = outputs.out_dir / name
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            tmp.unlink(missing_ok=True)
    return written, removed


def diff_outputs(outputs: Outputs, label: Callable[[Path], str]) -> list[str]:
    """Unified diffs between what is on disk and what would be generated (no writes)."""
    diffs = []
    for name, content in sorted(outputs.files.items()):
        path = outputs.out_dir / name
        old = _read(path)
        if old == content:
            continue
        rel = label(path)
        if old is None:
            diffs.append(f"--- {rel} (missing)\n+++ {rel} (generated)\n@@ missing file: {rel} @@\n")
            continue
        diffs.append(
            "".join(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    content.splitlines(keepends=True),
                    f"{rel} (on disk)",
                    f"{rel} (generated)",
                )
            )
        )
    for p in _stale(outputs):
        diffs.append(
            f"--- {label(p)} (on disk)\n+++ /dev/null\n@@ stale: no spec generates {label(p)} @@\n"
        )
    return diffs
