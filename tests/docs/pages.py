"""Reading the site's pages as the tests need them: fenced blocks, shown output, sessions.

A page's fenced block is ``Block(lang, title, text)``; a ``--8<-- "path"`` line
in it (pymdown's snippets) is replaced by the file, as the site shows it.
``matches(shown, actual)`` compares output as a page shows it: ``...`` (or
``…``) inside a line stands for any text on that line, and a line that is only
``...`` for any number of lines. ``Session`` runs a page's ```` ```console ````
block (``$ bcfg ...``, ``$ python ...``, ``$ cd``, ``$ echo $?``) and gives the
transcript to compare with what the page shows.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO

DOCS = REPO / "docs"
FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,})(?P<info>[^`\n]*)$")
SNIPPET = re.compile(r'^(?P<indent>[ ]*)--8<-- "(?P<path>[^"]+)"$')


@dataclass(frozen=True)
class Block:
    lang: str
    title: str
    text: str
    page: str


def page_paths() -> list[Path]:
    """Every Markdown page of the site written by hand (not the generated support matrix)."""
    generated = {DOCS / "README.md", *(DOCS / "backends").glob("*.md")}
    return sorted(p for p in DOCS.rglob("*.md") if p not in generated)


def _snippets(text: str) -> str:
    def include(m: re.Match[str]) -> str:
        body = (REPO / m.group("path")).read_text(encoding="utf-8").rstrip("\n")
        return "\n".join(m.group("indent") + line for line in body.split("\n"))

    return SNIPPET.sub(include, text)


def blocks(page: str | Path) -> list[Block]:
    """The fenced blocks of a page (a path under docs/), snippets included, dedented."""
    path = DOCS / page if isinstance(page, str) else page
    lines = path.read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group("info").strip():
            i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        info = m.group("info").strip()
        lang = info.split()[0]
        title = re.search(r'title="([^"]*)"', info)
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        text = _snippets("\n".join(body) + "\n")
        out.append(Block(lang, title.group(1) if title else "", text, path.name))
        i += 1
    return out


def block(page: str, lang: str, *, starting: str = "", title: str = "") -> str:
    """The one block of ``page`` in ``lang`` that starts with ``starting`` (and has ``title``)."""
    found = [
        b.text
        for b in blocks(page)
        if b.lang == lang and b.text.startswith(starting) and (not title or b.title == title)
    ]
    assert len(found) == 1, f"{page}: {len(found)} {lang} blocks start with {starting!r}"
    return found[0]


def _pattern(shown: str, anywhere: bool = False, indent_free: bool = False) -> str:
    parts = []
    for line in shown.rstrip("\n").split("\n"):
        if line.strip() in ("...", "…"):
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        if indent_free:
            line = line.strip()
        pieces = re.split(r"\.\.\.|…", line)
        regex = r"[^\n]*?".join(re.escape(p) for p in pieces)
        parts.append((r"[ \t]*" if indent_free else "") + regex + r"\n")
    body = "".join(parts)
    return r"(?:[^\n]*\n)*?" + body + r"(?:[^\n]*\n)*" if anywhere else body


def matches(shown: str, actual: str) -> bool:
    """Does ``actual`` read as ``shown`` does, with its ``...`` elisions?"""
    actual = actual if actual.endswith("\n") else actual + "\n"
    return re.fullmatch(_pattern(shown), actual) is not None


def is_excerpt(shown: str, text: str, indent_free: bool = False) -> bool:
    """Is ``shown`` (with ``...`` for what it leaves out) a part of ``text``, in order?"""
    text = text if text.endswith("\n") else text + "\n"
    return re.fullmatch(_pattern(shown, True, indent_free), text) is not None


def environment(cache: Path) -> dict[str, str]:
    """How the tests run bcfg and Python for a page: no colour, a cache of the test's own."""
    return {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONWARNINGS": "ignore",  # torch's deprecation notices, which no page shows
        "BCFG_CACHE_DIR": str(cache),
    }


class Session:
    """A shell session as a page shows it, run for real: ``bcfg``, ``python``, ``cd``, ``echo $?``."""

    def __init__(self, cwd: Path, cache: Path, pythonpath: Path | None = None) -> None:
        self.cwd = cwd
        self.env = environment(cache)
        if pythonpath is not None:
            self.env["PYTHONPATH"] = str(pythonpath)
        self.status = 0

    def run(self, command: str) -> str:
        """One command's output (standard output and error, as a terminal shows them)."""
        words = shlex.split(command)
        if words[0] == "cd":
            self.cwd = (self.cwd / words[1]).resolve()
            return ""
        if words == ["echo", "$?"]:
            return f"{self.status}\n"
        if words[0] == "bcfg":
            argv = [sys.executable, "-m", "generator", *words[1:]]
        elif words[0] == "python":
            argv = [sys.executable, *words[1:]]
        else:
            raise AssertionError(f"a page's session runs {words[0]!r}, which the tests do not")
        done = subprocess.run(
            argv,
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        self.status = done.returncode
        return done.stdout

    def transcript(self, shown: str, keep=lambda command, output: output) -> str:
        """Run every ``$ command`` of ``shown``; the session as it went, to compare with it.

        ``keep(command, output)`` may filter an output (torch's and torchao's import-time
        warnings, which a page leaves out).
        """
        out = []
        for line in shown.rstrip("\n").split("\n"):
            if line.startswith("$ "):
                command = line[2:]
                out.append(line + "\n")
                out.append(keep(command, self.run(command)))
        return "".join(out)
