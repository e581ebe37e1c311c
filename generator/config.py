"""Project settings: ``[tool.bcfg]`` in pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .symbols import DEFAULT_ALLOW


@dataclass(frozen=True)
class Project:
    """Where specs are read and generated modules written, relative to ``root``."""

    root: Path
    specs: Path
    out: Path
    allow: tuple[str, ...]

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()


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
