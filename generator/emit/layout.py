"""Layout: black's line splitting, for the few statement shapes render emits.

Running black over the ~12,000 lines bcfg generates takes seconds, most of the
cost of a cold ``bcfg generate``. The statements render emits have few
shapes: calls, method chains, tuples, lists and dicts of names, literals and
keyword arguments. For those, black's algorithm (``black.linegen``,
``transform_line``) reduces to a short recursion, modelled here:

- a line that fits in 88 columns stays as it is, unless black must explode it
  (a collection display whose body has commas, once it was split out of its
  brackets);
- otherwise, inside brackets, split at the delimiters of highest priority:
  after commas (adding a trailing comma), or before the dots of a method
  chain with at least two calls;
- otherwise split at the last bracket pair: head up to the opening bracket,
  the body one level deeper, the tail from the closing bracket on. For an
  assignment or ``return`` black first tries its invisible parentheses and
  then prefers this same split when the value has no delimiter, or one dot.

Whatever falls outside that model raises ``Unsupported``, and render formats
that fragment with black itself; tests compare both on every spec and on
generated stress shapes. This module mirrors black 26.10.1 (the pinned
version); render uses black for everything when another version is installed.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import NamedTuple

LINE_LENGTH = 88
BLACK_VERSION = "26.10.1"

COMMA, DOT = 18, 1  # black's COMMA_PRIORITY and DOT_PRIORITY
_OPENING = {"(": ")", "[": "]", "{": "}"}
_CLOSING = {")", "]", "}"}

_TOKEN = re.compile(
    r"""
    (?P<ws>[ ]+)
    |(?P<string>f?"(?:[^"\\\n])*")
    |(?P<number>[0-9]+(?:\.[0-9]+)?(?:e-[0-9]+)?(?![0-9A-Za-z_.]))
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>[()\[\]{},:.=-])
    """,
    re.VERBOSE,
)
# Words that are operators or statements where black would see a delimiter.
_OPERATOR_WORDS = frozenset(keyword.kwlist) - {"None", "True", "False"}


class Unsupported(Exception):
    """The fragment has a shape this module does not model; format it with black."""


class _Leaf:
    """A token: ``kind`` is "string", "number", "name" or "op"."""

    __slots__ = ("end", "kind", "start", "value")

    def __init__(self, kind: str, value: str, start: int, end: int):
        self.kind = kind
        self.value = value
        self.start = start
        self.end = end


class _Source:
    """One logical line of code, tokenized, with its brackets matched."""

    def __init__(self, text: str):
        if not text.isascii() or "\\" in text:
            raise Unsupported("non-ASCII text or a backslash")
        self.text = text
        leaves: list[_Leaf] = []
        pos = 0
        for m in _TOKEN.finditer(text):
            if m.start() != pos:
                raise Unsupported(f"cannot tokenize {text[pos:pos + 20]!r}")
            pos = m.end()
            kind = m.lastgroup
            if kind != "ws":
                leaves.append(_Leaf(kind, m.group(), m.start(), pos))  # type: ignore[arg-type]
        if pos != len(text):
            raise Unsupported(f"cannot tokenize {text[pos:pos + 20]!r}")
        self.leaves = leaves
        self.match: dict[int, int] = {}
        self.atom: set[int] = set()  # opening brackets of displays, not of calls
        stack: list[int] = []
        prev: _Leaf | None = None
        for i, leaf in enumerate(leaves):
            v = leaf.value
            if leaf.kind != "op":
                if leaf.kind == "name" and i > 0 and v in _OPERATOR_WORDS:
                    raise Unsupported(f"operator word {v!r}")
            elif v in _OPENING:
                is_trailer = prev is not None and (
                    (prev.kind == "name" and prev.value not in _OPERATOR_WORDS)
                    or prev.value in _CLOSING
                    or prev.kind == "string"
                )
                if not is_trailer:
                    self.atom.add(i)
                stack.append(i)
            elif v in _CLOSING:
                if not stack or _OPENING[leaves[stack[-1]].value] != v:
                    raise Unsupported("unbalanced brackets")
                if prev is not None and prev.value == ",":
                    raise Unsupported("magic trailing comma")
                j = stack.pop()
                self.match[i] = j
                self.match[j] = i
            prev = leaf
        if stack:
            raise Unsupported("unbalanced brackets")


class _Line(NamedTuple):
    """Leaves ``[lo, hi)`` of a source at an indentation ``depth``; maybe a comma added."""

    src: _Source
    lo: int
    hi: int
    depth: int
    inside_brackets: bool
    add_comma: bool = False
    should_split_rhs: bool = False

    def __str__(self) -> str:
        leaves = self.src.leaves
        body = self.src.text[leaves[self.lo].start : leaves[self.hi - 1].end]
        return "    " * self.depth + body + ("," if self.add_comma else "")


def _delimiters(line: _Line, exclude_last: bool = True) -> dict[int, int]:
    """Black's split points at the line's own bracket depth: leaf index -> priority.

    Like black's ``max_delimiter_priority(exclude=...)`` the line's last leaf
    (an added comma, if any) does not count unless ``exclude_last`` is false.
    Anything else black would treat as a delimiter is unsupported.
    """
    leaves = line.src.leaves
    out: dict[int, int] = {}
    depth = 0
    last = line.hi - 1 if exclude_last and not line.add_comma else line.hi
    for i in range(line.lo, line.hi):
        leaf = leaves[i]
        v = leaf.value
        if v in _CLOSING:
            depth -= 1
        if depth == 0:
            prev = leaves[i - 1] if i > line.lo else None
            if leaf.kind == "op":
                if v == "," and i != last:
                    out[i] = COMMA
                elif v == "." and prev is not None and prev.value in _CLOSING:
                    out[i - 1] = DOT
                elif v == "-" and (
                    prev is not None and (prev.kind != "op" or prev.value in _CLOSING)
                ):
                    raise Unsupported("binary operator")
            elif leaf.kind == "string" and prev is not None and prev.kind == "string":
                raise Unsupported("implicit string concatenation")
        if v in _OPENING:
            depth += 1
    return out


def _fits(line: _Line) -> bool:
    return len(str(line)) <= LINE_LENGTH


def _transform(line: _Line) -> list[str]:
    """Black's ``transform_line`` for the supported shapes."""
    if not line.should_split_rhs and _fits(line):
        return [str(line)]
    if line.inside_brackets:
        parts = _delimiter_split(line)
        if parts is not None:
            return [s for p in parts for s in _transform(p)]
    split = _rhs_with_omits(line)
    if split is None:
        return [str(line)]  # black leaves a line it cannot split as it is
    return [s for part in split for s in _transform(part)]


def _delimiter_split(line: _Line) -> list[_Line] | None:
    delims = _delimiters(line)
    if not delims:
        return None
    priority = max(delims.values())
    cuts = [i for i, p in delims.items() if p == priority]
    if priority == DOT and len(cuts) == 1:
        return None  # "splitting a single attribute from its owner looks wrong"
    parts = []
    lo = line.lo
    for cut in sorted(cuts):
        parts.append(_Line(line.src, lo, cut + 1, line.depth, line.inside_brackets))
        lo = cut + 1
    if lo < line.hi:
        parts.append(_Line(line.src, lo, line.hi, line.depth, line.inside_brackets, line.add_comma))
    elif line.add_comma:
        raise Unsupported("added comma after a delimiter")
    last = parts[-1]
    if priority == COMMA and not last.add_comma and line.src.leaves[last.hi - 1].value != ",":
        parts[-1] = _Line(last.src, last.lo, last.hi, last.depth, last.inside_brackets, True)
    return parts


def _leaf_lengths(line: _Line) -> list[int]:
    """Each leaf's length with the blank before it, as black counts it (none for the first)."""
    leaves = line.src.leaves
    out = [len(leaves[line.lo].value)]
    for i in range(line.lo + 1, line.hi):
        out.append(leaves[i].end - leaves[i - 1].end)
    if line.add_comma:
        out.append(1)
    return out


def _trailers_to_omit(line: _Line) -> Iterator[frozenset[int]]:
    """Black's ``generate_trailers_to_omit``: ever larger sets of closing brackets to skip."""
    leaves = line.src.leaves
    omit: set[int] = set()
    yield frozenset(omit)
    lengths = _leaf_lengths(line)
    length = 4 * line.depth
    opening: int | None = None
    closing: int | None = None
    inner: set[int] = set()
    for index in range(line.hi - (0 if line.add_comma else 1), line.lo - 1, -1):
        length += lengths[index - line.lo]
        if length > LINE_LENGTH:
            break
        if index == line.hi:
            continue  # the added comma
        value = leaves[index].value
        if opening is not None:
            if index == opening:
                opening = None
            elif value in _CLOSING:
                inner.add(index)
        elif value in _CLOSING:
            if index > line.lo and leaves[index - 1].value in _OPENING:
                inner.add(index)  # empty brackets
                continue
            if closing is not None:
                omit.add(closing)
                omit.update(inner)
                inner.clear()
                yield frozenset(omit)
            opening = line.src.match[index]
            closing = index


class _CannotSplit(Exception):
    pass


def _rhs_with_omits(line: _Line) -> list[_Line] | None:
    """Black's ``right_hand_split_with_omits``; None where black gives up on the line."""
    leaves = line.src.leaves
    first: list[_Line] | None = None
    try:
        for omit in _trailers_to_omit(line):
            if omit:
                target = next(
                    (
                        i
                        for i in range(line.hi - 1, line.lo - 1, -1)
                        if leaves[i].value in _CLOSING and i not in omit
                    ),
                    None,
                )
                if target is not None:
                    opening = line.src.match[target]
                    prefix = 4 * line.depth + (
                        leaves[opening - 1].end - leaves[line.lo].start if opening > line.lo else 0
                    )
                    if prefix > LINE_LENGTH:
                        continue
            split = _right_hand_split(line, omit)
            if first is None and not omit:
                first = split
            if _fits(split[0]):
                return split
    except _CannotSplit:
        return None
    return first


def _right_hand_split(line: _Line, omit: frozenset[int] = frozenset()) -> list[_Line]:
    """Split at the last bracket pair not in ``omit``, as black's ``_first_right_hand_split``."""
    leaves = line.src.leaves
    start = line.hi - 1
    while True:  # an empty pair joins the tail, and the search goes on to its left
        closing = next(
            (
                i
                for i in range(start, line.lo - 1, -1)
                if leaves[i].value in _CLOSING and i not in omit
            ),
            None,
        )
        if closing is None:
            raise _CannotSplit
        opening = line.src.match[closing]
        if opening < line.lo:
            raise _CannotSplit
        if opening + 1 != closing:
            break
        start = opening - 1
    head = _Line(line.src, line.lo, opening + 1, line.depth, False)
    tail = _Line(line.src, closing, line.hi, line.depth, False, line.add_comma)
    body = _Line(line.src, opening + 1, closing, line.depth + 1, True)
    if opening in line.src.atom and COMMA in _delimiters(body).values():
        body = _Line(line.src, opening + 1, closing, line.depth + 1, True, should_split_rhs=True)
    return [head, body, tail]


def check_literals(text: str) -> None:
    """Reject text black would change without splitting: quotes, numbers, ``**``."""
    rest = _STRING.sub('""', text)
    if "'" in rest or "\\" in text or "**" in rest or not text.isascii():
        raise Unsupported("a literal black would normalize")
    for m in _NUMBER_LIKE.finditer(rest):
        if not _NUMBER.fullmatch(m.group()):
            raise Unsupported(f"number {m.group()!r} black would normalize")
    if ",)" in rest or ",]" in rest or ",}" in rest:
        raise Unsupported("magic trailing comma")


_STRING = re.compile(r'f?"[^"\\\n]*"')
_NUMBER_LIKE = re.compile(r"(?<![A-Za-z0-9_.])[0-9](?:[A-Za-z0-9_.]|(?<=[eE])[+-])*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:e-[0-9]+)?")


def list_item(text: str, depth: int) -> list[str]:
    """Lay out one element of an exploded list: ``text`` without its trailing comma."""
    line = "    " * depth + text + ","
    if len(line) <= LINE_LENGTH:
        check_literals(text)
        return [line]
    src = _Source(text)
    return _transform(_Line(src, 0, len(src.leaves), depth, True, add_comma=True))


def statement(text: str, depth: int) -> list[str]:
    """Lay out a simple statement: ``name = value``, ``return value``, ``raise value``, or a
    call (``self.add_stage(...)``, ``quantizers.append(...)``).

    Other statements are supported only while they fit on one line.
    """
    line = "    " * depth + text
    if len(line) <= LINE_LENGTH:
        check_literals(text)
        return [line]
    wrapped = _conditional(text, depth)
    if wrapped is not None:
        return wrapped
    src = _Source(text)
    leaves = src.leaves
    first = leaves[0].value
    if first in ("return", "raise") and leaves[0].kind == "name":
        value = 1
    elif len(leaves) > 2 and leaves[0].kind == "name" and leaves[1].value == "=":
        value = 2
    elif leaves[0].kind == "name" and leaves[-1].value == ")" and "=" not in _top(src):
        # A call: black adds no invisible parentheses; it splits at the right-hand
        # bracket, trying to omit trailers, as inside brackets.
        return _transform(_Line(src, 0, len(leaves), depth, False))
    else:
        raise Unsupported("only assignments, return, raise and calls are split")
    if value == len(leaves):
        raise Unsupported("no value")
    if value == len(leaves) - 1 and first != "raise":
        # One atom: black wraps it in its parentheses if it then fits, else leaves the line.
        check_literals(text)
        body = "    " * (depth + 1) + leaves[value].value
        if len(body) > LINE_LENGTH:
            return [line]
        return ["    " * depth + text[: leaves[value].start] + "(", body, "    " * depth + ")"]
    whole = _Line(src, 0, len(leaves), depth, False)
    if first != "raise":
        # Black wraps the value in invisible parentheses and drops them again
        # only if the value has no delimiter, or a single dot.
        delims = _delimiters(_Line(src, value, len(leaves), depth + 1, True), exclude_last=False)
        if delims and (max(delims.values()) != DOT or len(delims) > 1):
            raise Unsupported("value with delimiters keeps its optional parentheses")
    try:
        split = _right_hand_split(whole)
    except _CannotSplit:
        raise Unsupported("no bracket to split at") from None
    if split[0].hi <= value:
        raise Unsupported("no bracket in the value")
    if not _fits(split[0]):
        raise Unsupported("head too long: black would try omitting trailers")
    return [s for part in split for s in _transform(part)]


_ASSIGNED = re.compile(r"(return |[A-Za-z_][A-Za-z0-9_]* = )(.*)")


def _conditional(text: str, depth: int) -> list[str] | None:
    """``name = a if c else b`` (or ``return ...``) as black splits it, or None if ``text``
    is not of that shape: the value in parentheses, on one line if it fits there, else cut
    before ``if`` and ``else`` (black's ternary delimiters), each part laid out in turn."""
    m = _ASSIGNED.fullmatch(text)
    if m is None or " if " not in m.group(2):
        return None
    parts, level, start, pos = [], 0, 0, 0
    value = m.group(2)
    for tok in _TOKEN.finditer(value):
        pos = tok.end()
        v = tok.group()
        if v in _OPENING:
            level += 1
        elif v in _CLOSING:
            level -= 1
        elif level == 0 and v in ("if", "else") and tok.lastgroup == "name":
            parts.append(value[start : tok.start()].strip())
            start = tok.start()
    parts.append(value[start:].strip())
    if pos != len(value) or [p.split(" ", 1)[0] for p in parts[1:]] != ["if", "else"]:
        raise Unsupported("a conditional expression of another shape")
    for part in parts:
        check_literals(part)
    inner = "    " * (depth + 1)
    out = ["    " * depth + m.group(1) + "("]
    if len(inner + value) <= LINE_LENGTH:
        out.append(inner + value)
    else:
        for part in parts:
            src = _Source(part)
            out += _transform(_Line(src, 0, len(src.leaves), depth + 1, True))
    return [*out, "    " * depth + ")"]


def _top(src: _Source) -> list[str]:
    """The values of the leaves outside every bracket."""
    out, level = [], 0
    for leaf in src.leaves:
        if leaf.value in _CLOSING:
            level -= 1
        if level == 0:
            out.append(leaf.value)
        if leaf.value in _OPENING:
            level += 1
    return out


def header(text: str, depth: int) -> list[str]:
    """A compound statement's header: as written if it fits, else a ``def``'s parameters
    hugged on one line, or one a line with a trailing comma, as black splits them."""
    line = "    " * depth + text
    if len(line) <= LINE_LENGTH:
        check_literals(text)
        return [line]
    if not text.startswith("def ") or "(" not in text:
        raise Unsupported("a long header other than a def")
    head, rest = text.split("(", 1)
    params, close = rest.rsplit(")", 1)
    if any(c in params for c in "()[]{}\\'\"") or params.endswith(","):
        raise Unsupported("parameters with brackets, strings or a trailing comma")
    pad = "    " * (depth + 1)
    first, last = "    " * depth + f"{head}(", "    " * depth + f"){close}"
    if len(pad + params) <= LINE_LENGTH:
        return [first, pad + params, last]
    items = [pad + p.strip() + "," for p in params.split(",")]
    if any(len(i) > LINE_LENGTH for i in items):
        raise Unsupported("a parameter too long for a line")
    return [first, *items, last]


def from_import(module: str, names: list[str]) -> list[str]:
    """``from module import names`` as black writes it: one line, or one name a line."""
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= LINE_LENGTH:
        return [line]
    return [f"from {module} import ("] + [f"    {n}," for n in names] + [")"]


def docstring(text: str, depth: int) -> str:
    """A one-line docstring; black only strips it and pads quotes at its ends."""
    if text != text.strip() or not text or text[0] in '"\\' or text[-1] in '"\\':
        raise Unsupported("docstring black would pad or strip")
    return "    " * depth + f'"""{text}"""'


def string(value: str) -> str:
    """A string literal as black writes it, when that needs no escape."""
    if '"' in value or "\\" in value or not value.isprintable() or not value.isascii():
        return repr(value)  # rejected by _Source: black formats that fragment
    return f'"{value}"'
