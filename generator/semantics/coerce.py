"""Types for values: a pattern, a dtype set, a module class, a fuser, each field of a pattern.

``Evaluator.eval`` computes untyped values; the field or argument they appear
in says what they must be, and this module makes them that or says, in the
language's terms, why not ("a root module must be an nn.Module class, got a
function 'torch.nn.functional.relu'"). One coercion per ``FieldKind`` of the
vocabulary's field table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..lang.vocabulary import (
    BUILTIN_ALIASES,
    DTYPE_KEY_WORDS,
    DTYPE_NAMES,
    OBSERVATIONS,
    FieldKind,
    FieldSpec,
    spell,
)
from ..sources import Span
from . import model as m
from .checks import pattern_text
from .context import Ctx, Fail
from .facts import CACHED_TOPS, UnknownSymbol, exported_op, traced_through
from .load import Program
from .pt2e.values import KeyValues
from .values import (
    DTypeSet,
    DTypeValue,
    FuserValue,
    Getter,
    Num,
    Rec,
    Seq,
    Sym,
    Text,
    Value,
    Word,
    describe,
)

# Kinds of symbol that can be pattern elements.
_PATTERN_KINDS = (m.SymbolKind.MODULE, m.SymbolKind.CLASS, m.SymbolKind.FUNCTION, m.SymbolKind.OP)


class Coercions(KeyValues):
    """Gives evaluated values the types their place asks for."""

    def __init__(self, ctx: Ctx, program: Program):
        self.ctx = ctx
        self.program = program

    # ----------------------------------------------------------------- fields

    def field(self, spec: FieldSpec, v: Value, pattern: m.PatternValue, is_complex: bool) -> Any:
        """The value of pattern field ``spec``, from its evaluated expression."""
        return self._FIELD[spec.kind](self, spec, v, pattern, is_complex)

    def _observation_field(self, spec: FieldSpec, v: Value, *_: Any) -> str:
        return self.as_observation(v)

    def _dtypes_field(self, spec: FieldSpec, v: Value, *_: Any) -> tuple[m.DTypeConfig, ...]:
        return self.as_dtypes(v).configs

    def _module_field(self, spec: FieldSpec, v: Value, *_: Any) -> m.Symbol:
        return self.as_module(v, f"a {spec.word} module")

    def _fuser_field(self, spec: FieldSpec, v: Value, *_: Any) -> m.Fuser:
        return self.as_fuser(v)

    def _node_getter_field(
        self, spec: FieldSpec, getter: Value, pattern: m.PatternValue, is_complex: bool
    ) -> m.NodeGetter:
        if not isinstance(getter, Getter):
            raise self.ctx.fail(
                getter.span,
                f"root_node must pick an element of the pattern, like pattern[1]; got {describe(getter)}",
            )
        self._check_getter(getter, pattern, is_complex)
        return m.NodeGetter(getter.path)

    def _inputs_getter_field(
        self, spec: FieldSpec, seq: Value, pattern: m.PatternValue, is_complex: bool
    ) -> m.ExtraInputsGetter:
        if not isinstance(seq, Seq) or not all(isinstance(g, Getter) for g in seq.items):
            raise self.ctx.fail(
                seq.span, "extra_inputs must be a list of pattern elements, like [pattern[2]]"
            )
        paths = []
        for g in seq.items:
            assert isinstance(g, Getter)
            self._check_getter(g, pattern, is_complex)
            paths.append(g.path)
        return m.ExtraInputsGetter(tuple(paths))

    def _num_tensor_args_field(
        self, spec: FieldSpec, rec: Value, *_: Any
    ) -> tuple[tuple[int, str], ...]:
        if not isinstance(rec, Rec) or not all(isinstance(k, int) for k, _, _ in rec.entries):
            raise self.ctx.fail(
                rec.span,
                "num_tensor_args must map argument counts to observation types, like {0: different_observer}",
            )
        return tuple((int(k), self.as_observation(v)) for k, v, _ in rec.entries)

    def _input_index_field(
        self, spec: FieldSpec, rec: Value, *_: Any
    ) -> tuple[tuple[str, int], ...]:
        if not isinstance(rec, Rec):
            raise self.ctx.fail(
                rec.span,
                "input_index must map input names to argument positions, like {weight: 1, bias: 2}",
            )
        out = []
        for k, v, span in rec.entries:
            if not isinstance(k, str) or not k.isidentifier():
                raise self.ctx.fail(
                    span,
                    f"{k!r} is not an input name",
                    "input names are like weight, bias, input",
                )
            if not isinstance(v, Num) or not isinstance(v.value, int) or v.value < 0:
                raise self.ctx.fail(v.span, f"the position of '{k}' must be a non-negative integer")
            out.append((k, v.value))
        return tuple(out)

    _FIELD: ClassVar[dict[FieldKind, Callable[..., Any]]] = {
        FieldKind.OBSERVATION: _observation_field,
        FieldKind.DTYPES: _dtypes_field,
        FieldKind.MODULE: _module_field,
        FieldKind.FUSER: _fuser_field,
        FieldKind.NODE_GETTER: _node_getter_field,
        FieldKind.INPUTS_GETTER: _inputs_getter_field,
        FieldKind.NUM_TENSOR_ARGS: _num_tensor_args_field,
        FieldKind.INPUT_INDEX: _input_index_field,
        FieldKind.PT2E: KeyValues.pt2e_field,
    }

    def as_pattern(self, v: Value, is_complex: bool, op: bool = True) -> m.PatternValue:
        """A pattern: ``op`` is True where the element is an operator (not an argument)."""
        if isinstance(v, Sym):
            if v.symbol.kind == m.SymbolKind.FUNCTION:
                return self._traced_op(v.symbol)
            if v.symbol.kind in _PATTERN_KINDS:
                return v.symbol
            raise self.ctx.fail(
                v.span,
                f"{describe(v)} cannot be a pattern",
                "a pattern is a module class, a function, an operator or a method name",
            )
        if isinstance(v, Text):
            if not v.value.isidentifier():
                raise self.ctx.fail(
                    v.span,
                    f"{v.value!r} is not a method name",
                    'a string in a pattern names a Tensor method, like "relu" or "view"',
                )
            return v.value
        if isinstance(v, Num) and isinstance(v.value, int) and is_complex and not op:
            return v.value
        if isinstance(v, Num):
            where = (
                "an argument of a complex pattern"
                if is_complex
                else "an argument in a complex pattern"
            )
            raise self.ctx.fail(
                v.span,
                f"{describe(v)} cannot be a pattern element here; an integer may only be {where}",
                "like pattern complex (operator.getitem, aten.max_pool2d_with_indices.default, 0)",
            )
        if isinstance(v, Seq) and v.is_tuple:
            self._check_tuple_pattern(v, is_complex)
            return tuple(self.as_pattern(x, is_complex, op=(i == 0)) for i, x in enumerate(v.items))
        if isinstance(v, Word):
            raise self._unknown(v)
        raise self.ctx.fail(
            v.span,
            f"{describe(v)} cannot be a pattern",
            "a pattern is a module class, a function, an operator, a method name or a tuple of them",
        )

    def _traced_op(self, sym: m.Symbol) -> m.Symbol:
        """The pattern atom for function ``sym``: the op FX records for it.

        A ``torch.library`` op's Python function (``npukit.fancy_act``, a
        ``custom_op``) is traced as its overload, ``torch.ops.npukit.fancy_act.default``:
        a pattern keyed by the function would never match. Its module stays the
        function's, so that the generated module imports it (registering the op).
        Only a project's or a package's function can be one; torch's are never looked at
        (their facts come from the cache, without importing torch). A plain Python function
        FX traces through is marked ``traced`` (a warning for an FX backend; the matrix).
        """
        if sym.path.partition(".")[0] in CACHED_TOPS:
            return sym
        op = exported_op(sym.path, self.ctx.facts.allow)
        if op is None:
            if traced_through(sym.path, self.ctx.facts.allow):
                return m.Symbol(sym.path, sym.kind, sym.module, traced=True)
            return sym
        self.ctx.facts.lookup(op)  # registered: the function's module is imported
        return m.Symbol(op, m.SymbolKind.OP, sym.module)

    def _check_tuple_pattern(self, v: Seq, is_complex: bool) -> None:
        """A sequential pattern has 2-3 flat elements; a complex tuple an operator and arguments."""
        if not is_complex:
            if not 2 <= len(v.items) <= 4:
                raise self.ctx.fail(
                    v.span,
                    f"a sequential pattern has 2 to 4 elements, this one has {len(v.items)}",
                    "write longer or branching patterns as 'complex' patterns",
                )
            for x in v.items:
                if isinstance(x, Seq):
                    raise self.ctx.fail(
                        x.span,
                        "a sequential pattern cannot nest tuples",
                        "write nested patterns as 'pattern complex (...)' in reversed nested form",
                    )
        else:
            if len(v.items) < 2:
                raise self.ctx.fail(
                    v.span,
                    "a complex pattern tuple needs an operator and at least one argument",
                    "write (op, arg, ...); a lone operator needs no tuple",
                )
            if isinstance(v.items[0], Seq):
                raise self.ctx.fail(
                    v.items[0].span,
                    "the first element of a complex pattern tuple is its operator, not a tuple",
                    "write (op, (inner_op, ...), ...)",
                )

    def as_module(self, v: Value, role: str) -> m.Symbol:
        if isinstance(v, Sym) and v.symbol.kind == "module":
            return v.symbol
        if isinstance(v, Word):
            raise self._unknown(v)
        hint = None
        if isinstance(v, Sym) and v.symbol.kind == "class":
            hint = f"{v.symbol.path} is not a subclass of torch.nn.Module"
        elif isinstance(v, Sym) and v.symbol.kind == "function":
            hint = "name the module class, like nn.ReLU rather than F.relu"
        raise self.ctx.fail(v.span, f"{role} must be an nn.Module class, got {describe(v)}", hint)

    def as_observation(self, v: Value) -> str:
        text = v.text if isinstance(v, Word) else None
        if text in OBSERVATIONS:
            return OBSERVATIONS[text]
        raise self.ctx.fail(
            v.span,
            (
                f"unknown observation type {text!r}"
                if text
                else f"an observation type must be a name, got {describe(v)}"
            ),
            self.ctx.suggest(text or "", list(OBSERVATIONS))
            or "use different_observer, shared_observer or not_observed",
        )

    def as_dtypes(self, v: Value) -> DTypeSet:
        if isinstance(v, DTypeSet):
            return v
        if isinstance(v, Rec):
            return DTypeSet((self.dtype_config(v, None),), v.span)
        if isinstance(v, Seq) and not v.is_tuple:
            out: list[m.DTypeConfig] = []
            failed = False
            for x in v.items:
                try:
                    out.extend(self.as_dtypes(x).configs)
                except Fail:
                    failed = True
            if failed:
                raise Fail
            return DTypeSet(tuple(out), v.span)
        if isinstance(v, Word):
            raise self._unknown(v, "dtype set")
        raise self.ctx.fail(
            v.span,
            f"expected a dtype set, got {describe(v)}",
            "write {input: quint8, output: quint8}, a dtypes name or a list of them",
        )

    def as_dtype(self, v: Value, allow_constraints: bool) -> m.DType:
        if isinstance(v, DTypeValue) and (allow_constraints or not v.dtype.constrained):
            return v.dtype
        if isinstance(v, Word):
            raise self._unknown(v, "dtype")
        what = (
            "a dtype or constraint"
            if allow_constraints
            else "a plain dtype (bias takes no constraints)"
        )
        raise self.ctx.fail(
            v.span,
            f"expected {what}, got {describe(v)}",
            "dtypes are quint8, qint8, quint4x2, float, float16, ...",
        )

    def dtype_config(self, rec: Rec, name: str | None) -> m.DTypeConfig:
        values: dict[str, Any] = {}
        where: list[tuple[str, Span]] = []
        failed = False
        for key, val, span in rec.entries:
            where.append((str(key), span))
            if not self.known_key(key, span, list(DTYPE_KEY_WORDS), "dtype config key"):
                failed = True
                continue
            key = str(key)
            try:
                if key == "dynamic":
                    if not (isinstance(val, Word) and val.text in ("true", "false")):
                        raise self.ctx.fail(
                            val.span, f"dynamic must be true or false, got {describe(val)}"
                        )
                    values[key] = val.text == "true"
                elif key == "bias":
                    values[key] = self.as_dtype(val, allow_constraints=False).dtype
                else:
                    values[key] = self.as_dtype(val, allow_constraints=True)
            except Fail:
                failed = True
        if failed:
            raise Fail
        return m.DTypeConfig(
            input=values.get("input"),
            output=values.get("output"),
            weight=values.get("weight"),
            bias=values.get("bias"),
            is_dynamic=values.get("dynamic"),
            name=name,
            where=tuple(where),
        )

    def known_key(self, key: str | int, span: Span, keys: list[str], what: str) -> bool:
        """Whether ``key`` is one of ``keys``; if not, say so (with a did-you-mean)."""
        if isinstance(key, str) and key in keys:
            return True
        self.ctx.error(
            span,
            f"unknown {what} {key!r}",
            self.ctx.suggest(str(key), keys) or f"keys are: {', '.join(keys)}",
        )
        return False

    def as_fuser(self, v: Value) -> m.Fuser:
        if isinstance(v, FuserValue):
            return v.fuser
        if isinstance(v, Sym) and v.symbol.kind == "function":
            return m.SymbolFuser(v.symbol)
        if isinstance(v, Word):
            raise self._unknown(v, "fuser")
        hint = "a fuser is sequential(FusedModule), the name of a 'fuse' definition or a fuser function"
        if isinstance(v, Sym) and v.symbol.kind == "module":
            hint = f"to fuse into {spell(v.symbol.path)}, write sequential({spell(v.symbol.path)})"
        raise self.ctx.fail(v.span, f"expected a fuser, got {describe(v)}", hint)

    def _unknown(self, w: Word, kind: str = "symbol") -> Fail:
        return self.ctx.fail(w.span, f"unknown {kind} '{w.text}'", self.word_hint(w.text))

    def word_hint(self, text: str) -> str | None:
        """Did you mean: a name the spec knows, or a class named without its namespace."""
        pool = list(BUILTIN_ALIASES) + list(DTYPE_NAMES) + list(OBSERVATIONS)
        for f in self.program.files.values():
            pool.extend(f.defs)
        hint = self.ctx.suggest(text, pool)
        if hint is None:  # a class named without its namespace: Linear for nn.Linear
            for alias, full in BUILTIN_ALIASES.items():
                try:
                    self.ctx.facts.lookup(f"{full}.{text}")
                except UnknownSymbol:
                    continue
                return f"did you mean '{alias}.{text}'?"
        return hint

    def _check_getter(self, g: Getter, pattern: m.PatternValue, is_complex: bool) -> None:
        node: Any = pattern if is_complex else m.reversed_nested(pattern)
        for i in g.path:
            if not isinstance(node, tuple) or i >= len(node):
                hint = (
                    None
                    if is_complex
                    else (
                        "getters index a sequential pattern in torch's reversed nested form: "
                        f"{pattern_text(pattern)} is {pattern_text(m.reversed_nested(pattern))}"
                    )
                )
                raise self.ctx.fail(
                    g.span,
                    f"pattern[{']['.join(map(str, g.path))}] is not an element of the pattern {pattern_text(pattern)}",
                    hint,
                )
            node = node[i]
