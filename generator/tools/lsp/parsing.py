"""Parsing for the server: each top-level declaration parsed once, the latest texts kept.

An edit touches one declaration; re-parsing a whole 10 kB spec for it would
be most of the time a check takes. ``ParseCache`` cuts a text at its
top-level declarations (``text.declaration_starts``), parses each piece on its
own and keeps the result by the piece's text, so after an edit only the piece
that changed is parsed again; the others are reused, their spans moved to
where the piece now starts. The pieces of a text that parses are exactly its
declarations (the grammar is ``start: _decl*`` and unambiguous), so the spec
assembled from them equals the one ``parse_text`` makes of the whole (a test
checks this on every spec and on the fuzzers' mutants). If any piece fails,
the whole text is parsed as ``bcfg generate`` parses it, so the error is the
same one.

Only the latest texts are kept (old trees kept alive slow every full
collection of the garbage collector). Used from the engine thread only.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any

from ...diagnostics import SpecError
from ...lang import syntax as syn
from ...lang.parse import parse_text
from ...sources import Source, Span
from . import text as tx

# A declaration parsed on its own: its nodes and comments, spans counted from its first line.
Piece = tuple[tuple[syn.Decl, ...], tuple[tuple[Span, str], ...]]


def shift(node: Any, lines: int, columns: int) -> Any:
    """``node`` with every span moved ``lines`` down, and ``columns`` right on its first line."""
    if isinstance(node, Span):
        col = node.column + (columns if node.line == 1 else 0)
        end_col = node.end_column + (columns if node.end_line == 1 else 0)
        return Span(node.file, node.line + lines, col, node.end_line + lines, end_col)
    if isinstance(node, tuple):
        return tuple(shift(x, lines, columns) for x in node)
    if is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in fields(node):
            value = getattr(node, f.name)
            if isinstance(value, (Span, tuple)) or (
                is_dataclass(value) and not isinstance(value, type)
            ):
                changes[f.name] = shift(value, lines, columns)
        return replace(node, **changes)
    return node


class ParseCache:
    """Specs by source, parsed a declaration at a time; what a text that does not parse raises."""

    def __init__(self) -> None:
        # file -> piece text -> its declarations and comments, spans counted from the piece
        self._relative: dict[str, dict[str, Piece]] = {}
        # file -> (piece text, line, column) -> the same, spans where the piece is
        self._placed: dict[str, dict[tuple[str, int, int], Piece]] = {}
        self._whole: dict[str, list[tuple[str, syn.Spec | SpecError]]] = {}  # file -> latest two

    def parse(self, source: Source) -> syn.Spec:
        """The spec of ``source``, as ``parse_text`` makes it; raises its SpecError."""
        latest = self._whole.setdefault(source.name, [])
        for digest, result in latest:
            if digest == source.digest:
                return _returned(result)
        try:
            outcome: syn.Spec | SpecError = self._parse(source.text, source.name)
        except SpecError as exc:
            outcome = exc
        latest.insert(0, (source.digest, outcome))
        del latest[2:]
        return _returned(outcome)

    def _parse(self, text: str, name: str) -> syn.Spec:
        starts = tx.declaration_starts(text)
        bounds = [0, *starts[1:], len(text)]
        relative, placed = self._relative.get(name, {}), self._placed.get(name, {})
        new_relative: dict[str, Piece] = {}
        new_placed: dict[tuple[str, int, int], Piece] = {}
        index = tx.TextIndex(text)
        decls: list[syn.Decl] = []
        comments: list[tuple[Span, str]] = []
        for a, b in zip(bounds, bounds[1:]):
            piece = text[a:b]
            line, column = index.line_col(a)
            here = placed.get((piece, line, column)) or new_placed.get((piece, line, column))
            if here is None:
                parsed = relative.get(piece) or new_relative.get(piece)
                if parsed is None:
                    try:
                        spec = parse_text(piece, name)
                    except SpecError:
                        return parse_text(
                            text, name
                        )  # the error exactly as the whole file gives it
                    parsed = (spec.decls, spec.comments)
                here = parsed if (line, column) == (1, 1) else shift(parsed, line - 1, column - 1)
                new_relative[piece] = parsed
            new_placed[(piece, line, column)] = here
            decls.extend(here[0])
            comments.extend(here[1])
        self._relative[name] = {
            **{p: relative[p] for p, *_ in new_placed if p in relative},
            **new_relative,
        }
        self._placed[name] = new_placed
        return syn.Spec(name, tuple(decls), tuple(comments))


def _returned(result: syn.Spec | SpecError) -> syn.Spec:
    if isinstance(result, SpecError):  # a new exception each time: a raised one keeps its traceback
        raise SpecError(result.diagnostics, result.sources)
    return result
