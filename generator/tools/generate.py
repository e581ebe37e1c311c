"""``bcfg generate`` and ``bcfg check``: compile the specs; write the modules and docs, or compare them.

A full run first asks the fast check (``infra.fastcheck``) whether this very
tree was found up to date before; if so it stops there, importing neither
torch nor lark, jinja2 or black.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..cli import ExitCode, Report, UsageError
from ..config import find_project
from ..infra import fastcheck
from ..infra.write import DOCS, Outputs, diff_outputs, write_outputs


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    check = args.command == "check"
    project = find_project()
    specs = None
    if getattr(args, "specs", None):
        missing = [s for s in args.specs if not s.is_file()]
        if missing:
            raise UsageError(f"no such spec file: {missing[0]}")
        specs = list(args.specs)
    out_dir = args.out or project.out
    if specs is None:
        # The fast path: a full run already found this very tree up to date.
        paths = project.spec_files()
        hit = fastcheck.verified(project, paths, out_dir)
        if hit is not None:
            for plain, colored in hit.warnings:
                report.info(colored if report.color else plain)
            if check:
                report.info(f"bcfg check: {hit.files} generated file(s) up to date")
            else:
                report.info(f"bcfg generate: {hit.files} file(s), 0 written, 0 removed")
            return ExitCode.OK
        before = fastcheck.snapshot(project, paths)
    from ..pipeline import compile_project, paused_gc

    with paused_gc():
        outputs, warnings, sources = compile_project(project, specs, args.out)
    report.diagnostics(warnings, sources)
    count = sum(len(o.files) for o in outputs)
    if check:
        diffs = [d for o in outputs for d in diff_outputs(o, project.rel)]
        if diffs:
            for d in diffs:
                report.result(d)
            report.info(
                f"bcfg check: {len(diffs)} generated file(s) out of date; run `bcfg generate`"
            )
            return ExitCode.FINDINGS
        if specs is None:
            fastcheck.record(project, paths, out_dir, before, outputs, warnings, sources)
        report.info(f"bcfg check: {count} generated file(s) up to date")
        return ExitCode.OK
    written, removed = write_all(outputs, project.rel)
    if specs is None:
        fastcheck.record(project, paths, out_dir, before, outputs, warnings, sources)
    for p in written:
        report.info(f"wrote {project.rel(p)}")
    for p in removed:
        report.info(f"removed {project.rel(p)}")
    report.info(f"bcfg generate: {count} file(s), {len(written)} written, {len(removed)} removed")
    return ExitCode.OK


def write_all(
    outputs: list[Outputs], label: Callable[[Path], str]
) -> tuple[list[Path], list[Path]]:
    """Write every output folder; refuse, before writing anything, to overwrite docs bcfg did not write.

    A folder called docs/ often holds a project's own README.md or index.html.
    """
    for o in outputs:
        foreign = o.foreign() if o.owned is DOCS else []
        if foreign:
            raise UsageError(
                f"{label(foreign[0])} was not written by bcfg (its first line is not bcfg's mark); "
                "move it away, or set [tool.bcfg] docs to another folder, or to false for no docs"
            )
    written: list[Path] = []
    removed: list[Path] = []
    for o in outputs:
        w, r = write_outputs(o)
        written += w
        removed += r
    return written, removed
