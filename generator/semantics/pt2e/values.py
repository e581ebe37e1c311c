"""The values of pt2e keys and quantizer fields: each coerced as its row of the key table
says (``lang.pt2e_keys``), with did-you-mean, and hooks checked against the arity bcfg's
runtime calls them with. A mixin of ``coerce.Coercions``, which gives it the context, the
unknown-name error and the unknown-key check."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...lang.pt2e_keys import PT2E_KEY, Key, Kind
from ...lang.vocabulary import BOOLEANS, spell
from ...sources import Span
from .. import model as m
from ..checks import arity_mismatch
from ..context import Ctx, Fail
from ..values import DTypeValue, Num, Rec, Seq, Sym, Text, Value, Word, describe

_LITERALS: dict[str, Any] = {"true": True, "false": False, "none": None}


class KeyValues:
    """Coercion of the values of the key table's rows."""

    ctx: Ctx

    def _unknown(self, w: Word, kind: str = "symbol") -> Fail:
        raise NotImplementedError

    def known_key(self, key: str | int, span: Span, keys: list[str], what: str) -> bool:
        raise NotImplementedError

    def pt2e_field(self, spec: Any, rec: Value, *_: Any) -> m.PT2EOptions:
        """A ``pt2e: {...}`` record: each key coerced as its row of the key table says."""
        if not isinstance(rec, Rec):
            raise self.ctx.fail(
                rec.span,
                f"pt2e must be a record of PT2E settings, got {describe(rec)}",
                f"like pt2e: {{aten: aten.conv2d.default}}; keys are: {', '.join(PT2E_KEY)}",
            )
        values: dict[str, Any] = {}
        where: list[tuple[str, Span]] = []
        failed = False
        for key, v, span in rec.entries:
            if not self.known_key(key, span, list(PT2E_KEY), "pt2e key"):
                failed = True
                continue
            try:
                values[str(key)] = self.key_value(PT2E_KEY[str(key)], v)
                where.append((str(key), span))
            except Fail:
                failed = True
        if failed:
            raise Fail
        return m.PT2EOptions(**values, where=tuple(where))

    def key_value(self, key: Key, v: Value) -> Any:
        """The value of a pt2e key (or a quantizer field), coerced as its row's kind says."""
        if key.kind is Kind.WORD:
            assert key.words is not None
            words = [w.value for w in key.words]
            if isinstance(v, DTypeValue) and v.dtype.dtype == "float32" and "float" in words:
                return key.words("float")  # the word float names the dtype
            chosen = self._choice(
                key.word, key.word_list(), words, v, key.meaning, key.close_meaning
            )
            return key.words(chosen)
        if key.kind is Kind.FLAG:
            return self._choice(key.word, "true or false", BOOLEANS, v, key.meaning) == "true"
        if key.kind is Kind.HOOKS:
            items = v.items if isinstance(v, Seq) and not v.is_tuple else (v,)
            return tuple(self.hook(x, key.hooks or {}, key.what, key.arity) for x in items)
        if key.kind is Kind.HOOK:
            return self.hook(v, {}, key.what, key.arity)
        if key.kind is Kind.AXIS:
            return self._weight_axis(v)
        if key.kind is Kind.OPS:
            return self._operator_types(v)
        if key.kind is Kind.INDEX:
            return self._index(key.word, v, "an output index (the getitem's)")
        if key.kind is Kind.INDICES:
            return self._indices(key.word, v)
        if key.kind is Kind.GIVEN:
            return self._given(v)
        if key.kind is Kind.LEVELS:
            return self._levels(key, v)
        return self._aten(v)

    def _levels(self, key: Key, v: Value) -> tuple[Any, ...]:
        """``select:``: a non-empty list of the key's words, each once; ``default`` (which
        takes every node) last."""
        assert key.words is not None
        if not isinstance(v, Seq) or v.is_tuple or not v.items:
            raise self.ctx.fail(
                v.span, f"{key.word} must be {key.expects}, got {describe(v)}", key.meaning
            )
        words = [w.value for w in key.words]
        out = [key.words(self._choice(key.word, key.word_list(), words, x)) for x in v.items]
        for i, (x, level) in enumerate(zip(v.items, out, strict=True)):
            if level in out[:i]:
                raise self.ctx.fail(x.span, f"{key.word} names {level} twice", "remove one")
            if level == "default" and i < len(out) - 1:
                raise self.ctx.fail(
                    x.span,
                    f"{key.word}: default takes every node, so the levels after it "
                    f"({', '.join(out[i + 1:])}) would never choose a config",
                    "put default last",
                )
        return tuple(out)

    def _given(self, v: Value) -> tuple[tuple[str, Any], ...]:
        """``given:``: constructor parameters and literal values (whether they name parameters
        of the quantizer's classes is checked once the classes are resolved)."""
        if not isinstance(v, Rec) or not v.entries:
            raise self.ctx.fail(
                v.span,
                f"given must be a record of constructor parameters and values, got {describe(v)}",
                "like given: {use_explicit_layout: true}",
            )
        out: list[tuple[str, Any]] = []
        for key, x, _ in v.entries:
            if isinstance(x, Word) and x.text in _LITERALS:
                out.append((str(key), _LITERALS[x.text]))
            elif isinstance(x, (Num, Text)):
                out.append((str(key), x.value))
            else:
                raise self.ctx.fail(
                    x.span,
                    f"given: '{key}' must be a literal (true, false, none, a number or a string), got {describe(x)}",
                    "the constructor's argument is compared with it",
                )
        return tuple(out)

    def _aten(self, v: Value) -> m.AtenChain:
        """``aten:``: an op, a list of ops (one position; [] leaves the pattern out), or a tuple of those."""
        if isinstance(v, Seq) and v.is_tuple:
            if len(v.items) < 2:
                raise self.ctx.fail(v.span, "an ATen chain has at least two positions")
            return tuple(self._aten_position(x) for x in v.items)
        if isinstance(v, Seq) and not v.items:
            return ()
        return (self._aten_position(v),)

    def _aten_position(self, v: Value) -> tuple[m.Symbol, ...]:
        items = v.items if isinstance(v, Seq) and not v.is_tuple else (v,)
        if not items:
            raise self.ctx.fail(v.span, "an empty list of ATen ops inside a chain matches nothing")
        out = []
        for x in items:
            if isinstance(x, Sym) and x.symbol.kind == m.SymbolKind.OP:
                out.append(x.symbol)
                continue
            if isinstance(x, Word):
                raise self._unknown(x)
            raise self.ctx.fail(
                x.span,
                f"expected an ATen op, like aten.conv2d.default, got {describe(x)}",
                "aten: names the ops torch.export emits; a list is one position, a tuple a chain",
            )
        return tuple(out)

    def _choice(
        self,
        key: str,
        listed: str,
        words: Iterable[str],
        v: Value,
        meaning: str | None = None,
        both: bool = False,
    ) -> str:
        """One of a key's words, or a located error naming them (with did-you-mean, and with
        ``both`` what the words mean after it)."""
        if isinstance(v, Word) and v.text in words:
            return v.text
        close = self.ctx.suggest(v.text, list(words)) if isinstance(v, Word) else None
        hint = f"{close} ({meaning})" if both and close and meaning else close or meaning
        raise self.ctx.fail(v.span, f"{key} must be {listed}, got {describe(v)}", hint)

    def _weight_axis(self, v: Value) -> int:
        if (
            isinstance(v, Num)
            and isinstance(v.value, int)
            and not isinstance(v.value, bool)
            and v.value >= 0
        ):
            return v.value
        raise self.ctx.fail(
            v.span, f"weight_axis must be a channel axis, 0 or more, got {describe(v)}"
        )

    def _index(self, word: str, v: Value, what: str = "an argument index") -> int:
        """An argument (or output) index: an integer, 0 or more."""
        if isinstance(v, Num) and type(v.value) is int and v.value >= 0:
            return v.value
        counted = "arguments" if what == "an argument index" else "outputs"
        raise self.ctx.fail(
            v.span,
            f"{word} must be {what}, 0 or more, got {describe(v)}",
            f"indices count the op's {counted} from 0, as its ATen schema lists them",
        )

    def _indices(self, word: str, v: Value) -> tuple[int, ...]:
        """Argument indices: one, or a non-empty list without repeats."""
        if isinstance(v, Seq) and v.is_tuple:
            raise self.ctx.fail(
                v.span, f"{word} is a list of argument indices, got a tuple", "write [0, 1]"
            )
        items = v.items if isinstance(v, Seq) else (v,)
        if not items:
            raise self.ctx.fail(v.span, f"{word} names no argument", "write [0], or remove it")
        out = tuple(self._index(word, x) for x in items)
        for i, (x, n) in enumerate(zip(items, out, strict=True)):
            if n in out[:i]:
                raise self.ctx.fail(x.span, f"{word} names argument {n} twice", "remove one")
        return out

    def _operator_types(self, v: Value) -> tuple[m.Symbol, ...]:
        """``operator_types:``: ATen overloads (a list; [] selects the pattern by none)."""
        if isinstance(v, Seq) and not v.is_tuple and not v.items:
            return ()
        if isinstance(v, Seq) and v.is_tuple:
            raise self.ctx.fail(
                v.span,
                "operator_types is a list of ATen overloads, got a tuple",
                "write [aten.conv1d.default, aten.conv2d.default]",
            )
        for x in v.items if isinstance(v, Seq) else (v,):
            if isinstance(x, Word):
                raise self._unknown(x)
            if not (isinstance(x, Sym) and x.symbol.kind == m.SymbolKind.OP):
                raise self.ctx.fail(
                    x.span,
                    f"operator_types lists ATen ops, like aten.conv2d.default, got {describe(x)}",
                    "name the overloads set_operator_type is called with",
                )
        return self._aten_position(v)

    def hook(
        self, v: Value, builtins: dict[str, str], what: str, arity: tuple[str, ...] = ()
    ) -> m.Hook:
        """A named hook: one of ``builtins`` (bcfg's runtime) or a function by dotted path,
        which must take the ``arity`` arguments the runtime calls it with."""
        if isinstance(v, Word) and v.text in builtins:
            return m.Hook(v.text)
        if isinstance(v, Sym) and v.symbol.kind == m.SymbolKind.FUNCTION:
            problem = arity_mismatch(self.ctx.facts.signature(v.symbol.path), len(arity))
            if arity and problem:
                raise self.ctx.fail(
                    v.span,
                    f"{what} '{spell(v.symbol.path)}' does not fit the call bcfg's runtime "
                    f"makes: {problem}",
                    f"bcfg's runtime calls it as fn({', '.join(arity)})",
                )
            return m.Hook(v.symbol.path.rpartition(".")[2], v.symbol)
        known = f"{', '.join(builtins)} or " if builtins else ""
        hint = f"a {what} is {known}a function named by its dotted path"
        if isinstance(v, Word):
            raise self.ctx.fail(
                v.span,
                f"unknown {what} '{v.text}'",
                self.ctx.suggest(v.text, list(builtins)) or hint,
            )
        raise self.ctx.fail(v.span, f"expected a {what}, got {describe(v)}", hint)
