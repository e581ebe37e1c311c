"""Diagnostics: errors and warnings about specs, reported as ``file:line:col``.

Every problem in a spec becomes a ``Diagnostic``. Stages collect them and raise
one ``SpecError`` holding all of a run's errors (up to ``MAX_ERRORS``), so a
user sees every independent mistake at once; the CLI prints them in the
compiler format::

    specs/fbgemm.bcfg:12:5: error: unknown symbol 'torch.nn.Conv2dd'
       12 |     pattern torch.nn.Conv2dd {
          |             ^^^^^^^^^^^^^^^^
    hint: did you mean 'torch.nn.Conv2d'?

Warnings have the same form with ``warning:``; a ``note:`` line may follow with
where a group was used from.

What a message quotes comes from specs, file names and the user's modules, so
``printable`` escapes it once, here, for every message of every command: a
control character, an escape sequence or a newline in a spec string or a file
name is shown as ``\\x1b`` or ``\\n`` and can neither drive the terminal nor
forge a ``file:line:col: error:`` line of its own.

Nothing here is global: the texts excerpts are cut from travel with the
diagnostics (``SpecError.sources``, ``Collector.sources``), so two runs in one
process (a language server's) never see each other's files. Standard library
only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import IO

from .escape import terminal
from .sources import Span

MAX_ERRORS = 50


def printable(text: str) -> str:
    """``text`` for a terminal (``escape.terminal``): every character that is not printable escaped
    as Python would write it (``\\n``, ``\\x1b``, ``\\u202e``).

    Printable text, quotes and backslashes are left as they are, so text
    already escaped (a ``repr``) is not escaped twice.
    """
    return terminal(text)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    span: Span | None
    message: str
    hint: str | None = None
    notes: tuple[str, ...] = ()

    def format(self, source: str | None = None, color: bool = False) -> str:
        """Render as ``file:line:col: severity: message``, the source line, a caret, a hint."""
        where = f"{printable(str(self.span))}: " if self.span else ""
        sev = str(self.severity)
        bold = _paint(color, "1")
        if color:
            code = {"error": "1;31", "warning": "1;33"}.get(sev, "1;36")
            sev = _paint(color, code)(sev)
        lines = [f"{bold(where)}{sev}: {bold(printable(self.message))}"]
        excerpt = _excerpt(self.span, source) if self.span else None
        if excerpt:
            lines.append(excerpt[0])
            lines.append(excerpt[1][: excerpt[2]] + _paint(color, "1;32")(excerpt[1][excerpt[2] :]))
        if self.hint:
            lines.append(f"{_paint(color, '1;36')('hint:')} {printable(self.hint)}")
        lines.extend(f"{_paint(color, '1;36')('note:')} {printable(n)}" for n in self.notes)
        return "\n".join(lines)

    def format_concise(self) -> str:
        """One line: ``file:line:col: severity: message (hint)``."""
        where = f"{printable(str(self.span))}: " if self.span else ""
        hint = f" (hint: {printable(self.hint)})" if self.hint else ""
        return f"{where}{self.severity}: {printable(self.message)}{hint}"

    def format_github(self, title: str = "bcfg") -> str:
        """A GitHub Actions workflow command: an annotation on the file and line in a pull request."""
        props = {"title": title}
        if self.span is not None:
            s = self.span
            props = {
                "file": s.file,
                "line": str(s.line),
                "col": str(s.column),
                "endLine": str(s.end_line),
                "endColumn": str(s.end_column),
                **props,
            }
        text = "\n".join(
            [self.message]
            + ([f"hint: {self.hint}"] if self.hint else [])
            + [f"note: {n}" for n in self.notes]
        )
        return github_command(str(self.severity), text, props)


# What ``--output-format`` may say: the compiler format with excerpts, one line
# per diagnostic, or GitHub Actions annotations.
OUTPUT_FORMATS = ("full", "concise", "github")


def github_command(severity: str, message: str, props: Mapping[str, str]) -> str:
    """``::error file=...,line=...::message``, escaped as GitHub's workflow commands require."""
    kind = {"error": "error", "warning": "warning"}.get(severity, "notice")

    def data(v: str) -> str:
        return printable(v.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))

    def prop(v: str) -> str:
        return data(v).replace(":", "%3A").replace(",", "%2C")

    listed = ",".join(f"{k}={prop(v)}" for k, v in props.items())
    return f"::{kind} {listed}::{data(message)}"


def _paint(color: bool, code: str) -> Callable[[str], str]:
    if not color:
        return lambda s: s
    return lambda s: f"\033[{code}m{s}\033[0m" if s else s


def _excerpt(span: Span, source: str | None) -> tuple[str, str, int] | None:
    """The source line of ``span``, a caret line under it, and where the carets start."""
    if source is None:
        return None
    src_lines = source.split("\n")
    if not 1 <= span.line <= len(src_lines):
        return None
    text = src_lines[span.line - 1].rstrip("\r").replace("\t", " ")
    text = "".join(c if c.isprintable() else " " for c in text)
    if len(text) > 200:  # a huge line: show the part around the span
        start = max(0, span.column - 60)
        shift = start - 4 if start else 0
        text = ("... " if start else "") + text[start : start + 160] + " ..."
    else:
        shift = 0
    column = span.column - shift
    end = span.end_column - shift if span.end_line == span.line else len(text) + 1
    width = max(1, min(end, len(text) + 1) - column)
    gutter = f"{span.line:>5} | "
    pad = " " * (len(gutter) - 2) + "| " + " " * (column - 1)
    return f"{gutter}{text}", pad + "^" * width, len(pad)


def format_all(
    diagnostics: Iterable[Diagnostic],
    sources: Mapping[str, str],
    color: bool = False,
    output_format: str = "full",
) -> list[str]:
    """Each diagnostic formatted, with its excerpt cut from ``sources`` (display name -> text)."""
    if output_format == "concise":
        return [d.format_concise() for d in diagnostics]
    if output_format == "github":
        return [d.format_github() for d in diagnostics]
    return [
        d.format(sources.get(d.span.file) if d.span else None, color=color) for d in diagnostics
    ]


def print_all(
    diagnostics: Iterable[Diagnostic], sources: Mapping[str, str], stream: IO[str] | None = None
) -> None:
    """Print diagnostics to ``stream`` (stderr), in colour on a terminal."""
    stream = sys.stderr if stream is None else stream
    for text in format_all(diagnostics, sources, use_color(stream)):
        print(text, file=stream)


class SpecError(Exception):
    """One or more errors in the specs; nothing was written.

    ``sources`` holds the texts the diagnostics point into, for excerpts.
    """

    def __init__(self, diagnostics: list[Diagnostic], sources: Mapping[str, str] | None = None):
        self.diagnostics = diagnostics
        self.sources: dict[str, str] = dict(sources or {})
        super().__init__("\n".join(format_all(diagnostics, self.sources)))


class Collector:
    """Gathers the diagnostics of one stage, which raises ``SpecError`` with them if any is an error.

    The same message at the same place is kept once (a group used twice would
    otherwise report each of its mistakes twice). At ``MAX_ERRORS`` errors the
    stage stops with a note saying so.
    """

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.sources: dict[str, str] = {}  # the texts read, for excerpts
        self._seen: set[tuple[str, Span | None, str]] = set()

    def add(self, d: Diagnostic) -> None:
        key = (d.severity, d.span, d.message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.diagnostics.append(d)
        if d.severity == "error" and self.error_count >= MAX_ERRORS:
            self.diagnostics.append(
                Diagnostic(
                    Severity.NOTE,
                    None,
                    f"stopped after {MAX_ERRORS} errors; fix these and run again",
                )
            )
            raise SpecError(self.diagnostics, self.sources)

    def error(
        self, span: Span | None, message: str, hint: str | None = None, notes: tuple[str, ...] = ()
    ) -> None:
        self.add(Diagnostic(Severity.ERROR, span, message, hint, notes))

    def warning(
        self, span: Span | None, message: str, hint: str | None = None, notes: tuple[str, ...] = ()
    ) -> None:
        self.add(Diagnostic(Severity.WARNING, span, message, hint, notes))

    @property
    def error_count(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


def use_color(stream: IO[str] | None = None) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (https://no-color.org)."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
