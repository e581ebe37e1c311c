"""Resolve and check: syntax model to resolved backends.

Loads each spec with its imports, binds every name (loop variables, group
parameters, ``dtypes``/``constraint``/``fuse`` definitions, aliases, the
installed torch), expands groups and loops in order, applies overrides, and
checks everything a ``BackendConfig`` would otherwise get silently wrong. All
errors of a run are collected and raised together as one ``SpecError``.

Errors are recorded through ``Resolver.error``; ``_Fail`` then abandons the
item being resolved (a pattern, a ``use``, a definition) and the resolver goes
on with the next, so that independent mistakes are all reported. An error
found while a group is expanded carries notes naming the ``use`` sites.
"""

from __future__ import annotations

import difflib
import hashlib
import keyword
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path as FsPath
from typing import Any, Union

from . import checks, symbols
from . import model as m
from .checks import pattern_text
from .diagnostics import Collector, SpecError
from .parse import parse_text, read_source

# Spec word (or the enum member's own name) -> ObservationType member name.
OBSERVATIONS = {word: member for member, word in m.OBSERVATION_WORDS.items()}
OBSERVATIONS.update({member: member for member in m.OBSERVATION_WORDS})
DEFAULT_OBSERVATION = "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"

# Spec key (short or torch's name) -> DTypeWithConstraints field.
CONSTRAINT_KEYS = {key: field for field, short in m.CONSTRAINT_FIELDS for key in (short, field)}

DTYPE_CONFIG_KEYS = ("input", "output", "weight", "bias", "dynamic")
FIELDS = (
    "observation",
    "dtypes",
    "root",
    "qat",
    "reference",
    "fused",
    "fuser",
    "root_node",
    "extra_inputs",
    "num_tensor_args",
    "input_index",
)
FUSE_FLAGS = ("eval_only", "same_mode")
MAX_DEPTH = 64
# Integers beyond this many bits are refused: no BackendConfig number is that big.
MAX_INT_BITS = 256


class _Fail(Exception):
    """An error was recorded; abandon the current item and go on with the next."""


# Values the resolver computes from expressions before they are given a type by
# the field they appear in.
@dataclass(frozen=True)
class Word:
    text: str
    span: m.Span


@dataclass(frozen=True)
class Sym:
    symbol: m.Symbol
    span: m.Span


@dataclass(frozen=True)
class Num:
    value: int | float
    span: m.Span


@dataclass(frozen=True)
class Text:
    value: str
    span: m.Span


@dataclass(frozen=True)
class Seq:
    items: tuple[Value, ...]
    is_tuple: bool
    span: m.Span


@dataclass(frozen=True)
class Rec:
    entries: tuple[tuple[str | int, Value, m.Span], ...]
    span: m.Span


@dataclass(frozen=True)
class DTypeSet:
    configs: tuple[m.DTypeConfig, ...]
    span: m.Span


@dataclass(frozen=True)
class DTypeValue:
    dtype: m.DType
    span: m.Span


@dataclass(frozen=True)
class FuserValue:
    fuser: m.Fuser
    span: m.Span


@dataclass(frozen=True)
class Getter:
    path: tuple[int, ...]
    span: m.Span


Value = Union[Word, Sym, Num, Text, Seq, Rec, DTypeSet, DTypeValue, FuserValue, Getter]

_KIND_WORDS = {
    "module": "a module class",
    "class": "a class",
    "function": "a function",
    "op": "an operator",
    "dtype": "a dtype",
    "namespace": "a module",
}


def _describe(v: Value) -> str:
    """What a value is, for messages: "a function 'torch.nn.functional.relu'"."""
    if isinstance(v, Sym):
        return f"{_KIND_WORDS.get(v.symbol.kind, 'a value')} '{v.symbol.path}'"
    if isinstance(v, Word):
        return f"the name '{v.text}'"
    if isinstance(v, Text):
        return f"the string {v.value!r}"
    if isinstance(v, Num):
        return f"the number {v.value!r}"
    if isinstance(v, DTypeValue):
        return f"the dtype {v.dtype.dtype}" + (" with constraints" if v.dtype.constrained else "")
    return {
        Rec: "a record",
        DTypeSet: "a dtype set",
        FuserValue: "a fuser",
        Getter: "a pattern element",
    }.get(type(v), "a list" if isinstance(v, Seq) and not v.is_tuple else "a tuple")


def _plain_name(name: str) -> bool:
    return name.isidentifier() and "${" not in name


@dataclass
class _File:
    path: FsPath
    display: str
    spec: m.Spec
    digest: str
    defs: dict[str, tuple[m.Decl, str]]  # name -> (decl, defining file), with imports
    imports: list[str]  # import closure, displays
    broken: bool = False  # an import failed: its backends are not resolved (errors would cascade)


@dataclass(frozen=True)
class _Step:
    """One step of the expansion that reached a pattern: a ``use`` or a loop element."""

    kind: str  # "use" or "for"
    span: m.Span
    text: str


class Resolver:
    """Resolves specs under ``root``; ``allow`` lists the importable top-level modules.

    Every fact about torch's names comes from ``table`` (a fresh, uncached
    ``SymbolTable`` by default), so a run whose names are all in a cached table
    never imports torch.
    """

    def __init__(
        self,
        root: FsPath,
        allow: tuple[str, ...] = symbols.DEFAULT_ALLOW,
        table: symbols.SymbolTable | None = None,
    ):
        self.root = root
        self.allow = tuple(allow)
        self.table = table if table is not None else symbols.SymbolTable(self.allow)
        self.diag = Collector()
        self.files: dict[str, _File] = {}
        self._loading: list[str] = []
        self._fusers: dict[tuple[str, str], m.DefinedFuser] = {}
        self._constraints: dict[tuple[str, str], m.DType] = {}
        self._dtypes: dict[tuple[str, str], DTypeSet] = {}
        self._resolving: list[tuple[str, str]] = []
        self._groups: list[tuple[str, str]] = []  # groups being expanded, outermost first
        self._trail: list[_Step] = []
        self._backend_name = ""
        self.used: set[tuple[str, str]] = set()

    def error(
        self,
        span: m.Span | None,
        message: str,
        hint: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        """Record an error; inside a group, notes say which ``use`` led there."""
        uses = tuple(f"in '{s.text}' at {s.span}" for s in reversed(self._trail) if s.kind == "use")
        self.diag.error(span, message, hint, notes + uses)

    # ------------------------------------------------------------------ files

    def display(self, path: FsPath) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.resolve().as_posix()

    def load(self, path: FsPath, span: m.Span | None = None) -> _File | None:
        """Parse a spec and its imports (once each); None if it could not be read."""
        display = self.display(path)
        if display in self.files:
            return self.files[display]
        if display in self._loading:
            cycle = " -> ".join(self._loading[self._loading.index(display) :] + [display])
            self.error(span, f"import cycle: {cycle}", "remove one of these imports")
            return None
        try:
            text = read_source(path, display)
            spec = parse_text(text, display)
        except SpecError as exc:
            for d in exc.diagnostics:
                self.diag.add(d)
            return None
        self._loading.append(display)
        try:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            f = _File(path, display, spec, digest, {}, [])
            for decl in spec.decls:
                if isinstance(decl, m.ImportDecl):
                    sub = self._import(path, decl)
                    if sub is None or sub.broken:
                        f.broken = True
                        continue
                    for name, (d, where) in sub.defs.items():
                        self._define(f, name, d, where)
                    for imp in [sub.display, *sub.imports]:
                        if imp not in f.imports:
                            f.imports.append(imp)
            for decl in spec.decls:
                if isinstance(decl, _DEFINITIONS) and self._check_decl_names(decl):
                    self._define(f, decl.name, decl, display)
            self.files[display] = f
            return f
        finally:
            self._loading.pop()

    def _import(self, path: FsPath, decl: m.ImportDecl) -> _File | None:
        if not decl.path.endswith(".bcfg") or "\0" in decl.path:
            self.error(decl.span, f"cannot import {decl.path!r}: only .bcfg specs can be imported")
            return None
        target = path.parent / decl.path
        try:
            found = target.is_file()
        except (OSError, ValueError):
            found = False
        if not found:
            self.error(
                decl.span,
                f"cannot import '{decl.path}': no such file",
                f"imports are relative to {self.display(path.parent) or '.'}/",
            )
            return None
        return self.load(target, decl.span)

    def _check_decl_names(self, decl: m.Decl) -> bool:
        """Names that are declared (not interpolated) must be plain identifiers."""
        names: list[tuple[str, m.Span]] = [(decl.name, decl.span)]
        if isinstance(decl, m.GroupDecl):
            names += [(p, decl.span) for p in decl.params]
        ok = True
        for name, span in names:
            if not _plain_name(name):
                self.error(
                    span,
                    f"'{name}' cannot be declared: a declared name has no ${{...}} holes",
                    "holes are filled in names that are used, not declared",
                )
                ok = False
        if isinstance(decl, m.GroupDecl) and len(set(decl.params)) != len(decl.params):
            dup = next(p for p in decl.params if decl.params.count(p) > 1)
            self.error(decl.span, f"group '{decl.name}' has two parameters named '{dup}'")
            ok = False
        return ok

    def _define(self, f: _File, name: str, decl: m.Decl, where: str) -> None:
        prev = f.defs.get(name)
        if prev is not None and prev[0] is not decl:
            self.error(
                decl.span,
                f"'{name}' is already defined at {prev[0].span}",
                "rename one of the two definitions",
            )
            return
        f.defs[name] = (decl, where)

    # --------------------------------------------------------------- backends

    def backends(self, f: _File) -> list[m.Backend]:
        """Resolve every ``backend`` declared in the file ``f``."""
        out = []
        if f.broken:
            return out
        for decl in f.spec.decls:
            if isinstance(decl, m.BackendDecl):
                backend = self._backend(f, decl)
                if backend is not None:
                    out.append(backend)
        return out

    def _backend(self, f: _File, decl: m.BackendDecl) -> m.Backend | None:
        if not _plain_name(decl.name) or keyword.iskeyword(decl.name):
            self.error(
                decl.span,
                f"backend name '{decl.name}' is not a valid Python module name",
                'use letters, digits and underscores; the display name can be any string: backend b "my name" { ... }',
            )
            return None
        configs: list[m.PatternConfig] = []
        index: dict[Any, int] = {}
        placed: list[tuple[_Step, ...]] = []  # how each config was reached
        errors_before = self.diag.error_count
        self._backend_name = decl.name
        self._items(f, decl.body, {}, configs, index, placed, 0)
        if self.diag.error_count > errors_before:
            return None
        inputs = tuple((d, self.files[d].digest) for d in [f.display, *f.imports])
        return m.Backend(
            module=decl.name,
            name=decl.backend_name if decl.backend_name is not None else decl.name,
            configs=tuple(configs),
            spec_file=f.display,
            inputs=inputs,
            span=decl.span,
        )

    def _items(self, f, items, env, configs, index, placed, depth) -> None:
        if depth > MAX_DEPTH:
            self.error(items[0].span if items else None, f"groups nest more than {MAX_DEPTH} deep")
            raise _Fail
        for item in items:
            try:
                if isinstance(item, m.PatternItem):
                    self._pattern_item(f, item, env, configs, index, placed)
                elif isinstance(item, m.UseItem):
                    self._use(f, item, env, configs, index, placed, depth)
                else:
                    self._for(f, item, env, configs, index, placed, depth)
            except _Fail:
                if depth:
                    raise
                continue

    def _use(self, f, item: m.UseItem, env, configs, index, placed, depth) -> None:
        entry = f.defs.get(item.group)
        if entry is None:
            hint = self._suggest(
                item.group, [n for n, (d, _) in f.defs.items() if isinstance(d, m.GroupDecl)]
            )
            self.error(item.span, f"unknown group '{item.group}'", hint)
            raise _Fail
        if not isinstance(entry[0], m.GroupDecl):
            self.error(
                item.span,
                f"'{item.group}' is {_DECL_WORDS[type(entry[0])]}, not a group",
                f"it is defined at {entry[0].span}",
            )
            raise _Fail
        group, where = entry
        self.used.add((where, group.name))
        if len(item.args) != len(group.params):
            self.error(
                item.span,
                f"group '{group.name}' takes {len(group.params)} argument(s), got {len(item.args)}",
                f"it is defined at {group.span} as {group.name}({', '.join(group.params)})",
            )
            raise _Fail
        key = (where, group.name)
        if key in self._groups:
            chain = " -> ".join(n for _, n in self._groups[self._groups.index(key) :] + [key])
            self.error(
                item.span,
                f"group '{group.name}' uses itself: {chain}",
                "a group cannot expand into itself",
            )
            raise _Fail
        args = {p: self.eval(f, a, env) for p, a in zip(group.params, item.args)}
        text = f"use {group.name}" + (
            f"({', '.join(_source_text(a) for a in item.args)})" if item.args else ""
        )
        self._groups.append(key)
        self._trail.append(_Step("use", item.span, text))
        try:
            self._items(self.files[where], group.body, args, configs, index, placed, depth + 1)
        finally:
            self._trail.pop()
            self._groups.pop()

    def _for(self, f, item: m.ForItem, env, configs, index, placed, depth) -> None:
        for name in item.targets:
            if not _plain_name(name):
                self.error(item.span, f"loop variable '{name}' cannot hold a ${{...}} hole")
                raise _Fail
        seq = self.eval(f, item.iterable, env)
        if not isinstance(seq, Seq):
            self.error(item.iterable.span, f"a loop needs a list, got {_describe(seq)}")
            raise _Fail
        for value in seq.items:
            inner = dict(env)
            if item.destructure:
                if not isinstance(value, Seq) or len(value.items) != len(item.targets):
                    self.error(
                        value.span,
                        f"cannot unpack {_describe(value)} into ({', '.join(item.targets)})",
                        f"each element must be a tuple of {len(item.targets)}",
                    )
                    raise _Fail
                inner.update(zip(item.targets, value.items))
            else:
                inner[item.targets[0]] = value
            self._trail.append(_Step("for", value.span, "the loop element"))
            try:
                self._items(f, item.body, inner, configs, index, placed, depth)
            finally:
                self._trail.pop()

    # --------------------------------------------------------------- patterns

    def _pattern_item(self, f, item: m.PatternItem, env, configs, index, placed) -> None:
        head = self.eval(f, item.head, env)
        pattern = self.as_pattern(head, item.complex)
        fields: dict[str, Any] = {}
        seen: dict[str, m.Field] = {}
        failed = False
        for fld in item.fields:
            if fld.name in seen:
                self.error(
                    fld.span,
                    f"field '{fld.name}' is set twice",
                    f"first set at {seen[fld.name].span}",
                )
                failed = True
                continue
            seen[fld.name] = fld
            try:
                fields[fld.name] = self._field(f, fld, env, pattern, item.complex)
            except _Fail:
                failed = True
        config = m.PatternConfig(
            pattern=pattern,
            complex=item.complex,
            observation=fields.get("observation", DEFAULT_OBSERVATION),
            dtype_configs=fields.get("dtypes", ()),
            root_module=fields.get("root"),
            qat_module=fields.get("qat"),
            reference_module=fields.get("reference"),
            fused_module=fields.get("fused"),
            fuser=fields.get("fuser"),
            root_node_getter=fields.get("root_node"),
            extra_inputs_getter=fields.get("extra_inputs"),
            num_tensor_args=fields.get("num_tensor_args", ()),
            input_type_to_index=fields.get("input_index", ()),
            span=item.span,
        )
        if not failed:
            self._report(
                checks.config_findings(
                    config, {k: fld.span for k, fld in seen.items()}, self.table.signature
                )
            )
        here = tuple(self._trail)
        key = self._key(pattern, item.complex)
        if key in index:
            pos = index[key]
            if not item.override:
                first = placed[pos]
                self.error(
                    item.span,
                    f"pattern {pattern_text(pattern)} is already defined at {configs[pos].span}",
                    "mark this one 'override pattern' if it is meant to replace that one",
                    _first_origin(first, here, self._backend_name),
                )
                raise _Fail
            configs[pos] = config
            placed[pos] = here
        else:
            if item.override:
                self.error(
                    item.span,
                    f"'override pattern {pattern_text(pattern)}' replaces nothing: the pattern is not defined before it",
                    "remove 'override'",
                )
                raise _Fail
            index[key] = len(configs)
            configs.append(config)
            placed.append(here)
        if failed:
            raise _Fail

    def _report(self, findings: list[checks.Finding]) -> bool:
        """Report findings; True if any was an error."""
        for x in findings:
            (self.error if x.severity == "error" else self.diag.warning)(x.span, x.message, x.hint)
        return any(x.severity == "error" for x in findings)

    def _field(self, f, fld: m.Field, env, pattern, is_complex):
        name = fld.name
        if name == "observation":
            return self.as_observation(self.eval(f, fld.value, env))
        if name == "dtypes":
            return self.as_dtypes(self.eval(f, fld.value, env)).configs
        if name in ("root", "qat", "reference", "fused"):
            return self.as_module(self.eval(f, fld.value, env), f"a {name} module")
        if name == "fuser":
            return self.as_fuser(self.eval(f, fld.value, env))
        if name == "root_node":
            getter = self.eval(f, fld.value, env)
            if not isinstance(getter, Getter):
                self.error(
                    getter.span,
                    f"root_node must pick an element of the pattern, like pattern[1]; got {_describe(getter)}",
                )
                raise _Fail
            self._check_getter(getter, pattern, is_complex)
            return m.NodeGetter(getter.path)
        if name == "extra_inputs":
            seq = self.eval(f, fld.value, env)
            if not isinstance(seq, Seq) or not all(isinstance(g, Getter) for g in seq.items):
                self.error(
                    seq.span, "extra_inputs must be a list of pattern elements, like [pattern[2]]"
                )
                raise _Fail
            for g in seq.items:
                self._check_getter(g, pattern, is_complex)
            return m.ExtraInputsGetter(tuple(g.path for g in seq.items))
        if name == "num_tensor_args":
            rec = self.eval(f, fld.value, env)
            if not isinstance(rec, Rec) or not all(isinstance(k, int) for k, _, _ in rec.entries):
                self.error(
                    rec.span,
                    "num_tensor_args must map argument counts to observation types, like {0: different_observer}",
                )
                raise _Fail
            return tuple((k, self.as_observation(v)) for k, v, _ in rec.entries)
        if name == "input_index":
            rec = self.eval(f, fld.value, env)
            if not isinstance(rec, Rec):
                self.error(
                    rec.span,
                    "input_index must map input names to argument positions, like {weight: 1, bias: 2}",
                )
                raise _Fail
            out = []
            for k, v, span in rec.entries:
                if not isinstance(k, str) or not k.isidentifier():
                    self.error(
                        span,
                        f"{k!r} is not an input name",
                        "input names are like weight, bias, input",
                    )
                    raise _Fail
                if not isinstance(v, Num) or not isinstance(v.value, int) or v.value < 0:
                    self.error(v.span, f"the position of '{k}' must be a non-negative integer")
                    raise _Fail
                out.append((k, v.value))
            return tuple(out)
        self.error(
            fld.span,
            f"unknown field '{name}'",
            self._suggest(name, FIELDS) or f"fields are: {', '.join(FIELDS)}",
        )
        raise _Fail

    def _check_getter(self, g: Getter, pattern, is_complex: bool) -> None:
        node = pattern if is_complex else _reversed_nested(pattern)
        for i in g.path:
            if not isinstance(node, tuple) or i >= len(node):
                hint = (
                    None
                    if is_complex
                    else (
                        "getters index a sequential pattern in torch's reversed nested form: "
                        f"{pattern_text(pattern)} is {pattern_text(_reversed_nested(pattern))}"
                    )
                )
                self.error(
                    g.span,
                    f"pattern[{']['.join(map(str, g.path))}] is not an element of the pattern {pattern_text(pattern)}",
                    hint,
                )
                raise _Fail
            node = node[i]

    def _key(self, pattern, is_complex: bool):
        def obj_key(p):
            if isinstance(p, tuple):
                return tuple(obj_key(x) for x in p)
            if isinstance(p, m.Symbol):
                return ("obj", self.table.lookup(p.path).identity)
            return ("lit", type(p).__name__, p)

        return obj_key(pattern if is_complex else _reversed_nested(pattern))

    # ------------------------------------------------------------ coercions

    def as_pattern(self, v: Value, is_complex: bool, op: bool = True):
        """A pattern: ``op`` is True where the element is an operator (not an argument)."""
        if isinstance(v, Sym):
            if v.symbol.kind in ("module", "class", "function", "op"):
                return v.symbol
            self.error(
                v.span,
                f"{_describe(v)} cannot be a pattern",
                "a pattern is a module class, a function, an operator or a method name",
            )
            raise _Fail
        if isinstance(v, Text):
            if not v.value.isidentifier():
                self.error(
                    v.span,
                    f"{v.value!r} is not a method name",
                    'a string in a pattern names a Tensor method, like "relu" or "view"',
                )
                raise _Fail
            return v.value
        if isinstance(v, Num) and isinstance(v.value, int) and is_complex and not op:
            return v.value
        if isinstance(v, Num):
            where = (
                "an argument of a complex pattern"
                if is_complex
                else "an argument in a complex pattern"
            )
            self.error(
                v.span,
                f"{_describe(v)} cannot be a pattern element here; an integer may only be {where}",
                "like pattern complex (operator.getitem, aten.max_pool2d_with_indices.default, 0)",
            )
            raise _Fail
        if isinstance(v, Seq) and v.is_tuple:
            if not is_complex:
                if not 2 <= len(v.items) <= 3:
                    self.error(
                        v.span,
                        f"a sequential pattern has 2 or 3 elements, this one has {len(v.items)}",
                        "write longer or branching patterns as 'complex' patterns",
                    )
                    raise _Fail
                for x in v.items:
                    if isinstance(x, Seq):
                        self.error(
                            x.span,
                            "a sequential pattern cannot nest tuples",
                            "write nested patterns as 'pattern complex (...)' in reversed nested form",
                        )
                        raise _Fail
            else:
                if len(v.items) < 2:
                    self.error(
                        v.span,
                        "a complex pattern tuple needs an operator and at least one argument",
                        "write (op, arg, ...); a lone operator needs no tuple",
                    )
                    raise _Fail
                if isinstance(v.items[0], Seq):
                    self.error(
                        v.items[0].span,
                        "the first element of a complex pattern tuple is its operator, not a tuple",
                        "write (op, (inner_op, ...), ...)",
                    )
                    raise _Fail
            return tuple(self.as_pattern(x, is_complex, op=(i == 0)) for i, x in enumerate(v.items))
        if isinstance(v, Word):
            self._unknown(v)
        self.error(
            v.span,
            f"{_describe(v)} cannot be a pattern",
            "a pattern is a module class, a function, an operator, a method name or a tuple of them",
        )
        raise _Fail

    def as_module(self, v: Value, role: str) -> m.Symbol:
        if isinstance(v, Sym) and v.symbol.kind == "module":
            return v.symbol
        if isinstance(v, Word):
            self._unknown(v)
        hint = None
        if isinstance(v, Sym) and v.symbol.kind == "class":
            hint = f"{v.symbol.path} is not a subclass of torch.nn.Module"
        elif isinstance(v, Sym) and v.symbol.kind == "function":
            hint = "name the module class, like nn.ReLU rather than F.relu"
        self.error(v.span, f"{role} must be an nn.Module class, got {_describe(v)}", hint)
        raise _Fail

    def as_observation(self, v: Value) -> str:
        text = v.text if isinstance(v, Word) else None
        if text in OBSERVATIONS:
            return OBSERVATIONS[text]
        self.error(
            v.span,
            (
                f"unknown observation type {text!r}"
                if text
                else f"an observation type must be a name, got {_describe(v)}"
            ),
            self._suggest(text or "", list(OBSERVATIONS))
            or "use different_observer, shared_observer or not_observed",
        )
        raise _Fail

    def as_dtypes(self, v: Value) -> DTypeSet:
        if isinstance(v, DTypeSet):
            return v
        if isinstance(v, Rec):
            return DTypeSet((self._dtype_config(v, None),), v.span)
        if isinstance(v, Seq) and not v.is_tuple:
            out: list[m.DTypeConfig] = []
            failed = False
            for x in v.items:
                try:
                    out.extend(self.as_dtypes(x).configs)
                except _Fail:
                    failed = True
            if failed:
                raise _Fail
            return DTypeSet(tuple(out), v.span)
        if isinstance(v, Word):
            self._unknown(v, "dtype set")
        self.error(
            v.span,
            f"expected a dtype set, got {_describe(v)}",
            "write {input: quint8, output: quint8}, a dtypes name or a list of them",
        )
        raise _Fail

    def as_dtype(self, v: Value, allow_constraints: bool) -> m.DType:
        if isinstance(v, DTypeValue) and (allow_constraints or not v.dtype.constrained):
            return v.dtype
        if isinstance(v, Word):
            self._unknown(v, "dtype")
        what = (
            "a dtype or constraint"
            if allow_constraints
            else "a plain dtype (bias takes no constraints)"
        )
        self.error(
            v.span,
            f"expected {what}, got {_describe(v)}",
            "dtypes are quint8, qint8, quint4x2, float, float16, ...",
        )
        raise _Fail

    def _dtype_config(self, rec: Rec, name: str | None) -> m.DTypeConfig:
        values: dict[str, Any] = {}
        failed = False
        for key, val, span in rec.entries:
            if key not in DTYPE_CONFIG_KEYS:
                self.error(
                    span,
                    f"unknown dtype config key {key!r}",
                    self._suggest(str(key), list(DTYPE_CONFIG_KEYS))
                    or f"keys are: {', '.join(DTYPE_CONFIG_KEYS)}",
                )
                failed = True
                continue
            try:
                if key == "dynamic":
                    if not (isinstance(val, Word) and val.text in ("true", "false")):
                        self.error(val.span, f"dynamic must be true or false, got {_describe(val)}")
                        raise _Fail
                    values[key] = val.text == "true"
                elif key == "bias":
                    values[key] = self.as_dtype(val, allow_constraints=False).dtype
                else:
                    values[key] = self.as_dtype(val, allow_constraints=True)
            except _Fail:
                failed = True
        if failed:
            raise _Fail
        return m.DTypeConfig(
            input=values.get("input"),
            output=values.get("output"),
            weight=values.get("weight"),
            bias=values.get("bias"),
            is_dynamic=values.get("dynamic"),
            name=name,
        )

    def as_fuser(self, v: Value) -> m.Fuser:
        if isinstance(v, FuserValue):
            return v.fuser
        if isinstance(v, Sym) and v.symbol.kind == "function":
            return m.SymbolFuser(v.symbol)
        if isinstance(v, Word):
            self._unknown(v, "fuser")
        hint = "a fuser is sequential(FusedModule), the name of a 'fuse' definition or a fuser function"
        if isinstance(v, Sym) and v.symbol.kind == "module":
            hint = f"to fuse into {checks.short(v.symbol.path)}, write sequential({checks.short(v.symbol.path)})"
        self.error(v.span, f"expected a fuser, got {_describe(v)}", hint)
        raise _Fail

    def _unknown(self, w: Word, kind: str = "symbol") -> None:
        self.error(w.span, f"unknown {kind} '{w.text}'", self._word_hint(w.text))
        raise _Fail

    def _word_hint(self, text: str) -> str | None:
        pool = list(symbols.BUILTIN_ALIASES) + list(symbols.DTYPE_NAMES) + list(OBSERVATIONS)
        for f in self.files.values():
            pool.extend(f.defs)
        hint = self._suggest(text, pool)
        if hint is None:  # a class named without its namespace: Linear for nn.Linear
            for alias, full in symbols.BUILTIN_ALIASES.items():
                try:
                    self.table.lookup(f"{full}.{text}")
                except symbols.UnknownSymbol:
                    continue
                return f"did you mean '{alias}.{text}'?"
        return hint

    @staticmethod
    def _suggest(text: str, pool) -> str | None:
        close = difflib.get_close_matches(text, sorted(set(pool)), n=1, cutoff=0.7)
        return f"did you mean '{close[0]}'?" if close else None

    # ------------------------------------------------------------ evaluation

    def eval(self, f: _File, e: m.Expr, env: dict[str, Value]) -> Value:
        """Evaluate an expression to an untyped value, in file ``f``'s scope."""
        if isinstance(e, m.Path):
            return self._path(f, e, env)
        if isinstance(e, m.Str):
            return Text(e.value, e.span)
        if isinstance(e, (m.Int, m.Float)):
            return self._checked_number(e.value, e.span)
        if isinstance(e, m.Neg):
            v = self._number(f, e.operand, env)
            return Num(-v, e.span)
        if isinstance(e, m.BinOp):
            a, b = self._number(f, e.left, env), self._number(f, e.right, env)
            if (
                e.op == "**"
                and isinstance(a, int)
                and isinstance(b, int)
                and abs(a) > 1
                and abs(a).bit_length() * b > MAX_INT_BITS
            ):
                self.error(e.span, f"{a} ** {b} is too large a number")
                raise _Fail
            try:
                r = {
                    "+": lambda: a + b,
                    "-": lambda: a - b,
                    "*": lambda: a * b,
                    "/": lambda: a / b,
                    "**": lambda: a**b,
                }[e.op]()
            except (ZeroDivisionError, OverflowError) as exc:
                self.error(e.span, f"cannot compute this number: {exc}")
                raise _Fail from None
            if isinstance(r, complex):
                self.error(e.span, "this number is not real")
                raise _Fail
            return self._checked_number(r, e.span)
        if isinstance(e, (m.TupleExpr, m.ListExpr)):
            items = self._all(f, e.items, env)
            return Seq(items, isinstance(e, m.TupleExpr), e.span)
        if isinstance(e, m.Record):
            seen: dict[str | int, m.Entry] = {}
            for ent in e.entries:
                if ent.key in seen:
                    self.error(
                        ent.span,
                        f"key {ent.key!r} appears twice",
                        f"first given at {seen[ent.key].span}",
                    )
                    raise _Fail
                seen[ent.key] = ent
            values = self._all(f, tuple(ent.value for ent in e.entries), env)
            return Rec(tuple((ent.key, v, ent.span) for ent, v in zip(e.entries, values)), e.span)
        if isinstance(e, m.PatternRef):
            return Getter((), e.span)
        if isinstance(e, m.Index):
            target = self.eval(f, e.target, env)
            idx = self.eval(f, e.index, env)
            if not isinstance(target, Getter):
                self.error(e.span, "only 'pattern' can be indexed, as in pattern[1]")
                raise _Fail
            if not isinstance(idx, Num) or not isinstance(idx.value, int) or idx.value < 0:
                self.error(idx.span, "a pattern index must be a non-negative integer")
                raise _Fail
            return Getter(target.path + (idx.value,), e.span)
        if isinstance(e, m.Call):
            return self._call(f, e, env)
        raise AssertionError(f"unhandled expression {type(e).__name__}")

    def _all(self, f: _File, exprs: tuple[m.Expr, ...], env) -> tuple[Value, ...]:
        """Evaluate every expression, reporting the errors of each before giving up."""
        out, failed = [], False
        for x in exprs:
            try:
                out.append(self.eval(f, x, env))
            except _Fail:
                failed = True
        if failed:
            raise _Fail
        return tuple(out)

    def _checked_number(self, value: int | float, span: m.Span) -> Num:
        if isinstance(value, float) and not math.isfinite(value):
            self.error(span, "this number is not finite")
            raise _Fail
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            self.error(span, "this number is too large")
            raise _Fail
        return Num(value, span)

    def _number(self, f, e, env) -> int | float:
        v = self.eval(f, e, env)
        if not isinstance(v, Num):
            self.error(v.span, f"expected a number, got {_describe(v)}")
            raise _Fail
        return v.value

    def _call(self, f, e: m.Call, env) -> Value:
        fn = e.func.text
        if fn == "sequential":
            if len(e.args) != 1:
                self.error(
                    e.span,
                    f"sequential(...) takes one fused module class, got {len(e.args)} arguments",
                )
                raise _Fail
            return FuserValue(
                m.SequentialFuser(
                    self.as_module(self.eval(f, e.args[0], env), "the fused module of sequential()")
                ),
                e.span,
            )
        if fn == "constrain":
            if len(e.args) != 2:
                self.error(
                    e.span, f"constrain(dtypes, constraint) takes two arguments, got {len(e.args)}"
                )
                raise _Fail
            ds = self.as_dtypes(self.eval(f, e.args[0], env))
            cv = self.eval(f, e.args[1], env)
            c = self.as_dtype(cv, allow_constraints=True)
            if c.scale_min_lower_bound is not None or c.scale_max_upper_bound is not None:
                self.error(
                    cv.span,
                    "constrain() fixes quantization parameters; a constraint with scale_min or scale_max is used as a dtype instead",
                    "write it as input/output of a dtype set: {input: my_constraint, ...}",
                )
                raise _Fail
            out = tuple(self._constrain(cfg, c, e.span) for cfg in ds.configs)
            if out == ds.configs:
                self.error(
                    e.span,
                    f"constrain() changes nothing: no dtype config in the set has {c.dtype} as its input or output",
                )
                raise _Fail
            return DTypeSet(out, e.span)
        self.error(
            e.func.span,
            f"unknown function '{fn}'",
            "the functions are sequential(Module) and constrain(dtypes, constraint); calls of symbols belong in 'fuse' definitions",
        )
        raise _Fail

    def _constrain(self, cfg: m.DTypeConfig, c: m.DType, span: m.Span) -> m.DTypeConfig:
        """Give the activations of ``cfg`` whose dtype is ``c``'s the constraints of ``c``."""

        def apply(d: m.DType | None) -> m.DType | None:
            if d is None or d.dtype != c.dtype:
                return d
            if d.scale_min_lower_bound is not None or d.scale_max_upper_bound is not None:
                self.error(
                    span,
                    "scale bounds cannot be combined with fixed quantization parameters",
                    "constrain a dtype set without scale_min/scale_max",
                )
                raise _Fail
            return replace(
                d,
                quant_min_lower_bound=c.quant_min_lower_bound,
                quant_max_upper_bound=c.quant_max_upper_bound,
                scale_exact_match=c.scale_exact_match,
                zero_point_exact_match=c.zero_point_exact_match,
                name=c.name,
            )

        out = replace(cfg, input=apply(cfg.input), output=apply(cfg.output))
        if out != cfg and cfg.name and c.name:
            out = replace(out, name=f"{cfg.name}_{c.name}")
        return out

    def _path(self, f: _File, e: m.Path, env) -> Value:
        parts = [self._interpolate(p, env, e.span) for p in e.parts]
        head = parts[0]
        if len(parts) == 1:
            if head in env:
                return env[head]
            entry = f.defs.get(head)
            if entry is not None and not isinstance(entry[0], (m.AliasDecl, m.GroupDecl)):
                return self._definition(entry[0], entry[1], e.span)
            if entry is not None and isinstance(entry[0], m.GroupDecl):
                self.error(
                    e.span,
                    f"'{head}' is a group; a group is expanded with 'use {head}(...)', it is not a value",
                )
                raise _Fail
            if head in symbols.DTYPE_NAMES:
                return DTypeValue(m.DType(self.table.dtype(head)), e.span)
            if entry is None and head not in symbols.BUILTIN_ALIASES:
                return Word(head, e.span)
        elif head in env:
            self.error(e.span, f"'{head}' is a variable, it has no attribute '{parts[1]}'")
            raise _Fail
        elif head in f.defs and not isinstance(f.defs[head][0], m.AliasDecl):
            self.error(
                e.span,
                f"'{head}' is {_DECL_WORDS[type(f.defs[head][0])]}, it has no attribute '{parts[1]}'",
            )
            raise _Fail
        return self._symbol(f, parts, e.span)

    def _interpolate(self, part: str, env, span: m.Span) -> str:
        if "${" not in part:
            return part
        out, rest = "", part
        while "${" in rest:
            pre, _, tail = rest.partition("${")
            var, _, rest = tail.partition("}")
            v = env.get(var)
            if v is None:
                self.error(
                    span,
                    f"'${{{var}}}' names no loop variable or group parameter here",
                    self._suggest(var, list(env)),
                )
                raise _Fail
            if isinstance(v, Num) and isinstance(v.value, int):
                text = str(v.value)
            elif isinstance(v, Text):
                text = v.value
            elif isinstance(v, Word):
                text = v.text
            else:
                self.error(
                    span,
                    f"cannot put {_describe(v)} into a name; '${{{var}}}' needs a word, a string or an integer",
                )
                raise _Fail
            out += pre + text
        out += rest
        if not out.isidentifier():
            self.error(span, f"'{out}' is not a valid name segment")
            raise _Fail
        return out

    def _symbol(self, f: _File, parts: list[str], span: m.Span) -> Value:
        head = parts[0]
        entry = f.defs.get(head)
        if entry is not None and isinstance(entry[0], m.AliasDecl):
            self.used.add((entry[1], head))
            prefix = entry[0].target.text
        elif head in symbols.BUILTIN_ALIASES:
            prefix = symbols.BUILTIN_ALIASES[head]
        else:
            prefix = head
        if "${" in prefix:
            self.error(
                entry[0].target.span if entry else span,
                f"an alias target cannot hold a ${{...}} hole: '{prefix}'",
            )
            raise _Fail
        full = prefix.split(".") + parts[1:]
        path = ".".join(full)
        try:
            facts = self.table.lookup(path)
        except symbols.UnknownSymbol as exc:
            self.error(span, exc.message, _in_user_terms(exc.suggestion, prefix, head))
            raise _Fail from None
        if facts.kind == "dtype":
            assert facts.dtype is not None
            return DTypeValue(m.DType(facts.dtype), span)
        return Sym(m.Symbol(path, facts.kind, facts.module), span)

    def _definition(self, decl: m.Decl, where: str, span: m.Span) -> Value:
        key = (where, decl.name)
        self.used.add(key)
        df = self.files[where]
        if key in self._resolving:
            chain = " -> ".join(n for _, n in self._resolving[self._resolving.index(key) :] + [key])
            self.error(span, f"'{decl.name}' is defined in terms of itself: {chain}")
            raise _Fail
        # A definition means the same wherever it is used: no group notes.
        self._resolving.append(key)
        trail, self._trail = self._trail, []
        try:
            if isinstance(decl, m.DTypesDecl):
                if key not in self._dtypes:
                    v = self.eval(df, decl.value, {})
                    if isinstance(v, Rec):
                        self._dtypes[key] = DTypeSet((self._dtype_config(v, decl.name),), v.span)
                    else:
                        self._dtypes[key] = self.as_dtypes(v)
                return replace(self._dtypes[key], span=span)
            if isinstance(decl, m.ConstraintDecl):
                if key not in self._constraints:
                    self._constraints[key] = self._constraint(df, decl)
                return DTypeValue(self._constraints[key], span)
            assert isinstance(decl, m.FuseDecl)
            if key not in self._fusers:
                self._fusers[key] = self._fuse(df, decl)
            return FuserValue(self._fusers[key], span)
        finally:
            self._trail = trail
            self._resolving.pop()

    def _constraint(self, f: _File, decl: m.ConstraintDecl) -> m.DType:
        base = self.as_dtype(self.eval(f, decl.dtype, {}), allow_constraints=False)
        values: dict[str, Any] = {}
        spans: dict[str, m.Span] = {}
        failed = False
        for ent in decl.entries:
            key = CONSTRAINT_KEYS.get(str(ent.key))
            if key is None:
                self.error(
                    ent.span,
                    f"unknown constraint {ent.key!r}",
                    self._suggest(str(ent.key), list(CONSTRAINT_KEYS))
                    or f"constraints are: {', '.join(short for _, short in m.CONSTRAINT_FIELDS)}",
                )
                failed = True
                continue
            if key in values:
                self.error(ent.span, f"constraint {ent.key!r} is given twice")
                failed = True
                continue
            try:
                values[key] = self._number(f, ent.value, {})
            except _Fail:
                failed = True
                continue
            spans[key] = ent.value.span
        if failed or self._report(checks.constraint_findings(base.dtype, values, spans)):
            raise _Fail
        return replace(base, name=decl.name, **values)

    def _fuse(self, f: _File, decl: m.FuseDecl) -> m.DefinedFuser:
        for flag in decl.flags:
            if flag not in FUSE_FLAGS:
                self.error(
                    decl.span,
                    f"unknown fuse option '{flag}'",
                    self._suggest(flag, FUSE_FLAGS) or "options are eval_only and same_mode",
                )
                raise _Fail
        names: list[str] = []

        def collect(p: m.Param) -> None:
            if p.name is None:
                for q in p.items:
                    collect(q)
            elif p.name != "_":
                if p.name in names:
                    self.error(p.span, f"parameter '{p.name}' appears twice")
                    raise _Fail
                if not _plain_name(p.name) or keyword.iskeyword(p.name) or p.name == "is_qat":
                    self.error(p.span, f"'{p.name}' cannot be a parameter name")
                    raise _Fail
                names.append(p.name)

        for p in decl.params:
            collect(p)
        if not isinstance(decl.body, m.Call):
            self.error(decl.body.span, "a fuse definition must build a module: Module(args)")
            raise _Fail
        body = self._fuse_expr(f, decl.body, set(names))
        assert isinstance(body, m.FuseCall)
        unused = [n for n in names if not _mentions(body, n)]
        if unused:
            self.diag.warning(
                decl.span,
                f"fuser '{decl.name}' never uses parameter '{unused[0]}'",
                "name it _ if it is meant to be ignored",
            )
        return m.DefinedFuser(
            decl.name,
            decl.params,
            "eval_only" in decl.flags,
            "same_mode" in decl.flags,
            body,
            decl.span,
        )

    def _fuse_expr(self, f: _File, e: m.Expr, params: set[str]) -> m.FuseExpr:
        if isinstance(e, m.Path) and len(e.parts) == 1 and e.parts[0] in params:
            return m.FuseArg(e.parts[0])
        if isinstance(e, m.Call):
            fn = self._symbol(
                f, [self._interpolate(p, {}, e.func.span) for p in e.func.parts], e.func.span
            )
            if not isinstance(fn, Sym) or fn.symbol.kind not in ("module", "class", "function"):
                self.error(
                    e.func.span,
                    f"'{e.func.text}' cannot be called in a fuse definition; it is {_describe(fn)}",
                )
                raise _Fail
            problem = checks.arity_mismatch(self.table.signature(fn.symbol.path), len(e.args))
            if problem:
                self.error(e.span, f"{e.func.text}(...) {problem}")
                raise _Fail
            return m.FuseCall(fn.symbol, tuple(self._fuse_expr(f, a, params) for a in e.args))
        if isinstance(e, m.Path) and len(e.parts) == 1:
            self.error(
                e.span,
                f"'{e.parts[0]}' is not a parameter of this fuser",
                self._suggest(e.parts[0], params),
            )
            raise _Fail
        self.error(
            e.span, "a fuse body may only use its parameters and calls of modules or functions"
        )
        raise _Fail

    def check_definitions(self) -> None:
        """Resolve the dtype sets, constraints and fusers nothing used, so that their errors are reported too."""
        for f in list(self.files.values()):
            for decl in f.spec.decls:
                if not isinstance(decl, (m.DTypesDecl, m.ConstraintDecl, m.FuseDecl)):
                    continue
                if f.defs.get(decl.name, (None,))[0] is not decl:
                    continue  # defined twice: already an error
                key = (f.display, decl.name)
                was_used = key in self.used
                try:
                    self._definition(decl, f.display, decl.span)
                except _Fail:
                    pass
                if not was_used:
                    self.used.discard(key)

    def unused_warnings(self, files: list[_File]) -> None:
        """Warn about definitions in ``files`` that no backend or group of this run used.

        A file without backends is a library: its definitions are there for
        other specs, so they are reported only when every spec beside it was
        part of the run (a full run), never when it is compiled on its own.
        """
        loaded = {f.path.resolve() for f in self.files.values()}
        for f in files:
            is_library = not any(isinstance(d, m.BackendDecl) for d in f.spec.decls)
            if is_library and not all(p.resolve() in loaded for p in f.path.parent.glob("*.bcfg")):
                continue
            for decl in f.spec.decls:
                if isinstance(decl, _DEFINITIONS) and (f.display, decl.name) not in self.used:
                    self.diag.warning(
                        decl.span,
                        f"{_DECL_WORDS[type(decl)].split(' ', 1)[1]} '{decl.name}' is defined but never used",
                        "remove it, or use it in a backend",
                    )


_DEFINITIONS = (m.AliasDecl, m.ConstraintDecl, m.DTypesDecl, m.FuseDecl, m.GroupDecl)
_DECL_WORDS = {
    m.AliasDecl: "an alias",
    m.ConstraintDecl: "a constraint",
    m.DTypesDecl: "a dtype set",
    m.FuseDecl: "a fuser",
    m.GroupDecl: "a group",
}


def _in_user_terms(hint: str | None, prefix: str, head: str) -> str | None:
    """Say a did-you-mean suggestion with the alias the spec used: 'nn.Conv2d', not 'torch.nn.Conv2d'."""
    if hint is None or prefix == head:
        return hint
    mt = re.fullmatch(r"did you mean '([^']*)'\?", hint)
    if mt and (mt.group(1) + ".").startswith(prefix + "."):
        return f"did you mean '{head}{mt.group(1)[len(prefix):]}'?"
    return hint


def _source_text(e: m.Expr) -> str:
    """A short rendering of an argument expression, for notes."""
    if isinstance(e, m.Path):
        return e.text
    if isinstance(e, m.Str):
        return repr(e.value)
    if isinstance(e, (m.Int, m.Float)):
        return str(e.value)
    if isinstance(e, m.ListExpr):
        return "[" + ", ".join(_source_text(x) for x in e.items) + "]"
    if isinstance(e, m.TupleExpr):
        return (
            "("
            + ", ".join(_source_text(x) for x in e.items)
            + ("," if len(e.items) == 1 else "")
            + ")"
        )
    return "..."


def _first_origin(
    first: tuple[_Step, ...], second: tuple[_Step, ...], backend: str
) -> tuple[str, ...]:
    """A note saying how the first of two equal patterns was reached, where that differs from the second."""
    k = 0
    while k < min(len(first), len(second)) and first[k] == second[k]:
        k += 1
    if k < len(first):
        step = first[k]
        what = f"'{step.text}'" if step.kind == "use" else step.text
        return (f"the first comes from {what} at {step.span}, in backend '{backend}'",)
    return ()


def _mentions(e: m.FuseExpr, name: str) -> bool:
    if isinstance(e, m.FuseArg):
        return e.name == name
    return any(_mentions(a, name) for a in e.args)


def _reversed_nested(pattern):
    """The reversed nested tuple form torch keys configs by: (a, b, c) -> (c, (b, a))."""
    if not isinstance(pattern, tuple):
        return pattern
    if len(pattern) == 2:
        return (pattern[1], pattern[0])
    return (pattern[2], (pattern[1], pattern[0]))


@dataclass(frozen=True)
class Result:
    backends: list[m.Backend]
    warnings: list


def resolve_specs(
    root: FsPath,
    spec_paths: list[FsPath],
    allow: tuple[str, ...] = symbols.DEFAULT_ALLOW,
    table: symbols.SymbolTable | None = None,
) -> Result:
    """Resolve the backends declared in ``spec_paths``; raise SpecError on any error.

    Definitions that no backend of this run uses are warned about only in the
    files named in ``spec_paths``: a file that is merely imported is a library.
    ``table`` answers questions about torch's names (see ``Resolver``).
    """
    r = Resolver(root, allow, table)
    files = []
    for p in spec_paths:
        f = r.load(p)
        if f is not None and f not in files:
            files.append(f)
    backends: list[m.Backend] = []
    for f in files:
        backends.extend(r.backends(f))
    r.check_definitions()
    seen: dict[str, m.Backend] = {}
    for b in backends:
        if b.module in seen:
            r.error(
                b.span,
                f"backend '{b.module}' is also declared at {seen[b.module].span}",
                "backend names become module names and must be unique",
            )
        seen[b.module] = b
    if r.diag.error_count == 0:
        r.unused_warnings(files)
    r.diag.raise_if_errors()
    return Result(backends, r.diag.warnings)
