"""Syntax errors in the language's terms: one ``Diagnostic`` for a Lark exception.

Lark reports what it got and the terminals it would have accepted. The
parser's value stack says what is open at that point (every bracket token on
it is still unclosed) and what came just before; from those two the message
is said as a user would: "expected '}' to close the pattern opened at 8:3",
"expected a dtype name after 'input:', found '}'", never "Unexpected token
Token('RBRACE', '}')". ``parse.parse_text`` is the one caller.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..diagnostics import Diagnostic, Severity
from ..sources import offset_span
from . import syntax as m
from .pt2e_keys import PT2E_TABLE, QUANTIZER_TABLE
from .vocabulary import DECLARATION_KEYWORDS, ITEM_KEYWORDS, KEYWORDS


def token_span(file: str, tok: Token) -> m.Span:
    """The span of a Lark token (a borrowed end token may lack an end)."""
    line = tok.line or 1
    col = tok.column or 1
    return m.Span(file, line, col, tok.end_line or line, tok.end_column or col + 1)


_DECL_START = {
    "IMPORT",
    "ALIAS",
    "CONSTRAINT",
    "DTYPES_KW",
    "FUSE",
    "GROUP",
    "BACKEND",
    "QUANTIZER",
}
_ITEM_START = {"PATTERN_KW", "OVERRIDE", "USE", "FOR"}
_VALUE_START = {"NAME", "STRING", "INT", "FLOAT", "LPAR", "LSQB", "LBRACE"}
# Tokens that could only continue an expression already complete: noise in a list of what was expected.
_CONTINUATION = {"DOT", "LSQB", "LPAR", "PLUS", "MINUS", "STAR", "SLASH", "__ANON_0"}
_CLOSERS = {"LBRACE": "RBRACE", "LPAR": "RPAR", "LSQB": "RSQB"}
_CLOSING = frozenset(_CLOSERS.values())
# Words a misspelt keyword is compared with ("fuser" is lexed as a keyword too).
_KEYWORDS = (*KEYWORDS, "fuser")
# Words that can only start a new item or declaration ("dtypes" is also a field key).
_NEW_ITEM_WORDS = (set(ITEM_KEYWORDS) | set(DECLARATION_KEYWORDS)) - {"dtypes"}

_TOKEN_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "INT": "an integer",
    "FLOAT": "a number",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "COLON": "':'",
    "EQUAL": "'='",
    "DOT": "'.'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "__ANON_0": "'**'",
    "PATTERN_KW": "'pattern'",
    "DTYPES_KW": "'dtypes'",
    "FUSER_KW": "'fuser'",
    "$END": "the end of the file",
}

# What a value after `key:` must be, by key.
_VALUE_AFTER_KEY = {
    "input": "a dtype name",
    "output": "a dtype name",
    "weight": "a dtype name",
    "bias": "a dtype name",
    "dynamic": "true or false",
    "dtypes": "a dtype set",
    "root": "a module class",
    "qat": "a module class",
    "reference": "a module class",
    "fused": "a module class",
    "fuser": "a fuser",
    "observation": "an observation type",
    "root_node": "a pattern element, like pattern[1]",
    "extra_inputs": "a list of pattern elements, like [pattern[2]]",
    "num_tensor_args": "a record, like {0: different_observer}",
    "input_index": "a record, like {weight: 1, bias: 2}",
    "pt2e": "a record, like {aten: aten.conv2d.default}",
    # every pt2e key and quantizer field, from the table of PT2E keys
    **{k.word: k.expects for k in (*PT2E_TABLE, *QUANTIZER_TABLE)},
    "quant_min": "a number",
    "quant_max": "a number",
    "scale_min": "a number",
    "scale_max": "a number",
    "scale": "a number",
    "zero_point": "a number",
}

# What must follow a keyword, by the keyword's token type.
_AFTER_KEYWORD = {
    "IMPORT": "a file name in quotes",
    "ALIAS": "a name for the alias",
    "CONSTRAINT": "a name for the constraint",
    "DTYPES_KW": "a name for the dtype set",
    "FUSE": "a name for the fuser",
    "GROUP": "a name for the group",
    "BACKEND": "a backend name",
    "QUANTIZER": "the name of a backend of this file",
    "USE": "a group name",
    "FOR": "a loop variable",
    "IN": "a list",
    "PATTERN_KW": "a pattern",
    "COMPLEX": "a pattern",
    "OVERRIDE": "'pattern'",
    "DOT": "a name",
}

_VALUE_HINTS = {
    "a file name in quotes": 'write: import "common.bcfg"',
    "a dtype name": "dtypes are quint8, qint8, quint4x2, float, float16, ...",
    "a dtype set": "write {input: quint8, output: quint8}, a dtypes name or a list of them",
    "the module the fuser builds": "write: fuse f(conv, relu) = nni.ConvReLU2d(conv, relu)",
    "a backend name": (
        'write: backend my_backend { ... }; a string after the name sets the BackendConfig\'s name: backend my_backend "my backend" { ... }'
    ),
}

_CONSTRUCTS = {
    "PATTERN_KW": "pattern",
    "BACKEND": "backend",
    "QUANTIZER": "quantizer",
    "GROUP": "group",
    "FOR": "loop",
    "CONSTRAINT": "constraint",
}


def syntax_diagnostic(exc: UnexpectedInput, text: str, file: str) -> Diagnostic:
    """One error for a Lark exception, in the language's terms."""
    ip = getattr(exc, "interactive_parser", None)
    stack = list(ip.parser_state.value_stack) if ip is not None else []
    # accepts() tries each terminal on a copy of the parser: more exact than exc.expected.
    expected: set[str] = set(ip.accepts()) if ip is not None else set()
    if not expected:
        expected = set(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    expected.discard("COMMENT")

    if isinstance(exc, UnexpectedCharacters):
        return _unexpected_character(exc, text, file, expected, stack)
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
    else:  # UnexpectedEOF: LALR reports the end as a $END token, but be safe
        tok = Token("$END", "")
    at_end = tok.type == "$END"
    if at_end:
        last = next((t for t in reversed(_tokens(stack)) if t.end_line and t.end_column), None)
        line, col = (last.end_line or 1, last.end_column or 1) if last is not None else (1, 1)
        span = m.Span(file, line, col, line, col + 1)
    else:
        span = token_span(file, tok)
    found = _show_token(tok)

    missing = _missing_closer(tok, at_end, span, found, file, expected, stack, text)
    if missing is not None:
        return missing

    if _VALUE_START <= expected or expected == {"NAME"} or expected == {"STRING"}:
        what = _value_context(stack)
        if what:
            hint = next((h for k, h in _VALUE_HINTS.items() if what.startswith(k)), None)
            return Diagnostic(Severity.ERROR, span, f"expected {what}, found {found}", hint)

    message = (
        f"expected {_expected_words(expected, stack)}, found {found}"
        if expected
        else f"unexpected {found}"
    )
    hint = None
    if tok.type == "NAME":
        close = difflib.get_close_matches(str(tok), _KEYWORDS, n=1, cutoff=0.75)
        if close and close[0] != str(tok):
            hint = f"did you mean '{close[0]}'?"
    elif tok.type == "COMMA" and "a field name" in message:
        hint = "pattern fields are separated by spaces or new lines, not commas"
    if hint is None:
        hint = _hint(tok, expected, stack, text, span)
    return Diagnostic(Severity.ERROR, span, message, hint)


def _missing_closer(
    tok: Token,
    at_end: bool,
    span: m.Span,
    found: str,
    file: str,
    expected: set[str],
    stack: Sequence[Any],
    text: str,
) -> Diagnostic | None:
    """If what was found can only start something new, the error is the bracket left open."""
    # A keyword that starts the next item where a field name was expected: a '}' is missing.
    top = stack[-1] if stack else None
    if (
        isinstance(top, Token)
        and top.type == "NAME"
        and str(top) in _NEW_ITEM_WORDS
        and expected <= {"COLON"}
    ):
        opener = _innermost_opener(stack[:-1])
        if opener is not None:
            at = token_span(file, top)
            hint = _close_hint(opener, text, at, f"'{top}'")
            return Diagnostic(Severity.ERROR, at, _close_message(opener, f"'{top}'"), hint)
    opener = _innermost_opener(stack)
    if opener is not None and _CLOSERS[opener[0].type] in expected:
        starts_new = (
            at_end
            or tok.type in (_DECL_START | _ITEM_START) - {"PATTERN_KW"}
            and opener[1] != "record"
            or tok.type == "PATTERN_KW"
            and opener[1] not in ("record", "list", "'('", "'['")
            or tok.type in ("RBRACE", "RPAR", "RSQB")
            and tok.type != _CLOSERS[opener[0].type]
            or tok.type == "LBRACE"
            and opener[0].type != "LBRACE"
        )
        if starts_new:
            if tok.type in _CLOSING:
                hint = f"the '{opener[0]}' at {opener[0].line}:{opener[0].column} pairs with '{_CLOSE_CHAR[opener[0].type]}', not '{tok}'"
            else:
                hint = _close_hint(opener, text, span, "the end of the file" if at_end else found)
            return Diagnostic(Severity.ERROR, span, _close_message(opener, found), hint)
    return None


_CLOSE_CHAR = {"LBRACE": "}", "LPAR": ")", "LSQB": "]"}


def _close_hint(opener: tuple[Token, str, Token], text: str, at: m.Span, found: str) -> str:
    """Where the missing closer most likely goes: at the end of the last line with code before
    ``at`` (a block ends after its last line), or just before what was found on that line."""
    closer = _CLOSE_CHAR[opener[0].type]
    line = _last_code_line(text, at)
    if found == "the end of the file":
        return f"add '{closer}' at the end of the file, if the {opener[1]} ends there"
    if line is None or line == at.line:
        return f"add '{closer}' before {found}"
    return f"add '{closer}' at the end of line {line}, if the {opener[1]} ends there"


def _last_code_line(text: str, at: m.Span) -> int | None:
    """The last line before ``at`` (or the part of ``at``'s line before it) with code on it,
    comments aside; None if there is none."""
    lines = text.split("\n")
    for n in range(min(at.line, len(lines)), 0, -1):
        code = lines[n - 1][: at.column - 1] if n == at.line else lines[n - 1]
        if code.split("#", 1)[0].strip():
            return n
    return None


def _unexpected_character(
    exc: UnexpectedCharacters, text: str, file: str, expected: set[str], stack: Sequence[Any]
) -> Diagnostic:
    """A character no token starts with: an unclosed string, a stray '$', anything else."""
    pos = exc.pos_in_stream or 0
    span = offset_span(text, pos, file)
    ch = text[pos] if pos < len(text) else ""
    if ch == '"':
        return Diagnostic(
            Severity.ERROR,
            span,
            "this string is not closed on its line",
            'write strings on one line: "..."',
        )
    if ch == "$":
        return Diagnostic(
            Severity.ERROR,
            span,
            "'$' may only start a ${variable} hole in a name, like nn.Conv${n}d",
        )
    if ch in _CHARACTER_HINTS:
        return Diagnostic(
            Severity.ERROR, span, f"unexpected character {_show_char(ch)}", _CHARACTER_HINTS[ch]
        )
    return Diagnostic(
        Severity.ERROR,
        span,
        f"unexpected character {_show_char(ch)}",
        _expected_hint(expected, stack),
    )


_CHARACTER_HINTS = {
    ";": "no ';' is needed: new lines or spaces separate items and fields",
    "'": 'strings are written in double quotes: "relu"',
    "`": 'strings are written in double quotes: "relu"',
}

# What a construct's braces hold, said by example, for a '{' that is missing.
_BRACES = {
    "PATTERN_KW": "a pattern's fields go in braces, even none: pattern nn.Linear {}",
    "BACKEND": "a backend's items go in braces: backend b { pattern nn.Linear {} }",
    "QUANTIZER": "write: quantizer b {} (with the name of a backend of this file)",
    "GROUP": "a group's items go in braces: group g(ds) { pattern nn.Linear { dtypes: ds } }",
    "FOR": "a loop's items go in braces: for n in [1, 2] { ... }",
}


def _hint(
    tok: Token, expected: set[str], stack: Sequence[Any], text: str, span: m.Span
) -> str | None:
    """A hint for the common syntax errors whose fix can be told from where the parser stopped:
    '=' for ':' and back, a missing ',' or '{', a loop's values without a list, a pattern
    outside a backend, a stray '}', a comment in another language's syntax."""
    top = stack[-1] if stack and isinstance(stack[-1], Token) else None
    top_type = top.type if top is not None else None
    tokens = _tokens(stack)
    opener = _innermost_opener(stack)
    rest = _rest_of_line(text, _offset(text, span))
    if expected == {"COLON"} and top is not None and top.type in _FIELD_KEYS:
        return _field_hint(top, tok, opener, text, rest)
    if expected == {"EQUAL"} and tok.type == "COLON" and top is not None:
        kw = next((t for t in reversed(tokens) if t.type in _DECL_START), None)
        if kw is not None:
            return f"a definition takes '=': {kw} {top} = ...; ':' is for fields"
    if tok.type == "SLASH" and text[_offset(text, span) :][:2] in ("//", "/*"):
        return "comments start with '#'"
    if "LBRACE" in expected and tok.type != "LBRACE":
        if tok.type == "COMMA" and any(t.type == "IN" for t in tokens):
            return "write the loop's values as a list: for n in [1, 2] { ... }"
        kw = next((t for t in reversed(tokens) if t.type in _BRACES), None)
        if kw is not None:
            return _BRACES[kw.type]
    if expected == {"PATTERN_KW"} and top_type == "OVERRIDE":
        return f"write: override pattern {rest}"
    if "$END" in expected and _DECL_START <= expected:  # at the top level
        if tok.type in _ITEM_START:
            early = " (or the '}' before it closed its backend or group too early)"
            where = "patterns, use, for and override go inside a backend or a group"
            return where + (early if top_type == "RBRACE" else "")
        if tok.type == "RBRACE":
            return "this '}' closes nothing: remove it, or add the '{' it should close"
    if tok.type == "EQUAL" and opener is not None and opener[1] == "'('":
        use = next((i for i, t in enumerate(tokens) if t.type == "USE"), None)
        if use is not None and use + 1 < len(tokens):
            value = re.split(r"[,)]", rest[1:], maxsplit=1)[0].strip()
            return (
                "a group's arguments are written in order, without names: "
                f"use {tokens[use + 1]}({value or '...'})"
            )
    if tok.type == "COLON" and "RBRACE" in expected:
        return _value_missing_hint(text[: _offset(text, span)])
    if "COMMA" in expected and tok.type in _VALUE_START - {"LBRACE"}:
        return f"a ',' missing before {_show_token(tok)}?"
    return None


_FIELD_KEYS = ("NAME", "DTYPES_KW", "FUSER_KW")


def _field_hint(
    key: Token, tok: Token, opener: tuple[Token, str, Token] | None, text: str, rest: str
) -> str:
    """A field name, then not ':' (``dtypes = x``, ``dtypes x``, ``sequential nni.X``); ``rest``
    is the line from what was found on."""
    value = rest[1:].split(")", 1)[0] if tok.type in ("EQUAL", "LPAR") else rest
    value = re.split(r"[,}]", value, maxsplit=1)[0].strip() or "..."
    if opener is not None and opener[1] == "record":
        return f"write '{key}: {value}': a record's entries take ':'"
    line = text.split("\n")[key.line - 1] if key.line else ""
    column = (key.column or 1) - 1
    if line[:column].rstrip().endswith("sequential"):
        module = re.match(r"[\w.]+", line[column:])
        shown = module.group() if module else str(key)
        return f"sequential takes its module in parentheses: sequential({shown})"
    if tok.type == "EQUAL":
        return (
            f"write '{key}: {value}': a field takes ':' ('=' defines a name at the top level, "
            "as in dtypes int8 = {...})"
        )
    return f"write '{key}: {value}': a field takes ':' before its value"


# `key:` at the end of a line, then a lone name on the next: the name became the key's value.
_VALUE_MISSING = re.compile(r"([A-Za-z_]\w*)[ \t]*:[ \t]*(?:#[^\n]*)?\n\s*([A-Za-z_]\w*)[ \t]*$")


def _value_missing_hint(before: str) -> str | None:
    """A ':' where a field name was expected, after ``key:`` left without a value on its line."""
    found = _VALUE_MISSING.search(before)
    if found is None:
        return None
    line = before.count("\n", 0, found.start(1)) + 1
    key, taken = found.group(1), found.group(2)
    return f"'{key}:' on line {line} has no value, so '{taken}' was read as its value"


def _rest_of_line(text: str, offset: int, limit: int = 40) -> str:
    """The line of ``text`` from ``offset`` on, without its comment, shortened to ``limit``."""
    end = text.find("\n", offset)
    line = text[offset : end if end >= 0 else len(text)].split("#", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _offset(text: str, span: m.Span) -> int:
    """The offset in ``text`` of the start of ``span`` (clamped to the text)."""
    start = 0
    for _ in range(span.line - 1):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    return min(start + span.column - 1, len(text))


def _tokens(stack: Sequence[Any]) -> list[Token]:
    """Every token on the value stack, in order, including those of inlined rules.

    The parser builds model nodes as it reduces (parse.py), so a reduced rule is
    either a model node (no tokens left) or, for an inlined ``_rule``, a list of
    its children.
    """
    out: list[Token] = []
    for item in stack:
        if isinstance(item, Token):
            out.append(item)
        elif isinstance(item, list):
            out.extend(_tokens(item))
    return out


def _innermost_opener(stack: Sequence[Any]) -> tuple[Token, str, Token] | None:
    """The last unclosed bracket on the stack, what it opens, and where that starts.

    A closing bracket the parser has shifted but not yet reduced (it waits for
    the next token) closes the bracket it matches: that one is not a candidate.
    """
    closed = 0
    for k in range(len(stack) - 1, -1, -1):
        tok = stack[k]
        if isinstance(tok, Token) and tok.type in _CLOSING:
            closed += 1
            continue
        if not (isinstance(tok, Token) and tok.type in _CLOSERS):
            continue
        if closed:
            closed -= 1
            continue
        prev = stack[k - 1] if k else None
        if tok.type == "LBRACE":
            if (
                prev is None
                or isinstance(prev, Token)
                and prev.type in _CONTINUATION | {"COLON", "COMMA", "EQUAL", "LBRACE"}
            ):
                return tok, "record", tok
            for j in range(k - 1, -1, -1):
                kw = stack[j]
                if isinstance(kw, Token) and kw.type in _CONSTRUCTS:
                    return tok, _CONSTRUCTS[kw.type], kw
            return tok, "block", tok
        if tok.type == "LSQB":
            is_index = (
                prev is not None
                and not isinstance(prev, (Token, list))
                or isinstance(prev, Token)
                and prev.type in ("PATTERN_KW", "RPAR", "RSQB", "NAME")
            )
            return tok, "'['" if is_index else "list", tok
        return tok, "'('", tok
    return None


def _close_message(opener: tuple[Token, str, Token], found: str) -> str:
    bracket, construct, start = opener
    closer = {"LBRACE": "}", "LPAR": ")", "LSQB": "]"}[bracket.type]
    return f"expected '{closer}' to close the {construct} opened at {start.line}:{start.column}, found {found}"


def _value_context(stack: Sequence[Any]) -> str | None:
    """What kind of value the position after the stack's top must hold, if known."""
    if not stack or not isinstance(stack[-1], Token):
        return None
    top = stack[-1]
    if top.type == "COLON" and len(stack) >= 2:
        key_item = stack[-2]
        key_tok = key_item if isinstance(key_item, Token) else next(iter(_tokens([key_item])), None)
        if key_tok is None:
            return None
        key = str(key_tok)
        return f"{_VALUE_AFTER_KEY.get(key, 'a value')} after '{key}:'"
    if top.type == "EQUAL":
        kw = next((t for t in reversed(_tokens(stack[:-1])) if t.type in _DECL_START), None)
        what = {
            "CONSTRAINT": "a dtype name",
            "DTYPES_KW": "a dtype set",
            "ALIAS": "a dotted name",
            "FUSE": "the module the fuser builds",
        }.get(kw.type if kw is not None else "", "a value")
        return f"{what} after '='"
    if top.type in _AFTER_KEYWORD:
        return f"{_AFTER_KEYWORD[top.type]} after '{top}'"
    return None


def _expected_words(expected: set[str], stack: Sequence[Any]) -> str:
    """The expected terminals, said as a user would."""
    rest = set(expected)
    words: list[str] = []
    if _DECL_START <= rest:
        words.append(
            "a declaration (backend, quantizer, group, dtypes, constraint, fuse, alias or import)"
        )
        rest -= _DECL_START | {"$END"}
    if _ITEM_START <= rest:
        words.append("an item (pattern, use, for or override pattern)")
        rest -= _ITEM_START
    if {"NAME", "DTYPES_KW", "FUSER_KW"} <= rest and not _VALUE_START <= rest:
        words.append("a key" if "INT" in rest else "a field name")
        rest -= {"NAME", "DTYPES_KW", "FUSER_KW", "INT", "STRING"}
    if _VALUE_START <= rest:
        words.append("a value")
        rest -= _VALUE_START | {"MINUS", "PATTERN_KW", "FLOAT"}
    if rest - _CONTINUATION or words:
        rest -= _CONTINUATION
    order = list(_TOKEN_WORDS)
    for t in sorted(rest, key=lambda t: (order.index(t) if t in order else len(order), t)):
        words.append(_TOKEN_WORDS.get(t) or f"'{t.lower()}'")
    if len(words) > 1:
        return ", ".join(words[:-1]) + " or " + words[-1]
    return words[0] if words else "something else"


def _expected_hint(expected: set[str], stack: Sequence[Any]) -> str | None:
    return f"expected {_expected_words(expected, stack)}" if expected else None


def _show_token(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    text = str(tok)
    if len(text) > 40:
        text = text[:37] + "..."
    if tok.type == "STRING":
        return f"the string {text}"
    return f"'{text}'"


def _show_char(ch: str) -> str:
    if not ch:
        return "at the end of the file"
    if ch.isprintable() and not ch.isspace():
        return f"'{ch}'"
    return f"U+{ord(ch):04X}"
