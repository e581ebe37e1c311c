"""Pass 1, loading: read and parse each spec and its imports, and bind the names each file sees.

Files come from a ``SourceSet`` (disk, editor buffers, a git revision), are
parsed once each, and are keyed by display name. A file's ``defs`` holds every
definition it declares or imports; importing a file that failed to load marks
the importer ``broken``, so its backends are not resolved (their errors would
only cascade from the import's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..diagnostics import SpecError
from ..lang import syntax as syn
from ..lang.parse import parse_source, source_error
from ..resources import library_stems
from ..sources import LIBRARY_SCHEME, Source, SourceError, SourceSet, Span, is_library
from .context import Ctx
from .values import plain_name

# Declarations that define a name, and how messages call each.
DEFINITIONS = (syn.AliasDecl, syn.ConstraintDecl, syn.DTypesDecl, syn.FuseDecl, syn.GroupDecl)
DECL_WORDS: dict[type, str] = {
    syn.AliasDecl: "an alias",
    syn.ConstraintDecl: "a constraint",
    syn.DTypesDecl: "a dtype set",
    syn.FuseDecl: "a fuser",
    syn.GroupDecl: "a group",
}
# Files importing files, more than this deep, are an error (loading is recursive).
MAX_IMPORT_DEPTH = 64
Definition = syn.AliasDecl | syn.ConstraintDecl | syn.DTypesDecl | syn.FuseDecl | syn.GroupDecl
# How a source becomes a syntax tree: ``parse_source``, or a cache of its results.
Parse = Callable[[Source], syn.Spec]


@dataclass
class LoadedFile:
    """One parsed spec and the names it sees."""

    name: str
    spec: syn.Spec
    digest: str
    defs: dict[str, tuple[Definition, str]] = field(default_factory=dict)  # -> (decl, file)
    imports: list[str] = field(default_factory=list)  # the import closure, by name
    broken: bool = False


@dataclass
class Program:
    """Every file loaded so far, by display name."""

    files: dict[str, LoadedFile] = field(default_factory=dict)


class Loader:
    """Loads specs and their imports from ``sources`` into ``program``, parsing with ``parse``."""

    def __init__(self, ctx: Ctx, sources: SourceSet, program: Program, parse: Parse = parse_source):
        self.ctx = ctx
        self.sources = sources
        self.program = program
        self.parse = parse
        self._loading: list[str] = []

    def load(self, name: str, span: Span | None = None) -> LoadedFile | None:
        """Parse a spec and its imports (once each); None if it could not be read."""
        files = self.program.files
        if name in files:
            return files[name]
        if name in self._loading:
            cycle = " -> ".join(self._loading[self._loading.index(name) :] + [name])
            self.ctx.error(span, f"import cycle: {cycle}", "remove one of these imports")
            return None
        if len(self._loading) >= MAX_IMPORT_DEPTH:
            self.ctx.error(
                span,
                f"imports nest more than {MAX_IMPORT_DEPTH} deep here "
                f"({self._loading[0]} -> ... -> {name})",
                "import the files a spec needs directly rather than through a long chain",
            )
            return None
        try:
            try:
                source = self.sources.read(name)
            except SourceError as exc:
                if exc.span is None:  # where the file was imported, else the file itself
                    exc.span = span or Span(name, 1, 1, 1, 1)
                raise source_error(exc) from None
            self.ctx.diag.sources[name] = source.text
            spec = self.parse(source)
        except SpecError as exc:
            self.ctx.diag.sources.update(exc.sources)
            for d in exc.diagnostics:
                self.ctx.diag.add(d)
            return None
        self._loading.append(name)
        try:
            f = LoadedFile(name, spec, source.digest)
            for decl in spec.decls:
                if isinstance(decl, syn.ImportDecl):
                    sub = self._import(name, decl)
                    if sub is None or sub.broken:
                        f.broken = True
                        continue
                    for def_name, (definition, where) in sub.defs.items():
                        self._define(f, def_name, definition, where)
                    for imp in [sub.name, *sub.imports]:
                        if imp not in f.imports:
                            f.imports.append(imp)
            for decl in spec.decls:
                if isinstance(decl, DEFINITIONS) and self._check_decl_names(decl):
                    self._define(f, decl.name, decl, name)
            files[name] = f
            return f
        finally:
            self._loading.pop()

    def _import(self, importer: str, decl: syn.ImportDecl) -> LoadedFile | None:
        if is_library(decl.path):
            target = self.sources.resolve_import(importer, decl.path)
            if target is None:
                shipped = ", ".join(f'"{LIBRARY_SCHEME}{s}"' for s in library_stems())
                self.ctx.error(
                    decl.span,
                    f"cannot import '{decl.path}': bcfg ships no such library",
                    f"libraries: {shipped}",
                )
                return None
            return self.load(target, decl.span)
        if not decl.path.endswith(".bcfg") or "\0" in decl.path:
            self.ctx.error(
                decl.span, f"cannot import {decl.path!r}: only .bcfg specs can be imported"
            )
            return None
        target = self.sources.resolve_import(importer, decl.path)
        if target is None:
            folder = importer.rpartition("/")[0] or "."
            self.ctx.error(
                decl.span,
                f"cannot import '{decl.path}': no such file",
                f"imports are relative to {folder}/",
            )
            return None
        return self.load(target, decl.span)

    def _check_decl_names(self, decl: Definition) -> bool:
        """Names that are declared (not interpolated) must be plain identifiers."""
        names: list[tuple[str, Span]] = [(decl.name, decl.span)]
        if isinstance(decl, syn.GroupDecl):
            names += [(p, decl.span) for p in decl.params]
        ok = True
        for name, span in names:
            if not plain_name(name):
                self.ctx.error(
                    span,
                    f"'{name}' cannot be declared: a declared name has no ${{...}} holes",
                    "holes are filled in names that are used, not declared",
                )
                ok = False
        if isinstance(decl, syn.GroupDecl) and len(set(decl.params)) != len(decl.params):
            dup = next(p for p in decl.params if decl.params.count(p) > 1)
            self.ctx.error(decl.span, f"group '{decl.name}' has two parameters named '{dup}'")
            ok = False
        return ok

    def _define(self, f: LoadedFile, name: str, decl: Definition, where: str) -> None:
        prev = f.defs.get(name)
        if prev is not None and prev[0] is not decl:
            self.ctx.error(
                decl.span,
                f"'{name}' is already defined at {prev[0].span}",
                "rename one of the two definitions",
            )
            return
        f.defs[name] = (decl, where)
