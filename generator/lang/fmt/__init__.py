"""Format: the one canonical layout of a ``.bcfg`` spec (``bcfg fmt``).

The formatter prints the syntax model (``model.Spec``), not the text, so the
layout depends only on what the spec says: 4-space indentation, one field or
statement per line, lists packed to 88 columns, records and argument lists one
entry per line when they do not fit. Where order carries no meaning it is made
canonical: the fields of a pattern, the keys of a dtype config, the bounds of a
constraint and the flags of a ``fuse`` definition.

Comments are kept where they were: each is attached to the node it precedes
(own-line comments) or follows (end-of-line comments), found by its span, and
printed with that node. Blank lines between statements are kept (at most one);
``group`` and ``backend`` blocks always stand apart.

The layout engine is a small Wadler/prettier-style document printer: groups
print flat when they fit and broken otherwise; ``Fill`` packs list items.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import syntax as m
from ..parse import parse_text
from .comments import Comments, attach_comments
from .doc import render
from .order import canonical_order, meaning
from .printer import Printer

__all__ = [
    "FormatError",
    "Printer",
    "canonical_order",
    "checked_format",
    "format_spec",
    "format_text",
    "meaning",
    "render",
]


def format_spec(spec: m.Spec, source: str | None = None) -> str:
    """The canonical text of ``spec``; ``source`` is the text it was parsed from, if any.

    Comments are taken from ``spec.comments`` and need ``source`` to be placed.
    """
    spec = canonical_order(spec)
    comments = attach_comments(spec, source) if source is not None else Comments()
    return Printer(comments, source).spec(spec)


def format_text(text: str, file: str = "<spec>") -> str:
    """Format spec text; raises ``SpecError`` if it does not parse."""
    return format_spec(parse_text(text, file), text)


class FormatError(Exception):
    """Formatting would have changed a spec's meaning or lost a comment: a bug in bcfg."""


def checked_format(
    text: str, file: str = "<spec>", parse: Callable[[str, str], m.Spec] | None = None
) -> str:
    """``format_text``, verified: the result parses to the same meaning and keeps every comment.

    ``parse(text, name)`` parses (default ``parse_text``; the language server passes its cache,
    which parses again only the declarations it has not seen). The result is parsed under the
    name ``file`` + `` (formatted)``, so a cache keeps the input's parse too.
    """
    parse = parse or parse_text
    before = parse(text, file)
    result = format_spec(before, text)
    after = parse(result, f"{file} (formatted)")
    if meaning(after) != meaning(before):
        raise FormatError(f"formatting {file} would change its meaning")
    if sorted(t.rstrip() for _, t in before.comments) != sorted(t for _, t in after.comments):
        raise FormatError(f"formatting {file} would lose or change a comment")
    return result
