"""Every message escapes what it quotes: nothing from a spec or a file name drives the terminal."""

from __future__ import annotations

import io

from generator.cli import Report
from generator.diagnostics import Diagnostic, Severity, printable
from generator.sources import Span

HOSTILE = "a\x1b[31mred\nspecs/x.bcfg:1:1: error: forged\r\u202e\u2028\x00\x7f"


def test_printable_escapes_control_characters_once():
    assert printable("plain 'text' \\n é ∑") == "plain 'text' \\n é ∑"
    assert printable(HOSTILE) == (
        "a\\x1b[31mred\\nspecs/x.bcfg:1:1: error: forged\\r\\u202e\\u2028\\x00\\x7f"
    )
    assert printable(printable(HOSTILE)) == printable(HOSTILE)


def test_a_diagnostic_is_one_line_per_part_whatever_it_quotes():
    d = Diagnostic(
        Severity.ERROR,
        Span("specs/\x1b[2Jx\n.bcfg", 1, 1, 1, 2),
        f"unknown symbol '{HOSTILE}'",
        f"did you mean '{HOSTILE}'?",
        (f"in 'use g({HOSTILE})'",),
    )
    text = d.format(source="x\n", color=True)
    lines = text.split("\n")
    assert len(lines) == 5, lines  # message, excerpt, carets, hint, note
    plain = d.format(source="x\n")
    assert "\x1b" not in plain and "\r" not in plain and "\u202e" not in plain
    assert plain.startswith("specs/\\x1b[2Jx\\n.bcfg:1:1: error: unknown symbol 'a\\x1b[31mred\\n")


def test_report_lines_are_escaped():
    err = io.StringIO()
    report = Report("bcfg fmt", io.StringIO(), err)
    report.message(f"cannot read {HOSTILE}")
    report.info(f"wrote {HOSTILE}")
    assert err.getvalue().count("\n") == 2
    assert "\x1b" not in err.getvalue()
