"""Parse: ``.bcfg`` text to the syntax model (``syntax.Spec``).

The grammar lives in ``grammar/bcfg.lark``; this module loads it once, parses
with Lark's LALR parser and turns the tree into frozen dataclasses, each with
its source span. Lark's own exceptions stop here: ``parse_text`` catches them
once and ``syntax_errors.syntax_diagnostic`` says them in the language's terms
("expected '}' to close the pattern opened at 8:3", "expected a dtype name
after 'input:'"), never in Lark's token names.
"""

from __future__ import annotations

import ast
import contextvars
import functools
import operator
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from ..diagnostics import Diagnostic, Severity, SpecError
from ..resources import resource_path
from ..sources import MAX_SPEC_BYTES, Source, SourceError, offset_span
from . import syntax as m
from .syntax_errors import syntax_diagnostic, token_span

__all__ = [
    "MAX_EXPR_DEPTH",
    "MAX_NESTING",
    "MAX_SPEC_BYTES",
    "parse_source",
    "parse_text",
    "source_error",
]

# Deeper bracket nesting than this is refused before parsing: the model, the
# resolver and the generated Python are all walked recursively.
MAX_NESTING = 32
# Expressions deeper than this are refused as the parser builds them. An
# unbracketed chain of n operators (1 + 1 + ... + 1) is n deep, and so is a
# bracketed value inside n others: fmt, the resolver and the model's own
# equality are recursive, and this keeps them far from Python's stack limit.
MAX_EXPR_DEPTH = 100
# Rules that build expressions, whose depth is counted.
_EXPR_RULES = frozenset(
    {"add", "sub", "mul", "div", "pow", "neg", "index", "call", "tuple", "list", "record", "entry"}
)


@dataclass
class _State:
    """One parse: the file spans name, and the comments the lexer has seen so far."""

    file: str
    comments: list[Token] = field(default_factory=list)
    # id(node) -> (node, depth) for expression nodes; the node is held so its id stays its own.
    depths: dict[int, tuple[Any, int]] = field(default_factory=dict)


# The parse under way in this thread or task. The parser and its callbacks are
# shared (building them is costly); what one parse collects lives here, so two
# parses on two threads never mix their spans or comments.
_current: contextvars.ContextVar[_State] = contextvars.ContextVar("bcfg_parse")


def _file() -> str:
    return _current.get().file


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    import hashlib

    from ..infra.cache import file_path

    grammar = resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8")
    # Lark keeps its analysis of the grammar (a third of a cold start) in bcfg's
    # cache folder; it checks the grammar, options and versions on load.
    cached = file_path("lark", f"bcfg-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.lark")
    parser = Lark(
        grammar,
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": lambda tok: _current.get().comments.append(tok)},
        cache=str(cached) if cached is not None else False,
    )
    _install_callbacks(parser)
    return parser


def source_error(exc: SourceError) -> SpecError:
    """A source that could not be read, as a spec error."""
    diag = Diagnostic(Severity.ERROR, exc.span, exc.message, exc.hint)
    sources = {exc.span.file: exc.text} if exc.span is not None and exc.text is not None else {}
    return SpecError([diag], sources)


def parse_source(source: Source) -> m.Spec:
    """Parse one source."""
    return parse_text(source.text, source.name)


def parse_text(text: str, file: str) -> m.Spec:
    """Parse spec text; ``file`` is the name used in spans and messages."""
    _check_nesting(text, file)
    parser = _parser()
    state = _State(file)
    token = _current.set(state)
    try:
        decls = parser.parse(text)
    except UnexpectedInput as exc:
        raise SpecError([syntax_diagnostic(exc, text, file)], {file: text}) from None
    except SpecError as exc:
        raise SpecError(exc.diagnostics, {**exc.sources, file: text}) from None
    finally:
        _current.reset(token)
    spans = tuple((token_span(file, t), str(t)) for t in state.comments)
    return m.Spec(file, tuple(cast(list[m.Decl], decls)), spans)


_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|[][(){}]')


def _check_nesting(text: str, file: str) -> None:
    """Refuse brackets nested deeper than MAX_NESTING, at the first one too deep."""
    depth = 0
    for mt in _BRACKETS.finditer(text):
        c = mt.group()
        if c in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise SpecError(
                    [
                        Diagnostic(
                            Severity.ERROR,
                            offset_span(text, mt.start(), file),
                            f"brackets are nested more than {MAX_NESTING} deep here",
                            "flatten the pattern or the value; no torch pattern nests that deep",
                        )
                    ],
                    {file: text},
                )
        elif c in ")]}":
            depth = max(0, depth - 1)


def _unquote(tok: Token, file: str) -> str:
    """The value of a STRING token; a bad escape is a spec error, not a Python warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            value = ast.literal_eval(str(tok))
        except (SyntaxError, ValueError, Warning) as exc:
            detail = getattr(exc, "msg", None) or str(exc)
            raise SpecError(
                [
                    Diagnostic(
                        Severity.ERROR,
                        token_span(file, tok),
                        f"bad string: {detail}",
                        'escapes are \\\\, \\", \\n, \\t, \\xhh and \\uhhhh',
                    )
                ]
            ) from None
    if not isinstance(value, str):
        raise SpecError([Diagnostic(Severity.ERROR, token_span(file, tok), "bad string")])
    if _SURROGATE.search(value):
        raise SpecError([_lone_surrogate(tok, file)])
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
# One escape or character of a STRING token, in order, as Python reads them.
_ESCAPE = re.compile(
    r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|N\{[^}]*\}|[0-7]{1,3}|.)|.", re.S
)


def _lone_surrogate(tok: Token, file: str) -> Diagnostic:
    """A string whose escapes make half of a UTF-16 pair (``"\\ud800"``): not text, so never in
    generated code, docs or JSON. The error points at the escape."""
    text, span = str(tok), token_span(file, tok)
    for found in _ESCAPE.finditer(text):
        piece = found.group(0)
        if piece.startswith("\\") and _SURROGATE.search(ast.literal_eval(f'"{piece}"')):
            col = span.column + found.start()
            span = m.Span(file, span.line, col, span.line, col + len(piece))
            return Diagnostic(
                Severity.ERROR,
                span,
                f"'{piece}' is half of a UTF-16 surrogate pair, not a character",
                "write the character itself, or \\U and 8 hex digits (\\U0001f600 for 😀)",
            )
    return Diagnostic(Severity.ERROR, span, "the string holds a lone surrogate")


class _Splice(list):
    """The children of an inlined rule (``_rule``, ``x*``), spliced into the parent's."""


def _edge(children: Sequence[Any], end: bool) -> tuple[int, int] | None:
    """Where the first child starts (or, with ``end``, where the last one ends)."""
    for c in reversed(children) if end else children:
        if isinstance(c, _Splice):
            pos = _edge(c, end)
            if pos is not None:
                return pos
            continue
        if isinstance(c, Token):  # the lexer gives every token its position
            line, column = (c.end_line, c.end_column) if end else (c.line, c.column)
            return cast(int, line), cast(int, column)
        where = getattr(c, "span", None)
        if where is not None:
            return (where.end_line, where.end_column) if end else (where.line, where.column)
    return None


def _reduction(
    name: str, keep: tuple[bool, ...], expand1: bool, build: Callable[..., Any] | None
) -> Callable[[list[Any]], Any]:
    """A parser callback for one grammar rule: filter, splice, build the model node."""

    def callback(children: list[Any]) -> Any:
        kept: list[Any] = []
        for c, k in zip(children, keep):
            if not k:
                continue
            if isinstance(c, _Splice):
                kept.extend(c)
            else:
                kept.append(c)
        if build is None:  # an inlined rule: hand the children to the parent
            return _Splice(kept)
        if expand1 and len(kept) == 1:
            return kept[0]
        first, last = _edge(children, end=False), _edge(children, end=True)
        if first is None or last is None:
            span = m.Span(_file(), 1, 1, 1, 1)
        else:
            span = m.Span(_file(), first[0], first[1], last[0], last[1])
        node = build(span, *kept)
        if counted:
            _count_depth(node, kept, span)
        return node

    counted = name in _EXPR_RULES
    callback.__name__ = f"reduce_{name}"
    return callback


def _count_depth(node: Any, children: list[Any], span: m.Span) -> None:
    """Record how deep the expression ``node`` is; refuse one deeper than MAX_EXPR_DEPTH."""
    depths = _current.get().depths
    depth = 1
    for c in children:
        known = depths.get(id(c))
        if known is not None and known[0] is c and known[1] >= depth:
            depth = known[1] + 1
    if depth > MAX_EXPR_DEPTH:
        raise SpecError(
            [
                Diagnostic(
                    Severity.ERROR,
                    span,
                    f"this expression nests more than {MAX_EXPR_DEPTH} deep",
                    "an unbracketed chain of n operators is n deep: split it with named "
                    "definitions, or write the value out",
                )
            ]
        )
    depths[id(node)] = (node, depth)


def _install_callbacks(parser: Lark) -> None:
    """Build model nodes as the parser reduces: no parse tree, no transformer pass."""
    for rule in list(parser._callbacks):
        name = rule.alias or rule.origin.name
        name = getattr(name, "value", name)
        inlined = name.startswith("_")
        keep = tuple(not (sym.is_term and sym.filter_out) for sym in rule.expansion)
        expand1 = bool(rule.options.expand1) and not rule.alias
        build: Callable[..., Any] | None = None if inlined else _BUILDERS.get(name)
        if build is None and not inlined:
            if not (expand1 and sum(keep) == 1):
                raise AssertionError(f"grammar rule {name!r} has no model class")
            if len(keep) == 1:  # `?sum: product`: the most common reduction by far
                parser._callbacks[rule] = operator.itemgetter(0)
                continue
            build = _only_child  # `?primary: "(" expr ")"`
        parser._callbacks[rule] = _reduction(name, keep, expand1, build)


def _only_child(span, child):
    return child


def _check_int(tok: Token) -> int:
    if len(tok) > 100:
        raise SpecError(
            [
                Diagnostic(
                    Severity.ERROR,
                    token_span(_file(), tok),
                    f"this integer has {len(tok)} digits; at most 100 are allowed",
                )
            ]
        )
    return int(tok)


def _fuse_decl(span, name, *rest):
    params = tuple(x for x in rest if isinstance(x, m.Param))
    flags = tuple(str(x) for x in rest if isinstance(x, Token))
    return m.FuseDecl(str(name), params, flags, rest[-1], span)


def _group_decl(span, name, *rest):
    params = tuple(str(x) for x in rest if isinstance(x, Token))
    body = tuple(x for x in rest if not isinstance(x, Token))
    return m.GroupDecl(str(name), params, body, span)


def _backend_decl(span, name, *rest):
    backend_name = None
    if rest and isinstance(rest[0], Token) and rest[0].type == "STRING":
        backend_name, rest = _unquote(rest[0], _file()), rest[1:]
    return m.BackendDecl(str(name), backend_name, tuple(rest), span)


class _Head:
    """A pattern head: the expression and whether it is in complex form."""

    __slots__ = ("expr", "complex", "span")

    def __init__(self, expr: m.Expr, is_complex: bool, span: m.Span):
        self.expr, self.complex, self.span = expr, is_complex, span


class _Target:
    """A loop target: its names and whether it destructures a tuple."""

    __slots__ = ("names", "destructure", "span")

    def __init__(self, names: tuple[str, ...], destructure: bool, span: m.Span):
        self.names, self.destructure, self.span = names, destructure, span


def _entry(span, key, value):
    if key.type == "INT":
        k: str | int = _check_int(key)
    elif key.type == "STRING":
        k = _unquote(key, _file())
    else:
        k = str(key)
    return m.Entry(k, value, span)


def _tok(tok: Token) -> m.Span:
    return token_span(_file(), tok)


def _binop(op: str) -> Callable[[m.Span, m.Expr, m.Expr], m.BinOp]:
    return lambda span, left, right: m.BinOp(op, left, right, span)


# Rule (or alias) name -> builder(span, *kept children). Rule names map
# one-to-one onto model classes; a rule without a builder fails at start-up.
_BUILDERS: dict[str, Callable[..., Any]] = {
    "start": lambda span, *decls: list(decls),
    "import_decl": lambda span, s: m.ImportDecl(_unquote(s, _file()), span),
    "alias_decl": lambda span, name, target: m.AliasDecl(str(name), target, span),
    "constraint_decl": lambda span, name, dtype, *entries: m.ConstraintDecl(
        str(name), dtype, tuple(entries), span
    ),
    "dtypes_decl": lambda span, name, value: m.DTypesDecl(str(name), value, span),
    "fuse_decl": _fuse_decl,
    "group_decl": _group_decl,
    "backend_decl": _backend_decl,
    "quantizer_decl": lambda span, name, *fields: m.QuantizerDecl(str(name), tuple(fields), span),
    "param": lambda span, name: m.Param(str(name), (), _tok(name)),
    "param_tuple": lambda span, *items: m.Param(None, tuple(items), span),
    "pattern_item": lambda span, head, *fields: m.PatternItem(
        head.expr, head.complex, False, tuple(fields), span
    ),
    "override_item": lambda span, head, *fields: m.PatternItem(
        head.expr, head.complex, True, tuple(fields), span
    ),
    "pattern_head": lambda span, expr: _Head(expr, False, span),
    "complex_head": lambda span, expr: _Head(expr, True, span),
    "use_item": lambda span, name, *args: m.UseItem(str(name), tuple(args), span),
    "for_item": lambda span, target, iterable, *body: m.ForItem(
        target.names, target.destructure, iterable, tuple(body), span
    ),
    "loop_target": lambda span, name: _Target((str(name),), False, span),
    "loop_tuple": lambda span, *names: _Target(tuple(str(n) for n in names), True, span),
    "field": lambda span, key, value: m.Field(str(key), value, span),
    "entry": _entry,
    "path": lambda span, *names: m.DottedName(tuple(str(n) for n in names), span),
    "pattern_ref": lambda span, tok: m.PatternRef(_tok(tok)),
    "string": lambda span, tok: m.Str(_unquote(tok, _file()), _tok(tok)),
    "int": lambda span, tok: m.Int(_check_int(tok), _tok(tok)),
    "float": lambda span, tok: m.Float(float(tok), _tok(tok)),
    "add": _binop("+"),
    "sub": _binop("-"),
    "mul": _binop("*"),
    "div": _binop("/"),
    "pow": _binop("**"),
    "neg": lambda span, operand: m.Neg(operand, span),
    "index": lambda span, target, idx: m.Index(target, idx, span),
    "call": lambda span, func, *args: m.Call(func, tuple(args), span),
    "tuple": lambda span, *items: m.TupleExpr(tuple(items), span),
    "list": lambda span, *items: m.ListExpr(tuple(items), span),
    "record": lambda span, *entries: m.Record(tuple(entries), span),
}
