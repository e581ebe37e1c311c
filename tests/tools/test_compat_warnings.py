"""``bcfg compat BACKEND`` shows the warnings of BACKEND's spec and counts the others in one
line (issue 53.9: every spec's warnings were repeated on every compat run, for unrelated
backends too); ``-v`` shows them all."""

from __future__ import annotations

from types import SimpleNamespace

from generator.diagnostics import Diagnostic, Severity
from generator.sources import Span
from generator.tools.compat.command import concerned_warnings


class FakeReport:
    def __init__(self, verbosity: int) -> None:
        self.verbosity = verbosity
        self.shown: list[Diagnostic] = []
        self.messages: list[str] = []

    def diagnostics(self, diagnostics, sources) -> None:
        self.shown.extend(diagnostics)

    def message(self, text: str) -> None:
        self.messages.append(text)


def warning(file: str) -> Diagnostic:
    return Diagnostic(Severity.WARNING, Span(file, 1, 1, 1, 2), f"in {file}")


def test_only_the_commands_specs_warnings_and_a_count_of_the_others():
    analysis = SimpleNamespace(
        warnings=[warning("specs/npu.bcfg"), warning("specs/x86.bcfg"), warning("specs/y.bcfg")],
        sources={},
    )
    report = FakeReport(0)
    concerned_warnings(report, analysis, "specs/npu.bcfg")
    assert [d.message for d in report.shown] == ["in specs/npu.bcfg"]
    assert report.messages == ["2 warnings in other specs not shown (-v or bcfg check shows them)"]
    report = FakeReport(1)
    concerned_warnings(report, analysis, "specs/npu.bcfg")
    assert len(report.shown) == 3 and report.messages == []
