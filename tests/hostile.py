"""Hostile text and the oracles that tell whether it broke out of where bcfg wrote it.

``HOSTILE`` is a hypothesis strategy of strings built from the pieces that break
markup and terminals (comment ends, tags with handlers, newlines, table pipes,
backticks, escape sequences, C1 controls, bidi overrides, lone surrogates and
the surrogates a non-UTF-8 file name decodes to) mixed with arbitrary text.
The oracles parse what bcfg wrote with real parsers: Python's HTML parser and
GitHub's own Markdown renderer (cmark-gfm).
"""

from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options
from hypothesis import strategies as st

PIECES = [
    "--->",
    "-->",
    "--!>",
    "<!--",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "</style>",
    '"',
    "'",
    "&amp;",
    "&#60;",
    "\n",
    "\r\n",
    "\r",
    "|",
    "\\|",
    "\\",
    "`",
    "```",
    "*",
    "_",
    "~~",
    "#",
    "- ",
    "1. ",
    "> ",
    "[x](http://example.com/i.png)",
    "![x](http://example.com/i.png)",
    "[x]: http://example.com/i.png",
    "<http://example.com>",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x07",
    "\x00",
    "\x7f",
    "\x85",
    "\x9b",
    "\u202e",
    "\u2066",
    "\u200f",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ud800",
    "\udfff",
    "\udcff",  # a byte 0xff of a file name that is not UTF-8, as Python decodes it
    "\U0001f600",
    "\u00a0",
    "é",
    "١",
    " ",
]

HOSTILE = st.lists(st.sampled_from(PIECES) | st.text(max_size=6), min_size=1, max_size=8).map(
    "".join
)


def hidden(text: str) -> list[str]:
    """The characters of ``text`` that show nothing or move text: what no output may carry raw."""
    return [c for c in text if not c.isprintable() and unicodedata.category(c) != "Zs"]


class Tree(HTMLParser):
    """What an HTML parser saw: start tags with their attributes, comments, text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.comments: list[str] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        self.text.append(data)

    def names(self) -> set[str]:
        return {t for t, _ in self.tags}


def gfm(markdown: str) -> str:
    """``markdown`` as GitHub renders it (tables, strikethrough, autolinks), raw HTML kept: so
    that any HTML bcfg let through shows up in the result."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Cells(HTMLParser):
    """The rows of every table in rendered Markdown (each cell's text), and every tag seen."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def names(self) -> set[str]:
        return {t for t, _ in self.tags}


# What Markdown that bcfg writes may render to: its own structure, and links GitHub makes of
# URLs in the text (which show their own address). Never an image, never raw HTML.
MARKDOWN_TAGS = {"p", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "em"}
MARKDOWN_TAGS |= {"h1", "h2", "h3", "h4", "ul", "ol", "li", "pre", "br", "blockquote", "a"}
MARKDOWN_TAGS |= {"details", "summary", "hr"}


def links_show_their_address(tags: list[tuple[str, dict[str, str | None]]], text: str) -> bool:
    """Every link in ``tags`` to an address (not the output's own relative links) is an
    autolink of an address that ``text`` shows."""
    for tag, attrs in tags:
        if tag == "a" and re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", attrs.get("href") or ""):
            href = (attrs.get("href") or "").removeprefix("mailto:")
            bare = href.removeprefix("http://").removeprefix("https://")
            if bare.rstrip("/") not in text and href not in text:
                return False
    return True
