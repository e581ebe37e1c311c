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
        raise too_large(name, size or len(data), more)
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


def too_large(name: str, size: int, more: bool = False) -> SourceError:
    """The error for a spec of ``size`` bytes, over the limit (``more``: at least that many)."""
    amount = f"{'over ' if more else ''}{size / (1 << 20):.1f} MB"
    return SourceError(
        f"the file is {amount}; bcfg reads specs of at most {MAX_SPEC_BYTES >> 20} MB",
        Span(name, 1, 1, 1, 1),
        "split it into several files joined with 'import'",
    )


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


# git never reaches for the network on bcfg's behalf: a partial clone missing an object is
# told so, never made to fetch it (and no credential prompt can hang a run).
GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": "bcfg-never-fetches",  # no transport at all: file, ssh, https, ...
    "GIT_NO_LAZY_FETCH": "1",  # git 2.45 and later: missing objects are missing
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
}


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
            env={**os.environ, **GIT_ENV},
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(lines[0].removeprefix("fatal: ") if lines else f"git {args[0]} failed")
    return done.stdout


# How many symbolic links one path may pass through (the kernel's own limit, ELOOP).
MAX_LINKS = 40
_TREE, _LINK = b"040000", b"120000"


@dataclass(frozen=True)
class _Found:
    """What a path names at a revision: ``path`` (repository-relative, links followed), and the
    blob there (None: nothing there; ``outside``: outside the repository, read from disk)."""

    path: str
    oid: str | None = None
    outside: Path | None = None
    loop: bool = False
    folder: bool = False  # a folder (or a submodule's, which is not read at a revision)


class GitSources:
    """Specs as they are at a git revision, read with ``git ls-tree`` and ``git cat-file``.

    Names are the ones the working tree has (relative to the project ``root``,
    which may be a folder inside the repository), so spans, origins and
    messages read the same at every revision. Nothing is checked out, and git
    never fetches (``GIT_ENV``): an object a partial clone lacks, or that cannot
    be read, is an error naming the spec.

    What ``bcfg check`` sees on disk is what is seen at the revision: symbolic
    links (to files or folders, inside the repository or out of it, where the
    file on disk is read) are followed as the kernel follows them, and a spec
    is named by where its links lead; a spec too large is refused from its size
    without reading it.
    """

    def __init__(self, root: Path, revision: str):
        self.root = root
        self.revision = revision
        top, prefix = git(root, "rev-parse", "--show-toplevel", "--show-prefix").split(b"\n")[:2]
        self.toplevel = Path(os.fsdecode(top))
        self.prefix = prefix.decode("utf-8", "surrogateescape")  # the project's folder: "proj/"
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
        self._trees: dict[str, dict[str, tuple[bytes, str]]] = {}  # oid -> {name: (mode, oid)}
        self._sizes: dict[str, int | None] = {}  # blob oid -> size (None: git does not have it)
        self._texts: dict[str, bytes] = {}

    # ------------------------------------------------------------ paths

    def _repo_path(self, name: str) -> str | None:
        """The repository-relative path of a display name; None if it is outside the repository."""
        local = os_name(name)
        if posixpath.isabs(local):
            try:
                rel = Path(os.path.normpath(local)).relative_to(self.toplevel)
            except ValueError:
                return None
            return (
                ""
                if rel == Path(".")
                else os.fsencode(rel.as_posix()).decode("utf-8", "surrogateescape")
            )
        return posixpath.join(self.prefix, name)

    def _display(self, path: str) -> str:
        """How messages name the repository path ``path`` (as ``FileSources`` names it on disk)."""
        if path.startswith(self.prefix):
            return path[len(self.prefix) :]
        return display_name(self.toplevel / os_name(path), self.root)

    def _tree(self, oid: str, shown: str) -> dict[str, tuple[bytes, str]]:
        """The entries of the tree ``oid``; GitError if git cannot read it."""
        if oid not in self._trees:
            try:
                out = git(self.root, "ls-tree", "-z", "--full-tree", "--end-of-options", oid)
            except GitError as exc:
                raise GitError(_unreadable(shown, self.revision, oid, str(exc))) from None
            entries: dict[str, tuple[bytes, str]] = {}
            for record in out.split(b"\0"):
                meta, _, name = record.partition(b"\t")
                mode, _, rest = meta.partition(b" ")
                oid_ = rest.partition(b" ")[2].decode("ascii", "replace")
                if name:
                    entries[name.decode("utf-8", "surrogateescape")] = (mode, oid_)
            self._trees[oid] = entries
        return self._trees[oid]

    def _lookup(self, path: str) -> _Found:
        """Follow ``path`` from the revision's root tree, each symbolic link as the kernel would."""
        todo = [p for p in path.split("/") if p not in ("", ".")]
        done: list[str] = []
        links = 0
        tree = f"{self.commit}^{{tree}}"
        trees = [tree]  # the tree of each folder in ``done``, the root first
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not done:  # above the repository: on disk, as the link says
                    rest = posixpath.join(*todo) if todo else ""
                    return _Found(path, outside=Path(os.path.normpath(self.toplevel.parent / rest)))
                done.pop()
                trees.pop()
                continue
            entry = self._tree(trees[-1], "/".join(done) or ".").get(part)
            if entry is None:
                return _Found("/".join([*done, part, *todo]))
            mode, oid = entry
            if mode == _LINK:
                links += 1
                target = self._link_target(oid, "/".join([*done, part]))
                if links > MAX_LINKS or target is None:
                    return _Found("/".join([*done, part, *todo]), loop=links > MAX_LINKS)
                if target.startswith("/"):
                    inside = self._repo_path(target)
                    if inside is None:
                        beyond = os.path.join(target, *todo)
                        return _Found(path, outside=Path(os.path.normpath(beyond)))
                    done, trees = [], [tree]
                    todo = [p for p in inside.split("/") if p] + todo
                else:
                    todo = target.split("/") + todo
                continue
            if mode == _TREE:
                done.append(part)
                trees.append(oid)
                continue
            if todo:  # a file used as a folder
                return _Found("/".join([*done, part, *todo]))
            if mode in (b"100644", b"100755"):
                return _Found("/".join([*done, part]), oid)
            return _Found("/".join([*done, part]), folder=mode == b"160000")
        return _Found("/".join(done), folder=True)

    def _link_target(self, oid: str, shown: str) -> str | None:
        self._read_ahead([oid], shown)
        data = self._texts.get(oid)
        if data is None or len(data) > 4096 or b"\0" in data:
            return None
        return data.decode("utf-8", "surrogateescape")

    # ------------------------------------------------------------ objects

    def _read_ahead(self, oids: list[str], shown: str) -> None:
        """Find the size of every blob of ``oids`` and read the ones small enough to be specs."""
        todo = [oid for oid in dict.fromkeys(oids) if oid not in self._sizes]
        if todo:
            try:
                out = git(self.root, "cat-file", "--batch-check", stdin=_lines(todo))
                for line in out.decode("ascii", "replace").splitlines():
                    oid, _, rest = line.partition(" ")
                    kind, _, size = rest.partition(" ")
                    self._sizes[oid] = int(size) if kind == "blob" and size.isdigit() else None
            except GitError:  # a partial clone that cannot fetch: find which ones it lacks
                for oid in todo:
                    self._sizes[oid] = self._size_of(oid)
        small = [
            o
            for o in dict.fromkeys(oids)
            if o not in self._texts
            and (self._sizes.get(o) or 0) <= MAX_SPEC_BYTES
            and self._sizes.get(o) is not None
        ]
        if not small:
            return
        try:
            out = git(self.root, "cat-file", "--batch", stdin=_lines(small))
        except GitError as exc:
            raise GitError(_unreadable(shown, self.revision, small[0], str(exc))) from None
        pos = 0
        for oid in small:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            length = int(header[2]) if len(header) == 3 and header[2].isdigit() else 0
            self._texts[oid] = out[end + 1 : end + 1 + length]
            pos = end + 1 + length + 1

    def _size_of(self, oid: str) -> int | None:
        try:
            return int(git(self.root, "cat-file", "-s", oid).strip())
        except (GitError, ValueError):
            return None

    # ------------------------------------------------------------ SourceSet

    def spec_names(self, folder: str) -> list[str]:
        """Every ``*.bcfg`` directly in ``folder`` at the revision, named where its links lead, read
        ahead in one git call; GitError if git cannot read the folder."""
        where = self._repo_path(folder)
        outside = _Found(folder, outside=Path(os_name(folder)))
        found = self._lookup(where) if where is not None else outside
        if found.outside is not None:  # out of the repository (a link leads there): on disk
            try:
                files = FileSources(self.root)
                return sorted(files.name(p) for p in found.outside.glob("*.bcfg"))
            except OSError:
                return []
        if not found.folder:
            return []
        listing = self._listing(found.path)
        names = sorted(n for n in listing if n.endswith(".bcfg"))
        targets = [self._lookup(posixpath.join(found.path, n) if found.path else n) for n in names]
        self._read_ahead([t.oid for t in targets if t.oid is not None], folder)
        out = []
        for n, t in zip(names, targets):
            if t.loop:  # named as written, as on disk
                out.append(self._display(posixpath.join(found.path, n) if found.path else n))
            elif t.outside is not None:
                out.append(display_name(t.outside, self.root))
            else:
                out.append(self._display(t.path))
        return list(dict.fromkeys(out))

    def _listing(self, path: str) -> dict[str, tuple[bytes, str]]:
        """The entries of the folder at repository path ``path`` (links already followed)."""
        tree = f"{self.commit}^{{tree}}"
        for part in [p for p in path.split("/") if p]:
            entry = self._tree(tree, path).get(part)
            if entry is None or entry[0] != _TREE:
                return {}
            tree = entry[1]
        return self._tree(tree, path)

    def read(self, name: str) -> Source:
        if is_library(name):
            return read_library(name)
        at = f"at {self.revision}"
        path = self._repo_path(name)
        try:
            found = (
                _Found(name, outside=Path(os_name(name))) if path is None else self._lookup(path)
            )
            if found.outside is not None:  # what a link leads to outside the repository: on disk
                return FileSources(self.root).read(display_name(found.outside, self.root))
            if found.loop:
                raise SourceError(f"cannot read {name} {at}: too many levels of symbolic links")
            if found.folder:
                raise SourceError(f"cannot read {name} {at}: it is a folder")
            if found.oid is None:
                raise SourceError(f"cannot read {name} {at}: no such file")
            self._read_ahead([found.oid], name)
        except GitError as exc:
            raise SourceError(f"cannot read {name} {at}: {exc}") from None
        size = self._sizes.get(found.oid)
        if size is None:
            raise SourceError(
                f"cannot read {name} {at}: this clone does not hold its content (object "
                f"{found.oid[:12]}: a partial clone, or a damaged repository), and bcfg never fetches",
                hint="fetch the revision (git fetch), or compare revisions this clone holds",
            )
        if size > MAX_SPEC_BYTES:
            raise too_large(name, size)
        return Source.of(name, decode(self._texts[found.oid], name))

    def resolve_import(self, importer: str, target: str) -> str | None:
        if is_library(target):
            return resolve_library(target)
        base = self._repo_path(importer)
        if base is None:  # an importer outside the repository: as on disk
            return FileSources(self.root).resolve_import(importer, target)
        path = posixpath.join(posixpath.dirname(base), os_name(target))
        try:
            found = self._lookup(path)
        except GitError:  # reading it says what git cannot read, where it is imported
            return self._display(posixpath.normpath(path))
        if found.outside is not None:  # on disk, as FileSources finds it
            there = found.outside.exists() or found.outside.is_symlink()
            return display_name(found.outside, self.root) if there else None
        if found.oid is None and not (found.loop or found.folder) and not self._exists(found.path):
            return None
        return self._display(found.path)

    def _exists(self, path: str) -> bool:
        folder, _, base = path.rpartition("/")
        try:
            return base in self._listing(folder)
        except GitError:
            return True  # reading it will say what is wrong

    def siblings(self, name: str) -> list[str] | None:
        if is_library(name):
            return None
        folder = posixpath.dirname(posixpath.normpath(name)) or "."
        try:
            return self.spec_names(folder)
        except GitError:
            return None


def _lines(oids: list[str]) -> bytes:
    return "".join(f"{o}\n" for o in oids).encode()


def _unreadable(shown: str, revision: str, oid: str, why: str) -> str:
    return (
        f"git cannot read {shown} at {revision} (object {oid[:12]}: {why}); "
        "a partial clone whose remote cannot be reached, or a damaged repository (bcfg never fetches)"
    )


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
