"""Diagnostics: errors and warnings about specs, reported as ``file:line:col``.

Every problem in a spec becomes a ``Diagnostic``. Stages collect them and raise
one ``SpecError`` holding all of a run's errors, so a user sees every
independent mistake at once; the CLI prints them in the compiler format::

    specs/fbgemm.bcfg:12:5: error: unknown symbol 'torch.nn.Conv2dd'
       12 |     pattern torch.nn.Conv2dd {
          |             ^^^^^^^^^^^^^^^^
    hint: did you mean 'torch.nn.Conv2d'?
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .model import Span

MAX_ERRORS = 50


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    span: Span | None
    message: str
    hint: str | None = None

    def format(self, source: str | None = None, color: bool = False) -> str:
        """Render as ``file:line:col: severity: message``, the source line, a caret, a hint."""
        where = f"{self.span}: " if self.span else ""
        sev = self.severity
        if color:
            code = "31" if sev == "error" else "33"
            sev = f"\033[1;{code}m{sev}\033[0m"
        lines = [f"{where}{sev}: {self.message}"]
        excerpt = _excerpt(self.span, source) if self.span else None
        if excerpt:
            lines.extend(excerpt)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


def _excerpt(span: Span, source: str | None) -> list[str] | None:
    if source is None:
        try:
            source = Path(span.file).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None
    src_lines = source.splitlines()
    if not 1 <= span.line <= len(src_lines):
        return None
    text = src_lines[span.line - 1].replace("\t", " ")
    end = span.end_column if span.end_line == span.line else len(text) + 1
    width = max(1, end - span.column)
    gutter = f"{span.line:>5} | "
    return [
        f"{gutter}{text}",
        " " * (len(gutter) - 2) + "| " + " " * (span.column - 1) + "^" * width,
    ]


class SpecError(Exception):
    """One or more errors in the specs; nothing was written."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


class Collector:
    """Gathers the diagnostics of one stage; ``raise_if_errors`` ends the stage."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def error(self, span: Span | None, message: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic("error", span, message, hint))
        if self.error_count >= MAX_ERRORS:
            raise SpecError(self.diagnostics)

    def warning(self, span: Span | None, message: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic("warning", span, message, hint))

    @property
    def error_count(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def raise_if_errors(self) -> None:
        if self.error_count:
            raise SpecError(self.diagnostics)


def use_color(stream=sys.stderr) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set."""
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()
