"""Project settings: ``[tool.bcfg]`` in pyproject.toml, and where the project's specs are.

Standard library only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, Severity, SpecError
from .sources import Span, display_name, offset_span, read_regular_file, resolved_path

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
    strict: bool = False  # warnings are errors in generate and check
    pythonpath: tuple[Path, ...] = ()  # [tool.bcfg] pythonpath: folders besides the root
    # [tool.bcfg] examples: backends the support matrix sets apart (toys, not real targets),
    # and where their list is written, for a warning at a name no spec defines.
    examples: tuple[str, ...] = ()
    examples_at: Span | None = field(default=None, compare=False)

    def rel(self, path: Path) -> str:
        """``path`` as messages show it: relative to the project root, else absolute."""
        return display_name(path, self.root)

    def import_path(self) -> list[str]:
        """Where the project's own modules are imported from: the root, then ``[tool.bcfg]
        pythonpath``, as real paths, in that order."""
        folders = [self.root, *self.pythonpath]
        return list(dict.fromkeys(os.path.realpath(f) for f in folders))

    def make_importable(self) -> None:
        """Put ``import_path()`` first on ``sys.path``: THE rule for where user modules come from.

        Specs may name modules of the project (on ``[tool.bcfg] allow``). Every
        command that resolves specs (generate, check and its fast path, diff at
        every revision, explain, docs, compat, import's child process, the
        language server) imports them from these folders, whatever the working
        directory, with the ``bcfg`` script as with ``python -m generator``,
        and without PYTHONPATH. A folder already on the path moves to the front.
        """
        wanted = self.import_path()
        kept = [p for p in sys.path if os.path.realpath(p or os.curdir) not in wanted]
        if sys.path[: len(wanted)] != wanted:
            sys.path[:] = [*wanted, *kept]

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
    """pyproject.toml is unreadable, or the environment is not one bcfg can run in."""


# The torch releases bcfg is verified against (generated/ is byte for byte the
# same on each) and the range pyproject.toml declares; README, "Set up".
TORCH_VERIFIED = ("2.13.0", "2.14.1")
TORCH_RANGE = ((2, 13), (2, 15))  # >=2.13, <2.15


def torch_problem(version: str | None) -> str | None:
    """Why the installed torch (its version, not imported) cannot be used, or None."""
    supported = (
        f"bcfg supports torch >={TORCH_RANGE[0][0]}.{TORCH_RANGE[0][1]},"
        f"<{TORCH_RANGE[1][0]}.{TORCH_RANGE[1][1]} (verified: {', '.join(TORCH_VERIFIED)})"
    )
    fix = "install a supported CPU build: pip install torch==2.13.0 (see the README, Set up)"
    if version is None:
        return f"torch is not installed; {supported}: {fix}"
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        return f"cannot tell the version of torch {version!r}; {supported}"
    release = (int(found.group(1)), int(found.group(2)))
    if not TORCH_RANGE[0] <= release < TORCH_RANGE[1]:
        return f"this environment has torch {version}; {supported}: {fix}"
    return None


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
    """Find the nearest pyproject.toml with a [tool.bcfg] table; default to ``start``.

    A pyproject.toml that does not parse, or whose [tool.bcfg] table has an
    unknown key or a value of the wrong type, is a SpecError pointing into it.
    """
    start = resolved_path(start or Path.cwd())
    for d in [start, *start.parents]:
        pp = d / "pyproject.toml"
        if pp.is_file():
            shown = display_name(pp, Path.cwd())
            try:
                text = read_regular_file(pp, MAX_PYPROJECT_BYTES).decode("utf-8")
                data = tomllib.loads(text)
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{shown}: cannot read it: {exc}") from None
            except tomllib.TOMLDecodeError as exc:
                raise _toml_error(exc, shown, text) from None
            table = data.get("tool", {}).get("bcfg")
            if table is not None:
                return _project(d, table, shown, text)
    return Project(start, start / "specs", start / "generated", DEFAULT_ALLOW, start / "docs")


# A pyproject.toml larger than this is not read (it is not one).
MAX_PYPROJECT_BYTES = 1 << 22
# The keys of [tool.bcfg], with what each must hold.
KEYS = {
    "specs": "a folder name (a string)",
    "out": "a folder name (a string)",
    "allow": "a list of top-level module names",
    "docs": "a folder name, or false to write no docs",
    "strict": "true or false (true: warnings are errors in generate and check)",
    "pythonpath": "a list of folders, relative to the project root",
    "examples": "a list of backend names (the support matrix shows them apart, as examples)",
}


def _toml_error(exc: tomllib.TOMLDecodeError, shown: str, text: str) -> SpecError:
    found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
    message = re.sub(r" \(at line \d+, column \d+\)$|\(at end of document\)$", "", str(exc))
    line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
    span = Span(shown, line, column, line, column + 1)
    return SpecError(
        [Diagnostic(Severity.ERROR, span, f"pyproject.toml is not valid TOML: {message}")],
        {shown: text},
    )


def _key_span(shown: str, text: str, key: str, value: bool = False) -> Span:
    """Where ``key`` is set in the [tool.bcfg] table (its line), or the table's header.

    With ``value``, the value written after ``=`` on that line (a wrong value
    is pointed at, not its key).
    """
    table = re.search(r"^\s*\[tool\.bcfg\]", text, re.MULTILINE)
    start = table.end() if table else 0
    found = re.compile(
        rf"^[ \t]*({re.escape(key)}|\"{re.escape(key)}\")[ \t]*=[ \t]*([^\r\n]*)", re.MULTILINE
    )
    hit = found.search(text, start)
    group = 2 if value and hit and hit.group(2).strip() else 1
    pos = hit.start(group) if hit else (table.start() if table else 0)
    at = offset_span(text, pos, shown)
    width = len(hit.group(group).rstrip()) if hit else 1
    return Span(shown, at.line, at.column, at.line, at.column + width)


def _project(root: Path, table: dict, shown: str, text: str) -> Project:
    errors: list[Diagnostic] = []

    def bad(key: str, message: str, hint: str | None = None, value: bool = True) -> None:
        span = _key_span(shown, text, key, value)
        errors.append(Diagnostic(Severity.ERROR, span, message, hint))

    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"the keys are {', '.join(KEYS)}"
            bad(key, f"unknown key '{key}' in [tool.bcfg]", hint, value=False)
    for key in ("specs", "out"):
        if not isinstance(table.get(key, ""), str):
            bad(key, f"[tool.bcfg] {key} must be {KEYS[key]}")
    extra = _names(table, "allow", "my_kernels", bad)
    docs = table.get("docs", "docs")
    if docs is not False and (not isinstance(docs, str) or not docs.strip()):
        bad("docs", f"[tool.bcfg] docs must be {KEYS['docs']}", 'for example: docs = "docs"')
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        bad("strict", f"[tool.bcfg] strict must be {KEYS['strict']}", "for example: strict = true")
    folders = _pythonpath(root, table.get("pythonpath", []), bad)
    examples = _names(table, "examples", "my_backend", bad)
    if errors:
        raise SpecError(errors, {shown: text})
    allow = tuple(dict.fromkeys([*DEFAULT_ALLOW, *extra]))
    specs, out = table.get("specs", "specs"), table.get("out", "generated")
    docs_path = None if docs is False else root / docs
    where = _key_span(shown, text, "examples", value=True) if examples else None
    return Project(
        root, root / specs, root / out, allow, docs_path, strict, folders, tuple(examples), where
    )


def _names(table: dict, key: str, example: str, bad: Callable[..., None]) -> list[str]:
    """The list of names (Python identifiers) of ``key``, or a located error and none."""
    value = table.get(key, [])
    if isinstance(value, list) and all(isinstance(x, str) and x.isidentifier() for x in value):
        return value
    bad(key, f"[tool.bcfg] {key} must be {KEYS[key]}", f'for example: {key} = ["{example}"]')
    return []


def _pythonpath(root: Path, value: object, bad: Callable[..., None]) -> tuple[Path, ...]:
    """The folders of ``[tool.bcfg] pythonpath``; each must be relative and exist."""
    example = 'for example: pythonpath = ["src"]'
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        bad("pythonpath", f"[tool.bcfg] pythonpath must be {KEYS['pythonpath']}", example)
        return ()
    folders = []
    for entry in value:
        if Path(entry).is_absolute():
            bad(
                "pythonpath",
                f"[tool.bcfg] pythonpath: {entry!r} is absolute",
                "write it relative to the project root, so the project works wherever it is checked out",
            )
        elif not (root / entry).is_dir():
            bad(
                "pythonpath",
                f"[tool.bcfg] pythonpath: no folder {entry!r} in the project root",
                "create it or correct the path",
            )
        else:
            folders.append(root / entry)
    return tuple(folders)
