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

import re
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, Union

from . import syntax as m
from .parse import parse_text
from .vocabulary import CONSTRAINT_FIELDS, DTYPE_KEY_WORDS, FMT_FIELD_ORDER, FUSE_FLAGS

WIDTH = 88
INDENT = 4

# Canonical orders of the fields and keys whose order carries no meaning.
FIELD_ORDER = FMT_FIELD_ORDER
DTYPE_KEY_ORDER = DTYPE_KEY_WORDS
# Either spelling of a constraint sorts to torch's order.
CONSTRAINT_KEY_ORDER = {name: i for i, names in enumerate(CONSTRAINT_FIELDS) for name in names}
FUSE_FLAG_ORDER = FUSE_FLAGS

_NAME = re.compile(
    r"(?:[A-Za-z_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?:[A-Za-z0-9_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\Z"
)
_FLOAT = re.compile(r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?\Z|[0-9]+[eE][+-]?[0-9]+\Z")


# ==========================================================================
# Documents and their printer
# ==========================================================================


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
Doc = Union[str, list, Line, Group, Nest, Fill, IfBreak, LineSuffix, BreakParent]

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
        for d in doc.parts:
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
        return any(_has_suffix(d) for d in doc.parts) or _has_suffix(doc.trailer)
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
            cmds.append((ind, mode, d.trailer))
            cmds.extend((ind, mode, x) for x in reversed(d.parts))
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
    cmds: list[tuple[int, int, Doc]] = [(0, _BREAK, doc)]
    while cmds:
        ind, mode, d = cmds.pop()
        if isinstance(d, str):
            out.append(d)
            pos += len(d)
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
            _fill(d, ind, mode, cmds, width - pos)
        elif isinstance(d, Line):
            if mode == _FLAT and not d.hard:
                if not d.soft:
                    out.append(" ")
                    pos += 1
                continue
            _flush(out, suffix, max(ind, line_indent))
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


def _fill(d: Fill, ind: int, mode: int, cmds: list, rem: int) -> None:
    parts = d.parts
    if not parts:
        cmds.append((ind, mode, d.trailer))
        return
    content = parts[0]
    last = len(parts) == 1
    trailer = _resolve(d.trailer, mode)
    measured = [content, trailer] if last else content
    content_fits = _fits([(ind, _FLAT, measured)], [], rem, True)
    if last:
        cmds.append((ind, mode, d.trailer))
        cmds.append((ind, _FLAT if content_fits else _BREAK, content))
        return
    sep, second = parts[1], parts[2]
    rest = Fill(parts[2:], d.trailer)
    pair = [content, sep, second] + ([trailer] if len(parts) == 3 else [])
    both_fit = not _has_suffix(content) and _fits([(ind, _FLAT, pair)], [], rem, True)
    cmds.append((ind, mode, rest))
    cmds.append((ind, _FLAT if both_fit else _BREAK, sep))
    cmds.append((ind, _FLAT if content_fits else _BREAK, content))


def _resolve(doc: Doc, mode: int) -> Doc:
    """``doc`` as printed in ``mode``, where it is an ``IfBreak``."""
    if isinstance(doc, IfBreak):
        return doc.brk if mode == _BREAK else doc.flat
    return doc


def _join(sep: Doc, docs: list[Doc]) -> list[Doc]:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return out


# ==========================================================================
# Canonical order and meaning
# ==========================================================================


def _rank(order, key) -> tuple[int, int]:
    if isinstance(order, dict):
        return (0, order[key]) if key in order else (1, 0)
    return (0, order.index(key)) if key in order else (1, 0)


def _sorted_entries(entries: tuple[m.Entry, ...], order) -> tuple[m.Entry, ...]:
    return tuple(sorted(entries, key=lambda e: _rank(order, e.key)))


def _dtype_expr(e: m.Expr) -> m.Expr:
    """A dtype-set expression with the keys of its dtype configs in canonical order."""
    if isinstance(e, m.Record):
        return replace(e, entries=_sorted_entries(e.entries, DTYPE_KEY_ORDER))
    if isinstance(e, m.ListExpr):
        return replace(e, items=tuple(_dtype_expr(x) for x in e.items))
    if isinstance(e, m.Call) and e.func.text == "constrain" and e.args:
        return replace(e, args=(_dtype_expr(e.args[0]), *e.args[1:]))
    return e


def _canon_item(item: m.Item) -> m.Item:
    if isinstance(item, m.PatternItem):
        flds = tuple(
            replace(f, value=_dtype_expr(f.value)) if f.name == "dtypes" else f for f in item.fields
        )
        return replace(item, fields=tuple(sorted(flds, key=lambda f: _rank(FIELD_ORDER, f.name))))
    if isinstance(item, m.ForItem):
        return replace(item, body=tuple(_canon_item(i) for i in item.body))
    return item


def _canon_decl(d: m.Decl) -> m.Decl:
    if isinstance(d, m.ConstraintDecl):
        return replace(d, entries=_sorted_entries(d.entries, CONSTRAINT_KEY_ORDER))
    if isinstance(d, m.DTypesDecl):
        return replace(d, value=_dtype_expr(d.value))
    if isinstance(d, m.FuseDecl):
        return replace(d, flags=tuple(sorted(d.flags, key=lambda f: _rank(FUSE_FLAG_ORDER, f))))
    if isinstance(d, (m.GroupDecl, m.BackendDecl)):
        return replace(d, body=tuple(_canon_item(i) for i in d.body))
    return d


def canonical_order(spec: m.Spec) -> m.Spec:
    """The same spec with every order that carries no meaning made canonical."""
    return replace(spec, decls=tuple(_canon_decl(d) for d in spec.decls))


def _strip(node: Any) -> Any:
    if isinstance(node, tuple):
        return tuple(_strip(x) for x in node)
    if is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(
            _strip(getattr(node, f.name)) for f in fields(node) if f.name != "span"
        )
    if isinstance(node, float):
        return ("float", node)
    return node


def meaning(spec: m.Spec) -> tuple:
    """What a spec says, without spans, comments or meaningless order: equal iff same meaning."""
    return _strip(canonical_order(spec).decls)


# ==========================================================================
# Comments
# ==========================================================================


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str
    own_line: bool


def _start(node) -> tuple[int, int]:
    return (node.span.line, node.span.column)


def _end(node) -> tuple[int, int]:
    return (node.span.end_line, node.span.end_column)


def _children(node: Any) -> list[Any]:
    """The child nodes of ``node`` that carry spans, in source order."""
    kids: list[Any]
    if isinstance(node, m.Spec):
        kids = list(node.decls)
    elif isinstance(node, m.AliasDecl):
        kids = [node.target]
    elif isinstance(node, m.ConstraintDecl):
        kids = [node.dtype, *node.entries]
    elif isinstance(node, m.DTypesDecl):
        kids = [node.value]
    elif isinstance(node, m.FuseDecl):
        kids = [*node.params, node.body]
    elif isinstance(node, (m.GroupDecl, m.BackendDecl)):
        kids = list(node.body)
    elif isinstance(node, m.PatternItem):
        kids = [node.head, *node.fields]
    elif isinstance(node, m.UseItem):
        kids = list(node.args)
    elif isinstance(node, m.ForItem):
        kids = [node.iterable, *node.body]
    elif isinstance(node, (m.Field, m.Entry)):
        kids = [node.value]
    elif isinstance(node, m.Param):
        kids = list(node.items)
    elif isinstance(node, m.BinOp):
        kids = [node.left, node.right]
    elif isinstance(node, m.Neg):
        kids = [node.operand]
    elif isinstance(node, (m.TupleExpr, m.ListExpr)):
        kids = list(node.items)
    elif isinstance(node, m.Record):
        kids = list(node.entries)
    elif isinstance(node, m.Index):
        kids = [node.target, node.index]
    elif isinstance(node, m.Call):
        kids = [node.func, *node.args]
    else:
        kids = []
    return sorted(kids, key=_start)


# Nodes that print their own dangling comments (before their closing bracket).
_DANGLING_HOSTS = (
    m.Spec,
    m.GroupDecl,
    m.BackendDecl,
    m.ForItem,
    m.PatternItem,
    m.ListExpr,
    m.TupleExpr,
    m.Record,
    m.ConstraintDecl,
    m.Call,
    m.UseItem,
    m.Param,
)
# Parents whose children each start a line when the parent breaks.
_SLOT_PARENTS = (
    m.Spec,
    m.GroupDecl,
    m.BackendDecl,
    m.ForItem,
    m.PatternItem,
    m.ListExpr,
    m.TupleExpr,
    m.Record,
    m.ConstraintDecl,
    m.UseItem,
    m.FuseDecl,
    m.Param,
)


class Comments:
    """Comments attached to nodes (by ``id``): leading, trailing and dangling."""

    def __init__(self) -> None:
        self.leading: dict[int, list[Comment]] = {}
        self.trailing: dict[int, list[Comment]] = {}
        self.dangling: dict[int, list[Comment]] = {}
        self.header: dict[int, list[Comment]] = {}  # after the `{` of a group or backend

    def add(self, table: dict, node, c: Comment) -> None:
        table.setdefault(id(node), []).append(c)

    def any_inside(self, node) -> bool:
        """Whether a comment is attached to ``node`` or anything in it."""
        tables = (self.leading, self.trailing, self.dangling, self.header)
        if any(id(node) in t for t in tables):
            return True
        return any(self.any_inside(k) for k in _children(node))


def _is_slot(node, parent) -> bool:
    if isinstance(parent, m.Call):
        return node is not parent.func
    if isinstance(parent, m.ForItem):
        return node is not parent.iterable
    if isinstance(parent, m.PatternItem):
        return node is not parent.head
    if isinstance(parent, m.ConstraintDecl):
        return node is not parent.dtype
    return isinstance(parent, _SLOT_PARENTS)


def _trailing_ok(node, parent) -> bool:
    """End-of-line comments may follow a pattern head or a loop's list as well as slots."""
    if isinstance(parent, m.PatternItem) and node is parent.head:
        return True
    if isinstance(parent, m.ForItem) and node is parent.iterable:
        return True
    return _is_slot(node, parent)


def attach_comments(spec: m.Spec, source: str) -> Comments:
    """Attach every comment of ``spec`` to a node of ``spec`` (which must be what was parsed)."""
    lines = source.split("\n")
    out = Comments()
    for span, text in spec.comments:
        before = lines[span.line - 1][: span.column - 1] if span.line <= len(lines) else ""
        c = Comment(span.line, span.column, text.rstrip(), before.strip() == "")
        _attach(spec, c, out)
    return out


def _attach(spec: m.Spec, c: Comment, out: Comments) -> None:
    pos = (c.line, c.column)
    chain = [spec]  # the enclosing nodes, outermost first
    while True:
        kids = _children(chain[-1])
        inner = next((k for k in kids if _start(k) <= pos < _end(k)), None)
        if inner is None:
            break
        chain.append(inner)
    node = chain[-1]
    kids = _children(node)
    preceding = next((k for k in reversed(kids) if _end(k) <= pos), None)
    following = next((k for k in kids if _start(k) >= pos), None)
    if c.own_line and following is not None:
        _place(out.leading, chain + [following], c, out, lead=True)
    elif (
        not c.own_line
        and preceding is None
        and isinstance(node, (m.GroupDecl, m.BackendDecl))
        and c.line == node.span.line
    ):
        out.add(out.header, node, c)
    elif not c.own_line and preceding is not None:
        _place(out.trailing, chain + [preceding], c, out, lead=False)
    elif following is not None:
        _place(out.leading, chain + [following], c, out, lead=True)
    elif isinstance(node, _DANGLING_HOSTS):
        out.add(out.dangling, node, c)
    elif preceding is not None:
        _place(out.trailing, chain + [preceding], c, out, lead=False)
    else:
        _place(out.leading, chain, c, out, lead=True)


def _place(table: dict, chain: list, c: Comment, out: Comments, lead: bool) -> None:
    """Attach ``c`` to the innermost node of ``chain`` that can carry it on its own line."""
    for i in range(len(chain) - 1, 0, -1):
        node, parent = chain[i], chain[i - 1]
        if (_is_slot if lead else _trailing_ok)(node, parent):
            out.add(table, node, c)
            return
    out.add(out.dangling, chain[0], c)


# ==========================================================================
# The spec printer
# ==========================================================================


def quote(text: str) -> str:
    """A STRING token whose value is ``text``."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    return '"' + "".join(out) + '"'


def _number(value: int | float) -> str:
    if isinstance(value, bool):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int):
        return str(value)
    text = repr(value)
    if not _FLOAT.match(text):
        raise ValueError(f"cannot write the number {value!r} in a spec")
    return text


_PREC_SUM, _PREC_PRODUCT, _PREC_UNARY, _PREC_POWER, _PREC_POSTFIX, _PREC_ATOM = range(1, 7)


class Printer:
    """Builds the document of a spec; ``source`` (the parsed text) supplies blank lines."""

    def __init__(self, comments: Comments | None = None, source: str | None = None):
        self.c = comments or Comments()
        self.blank = None
        if source is not None:
            lines = source.split("\n")
            acc, prefix = 0, [0]
            for ln in lines:
                acc += ln.strip() == ""
                prefix.append(acc)
            self.blank = prefix

    # ------------------------------------------------------------ comments

    def _blank_between(self, a: int, b: int) -> bool:
        """A blank source line strictly between lines ``a`` and ``b``."""
        if self.blank is None or b - a < 2:
            return False
        b = min(b, len(self.blank))
        return self.blank[b - 1] - self.blank[a] > 0

    def _lead(self, node) -> list[Comment]:
        return self.c.leading.get(id(node), [])

    def wrap(self, node, doc: Doc) -> Doc:
        """``doc`` with the node's leading and trailing comments (not for statements)."""
        lead = self._lead(node)
        trail = self.c.trailing.get(id(node), [])
        if lead:
            parts: list[Doc] = []
            for c in lead:
                parts += [c.text, HARDLINE]
            doc = Group(parts + [doc])
        if trail:
            doc = [doc, *self._suffix(trail)]
        return doc

    def _suffix(self, trail: list[Comment]) -> list[Doc]:
        return [*(LineSuffix(c.text) for c in trail), BREAK_PARENT]

    def _dangling(self, node) -> list[Comment]:
        return self.c.dangling.get(id(node), [])

    # ---------------------------------------------------------- statements

    def statements(self, nodes, doc_of, host, start_line: int, top: bool = False) -> list[Doc]:
        """Lines of statements with their comments; blank lines kept (at most one).

        A statement ends with at most one end-of-line comment; further ones go
        on their own lines after it, as the next statement's leading comments.
        """
        entries: list[tuple[bool, Doc]] = []  # (blank line before, doc)
        prev_line, prev_node = start_line, None
        carry: list[Comment] = []
        for node in nodes:
            forced = top and prev_node is not None and self._stands_apart(prev_node, node)
            first_of_node = True
            for c in carry + self._lead(node):
                blank = self._blank_between(prev_line, c.line) or (forced and first_of_node)
                entries.append((blank, c.text))
                prev_line, first_of_node = c.line, False
            blank = self._blank_between(prev_line, node.span.line) or (forced and first_of_node)
            trail = self.c.trailing.get(id(node), [])
            trail, carry = trail[:1], trail[1:]
            doc = doc_of(node)
            entries.append((blank, [doc, *self._suffix(trail)] if trail else doc))
            prev_line, prev_node = node.span.end_line, node
        for c in carry + self._dangling(host):
            entries.append((self._blank_between(prev_line, c.line), c.text))
            prev_line = c.line
        out: list[Doc] = []
        for i, (blank, doc) in enumerate(entries):
            if i:
                out.append(HARDLINE)
                if blank:
                    out.append(HARDLINE)
            out.append(doc)
        return out

    def _stands_apart(self, a: m.Decl, b: m.Decl) -> bool:
        blocks = (m.GroupDecl, m.BackendDecl)
        if isinstance(a, blocks) or isinstance(b, blocks):
            return True
        return self.blank is None and type(a) is not type(b)

    def block(self, host, items, start_line: int) -> Doc:
        body = self.statements(items, self.item, host, start_line)
        header = self.c.header.get(id(host), [])
        opening: list[Doc] = ["{", *self._suffix(header)] if header else ["{"]
        if not body:
            return [*opening, HARDLINE, "}"] if header else "{}"
        return [*opening, Nest([HARDLINE, *body]), HARDLINE, "}"]

    # --------------------------------------------------------------- spec

    def spec(self, spec: m.Spec) -> str:
        body = self.statements(spec.decls, self.decl, spec, 0, top=True)
        text = render(body) if body else ""
        return text + "\n" if text else ""

    # -------------------------------------------------------- declarations

    def decl(self, d: m.Decl) -> Doc:
        if isinstance(d, m.ImportDecl):
            return f"import {quote(d.path)}"
        if isinstance(d, m.AliasDecl):
            return [f"alias {d.name} = ", self.expr(d.target)]
        if isinstance(d, m.ConstraintDecl):
            head = [f"constraint {d.name} = ", self.expr(d.dtype), " "]
            return [head, self.packed("{", "}", [self.entry(e) for e in d.entries], d)]
        if isinstance(d, m.DTypesDecl):
            return [f"dtypes {d.name} = ", self.expr(d.value)]
        if isinstance(d, m.FuseDecl):
            params = self.bracketed("(", ")", [self.param(p) for p in d.params], None)
            flags = "".join(" " + f for f in d.flags)
            body = self.wrap(d.body, self.expr(d.body))
            return [f"fuse {d.name}", params, flags, " =", Group(Nest([LINE, body]))]
        if isinstance(d, m.GroupDecl):
            params = ""
            if d.params:
                params = self.bracketed("(", ")", list(d.params), None)
            return [f"group {d.name}", params, " ", self.block(d, d.body, d.span.line)]
        if isinstance(d, m.BackendDecl):
            label = f" {quote(d.backend_name)}" if d.backend_name is not None else ""
            return [f"backend {d.name}{label} ", self.block(d, d.body, d.span.line)]
        raise AssertionError(f"unhandled declaration {type(d).__name__}")

    def param(self, p: m.Param) -> Doc:
        if p.name is not None:
            doc: Doc = p.name
        else:
            doc = self.bracketed("(", ")", [self.param(q) for q in p.items], p, tuple_=True)
        return self.wrap(p, doc)

    # --------------------------------------------------------------- items

    def item(self, it: m.Item) -> Doc:
        if isinstance(it, m.PatternItem):
            return self.pattern_item(it)
        if isinstance(it, m.UseItem):
            if not it.args and not self._dangling(it):
                return f"use {it.group}"
            return [f"use {it.group}", self.arguments(it.args, it)]
        if isinstance(it, m.ForItem):
            if it.destructure:
                target: Doc = "(" + ", ".join(it.targets) + ")"
            else:
                target = it.targets[0]
            head_end = max(it.span.line, it.iterable.span.end_line)
            iterable = self.wrap(it.iterable, self.expr(it.iterable))
            return ["for ", target, " in ", iterable, " ", self.block(it, it.body, head_end)]
        raise AssertionError(f"unhandled item {type(it).__name__}")

    def pattern_item(self, it: m.PatternItem) -> Doc:
        kw = ("override " if it.override else "") + "pattern " + ("complex " if it.complex else "")
        head = self.wrap(it.head, self.expr(it.head))
        if not it.fields and not self._dangling(it):
            return [kw, head, " {}"]
        if len(it.fields) == 1 and not self.c.any_inside(it.fields[0]) and not self._dangling(it):
            return Group([kw, head, " {", Nest([LINE, self.field(it.fields[0])]), LINE, "}"])
        start = max(it.head.span.end_line, it.span.line)
        body = self.statements(it.fields, self.field, it, start)
        return [kw, head, " {", Nest([HARDLINE, *body]), HARDLINE, "}"]

    def field(self, f: m.Field) -> Doc:
        return [f"{f.name}: ", self.wrap(f.value, self.expr(f.value))]

    def entry(self, e: m.Entry) -> Doc:
        if isinstance(e.key, int):
            key = str(e.key)
        else:
            key = e.key if _NAME.match(e.key) else quote(e.key)
        return self.wrap(e, [f"{key}: ", self.expr(e.value)])

    # ---------------------------------------------------------- brackets

    def bracketed(self, left: str, right: str, docs: list[Doc], host, tuple_: bool = False) -> Doc:
        """``left item, item right``: flat if it fits, else one item per line, trailing comma."""
        dangling = self._dangling(host) if host is not None else []
        if not docs and not dangling:
            return left + right
        tail: list[Doc] = []
        if dangling:
            tail = [HARDLINE] if docs else []
            tail += [*_join(HARDLINE, [c.text for c in dangling]), BREAK_PARENT]
        comma: Doc = IfBreak(",", "," if tuple_ and len(docs) == 1 else "")
        inner = [SOFTLINE, *_join([",", LINE], docs), comma if docs else "", *tail]
        return Group([left, Nest(inner), SOFTLINE, right])

    def packed(self, left: str, right: str, docs: list[Doc], host) -> Doc:
        """Like ``bracketed`` but packs as many items per line as fit."""
        dangling = self._dangling(host)
        if not docs and not dangling:
            return left + right
        parts: list[Doc] = []
        for i, d in enumerate(docs):
            if i:
                parts.append([",", LINE])
            parts.append(d)
        tail: list[Doc] = []
        if dangling:
            tail = [HARDLINE] if docs else []
            tail += [*_join(HARDLINE, [c.text for c in dangling]), BREAK_PARENT]
        fill: list[Doc] = [Fill(parts, IfBreak(","))] if parts else []
        return Group([left, Nest([SOFTLINE, *fill, *tail]), SOFTLINE, right])

    def arguments(self, args: tuple[m.Expr, ...], host) -> Doc:
        docs = [self.wrap(a, self.expr(a)) for a in args]
        hug = (
            len(args) == 1
            and isinstance(args[0], (m.ListExpr, m.Record))
            and id(args[0]) not in self.c.leading
            and id(args[0]) not in self.c.trailing
            and not self._dangling(host)
        )
        if hug:
            return ["(", docs[0], ")"]
        return self.bracketed("(", ")", docs, host)

    # -------------------------------------------------------- expressions

    def expr(self, e: m.Expr, min_prec: int = 0) -> Doc:
        doc, prec = self._expr(e)
        if prec < min_prec:
            return ["(", doc, ")"]
        return doc

    def _sub(self, e: m.Expr, min_prec: int) -> Doc:
        return self.wrap(e, self.expr(e, min_prec))

    def _expr(self, e: m.Expr) -> tuple[Doc, int]:
        if isinstance(e, m.DottedName):
            return ".".join(e.parts), _PREC_ATOM
        if isinstance(e, m.Str):
            return quote(e.value), _PREC_ATOM
        if isinstance(e, (m.Int, m.Float)):
            text = _number(e.value)
            if text.startswith("-"):
                return text, _PREC_UNARY
            return text, _PREC_ATOM
        if isinstance(e, m.PatternRef):
            return "pattern", _PREC_ATOM
        if isinstance(e, m.BinOp):
            if e.op == "**":
                left, right, prec = _PREC_POSTFIX, _PREC_UNARY, _PREC_POWER
            elif e.op in ("*", "/"):
                left, right, prec = _PREC_PRODUCT, _PREC_UNARY, _PREC_PRODUCT
            else:
                left, right, prec = _PREC_SUM, _PREC_PRODUCT, _PREC_SUM
            return [self._sub(e.left, left), f" {e.op} ", self._sub(e.right, right)], prec
        if isinstance(e, m.Neg):
            return ["-", self._sub(e.operand, _PREC_UNARY)], _PREC_UNARY
        if isinstance(e, m.Index):
            return [
                self._sub(e.target, _PREC_POSTFIX),
                "[",
                self._sub(e.index, 0),
                "]",
            ], _PREC_POSTFIX
        if isinstance(e, m.Call):
            return [self._sub(e.func, _PREC_ATOM), self.arguments(e.args, e)], _PREC_POSTFIX
        if isinstance(e, m.TupleExpr):
            docs = [self._sub(x, 0) for x in e.items]
            return self.bracketed("(", ")", docs, e, tuple_=True), _PREC_ATOM
        if isinstance(e, m.ListExpr):
            return self.packed("[", "]", [self._sub(x, 0) for x in e.items], e), _PREC_ATOM
        if isinstance(e, m.Record):
            return self.packed("{", "}", [self.entry(x) for x in e.entries], e), _PREC_ATOM
        raise AssertionError(f"unhandled expression {type(e).__name__}")


# ==========================================================================
# Entry points
# ==========================================================================


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


def checked_format(text: str, file: str = "<spec>") -> str:
    """``format_text``, verified: the result parses to the same meaning and keeps every comment."""
    before = parse_text(text, file)
    result = format_spec(before, text)
    after = parse_text(result, file)
    if meaning(after) != meaning(before):
        raise FormatError(f"formatting {file} would change its meaning")
    if sorted(t.rstrip() for _, t in before.comments) != sorted(t for _, t in after.comments):
        raise FormatError(f"formatting {file} would lose or change a comment")
    return result
