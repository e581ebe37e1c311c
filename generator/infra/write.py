"""Write: put generated files in place, or compare them with what is there.

Every file of a run is rendered in memory before anything is written, so a run
with an error writes nothing. Each file is written to a temporary file in the
same folder and renamed over the old one, so a killed run leaves every file
either old or new; a file whose content is unchanged is not touched. Files that
carry bcfg's header but no longer come from any spec are removed.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..emit.header import HEADER_MARK


@dataclass(frozen=True)
class Outputs:
    """The complete intended content of the output folder (``full``) or part of it."""

    out_dir: Path
    files: dict[str, str]  # file name in out_dir -> content
    full: bool


def _stale(outputs: Outputs) -> list[Path]:
    if not outputs.full or not outputs.out_dir.is_dir():
        return []
    stale = []
    for p in sorted(outputs.out_dir.glob("*.py")):
        if p.name in outputs.files:
            continue
        try:
            with p.open(encoding="utf-8", errors="replace") as fh:
                first = fh.readline()
        except OSError:
            continue
        if first.startswith(HEADER_MARK):
            stale.append(p)
    return stale


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
            atomic_write(path, content)
            written.append(path)
    removed = _stale(outputs)
    for p in removed:
        p.unlink()
    # Temporary files of a run that was killed before its rename: never modules, safe to drop.
    for name in outputs.files:
        for tmp in outputs.out_dir.glob(f".{name}.*.tmp"):
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
