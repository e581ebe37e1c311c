"""``bcfg docs``: write the support matrix (``docs/``) from the specs, without the modules.

``bcfg generate`` writes the same files on every full run and ``bcfg check``
compares them; this command is for writing them alone, or somewhere else
(``--out``). Nothing it does needs torch when the names the specs use are in
the facts cache, nor black.
"""

from __future__ import annotations

import argparse

from ..cli import ExitCode, Report, UsageError
from ..config import find_project
from ..infra.write import write_all
from ..pipeline import analyze_project, docs_outputs, paused_gc


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    project = find_project()
    folder = args.out or project.docs
    if folder is None:
        raise UsageError(
            "[tool.bcfg] docs = false turns the docs off; pass --out DIR to write them"
        )
    with paused_gc():
        analysis = analyze_project(project)
        outputs = docs_outputs(project, analysis, folder)
    report.diagnostics(analysis.warnings, analysis.sources)
    backends, only = analysis.backends, analysis.pt2e_only
    written, removed = write_all([outputs], project.rel)
    for p in written:
        report.info(f"wrote {project.rel(p)}")
    for p in removed:
        report.info(f"removed {project.rel(p)}")
    report.message(
        f"{len(backends)} backend(s), {len(only)} PT2E-only target(s), "
        f"{len(outputs.files)} file(s) in {project.rel(folder)}/, "
        f"{len(written)} written, {len(removed)} removed"
    )
    return ExitCode.OK
