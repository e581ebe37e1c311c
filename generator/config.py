"""Project settings: ``[tool.bcfg]`` in pyproject.toml, and where the project's specs are.

Standard library only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import Diagnostic, Severity, SpecError
from .sources import display_name

# Top-level modules every spec may name; [tool.bcfg] allow adds more.
DEFAULT_ALLOW = ("torch", "operator")


@dataclass(frozen=True)
class Project:
    """Where specs are read and generated modules and docs written, relative to ``root``.

    ``docs`` is None when ``[tool.bcfg] docs = false`` turns the docs off.
    """

    root: Path
    specs: Path
    out: Path
    allow: tuple[str, ...]
    docs: Path | None = None

    def rel(self, path: Path) -> str:
        """``path`` as messages show it: relative to the project root, else absolute."""
        return display_name(path, self.root)

    def spec_files(self) -> list[Path]:
        """Every ``*.bcfg`` directly in the spec folder, sorted; SpecError if there is no folder."""
        if not self.specs.is_dir():
            error = Diagnostic(
                Severity.ERROR,
                None,
                f"no spec folder {self.rel(self.specs)}/",
                "create it or set [tool.bcfg] specs in pyproject.toml",
            )
            raise SpecError([error])
        return sorted(self.specs.glob("*.bcfg"))


def spec_paths(args: list[str], default_dir: Path) -> list[Path]:
    """Spec files named on the command line (folders mean their ``*.bcfg``), or the default folder's."""
    out: list[Path] = []
    for a in args or [str(default_dir)]:
        p = Path(a)
        if p.is_dir():
            out.extend(sorted(p.glob("*.bcfg")))
        else:
            out.append(p)
    return out


class ConfigError(Exception):
    """pyproject.toml is unreadable or its [tool.bcfg] table is malformed."""


def find_project(start: Path | None = None) -> Project:
    """Find the nearest pyproject.toml with a [tool.bcfg] table; default to ``start``."""
    start = (start or Path.cwd()).resolve()
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
    return Project(start, start / "specs", start / "generated", DEFAULT_ALLOW, start / "docs")


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
    docs = table.get("docs", "docs")
    if docs is not False and (not isinstance(docs, str) or not docs.strip()):
        raise ConfigError(
            f"{pp}: [tool.bcfg] docs must be a folder name, or false to write no docs"
        )
    return Project(
        root,
        root / string("specs", "specs"),
        root / string("out", "generated"),
        allow,
        None if docs is False else root / docs,
    )
