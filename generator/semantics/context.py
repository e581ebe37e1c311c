"""The context every resolution pass shares: diagnostics, torch facts, and where expansion is.

Passes take a ``Ctx``, not each other: ``ctx.fail(span, message)`` records an
error (with notes naming the ``use`` sites that led there) and returns the
``Fail`` exception that abandons the item being resolved, so that the driver
goes on with the next and every independent mistake is reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from ..diagnostics import Collector, Severity
from ..sources import Span, is_library
from . import model as m
from .checks import Finding
from .facts import TorchFacts


class Fail(Exception):
    """An error was recorded; abandon the current item and go on with the next."""


class Ctx:
    """Diagnostics, facts about torch's names, and the expansion trail of one analysis."""

    def __init__(self, facts: TorchFacts, diag: Collector | None = None):
        self.facts = facts
        self.diag = diag if diag is not None else Collector()
        self.trail: list[m.Step] = []  # the use/for steps being expanded, outermost first
        # Definitions referred to while recording, each with the span of the
        # reference (None: not recording); see ``recording_definitions``.
        self.recording: list[tuple[m.DefinitionRef, Span]] | None = None

    @contextmanager
    def recording_definitions(self) -> Iterator[list[tuple[m.DefinitionRef, Span]]]:
        """Record the definitions referred to inside the block, and those they refer to in turn.

        Yields the list they are added to, each with the span of the reference
        that led to it (a definition used by a definition: the outer reference).
        """
        saved, self.recording = self.recording, []
        try:
            yield self.recording
        finally:
            self.recording = saved

    def error(
        self,
        span: Span | None,
        message: str,
        hint: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        """Record an error; inside a group, notes say which ``use`` led there.

        An error inside a library bcfg ships (``bcfg:torch``) is shown at the
        innermost ``use`` in the user's own files, which is what they can
        change; the library's line is a note.
        """
        steps = [s for s in reversed(self.trail) if s.kind == m.StepKind.USE]
        if span is not None and is_library(span.file):
            mine = next((s for s in steps if not is_library(s.span.file)), None)
            if mine is not None:
                notes = (*notes, f"at {span} in bcfg's library")
                span = mine.span
        uses = tuple(f"in '{s.text}' at {s.span}" for s in steps)
        self.diag.error(span, message, hint, notes + uses)

    def fail(
        self,
        span: Span | None,
        message: str,
        hint: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> Fail:
        """Record an error and return the ``Fail`` to raise: ``raise ctx.fail(...)``."""
        self.error(span, message, hint, notes)
        return Fail()

    def warning(self, span: Span | None, message: str, hint: str | None = None) -> None:
        self.diag.warning(span, message, hint)

    def report(self, findings: Iterable[Finding]) -> bool:
        """Report the findings of a check; True if any was an error."""
        failed = False
        for x in findings:
            if x.severity == Severity.ERROR:
                self.error(x.span, x.message, x.hint)
                failed = True
            else:
                self.warning(x.span, x.message, x.hint)
        return failed

    @staticmethod
    def suggest(text: str, pool: Iterable[str]) -> str | None:
        """A did-you-mean hint: the closest name of ``pool``, if any is close.

        Short names get a lower bar: one wrong character of two (``w9`` for
        ``w8``) is as close as a name that short can be.
        """
        cutoff = 0.5 if len(text) <= 2 else 0.7
        close = difflib.get_close_matches(text, sorted(set(pool)), n=1, cutoff=cutoff)
        return f"did you mean '{close[0]}'?" if close else None
