"""The server's compiler side: open buffers over the disk, checks, and programs to answer requests.

Every call takes a ``Snapshot`` of the open buffers (made on the event loop)
and runs the compiler's own stages on it: ``analyze_partial`` for the
diagnostics ``bcfg generate FILE`` would print, ``Loader`` for the names a file
sees. Nothing about one document is kept that another could see: a check reads
only its snapshot, and what is kept between calls is keyed by the text it was
made from (the latest parse of each file, by display name and digest), or is
about torch, not about specs (the symbol-fact tables, one per allow-list).

A buffer that does not parse still has a program: ``recover`` blanks out the
top-level declarations the parser stops in, so hover, go to definition and
completion work for everything else in the file.

Runs on one thread (the server's engine thread): the caches are not locked.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...config import DEFAULT_ALLOW, ConfigError, Project, find_project
from ...diagnostics import Diagnostic, Severity, SpecError
from ...infra import usermodules
from ...lang import syntax as syn
from ...semantics import facts as symbol_facts
from ...semantics import model as m
from ...semantics.coerce import Coercions
from ...semantics.context import Ctx
from ...semantics.driver import analyze_partial
from ...semantics.evaluate import Evaluator
from ...semantics.facts import TorchFacts
from ...semantics.load import LoadedFile, Loader, Program
from ...sources import (
    MAX_SPEC_BYTES,
    FileSources,
    MemorySources,
    Source,
    SourceError,
    SourceSet,
    Span,
    decode,
    read_regular_file,
    resolved_path,
)
from . import text as tx
from .parsing import ParseCache

# How many broken declarations recovery blanks out before it gives up.
MAX_RECOVERY = 24


@dataclass(frozen=True)
class Snapshot:
    """The open buffers at one moment, by absolute path; other files are read from disk."""

    texts: dict[Path, str] = field(default_factory=dict)

    def read(self, path: Path) -> str | None:
        """The buffer of ``path`` if it is open, else the file on disk, else None; with its line
        ends made ``\\n`` and every offset kept (``text.lexable``)."""
        if path in self.texts:
            return tx.lexable(self.texts[path])
        try:
            return decode(read_regular_file(path, MAX_SPEC_BYTES), path.name)
        except (OSError, SourceError, ValueError):  # ValueError: a NUL in the path
            return None


@dataclass(frozen=True)
class Place:
    """The project a file belongs to and how it names files; ``problem`` if its pyproject is bad."""

    project: Project
    files: FileSources
    problem: str | None = None

    def name(self, path: Path) -> str:
        return self.files.name(path)

    def path(self, name: str) -> Path:
        return resolved_path(self.files.path(name))


def place_of(path: Path) -> Place:
    """The project of the spec at ``path`` (its nearest ``[tool.bcfg]``), as ``bcfg`` would find it."""
    problem = None
    try:
        project = find_project(path.parent)
    except (ConfigError, SpecError, OSError) as exc:
        folder = resolved_path(path.parent)
        project = Project(folder, folder / "specs", folder / "generated", DEFAULT_ALLOW)
        if isinstance(exc, SpecError):
            problem = "; ".join(
                f"{d.span}: {d.message}" if d.span else d.message for d in exc.diagnostics
            )
        elif isinstance(exc, OSError):
            problem = f"cannot find the project of {path.name}: {exc.strerror or exc}"
        else:
            problem = str(exc)
    return Place(project, FileSources(project.root), problem)


class BufferSources(MemorySources):
    """Open buffers over the files on disk; a buffer is read as its file would be (NULs, size)."""

    def read(self, name: str) -> Source:
        if name in self.texts:
            data = self.texts[name].encode("utf-8", "surrogatepass")
            return Source.of(name, decode(data, name))
        return super().read(name)


class RecoveredSources:
    """A source set whose texts are what parses of them (``Workspace.recover``)."""

    def __init__(self, inner: SourceSet, workspace: Workspace):
        self.inner = inner
        self.workspace = workspace

    def read(self, name: str) -> Source:
        source = self.inner.read(name)
        return Source.of(name, self.workspace.recover(source))

    def resolve_import(self, importer: str, target: str) -> str | None:
        return self.inner.resolve_import(importer, target)

    def siblings(self, name: str) -> list[str] | None:
        return self.inner.siblings(name)


@dataclass
class FileReport:
    """What one check says about one file, and the text its spans point into."""

    text: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass
class Scope:
    """The program a file sees (its declarations and imports, what parses of them), to evaluate in."""

    place: Place
    file: LoadedFile | None
    program: Program
    evaluator: Evaluator
    ctx: Ctx
    sources: SourceSet


class Workspace:
    """Checks and programs for the server; one per server, used from its engine thread only."""

    def __init__(self) -> None:
        self.parses = ParseCache()
        self._facts: dict[tuple[str, ...], TorchFacts] = {}
        self._recovered: dict[str, tuple[str, str]] = {}  # name -> (digest, recovered text)
        self._backends: tuple[tuple[object, ...], list[m.Backend]] | None = None
        self._pt2e_only: set[str] = set()  # the modules of the cached backends that are PT2E only
        self._modules = usermodules.Watch()

    def importable(self, place: Place) -> None:
        """Before resolving a project's specs: its modules importable as every ``bcfg`` command
        imports them (``Project.make_importable``), and imported afresh if a file they were
        loaded from changed or they would now be found elsewhere, as the next ``bcfg`` run would
        import them. What was found in the stale modules is forgotten."""
        project = place.project
        project.make_importable()
        stale = self._modules.stale(project)
        if not stale:
            return
        usermodules.forget(stale)
        tops = set(usermodules.user_tops(project))
        symbol_facts.forget(tops)
        self._facts = {a: t for a, t in self._facts.items() if not tops & set(a)}
        self._backends = None

    def facts(self, allow: tuple[str, ...]) -> TorchFacts:
        """The symbol-fact table of an allow-list (cached per torch version, kept for the session)."""
        table = self._facts.get(allow)
        if table is None:
            table = self._facts[allow] = TorchFacts.cached(allow)
        return table

    def sources(self, place: Place, snap: Snapshot) -> BufferSources:
        buffers = {place.name(p): t for p, t in snap.texts.items()}
        return BufferSources(buffers, place.files)

    # ------------------------------------------------------------ checking

    def check(self, path: Path, snap: Snapshot) -> dict[Path, FileReport]:
        """What ``bcfg generate`` says about the spec at ``path``, by the file each finding is in."""
        place = place_of(path)
        reports: dict[Path, FileReport] = {path: FileReport(snap.read(path))}
        looped = _link_loop(path, place.name(path)) if path in snap.texts else None
        if looped is not None:  # the buffer is checked, and what bcfg generate would say is said
            reports[path].diagnostics.append(looped)
        if place.problem is not None:
            diag = Diagnostic(Severity.ERROR, None, place.problem, "fix pyproject.toml")
            reports[path].diagnostics.append(diag)
            return reports
        self.importable(place)
        facts = self.facts(place.project.allow)
        try:
            analysis, found = analyze_partial(
                self.sources(place, snap),
                [place.name(path)],
                place.project.allow,
                facts,
                self.parses.parse,
            )
            texts = analysis.sources
        except SpecError as exc:  # past MAX_ERRORS
            found, texts = exc.diagnostics, exc.sources
        finally:
            facts.save()  # what was learned about torch's names (nothing is written otherwise)
            self._modules.note(place.project)
        for d in found:
            where = place.path(d.span.file) if d.span is not None else path
            reports.setdefault(where, FileReport(None)).diagnostics.append(d)
        for where, report in reports.items():  # the texts the spans count in (no BOM)
            report.text = texts.get(place.name(where), report.text)
            if report.text is None:
                report.text = snap.read(where)
        return reports

    # ------------------------------------------------------------ programs

    def recover(self, source: Source) -> str:
        """The text of ``source`` with the top-level declarations it fails to parse in blanked out."""
        hit = self._recovered.get(source.name)
        if hit is not None and hit[0] == source.digest:
            return hit[1]
        text = source.text
        starts: list[int] | None = None
        for _ in range(MAX_RECOVERY):
            try:
                self.parses.parse(Source.of(source.name, text))
                break
            except SpecError as exc:
                span = next((d.span for d in exc.diagnostics if d.span is not None), None)
                if starts is None:
                    starts = tx.declaration_starts(source.text)
                text = _blank_at(text, starts, span, len(text))
        else:
            text = ""
        self._recovered[source.name] = (source.digest, text)
        return text

    def scope(self, path: Path, snap: Snapshot) -> Scope:
        """The program the spec at ``path`` sees, made of what parses of it and its imports."""
        place = place_of(path)
        self.importable(place)
        sources = RecoveredSources(self.sources(place, snap), self)
        ctx = Ctx(self.facts(place.project.allow))
        program = Program()
        f = Loader(ctx, sources, program, self.parses.parse).load(place.name(path))
        evaluator = Evaluator(ctx, program, Coercions(ctx, program))
        return Scope(place, f, program, evaluator, ctx, sources)

    def pt2e_only(self, path: Path, snap: Snapshot) -> set[str]:
        """The modules of ``backends(path, snap)`` that are PT2E-only targets (fx: false)."""
        self.backends(path, snap)
        return self._pt2e_only

    def backends(self, path: Path, snap: Snapshot) -> list[m.Backend]:
        """The backends of ``path`` and of every spec of its project that imports it, resolved as
        far as they go (items with errors are left out); PT2E-only targets too."""
        place = place_of(path)
        self.importable(place)
        roots = [path, *self.dependants(path, snap, place)]
        names = [place.name(p) for p in roots]
        sources = RecoveredSources(self.sources(place, snap), self)
        every = sorted({place.name(p) for r in roots for p in closure(r, snap)})
        key = (tuple(names), *((n, s.digest) for n, s in _read_all(sources.inner, every)))
        if self._backends is not None and self._backends[0] == key:
            return self._backends[1]
        try:
            analysis, _ = analyze_partial(
                sources,
                names,
                place.project.allow,
                self.facts(place.project.allow),
                self.parses.parse,
            )
            backends = analysis.backends + analysis.pt2e_only
            self._pt2e_only = {b.module for b in analysis.pt2e_only}
        except SpecError:
            backends = []
            self._pt2e_only = set()
        self._backends = (key, backends)
        return backends

    def dependants(self, path: Path, snap: Snapshot, place: Place | None = None) -> list[Path]:
        """The specs of the project's spec folder and the open buffers that import ``path``."""
        place = place or place_of(path)
        candidates = set(snap.texts)
        try:
            if place.project.specs.is_dir():
                candidates |= {resolved_path(p) for p in place.project.specs.glob("*.bcfg")}
        except OSError:  # an unreadable spec folder: the open buffers are what there is
            pass
        return sorted(c for c in candidates - {path} if path in closure(c, snap))


def _read_all(sources: SourceSet, names: list[str]) -> list[tuple[str, Source]]:
    out = []
    for n in names:
        try:
            out.append((n, sources.read(n)))
        except SourceError:
            continue
    return out


def _blank_at(text: str, starts: list[int], span: syn.Span | None, length: int) -> str:
    """``text`` with the declaration an error is in blanked out; an error at the first token of
    a declaration blames the one before it (a block left open runs into the next declaration)."""
    if span is None:
        return ""
    offset = tx.TextIndex(text).span_offset(span.line, span.column)
    start, end = tx.chunk_of(starts, offset, length)
    if start == offset and start in starts:
        i = starts.index(start)
        start, end = (starts[i - 1], start) if i > 0 else (0, start)
    if not text[start:end].strip():  # nothing left to blank here: blank everything from here on
        start, end = min(start, offset), length
    return tx.blank(text, start, end)


def closure(path: Path, snap: Snapshot) -> set[Path]:
    """``path`` and every file it imports, transitively (by line: works on text that does not parse)."""
    seen: set[Path] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        text = snap.read(p)
        if text is not None:
            found = (file_at(p.parent / target) for target, _, _ in tx.imports_in(text))
            todo.extend(f for f in found if f is not None)
    return seen


def file_at(path: Path) -> Path | None:
    """``path`` resolved as the kernel would (a loop of links: as written); None if no file can
    have that name (a NUL in it)."""
    if "\0" in str(path):
        return None
    return resolved_path(path)


def _link_loop(path: Path, name: str) -> Diagnostic | None:
    """What ``bcfg generate`` says of a spec whose file is a loop of symbolic links, if it is."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Diagnostic(
                Severity.ERROR,
                Span(name, 1, 1, 1, 1),
                f"cannot read {name}: {os.strerror(errno.ELOOP)} (on disk; the buffer is checked)",
                "point the link at a file: bcfg generate reads the file, not this buffer",
            )
    except ValueError:
        return None
    return None
