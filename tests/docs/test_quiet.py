"""Noise that is not the user's: what bcfg's own commands and documented steps print is theirs.

Material for MkDocs prints a notice of its end of life on every build unless
``NO_MKDOCS_2_WARNING`` is set: every MkDocs command the pages show sets it, and
the build run so prints nothing of it. (The generated PT2E runtime's quiet import
of torchao: tests/runtime/test_versions.py; the ExecuTorch guide's program run
with warnings on: tests/docs/test_pages.py.)
"""

from __future__ import annotations

import re

import pytest

from tests.docs.pages import page_paths
from tests.support import REPO

MKDOCS = re.compile(r"(\S*)\s*(\S*mkdocs (?:serve|build))\b")


def shown_mkdocs_commands() -> list[tuple[str, str]]:
    """Every ``mkdocs serve`` and ``mkdocs build`` a reader is told to type, with the word
    before it, by page; the README's second mention (``mkdocs build writes it``) included."""
    found = []
    for path in [REPO / "README.md", *page_paths()]:
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"^```(?:sh|console)\n(.*?)^```$", text, re.M | re.S):
            for m in MKDOCS.finditer(block):
                found.append((path.name, f"{m.group(1)} {m.group(2)}"))
        for code in re.findall(r"`([^`\n]*mkdocs serve[^`\n]*)`", text):
            found.append((path.name, code))
    return found


def test_every_mkdocs_command_shown_keeps_materials_notice_out():
    commands = shown_mkdocs_commands()
    assert {page for page, _ in commands} >= {"README.md", "install.md", "index.md"}
    for page, command in commands:
        assert "NO_MKDOCS_2_WARNING=1" in command, (page, command)


@pytest.mark.slow  # builds the site
def test_a_build_as_the_pages_show_it_prints_no_notice(site):
    assert "end of life" not in site.log and "Zensical" not in site.log, site.log
