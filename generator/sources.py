"""Sources: where spec text comes from, and the spans that point back into it.

Every stage after this one works on ``Source`` values, never on the file
system, so the same compiler resolves specs on disk (``FileSources``), unsaved
editor buffers laid over them (``MemorySources``) or specs at a git revision.
A source is named by its *display name*: the path relative to the project root
in POSIX form (``specs/common.bcfg``), which is also what spans and messages
say. Imports are resolved by the source set, relative to the importing file.

Standard library only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .resources import library_path

# A spec larger than this is refused with a clear error rather than parsed for
# minutes; torch's eight backends together take about 30 kB.
MAX_SPEC_BYTES = 1 << 20


@dataclass(frozen=True)
class Span:
    """Where a node was read from: 1-based line and column, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Source:
    """The text of one spec, by display name; ``digest`` is the sha256 of its UTF-8 bytes."""

    name: str
    text: str
    digest: str

    @classmethod
    def of(cls, name: str, text: str) -> Source:
        """A source of ``text``, its line ends made ``\\n`` (CR, CRLF and LF all end a line)."""
        text = normalize_newlines(text)
        return cls(name, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


def normalize_newlines(text: str) -> str:
    """``text`` with CRLF and lone CR line ends made LF, as every stage after this one expects."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


# `import "bcfg:torch"` names a library shipped inside bcfg, not a file of the project.
LIBRARY_SCHEME = "bcfg:"


def is_library(name: str) -> bool:
    """Whether ``name`` (an import target or a display name) is one of bcfg's libraries."""
    return name.startswith(LIBRARY_SCHEME)


def read_library(name: str) -> Source:
    """The text of the library ``bcfg:<stem>``; ``SourceError`` if bcfg ships no such library."""
    path = library_path(name.removeprefix(LIBRARY_SCHEME))
    if path is None:
        raise SourceError(f"cannot read {name}: bcfg ships no such library")
    return Source.of(name, path.read_text(encoding="utf-8"))


def resolve_library(target: str) -> str | None:
    """The display name of the library ``import "bcfg:<stem>"`` means, or None if there is none."""
    return target if library_path(target.removeprefix(LIBRARY_SCHEME)) is not None else None


class SourceError(Exception):
    """A source could not be read: ``message`` says why, ``span`` where (if anywhere)."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.text: str | None = None  # what could be decoded, for an excerpt


class SourceSet(Protocol):
    """Where the compiler reads specs from."""

    def read(self, name: str) -> Source:
        """The source called ``name``; raises ``SourceError`` if it cannot be read."""
        ...

    def resolve_import(self, importer: str, target: str) -> str | None:
        """The name of the file ``import "target"`` in ``importer`` means, or None if there is none."""
        ...

    def siblings(self, name: str) -> list[str] | None:
        """Every spec beside ``name`` (its folder's ``*.bcfg``), or None if that cannot be told."""
        ...


def decode(data: bytes, name: str, size: int | None = None, more: bool = False) -> str:
    """Spec bytes as text: UTF-8 (a BOM is dropped); bad bytes, NULs and huge files are errors.

    ``size`` is the file's full size when ``data`` was cut short at the limit (``more``: at
    least that size, where counting stopped).
    """
    if len(data) > MAX_SPEC_BYTES:
        amount = f"{'over ' if more else ''}{(size or len(data)) / (1 << 20):.1f} MB"
        raise SourceError(
            f"the file is {amount}; bcfg reads specs of at most {MAX_SPEC_BYTES >> 20} MB",
            Span(name, 1, 1, 1, 1),
            "split it into several files joined with 'import'",
        )
    try:
        text = normalize_newlines(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        before = normalize_newlines(data[: exc.start].decode("utf-8-sig", "replace"))
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        err = SourceError(
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
            Span(name, line, col, line, col + 1),
            "save the spec as UTF-8",
        )
        err.text = normalize_newlines(data.decode("utf-8-sig", "replace"))
        raise err from None
    nul = text.find("\0")
    if nul >= 0:
        err = SourceError("the file contains a NUL byte", offset_span(text, nul, name), "remove it")
        err.text = text
        raise err
    return text


def offset_span(text: str, pos: int, file: str) -> Span:
    """A one-character span at string offset ``pos`` of ``text``."""
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return Span(file, line, column, line, column + 1)


def display_name(path: Path, root: Path) -> str:
    """How messages and spans name a file: relative to ``root`` in POSIX form, else absolute.

    The name is the same whatever the locale: file names are read as UTF-8
    (bytes that are not stay escaped, as Python escapes them), never in the
    locale's encoding, so generated headers do not change with ``LANG``. A
    symbolic link loop is named as written, not resolved.
    """
    resolved = resolved_path(path)
    try:
        shown = resolved.relative_to(resolved_path(root)).as_posix()
    except ValueError:
        shown = resolved.as_posix()
    return os.fsencode(shown).decode("utf-8", "surrogateescape")


def resolved_path(path: Path) -> Path:
    """``path.resolve()``, or the absolute path as written where a symbolic link loop stops it."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symbolic link loop
        return Path(os.path.abspath(path))


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, escaped as surrogates
        return False
    return True


def os_name(name: str) -> str:
    """The file-system spelling of a display name (the inverse of ``display_name``'s decoding)."""
    return os.fsdecode(name.encode("utf-8", "surrogateescape"))


class FileSources:
    """Specs on disk, named relative to ``root`` (or by absolute path outside it)."""

    def __init__(self, root: Path):
        self.root = root
        self._resolved_root = resolved_path(root)

    def name(self, path: Path) -> str:
        """The display name of ``path``."""
        return display_name(path, self._resolved_root)

    def path(self, name: str) -> Path:
        local = os_name(name)
        return Path(local) if posixpath.isabs(local) else self.root / local

    def read(self, name: str) -> Source:
        if is_library(name):
            return read_library(name)
        if not _is_utf8(name):
            raise SourceError(
                f"cannot read {name}: its file name is not valid UTF-8",
                hint="rename it: spec names are written into generated files, which are UTF-8",
            )
        path = self.path(name)
        try:
            data = read_regular_file(path, MAX_SPEC_BYTES)
            size = path.stat().st_size if len(data) > MAX_SPEC_BYTES else None
        except OSError as exc:
            raise SourceError(f"cannot read {name}: {exc.strerror or exc}") from None
        return Source.of(name, decode(data, name, size))

    def resolve_import(self, importer: str, target: str) -> str | None:
        """The file ``target`` names, if there is anything there (reading it says what is wrong)."""
        if is_library(target):
            return resolve_library(target)
        candidate = self.path(importer).parent / os_name(target)
        try:
            found = candidate.exists() or candidate.is_symlink()
        except (OSError, ValueError):
            found = False
        return self.name(candidate) if found else None

    def siblings(self, name: str) -> list[str] | None:
        if is_library(name):
            return None
        try:
            return sorted(self.name(p) for p in self.path(name).parent.glob("*.bcfg"))
        except OSError:
            return None


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, which must be a regular file; at most ``limit`` + 1 bytes are read.

    A FIFO, device or folder is refused before it is opened for reading, so
    reading can neither block nor grow without bound.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise OSError(0, f"it is {kind}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class MemorySources:
    """Texts held in memory (editor buffers, a spec being imported), over an optional fallback."""

    def __init__(self, texts: dict[str, str], fallback: SourceSet | None = None):
        self.texts = dict(texts)
        self.fallback = fallback

    def read(self, name: str) -> Source:
        if name in self.texts:
            return Source.of(name, self.texts[name])
        if is_library(name):
            return read_library(name)
        if self.fallback is None:
            raise SourceError(f"cannot read {name}: no such file")
        return self.fallback.read(name)

    def resolve_import(self, importer: str, target: str) -> str | None:
        if is_library(target):
            return resolve_library(target)
        name = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target))
        if name in self.texts:
            return name
        if self.fallback is None:
            return None
        return self.fallback.resolve_import(importer, target)

    def siblings(self, name: str) -> list[str] | None:
        if is_library(name):
            return None
        folder = posixpath.dirname(name)
        here = {n for n in self.texts if posixpath.dirname(n) == folder and n.endswith(".bcfg")}
        if self.fallback is None:
            return sorted(here)
        more = self.fallback.siblings(name)
        return None if more is None else sorted(here | set(more))


class GitError(Exception):
    """git could not answer: not a repository, an unknown revision, no git at all. One line."""


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """The output of ``git <args>`` run in ``cwd``; GitError with git's own first line if it fails."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=stdin,
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(lines[0].removeprefix("fatal: ") if lines else f"git {args[0]} failed")
    return done.stdout


class GitSources:
    """Specs as they are at a git revision, read with ``git ls-tree`` and ``git cat-file``.

    Names are the ones the working tree has (relative to the project ``root``,
    which may be a folder inside the repository), so spans, origins and
    messages read the same at every revision. Nothing is checked out.
    """

    def __init__(self, root: Path, revision: str):
        self.root = root
        self.revision = revision
        self.prefix = git(root, "rev-parse", "--show-prefix").decode().strip()
        try:
            found = git(
                root,
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{revision}^{{commit}}",
            )
        except GitError:
            if revision == "HEAD" and _no_commits(root):
                raise GitError(
                    "this repository has no commits yet: commit the specs, then bcfg diff "
                    "compares the working tree with them"
                ) from None
            raise GitError(f"unknown revision '{revision}'") from None
        self.commit = found.decode().strip()
        self._folders: dict[str, dict[str, str]] = {}  # folder -> {file name: blob id}
        self._texts: dict[str, bytes] = {}

    def _listing(self, folder: str) -> dict[str, str]:
        """The regular files directly in ``folder`` (a project-relative name) at the revision."""
        if folder not in self._folders:
            path = posixpath.normpath(posixpath.join(self.prefix, folder))
            entries: dict[str, str] = {}
            if not path.startswith("../") and path != "..":
                tree = f"{self.commit}:{'' if path == '.' else path}"
                try:
                    out = git(self.root, "ls-tree", "-z", "--full-tree", "--end-of-options", tree)
                except GitError:
                    out = b""  # no such folder at this revision
                for record in out.split(b"\0"):
                    meta, _, name = record.partition(b"\t")
                    mode, kind, oid = (meta.split(b" ") + [b"", b"", b""])[:3]
                    if kind == b"blob" and mode in (b"100644", b"100755"):
                        entries[name.decode("utf-8", "surrogateescape")] = oid.decode()
            self._folders[folder] = entries
        return self._folders[folder]

    def _blob(self, name: str) -> str | None:
        if posixpath.isabs(name):  # a file outside the project, named as FileSources names it
            name = Path(os.path.relpath(name, self.root.resolve())).as_posix()
        folder, _, base = posixpath.normpath(name).rpartition("/")
        return self._listing(folder or ".").get(base)

    def spec_names(self, folder: str) -> list[str]:
        """Every ``*.bcfg`` directly in ``folder`` at the revision, read ahead in one git call."""
        listing = self._listing(folder)
        names = sorted(n for n in listing if n.endswith(".bcfg"))
        self._read_ahead([listing[n] for n in names])
        prefix = "" if folder == "." else folder.rstrip("/") + "/"
        return [prefix + n for n in names]

    def _read_ahead(self, oids: list[str]) -> None:
        todo = [oid for oid in oids if oid not in self._texts]
        if not todo:
            return
        out = git(self.root, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in todo).encode())
        pos = 0
        for oid in todo:
            end = out.index(b"\n", pos)
            size = int(out[pos:end].split()[2])
            self._texts[oid] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1

    def read(self, name: str) -> Source:
        oid = self._blob(name)
        if oid is None:
            raise SourceError(f"cannot read {name} at {self.revision}: no such file")
        self._read_ahead([oid])
        data = self._texts[oid]
        return Source.of(name, decode(data[: MAX_SPEC_BYTES + 1], name, len(data)))

    def resolve_import(self, importer: str, target: str) -> str | None:
        name = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target))
        if self._blob(name) is None:
            return None
        return display_name(self.root / name, self.root)  # as on disk: absolute outside the project

    def siblings(self, name: str) -> list[str] | None:
        folder = posixpath.dirname(posixpath.normpath(name)) or "."
        return self.spec_names(folder)


def _no_commits(root: Path) -> bool:
    """The repository at ``root`` exists but has no commit (``HEAD`` names an unborn branch)."""
    try:
        git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    except GitError:
        try:
            git(root, "rev-parse", "--git-dir")
        except GitError:
            return False
        return True
    return False
