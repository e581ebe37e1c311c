"""``bcfg generate`` and ``bcfg check``: compile the specs; write the modules and docs, or compare them.

A full run first asks the fast check (``infra.fastcheck``) whether this very
tree was found up to date before; if so it stops there, importing neither
torch nor lark, jinja2 or black.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from ..cli import ExitCode, Report, UsageError
from ..config import project_of
from ..diagnostics import Diagnostic, Severity, SpecError
from ..infra import fastcheck
from ..infra.write import diff_outputs, hand_edited, write_all


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    check = args.command == "check"
    specs = _named_specs(args)
    project = project_of(specs or [])
    out_dir = args.out or project.out
    report.detail(
        f"project {project.root}: specs in {project.rel(project.specs)}/, output in "
        f"{project.rel(out_dir)}/, allowed modules {', '.join(project.allow)}, "
        f"imported from {', '.join(project.import_path())}"
    )
    strict = "--strict" if args.strict else "[tool.bcfg] strict" if project.strict else None
    # Before the fast check, which asks where the import system finds the allowed modules.
    project.make_importable()
    if specs is None:
        # The fast path: a full run already found this very tree up to date.
        paths = project.spec_files()
        hit = fastcheck.verified(project, paths, out_dir)
        if hit is not None and not (strict and hit.warnings):
            report.detail("fast check: these very specs and outputs were verified before")
            for plain, colored in hit.warnings:
                report.replay(colored if report.color else plain)
            if check:
                report.info(f"bcfg check: {hit.files} generated file(s) up to date")
            else:
                report.info(f"bcfg generate: {hit.files} file(s), 0 written, 0 removed")
            return ExitCode.OK
        before = fastcheck.snapshot(project, paths)
    from ..pipeline import compile_project, paused_gc

    with paused_gc():
        outputs, warnings, sources = compile_project(project, specs, args.out)
    if strict and warnings:
        raise SpecError([_as_error(w, strict) for w in warnings], sources)
    report.diagnostics(warnings, sources)
    count = sum(len(o.files) for o in outputs)
    if check:
        diffs = [d for o in outputs for d in diff_outputs(o, project.rel)]
        if diffs:
            edited = [project.rel(p) for o in outputs for p in hand_edited(o)]
            _report_drift(diffs, edited, report, getattr(args, "diff", False))
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
    if specs is not None and args.out is None and project.docs is not None:
        # The docs cover every spec: a run over some of them leaves them as they were.
        report.info(
            f"bcfg generate: {project.rel(project.docs)}/ not updated (it covers every spec); "
            "`bcfg generate` without spec names writes it"
        )
    return ExitCode.OK


def _named_specs(args: argparse.Namespace) -> list[Path] | None:
    """The spec files named on the command line, or None for a full run."""
    if not getattr(args, "specs", None):
        return None
    missing = [s for s in args.specs if not (s.exists() or s.is_symlink())]
    if missing:
        raise UsageError(f"no such spec file: {missing[0]}")
    return list(args.specs)


def _report_drift(diffs: list[str], edited: list[str], report: Report, show: bool) -> None:
    """``bcfg check``'s findings: per file, its name and how many lines differ, or (``show``:
    ``--diff``) its diff; an annotation with --output-format github.

    ``edited`` names the files edited by hand (their body no longer matches their hash).
    """
    for d in diffs:
        if report.output_format == "github":
            file = d.split("\n", 1)[0].removeprefix("--- ").rsplit(" (", 1)[0]
            how = "was edited by hand" if file in edited else "is out of date"
            report.finding(file, f"{file} {how}; run bcfg generate")
        report.result(d if show else _summary(d))
    for file in edited:
        report.info(
            f"bcfg check: {file} was edited by hand (its body no longer matches the hash "
            "in its header); edit the specs instead"
        )
    report.info(f"bcfg check: {len(diffs)} generated file(s) out of date; run `bcfg generate`")


def _summary(diff: str) -> str:
    """A file's unified diff as its two header lines and one line of counts (a missing or
    stale file's diff is that short already)."""
    lines = diff.splitlines(keepends=True)
    body = lines[2:]
    if len(body) == 1 and body[0].startswith("@@ ") and not body[0].startswith("@@ -"):
        return diff  # "@@ missing file: ... @@", "@@ stale: ... @@"
    removed = sum(1 for x in body if x.startswith("-"))
    added = sum(1 for x in body if x.startswith("+"))
    counts = f"@@ {removed} line(s) on disk differ from {added} generated; --diff shows them @@\n"
    return "".join(lines[:2]) + counts


def _as_error(warning: Diagnostic, strict: str) -> Diagnostic:
    """A warning reported as an error, saying which setting made it one."""
    note = f"a warning, made an error by {strict}"
    return replace(warning, severity=Severity.ERROR, notes=(*warning.notes, note))
