"""Documents and their printer: a small Wadler/prettier-style layout engine.

Groups print flat when they fit in the width and broken otherwise; ``Fill``
packs list items; ``LineSuffix`` holds end-of-line comments.
"""

from __future__ import annotations

from dataclasses import dataclass

from .order import INDENT, WIDTH


@dataclass
class Line:
    """A line break; in a flat group a space (``soft``: nothing). ``hard`` always breaks."""

    soft: bool = False
    hard: bool = False


LINE, SOFTLINE, HARDLINE = Line(), Line(soft=True), Line(hard=True)


@dataclass
class Group:
    """Print ``contents`` flat if it fits on the line, else broken."""

    contents: Doc
    brk: bool = False


@dataclass
class Nest:
    """Indent the lines that ``contents`` breaks by one level."""

    contents: Doc


@dataclass
class Fill:
    """``[item, sep, item, sep, ..., item]``: break a separator only where the next item does not fit.

    ``trailer`` follows the last item and is measured with it.
    """

    parts: list
    trailer: Doc = ""
    start: int = 0  # the parts before it are printed (a Fill's rest shares its list)


@dataclass
class IfBreak:
    """``brk`` if the enclosing group is broken, else ``flat``."""

    brk: Doc
    flat: Doc = ""


@dataclass
class LineSuffix:
    """Text deferred to the end of the line: an end-of-line comment."""

    text: str


@dataclass
class BreakParent:
    """Forces every enclosing group to break."""


BREAK_PARENT = BreakParent()
Doc = str | list | Line | Group | Nest | Fill | IfBreak | LineSuffix | BreakParent

_FLAT, _BREAK = 0, 1


def _propagate(doc: Doc) -> bool:
    """Mark groups that hold a hard line or a BreakParent as broken; True if ``doc`` holds one."""
    if isinstance(doc, str):
        return False
    if isinstance(doc, list):
        found = False
        for d in doc:
            found = _propagate(d) or found
        return found
    if isinstance(doc, Line):
        return doc.hard
    if isinstance(doc, BreakParent):
        return True
    if isinstance(doc, Group):
        if _propagate(doc.contents):
            doc.brk = True
        return doc.brk
    if isinstance(doc, Nest):
        return _propagate(doc.contents)
    if isinstance(doc, Fill):
        found = False
        for d in doc.parts[doc.start :]:
            found = _propagate(d) or found
        return _propagate(doc.trailer) or found
    if isinstance(doc, IfBreak):
        a = _propagate(doc.brk)
        return _propagate(doc.flat) or a
    return False


def _has_suffix(doc: Doc) -> bool:
    if isinstance(doc, LineSuffix):
        return True
    if isinstance(doc, list):
        return any(_has_suffix(d) for d in doc)
    if isinstance(doc, (Group, Nest)):
        return _has_suffix(doc.contents)
    if isinstance(doc, Fill):
        return any(_has_suffix(d) for d in doc.parts[doc.start :]) or _has_suffix(doc.trailer)
    if isinstance(doc, IfBreak):
        return _has_suffix(doc.brk) or _has_suffix(doc.flat)
    return False


def _fits(nxt: list, rest: list, width: int, must_be_flat: bool = False) -> bool:
    """Whether ``nxt`` (then ``rest`` up to its first line break) fits in ``width`` columns."""
    cmds = list(nxt)
    rest_idx = len(rest)
    while width >= 0:
        if not cmds:
            if rest_idx == 0:
                return True
            rest_idx -= 1
            cmds.append(rest[rest_idx])
            continue
        ind, mode, d = cmds.pop()
        if isinstance(d, str):
            width -= len(d)
        elif isinstance(d, list):
            cmds.extend((ind, mode, x) for x in reversed(d))
        elif isinstance(d, Nest):
            cmds.append((ind, mode, d.contents))
        elif isinstance(d, Group):
            if must_be_flat and d.brk:
                return False
            cmds.append((ind, _BREAK if d.brk else mode, d.contents))
        elif isinstance(d, IfBreak):
            cmds.append((ind, mode, d.brk if mode == _BREAK else d.flat))
        elif isinstance(d, Fill):
            # One part at a time: measuring stops at the first line break, so a
            # long list is not walked to its end for every group before it.
            if d.start < len(d.parts):
                cmds.append((ind, mode, Fill(d.parts, d.trailer, d.start + 1)))
                cmds.append((ind, mode, d.parts[d.start]))
            else:
                cmds.append((ind, mode, d.trailer))
        elif isinstance(d, Line):
            if mode == _BREAK or d.hard:
                return True
            if not d.soft:
                width -= 1
    return False


def render(doc: Doc, width: int = WIDTH) -> str:
    """Print a document: groups flat where they fit, broken elsewhere."""
    _propagate(doc)
    out: list[str] = []
    pos = 0
    line_indent = 0  # indentation of the line being printed
    suffix: list[str] = []
    # End-of-line comments flushed as lines of their own read back as comments
    # before the next item; an item after them stands alone, as it will then.
    alone = False
    cmds: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    while cmds:
        ind, mode, d = cmds.pop()
        if isinstance(d, str):
            out.append(d)
            pos += len(d)
            alone = alone and not d
        elif isinstance(d, list):
            cmds.extend((ind, mode, x) for x in reversed(d))
        elif isinstance(d, Nest):
            cmds.append((ind + INDENT, mode, d.contents))
        elif isinstance(d, Group):
            if mode == _FLAT and not d.brk:
                cmds.append((ind, _FLAT, d.contents))
            else:
                flat = not d.brk and _fits([(ind, _FLAT, d.contents)], cmds, width - pos)
                cmds.append((ind, _FLAT if flat else _BREAK, d.contents))
        elif isinstance(d, IfBreak):
            cmds.append((ind, mode, d.brk if mode == _BREAK else d.flat))
        elif isinstance(d, LineSuffix):
            suffix.append(d.text)
        elif isinstance(d, BreakParent):
            pass
        elif isinstance(d, Fill):
            _fill(d, ind, mode, cmds, width - pos, alone)
            alone = False
        elif isinstance(d, Line):
            if mode == _FLAT and not d.hard:
                if not d.soft:
                    out.append(" ")
                    pos += 1
                continue
            _flush(out, suffix, max(ind, line_indent))
            alone = len(suffix) > 1
            suffix = []
            while out and out[-1].endswith(" "):
                out[-1] = out[-1].rstrip(" ")
            out.append("\n" + " " * ind)
            pos = line_indent = ind
    _flush(out, suffix, 0)
    return "".join(out)


def _flush(out: list[str], suffix: list[str], ind: int) -> None:
    """End-of-line comments: the first ends the line, any others get lines of their own."""
    if suffix:
        out.append("  " + suffix[0])
        out.extend("\n" + " " * ind + text for text in suffix[1:])


def _fill(d: Fill, ind: int, mode: int, cmds: list, rem: int, alone: bool = False) -> None:
    """Print the next part of a fill; ``alone``: it follows comments on lines of their own."""
    parts, at = d.parts, d.start
    if at >= len(parts):
        cmds.append((ind, mode, d.trailer))
        return
    content = parts[at]
    last = len(parts) == at + 1
    trailer = _resolve(d.trailer, mode)
    measured = [content, trailer] if last else content
    content_fits = _fits([(ind, _FLAT, measured)], [], rem, True)
    if last:
        cmds.append((ind, mode, d.trailer))
        cmds.append((ind, _FLAT if content_fits else _BREAK, content))
        return
    sep, second = parts[at + 1], parts[at + 2]
    rest = Fill(parts, d.trailer, at + 2)
    pair = [content, sep, second] + ([trailer] if len(parts) == at + 3 else [])
    both_fit = not alone and not _has_suffix(content) and _fits([(ind, _FLAT, pair)], [], rem, True)
    cmds.append((ind, mode, rest))
    cmds.append((ind, _FLAT if both_fit else _BREAK, sep))
    cmds.append((ind, _FLAT if content_fits else _BREAK, content))


def _resolve(doc: Doc, mode: int) -> Doc:
    """``doc`` as printed in ``mode``, where it is an ``IfBreak``."""
    if isinstance(doc, IfBreak):
        return doc.brk if mode == _BREAK else doc.flat
    return doc


def join(sep: Doc, docs: list[Doc]) -> list[Doc]:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return out
