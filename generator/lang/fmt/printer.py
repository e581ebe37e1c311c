"""The spec printer: the syntax model as documents, in the one canonical layout."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from .. import syntax as m
from ..vocabulary import quote
from .comments import Comment, Comments
from .doc import (
    BREAK_PARENT,
    HARDLINE,
    LINE,
    SOFTLINE,
    Doc,
    Fill,
    Group,
    IfBreak,
    LineSuffix,
    Nest,
    join,
    render,
)

_NAME = re.compile(
    r"(?:[A-Za-z_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?:[A-Za-z0-9_]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\Z"
)
_FLOAT = re.compile(r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?\Z|[0-9]+[eE][+-]?[0-9]+\Z")


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

    def _lead(self, node: m.Node) -> list[Comment]:
        return self.c.leading.get(id(node), [])

    def wrap(self, node: m.Node, doc: Doc) -> Doc:
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

    def _dangling(self, node: m.Node) -> list[Comment]:
        return self.c.dangling.get(id(node), [])

    # ---------------------------------------------------------- statements

    def statements(
        self,
        nodes: Sequence[m.Node],
        doc_of: Callable[[Any], Doc],
        host: m.Node,
        start_line: int,
        top: bool = False,
    ) -> list[Doc]:
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
        blocks = (m.GroupDecl, m.BackendDecl, m.QuantizerDecl)
        if isinstance(a, blocks) or isinstance(b, blocks):
            return True
        return self.blank is None and type(a) is not type(b)

    def block(self, host: m.Node, items: Sequence[m.Item], start_line: int) -> Doc:
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
        if isinstance(d, m.QuantizerDecl):
            return self.fields_block(f"quantizer {d.name}", d, d.fields, d.span.line)
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
        start = max(it.head.span.end_line, it.span.line)
        return self.fields_block([kw, head], it, it.fields, start)

    def fields_block(self, head: Doc, host: m.Node, fields: tuple[m.Field, ...], start: int) -> Doc:
        """``head { fields }``: empty, one field on the line if it fits, else one per line."""
        if not fields and not self._dangling(host):
            return [head, " {}"]
        if len(fields) == 1 and not self.c.any_inside(fields[0]) and not self._dangling(host):
            return Group([head, " {", Nest([LINE, self.field(fields[0])]), LINE, "}"])
        body = self.statements(fields, self.field, host, start)
        return [head, " {", Nest([HARDLINE, *body]), HARDLINE, "}"]

    def field(self, f: m.Field) -> Doc:
        return [f"{f.name}: ", self.wrap(f.value, self.expr(f.value))]

    def entry(self, e: m.Entry) -> Doc:
        if isinstance(e.key, int):
            key = str(e.key)
        else:
            key = e.key if _NAME.match(e.key) else quote(e.key)
        return self.wrap(e, [f"{key}: ", self.expr(e.value)])

    # ---------------------------------------------------------- brackets

    def bracketed(
        self, left: str, right: str, docs: list[Doc], host: m.Node, tuple_: bool = False
    ) -> Doc:
        """``left item, item right``: flat if it fits, else one item per line, trailing comma."""
        dangling = self._dangling(host) if host is not None else []
        if not docs and not dangling:
            return left + right
        tail: list[Doc] = []
        if dangling:
            tail = [HARDLINE] if docs else []
            tail += [*join(HARDLINE, [c.text for c in dangling]), BREAK_PARENT]
        comma: Doc = IfBreak(",", "," if tuple_ and len(docs) == 1 else "")
        inner = [SOFTLINE, *join([",", LINE], docs), comma if docs else "", *tail]
        return Group([left, Nest(inner), SOFTLINE, right])

    def packed(self, left: str, right: str, docs: list[Doc], host: m.Node) -> Doc:
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
            tail += [*join(HARDLINE, [c.text for c in dangling]), BREAK_PARENT]
        fill: list[Doc] = [Fill(parts, IfBreak(","))] if parts else []
        return Group([left, Nest([SOFTLINE, *fill, *tail]), SOFTLINE, right])

    def arguments(self, args: tuple[m.Expr, ...], host: m.Node) -> Doc:
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
