"""The pipeline, stage by stage: specs -> parse -> resolve/check -> render -> outputs."""

from __future__ import annotations

import gc
from pathlib import Path

from . import cache, symbols
from .config import Project
from .diagnostics import Diagnostic, SpecError
from .write import Outputs


def spec_files(project: Project) -> list[Path]:
    """Every ``*.bcfg`` directly in the project's spec folder, sorted."""
    if not project.specs.is_dir():
        raise SpecError(
            [
                Diagnostic(
                    "error",
                    None,
                    f"no spec folder {project.rel(project.specs)}/",
                    "create it or set [tool.bcfg] specs in pyproject.toml",
                )
            ]
        )
    return sorted(project.specs.glob("*.bcfg"))


def compile_project(
    project: Project, specs: list[Path] | None = None, out: Path | None = None
) -> tuple[Outputs, list[Diagnostic]]:
    """Render the generated files of ``specs`` (all specs if None) in memory.

    Raises SpecError, with every error found, if any spec is wrong.
    """
    from .render import render_init
    from .resolve import (
        resolve_specs,  # imports lark (torch only for names not in the table)
    )

    full = specs is None
    paths = spec_files(project) if specs is None else specs
    # A run allocates hundreds of thousands of objects and hardly any reference
    # cycles; the cyclic collector would walk them, and torch's millions, again
    # and again (a third of the time of a 10,000-pattern spec).
    collecting = gc.isenabled()
    gc.disable()
    # Facts about torch's names, cached per torch version: a run that names
    # only known symbols does not import torch. What a run learns is kept even
    # if a spec is wrong (facts are about torch, not about specs).
    table = symbols.SymbolTable.cached(project.allow)
    try:
        try:
            result = resolve_specs(project.root, paths, project.allow, table)
        finally:
            table.save()
        files = {f"{b.module}.py": _render_backend(b) for b in result.backends}
        if full:
            files["__init__.py"] = render_init(result.backends, project.rel(project.specs))
    finally:
        if collecting:
            gc.enable()
    return Outputs(out or project.out, files, full), result.warnings


def _render_backend(backend) -> str:
    """``render_backend``, remembered per module name and input hashes (see ``cache``)."""
    from .render import inputs_hash, render_backend

    key = cache.key("module", backend.module, inputs_hash(backend.inputs))
    text = cache.load("module", key)
    if not isinstance(text, str):
        text = render_backend(backend)
        cache.store("module", key, text)
    return text
