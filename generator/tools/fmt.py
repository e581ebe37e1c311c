"""``bcfg fmt [--check] [SPEC ...]``: rewrite specs in the one canonical layout.

Every file is read and formatted before any is written, so a run with an
unreadable or unparseable spec writes nothing. Exit 0 formatted (or already
canonical), 1 with ``--check`` when some file would change, 2 on errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..cli import ExitCode, Report
from ..config import find_project, spec_paths
from ..diagnostics import Diagnostic, Severity, SpecError
from ..infra.write import atomic_write
from ..lang.fmt import checked_format
from ..lang.parse import source_error
from ..sources import FileSources, SourceError


def _one_line(diag: Diagnostic) -> str:
    where = f"{diag.span}: " if diag.span else ""
    hint = f" ({diag.hint})" if diag.hint else ""
    return f"{where}{diag.message}{hint}"


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    project = find_project()
    paths = spec_paths(args.specs, project.specs)
    if not paths:
        where = ", ".join(args.specs) if args.specs else project.rel(project.specs) + "/"
        report.message(f"no .bcfg files in {where}")
        return ExitCode.ERROR
    files = FileSources(project.root)
    errors: list[str] = []
    changed: list[tuple[Path, str]] = []
    for path in paths:
        shown = project.rel(path)
        if not path.is_file():
            errors.append(f"no such spec file: {shown}")
            continue
        try:
            try:
                text = files.read(files.name(path)).text
            except SourceError as exc:
                raise source_error(exc) from None
            result = checked_format(text, shown)
        except SpecError as exc:
            errors.extend(_one_line(d) for d in exc.diagnostics if d.severity == Severity.ERROR)
            continue
        if result.encode("utf-8") != path.read_bytes():  # exact bytes: CRLF or a BOM is a change
            changed.append((path, result))
    if errors:
        for e in errors:
            report.message(e)
        report.message(f"{len(errors)} error{'s' if len(errors) != 1 else ''}; nothing was written")
        return ExitCode.ERROR
    if args.check:
        for path, _ in changed:
            report.result(f"would reformat {project.rel(path)}\n")
        if changed:
            report.info(
                f"bcfg fmt --check: {len(changed)} of {len(paths)} file(s) would be reformatted; run `bcfg fmt`"
            )
            return ExitCode.FINDINGS
        report.info(f"bcfg fmt --check: {len(paths)} file(s) already formatted")
        return ExitCode.OK
    for path, result in changed:
        atomic_write(path, result)
        report.info(f"reformatted {project.rel(path)}")
    report.info(
        f"bcfg fmt: {len(changed)} file(s) reformatted, {len(paths) - len(changed)} unchanged"
    )
    return ExitCode.OK
