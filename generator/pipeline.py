"""The pipeline, stage by stage: specs -> parse -> resolve/check -> emit -> outputs."""

from __future__ import annotations

from pathlib import Path

from .config import ConfigError, Project, torch_problem
from .diagnostics import Diagnostic
from .infra import cache
from .infra.write import Outputs
from .semantics import model as m


def compile_project(
    project: Project, specs: list[Path] | None = None, out: Path | None = None
) -> tuple[Outputs, list[Diagnostic], dict[str, str]]:
    """Render the generated files of ``specs`` (all specs if None) in memory.

    Returns the outputs, the warnings and the source texts they point into.
    Raises SpecError, with every error found, if any spec is wrong.
    """
    from .emit.backend_config import render_init
    from .semantics import facts
    from .semantics.driver import resolve_specs  # imports lark (torch only for unknown names)

    problem = torch_problem(cache.dist_version("torch"))
    if problem is not None:
        raise ConfigError(problem)
    full = specs is None
    paths = project.spec_files() if specs is None else specs
    # Facts about torch's names, cached per torch version: a run that names
    # only known symbols does not import torch. What a run learns is kept even
    # if a spec is wrong (facts are about torch, not about specs).
    table = facts.TorchFacts.cached(project.allow)
    try:
        result = resolve_specs(project.root, paths, project.allow, table)
    finally:
        table.save()
    files = {f"{b.module}.py": _render_backend(b) for b in result.backends}
    if full:
        files["__init__.py"] = render_init(result.backends, project.rel(project.specs))
    return Outputs(out or project.out, files, full), result.warnings, result.sources


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
