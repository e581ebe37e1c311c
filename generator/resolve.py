"""Resolve and check: syntax model to resolved backends.

Loads each spec with its imports, binds every name (loop variables, group
parameters, ``dtypes``/``constraint``/``fuse`` definitions, aliases, the
installed torch), expands groups and loops in order, applies overrides, and
checks everything a ``BackendConfig`` would otherwise get silently wrong. All
errors of a run are collected and raised together as one ``SpecError``.
"""

from __future__ import annotations

import hashlib
import keyword
import math
from dataclasses import dataclass, replace
from pathlib import Path as FsPath
from typing import Any, Union

from . import model as m
from . import symbols
from .diagnostics import Collector, SpecError
from .parse import parse_text, read_source

OBSERVATIONS = {
    "different_observer": "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT",
    "shared_observer": "OUTPUT_SHARE_OBSERVER_WITH_INPUT",
    "not_observed": "INPUT_OUTPUT_NOT_OBSERVED",
}
DEFAULT_OBSERVATION = "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"
for _full in list(OBSERVATIONS.values()):
    OBSERVATIONS[_full] = _full

CONSTRAINT_KEYS = {
    "quant_min": "quant_min_lower_bound",
    "quant_max": "quant_max_upper_bound",
    "scale_min": "scale_min_lower_bound",
    "scale_max": "scale_max_upper_bound",
    "scale": "scale_exact_match",
    "zero_point": "zero_point_exact_match",
}
for _full in list(CONSTRAINT_KEYS.values()):
    CONSTRAINT_KEYS[_full] = _full

DTYPE_CONFIG_KEYS = ("input", "output", "weight", "bias", "dynamic")
FUSE_FLAGS = ("eval_only", "same_mode")
MAX_DEPTH = 64


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
    obj: Any
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


def _describe(v: Value) -> str:
    if isinstance(v, Sym):
        return {
            "module": "a module class",
            "class": "a class",
            "function": "a function",
            "op": "an operator",
            "dtype": "a dtype",
            "namespace": "a module",
        }.get(v.symbol.kind, "a value")
    return {
        Word: "a name",
        Num: "a number",
        Text: "a string",
        Rec: "a record",
        DTypeSet: "a dtype set",
        DTypeValue: "a dtype",
        FuserValue: "a fuser",
        Getter: "a pattern element",
    }.get(type(v), "a list" if isinstance(v, Seq) and not v.is_tuple else "a tuple")


@dataclass
class _File:
    display: str
    spec: m.Spec
    digest: str
    defs: dict[str, tuple[m.Decl, str]]  # name -> (decl, defining file), with imports
    imports: list[str]  # import closure, displays


class Resolver:
    """Resolves specs under ``root``; ``allow`` lists the importable top-level modules."""

    def __init__(self, root: FsPath, allow: tuple[str, ...] = symbols.DEFAULT_ALLOW):
        self.root = root
        self.allow = tuple(allow)
        self.diag = Collector()
        self.files: dict[str, _File] = {}
        self._loading: list[str] = []
        self._fusers: dict[tuple[str, str], m.DefinedFuser] = {}
        self._constraints: dict[tuple[str, str], m.DType] = {}
        self._dtypes: dict[tuple[str, str], DTypeSet] = {}
        self._resolving: set[tuple[str, str]] = set()
        self.used: set[tuple[str, str]] = set()
        self.objects: dict[str, Any] = {}

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
            self.diag.error(span, f"import cycle: {cycle}", "remove one of these imports")
            return None
        try:
            text = read_source(path, display)
            spec = parse_text(text, display)
        except SpecError as exc:
            self.diag.diagnostics.extend(exc.diagnostics)
            return None
        self._loading.append(display)
        try:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            f = _File(display, spec, digest, {}, [])
            for decl in spec.decls:
                if isinstance(decl, m.ImportDecl):
                    target = path.parent / decl.path
                    if not target.is_file():
                        self.diag.error(
                            decl.span,
                            f"cannot import '{decl.path}': no such file",
                            f"imports are relative to {self.display(path.parent) or '.'}/",
                        )
                        continue
                    sub = self.load(target, decl.span)
                    if sub is None:
                        continue
                    for name, (d, where) in sub.defs.items():
                        self._define(f, name, d, where)
                    for imp in [sub.display, *sub.imports]:
                        if imp not in f.imports:
                            f.imports.append(imp)
            for decl in spec.decls:
                if isinstance(decl, (m.AliasDecl, m.ConstraintDecl, m.DTypesDecl, m.FuseDecl, m.GroupDecl)):
                    self._define(f, decl.name, decl, display)
            self.files[display] = f
            return f
        finally:
            self._loading.pop()

    def _define(self, f: _File, name: str, decl: m.Decl, where: str) -> None:
        prev = f.defs.get(name)
        if prev is not None and prev[0] is not decl:
            self.diag.error(
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
        for decl in f.spec.decls:
            if isinstance(decl, m.BackendDecl):
                backend = self._backend(f, decl)
                if backend is not None:
                    out.append(backend)
        return out

    def _backend(self, f: _File, decl: m.BackendDecl) -> m.Backend | None:
        if not decl.name.isidentifier() or keyword.iskeyword(decl.name):
            self.diag.error(
                decl.span,
                f"backend name '{decl.name}' is not a valid Python module name",
                "use letters, digits and underscores",
            )
            return None
        configs: list[m.PatternConfig] = []
        index: dict[Any, int] = {}
        errors_before = self.diag.error_count
        self._items(f, decl.body, {}, configs, index, 0)
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

    def _items(self, f, items, env, configs, index, depth) -> None:
        if depth > MAX_DEPTH:
            self.diag.error(items[0].span if items else None, "groups nest too deeply (a group uses itself?)")
            raise _Fail
        for item in items:
            try:
                if isinstance(item, m.PatternItem):
                    self._pattern_item(f, item, env, configs, index)
                elif isinstance(item, m.UseItem):
                    self._use(f, item, env, configs, index, depth)
                else:
                    self._for(f, item, env, configs, index, depth)
            except _Fail:
                if depth:
                    raise
                continue

    def _use(self, f, item: m.UseItem, env, configs, index, depth) -> None:
        entry = f.defs.get(item.group)
        if entry is None or not isinstance(entry[0], m.GroupDecl):
            hint = self._suggest(item.group, [n for n, (d, _) in f.defs.items() if isinstance(d, m.GroupDecl)])
            self.diag.error(item.span, f"unknown group '{item.group}'", hint)
            raise _Fail
        group, where = entry
        self.used.add((where, group.name))
        if len(item.args) != len(group.params):
            self.diag.error(
                item.span,
                f"group '{group.name}' takes {len(group.params)} argument(s), got {len(item.args)}",
                f"it is defined at {group.span} as {group.name}({', '.join(group.params)})",
            )
            raise _Fail
        args = {p: self.eval(f, a, env) for p, a in zip(group.params, item.args)}
        self._items(self.files[where], group.body, args, configs, index, depth + 1)

    def _for(self, f, item: m.ForItem, env, configs, index, depth) -> None:
        seq = self.eval(f, item.iterable, env)
        if not isinstance(seq, Seq):
            self.diag.error(item.iterable.span, f"a loop needs a list, got {_describe(seq)}")
            raise _Fail
        for value in seq.items:
            inner = dict(env)
            if item.destructure:
                if not isinstance(value, Seq) or len(value.items) != len(item.targets):
                    self.diag.error(
                        value.span,
                        f"cannot unpack {_describe(value)} into ({', '.join(item.targets)})",
                        f"each element must be a tuple of {len(item.targets)}",
                    )
                    raise _Fail
                inner.update(zip(item.targets, value.items))
            else:
                inner[item.targets[0]] = value
            self._items(f, item.body, inner, configs, index, depth)

    # --------------------------------------------------------------- patterns

    def _pattern_item(self, f, item: m.PatternItem, env, configs, index) -> None:
        head = self.eval(f, item.head, env)
        pattern = self.as_pattern(head, item.complex, top=True)
        fields: dict[str, Any] = {}
        seen: dict[str, m.Field] = {}
        for fld in item.fields:
            if fld.name in seen:
                self.diag.error(fld.span, f"field '{fld.name}' is set twice", f"first set at {seen[fld.name].span}")
                continue
            seen[fld.name] = fld
            try:
                fields[fld.name] = self._field(f, fld, env, pattern, item.complex)
            except _Fail:
                continue
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
        key = self._key(pattern, item.complex)
        if key in index:
            pos = index[key]
            if not item.override:
                self.diag.error(
                    item.span,
                    f"pattern {self.pattern_text(pattern)} is already defined at {configs[pos].span}",
                    "mark this one 'override pattern' if it is meant to replace that one",
                )
                raise _Fail
            configs[pos] = config
        else:
            if item.override:
                self.diag.error(
                    item.span,
                    f"'override pattern {self.pattern_text(pattern)}' replaces nothing: the pattern is not defined before it",
                    "remove 'override'",
                )
                raise _Fail
            index[key] = len(configs)
            configs.append(config)

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
                self.diag.error(getter.span, f"root_node must pick an element of the pattern, like pattern[1]; got {_describe(getter)}")
                raise _Fail
            self._check_getter(getter, pattern, is_complex)
            return m.NodeGetter(getter.path)
        if name == "extra_inputs":
            seq = self.eval(f, fld.value, env)
            if not isinstance(seq, Seq) or not all(isinstance(g, Getter) for g in seq.items):
                self.diag.error(seq.span, "extra_inputs must be a list of pattern elements, like [pattern[2]]")
                raise _Fail
            for g in seq.items:
                self._check_getter(g, pattern, is_complex)
            return m.ExtraInputsGetter(tuple(g.path for g in seq.items))
        if name == "num_tensor_args":
            rec = self.eval(f, fld.value, env)
            if not isinstance(rec, Rec) or not all(isinstance(k, int) for k, _, _ in rec.entries):
                self.diag.error(rec.span, "num_tensor_args must map argument counts to observation types, like {0: different_observer}")
                raise _Fail
            return tuple((k, self.as_observation(v)) for k, v, _ in rec.entries)
        if name == "input_index":
            rec = self.eval(f, fld.value, env)
            if not isinstance(rec, Rec):
                self.diag.error(rec.span, "input_index must map input names to argument positions, like {weight: 1, bias: 2}")
                raise _Fail
            out = []
            for k, v, span in rec.entries:
                if not isinstance(v, Num) or not isinstance(v.value, int) or v.value < 0:
                    self.diag.error(v.span, f"the position of '{k}' must be a non-negative integer")
                    raise _Fail
                out.append((str(k), v.value))
            return tuple(out)
        known = ["observation", "dtypes", "root", "qat", "reference", "fused", "fuser", "root_node", "extra_inputs", "num_tensor_args", "input_index"]
        self.diag.error(fld.span, f"unknown field '{name}'", self._suggest(name, known) or f"fields are: {', '.join(known)}")
        raise _Fail

    def _check_getter(self, g: Getter, pattern, is_complex: bool) -> None:
        node = pattern if is_complex else _reversed_nested(pattern)
        for i in g.path:
            if not isinstance(node, tuple) or i >= len(node):
                self.diag.error(g.span, f"pattern[{']['.join(map(str, g.path))}] is not an element of the pattern {self.pattern_text(pattern)}")
                raise _Fail
            node = node[i]

    def _key(self, pattern, is_complex: bool):
        def obj_key(p):
            if isinstance(p, tuple):
                return tuple(obj_key(x) for x in p)
            if isinstance(p, m.Symbol):
                return ("obj", id(self.objects[p.path]))
            return ("lit", type(p).__name__, p)

        return obj_key(pattern if is_complex else _reversed_nested(pattern))

    def pattern_text(self, p) -> str:
        if isinstance(p, tuple):
            return "(" + ", ".join(self.pattern_text(x) for x in p) + ")"
        if isinstance(p, m.Symbol):
            return p.path
        return repr(p) if isinstance(p, str) else str(p)

    # ------------------------------------------------------------ coercions

    def as_pattern(self, v: Value, is_complex: bool, top: bool = False):
        if isinstance(v, Sym):
            if v.symbol.kind in ("module", "class", "function", "op"):
                return v.symbol
            self.diag.error(v.span, f"{_describe(v)} cannot be a pattern", "a pattern is a module class, a function, an operator or a method name")
            raise _Fail
        if isinstance(v, Text):
            return v.value
        if isinstance(v, Num) and isinstance(v.value, int) and not top:
            return v.value
        if isinstance(v, Seq) and v.is_tuple:
            if not is_complex:
                if not 2 <= len(v.items) <= 3:
                    self.diag.error(v.span, f"a sequential pattern has 2 or 3 elements, this one has {len(v.items)}", "write longer or branching patterns as 'complex' patterns")
                    raise _Fail
                for x in v.items:
                    if isinstance(x, Seq):
                        self.diag.error(x.span, "a sequential pattern cannot nest tuples", "write nested patterns as 'pattern complex (...)' in reversed nested form")
                        raise _Fail
            elif len(v.items) < 2:
                self.diag.error(v.span, "a complex pattern tuple needs an operator and at least one argument")
                raise _Fail
            return tuple(self.as_pattern(x, is_complex) for x in v.items)
        if isinstance(v, Word):
            self._unknown(v)
        self.diag.error(v.span, f"{_describe(v)} cannot be a pattern", "a pattern is a module class, a function, an operator, a method name or a tuple of them")
        raise _Fail

    def as_module(self, v: Value, role: str) -> m.Symbol:
        if isinstance(v, Sym) and v.symbol.kind == "module":
            return v.symbol
        if isinstance(v, Word):
            self._unknown(v)
        self.diag.error(v.span, f"{role} must be an nn.Module class, got {_describe(v)}" + (f" '{v.symbol.path}'" if isinstance(v, Sym) else ""))
        raise _Fail

    def as_observation(self, v: Value) -> str:
        text = v.text if isinstance(v, Word) else None
        if text in OBSERVATIONS:
            return OBSERVATIONS[text]
        self.diag.error(
            v.span,
            f"unknown observation type {text!r}" if text else f"an observation type must be a name, got {_describe(v)}",
            self._suggest(text or "", list(OBSERVATIONS)) or "use different_observer, shared_observer or not_observed",
        )
        raise _Fail

    def as_dtypes(self, v: Value) -> DTypeSet:
        if isinstance(v, DTypeSet):
            return v
        if isinstance(v, Rec):
            return DTypeSet((self._dtype_config(v, None),), v.span)
        if isinstance(v, Seq) and not v.is_tuple:
            out: list[m.DTypeConfig] = []
            for x in v.items:
                out.extend(self.as_dtypes(x).configs)
            return DTypeSet(tuple(out), v.span)
        if isinstance(v, Word):
            self._unknown(v)
        self.diag.error(v.span, f"expected a dtype set, got {_describe(v)}", "write {input: quint8, output: quint8}, a dtypes name or a list of them")
        raise _Fail

    def as_dtype(self, v: Value, allow_constraints: bool) -> m.DType:
        if isinstance(v, DTypeValue) and (allow_constraints or not v.dtype.constrained):
            return v.dtype
        if isinstance(v, Word):
            self._unknown(v, "dtype")
        what = "a dtype or constraint" if allow_constraints else "a plain dtype (bias takes no constraints)"
        self.diag.error(v.span, f"expected {what}, got {_describe(v)}", "dtypes are quint8, qint8, float, float16, ...")
        raise _Fail

    def _dtype_config(self, rec: Rec, name: str | None) -> m.DTypeConfig:
        values: dict[str, Any] = {}
        for key, val, span in rec.entries:
            if key not in DTYPE_CONFIG_KEYS:
                self.diag.error(span, f"unknown dtype config key {key!r}", self._suggest(str(key), list(DTYPE_CONFIG_KEYS)) or f"keys are: {', '.join(DTYPE_CONFIG_KEYS)}")
                raise _Fail
            if key in values:
                self.diag.error(span, f"{key!r} is given twice")
                raise _Fail
            if key == "dynamic":
                if not (isinstance(val, Word) and val.text in ("true", "false")):
                    self.diag.error(val.span, "dynamic must be true or false")
                    raise _Fail
                values[key] = val.text == "true"
            elif key == "bias":
                values[key] = self.as_dtype(val, allow_constraints=False).dtype
            else:
                values[key] = self.as_dtype(val, allow_constraints=True)
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
            self._unknown(v)
        self.diag.error(v.span, f"a fuser must be sequential(Module), a fuse definition or a function, got {_describe(v)}")
        raise _Fail

    def _unknown(self, w: Word, kind: str = "symbol") -> None:
        self.diag.error(w.span, f"unknown {kind} '{w.text}'", self._word_hint(w.text))
        raise _Fail

    def _word_hint(self, text: str) -> str | None:
        pool = list(symbols.BUILTIN_ALIASES) + list(symbols.DTYPE_NAMES) + list(OBSERVATIONS)
        for f in self.files.values():
            pool.extend(f.defs)
        return self._suggest(text, pool)

    @staticmethod
    def _suggest(text: str, pool) -> str | None:
        import difflib

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
            return Num(e.value, e.span)
        if isinstance(e, m.Neg):
            v = self._number(f, e.operand, env)
            return Num(-v, e.span)
        if isinstance(e, m.BinOp):
            a, b = self._number(f, e.left, env), self._number(f, e.right, env)
            try:
                r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b, "**": lambda: a**b}[e.op]()
            except (ZeroDivisionError, OverflowError) as exc:
                self.diag.error(e.span, f"cannot compute this number: {exc}")
                raise _Fail from None
            if isinstance(r, complex) or (isinstance(r, float) and not math.isfinite(r)):
                self.diag.error(e.span, "this number is not finite and real")
                raise _Fail
            return Num(r, e.span)
        if isinstance(e, (m.TupleExpr, m.ListExpr)):
            items = tuple(self.eval(f, x, env) for x in e.items)
            return Seq(items, isinstance(e, m.TupleExpr), e.span)
        if isinstance(e, m.Record):
            keys = set()
            entries = []
            for ent in e.entries:
                if ent.key in keys:
                    self.diag.error(ent.span, f"key {ent.key!r} appears twice")
                    raise _Fail
                keys.add(ent.key)
                entries.append((ent.key, self.eval(f, ent.value, env), ent.span))
            return Rec(tuple(entries), e.span)
        if isinstance(e, m.PatternRef):
            return Getter((), e.span)
        if isinstance(e, m.Index):
            target = self.eval(f, e.target, env)
            idx = self.eval(f, e.index, env)
            if not isinstance(target, Getter):
                self.diag.error(e.span, "only 'pattern' can be indexed, as in pattern[1]")
                raise _Fail
            if not isinstance(idx, Num) or not isinstance(idx.value, int) or idx.value < 0:
                self.diag.error(idx.span, "a pattern index must be a non-negative integer")
                raise _Fail
            return Getter(target.path + (idx.value,), e.span)
        if isinstance(e, m.Call):
            return self._call(f, e, env)
        raise AssertionError(f"unhandled expression {type(e).__name__}")

    def _number(self, f, e, env) -> int | float:
        v = self.eval(f, e, env)
        if not isinstance(v, Num):
            self.diag.error(v.span, f"expected a number, got {_describe(v)}")
            raise _Fail
        return v.value

    def _call(self, f, e: m.Call, env) -> Value:
        fn = e.func.text
        if fn == "sequential":
            if len(e.args) != 1:
                self.diag.error(e.span, "sequential(...) takes one fused module class")
                raise _Fail
            return FuserValue(m.SequentialFuser(self.as_module(self.eval(f, e.args[0], env), "the fused module of sequential()")), e.span)
        if fn == "constrain":
            if len(e.args) != 2:
                self.diag.error(e.span, "constrain(dtypes, constraint) takes two arguments")
                raise _Fail
            ds = self.as_dtypes(self.eval(f, e.args[0], env))
            c = self.as_dtype(self.eval(f, e.args[1], env), allow_constraints=True)
            return DTypeSet(tuple(self._constrain(cfg, c, e.span) for cfg in ds.configs), e.span)
        self.diag.error(
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
                self.diag.error(span, "scale bounds cannot be combined with fixed quantization parameters", "constrain a dtype set without scale_min/scale_max")
                raise _Fail
            return replace(
                d,
                quant_min_lower_bound=c.quant_min_lower_bound,
                quant_max_upper_bound=c.quant_max_upper_bound,
                scale_exact_match=c.scale_exact_match,
                zero_point_exact_match=c.zero_point_exact_match,
            )

        return replace(cfg, input=apply(cfg.input), output=apply(cfg.output))

    def _path(self, f: _File, e: m.Path, env) -> Value:
        parts = [self._interpolate(p, env, e.span) for p in e.parts]
        head = parts[0]
        if len(parts) == 1:
            if head in env:
                return env[head]
            entry = f.defs.get(head)
            if entry is not None and not isinstance(entry[0], (m.AliasDecl, m.GroupDecl)):
                return self._definition(entry[0], entry[1], e.span)
            if head in symbols.DTYPE_NAMES:
                return DTypeValue(m.DType(self._dtype_name(head)), e.span)
            if entry is None and head not in symbols.BUILTIN_ALIASES:
                return Word(head, e.span)
        elif head in env:
            self.diag.error(e.span, f"'{head}' is a variable, it has no attribute '{parts[1]}'")
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
                self.diag.error(span, f"'${{{var}}}' names no loop variable or group parameter here")
                raise _Fail
            if isinstance(v, Num) and isinstance(v.value, int):
                text = str(v.value)
            elif isinstance(v, Text):
                text = v.value
            elif isinstance(v, Word):
                text = v.text
            else:
                self.diag.error(span, f"cannot put {_describe(v)} into a name; '${{{var}}}' needs a word, a string or an integer")
                raise _Fail
            out += pre + text
        out += rest
        if not out.isidentifier():
            self.diag.error(span, f"'{out}' is not a valid name segment")
            raise _Fail
        return out

    def _dtype_name(self, name: str) -> str:
        import torch

        dt = getattr(torch, name)
        return str(dt).removeprefix("torch.")

    def _symbol(self, f: _File, parts: list[str], span: m.Span) -> Value:
        head = parts[0]
        entry = f.defs.get(head)
        if entry is not None and isinstance(entry[0], m.AliasDecl):
            self.used.add((entry[1], head))
            full = entry[0].target.text.split(".") + parts[1:]
        elif head in symbols.BUILTIN_ALIASES:
            full = symbols.BUILTIN_ALIASES[head].split(".") + parts[1:]
        else:
            full = parts
        path = ".".join(full)
        try:
            found = symbols.resolve(path, self.allow)
        except symbols.UnknownSymbol as exc:
            self.diag.error(span, exc.message, exc.suggestion)
            raise _Fail from None
        kind = symbols.kind_of(found.obj)
        self.objects[path] = found.obj
        if kind == "dtype":
            return DTypeValue(m.DType(str(found.obj).removeprefix("torch.")), span)
        return Sym(m.Symbol(path, kind, found.module), found.obj, span)

    def _definition(self, decl: m.Decl, where: str, span: m.Span) -> Value:
        key = (where, decl.name)
        self.used.add(key)
        df = self.files[where]
        if key in self._resolving:
            self.diag.error(span, f"'{decl.name}' is defined in terms of itself")
            raise _Fail
        self._resolving.add(key)
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
            self._resolving.discard(key)

    def _constraint(self, f: _File, decl: m.ConstraintDecl) -> m.DType:
        base = self.as_dtype(self.eval(f, decl.dtype, {}), allow_constraints=False)
        values: dict[str, Any] = {}
        for ent in decl.entries:
            key = CONSTRAINT_KEYS.get(str(ent.key))
            if key is None:
                self.diag.error(ent.span, f"unknown constraint {ent.key!r}", self._suggest(str(ent.key), list(CONSTRAINT_KEYS)) or f"constraints are: {', '.join(list(CONSTRAINT_KEYS)[:6])}")
                raise _Fail
            if key in values:
                self.diag.error(ent.span, f"constraint {ent.key!r} is given twice")
                raise _Fail
            values[key] = self._number(f, ent.value, {})
        return replace(base, **values)

    def _fuse(self, f: _File, decl: m.FuseDecl) -> m.DefinedFuser:
        for flag in decl.flags:
            if flag not in FUSE_FLAGS:
                self.diag.error(decl.span, f"unknown fuse option '{flag}'", self._suggest(flag, FUSE_FLAGS) or "options are eval_only and same_mode")
                raise _Fail
        names: list[str] = []

        def collect(p: m.Param) -> None:
            if p.name is None:
                for q in p.items:
                    collect(q)
            elif p.name != "_":
                if p.name in names:
                    self.diag.error(p.span, f"parameter '{p.name}' appears twice")
                    raise _Fail
                if keyword.iskeyword(p.name) or p.name == "is_qat":
                    self.diag.error(p.span, f"'{p.name}' cannot be a parameter name")
                    raise _Fail
                names.append(p.name)

        for p in decl.params:
            collect(p)
        if not isinstance(decl.body, m.Call):
            self.diag.error(decl.body.span, "a fuse definition must build a module: Module(args)")
            raise _Fail
        body = self._fuse_expr(f, decl.body, set(names))
        assert isinstance(body, m.FuseCall)
        return m.DefinedFuser(decl.name, decl.params, "eval_only" in decl.flags, "same_mode" in decl.flags, body, decl.span)

    def _fuse_expr(self, f: _File, e: m.Expr, params: set[str]) -> m.FuseExpr:
        if isinstance(e, m.Path) and len(e.parts) == 1 and e.parts[0] in params:
            return m.FuseArg(e.parts[0])
        if isinstance(e, m.Call):
            fn = self._symbol(f, list(e.func.parts), e.func.span)
            if not isinstance(fn, Sym) or fn.symbol.kind not in ("module", "class", "function"):
                self.diag.error(e.func.span, f"'{e.func.text}' cannot be called in a fuse definition")
                raise _Fail
            return m.FuseCall(fn.symbol, tuple(self._fuse_expr(f, a, params) for a in e.args))
        self.diag.error(e.span, "a fuse body may only use its parameters and calls of modules or functions")
        raise _Fail

    def unused_warnings(self, files: list[_File]) -> None:
        """Warn about definitions in ``files`` that no backend or group used."""
        for f in files:
            for decl in f.spec.decls:
                if isinstance(decl, (m.ConstraintDecl, m.DTypesDecl, m.FuseDecl, m.GroupDecl, m.AliasDecl)):
                    if (f.display, decl.name) not in self.used:
                        self.diag.warning(decl.span, f"'{decl.name}' is defined but never used")


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


def resolve_specs(root: FsPath, spec_paths: list[FsPath], allow: tuple[str, ...] = symbols.DEFAULT_ALLOW) -> Result:
    """Resolve the backends declared in ``spec_paths``; raise SpecError on any error."""
    r = Resolver(root, allow)
    files = []
    for p in spec_paths:
        f = r.load(p)
        if f is not None:
            files.append(f)
    backends: list[m.Backend] = []
    for f in files:
        backends.extend(r.backends(f))
    seen: dict[str, m.Backend] = {}
    for b in backends:
        if b.module in seen:
            r.diag.error(b.span, f"backend '{b.module}' is also declared at {seen[b.module].span}", "backend names become module names and must be unique")
        seen[b.module] = b
    if r.diag.error_count == 0:
        r.unused_warnings(list(r.files.values()))
    r.diag.raise_if_errors()
    return Result(backends, r.diag.warnings)
