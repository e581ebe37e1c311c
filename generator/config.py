"""Project settings: ``[tool.bcfg]`` in pyproject.toml, and where the project's specs are.

Standard library only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import Diagnostic, Severity, SpecError
from .sources import display_name, resolved_path

# Top-level modules every spec may name; [tool.bcfg] allow adds more.
DEFAULT_ALLOW = ("torch", "operator")


@dataclass(frozen=True)
class Project:
    """Where specs are read and generated modules written, relative to ``root``."""

    root: Path
    specs: Path
    out: Path
    allow: tuple[str, ...]

    def rel(self, path: Path) -> str:
        """``path`` as messages show it: relative to the project root, else absolute."""
        return display_name(path, self.root)

    def spec_files(self) -> list[Path]:
        """Every ``*.bcfg`` directly in the spec folder, sorted; SpecError if there is no folder.

        A folder that cannot be read is an error, never "no specs": a full run
        removes the modules of specs that are gone, and must not remove them all
        because it could not look.
        """
        if not self.specs.is_dir():
            error = Diagnostic(
                Severity.ERROR,
                None,
                f"no spec folder {self.rel(self.specs)}/",
                "create it or set [tool.bcfg] specs in pyproject.toml",
            )
            raise SpecError([error])
        return list_specs(self.specs, self.rel)


def list_specs(folder: Path, label: Callable[[Path], str] = str) -> list[Path]:
    """The ``*.bcfg`` entries of ``folder``, sorted; SpecError if the folder cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith(".bcfg")]
    except OSError as exc:
        error = Diagnostic(
            Severity.ERROR,
            None,
            f"cannot read the spec folder {label(folder)}/: {exc.strerror or exc}",
            "make it readable; nothing was written or removed",
        )
        raise SpecError([error]) from None
    return [folder / n for n in sorted(names)]


def spec_paths(args: list[str], default_dir: Path) -> list[Path]:
    """Spec files named on the command line (folders mean their ``*.bcfg``), or the default folder's."""
    out: list[Path] = []
    for a in args or [str(default_dir)]:
        p = Path(a)
        if p.is_dir():
            out.extend(list_specs(p))
        else:
            out.append(p)
    return out


class ConfigError(Exception):
    """pyproject.toml is unreadable or its [tool.bcfg] table is malformed."""


def project_of(paths: list[Path]) -> Project:
    """The project the files named belong to (from their folder, as black finds its root),
    or the working directory's when none is named; ConfigError if they are in two projects."""
    if not paths:
        return find_project()
    projects: dict[Path, Project] = {}
    for path in paths:
        project = find_project(path if path.is_dir() else path.parent)
        projects.setdefault(project.root, project)
    if len(projects) > 1:
        roots = " and ".join(str(r) for r in sorted(projects))
        raise ConfigError(f"the files named belong to two projects ({roots}); name one project's")
    return next(iter(projects.values()))


def find_project(start: Path | None = None) -> Project:
    """Find the nearest pyproject.toml with a [tool.bcfg] table; default to ``start``."""
    start = resolved_path(start or Path.cwd())
    for d in [start, *start.parents]:
        pp = d / "pyproject.toml"
        if pp.is_file():
            try:
                data = tomllib.loads(pp.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{pp}: cannot read it: {exc}") from None
            table = data.get("tool", {}).get("bcfg")
            if table is not None:
                return _project(d, table, pp)
    return Project(start, start / "specs", start / "generated", DEFAULT_ALLOW)


def _project(root: Path, table: dict, pp: Path) -> Project:
    def string(key: str, default: str) -> str:
        v = table.get(key, default)
        if not isinstance(v, str):
            raise ConfigError(f"{pp}: [tool.bcfg] {key} must be a string")
        return v

    extra = table.get("allow", [])
    if not isinstance(extra, list) or not all(
        isinstance(x, str) and x.isidentifier() for x in extra
    ):
        raise ConfigError(f"{pp}: [tool.bcfg] allow must be a list of top-level module names")
    allow = tuple(dict.fromkeys([*DEFAULT_ALLOW, *extra]))
    return Project(root, root / string("specs", "specs"), root / string("out", "generated"), allow)
