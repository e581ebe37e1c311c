"""Hover, go to definition and formatting, on the syntax model and the compiler's own evaluation.

Each takes the workspace, a snapshot of the buffers, a file and a string
offset, and returns plain results (markdown, offsets into a file's text); the
server turns them into LSP messages. The word under the cursor is found by
the tokenizer (it works on any text), what it means by the program the file
sees (``Workspace.scope``, made of what parses of it and its imports) and by
the syntax nodes around the cursor (``syntax.path_to``).
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ...diagnostics import SpecError
from ...emit.backend_config import getter_name
from ...escape import md_code, md_fence, md_text
from ...lang import syntax as syn
from ...lang.fmt import checked_format
from ...lang.vocabulary import (
    BOOLEANS,
    BUILTIN_DOCS,
    CONSTRAINT_KEYS,
    DTYPE_CONFIG_KEYS,
    DTYPE_NAMES,
    FIELD_BY_WORD,
    FUSE_FLAGS,
    KEYWORD_DOCS,
    OBSERVATIONS,
    QUANT_RANGES,
    quote,
)
from ...semantics import model as m
from ...semantics.context import Fail
from ...semantics.load import Definition
from ...semantics.values import DTypeSet, DTypeValue, FuserValue, Sym, Value, Word, describe
from ...sources import normalize_newlines
from . import describe as words
from . import text as tx
from .settings import setting_hover
from .workspace import Scope, Snapshot, Workspace

# At most this many resolved configs are shown in one hover.
MAX_CONFIGS_SHOWN = 6
_KINDS = {syn.AliasDecl: "alias", syn.ConstraintDecl: "constraint", syn.DTypesDecl: "dtype set"}
_KINDS |= {syn.FuseDecl: "fuser", syn.GroupDecl: "group"}


@dataclass(frozen=True)
class Hover:
    """Markdown about the word at ``start:end`` of the hovered text."""

    markdown: str
    start: int
    end: int


@dataclass(frozen=True)
class Location:
    """A place in a file: offsets into the text a snapshot reads for ``path``."""

    path: Path
    start: int
    end: int


@dataclass
class Cursor:
    """The name under the cursor, the dotted name it is part of, and the nodes around it."""

    path: Path
    text: str
    offset: int
    tok: tx.Tok
    parts: list[tx.Tok]
    scope: Scope

    @property
    def position(self) -> int:
        """Which segment of the dotted name the cursor is on."""
        return next(i for i, t in enumerate(self.parts) if t.start == self.tok.start)

    @cached_property
    def index(self) -> tx.TextIndex:
        return tx.TextIndex(self.text)

    @cached_property
    def nodes(self) -> list[syn.Node]:
        """The syntax nodes around the cursor, outermost first (of what parses of the file)."""
        f = self.scope.file
        if f is None:
            return []
        line, col = self.index.line_col(self.tok.start)
        return syn.path_to(f.spec, line, col)

    @property
    def defs(self) -> dict[str, tuple[Definition, str]]:
        return self.scope.file.defs if self.scope.file is not None else {}


def cursor_at(ws: Workspace, snap: Snapshot, path: Path, offset: int) -> Cursor | tx.Tok | None:
    """The cursor on a name, or the token there if it is no name (a string), or None."""
    text = snap.read(path)
    if text is None:
        return None
    tok = tx.token_at(text, offset)
    if tok is None or tok.kind != "name":
        return tok
    return Cursor(path, text, offset, tok, tx.dotted_at(text, tok), ws.scope(path, snap))


# ------------------------------------------------------------------ bindings


def binding(cur: Cursor, name: str) -> tuple[str, int] | None:
    """Where a loop variable or parameter ``name`` around the cursor is bound: (what, offset)."""
    index = cur.index
    for node in reversed(cur.nodes):
        start = index.span_offset(node.span.line, node.span.column)
        if isinstance(node, syn.ForItem) and name in node.targets:
            end = index.span_offset(node.iterable.span.line, node.iterable.span.column)
            iterable_end = index.span_offset(
                node.iterable.span.end_line, node.iterable.span.end_column
            )
            if end <= cur.tok.start < iterable_end:
                continue  # the list a loop runs over sees the names outside the loop
            iterable = words.text_of(node.iterable)
            found = tx.find_name(cur.text, start, end, name)
            loop = md_code(f"for {', '.join(node.targets)} in {iterable}")
            what = f"loop variable {md_code(name)} of {loop}"
            return (what, found.start) if found else None
        if isinstance(node, syn.GroupDecl) and name in node.params:
            found = tx.find_name(cur.text, start + len("group"), _body_start(node, index), name)
            what = f"parameter {md_code(name)} of group {md_code(node.name)}"
            return (what, found.start) if found else None
        if isinstance(node, syn.FuseDecl) and name in _param_names(node.params):
            end = index.span_offset(node.body.span.line, node.body.span.column)
            found = tx.find_name(cur.text, start + len("fuse"), end, name)
            what = f"parameter {md_code(name)} of fuser {md_code(node.name)}"
            return (what, found.start) if found else None
    return None


def _param_names(params: tuple[syn.Param, ...]) -> set[str]:
    out: set[str] = set()
    for p in params:
        out |= {p.name} if p.name is not None else _param_names(p.items)
    return out


def _body_start(decl: syn.GroupDecl, index: tx.TextIndex) -> int:
    if decl.body:
        return index.span_offset(decl.body[0].span.line, decl.body[0].span.column)
    return index.span_offset(decl.span.end_line, decl.span.end_column)


def declared_at(ws: Workspace, snap: Snapshot, cur: Cursor, name: str) -> Location | None:
    """The name in the declaration of ``name`` that the cursor's file sees."""
    entry = cur.defs.get(name)
    if entry is None:
        return None
    decl, where = entry
    path = cur.scope.place.path(where)
    text = snap.read(path)
    if text is None:
        return None
    start = tx.TextIndex(text).span_offset(decl.span.line, decl.span.column)
    tok = tx.name_after(text, start)
    if tok is None:
        return Location(path, start, start)
    return Location(path, tok.start, tok.end)


# ------------------------------------------------------------------ definition


def definition(ws: Workspace, snap: Snapshot, path: Path, offset: int) -> Location | None:
    """Where the name (or imported file) at ``offset`` is defined."""
    cur = cursor_at(ws, snap, path, offset)
    if isinstance(cur, tx.Tok):
        return _import_target(ws, snap, path, cur)
    if cur is None:
        return None
    var = tx.hole_at(cur.tok, offset)
    name = var if var is not None else cur.parts[0].text
    if var is None and cur.position > 0:
        return _python_definition(snap, cur)  # a torch name is in no file of the project
    bound = binding(cur, name)
    if bound is not None:
        return Location(path, bound[1], bound[1] + len(name))
    return declared_at(ws, snap, cur, name)


def _python_definition(snap: Snapshot, cur: Cursor) -> Location | None:
    """``alias.NAME`` (a hook: ``hooks.tensor_add``) where the alias names a module of the
    project: the ``def``, ``class`` or assignment of NAME at the top of its file."""
    entry = cur.defs.get(cur.parts[0].text)
    if entry is None or not isinstance(entry[0], syn.AliasDecl):
        return None
    if cur.position != len(cur.parts) - 1:
        return None
    module = [*entry[0].target.parts, *(t.text for t in cur.parts[1:-1])]
    root = cur.scope.place.project.root
    name = re.escape(cur.tok.text)
    found = re.compile(rf"^(?:(?:async\s+)?def|class)\s+({name})\b|^({name})\s*[:=]", re.M)
    for path in (
        root.joinpath(*module[:-1], f"{module[-1]}.py"),
        root.joinpath(*module, "__init__.py"),
    ):
        text = snap.read(path)
        if text is None:
            continue
        m = found.search(text)
        if m is None:
            return None
        start = m.start(1) if m.group(1) else m.start(2)
        return Location(path, start, start + len(cur.tok.text))
    return None


def _import_target(ws: Workspace, snap: Snapshot, path: Path, tok: tx.Tok) -> Location | None:
    """The file an ``import "..."`` string at ``tok`` names."""
    for target, start, end in tx.imports_in(snap.read(path) or ""):
        if start <= tok.start < end:
            scope = ws.scope(path, snap)
            name = scope.sources.resolve_import(scope.place.name(path), target)
            return None if name is None else Location(scope.place.path(name), 0, 0)
    return None


# ------------------------------------------------------------------ hover


def hover(ws: Workspace, snap: Snapshot, path: Path, offset: int) -> Hover | None:
    """What the word at ``offset`` is, in markdown."""
    cur = cursor_at(ws, snap, path, offset)
    if isinstance(cur, tx.Tok):
        target = _import_target(ws, snap, path, cur)
        if target is None:
            return None
        return Hover(f"imports {md_code(str(target.path))}", cur.start, cur.end)
    if cur is None:
        return None
    var = tx.hole_at(cur.tok, offset)
    if var is not None:
        bound = binding(cur, var)
        return Hover(bound[0], cur.tok.start, cur.tok.end) if bound else None
    for explain in (_setting_hover, _key_hover, _keyword_hover, _name_hover):
        md = explain(ws, snap, cur)
        if md is not None:
            return Hover(md, cur.tok.start, cur.tok.end)
    return None


def _next_code(cur: Cursor) -> str:
    after = next(tx.code_tokens(cur.text, cur.tok.end), None)
    return after.text if after is not None else ""


def _setting_hover(ws: Workspace, snap: Snapshot, cur: Cursor) -> str | None:
    """A quantizer's setting or a ``pt2e:`` key, or a word of its value (the PT2E key table)."""
    if len(cur.parts) != 1:
        return None
    return setting_hover(cur.tok.text, cur.nodes, _next_code(cur) == ":")


def _key_hover(ws: Workspace, snap: Snapshot, cur: Cursor) -> str | None:
    word = cur.tok.text
    if len(cur.parts) != 1 or _next_code(cur) != ":":
        return None
    in_record = any(isinstance(n, (syn.Record, syn.ConstraintDecl)) for n in cur.nodes)
    if not in_record and word in FIELD_BY_WORD:
        f = FIELD_BY_WORD[word]
        return f"**pattern field** `{word}`: {f.doc}\n\nsets `BackendPatternConfig.{f.setter}(...)`"
    keys = {k.word: k.torch for k in DTYPE_CONFIG_KEYS}
    if word in keys:
        return f"**dtype config key** `{word}`: `DTypeConfig({keys[word]}=...)`"
    if word in CONSTRAINT_KEYS:
        return f"**constraint** `{word}`: `DTypeWithConstraints({CONSTRAINT_KEYS[word]}=...)`"
    return None


def _keyword_hover(ws: Workspace, snap: Snapshot, cur: Cursor) -> str | None:
    word = cur.tok.text
    if len(cur.parts) != 1:
        return None
    if word == "pattern" and _next_code(cur) == "[":
        return "**the matched pattern**: `pattern[i]` is its i-th element, `pattern[i][j]` one inside it"
    if word in KEYWORD_DOCS:
        return f"**keyword** `{word}`: {KEYWORD_DOCS[word]}"
    if word in FUSE_FLAGS:
        return f"**fuse option** `{word}`: the fuser is passed `is_qat`" + (
            " and used only in eval mode" if word == "eval_only" else ", and the modes must match"
        )
    return None


def _name_hover(ws: Workspace, snap: Snapshot, cur: Cursor) -> str | None:
    head = cur.parts[0].text
    decl = cur.nodes[0] if cur.nodes else None
    if isinstance(decl, syn.BackendDecl):
        named = tx.name_after(cur.text, cur.index.span_offset(decl.span.line, decl.span.column))
        if named is not None and named.start == cur.tok.start:
            return backend_hover(ws, snap, cur, decl)
    if len(cur.parts) > 1 and _unchecked_path(cur):  # before the alias's own hover
        return _object_hover(cur)
    if cur.position == 0:
        bound = binding(cur, head)
        if bound is not None:
            return bound[0]
        if head in cur.defs and (
            len(cur.parts) == 1 or isinstance(cur.defs[head][0], syn.AliasDecl)
        ):
            return definition_hover(ws, snap, cur, head)
    item = next((n for n in reversed(cur.nodes) if isinstance(n, syn.PatternItem)), None)
    what = _word_hover(cur) if len(cur.parts) == 1 else None
    if what is None:
        what = _object_hover(cur)
    if item is not None and _in_head(cur, item):
        return (what + "\n\n" if what else "") + pattern_hover(ws, snap, cur, item)
    return what


def _in_head(cur: Cursor, item: syn.PatternItem) -> bool:
    index = cur.index
    s = item.head.span
    return (
        index.span_offset(s.line, s.column)
        <= cur.tok.start
        < index.span_offset(s.end_line, s.end_column)
    )


def _word_hover(cur: Cursor) -> str | None:
    word = cur.tok.text
    if word in DTYPE_NAMES:
        rng = QUANT_RANGES.get(word)
        return f"**dtype** `torch.{word}`" + (f", range [{rng[0]}, {rng[1]}]" if rng else "")
    if word in OBSERVATIONS:
        return f"**observation type** `ObservationType.{OBSERVATIONS[word]}`"
    if word in BOOLEANS:
        return f"**boolean** `{word}`"
    if word in BUILTIN_DOCS:
        return f"**built-in** {BUILTIN_DOCS[word]}"
    return None


# Where a quantizer's classes name objects by dotted path that bcfg does not import (the class
# imports them when it is constructed): the keys on the way from the classes field, in order.
_UNCHECKED: tuple[tuple[str, ...], ...] = (("params",), ("stages", "config"))
_UNCHECKED += (("pairs", "pattern"), ("pairs", "config"), ("pairs", "qat"))


def _unchecked_path(cur: Cursor) -> bool:
    """Whether the dotted name is one bcfg deliberately does not check: a default, a stage's or
    pair's config or a pair's pattern in ``classes:``, or a quantizer field naming a class by
    path (``config_type``)."""
    field = next((n for n in cur.nodes if isinstance(n, syn.Field)), None)
    if field is None or not isinstance(cur.nodes[0], syn.QuantizerDecl):
        return False
    if field.name == "config_type":
        return True
    keys = tuple(str(n.key) for n in cur.nodes if isinstance(n, syn.Entry))
    return field.name == "classes" and any(keys[: len(u)] == u for u in _UNCHECKED)


def _object_hover(cur: Cursor) -> str | None:
    """The object a dotted name (up to the segment under the cursor) resolves to."""
    f = cur.scope.file
    parts = cur.parts[: cur.position + 1]
    text = ".".join(t.text for t in parts)
    if f is None:
        return None
    if "${" in text:
        return f"{md_code(text)}: a name filled in for each loop element or group argument"
    if len(cur.parts) > 1 and _unchecked_path(cur):
        whole = md_code(".".join(t.text for t in cur.parts))
        return (
            f"{whole}: an object by dotted path, imported when the class is constructed, not "
            "at generation: bcfg does not check it (it may live in a package the generated "
            "module must not need)"
        )
    span = syn.Span(f.name, 1, 1, 1, 1)
    before = len(cur.scope.ctx.diag.diagnostics)
    try:
        value = cur.scope.evaluator.path(f, syn.DottedName(tuple(t.text for t in parts), span), {})
    except Fail:
        errors = cur.scope.ctx.diag.diagnostics[before:]
        return (
            "\n\n".join(
                f"{md_code(text)}: {md_text(d.message)}"
                + (f" ({md_text(d.hint)})" if d.hint else "")
                for d in errors
            )
            or None
        )
    return _value_line(text, value)


def _value_line(text: str, value: Value) -> str | None:
    if isinstance(value, Word):
        return None
    if isinstance(value, Sym):
        s = value.symbol
        imported = s.module and s.kind != m.SymbolKind.NAMESPACE
        return f"{md_code(text)} is {md_text(describe(value))}" + (
            f", imported from {md_code(s.module)}" if imported else ""
        )
    return f"{md_code(text)} is {md_text(describe(value))}"


# ------------------------------------------------------------------ definitions, expanded


def definition_hover(ws: Workspace, snap: Snapshot, cur: Cursor, name: str) -> str:
    """A definition as written and, below, what it means: resolved in spec words."""
    decl, where = cur.defs[name]
    head = f"**{_KINDS[type(decl)]}** {md_code(name)} ({md_text(f'{where}:{decl.span.line}')})"
    written = words.text_of(decl)
    if isinstance(decl, syn.GroupDecl):
        uses = group_uses(ws, snap, cur.path, decl)
        return f"{head}\n{md_fence(_clip(written), 'bcfg')}\n{uses}"
    meaning = _meaning(cur.scope, decl, where)
    parts = [head, md_fence(written, "bcfg")]
    if meaning and meaning.strip() != written.strip():
        parts.append(f"means\n{md_fence(meaning, 'bcfg')}")
    return "\n".join(parts)


def _meaning(scope: Scope, decl: Definition, where: str) -> str | None:
    """A definition's value in spec words, or its errors."""
    before = len(scope.ctx.diag.diagnostics)
    try:
        if isinstance(decl, syn.AliasDecl):
            f = scope.program.files[where]
            value: Value = scope.evaluator.symbol(f, list(decl.target.parts), decl.target.span)
            return f"# {describe(value)}" if isinstance(value, (Sym, DTypeValue)) else None
        value = scope.evaluator.definitions.value(decl, where, decl.span)
    except Fail:
        return "\n".join(f"# error: {d.message}" for d in scope.ctx.diag.diagnostics[before:])
    if isinstance(value, DTypeSet):
        return words.dtypes_text(decl.name, value.configs)
    if isinstance(value, DTypeValue):
        return words.constraint_text(decl.name, value.dtype)
    if isinstance(value, FuserValue) and isinstance(value.fuser, m.DefinedFuser):
        return words.fuser_text(value.fuser)
    return None


def _clip(text: str, lines: int = 30) -> str:
    rows = text.split("\n")
    return text if len(rows) <= lines else "\n".join(rows[:lines] + ["    # ..."])


def group_uses(ws: Workspace, snap: Snapshot, path: Path, decl: syn.GroupDecl) -> str:
    """Where the backends that see this group use it, and how many configs each use placed."""
    counts: dict[tuple[str, syn.Span], int] = {}
    for b in ws.backends(path, snap):
        for c in b.configs:
            for step in c.origin.chain if c.origin is not None else ():
                if step.kind == m.StepKind.USE and step.definition == decl.span:
                    counts[(step.anchor, step.span)] = counts.get((step.anchor, step.span), 0) + 1
    if not counts:
        return "no backend uses it"
    rows = [
        f"- {md_code(f'use {a}')} at {md_text(str(s))}: {n} config{'s' if n != 1 else ''}"
        for (a, s), n in counts.items()
    ]
    return "used by\n" + "\n".join(rows[:20]) + ("\n- ..." if len(rows) > 20 else "")


def backend_hover(ws: Workspace, snap: Snapshot, cur: Cursor, decl: syn.BackendDecl) -> str:
    """What a backend generates: its module, getter and number of pattern configs."""
    out = cur.scope.place.project.rel(cur.scope.place.project.out / f"{decl.name}.py")
    found = next((b for b in ws.backends(cur.path, snap) if b.span == decl.span), None)
    configs = (
        f"{len(found.configs)} pattern configs" if found else "not resolved (the spec has errors)"
    )
    label = f" named {md_code(quote(decl.backend_name))}" if decl.backend_name else ""
    if found is not None and decl.name in ws.pt2e_only(cur.path, snap):
        out = cur.scope.place.project.rel(
            cur.scope.place.project.out / f"{m.quantizer_module(decl.name)}.py"
        )
        writes = (
            f"PT2E only (its quantizer says `fx: false`): `bcfg generate` writes {md_code(out)} "
            f"with {md_code(f'get_{decl.name}_quantizer()')}, no BackendConfig"
        )
        return f"**backend** {md_code(decl.name)}{label}: {configs}\n\n{writes}"
    getter = getter_name(decl.name)
    writes = f"`bcfg generate` writes {md_code(out)} with {md_code(getter + '()')}"
    return f"**backend** {md_code(decl.name)}{label}: {configs}\n\n{writes}"


def pattern_hover(ws: Workspace, snap: Snapshot, cur: Cursor, item: syn.PatternItem) -> str:
    """The configs this pattern item resolved to, per backend (the first few of each)."""
    by_backend: dict[str, list[m.PatternConfig]] = {}
    for b in ws.backends(cur.path, snap):
        for c in b.configs:
            if c.origin is not None and c.origin.item == item.span:
                by_backend.setdefault(b.module, []).append(c)
    if not by_backend:
        return "no backend resolves this pattern (it is unused, or it or its backend has errors)"
    total = sum(len(cs) for cs in by_backend.values())
    s = "s" if len(by_backend) != 1 else ""
    out = [f"**{total} config{'s' if total != 1 else ''}** in {len(by_backend)} backend{s}"]
    shown, per_backend = 0, max(1, MAX_CONFIGS_SHOWN // len(by_backend))
    for module, configs in by_backend.items():
        for c in configs[: per_backend if shown < MAX_CONFIGS_SHOWN else 0]:
            via = f" via {md_text(_steps(c.origin))}" if c.origin and c.origin.chain else ""
            out.append(md_code(module) + via)
            out.append(md_fence(words.config_text(c), "bcfg"))
            shown += 1
    if shown < total:
        rest = ", ".join(f"{mod} {len(cs)}" for mod, cs in by_backend.items())
        out.append(f"{total - shown} more not shown; configs per backend: {md_text(rest)}")
    return "\n".join(out)


def _steps(origin: m.Origin) -> str:
    """How a config was placed, outermost first: ``use conv(ds=weighted_int8), for relu = F.relu``."""
    return ", ".join(("use " if s.kind == m.StepKind.USE else "") + s.anchor for s in origin.chain)


# ------------------------------------------------------------------ formatting


def format_edits(
    text: str, display: str, parse: Callable[[str, str], syn.Spec] | None = None
) -> list[tuple[int, int, str]] | None:
    """``bcfg fmt``'s result as whole-line edits (start, end offset, new text); None if the text
    does not parse (its diagnostics say why), [] if it is already formatted.

    ``bcfg fmt`` writes ``\\n`` line ends; a buffer with other line ends gets one edit of the
    whole text, so that the result is byte for byte what ``bcfg fmt`` writes. ``parse`` is the
    workspace's parse cache, if there is one (``checked_format``).
    """
    try:
        result = checked_format(normalize_newlines(text), display, parse)
    except SpecError:
        return None
    if result == text:
        return []
    if "\r" in text:
        return [(0, len(text), result)]
    old, new = text.splitlines(keepends=True), result.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    return [
        (starts[i1], starts[i2], "".join(new[j1:j2])) for i1, i2, j1, j2 in line_edits(old, new)
    ]


# How deep ``line_edits`` splits a region at lines found once in each text before it replaces
# the region whole: the depth bounds its time at n log n times this.
MAX_SPLITS = 48
SMALL_REGION = 4096  # lines x lines: a region this small is diffed by difflib, finely


def line_edits(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """Edits ``(i1, i2, j1, j2)`` (``old[i1:i2]`` becomes ``new[j1:j2]``, in order) that turn
    ``old`` into ``new``, in near-linear time whatever the lines (a patience diff).

    Equal lines at both ends of a region are kept; lines that occur once in each side of the
    region and in the same order (the longest run of them) are kept and split it; a small
    region (``SMALL_REGION``) is diffed by difflib; a region with no such line, or split
    ``MAX_SPLITS`` deep, is replaced whole. ``difflib`` with
    ``autojunk=False`` takes quadratic time and more on the many equal lines of a spec (``}``,
    blank lines): a minute for 6,000 lines.
    """
    out: list[tuple[int, int, int, int]] = []
    todo = [(0, len(old), 0, len(new), 0)]
    while todo:
        a0, a1, b0, b1, depth = todo.pop()
        while a0 < a1 and b0 < b1 and old[a0] == new[b0]:
            a0, b0 = a0 + 1, b0 + 1
        while a0 < a1 and b0 < b1 and old[a1 - 1] == new[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
        if a0 == a1 and b0 == b1:
            continue
        if (a1 - a0) * (b1 - b0) <= SMALL_REGION:  # small enough for difflib's finer edits
            matcher = difflib.SequenceMatcher(None, old[a0:a1], new[b0:b1], autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag != "equal":
                    out.append((a0 + i1, a0 + i2, b0 + j1, b0 + j2))
            continue
        anchors = [] if depth >= MAX_SPLITS else _unique_in_order(old, a0, a1, new, b0, b1)
        if not anchors:
            out.append((a0, a1, b0, b1))
            continue
        bounds = [(a0 - 1, b0 - 1), *anchors, (a1, b1)]
        for (i, j), (k, m_) in zip(bounds, bounds[1:]):
            todo.append((i + 1, k, j + 1, m_, depth + 1))
    return sorted(out)


def _unique_in_order(
    old: list[str], a0: int, a1: int, new: list[str], b0: int, b1: int
) -> list[tuple[int, int]]:
    """The longest run of lines found exactly once in ``old[a0:a1]`` and once in
    ``new[b0:b1]``, in the same order in both: their positions (patience sorting)."""
    seen: dict[str, list[int]] = {}
    for i in range(a0, a1):
        seen.setdefault(old[i], [0, -1, 0, -1])
        entry = seen[old[i]]
        entry[0] += 1
        entry[1] = i
    for j in range(b0, b1):
        found = seen.get(new[j])
        if found is not None:
            found[2] += 1
            found[3] = j
    pairs = sorted((e[1], e[3]) for e in seen.values() if e[0] == 1 and e[2] == 1)
    # The longest increasing run of new positions, in old order (patience sorting).
    tails: list[int] = []  # index into pairs of the smallest tail of each run length
    tail_js: list[int] = []  # and its new position
    back: list[int] = []
    for k, (_, j) in enumerate(pairs):
        at = bisect.bisect_left(tail_js, j)
        back.append(tails[at - 1] if at > 0 else -1)
        if at == len(tails):
            tails.append(k)
            tail_js.append(j)
        else:
            tails[at], tail_js[at] = k, j
    run: list[tuple[int, int]] = []
    k = tails[-1] if tails else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]
