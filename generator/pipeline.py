"""The pipeline, stage by stage: specs -> parse -> resolve/check -> emit -> outputs.

The module emitters are a list: each turns the analysis into the files it
writes to the output folder. ``BACKEND_CONFIG`` writes a ``BackendConfig``
module per backend (and, on a full run, ``__init__.py``); ``PT2E`` writes a
quantizer module per ``quantizer`` declaration, and the runtime they share.
The docs (``emit.docs``) go to their own folder.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .config import ConfigError, Project, torch_problem
from .diagnostics import Diagnostic, Severity
from .infra import cache
from .infra.write import DOCS, Outputs
from .semantics import model as m

if TYPE_CHECKING:
    from .semantics.driver import Analysis

# What a module is rendered from: a backend or a quantizer (a module name and input hashes).
_Rendered = TypeVar("_Rendered", m.Backend, m.Quantizer)


@dataclass(frozen=True)
class Emitter:
    """One module emitter: ``files(analysis, full, spec_dir)`` gives the files it writes, by name."""

    name: str
    files: Callable[[Analysis, bool, str], dict[str, str]]


def _backend_config_files(result: Analysis, full: bool, spec_dir: str) -> dict[str, str]:
    from .emit.backend_config import render_backend, render_init

    files = {f"{b.module}.py": _cached("module", b, render_backend) for b in result.backends}
    if full:
        files["__init__.py"] = render_init(result.backends, spec_dir)
    return files


def _pt2e_files(result: Analysis, full: bool, spec_dir: str) -> dict[str, str]:
    if not result.quantizers:
        return {}
    from .emit.pt2e import render_quantizer, render_runtime

    files = {
        f"{m.quantizer_module(q.module)}.py": _cached("quantizer", q, render_quantizer)
        for q in result.quantizers
    }
    files.update(render_runtime())
    return files


BACKEND_CONFIG = Emitter("BackendConfig", _backend_config_files)
PT2E = Emitter("PT2E quantizer", _pt2e_files)
EMITTERS: tuple[Emitter, ...] = (BACKEND_CONFIG, PT2E)


def compile_project(
    project: Project,
    specs: list[Path] | None = None,
    out: Path | None = None,
    emitters: Sequence[Emitter] = EMITTERS,
) -> tuple[list[Outputs], list[Diagnostic], dict[str, str]]:
    """Render the generated files of ``specs`` (all specs if None) in memory.

    Returns the outputs (the modules of every emitter; on a full run also the
    docs, unless ``[tool.bcfg] docs = false``), the warnings and the source
    texts they point into. Raises SpecError, with every error found, if any
    spec is wrong.
    """
    full = specs is None
    result = analyze_project(project, specs)
    files: dict[str, str] = {}
    for emitter in emitters:
        for name, text in emitter.files(result, full, project.rel(project.specs)).items():
            if name in files:  # the resolver rules out such names; a bug if it did not
                raise AssertionError(f"two emitters write {name}; the second is {emitter.name}")
            files[name] = text
    outputs = [Outputs(out or project.out, files, full)]
    if full and project.docs is not None:
        outputs.append(docs_outputs(project, result, project.docs))
    return outputs, result.warnings, result.sources


def resolve_project(
    project: Project, specs: list[Path] | None = None
) -> tuple[list[m.Backend], list[Diagnostic], dict[str, str]]:
    """The backends of ``specs`` (all specs if None), resolved, with the warnings and source texts."""
    result = analyze_project(project, specs)
    return result.backends, result.warnings, result.sources


def analyze_project(project: Project, specs: list[Path] | None = None) -> Analysis:
    """The analysis of ``specs`` (all specs if None): backends, quantizers, warnings, sources."""
    from .semantics import facts
    from .semantics.driver import resolve_specs  # imports lark (torch only for unknown names)

    problem = torch_problem(cache.dist_version("torch"))
    if problem is not None:
        raise ConfigError(problem)
    paths = project.spec_files() if specs is None else specs
    project.make_importable()
    # Facts about torch's names, cached per torch version: a run that names
    # only known symbols does not import torch. What a run learns is kept even
    # if a spec is wrong (facts are about torch, not about specs).
    table = facts.TorchFacts.cached(project.allow)
    try:
        return resolve_specs(project.root, paths, project.allow, table)
    finally:
        table.save()


def docs_outputs(project: Project, result: Analysis, folder: Path) -> Outputs:
    """The docs folder's files for an analysis: the support matrix (see ``emit.docs``), FX
    backends and PT2E-only targets."""
    from .emit.docs import render_docs

    known = {b.module for b in (*result.backends, *result.pt2e_only)}
    unknown = [name for name in project.examples if name not in known]
    if unknown:  # a spec removed, its name left behind: nothing to set apart
        result.warnings.append(
            Diagnostic(
                Severity.WARNING,
                project.examples_at,
                f"[tool.bcfg] examples names {', '.join(map(repr, unknown))}, which no spec "
                f"defines; the backends are {', '.join(sorted(known))}",
                "remove it from examples, or fix its spelling",
            )
        )
    files = render_docs(
        result.backends,
        project.rel(project.specs),
        result.pt2e_only,
        result.quantizers,
        project.examples,
    )
    return Outputs(folder, files, True, DOCS)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for a one-shot command.

    A run allocates hundreds of thousands of objects and hardly any reference
    cycles; the collector would walk them, and torch's millions, again and
    again (a third of the time of a 10,000-pattern spec). A long-running
    server does not pause it.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cached(kind: str, what: _Rendered, render: Callable[[_Rendered], str]) -> str:
    """``render(what)``, remembered per kind, module name and input hashes (see ``cache``)."""
    from .infra.header import inputs_hash

    key = cache.key(kind, what.module, inputs_hash(what.inputs))
    text = cache.load(kind, key)
    if not isinstance(text, str):
        text = render(what)
        cache.store(kind, key, text)
    return text
