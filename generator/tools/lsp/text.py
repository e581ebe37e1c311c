"""Text as an editor sees it: positions, tokens under the cursor, and what parses of a broken buffer.

Everything here works on text that may not parse (the buffer being typed):
a small tokenizer with the grammar's terminals finds the word under the
cursor, the imports a file names and the open blocks before a position.

Positions: bcfg and LSP both end lines at ``\\r\\n``, ``\\n`` or ``\\r`` (a
source's line ends are made ``\\n`` when it is read); bcfg counts lines and
columns from 1 and columns in code points, LSP from 0 and in the negotiated
encoding's code units (UTF-16 for VS Code, UTF-8 for Neovim). ``TextIndex``
converts both through offsets into the buffer's own text, so both are exact.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ...lang.vocabulary import DECLARATION_KEYWORDS

_HOLE = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}"
NAME = rf"(?:[A-Za-z_]|{_HOLE})(?:[A-Za-z0-9_]|{_HOLE})*"
_TOKEN = re.compile(
    rf"""(?P<string>"(?:[^"\\\n]|\\.)*"?)
      | (?P<comment>\#[^\n]*)
      | (?P<name>{NAME})
      | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)
      | (?P<op>\*\*|\S)""",
    re.X,
)
_LSP_BREAK = re.compile(r"\r\n|\n|\r")


def lexable(text: str) -> str:
    """``text`` with every line end a ``\\n`` and every offset kept: CRLF becomes a space and
    ``\\n``, a lone CR ``\\n``. The tokenizer here (like the parser) ends lines at ``\\n``."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", " \n").replace("\r", "\n")


_IMPORT = re.compile(r'(?m)^[ \t]*import[ \t]+"((?:[^"\\\n]|\\.)*)"')


@dataclass(frozen=True)
class Tok:
    kind: str  # string, comment, name, number, op
    text: str
    start: int
    end: int


def tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[Tok]:
    """The tokens of ``text`` from offset ``start`` (to ``end``), comments included."""
    for mt in _TOKEN.finditer(text, start, len(text) if end is None else end):
        kind = mt.lastgroup
        assert kind is not None
        yield Tok(kind, mt.group(), mt.start(), mt.end())


def code_tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[Tok]:
    """The tokens of ``text`` without its comments."""
    return (t for t in tokens(text, start, end) if t.kind != "comment")


def line_bounds(text: str, offset: int) -> tuple[int, int]:
    """The start and end offsets of the line ``offset`` is on (without its line break)."""
    end = text.find("\n", offset)
    return text.rfind("\n", 0, offset) + 1, len(text) if end < 0 else end


def token_at(text: str, offset: int) -> Tok | None:
    """The token under the cursor at ``offset``: the one holding it, else the one ending there."""
    before = None
    for t in tokens(text, *line_bounds(text, offset)):
        if t.start > offset:
            break
        if t.start <= offset < t.end:
            return t
        if t.end == offset:
            before = t
    return before


def dotted_at(text: str, tok: Tok) -> list[Tok]:
    """The name tokens of the dotted name ``tok`` is part of (``nn.Conv2d``), in order."""
    toks = list(code_tokens(text, *line_bounds(text, tok.start)))
    i = next(i for i, t in enumerate(toks) if t.start == tok.start)
    lo = i
    while lo >= 2 and toks[lo - 1].text == "." and toks[lo - 2].kind == "name":
        lo -= 2
    hi = i
    while hi + 2 < len(toks) and toks[hi + 1].text == "." and toks[hi + 2].kind == "name":
        hi += 2
    return toks[lo : hi + 1 : 2]


def hole_at(tok: Tok, offset: int) -> str | None:
    """The variable of the ``${var}`` hole of a name token that ``offset`` is in, if any."""
    for mt in re.finditer(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", tok.text):
        if tok.start + mt.start() <= offset < tok.start + mt.end():
            return mt.group(1)
    return None


def previous_code_token(text: str, offset: int) -> Tok | None:
    """The last token that ends at or before ``offset``, comments skipped."""
    prev = None
    for t in code_tokens(text):
        if t.end > offset:
            break
        prev = t
    return prev


def imports_in(text: str) -> list[tuple[str, int, int]]:
    """Every ``import "path"`` of ``text`` (by line, so it works on text that does not parse):
    (path, start and end offset of the string)."""
    return [(mt.group(1), mt.start(1) - 1, mt.end(1) + 1) for mt in _IMPORT.finditer(text)]


def name_after(text: str, offset: int) -> Tok | None:
    """The first name token after the keyword at ``offset``: the name a declaration declares."""
    it = code_tokens(text, offset)
    next(it, None)  # the keyword itself
    tok = next(it, None)
    return tok if tok is not None and tok.kind == "name" else None


def find_name(text: str, start: int, end: int, name: str) -> Tok | None:
    """The first name token spelled ``name`` between ``start`` and ``end``."""
    for t in code_tokens(text, start):
        if t.start >= end:
            break
        if t.kind == "name" and t.text == name:
            return t
    return None


# ------------------------------------------------------------------ blocks


_OPENERS = ("pattern", "group", "backend", "for", "constraint", "quantizer")


# The lists a quantizer's classes: and a class record's stages: and pairs: open, and their
# records.
_LISTS = ((["quantizer"], "classes"), (["class"], "stages"), (["class"], "pairs"))
_RECORD_OF = {"classes": "class", "stages": "stage", "pairs": "pair"}


def open_blocks(text: str, offset: int) -> list[str]:
    """The blocks open at ``offset``, outermost first: pattern, group, backend, for, constraint,
    quantizer, pt2e (the record of a pattern's ``pt2e:``), classes and class (a quantizer's
    ``classes: [{...}]``), stages and stage, pairs and pair (a class record's), or record; works
    on text that does not parse."""
    stack: list[str] = []
    opener: str | None = None
    prev = key = ""
    for t in code_tokens(text):
        if t.start >= offset:
            break
        if t.text in ("{", "(", "["):
            if t.text == "{" and opener is not None and prev not in (":", "=", ",", "[", "("):
                stack.append(opener)
            elif t.text == "{" and stack and stack[-1] in _RECORD_OF:
                stack.append(_RECORD_OF[stack[-1]])  # a class record, one of its stages or pairs
            elif t.text == "{":
                stack.append("pt2e" if prev == ":" and key == "pt2e" else "record")
            elif t.text == "[" and prev == ":" and (stack[-1:], key) in _LISTS:
                stack.append(key)  # a quantizer's classes: [...], a class record's stages or pairs
            else:
                stack.append(t.text)
            opener = None
        elif t.text in ("}", ")", "]"):
            if stack:
                stack.pop()
            opener = None
        elif t.text in _OPENERS:
            opener = t.text
        key = prev if t.text == ":" else key
        prev = t.text
    return stack


# ------------------------------------------------------------------ recovery


def declaration_starts(text: str) -> list[int]:
    """Offsets where top-level declarations start: a declaration keyword outside any bracket,
    or at the start of a line (where fmt puts them, and where a block left open ends)."""
    starts: list[int] = []
    depth = 0
    prev = ""
    for t in code_tokens(text):
        if t.text in ("{", "(", "["):
            depth += 1
        elif t.text in ("}", ")", "]"):
            depth = max(0, depth - 1)
        elif t.kind == "name" and t.text in DECLARATION_KEYWORDS and prev != ".":
            at_line_start = t.start == 0 or text[t.start - 1] == "\n"
            after = text[t.end : t.end + 80].lstrip(" \t")
            if (depth == 0 or at_line_start) and not after.startswith(":"):
                starts.append(t.start)
                depth = 0
        prev = t.text
    return starts


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``start:end`` replaced by spaces, line breaks kept: every offset stays put."""
    middle = re.sub(r"[^\r\n]", " ", text[start:end])
    return text[:start] + middle + text[end:]


def chunk_of(starts: list[int], offset: int, text_length: int) -> tuple[int, int]:
    """The declaration (start, end) that holds ``offset``; before the first, from 0."""
    i = bisect.bisect_right(starts, offset) - 1
    start = starts[i] if i >= 0 else 0
    end = starts[i + 1] if i + 1 < len(starts) else text_length
    return start, end


# ------------------------------------------------------------------ positions


class TextIndex:
    """Offsets of one text, and the positions bcfg and an LSP client give them."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding
        self._starts = [0] + [mt.end() for mt in _LSP_BREAK.finditer(text)]

    def _line(self, line: int) -> tuple[int, int]:
        """The offsets where a 0-based line starts and where its content ends."""
        start = self._starts[line]
        if line + 1 == len(self._starts):
            return start, len(self.text)
        end = self._starts[line + 1]
        return start, end - (2 if self.text.startswith("\r\n", end - 2) else 1)

    def span_offset(self, line: int, column: int) -> int:
        """The offset of bcfg's 1-based line and column (clamped to the line and the text)."""
        if line < 1:
            return 0
        if line > len(self._starts):
            return len(self.text)
        start, end = self._line(line - 1)
        return min(start + max(column, 1) - 1, end)

    def line_col(self, offset: int) -> tuple[int, int]:
        """bcfg's 1-based line and column of ``offset``."""
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP (line, character) of ``offset``, in code units of the encoding."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        start, end = self._line(line)
        return line, units(self.text[start : min(offset, end)], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The offset of an LSP position (clamped to the end of its line)."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        start, end = self._line(line)
        count = 0
        for i in range(start, end):
            if count >= character:
                return i
            count += units(self.text[i], self.encoding)
        return end


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in code units of ``encoding`` (utf-8, utf-16 or utf-32)."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
