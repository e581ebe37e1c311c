"""The ``bcfg import`` command: print or write the spec; 2 on any failure."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...cli import ExitCode, Report, UsageError
from ...config import find_project
from ...live.targets import ImportFailure
from .builder import import_target


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    output: str | None = args.output
    allow = find_project().allow
    try:
        result = import_target(args.target, allow)
    except ImportFailure as exc:
        raise UsageError(str(exc)) from None
    for note in result.notes:
        report.message(f"note: {note}")
    shown = output if output not in (None, "-") else "<stdout>"
    for d in result.findings:
        where = f"{shown}:{d.span.line}:{d.span.column}" if d.span else f"{shown}:0:0"
        report.message(f"{where}: {d.severity}: {d.message}")
    if output is None or output == "-":
        report.result(result.text)
    else:
        try:
            Path(output).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror}") from None
        lines = sum(
            1 for ln in result.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
        )
        report.message(
            f"wrote {output}: backend {result.module}, {result.configs} pattern configs in {lines} lines"
        )
    todo = []
    if result.not_allowed:
        todo.append("extend [tool.bcfg] allow")
    if result.errors:
        todo.append(
            f"fix the {result.errors} error(s) above in the spec (torch accepts them, bcfg's checks do not)"
        )
    if todo:
        report.message(f"before bcfg generate accepts the spec: {'; '.join(todo)}")
        return ExitCode.FINDINGS
    return ExitCode.OK
