"""Write: put a run's generated files in place as one set, or compare them with what is there.

Every file of a run is rendered in memory before anything is written, so a run
with a spec error writes nothing. Writing then goes in two phases, under a
lock on the output folder (two runs on one project take turns):

1. every changed file is written to a temporary file beside its target
   (``.x.py.<random>.tmp``) and flushed to disk. If any write fails (a full
   disk, a read-only folder), the temporaries are removed and the old set is
   left exactly as it was: ``OutputError``, nothing changed.
2. a journal (``.bcfg-pending.json``) lists the renames and removals; then each
   temporary is renamed over its target (modules first, ``__init__.py`` last,
   so the package never imports a module that is not there yet) and stale
   modules are removed; then the journal goes. A run killed in this phase
   leaves every file old or new, never partial, and the next run finishes the
   journal's work before its own (``_recover``).

A file whose content is unchanged is not touched. A file that is replaced
keeps its mode; a new file gets the mode the umask gives (as ``open`` would).
Files that carry bcfg's mark but no longer come from any spec are removed.
Nothing here follows a FIFO or a device: targets that are not regular files are
refused before anything is written, and reads are bounded.

One ``Outputs`` is one folder bcfg owns files in: ``generated/`` (``*.py``, and
the PT2E runtime's ``_bcfg_pt2e/*.py``) or the docs folder (``README.md``, ``index.html``, ``backends/*.md``), each kind
of file recognised by the mark on the first line bcfg writes into it
(``Owned``). ``write_all`` writes a run's folders together: every temporary of
every folder first, then each folder's renames, so a failure anywhere before
the renames changes nothing.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..escape import terminal
from ..sources import read_regular_file
from .header import DOCS_MARK, HEADER_MARK, edited_by_hand

JOURNAL = ".bcfg-pending.json"
_TEMP = re.compile(r"\.(?P<name>[^/]+)\.[0-9a-f]{16}\.tmp")
Label = Callable[[Path], str]


class OutputError(Exception):
    """The output could not be written; the message says what and that nothing changed."""


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
        return sorted(p for p in found if _has_mark(p, self.mark))

    def folders(self, out_dir: Path) -> list[Path]:
        """``out_dir`` and the sub-folders its globs name (where temporaries can be left)."""
        subs = {Path(g).parent for g in self.globs if Path(g).parent != Path(".")}
        return [out_dir, *(out_dir / s for s in sorted(subs))]


# Generated modules, and the PT2E runtime's package beside quantizers
# (semantics.model.RUNTIME_MODULE; a test keeps the two names the same).
MODULES = Owned(("*.py", "_bcfg_pt2e/*.py"), HEADER_MARK)
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
            if path.exists() and not _has_mark(path, self.owned.mark):
                out.append(path)
        return out


def _read(path: Path, limit: int) -> str | None:
    """The text of a regular file of at most ``limit`` bytes (more reads as None, never hangs)."""
    try:
        data = read_regular_file(path, limit)
    except OSError:
        return None
    if len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _has_mark(path: Path, mark: str) -> bool:
    """Whether ``path`` is a regular file that starts with ``mark`` (a bounded read)."""
    try:
        head = read_regular_file(path, len(mark.encode()))
    except OSError:
        return False
    return head.startswith(mark.encode())


def _stale(outputs: Outputs) -> list[Path]:
    if not outputs.full:
        return []
    return [
        p
        for p in outputs.owned.files(outputs.out_dir)
        if p.relative_to(outputs.out_dir).as_posix() not in outputs.files
    ]


def _mode_of(path: Path) -> int | None:
    """The permission bits of an existing regular file at ``path``, else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def write_temporary(path: Path, data: bytes, durable: bool = True) -> Path:
    """Write ``data`` to a new temporary file beside ``path``; return its path.

    The temporary gets ``path``'s mode if ``path`` exists, else what the umask
    gives a new file. ``durable`` flushes it to disk. On failure nothing is left.
    """
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    mode = _mode_of(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write(path: Path, content: str, durable: bool = True) -> None:
    """Write ``content`` to a temporary file beside ``path`` and rename it over ``path``.

    A reader sees the old file or the new one, never part of one; the file keeps
    its mode. ``durable`` also flushes the data to disk before the rename (a
    cache entry need not be).
    """
    tmp = write_temporary(path, content.encode("utf-8"), durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def prepare_out_dir(out_dir: Path, label: Label) -> None:
    """Make sure ``out_dir`` is a folder bcfg can write into; OutputError says why not."""
    if out_dir.is_symlink() and not out_dir.exists():
        shown = f"{label(out_dir.parent).rstrip('/')}/{out_dir.name}"
        raise OutputError(
            f"{shown} is a symbolic link to {os.readlink(out_dir)}, which does not exist; "
            "create the folder it points to or remove the link"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(
            f"{label(out_dir)} is not a folder; set [tool.bcfg] out (or --out) to a folder"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {label(out_dir)}: {_why(exc)}") from None


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out_dir`` (the folder itself: no lock file is left behind).

    Two runs writing one folder take turns. Where locks are not supported
    (no ``fcntl``, a file system that refuses them) the run goes on unlocked.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _check_targets(outputs: Outputs, label: Label) -> None:
    """Refuse targets that are not regular files (a folder, a FIFO) before anything is written."""
    for name in sorted(outputs.files):
        path = outputs.out_dir / name
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OutputError(f"cannot write {label(path)}: {_why(exc)}") from None
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise OutputError(
                f"cannot write {label(path)}: it is {kind}; move it away and run again"
            )


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _recover(out_dir: Path, owned: Owned) -> None:
    """Finish what a killed run's journal lists, then drop stray temporary files of bcfg's."""
    journal = out_dir / JOURNAL
    data = _read(journal, 1 << 24)
    if data is not None:
        with contextlib.suppress(ValueError, TypeError, KeyError, OSError):
            entry = json.loads(data)
            for tmp, name in entry["renames"]:
                if _inside(tmp) and _inside(name) and _TEMP.fullmatch(tmp.rpartition("/")[2]):
                    with contextlib.suppress(FileNotFoundError):
                        os.replace(out_dir / tmp, out_dir / name)
            for name in entry["remove"]:
                if _inside(name) and _has_mark(out_dir / name, owned.mark):
                    (out_dir / name).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        journal.unlink(missing_ok=True)
    for folder in owned.folders(out_dir):
        with contextlib.suppress(OSError):
            for entry_name in os.listdir(folder):
                found = _TEMP.fullmatch(entry_name)
                if found and any(
                    Path(found.group("name")).match(Path(g).name) for g in owned.globs
                ):
                    (folder / entry_name).unlink(missing_ok=True)


def _inside(name: object) -> bool:
    """A relative POSIX path that stays inside the folder (no ``..``, not absolute)."""
    if not isinstance(name, str) or not name or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def write_outputs(outputs: Outputs, label: Label = str) -> tuple[list[Path], list[Path]]:
    """Write one folder's changed files and remove its stale ones, as one set (see ``write_all``)."""
    return write_all([outputs], label)


def write_all(outputs: list[Outputs], label: Label = str) -> tuple[list[Path], list[Path]]:
    """Write the changed files of every folder and remove stale ones; return (written, removed).

    Before anything is written: every output folder is made sure of, every
    target must be a regular file or absent, and no docs file bcfg did not
    write (without its mark) may be overwritten. Then every changed file of every
    folder goes to a temporary; only when all are written do the renames
    start. Raises OutputError, with every file as it was, if the set cannot be
    written.
    """
    for o in outputs:
        prepare_out_dir(o.out_dir, label)
        _check_targets(o, label)
        # A docs/ folder often holds a project's own README.md or index.html.
        foreign = o.foreign() if o.owned is DOCS else []
        if foreign:
            raise OutputError(
                f"{label(foreign[0])} was not written by bcfg (its first line is not bcfg's mark); "
                "move it away, or set [tool.bcfg] docs to another folder, or to false for no docs"
            )
    with contextlib.ExitStack() as stack:
        for out_dir in sorted({o.out_dir.resolve() for o in outputs}):
            stack.enter_context(locked(out_dir))
        for o in outputs:
            _recover(o.out_dir, o.owned)
        plans = [_plan(o) for o in outputs]
        temps: list[dict[str, Path]] = []
        try:
            for o, order, changed in plans:
                temps.append(_write_all(o.out_dir, order, changed, label))
        except BaseException:
            for written_temps in temps:
                for tmp in written_temps.values():
                    tmp.unlink(missing_ok=True)
            raise
        written: list[Path] = []
        removed: list[Path] = []
        for (o, order, _), folder_temps in zip(plans, temps):
            stale = _stale(o)
            _commit(o.out_dir, [(folder_temps[n], n) for n in order], stale, label)
            written += [o.out_dir / n for n in order]
            removed += stale
    return written, removed


def _plan(outputs: Outputs) -> tuple[Outputs, list[str], dict[str, bytes]]:
    """The files of ``outputs`` that change, in the order they are renamed."""
    out_dir = outputs.out_dir
    changed = {
        name: content.encode("utf-8")
        for name, content in sorted(outputs.files.items())
        if _read(out_dir / name, len(content.encode("utf-8"))) != content
    }
    # Modules first, the package's __init__.py last: it never imports a missing module.
    order = sorted(changed, key=lambda n: (n == "__init__.py", n))
    return outputs, order, changed


def _write_all(
    out_dir: Path, order: list[str], data: dict[str, bytes], label: Label
) -> dict[str, Path]:
    """Phase 1: every file to its temporary; on any failure none is left and OutputError says why."""
    temps: dict[str, Path] = {}
    current = out_dir
    try:
        for name in order:
            current = out_dir / name
            current.parent.mkdir(parents=True, exist_ok=True)
            temps[name] = write_temporary(current, data[name])
    except BaseException as exc:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(
                f"cannot write {label(current)}: {_why(exc)}; nothing was changed"
            ) from None
        raise
    return temps


def _commit(
    out_dir: Path, renames: list[tuple[Path, str]], removed: list[Path], label: Label
) -> None:
    """Phase 2: the journal, the renames and removals, the journal's removal."""
    if not renames and not removed:
        return

    def rel(path: Path) -> str:
        return path.relative_to(out_dir).as_posix()

    journal = {
        "renames": [[rel(t), n] for t, n in renames],
        "remove": [rel(p) for p in removed],
    }
    try:
        atomic_write(out_dir / JOURNAL, json.dumps(journal))
    except OSError as exc:
        for tmp, _ in renames:
            tmp.unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {label(out_dir / JOURNAL)}: {_why(exc)}; nothing was changed"
        ) from None
    try:
        for tmp, name in renames:
            os.replace(tmp, out_dir / name)
        for path in removed:
            path.unlink(missing_ok=True)
        _prune({p.parent for p in removed} - {out_dir})
    except OSError as exc:
        # The journal stays: the next run finishes this set before writing its own.
        raise OutputError(
            f"cannot finish writing {label(out_dir)}: {_why(exc)}; "
            f"run bcfg generate again to complete it"
        ) from None
    _fsync_dir(out_dir)
    (out_dir / JOURNAL).unlink(missing_ok=True)


def _prune(folders: set[Path]) -> None:
    """Remove the sub-folders the removals emptied (a runtime package no quantizer needs)."""
    for folder in sorted(folders, reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty: a __pycache__ or a file of yours keeps it


def hand_edited(outputs: Outputs) -> list[Path]:
    """The files on disk that differ from what would be generated and were edited after bcfg wrote them."""
    out = []
    for name, content in sorted(outputs.files.items()):
        old = _read(outputs.out_dir / name, max(1 << 20, 4 * len(content)))
        if old is not None and old != content and edited_by_hand(old):
            out.append(outputs.out_dir / name)
    return out


# Diff lines longer than this are cut (docs/index.html holds whole tables on one line).
DIFF_LINE_LIMIT = 400


def _clipped(line: str) -> str:
    """A diff line for a terminal: what a file on disk holds shown, never run (``escape.terminal``),
    cut to ``DIFF_LINE_LIMIT`` characters with how much was left out."""
    end = "\n" if line.endswith("\n") else ""
    body = terminal(line.removesuffix("\n"))
    if len(body) <= DIFF_LINE_LIMIT:
        return body + end
    return f"{body[:DIFF_LINE_LIMIT]}… ({len(body) - DIFF_LINE_LIMIT:,} more characters)\n"


def diff_outputs(outputs: Outputs, label: Label) -> list[str]:
    """Unified diffs between what is on disk and what would be generated (no writes)."""
    diffs = []
    for name, content in sorted(outputs.files.items()):
        path = outputs.out_dir / name
        old = _read(path, max(1 << 20, 4 * len(content)))
        if old == content:
            continue
        rel = terminal(label(path))
        if old is None:
            diffs.append(f"--- {rel} (missing)\n+++ {rel} (generated)\n@@ missing file: {rel} @@\n")
            continue
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            content.splitlines(keepends=True),
            f"{rel} (on disk)",
            f"{rel} (generated)",
        )
        diffs.append("".join(_clipped(line) for line in lines))
    for p in _stale(outputs):
        rel = terminal(label(p))
        diffs.append(f"--- {rel} (on disk)\n+++ /dev/null\n@@ stale: no spec generates {rel} @@\n")
    return diffs
