"""Parse: ``.bcfg`` text to the syntax model (``model.Spec``).

The grammar lives in ``grammar/bcfg.lark``; this module loads it once, parses
with Lark's LALR parser and turns the tree into frozen dataclasses, each with
its source span. Lark's own exceptions stop here: ``parse_text`` catches them
once and ``syntax_errors.syntax_diagnostic`` says them in the language's terms
("expected '}' to close the pattern opened at 8:3", "expected a dtype name
after 'input:'"), never in Lark's token names.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
import warnings
from pathlib import Path as FsPath

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from . import model as m
from .diagnostics import Diagnostic, SpecError, remember_source
from .resources import resource_path
from .syntax_errors import offset_span, syntax_diagnostic, token_span

# A spec larger than this is refused with a clear error rather than parsed for
# minutes; torch's eight backends together take about 30 kB.
MAX_SPEC_BYTES = 1 << 20
# Deeper bracket nesting than this is refused before parsing: the model, the
# resolver and the generated Python are all walked recursively.
MAX_NESTING = 32


# Comments are kept (for `bcfg fmt`) by a lexer callback; parse_text swaps the list.
_comments: list[Token] = []


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    import hashlib

    from .cache import file_path

    grammar = resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8")
    # Lark keeps its analysis of the grammar (a third of a cold start) in bcfg's
    # cache folder; it checks the grammar, options and versions on load.
    cached = file_path("lark", f"bcfg-{hashlib.sha256(grammar.encode()).hexdigest()[:16]}.lark")
    parser = Lark(
        grammar,
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": lambda tok: _comments.append(tok)},
        cache=str(cached) if cached is not None else False,
    )
    _install_callbacks(parser)
    return parser


def read_source(path: FsPath, display: str) -> str:
    """Read a spec as UTF-8 (a BOM is dropped); bad bytes, NULs and huge files are spec errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(
            [Diagnostic("error", None, f"cannot read {display}: {exc.strerror or exc}")]
        ) from None
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(
            [
                Diagnostic(
                    "error",
                    m.Span(display, 1, 1, 1, 1),
                    f"the file is {len(data) / (1 << 20):.1f} MB; bcfg reads specs of at most {MAX_SPEC_BYTES >> 20} MB",
                    "split it into several files joined with 'import'",
                )
            ]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = (
            len(data[data.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8", "replace"))
            + 1
        )
        span = m.Span(display, line, col, line, col + 1)
        remember_source(display, data.decode("utf-8-sig", "replace"))
        raise SpecError(
            [
                Diagnostic(
                    "error",
                    span,
                    f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                    "save the spec as UTF-8",
                )
            ]
        ) from None
    remember_source(display, text)
    nul = text.find("\0")
    if nul >= 0:
        raise SpecError(
            [
                Diagnostic(
                    "error",
                    offset_span(text, nul, display),
                    "the file contains a NUL byte",
                    "remove it",
                )
            ]
        )
    return text


def parse_file(path: FsPath, display: str) -> m.Spec:
    """Parse the spec at ``path``; ``display`` is the name used in spans."""
    return parse_text(read_source(path, display), display)


def parse_text(text: str, file: str) -> m.Spec:
    """Parse spec text; ``file`` is the name used in spans and messages."""
    remember_source(file, text)
    _check_nesting(text, file)
    parser = _parser()
    _comments.clear()
    _state.file = file
    try:
        decls = parser.parse(text)
    except UnexpectedInput as exc:
        raise SpecError([syntax_diagnostic(exc, text, file)]) from None
    spans = tuple(
        (m.Span(file, t.line, t.column, t.end_line, t.end_column), str(t)) for t in _comments
    )
    return m.Spec(file, tuple(decls), spans)


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
                            "error",
                            offset_span(text, mt.start(), file),
                            f"brackets are nested more than {MAX_NESTING} deep here",
                            "flatten the pattern or the value; no torch pattern nests that deep",
                        )
                    ]
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
                        "error",
                        token_span(file, tok),
                        f"bad string: {detail}",
                        'escapes are \\\\, \\", \\n, \\t, \\xhh and \\uhhhh',
                    )
                ]
            ) from None
    if not isinstance(value, str):
        raise SpecError([Diagnostic("error", token_span(file, tok), "bad string")])
    return value


class _Splice(list):
    """The children of an inlined rule (``_rule``, ``x*``), spliced into the parent's."""


def _edge(children, end: bool) -> tuple[int, int] | None:
    """Where the first child starts (or, with ``end``, where the last one ends)."""
    for c in reversed(children) if end else children:
        if isinstance(c, _Splice):
            pos = _edge(c, end)
            if pos is not None:
                return pos
            continue
        where = c if isinstance(c, Token) else getattr(c, "span", None)
        if where is not None:
            return (where.end_line, where.end_column) if end else (where.line, where.column)
    return None


def _reduction(name: str, keep: tuple[bool, ...], expand1: bool, build):
    """A parser callback for one grammar rule: filter, splice, build the model node."""

    def callback(children):
        kept = []
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
            span = m.Span(_state.file, 1, 1, 1, 1)
        else:
            span = m.Span(_state.file, first[0], first[1], last[0], last[1])
        return build(span, *kept)

    callback.__name__ = f"reduce_{name}"
    return callback


class _State:
    """The file being parsed: spans name it (parse_text sets it for each parse)."""

    file = "<spec>"


_state = _State()


def _install_callbacks(parser: Lark) -> None:
    """Build model nodes as the parser reduces: no parse tree, no transformer pass."""
    for rule in list(parser._callbacks):
        name = rule.alias or rule.origin.name
        name = getattr(name, "value", name)
        inlined = name.startswith("_")
        keep = tuple(not (sym.is_term and sym.filter_out) for sym in rule.expansion)
        expand1 = bool(rule.options.expand1) and not rule.alias
        build = None if inlined else _BUILDERS.get(name)
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
                    "error",
                    token_span(_state.file, tok),
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
        backend_name, rest = _unquote(rest[0], _state.file), rest[1:]
    return m.BackendDecl(str(name), backend_name, tuple(rest), span)


class _Head:
    """A pattern head: the expression and whether it is in complex form."""

    __slots__ = ("expr", "complex", "span")

    def __init__(self, expr, is_complex: bool, span: m.Span):
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
        k = _unquote(key, _state.file)
    else:
        k = str(key)
    return m.Entry(k, value, span)


def _tok(tok: Token) -> m.Span:
    return token_span(_state.file, tok)


def _binop(op: str):
    return lambda span, left, right: m.BinOp(op, left, right, span)


# Rule (or alias) name -> builder(span, *kept children). Rule names map
# one-to-one onto model classes; a rule without a builder fails at start-up.
_BUILDERS = {
    "start": lambda span, *decls: list(decls),
    "import_decl": lambda span, s: m.ImportDecl(_unquote(s, _state.file), span),
    "alias_decl": lambda span, name, target: m.AliasDecl(str(name), target, span),
    "constraint_decl": lambda span, name, dtype, *entries: m.ConstraintDecl(
        str(name), dtype, tuple(entries), span
    ),
    "dtypes_decl": lambda span, name, value: m.DTypesDecl(str(name), value, span),
    "fuse_decl": _fuse_decl,
    "group_decl": _group_decl,
    "backend_decl": _backend_decl,
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
    "path": lambda span, *names: m.Path(tuple(str(n) for n in names), span),
    "pattern_ref": lambda span, tok: m.PatternRef(_tok(tok)),
    "string": lambda span, tok: m.Str(_unquote(tok, _state.file), _tok(tok)),
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
