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
import re
import warnings
from pathlib import Path as FsPath

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedInput, VisitError

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
    import operator

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
    # A `?rule: x` reduction only hands its one child on, yet Lark still runs its
    # position bookkeeping on it, which then sets the child's own positions
    # again. Handing the child on directly parses a fifth faster, same spans.
    from lark.parse_tree_builder import ExpandSingleChild, PropagatePositions

    for rule, callback in list(parser._callbacks.items()):
        if (
            isinstance(callback, PropagatePositions)
            and callback.node_filter is None
            and isinstance(callback.node_builder, ExpandSingleChild)
            and rule.options.expand1
            and len(rule.expansion) == 1
        ):
            parser._callbacks[rule] = operator.itemgetter(0)
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
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise SpecError([syntax_diagnostic(exc, text, file)]) from None
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


def _span(file: str, meta) -> m.Span:
    if getattr(meta, "empty", True):
        return m.Span(file, 1, 1, 1, 1)
    return m.Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


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

    def _int(self, tok: Token) -> int:
        if len(tok) > 100:
            raise SpecError(
                [
                    Diagnostic(
                        "error",
                        token_span(self.file, tok),
                        f"this integer has {len(tok)} digits; at most 100 are allowed",
                    )
                ]
            )
        return int(tok)

    # declarations
    def start(self, meta, *decls):
        return list(decls)

    def import_decl(self, meta, s):
        return m.ImportDecl(_unquote(s, self.file), self._s(meta))

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
            backend_name, rest = _unquote(rest[0], self.file), rest[1:]
        return m.BackendDecl(str(name), backend_name, tuple(rest), self._s(meta))

    def param(self, meta, name):
        return m.Param(str(name), (), token_span(self.file, name))

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
            k: str | int = self._int(key)
        elif key.type == "STRING":
            k = _unquote(key, self.file)
        else:
            k = str(key)
        return m.Entry(k, value, self._s(meta))

    # expressions
    def path(self, meta, *names):
        return m.Path(tuple(str(n) for n in names), self._s(meta))

    def pattern_ref(self, meta, tok):
        return m.PatternRef(token_span(self.file, tok))

    def string(self, meta, tok):
        return m.Str(_unquote(tok, self.file), token_span(self.file, tok))

    def int(self, meta, tok):
        return m.Int(self._int(tok), token_span(self.file, tok))

    def float(self, meta, tok):
        return m.Float(float(tok), token_span(self.file, tok))

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
