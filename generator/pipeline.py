"""The pipeline, stage by stage: specs -> parse -> resolve/check -> emit -> outputs."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .config import ConfigError, Project, torch_problem
from .diagnostics import Diagnostic
from .infra import cache
from .infra.write import DOCS, Outputs
from .semantics import model as m


def compile_project(
    project: Project, specs: list[Path] | None = None, out: Path | None = None
) -> tuple[list[Outputs], list[Diagnostic], dict[str, str]]:
    """Render the generated files of ``specs`` (all specs if None) in memory.

    Returns the outputs (the modules; on a full run also the docs, unless
    ``[tool.bcfg] docs = false``), the warnings and the source texts they
    point into. Raises SpecError, with every error found, if any spec is wrong.
    """
    from .emit.backend_config import render_init

    full = specs is None
    backends, warnings, sources = resolve_project(project, specs)
    files = {f"{b.module}.py": _render_backend(b) for b in backends}
    if full:
        files["__init__.py"] = render_init(backends, project.rel(project.specs))
    outputs = [Outputs(out or project.out, files, full)]
    if full and project.docs is not None:
        outputs.append(docs_outputs(project, backends, project.docs))
    return outputs, warnings, sources


def resolve_project(
    project: Project, specs: list[Path] | None = None
) -> tuple[list[m.Backend], list[Diagnostic], dict[str, str]]:
    """The backends of ``specs`` (all specs if None), resolved, with the warnings and source texts."""
    from .semantics import facts
    from .semantics.driver import resolve_specs  # imports lark (torch only for unknown names)

    problem = torch_problem(cache.dist_version("torch"))
    if problem is not None:
        raise ConfigError(problem)
    paths = project.spec_files() if specs is None else specs
    project.put_root_on_path()
    # Facts about torch's names, cached per torch version: a run that names
    # only known symbols does not import torch. What a run learns is kept even
    # if a spec is wrong (facts are about torch, not about specs).
    table = facts.TorchFacts.cached(project.allow)
    try:
        result = resolve_specs(project.root, paths, project.allow, table)
    finally:
        table.save()
    return result.backends, result.warnings, result.sources


def docs_outputs(project: Project, backends: list[m.Backend], folder: Path) -> Outputs:
    """The docs folder's files for ``backends``: the support matrix (see ``emit.docs``)."""
    from .emit.docs import render_docs

    return Outputs(folder, render_docs(backends, project.rel(project.specs)), True, DOCS)


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


def _render_backend(backend: m.Backend) -> str:
    """``render_backend``, remembered per module name and input hashes (see ``cache``)."""
    from .emit.backend_config import render_backend
    from .emit.header import inputs_hash

    key = cache.key("module", backend.module, inputs_hash(backend.inputs))
    text = cache.load("module", key)
    if not isinstance(text, str):
        text = render_backend(backend)
        cache.store("module", key, text)
    return text
