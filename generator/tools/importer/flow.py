"""The import, step by step, for one or several targets (run inside the worker process).

1. load each target and read its configs (``reader``, closures proven by ``prove``);
2. put configs whose order comes from a set in a stable order (``setorder``);
3. recognise runs of known groups: bcfg's library and the project's own (``groups``);
4. with several backends, discover the groups they share (``groups.discover``);
5. assemble the files (``assemble``: names, loops by ``fold``);
6. check the files as ``bcfg generate`` would, and verify that they regenerate
   configs equivalent to the targets' (``verify``).
"""

from __future__ import annotations

import keyword
import posixpath
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import Project
from ...diagnostics import Diagnostic, Severity, SpecError
from ...lang import syntax as m
from ...live.names import public_names
from ...live.targets import ImportFailure, load_target
from ...sources import FileSources, MemorySources, read_library
from .assemble import Layout, ReadBackend, assemble
from .builder import config_paths
from .common import is_spec_word, spec_name
from .groups import Expander, Found, discover, known_groups, recognise
from .naming import Names
from .reader import Config, Reader
from .setorder import loaded_modules, module_sets, stabilise

IMPORTED_MARK = "# Imported by `bcfg import"


@dataclass
class Request:
    targets: list[str]
    output: str | None  # a file, a folder, or None for standard output (display names)
    folder: bool  # write one file per backend into ``output``
    verify: bool = True
    fold: bool = True  # fold loops and recognise groups (off: one pattern per config)
    library: bool = True  # recognise the groups of bcfg's library and of the project


@dataclass
class Result:
    files: dict[str, str]  # display name -> text ("-" for standard output)
    backends: list[tuple[str, str, int]]  # (file, module, configs)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    findings: list[Diagnostic] = field(default_factory=list)
    not_allowed: list[str] = field(default_factory=list)
    verified: str | None = None  # what verification said; None if it did not run

    @property
    def errors(self) -> int:
        return sum(f.severity == Severity.ERROR for f in self.findings)


def module_name_for(function: str, backend_name: str) -> str:
    """The backend's module name: ``get_x_backend_config`` -> ``x``; an ASCII name the grammar
    accepts whatever the function or the BackendConfig is called (``café`` -> ``cafe``)."""
    cand = ""
    for pat in (r"get_(\w+?)_backend_config\Z", r"get_(\w+?)_config\Z", r"get_(\w+)\Z"):
        mt = re.match(pat, function)
        if mt:
            cand = spec_name(mt.group(1)).strip("_")
            break
    if not cand:
        cand = spec_name(backend_name).strip("_") or spec_name(function).strip("_")
    if not is_spec_word(cand) or keyword.iskeyword(cand):
        cand = "imported_" + cand.lstrip("_0123456789") if cand else "imported"
    return cand


Loaded = tuple  # (BackendConfig, function name, module name, modules loaded before it)


def run_import(
    request: Request,
    project: Project,
    phase: Callable[[str], None] = lambda _: None,
    loaded: list[Loaded] | None = None,
) -> Result:
    """Everything ``bcfg import`` does but printing and writing; ``phase`` hears what it does.

    ``loaded`` gives the targets' configs directly (the tests' live configs).
    """
    import torch

    table = public_names()
    reader = Reader(table)
    if loaded is None:
        loaded = [load_target(t) for t in request.targets]
    backends, lives, notes = _read_targets(request.targets, loaded, reader, table, phase)
    phase("recognising groups and folding loops (the target's getters and fusers may run)")
    layout = _layout(request, backends, project)
    written = set(layout.files) | ({layout.shared} if layout.shared else set())
    names = Names()
    known, project_specs = _known(project, written, names)
    files_src = FileSources(project.root)
    expander = Expander(
        files_src, posixpath.dirname(layout.files[0]), project.allow, reader, _dtype_text()
    )
    if request.fold and request.library:
        seqs = recognise([b.configs for b in backends], known, expander)
    else:
        seqs = [list(b.configs) for b in backends]
    found: list[Found] = []
    if len(backends) > 1 and layout.shared is not None:
        seqs, found = discover(seqs, names.fresh)
    version = torch.__version__.split("+")[0]
    header = f"{IMPORTED_MARK} {' '.join(request.targets)}` (torch {version})."
    tops = {p.split(".")[0] for b in backends for p in config_paths(b.configs)}
    for top in sorted(tops - set(project.allow)):
        header += f"\n# Note: '{top}' is not on the allow-list: add it to [tool.bcfg] allow in pyproject.toml."
    assembled = assemble(backends, seqs, found, layout, names, project.allow, header, request.fold)
    result = Result(
        assembled.files,
        [(f, b.module, len(b.configs)) for f, b in zip(layout.files, backends)],
        notes,
    )
    result.not_allowed = assembled.not_allowed
    for top in result.not_allowed:
        result.notes.append(
            f"'{top}' is not on the allow-list: add it to [tool.bcfg] allow in pyproject.toml"
        )
    phase("checking and verifying the spec (the target's fusers and getters run)")
    _check_and_verify(request, project, result, backends, lives, layout)
    del project_specs
    return result


def _read_targets(
    targets: list[str],
    loaded: list[Loaded],
    reader: Reader,
    table: Any,
    phase: Callable[[str], None],
) -> tuple[list[ReadBackend], list[Any], list[str]]:
    backends: list[ReadBackend] = []
    lives: list[Any] = []
    notes: list[str] = []
    taken: set[str] = set()
    for target, (config, function, module_name, before) in zip(targets, loaded):
        phase(f"reading {target}'s configs (its getters and fusers run)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            configs = [reader.read(i, pc) for i, pc in enumerate(config.configs)]
        live = list(config.configs)
        sets = module_sets(loaded_modules(module_name, before)) if module_name else []
        order, why = stabilise(configs, sets, table)
        if why is not None:
            notes.append(f"warning: {target}: {why}")
        if order is not None:
            configs = [_at(configs[j], i) for i, j in enumerate(order)]
            live = [live[j] for j in order]
        module = module_name_for(function, config.name)
        base, n = module, 2
        while module in taken:
            module, n = f"{base}_{n}", n + 1
        taken.add(module)
        backends.append(ReadBackend(target, module, config.name, configs))
        lives.append((config.name, live))
    return backends, lives, notes


def _at(c: Config, index: int) -> Config:
    from dataclasses import replace

    return replace(c, index=index)


def _layout(request: Request, backends: list[ReadBackend], project: Project) -> Layout:
    if not request.folder:
        name = request.output or f"{backends[0].module}.bcfg"
        return Layout([_display(name, project)] * len(backends), None)
    folder = _display(request.output or ".", project)
    files = [posixpath.join(folder, f"{b.module}.bcfg") for b in backends]
    shared = None
    if len(backends) > 1:
        shared = posixpath.join(folder, "common.bcfg")
        path = Path(project.root, shared)
        if path.exists() and not _imported(path):
            shared = posixpath.join(folder, "imported_common.bcfg")
    for f in files + ([shared] if shared else []):
        path = Path(project.root, f)
        if path.exists() and not _imported(path):
            raise ImportFailure(
                f"{f} exists and was not written by bcfg import; remove it or choose another folder"
            )
    return Layout(files, shared)


def _imported(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().startswith(IMPORTED_MARK)
    except OSError:
        return False


def _display(name: str, project: Project) -> str:
    return FileSources(project.root).name(Path(name))


def _known(project: Project, written: set[str], names: Names) -> tuple[list[Any], dict]:
    """The groups a spec may ``use``: the library's and the project's (but the files being replaced)."""
    from ...lang.parse import parse_source

    specs: dict[str, m.Spec] = {"bcfg:torch": parse_source(read_library("bcfg:torch"))}
    sources = FileSources(project.root)
    if project.specs.is_dir():
        for path in sorted(project.specs.glob("*.bcfg")):
            name = sources.name(path)
            if name in written or _imported(path):
                continue
            try:
                specs[name] = parse_source(sources.read(name))
            except (SpecError, Exception):  # noqa: BLE001  (a broken spec offers no groups)
                continue
    for spec in specs.values():
        for d in spec.decls:
            if hasattr(d, "name") and not isinstance(d, m.BackendDecl):
                names.taken.add(d.name)
    names.taken.add("ds")
    return known_groups(specs), specs


class _ProbeNames(Names):
    """Names in a probe spec, clear of every name the project's specs may declare."""

    def fresh(self, base: str) -> str:
        return super().fresh("bcfg_import_probe_" + base)


def _dtype_text() -> Any:
    """Spec text for a dtype set in a probe: (constraint declarations it needs, its expression)."""
    from ...lang.fmt import Printer, render
    from .builder import Builder

    builder = Builder(_ProbeNames(), ())
    printer = Printer()
    declared: dict[tuple, str] = {}

    def text(ds: tuple) -> tuple[list[str], str]:
        for d in builder.constraint_decls(ds):
            assert isinstance(d, m.ConstraintDecl)
            key = next(k for k, v in builder.constraints.items() if v == d.name)
            declared[key] = render(printer.decl(d))
        keys = [
            dt.key() for dc in ds for dt in (dc.input, dc.output, dc.weight) if dt and dt.bounds
        ]
        value = render(printer.expr(builder.dtypes_value(ds, named_list=False)))
        return [declared[k] for k in dict.fromkeys(keys)], value

    return text


def _check_and_verify(
    request: Request,
    project: Project,
    result: Result,
    backends: list[ReadBackend],
    lives: list[Any],
    layout: Layout,
) -> None:
    from ...semantics.driver import analyze

    allow = tuple(dict.fromkeys([*project.allow, *result.not_allowed]))
    sources = MemorySources(result.files, FileSources(project.root))
    names = list(dict.fromkeys(layout.files))
    try:
        analysis = analyze(sources, names, allow)
    except SpecError as exc:
        result.findings = exc.diagnostics
        if request.verify:
            result.verified = None
        return
    result.findings = analysis.warnings
    if not request.verify:
        return
    from .verify import verify

    built = {b.module: b for b in analysis.backends}
    problems: list[str] = []
    for b, (name, live) in zip(backends, lives):
        problems += [f"{b.module}: {p}" for p in verify(name, live, built[b.module])]
    if problems:
        raise ImportFailure(
            f"the spec does not regenerate an equivalent config (this is a bug in bcfg import; "
            f"--no-verify writes it anyway): {problems[0]}"
        )
    total = sum(len(live) for _, live in lives)
    which = "the spec regenerates" if len(backends) == 1 else "the specs regenerate"
    result.verified = (
        f"verified: {which} all {total} pattern configs, equivalent in order and every field "
        "(bcfg's canonical comparison)"
    )


def import_configs(
    configs: list[tuple[Any, str, str]],
    project: Project,
    output: str | None = None,
    folder: bool = False,
    verify: bool = True,
    fold: bool = True,
    library: bool = True,
) -> Result:
    """The import of live BackendConfigs, in this process: ``(config, function name, label)`` each."""
    request = Request([label for _, _, label in configs], output, folder, verify, fold, library)
    loaded: list[Loaded] = [(c, fn, None, set()) for c, fn, _ in configs]
    return run_import(request, project, loaded=loaded)
