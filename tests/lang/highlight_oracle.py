"""What highlighting should say about each token, from the compiler's own lexer.

The highlighters (the TextMate grammar and the Pygments lexer) are regular
expressions; this oracle is independent of them. A spec is lexed by Lark with
``grammar/bcfg.lark`` exactly as the compiler lexes it (LALR with the
contextual lexer, comments through a lexer callback), and ``expected_scope``
says which scope each token must carry, from its kind, its text and its
neighbours, in the vocabulary's words. Only inputs that parse have tokens here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token

from generator.lang.highlight import DECLARED_NAME_SCOPES
from generator.lang.vocabulary import (
    BOOLEANS,
    BUILTIN_ALIASES,
    BUILTIN_FUNCTIONS,
    DECLARATION_KEYWORDS,
    DTYPE_NAMES,
    FUSE_FLAGS,
    ITEM_KEYWORDS,
    OBSERVATIONS,
    OTHER_KEYWORDS,
)
from generator.resources import resource_path
from tests.support import REPO

PUNCTUATION = {
    "{": "punctuation.section.braces.begin",
    "}": "punctuation.section.braces.end",
    "(": "punctuation.section.parens.begin",
    ")": "punctuation.section.parens.end",
    "[": "punctuation.section.brackets.begin",
    "]": "punctuation.section.brackets.end",
    ",": "punctuation.separator.comma",
    ":": "punctuation.separator.key-value",
    ".": "punctuation.accessor.dot",
    "=": "keyword.operator.assignment",
    **{op: "keyword.operator.arithmetic" for op in ("+", "-", "*", "/", "**")},
}


@dataclass(frozen=True)
class Tok:
    """A token: its text, Lark type, 1-based line and column, and its neighbours' texts."""

    text: str
    type: str
    line: int
    column: int
    prev: str
    next: str
    prev_type: str
    next_on_line: bool  # the next token is on the same line

    @property
    def offset_key(self) -> tuple[int, int]:
        return (self.line, self.column)


@lru_cache(maxsize=1)
def _lark() -> tuple[Lark, list[Token]]:
    comments: list[Token] = []
    grammar = resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8")
    parser = Lark(grammar, parser="lalr", lexer_callbacks={"COMMENT": comments.append})
    return parser, comments


def tokens(text: str) -> list[Tok]:
    """Every token of ``text`` as the compiler lexes it, comments included, in order."""
    parser, comments = _lark()
    comments.clear()
    lexed = [t for t in parser.parse_interactive(text).iter_parse() if t.type != "$END"]
    out: list[Tok] = []
    for i, t in enumerate(lexed):
        prev = lexed[i - 1] if i else None
        nxt = lexed[i + 1] if i + 1 < len(lexed) else None
        out.append(
            Tok(
                str(t),
                t.type,
                t.line or 0,
                t.column or 0,
                str(prev) if prev is not None else "",
                str(nxt) if nxt is not None else "",
                prev.type if prev is not None else "",
                nxt is not None and nxt.line == t.end_line,
            )
        )
    for c in comments:
        out.append(Tok(str(c), "COMMENT", c.line or 0, c.column or 0, "", "", "", False))
    return sorted(out, key=lambda t: t.offset_key)


def expected_scope(tok: Tok) -> str | None:
    """The scope ``tok`` must carry (without the ``.bcfg`` suffix); None: not asserted."""
    kind, text = tok.type, tok.text
    if kind == "COMMENT":
        return "comment.line.number-sign"
    if kind == "STRING":
        return "string.quoted.double"
    if kind == "INT":
        return "constant.numeric.integer"
    if kind == "FLOAT":
        return "constant.numeric.float"
    if text in PUNCTUATION:
        return PUNCTUATION[text]
    if not re.fullmatch(r"[A-Za-z_$][\w${}]*", text) or "${" in text:
        return None  # names with holes are scoped piece by piece (the hand-written cases)
    if tok.next == ":" and tok.next_on_line:
        return "variable.other.property"
    if text == "pattern" and tok.next == "[":
        return "variable.language.pattern"
    if text in DECLARATION_KEYWORDS:
        return "keyword.declaration"
    if text in ITEM_KEYWORDS or text in OTHER_KEYWORDS:
        return "keyword.control"
    if tok.prev in DECLARED_NAME_SCOPES and tok.prev_type != "NAME":
        return DECLARED_NAME_SCOPES[tok.prev]
    if tok.prev == "use":
        return "entity.name.function.group"
    if tok.prev == ".":
        return "variable.other"
    if text in FUSE_FLAGS:
        return "storage.modifier"
    if text in BOOLEANS:
        return "constant.language.boolean"
    if text in DTYPE_NAMES and tok.next != ".":
        return "support.type.dtype"
    if text in OBSERVATIONS:
        return "support.constant.observation"
    if text in BUILTIN_FUNCTIONS and tok.next == "(":
        return "support.function.builtin"
    if text in BUILTIN_ALIASES and tok.next == ".":
        return "support.module"
    if text == "MatchAllNode":
        return "support.class"
    return "variable.other"


def corpus() -> list[tuple[str, str]]:
    """(name, text) of every spec in the repository and every error-corpus input that parses."""
    from generator.diagnostics import SpecError
    from generator.lang.parse import parse_text

    out = []
    paths = sorted((REPO / "specs").glob("*.bcfg")) + sorted(
        (REPO / "tests" / "errors").rglob("*.bcfg")
    )
    for p in paths:
        name = p.relative_to(REPO).as_posix()
        try:
            text = p.read_bytes().decode("utf-8-sig")
            parse_text(text, name)
        except (UnicodeDecodeError, SpecError):
            continue
        out.append((name, text))
    return out


def spec_paths() -> list[Path]:
    return sorted((REPO / "specs").glob("*.bcfg"))
