"""Comments: each attached to the node it precedes (own-line) or follows (end of line), by span."""

from __future__ import annotations

from dataclasses import dataclass

from .. import syntax as m
from ..syntax import children as _children
from ..syntax import end as _end
from ..syntax import start as _start


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str
    own_line: bool


# Nodes that print their own dangling comments (before their closing bracket).
_DANGLING_HOSTS = (
    m.Spec,
    m.GroupDecl,
    m.BackendDecl,
    m.QuantizerDecl,
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
    m.QuantizerDecl,
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

    def add(self, table: dict[int, list[Comment]], node: m.Node, c: Comment) -> None:
        table.setdefault(id(node), []).append(c)

    def any_inside(self, node: m.Node) -> bool:
        """Whether a comment is attached to ``node`` or anything in it."""
        tables = (self.leading, self.trailing, self.dangling, self.header)
        if any(id(node) in t for t in tables):
            return True
        return any(self.any_inside(k) for k in _children(node))


def _is_slot(node: m.Node, parent: m.Node) -> bool:
    if isinstance(parent, m.Call):
        return node is not parent.func
    if isinstance(parent, m.ForItem):
        return node is not parent.iterable
    if isinstance(parent, m.PatternItem):
        return node is not parent.head
    if isinstance(parent, m.ConstraintDecl):
        return node is not parent.dtype
    return isinstance(parent, _SLOT_PARENTS)


def _trailing_ok(node: m.Node, parent: m.Node) -> bool:
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
    chain: list[m.Node] = [spec]  # the enclosing nodes, outermost first
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
