"""``bcfg fmt [--check | --diff] [SPEC ... | -]``: rewrite specs in the one canonical layout.

Every file is read and formatted before any is written. A file that cannot be
read or does not parse is reported in the compiler format and left alone; the
others are still formatted (and written, without ``--check``/``--diff``).
``-`` reads a spec on standard input and writes it, formatted, on standard
output (for editors; ``--stdin-filename`` names it in messages). Exit 0
formatted (or already canonical), 1 with ``--check``/``--diff`` when some file
would change, 2 when some file could not be formatted.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import dataclass
from pathlib import Path

from ..cli import ExitCode, Report, UsageError
from ..config import Project, project_of, spec_paths
from ..diagnostics import Diagnostic, Severity, SpecError
from ..infra.write import atomic_write
from ..lang.fmt import checked_format
from ..lang.parse import source_error
from ..sources import MAX_SPEC_BYTES, SourceError, Span, decode, read_regular_file


@dataclass
class _Outcome:
    """What formatting one file gave: its display name, the bytes read and the text to write."""

    shown: str
    data: bytes
    result: str
    path: Path | None = None

    @property
    def changed(self) -> bool:  # exact bytes: CRLF or a BOM is a change
        return self.result.encode("utf-8") != self.data

    def diff(self) -> str:
        old = self.data.decode("utf-8-sig", "replace").splitlines(keepends=True)
        new = self.result.splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"{self.shown} (original)", self.shown))


def _format(data: bytes, shown: str, path: Path | None = None) -> _Outcome:
    """Format one spec's bytes; SpecError (located) if they are not a spec."""
    try:
        text = decode(data, shown)
    except SourceError as exc:
        raise source_error(exc) from None
    return _Outcome(shown, data, checked_format(text, shown), path)


def _read(path: Path, shown: str) -> bytes:
    try:
        return read_regular_file(path, MAX_SPEC_BYTES)
    except OSError as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
        raise SpecError(
            [Diagnostic(Severity.ERROR, Span(shown, 1, 1, 1, 1), f"cannot read {shown}: {why}")]
        ) from None


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    if args.specs == ["-"]:
        return _stdin(args, report)
    if "-" in args.specs:
        report.message("'-' (standard input) cannot be named with other files")
        return ExitCode.ERROR
    named = [Path(a) for a in args.specs]
    project = project_of(named)
    paths = spec_paths(args.specs, project.specs)
    if not paths:
        where = ", ".join(args.specs) if args.specs else project.rel(project.specs) + "/"
        report.message(f"no .bcfg files in {where}")
        return ExitCode.ERROR
    outcomes, failed = _format_all(project, paths, report)
    changed = [o for o in outcomes if o.changed]
    if args.check or args.diff:
        for o in changed:
            report.finding(o.shown, f"would reformat {o.shown}")
            if args.diff:
                report.result(o.diff())
        flag = "--diff" if args.diff else "--check"
        report.info(f"bcfg fmt {flag}: " + _would(len(changed), len(paths), failed))
        return ExitCode.ERROR if failed else ExitCode.FINDINGS if changed else ExitCode.OK
    for o in changed:
        assert o.path is not None
        atomic_write(o.path, o.result)
        report.info(f"reformatted {o.shown}")
    unchanged = len(paths) - len(changed) - failed
    summary = f"{len(changed)} file(s) reformatted, {unchanged} unchanged"
    if failed:
        summary += f", {failed} could not be formatted (errors above; left as they were)"
    report.info(f"bcfg fmt: {summary}")
    return ExitCode.ERROR if failed else ExitCode.OK


def _format_all(project: Project, paths: list[Path], report: Report) -> tuple[list[_Outcome], int]:
    """Format every file; report (and count) the ones that cannot be formatted."""
    outcomes: list[_Outcome] = []
    failed = 0
    for path in paths:
        shown = project.rel(path)
        try:
            outcomes.append(_format(_read(path, shown), shown, path))
        except SpecError as exc:
            report.diagnostics(exc.diagnostics, exc.sources)
            failed += 1
    return outcomes, failed


def _would(changed: int, total: int, failed: int) -> str:
    """The summary of a run that writes nothing."""
    if not changed and not failed:
        return f"{total} file(s) already formatted"
    parts = [f"{changed} of {total} file(s) would be reformatted"]
    if failed:
        parts.append(f"{failed} could not be formatted (errors above)")
    if changed:
        parts.append("run `bcfg fmt`")
    return "; ".join(parts)


def _stdin(args: argparse.Namespace, report: Report) -> ExitCode:
    """``bcfg fmt -``: standard input to standard output, for editors."""
    shown = args.stdin_filename or "<stdin>"
    data = read_stdin(shown)
    try:
        outcome = _format(data, shown)
    except SpecError as exc:
        report.diagnostics(exc.diagnostics, exc.sources)
        return ExitCode.ERROR
    if args.diff:
        report.result(outcome.diff())
    if args.check or args.diff:
        return ExitCode.FINDINGS if outcome.changed else ExitCode.OK
    report.result(outcome.result)
    return ExitCode.OK


# How far past the limit standard input is read to say how large it is (then: "over").
MAX_COUNTED = 1 << 30


def read_stdin(shown: str) -> bytes:
    """Standard input, at most ``MAX_SPEC_BYTES`` + 1 bytes of it kept: the rest is read only to
    say how large it is (up to ``MAX_COUNTED``). A closed or unreadable standard input is a
    UsageError; one too large a SpecError with its size, as a file's would be."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("cannot read standard input: it is closed")
    try:
        data = stream.read(MAX_SPEC_BYTES + 1)
        size = len(data)
        if size > MAX_SPEC_BYTES:
            while size <= MAX_COUNTED and (chunk := stream.read(1 << 20)):
                size += len(chunk)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "it is closed"
        raise UsageError(f"cannot read standard input: {why}") from None
    if size > MAX_SPEC_BYTES:
        try:
            decode(data, shown, size, more=size > MAX_COUNTED)
        except SourceError as exc:
            raise source_error(exc) from None
    return data
