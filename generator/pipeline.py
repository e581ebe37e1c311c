"""The pipeline, stage by stage: specs -> parse -> resolve/check -> render -> outputs."""

from __future__ import annotations

from pathlib import Path

from .config import Project
from .diagnostics import Diagnostic, SpecError
from .render import render_backend, render_init
from .resolve import resolve_specs
from .write import Outputs


def spec_files(project: Project) -> list[Path]:
    """Every ``*.bcfg`` directly in the project's spec folder, sorted."""
    if not project.specs.is_dir():
        raise SpecError([Diagnostic("error", None, f"no spec folder {project.rel(project.specs)}/", "create it or set [tool.bcfg] specs in pyproject.toml")])
    return sorted(project.specs.glob("*.bcfg"))


def compile_project(project: Project, specs: list[Path] | None = None, out: Path | None = None) -> tuple[Outputs, list[Diagnostic]]:
    """Render the generated files of ``specs`` (all specs if None) in memory.

    Raises SpecError, with every error found, if any spec is wrong.
    """
    full = specs is None
    paths = spec_files(project) if specs is None else specs
    result = resolve_specs(project.root, paths, project.allow)
    files = {f"{b.module}.py": render_backend(b) for b in result.backends}
    if full:
        files["__init__.py"] = render_init(result.backends, project.rel(project.specs))
    return Outputs(out or project.out, files, full), result.warnings
