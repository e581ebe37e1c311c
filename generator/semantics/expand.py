"""Pass 2, expansion: each backend's items, with groups and loops unrolled, into pattern configs.

Items are expanded in order. ``use`` binds a group's parameters and expands
its body in the group's own file; ``for`` binds its variables once per
element. Every pattern item is evaluated field by field (each field through
the coercion its kind asks for), checked across fields, and placed: a pattern
seen before in the backend is an error unless the item says ``override``,
which replaces the earlier config in its position, as ``BackendConfig`` does.
Each config keeps its ``Origin``: the spans of its fields, the ``use``/``for``
chain that placed it, the definitions it used and what it replaced.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field, replace
from typing import Any

from ..lang import syntax as syn
from ..lang.pt2e_keys import PT2E_KEY
from ..lang.vocabulary import (
    DEFAULT_OBSERVATION,
    FIELD_BY_TORCH_NAME,
    FIELD_BY_WORD,
    FIELD_WORDS,
)
from ..sources import Span
from . import checks, spelling
from . import model as m
from .checks import pattern_text
from .coerce import Coercions
from .context import Ctx, Fail
from .evaluate import Env, Evaluator
from .load import DECL_WORDS, LoadedFile, Program
from .values import Seq, Value, describe, plain_name, source_text, value_text

MAX_DEPTH = 64
# A pattern's identity in a backend: its reversed nested form over object identities.
PatternKey = Any


@dataclass
class Frame:
    """Where items are being expanded: the file whose names they see, and the bindings in scope.

    ``texts`` says how the spec wrote each binding's value, for origins.
    """

    file: LoadedFile
    env: Env = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def bind(
        self, names: tuple[str, ...], values: tuple[Value, ...], texts: tuple[str, ...]
    ) -> Frame:
        return Frame(
            self.file,
            {**self.env, **dict(zip(names, values))},
            {**self.texts, **dict(zip(names, texts))},
        )


@dataclass
class Expansion:
    """What one backend's expansion has placed so far, in order."""

    backend: str
    configs: list[m.PatternConfig] = field(default_factory=list)
    index: dict[PatternKey, int] = field(default_factory=dict)
    # Each pattern's pt2e given: values (patterns of one key given other values are variants).
    given: dict[PatternKey, list[tuple[tuple[str, Any], ...]]] = field(default_factory=dict)


# Backend names become file names: long enough for any real name, short
# enough for every file system (255 bytes, with room for a temporary name).
MAX_BACKEND_NAME = 100
_DISPLAY_NAME = 'the display name can be any string: backend b "my name" { ... }'


def module_name_problem(name: str) -> tuple[str, str] | None:
    """Why ``name`` cannot name a generated module (``generated/<name>.py``) and what to do; or None."""
    if not plain_name(name) or keyword.iskeyword(name):
        return (
            "is not a valid Python module name",
            f"use letters, digits and underscores; {_DISPLAY_NAME}",
        )
    if name.startswith("__") and name.endswith("__"):
        return (
            "is reserved: dunder names belong to Python (__init__.py is the package)",
            f"choose another name; {_DISPLAY_NAME}",
        )
    if len(name) > MAX_BACKEND_NAME:
        return (
            f"is {len(name)} characters long; at most {MAX_BACKEND_NAME} are allowed",
            f"shorten it; {_DISPLAY_NAME}",
        )
    return None


class Expander:
    """Expands backends into resolved ``Backend``s."""

    def __init__(self, ctx: Ctx, program: Program, evaluator: Evaluator, coerce: Coercions):
        self.ctx = ctx
        self.program = program
        self.evaluator = evaluator
        self.coerce = coerce
        self._groups: list[tuple[str, str]] = []  # groups being expanded, outermost first
        self._fx = True  # whether the backend being expanded gets a BackendConfig

    def backends(self, f: LoadedFile) -> list[m.Backend]:
        """Resolve every ``backend`` declared in the file ``f``."""
        out: list[m.Backend] = []
        if f.broken:
            return out
        for decl in f.spec.decls:
            if isinstance(decl, syn.BackendDecl):
                backend = self._backend(f, decl)
                if backend is not None:
                    out.append(backend)
        return out

    def _backend(self, f: LoadedFile, decl: syn.BackendDecl) -> m.Backend | None:
        problem = module_name_problem(decl.name)
        if problem is not None:
            shown = decl.name if len(decl.name) <= 40 else decl.name[:40] + "..."
            self.ctx.error(decl.span, f"backend name '{shown}' {problem[0]}", problem[1])
            return None
        expansion = Expansion(decl.name)
        self._fx = not _pt2e_only(f, decl.name)
        errors_before = self.ctx.diag.error_count
        self._items(expansion, Frame(f), decl.body, 0)
        if self.ctx.diag.error_count > errors_before:
            return None
        files = self.program.files
        inputs = tuple((d, files[d].digest) for d in [f.name, *f.imports])
        return m.Backend(
            module=decl.name,
            name=decl.backend_name if decl.backend_name is not None else decl.name,
            configs=tuple(expansion.configs),
            spec_file=f.name,
            inputs=inputs,
            span=decl.span,
        )

    def _items(
        self, expansion: Expansion, frame: Frame, items: tuple[syn.Item, ...], depth: int
    ) -> None:
        if depth > MAX_DEPTH:
            raise self.ctx.fail(
                items[0].span if items else None, f"groups nest more than {MAX_DEPTH} deep"
            )
        for item in items:
            try:
                if isinstance(item, syn.PatternItem):
                    self._pattern_item(expansion, frame, item)
                elif isinstance(item, syn.UseItem):
                    self._use(expansion, frame, item, depth)
                else:
                    self._for(expansion, frame, item, depth)
            except Fail:
                if depth:
                    raise
                continue

    def _use(self, expansion: Expansion, frame: Frame, item: syn.UseItem, depth: int) -> None:
        f = frame.file
        entry = f.defs.get(item.group)
        if entry is None:
            hint = self.ctx.suggest(
                item.group, [n for n, (d, _) in f.defs.items() if isinstance(d, syn.GroupDecl)]
            )
            raise self.ctx.fail(item.span, f"unknown group '{item.group}'", hint)
        group, where = entry
        if not isinstance(group, syn.GroupDecl):
            raise self.ctx.fail(
                item.span,
                f"'{item.group}' is {DECL_WORDS[type(group)]}, not a group",
                f"it is defined at {group.span}",
            )
        self.evaluator.definitions.used.add((where, group.name))
        if len(item.args) != len(group.params):
            raise self.ctx.fail(
                item.span,
                f"group '{group.name}' takes {len(group.params)} argument(s), got {len(item.args)}",
                f"it is defined at {group.span} as {group.name}({', '.join(group.params)})",
            )
        key = (where, group.name)
        if key in self._groups:
            chain = " -> ".join(n for _, n in self._groups[self._groups.index(key) :] + [key])
            raise self.ctx.fail(
                item.span,
                f"group '{group.name}' uses itself: {chain}",
                "a group cannot expand into itself",
            )
        with self.ctx.recording_definitions() as refs:
            values = tuple(self.evaluator.eval(f, a, frame.env) for a in item.args)
        texts = tuple(_arg_text(a, v, frame.texts) for a, v in zip(item.args, values))
        text = f"use {group.name}" + (
            f"({', '.join(source_text(a) for a in item.args)})" if item.args else ""
        )
        anchor = f"{group.name}({', '.join(f'{p}={t}' for p, t in zip(group.params, texts))})"
        self._groups.append(key)
        used = tuple(dict.fromkeys(ref for ref, _ in refs))
        self.ctx.trail.append(m.Step(m.StepKind.USE, item.span, text, anchor, group.span, used))
        try:
            inner = Frame(self.program.files[where]).bind(group.params, values, texts)
            self._items(expansion, inner, group.body, depth + 1)
        finally:
            self.ctx.trail.pop()
            self._groups.pop()

    def _for(self, expansion: Expansion, frame: Frame, item: syn.ForItem, depth: int) -> None:
        for name in item.targets:
            if not plain_name(name):
                raise self.ctx.fail(
                    item.span, f"loop variable '{name}' cannot hold a ${{...}} hole"
                )
        with self.ctx.recording_definitions() as refs:
            seq = self.evaluator.eval(frame.file, item.iterable, frame.env)
        if not isinstance(seq, Seq):
            raise self.ctx.fail(item.iterable.span, f"a loop needs a list, got {describe(seq)}")
        for value in seq.items:
            if item.destructure:
                if not isinstance(value, Seq) or len(value.items) != len(item.targets):
                    raise self.ctx.fail(
                        value.span,
                        f"cannot unpack {describe(value)} into ({', '.join(item.targets)})",
                        f"each element must be a tuple of {len(item.targets)}",
                    )
                values = value.items
                targets = f"({', '.join(item.targets)})"
            else:
                values = (value,)
                targets = item.targets[0]
            texts = tuple(value_text(v) for v in values)
            anchor = f"for {targets} = {value_text(value)}"
            used = tuple(dict.fromkeys(ref for ref, at in refs if _within(at, value.span)))
            step = m.Step(m.StepKind.FOR, value.span, "the loop element", anchor, item.span, used)
            self.ctx.trail.append(step)
            try:
                self._items(expansion, frame.bind(item.targets, values, texts), item.body, depth)
            finally:
                self.ctx.trail.pop()

    # --------------------------------------------------------------- patterns

    def _pattern_item(self, expansion: Expansion, frame: Frame, item: syn.PatternItem) -> None:
        head = self.evaluator.eval(frame.file, item.head, frame.env)
        pattern = self.coerce.as_pattern(head, item.complex)
        values: dict[str, Any] = {}
        seen: dict[str, syn.Field] = {}
        failed = False
        with self.ctx.recording_definitions() as refs:
            for fld in item.fields:
                if fld.name in seen:
                    self.ctx.error(
                        fld.span,
                        f"field '{fld.name}' is set twice",
                        f"first set at {seen[fld.name].span}",
                    )
                    failed = True
                    continue
                seen[fld.name] = fld
                try:
                    values[fld.name] = self._field(frame, fld, pattern, item.complex)
                except Fail:
                    failed = True
        used = tuple(dict.fromkeys(ref for ref, _ in refs))
        origin = m.Origin(
            item=item.span,
            fields=tuple((name, fld.span) for name, fld in seen.items()),
            chain=tuple(self.ctx.trail),
            definitions=used,
            head=_head_text(item),
        )
        config = m.PatternConfig(
            pattern=pattern,
            complex=item.complex,
            observation=values.get("observation", DEFAULT_OBSERVATION),
            dtype_configs=values.get("dtypes", ()),
            **{
                FIELD_BY_WORD[word].attr: value
                for word, value in values.items()
                if word not in ("observation", "dtypes")
            },
            origin=origin,
        )
        if not failed:
            self.ctx.report(
                checks.config_findings(
                    config,
                    {"pattern": item.head.span} | {k: fld.span for k, fld in seen.items()},
                    self.ctx.facts.signature,
                    fx=self._fx,
                )
            )
        self._place(expansion, item, config)
        if failed:
            raise Fail

    def _field(
        self, frame: Frame, fld: syn.Field, pattern: m.PatternValue, is_complex: bool
    ) -> Any:
        spec = FIELD_BY_WORD.get(fld.name)
        if spec is None:
            torch_name = FIELD_BY_TORCH_NAME.get(fld.name)
            raise self.ctx.fail(
                fld.span,
                f"unknown field '{fld.name}'",
                (
                    f"write '{torch_name.word}', bcfg's name for BackendPatternConfig's '{fld.name}'"
                    if torch_name is not None
                    else self.ctx.suggest(fld.name, FIELD_WORDS)
                    or f"fields are: {', '.join(FIELD_WORDS)}"
                ),
            )
        value = self.evaluator.eval(frame.file, fld.value, frame.env)
        return self.coerce.field(spec, value, pattern, is_complex)

    def _place(self, expansion: Expansion, item: syn.PatternItem, config: m.PatternConfig) -> None:
        """Add ``config`` to the backend, or replace the config it overrides, in its position."""
        assert config.origin is not None
        given = () if config.pt2e is None else config.pt2e.given
        key = self._variant(expansion, self._key(config.pattern, config.complex), given, item)
        if key in expansion.index:
            pos = expansion.index[key]
            first = expansion.configs[pos]
            assert first.origin is not None
            if not item.override:
                raise self.ctx.fail(
                    item.span,
                    f"pattern {pattern_text(config.pattern)} is already defined at {first.span}",
                    "mark this one 'override pattern' if it is meant to replace that one",
                    _first_origin(first.origin.chain, config.origin.chain, expansion.backend),
                )
            origin = replace(config.origin, replaced=first.origin)
            expansion.configs[pos] = replace(config, origin=origin)
        else:
            if item.override:
                raise self.ctx.fail(
                    item.span,
                    f"'override pattern {pattern_text(config.pattern)}' replaces nothing: the pattern is not defined before it",
                    "remove 'override'",
                )
            expansion.index[key] = len(expansion.configs)
            expansion.configs.append(config)

    def _variant(
        self,
        expansion: Expansion,
        key: PatternKey,
        given: tuple[tuple[str, Any], ...],
        item: syn.PatternItem,
    ) -> PatternKey:
        """The key of a pattern and its ``given``: patterns of one key are variants if each
        pair has a parameter they give different values; else they are one pattern, or, if
        their givens differ, a located error (an instance could have both)."""
        seen = expansion.given.setdefault(key, [])
        for other in seen:
            if other != given and not _disjoint(other, given):
                first = expansion.configs[expansion.index[(key, other) if other else key]]
                raise self.ctx.fail(
                    item.span,
                    f"pattern {pattern_text(first.pattern)} is also defined at {first.span}, "
                    f"given {_given_text(other)}: an instance given both "
                    f"{_given_text(given)} and that would have it twice",
                    "give the two a parameter of different values, like "
                    "given: {use_explicit_layout: true} and given: {use_explicit_layout: false}",
                )
        if given not in seen and seen and self._fx:
            first = expansion.configs[expansion.index[(key, seen[0]) if seen[0] else key]]
            raise self.ctx.fail(
                item.span,
                f"pattern {pattern_text(first.pattern)} is also defined at {first.span}, given "
                f"{_given_text(seen[0])}: variants are PT2E's, and this backend also makes an FX "
                "BackendConfig, which keeps one config per pattern (the last would replace the "
                "others)",
                "add fx: false to the backend's quantizer (a PT2E-only target), or write the "
                "pattern once",
            )
        if given not in seen:
            seen.append(given)
        return (key, given) if given else key

    def _key(self, pattern: m.PatternValue, is_complex: bool) -> PatternKey:
        def obj_key(p: Any) -> Any:
            if isinstance(p, tuple):
                return tuple(obj_key(x) for x in p)
            if isinstance(p, m.Symbol):
                return ("obj", self.ctx.facts.lookup(p.path).identity)
            return ("lit", type(p).__name__, p)

        return obj_key(pattern if is_complex else m.reversed_nested(pattern))


def _head_text(item: syn.PatternItem) -> str:
    """A pattern item's first line as the spec writes it, layout aside: ``override pattern nn.Conv${n}d``."""
    words = ["override"] * item.override + ["pattern"] + ["complex"] * item.complex
    return " ".join([*words, source_text(item.head)])


def _arg_text(e: syn.Expr, v: Value, texts: dict[str, str]) -> str:
    """How the spec wrote a group argument, with group parameters and loop variables filled in."""
    if isinstance(e, syn.DottedName):
        if len(e.parts) == 1 and e.parts[0] in texts:
            return texts[e.parts[0]]
        return value_text(v) if "${" in e.text else e.text
    if isinstance(e, (syn.ListExpr, syn.TupleExpr)) and isinstance(v, Seq):
        inner = ", ".join(_arg_text(x, y, texts) for x, y in zip(e.items, v.items))
        if isinstance(e, syn.TupleExpr):
            return f"({inner}{',' if len(e.items) == 1 else ''})"
        return f"[{inner}]"
    shown = source_text(e)
    return value_text(v) if shown == "..." else shown


def _within(inner: Span, outer: Span) -> bool:
    """``inner`` lies inside ``outer``."""
    return (
        inner.file == outer.file
        and (outer.line, outer.column) <= (inner.line, inner.column)
        and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)
    )


def _disjoint(a: tuple[tuple[str, Any], ...], b: tuple[tuple[str, Any], ...]) -> bool:
    """Whether no instance is given both: a parameter has a value in each, and they differ."""
    other = dict(b)
    return any(name in other and other[name] != value for name, value in a)


def _given_text(given: tuple[tuple[str, Any], ...]) -> str:
    if not given:
        return "nothing (it is in every table)"
    return spelling.key_text(PT2E_KEY["given"], given)


def _first_origin(
    first: tuple[m.Step, ...], second: tuple[m.Step, ...], backend: str
) -> tuple[str, ...]:
    """A note saying how the first of two equal patterns was reached, where that differs from the second."""

    def same(a: m.Step, b: m.Step) -> bool:
        return (a.kind, a.span, a.text) == (b.kind, b.span, b.text)

    k = 0
    while k < min(len(first), len(second)) and same(first[k], second[k]):
        k += 1
    if k < len(first):
        step = first[k]
        what = f"'{step.text}'" if step.kind == m.StepKind.USE else step.text
        return (f"the first comes from {what} at {step.span}, in backend '{backend}'",)
    return ()


def _pt2e_only(f: LoadedFile, name: str) -> bool:
    """Whether the file declares ``quantizer NAME { fx: false }`` (no BackendConfig for NAME)."""
    return any(
        isinstance(d, syn.QuantizerDecl)
        and d.name == name
        and any(
            fld.name == "fx" and isinstance(fld.value, syn.DottedName) and fld.value.text == "false"
            for fld in d.fields
        )
        for d in f.spec.decls
    )
