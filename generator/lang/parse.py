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
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.grammar import Rule
from lark.lexer import ContextualLexer, PatternStr, TerminalDef, UnlessCallback

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

# Deeper bracket nesting than this is refused, before any other error of the
# text (``parse_with``): the model, the resolver and the generated Python are
# all walked recursively.
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
    parser = make_lark()
    _install_callbacks(parser)
    _install_lexer(parser)
    return parser


# Lark's options for the grammar; those Lark takes again when it loads a saved analysis.
_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "propagate_positions": True,
    "maybe_placeholders": False,
}
_RELOADED = ("propagate_positions", "lexer_callbacks")
# Lark's analysis of the grammar as bcfg ships it, beside the grammar
# (``python -m generator.lang.analysis`` writes it).
SHIPPED_ANALYSIS = "bcfg.lark.analysis"


def make_lark(saved: bool = True) -> Lark:
    """Lark's parser of the grammar, its LALR analysis read from a saved copy when one fits.

    The analysis takes longer than parsing a project's specs, so it is saved in
    bcfg's cache folder, and the package ships one (``SHIPPED_ANALYSIS``) for a
    first run on an empty cache. A saved analysis is used only if its first line
    is the key of this grammar, these options and the versions of Lark and
    Python. ``saved=False`` makes it afresh and saves nothing.
    """
    grammar = resource_path("grammar", "bcfg.lark").read_bytes()
    key = analysis_key(grammar)
    kwargs = {**_OPTIONS, "lexer_callbacks": {"COMMENT": _comment}}
    where = _analysis_path(key) if saved else None
    for path in (where, _shipped_analysis()) if saved else ():
        loaded = _load_analysis(path, key, kwargs) if path is not None else None
        if loaded is not None:
            return loaded
    parser = Lark(grammar.decode("utf-8"), **kwargs)
    if where is not None:
        save_analysis(parser, where, key)
    return parser


def _comment(tok: Token) -> None:
    _current.get().comments.append(tok)


def analysis_key(grammar: bytes) -> bytes:
    """What a saved analysis must have been made from: grammar, options, Lark, Python."""
    import hashlib

    import lark

    h = hashlib.sha256(grammar)
    h.update(repr(sorted(_OPTIONS.items())).encode())
    h.update(f"lark {lark.__version__} python {sys.version_info[0]}.{sys.version_info[1]}".encode())
    return h.hexdigest().encode()


def _analysis_path(key: bytes) -> Path | None:
    from ..infra.cache import file_path

    return file_path("lark", f"bcfg-{key[:16].decode()}.lark")


def _shipped_analysis() -> Path | None:
    try:
        return resource_path("grammar", SHIPPED_ANALYSIS)
    except FileNotFoundError:
        return None


def _load_analysis(path: Path, key: bytes, kwargs: dict[str, Any]) -> Lark | None:
    """The parser saved at ``path`` if it was saved with ``key``; None otherwise."""
    import pickle

    try:
        with open(path, "rb") as fh:
            if fh.readline().rstrip(b"\n") != key:
                return None
            saved = pickle.load(fh)
        reloaded = {k: kwargs[k] for k in _RELOADED}
        return Lark._load_from_dict(saved["data"], saved["memo"], **reloaded)
    except Exception:  # missing, truncated, of another Lark: make it again
        return None


def save_analysis(parser: Lark, path: Path, key: bytes) -> None:
    """Save the parser's analysis at ``path`` under ``key``, atomically; skipped on failure.

    Lark numbers its states and tokens in an order that changes from run to run;
    they are numbered again in a canonical order, so that the same grammar, Lark
    and Python save the same bytes.
    """
    import pickle

    from ..infra.write import write_temporary

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {
        k: v for k, v in data["options"].items() if k not in ("lexer_callbacks", *_RELOADED)
    }
    try:
        data["parser"]["parser"] = _canonical_table(data["parser"]["parser"])
    except (KeyError, TypeError, ValueError):  # another Lark's layout: saved as it is
        pass
    tree = _unshared({"data": data, "memo": memo})
    saved = key + b"\n" + pickle.dumps(tree, pickle.HIGHEST_PROTOCOL)
    try:
        os.replace(write_temporary(path, saved, durable=False), path)
    except OSError:
        pass


def _unshared(value: Any) -> Any:
    """``value`` with no container shared and every string interned: pickle writes a shared
    object once and refers to it after, so sharing that varies would vary the bytes."""
    if isinstance(value, dict):
        return {_unshared(k): _unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshared(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_unshared(v) for v in value)
    if type(value) is str:
        return sys.intern(value)
    return value


def _canonical_table(table: dict[str, Any]) -> dict[str, Any]:
    """Lark's serialized parse table, states numbered breadth first from the start states and
    tokens by name (the same automaton)."""
    names: dict[int, str] = table["tokens"]
    token_ids = {name: i for i, name in enumerate(sorted(names.values()))}
    old_states: dict[int, dict[int, tuple[int, Any]]] = table["states"]
    order: dict[int, int] = {}
    queue = [table["start_states"][s] for s in sorted(table["start_states"])]
    i = 0
    while i < len(queue):
        state = queue[i]
        i += 1
        if state in order:
            continue
        order[state] = len(order)
        for token in sorted(old_states[state], key=names.__getitem__):
            action, arg = old_states[state][token]
            if action == 0:  # a shift, or a goto: its target is numbered next
                queue.append(arg)
    if len(order) != len(old_states):  # a state no start reaches: no canonical number for it
        raise ValueError("unreachable parser states")
    states = {
        order[state]: {
            token_ids[names[t]]: (a, order[arg] if a == 0 else arg)
            for t, (a, arg) in sorted(old_states[state].items(), key=lambda x: names[x[0]])
        }
        for state in sorted(old_states, key=order.__getitem__)
    }
    return {
        "tokens": {i: name for name, i in token_ids.items()},
        "states": states,
        "start_states": {k: order[v] for k, v in table["start_states"].items()},
        "end_states": {k: order[v] for k, v in table["end_states"].items()},
    }


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
    return parse_with(_parser(), text, file)


def parse_with(parser: Lark, text: str, file: str) -> m.Spec:
    """``parse_text`` with a given parser (tests compare the lexers with it).

    Brackets nested too deep are refused before anything else is said about the
    text: ``_FastLexer`` counts them as it goes, and a text that fails for
    another reason is scanned for them (``_check_nesting``) before that reason
    is given. With Lark's own lexer, the text is scanned first.
    """
    if not isinstance(getattr(parser.parser, "lexer", None), _FastLexer):
        _check_nesting(text, file)
    state = _State(file)
    token = _current.set(state)
    try:
        decls = parser.parse(text)
    except UnexpectedInput as exc:
        _check_nesting(text, file)
        raise SpecError([syntax_diagnostic(exc, text, file)], {file: text}) from None
    except SpecError as exc:
        _check_nesting(text, file)
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
                raise _too_deep(text, mt.start(), file)
        elif c in ")]}":
            depth = max(0, depth - 1)


def _too_deep(text: str, offset: int, file: str) -> SpecError:
    return SpecError(
        [
            Diagnostic(
                Severity.ERROR,
                offset_span(text, offset, file),
                f"brackets are nested more than {MAX_NESTING} deep here",
                "flatten the pattern or the value; no torch pattern nests that deep",
            )
        ],
        {file: text},
    )


# What a bracket token does to the nesting depth (``_FastLexer``).
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


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
        if type(c) is Token:  # the lexer gives every token its position
            line, column = (c.end_line, c.end_column) if end else (c.line, c.column)
            return cast(int, line), cast(int, column)
        if type(c) is _Splice:
            pos = _edge(c, end)
            if pos is not None:
                return pos
            continue
        where = getattr(c, "span", None)
        if where is not None:
            return (where.end_line, where.end_column) if end else (where.line, where.column)
    return None


# A rule's shape: (kinds, expand1, inlined, counted); see ``_shape_source``.
_Shape = tuple[str, bool, bool, bool]


def _shape_source(shape: _Shape, name: str) -> str:
    """A factory ``name(build)`` of parser callbacks for rules of one shape.

    ``kinds`` says what each child of the rule is: ``t`` a token the tree keeps,
    ``f`` a token it filters out (punctuation), ``s`` the children of an inlined
    rule (``_rule``, ``x*``: a ``_Splice``), ``n`` anything else (a node). The
    callback filters, splices and builds the model node in straight-line Python,
    doing what Lark's tree builder does with positions propagated; ``counted``
    rules record their expression depth.
    """
    kinds, expand1, inlined, counted = shape
    kept = [(i, k) for i, k in enumerate(kinds) if k != "f"]
    spliced = any(k == "s" for _, k in kept)
    items = ", ".join(f"*c[{i}]" if k == "s" else f"c[{i}]" for i, k in kept)
    if inlined and kinds[:1] == "s":  # `x*`'s helper: its own children so far, extended in place
        body = ["out = c[0]"]
        body += [f"out.{'extend' if k == 's' else 'append'}(c[{i}])" for i, k in kept[1:]]
        body.append("return out")
    elif inlined:  # hand the children to the parent
        body = [f"return _Splice([{items}])"]
    elif expand1 and not spliced and len(kept) == 1:
        body = [f"return c[{kept[0][0]}]"]
    else:
        body = [f"kept = [{items}]"] if spliced else []
        args = "*kept" if spliced else ", ".join(f"c[{i}]" for i, _ in kept)
        if expand1 and spliced:
            body += ["if len(kept) == 1:", "    return kept[0]"]
        body += _span_code(kinds)
        body.append(f"node = build(span, {args})")
        if counted:
            children = "kept" if spliced else f"({args},)" if args else "()"
            body.append(f"_count_depth(node, {children}, span)")
        body.append("return node")
    lines = "".join(f"        {line}\n" for line in body)
    return f"def {name}(build):\n    def reduce(c):\n{lines}    return reduce\n"


def _span_code(kinds: str) -> list[str]:
    """Lines that set ``span``: from the first child's start to the last child's end."""
    if not kinds:
        return ["span = Span(_current.get().file, 1, 1, 1, 1)"]
    last = len(kinds) - 1
    if "s" not in (kinds[0], kinds[last]):  # a token, or a node with its span
        first = "c[0]" if kinds[0] in "tf" else "c[0].span"
        end = f"c[{last}]" if kinds[last] in "tf" else f"c[{last}].span"
        return [
            f"a, b = {first}, {end}",
            "span = Span(_current.get().file, a.line, a.column, b.end_line, b.end_column)",
        ]
    return [
        f"first = {_edge_code(kinds, False)}",
        f"last = {_edge_code(kinds, True)}",
        "if first is None or last is None:",
        "    span = Span(_current.get().file, 1, 1, 1, 1)",
        "else:",
        "    span = Span(_current.get().file, first[0], first[1], last[0], last[1])",
    ]


def _factories(shapes: list[_Shape]) -> dict[_Shape, Callable[..., Any]]:
    """The callback factory of each shape, compiled together, once."""
    names = {shape: f"shape_{i}" for i, shape in enumerate(dict.fromkeys(shapes))}
    source = "\n".join(_shape_source(shape, name) for shape, name in names.items())
    scope: dict[str, Any] = {
        "_Splice": _Splice,
        "Span": m.Span,
        "_current": _current,
        "_edge": _edge,
        "_count_depth": _count_depth,
    }
    exec(compile(source, "<bcfg parser callbacks>", "exec"), scope)
    return {shape: scope[name] for shape, name in names.items()}


def _edge_code(kinds: str, end: bool) -> str:
    """An expression for where the first child starts (``end``: the last one ends)."""
    if not kinds:
        return "None"
    i = len(kinds) - 1 if end else 0
    if kinds[i] in "tf":  # the lexer gives every token its position
        return f"(c[{i}].end_line, c[{i}].end_column)" if end else f"(c[{i}].line, c[{i}].column)"
    return f"_edge(c, {end})"


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
    callbacks = parser._callbacks
    wanted: dict[Any, tuple[_Shape, Callable[..., Any] | None]] = {}
    for rule in list(callbacks):
        name = rule.alias or rule.origin.name
        name = getattr(name, "value", name)
        inlined = name.startswith("_")
        kinds = "".join(
            (
                ("f" if sym.filter_out else "t")
                if sym.is_term
                else ("s" if sym.name.startswith("_") else "n")
            )
            for sym in rule.expansion
        )
        expand1 = bool(rule.options.expand1) and not rule.alias
        build: Callable[..., Any] | None = None if inlined else _BUILDERS.get(name)
        if build is None and not inlined:
            if not (expand1 and len(kinds) - kinds.count("f") == 1):
                raise AssertionError(f"grammar rule {name!r} has no model class")
            if len(kinds) == 1:  # `?expr: product`: the most common reduction by far
                callbacks[rule] = operator.itemgetter(0)
                continue
            build = _only_child  # `?postfix: "(" expr ")"`
        wanted[rule] = ((kinds, expand1, inlined, name in _EXPR_RULES), build)
    factories = _factories([shape for shape, _ in wanted.values()])
    for rule, (shape, build) in wanted.items():
        callbacks[rule] = factories[shape](build)
    # One object per rule, in the parse table and as the callbacks' key: the parser then
    # finds a rule's callback by identity instead of comparing equal copies (a table
    # loaded from Lark's cache holds a copy of a rule per state).
    one = {rule: rule for rule in callbacks}
    for actions in parser.parser.parser.parser.parse_table.states.values():
        for token, (action, arg) in actions.items():
            if arg in one and arg is not one[arg]:
                actions[token] = (action, one[arg])


class _Plan:
    """How Lark's lexer for one parser state lexes: its regexes, callbacks, ignored and
    multi-line terminal types, and its keyword table (NAME -> keyword) as a dict."""

    __slots__ = ("match", "more", "callback", "ignore", "newline", "keywords")

    def __init__(self, lexer: Any):
        scanner = lexer.scanner  # built on first use; it also sets lexer.callback
        first, *more = scanner._mres  # Python's re caps groups: Lark splits big alternations
        self.match = first.match
        self.more = tuple(more)
        self.callback = dict(lexer.callback)
        self.ignore = frozenset(lexer.ignore_types)
        self.newline = frozenset(lexer.newline_types)
        # Lark retypes a NAME that is a keyword with a regex fullmatch over the keywords
        # (UnlessCallback); for plain strings that is a dict lookup.
        self.keywords: dict[str, dict[str, str]] = {}
        for type_, cb in list(self.callback.items()):
            inner = getattr(cb, "scanner", None)
            if type(cb) is not UnlessCallback or inner is None:
                continue
            terms = inner.terminals
            if all(isinstance(t.pattern, PatternStr) and not t.pattern.flags for t in terms):
                table: dict[str, str] = {}
                for t in terms:
                    table.setdefault(t.pattern.value, t.name)
                self.keywords[type_] = table
                del self.callback[type_]


class _FastLexer:
    """Lark's contextual lexer, its loop written out: the same per-state regexes, token
    types, positions, keyword and comment callbacks, ``last_token`` and line counter.

    Where no terminal matches, Lark's own lexer takes over at that very position,
    so every error is raised by Lark's code, as before. It also counts bracket
    tokens and refuses the first nested more than MAX_NESTING deep.
    """

    def __init__(self, lark_lexer: ContextualLexer):
        self.lark = lark_lexer
        self.plans: dict[Any, _Plan] = {}
        self._by_lexer: dict[int, _Plan] = {}

    def _plan(self, state: Any) -> _Plan:
        lexer = self.lark.lexers[state]
        plan = self._by_lexer.get(id(lexer))
        if plan is None:
            plan = self._by_lexer[id(lexer)] = _Plan(lexer)
        self.plans[state] = plan
        return plan

    def lex(self, lexer_state: Any, parser_state: Any) -> Iterator[Token]:
        text_slice = lexer_state.text
        text, end = text_slice.text, text_slice.end
        ctr = lexer_state.line_ctr
        pos, line, line_start = ctr.char_pos, ctr.line, ctr.line_start_pos
        stack = parser_state.state_stack
        plans = self.plans
        new = str.__new__
        depth = 0
        while pos < end:
            plan = plans.get(stack[-1]) or self._plan(stack[-1])
            found = plan.match(text, pos, end)
            if found is None:
                for mre in plan.more:
                    found = mre.match(text, pos, end)
                    if found is not None:
                        break
            if found is None:  # nothing matches here: Lark's lexer raises its own error
                ctr.char_pos, ctr.line, ctr.line_start_pos = pos, line, line_start
                ctr.column = pos - line_start + 1
                yield from self.lark.lex(lexer_state, parser_state)
                return
            value = found.group(0)
            type_ = found.lastgroup
            start_line, start_column = line, pos - line_start + 1
            if type_ in plan.newline:
                newlines = value.count("\n")
                if newlines:
                    line += newlines
                    line_start = pos + value.rindex("\n") + 1
            start, pos = pos, pos + len(value)
            ignored = type_ in plan.ignore
            callback = plan.callback.get(type_)
            if ignored and callback is None:
                continue
            keywords = plan.keywords.get(type_)
            if keywords is not None:
                type_ = keywords.get(value, type_)
            tok = new(Token, value)
            tok.type, tok.value, tok.start_pos, tok.end_pos = type_, value, start, pos
            tok.line, tok.column = start_line, start_column
            tok.end_line, tok.end_column = line, pos - line_start + 1
            if callback is not None:
                tok = callback(tok)
            if not ignored:
                step = _DEPTH.get(value)
                if step is not None:
                    depth = depth + step if depth + step > 0 else 0
                    if depth > MAX_NESTING:
                        raise _too_deep(text, start, _current.get().file)
                ctr.char_pos, ctr.line, ctr.line_start_pos = pos, line, line_start
                ctr.column = pos - line_start + 1
                lexer_state.last_token = tok
                yield tok
        ctr.char_pos, ctr.line, ctr.line_start_pos = pos, line, line_start
        ctr.column = pos - line_start + 1


def _install_lexer(parser: Lark) -> None:
    """Lex with ``_FastLexer`` if the parser is built as this module knows (else Lark's own)."""
    frontend = parser.parser
    lexer = getattr(frontend, "lexer", None)
    if type(lexer) is ContextualLexer and isinstance(getattr(lexer, "lexers", None), dict):
        frontend.lexer = _FastLexer(lexer)


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
