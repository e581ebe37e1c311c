"""Parse: ``.bcfg`` text to the syntax model (``model.Spec``).

The grammar lives in ``grammar/bcfg.lark``; this module loads it once, parses
with Lark's LALR parser and turns the tree into frozen dataclasses, each with
its source span. Lark's own exceptions stop here: they are re-raised as
``SpecError`` in the language's terms.
"""

from __future__ import annotations

import functools
from pathlib import Path as FsPath

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import model as m
from .diagnostics import Diagnostic, SpecError
from .resources import resource_path


# Comments are kept (for `bcfg fmt`) by a lexer callback; parse_text swaps the list.
_comments: list[Token] = []


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(
        resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": lambda tok: _comments.append(tok)},
    )


def read_source(path: FsPath, display: str) -> str:
    """Read a spec as UTF-8 (a BOM is dropped); bad bytes are a spec error."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError([Diagnostic("error", None, f"cannot read {display}: {exc.strerror}")]) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        span = m.Span(display, line, col, line, col + 1)
        raise SpecError(
            [Diagnostic("error", span, "the file is not valid UTF-8", "save the spec as UTF-8")]
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        span = m.Span(display, line, col, line, col + 1)
        raise SpecError([Diagnostic("error", span, "the file contains a NUL byte", "remove it")])
    return text


def parse_file(path: FsPath, display: str) -> m.Spec:
    """Parse the spec at ``path``; ``display`` is the name used in spans."""
    return parse_text(read_source(path, display), display)


def parse_text(text: str, file: str) -> m.Spec:
    """Parse spec text; ``file`` is the name used in spans and messages."""
    parser = _parser()
    _comments.clear()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise SpecError([_syntax_diagnostic(exc, text, file)]) from None
    try:
        decls = _ToModel(file).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, SpecError):
            raise exc.orig_exc from None
        raise
    spans = tuple(
        (m.Span(file, t.line, t.column, t.end_line, t.end_column), str(t)) for t in _comments
    )
    return m.Spec(file, tuple(decls), spans)


# Token names as a user would say them.
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
    "PATTERN_KW": "'pattern'",
    "DTYPES_KW": "'dtypes'",
    "FUSER_KW": "'fuser'",
    "$END": "the end of the file",
}


def _describe(token_type: str) -> str:
    if token_type in _TOKEN_WORDS:
        return _TOKEN_WORDS[token_type]
    name = token_type.lower()
    return f"'{name}'" if token_type.isupper() and token_type.isalpha() else token_type


def _syntax_diagnostic(exc: UnexpectedInput, text: str, file: str) -> Diagnostic:
    line, col = exc.line if exc.line > 0 else text.count("\n") + 1, max(exc.column, 1)
    if isinstance(exc, UnexpectedEOF):
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
    span = m.Span(file, line, col, line, col + 1)
    expected = sorted({_describe(t) for t in getattr(exc, "expected", ()) or ()})
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        return Diagnostic("error", span, f"unexpected character {ch!r}", _expect_hint(expected))
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        what = "the end of the file" if tok.type == "$END" else f"{tok.value!r}"
        if tok.type != "$END":
            span = m.Span(file, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)
        return Diagnostic("error", span, f"unexpected {what}", _expect_hint(expected))
    return Diagnostic("error", span, "unexpected end of the file", _expect_hint(expected))


def _expect_hint(expected: list[str]) -> str | None:
    if not expected:
        return None
    if len(expected) > 6:
        expected = expected[:6] + ["..."]
    return "expected " + ", ".join(expected)


def _span(file: str, meta) -> m.Span:
    if getattr(meta, "empty", True):
        return m.Span(file, 1, 1, 1, 1)
    return m.Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(file: str, tok: Token) -> m.Span:
    return m.Span(file, tok.line, tok.column, tok.end_line, tok.end_column)


def _unquote(tok: Token) -> str:
    import ast

    return ast.literal_eval(str(tok))


@v_args(meta=True, inline=True)
class _ToModel(Transformer):
    """Rule names map one-to-one onto model classes."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def __default__(self, data, children, meta):
        raise AssertionError(f"grammar rule {data!r} has no model class")

    def _s(self, meta) -> m.Span:
        return _span(self.file, meta)

    # declarations
    def start(self, meta, *decls):
        return list(decls)

    def import_decl(self, meta, s):
        return m.ImportDecl(_unquote(s), self._s(meta))

    def alias_decl(self, meta, name, target):
        return m.AliasDecl(str(name), target, self._s(meta))

    def constraint_decl(self, meta, name, dtype, *entries):
        return m.ConstraintDecl(str(name), dtype, tuple(entries), self._s(meta))

    def dtypes_decl(self, meta, name, value):
        return m.DTypesDecl(str(name), value, self._s(meta))

    def fuse_decl(self, meta, name, *rest):
        params = tuple(x for x in rest if isinstance(x, m.Param))
        flags = tuple(str(x) for x in rest if isinstance(x, Token))
        body = rest[-1]
        return m.FuseDecl(str(name), params, flags, body, self._s(meta))

    def group_decl(self, meta, name, *rest):
        params = tuple(str(x) for x in rest if isinstance(x, Token))
        body = tuple(x for x in rest if not isinstance(x, Token))
        return m.GroupDecl(str(name), params, body, self._s(meta))

    def backend_decl(self, meta, name, *rest):
        backend_name = None
        if rest and isinstance(rest[0], Token) and rest[0].type == "STRING":
            backend_name, rest = _unquote(rest[0]), rest[1:]
        return m.BackendDecl(str(name), backend_name, tuple(rest), self._s(meta))

    def param(self, meta, name):
        return m.Param(str(name), (), _tok_span(self.file, name))

    def param_tuple(self, meta, *items):
        return m.Param(None, tuple(items), self._s(meta))

    # items
    def pattern_item(self, meta, head, *fields):
        expr, is_complex = head
        return m.PatternItem(expr, is_complex, False, tuple(fields), self._s(meta))

    def override_item(self, meta, head, *fields):
        expr, is_complex = head
        return m.PatternItem(expr, is_complex, True, tuple(fields), self._s(meta))

    def pattern_head(self, meta, expr):
        return (expr, False)

    def complex_head(self, meta, expr):
        return (expr, True)

    def use_item(self, meta, name, *args):
        return m.UseItem(str(name), tuple(args), self._s(meta))

    def for_item(self, meta, target, iterable, *body):
        names, destructure = target
        return m.ForItem(names, destructure, iterable, tuple(body), self._s(meta))

    def loop_target(self, meta, name):
        return ((str(name),), False)

    def loop_tuple(self, meta, *names):
        return (tuple(str(n) for n in names), True)

    def field(self, meta, key, value):
        return m.Field(str(key), value, self._s(meta))

    def entry(self, meta, key, value):
        if key.type == "INT":
            k: str | int = int(key)
        elif key.type == "STRING":
            k = _unquote(key)
        else:
            k = str(key)
        return m.Entry(k, value, self._s(meta))

    # expressions
    def path(self, meta, *names):
        return m.Path(tuple(str(n) for n in names), self._s(meta))

    def pattern_ref(self, meta, tok):
        return m.PatternRef(_tok_span(self.file, tok))

    def string(self, meta, tok):
        return m.Str(_unquote(tok), _tok_span(self.file, tok))

    def int(self, meta, tok):
        return m.Int(int(tok), _tok_span(self.file, tok))

    def float(self, meta, tok):
        return m.Float(float(tok), _tok_span(self.file, tok))

    def _bin(op):  # noqa: N805 - a factory used in the class body
        def rule(self, meta, left, right):
            return m.BinOp(op, left, right, self._s(meta))

        return rule

    add = _bin("+")
    sub = _bin("-")
    mul = _bin("*")
    div = _bin("/")
    pow = _bin("**")

    def neg(self, meta, operand):
        return m.Neg(operand, self._s(meta))

    def index(self, meta, target, idx):
        return m.Index(target, idx, self._s(meta))

    def call(self, meta, func, *args):
        return m.Call(func, tuple(args), self._s(meta))

    def tuple(self, meta, *items):
        return m.TupleExpr(tuple(items), self._s(meta))

    def list(self, meta, *items):
        return m.ListExpr(tuple(items), self._s(meta))

    def record(self, meta, *entries):
        return m.Record(tuple(entries), self._s(meta))
