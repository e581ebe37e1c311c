"""Text from specs and paths, escaped for where it lands: one function per destination.

Names, strings, comments and file or folder names come from people bcfg does
not trust (a spec's author, a repository's file names, a user's module). Every
place such text is written into an output goes through the function for that
output's syntax, and nowhere else is it escaped:

==================  ==========================================================
``terminal``        a terminal or a log (messages, ``bcfg diff``/``explain``/
                    ``compat`` text): no control character, escape sequence,
                    line break or bidi override takes effect
``html_text``       HTML text and double-quoted attribute values
``html_attr``       (``index.html``; Jinja's autoescape does the same for
                    what templates print)
``html_comment``    inside ``<!-- -->``: the comment cannot end, nest or span
                    lines
``md_text``         Markdown inline text (a table cell, a heading, a list
                    item, an LSP hover): no table cell, HTML, link, image,
                    code span or emphasis of its own
``md_code``         a Markdown code span in the same places
``md_fence``        a fenced code block that the text cannot close
``unicode_text``    UTF-8 outputs: valid Unicode, nothing else changed
``json_text``       a JSON document: valid UTF-8 whatever the strings hold,
                    hidden characters as ``\\uXXXX`` escapes (the same data)
==================  ==========================================================

``visible`` is what every one of them starts from: characters that do nothing
visible (controls, C1 controls, line and paragraph separators, format
characters such as bidi overrides, lone surrogates, bytes of a file name that
are not UTF-8) are written as Python writes them (``\\n``, ``\\x1b``,
``\\u202e``, ``\\udcff``), so a reader sees that they are there and what they
are. Spaces are kept.

Standard library only: the fast ``bcfg check`` imports this module.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _hidden(c: str) -> bool:
    return not c.isprintable() and unicodedata.category(c) != "Zs"


def visible(text: str) -> str:
    """``text`` with every character that shows nothing (or moves the text) escaped as Python
    would write it; printable text, spaces, quotes and backslashes are left as they are, so text
    already escaped is not escaped twice."""
    if text.isprintable():
        return text
    return "".join(repr(c)[1:-1] if _hidden(c) else c for c in text)


def terminal(text: str) -> str:
    """Text for a terminal or a log: one line as written, no control sequence of its own."""
    return visible(text)


def unicode_text(text: str) -> str:
    """``text`` as valid Unicode for a UTF-8 output (JSON): lone surrogates (a file name's bytes
    that are not UTF-8, a ``"\\ud800"``) written as ``\\udcff``; everything else unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(repr(c)[1:-1] if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` as a JSON document (with a final newline) for a UTF-8 output that a terminal may
    show: strings are made valid Unicode (``unicode_text``), and every hidden character in them
    is written as a ``\\uXXXX`` escape, so the document holds the same data and no raw control
    character, bidi override or line separator."""
    text = json.dumps(deep(data, unicode_text), indent=indent, ensure_ascii=False)
    return _HIDDEN_JSON.sub(_json_escape, text) + "\n"


# Outside its strings a JSON document is ASCII: every hidden character is in a string.
_HIDDEN_JSON = re.compile(r"[^\x20-\x7e\n]")


def _json_escape(m: re.Match[str]) -> str:
    c = m.group(0)
    if not _hidden(c):
        return c
    return json.dumps(c)[1:-1]


# ------------------------------------------------------------------ HTML


def html_text(text: str) -> str:
    """HTML text (or an attribute value): ``&<>"'`` as references, hidden characters shown."""
    return (
        visible(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
    )


def html_attr(text: str) -> str:
    """A quoted HTML attribute value (``title="..."``): the same references as ``html_text``."""
    return html_text(text)


def html_comment(text: str) -> str:
    """Text inside an HTML comment (``<!-- text -->``), which is not decoded: it can neither end
    the comment (``-->``, ``--!>``), open another (``<!--``) nor run onto more lines.

    ``<`` and ``>`` are written as references and every ``--`` is split, so no comment
    delimiter can form, whatever surrounds the text.
    """
    out = visible(text).replace("<", "&lt;").replace(">", "&gt;")
    while "--" in out:
        out = out.replace("--", "- -")
    return out + " " if out.endswith("-") else out


# ------------------------------------------------------------------ Markdown

# What makes Markdown inline syntax (CommonMark and GitHub's tables and strikethrough):
# escapes, code spans, emphasis, strikethrough, HTML and autolinks, entities, table cells.
_MD_SPECIAL = re.compile(
    r"[\\`*~<>&|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|(?<=\])\(|(?<=!)\[|^\[|^[#+=-]|^[0-9]+[.)]"
    r"|:(?=//)|(?<=www)\.|^ ",  # GitHub's autolinks of bare addresses; an indented code block
    re.IGNORECASE,
)
_MD_REPLACE = {"&": "&amp;", "<": "&lt;", ">": "&gt;", " ": "&#32;"}


def _md_escape(m: re.Match[str]) -> str:
    s = m.group(0)
    if s in _MD_REPLACE:
        return _MD_REPLACE[s]
    if s[0].isdigit():  # `1.` at the start: an ordered list item
        return s[:-1] + "\\" + s[-1]
    return "\\" + s


def md_text(text: str) -> str:
    """Markdown inline text, shown as written: in a table cell, a heading, a list item or a hover.

    Hidden characters are shown (so no line break ends a table row), ``|`` cannot end a cell,
    ``<`` and ``&`` cannot start HTML or a reference, backslashes and backticks mean
    themselves, ``*``, ``~`` and ``_`` at a word's edge emphasise nothing, ``](`` and ``![``
    cannot make a link or an image and a leading ``[`` no link definition (so a hover cannot
    make the editor fetch anything), bare addresses are not made links, and nothing at the
    start makes a heading or a list. What does nothing inline (a ``[`` elsewhere, ``_`` inside
    a word) is left as written.
    """
    return _MD_SPECIAL.sub(_md_escape, visible(text))


@functools.lru_cache(maxsize=8192)
def md_code(text: str) -> str:
    """``text`` as a Markdown code span, fit for a table cell (its ``|`` escaped even there)."""
    shown = visible(text)
    longest = max((len(r) for r in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown.replace('|', chr(92) + '|')}{pad}{fence}"


def md_fence(text: str, info: str = "") -> str:
    """``text`` (lines) as a fenced code block that no line of it can close."""
    lines = [visible(line) for line in text.split("\n")]
    longest = max((len(r) for line in lines for r in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + info, *lines, fence])


# ------------------------------------------------------------------ data


def deep(value: T, escape: Callable[[str], str]) -> T:
    """``value`` with ``escape`` applied to every string in it: in tuples, lists, dicts (keys
    too) and dataclass instances (a copy with escaped fields). Enums and other values are kept.

    A renderer that builds text from data for one destination escapes the data once, on the
    way in, so that no field it prints can be forgotten.
    """
    return _deep(value, escape)


def _deep(value: Any, escape: Callable[[str], str]) -> Any:
    if isinstance(value, enum.Enum):
        return value
    if type(value) is str:  # noqa: E721  (a subclass is text made for its place: Markup)
        return escape(value)
    # What escaping leaves as it was is returned as it is: no copy of what did not change.
    if isinstance(value, (tuple, list)):
        items = [_deep(v, escape) for v in value]
        if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(value, dict):
        return {_deep(k, escape): _deep(v, escape) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if f.init:
                old = getattr(value, f.name)
                new = _deep(old, escape)
                if new is not old:
                    changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value
