"""Evaluation: expressions to untyped values, in a file's scope and a loop or group's bindings.

Names are looked up in order: loop variables and group parameters (``env``),
the file's definitions and imports, the bare dtype names, aliases, and last
the installed torch through the allow-list (``facts``). ``${var}`` holes are
filled from ``env``. Numbers are checked (finite, at most 256 bits).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from ..lang import syntax as syn
from ..lang.vocabulary import BUILTIN_ALIASES, DTYPE_NAMES
from ..sources import Span
from . import model as m
from .coerce import Coercions
from .context import Ctx, Fail
from .definitions import Definitions
from .facts import UnknownSymbol
from .load import DECL_WORDS, LoadedFile, Program
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

# Integers beyond this many bits are refused: no BackendConfig number is that big.
MAX_INT_BITS = 256
# Aliases whose targets name aliases, more than this deep, are an error.
MAX_ALIAS_CHAIN = 32
# Loop variables and group parameters in scope.
Env = dict[str, Value]


class Evaluator:
    """Evaluates expressions; ``definitions`` gives the values of named definitions."""

    def __init__(self, ctx: Ctx, program: Program, coerce: Coercions):
        self.ctx = ctx
        self.program = program
        self.coerce = coerce
        self.definitions = Definitions(ctx, program, self, coerce)

    def eval(self, f: LoadedFile, e: syn.Expr, env: Env) -> Value:
        """Evaluate an expression to an untyped value, in file ``f``'s scope."""
        if isinstance(e, syn.DottedName):
            return self.path(f, e, env)
        if isinstance(e, syn.Str):
            return Text(e.value, e.span)
        if isinstance(e, (syn.Int, syn.Float)):
            return self._checked_number(e.value, e.span)
        if isinstance(e, syn.Neg):
            v = self.number(f, e.operand, env)
            return Num(-v, e.span)
        if isinstance(e, syn.BinOp):
            return self._arithmetic(f, e, env)
        if isinstance(e, (syn.TupleExpr, syn.ListExpr)):
            items = self._all(f, e.items, env)
            return Seq(items, isinstance(e, syn.TupleExpr), e.span)
        if isinstance(e, syn.Record):
            return self._record(f, e, env)
        if isinstance(e, syn.PatternRef):
            return Getter((), e.span)
        if isinstance(e, syn.Index):
            return self._index(f, e, env)
        if isinstance(e, syn.Call):
            return self._call(f, e, env)
        raise AssertionError(f"unhandled expression {type(e).__name__}")

    def _arithmetic(self, f: LoadedFile, e: syn.BinOp, env: Env) -> Num:
        a, b = self.number(f, e.left, env), self.number(f, e.right, env)
        if (
            e.op == "**"
            and isinstance(a, int)
            and isinstance(b, int)
            and abs(a) > 1
            and abs(a).bit_length() * b > MAX_INT_BITS
        ):
            raise self.ctx.fail(e.span, f"{a} ** {b} is too large a number")
        try:
            r = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "/": lambda: a / b,
                "**": lambda: a**b,
            }[e.op]()
        except (ZeroDivisionError, OverflowError) as exc:
            raise self.ctx.fail(e.span, f"cannot compute this number: {exc}") from None
        if isinstance(r, complex):
            raise self.ctx.fail(e.span, "this number is not real")
        return self._checked_number(r, e.span)

    def _record(self, f: LoadedFile, e: syn.Record, env: Env) -> Rec:
        seen: dict[str | int, syn.Entry] = {}
        for ent in e.entries:
            if ent.key in seen:
                raise self.ctx.fail(
                    ent.span,
                    f"key {ent.key!r} appears twice",
                    f"first given at {seen[ent.key].span}",
                )
            seen[ent.key] = ent
        values = self._all(f, tuple(ent.value for ent in e.entries), env)
        return Rec(tuple((ent.key, v, ent.span) for ent, v in zip(e.entries, values)), e.span)

    def _index(self, f: LoadedFile, e: syn.Index, env: Env) -> Getter:
        target = self.eval(f, e.target, env)
        idx = self.eval(f, e.index, env)
        if not isinstance(target, Getter):
            raise self.ctx.fail(e.span, "only 'pattern' can be indexed, as in pattern[1]")
        if not isinstance(idx, Num) or not isinstance(idx.value, int) or idx.value < 0:
            raise self.ctx.fail(idx.span, "a pattern index must be a non-negative integer")
        return Getter(target.path + (idx.value,), e.span)

    def _all(self, f: LoadedFile, exprs: tuple[syn.Expr, ...], env: Env) -> tuple[Value, ...]:
        """Evaluate every expression, reporting the errors of each before giving up."""
        out, failed = [], False
        for x in exprs:
            try:
                out.append(self.eval(f, x, env))
            except Fail:
                failed = True
        if failed:
            raise Fail
        return tuple(out)

    def _checked_number(self, value: int | float, span: Span) -> Num:
        if isinstance(value, float) and not math.isfinite(value):
            raise self.ctx.fail(span, "this number is not finite")
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise self.ctx.fail(span, "this number is too large")
        return Num(value, span)

    def number(self, f: LoadedFile, e: syn.Expr, env: Env) -> int | float:
        v = self.eval(f, e, env)
        if not isinstance(v, Num):
            raise self.ctx.fail(v.span, f"expected a number, got {describe(v)}")
        return v.value

    def _call(self, f: LoadedFile, e: syn.Call, env: Env) -> Value:
        fn = e.func.text
        if fn == "sequential":
            if len(e.args) != 1:
                raise self.ctx.fail(
                    e.span,
                    f"sequential(...) takes one fused module class, got {len(e.args)} arguments",
                )
            return FuserValue(
                m.SequentialFuser(
                    self.coerce.as_module(
                        self.eval(f, e.args[0], env), "the fused module of sequential()"
                    )
                ),
                e.span,
            )
        if fn == "constrain":
            if len(e.args) != 2:
                raise self.ctx.fail(
                    e.span, f"constrain(dtypes, constraint) takes two arguments, got {len(e.args)}"
                )
            ds = self.coerce.as_dtypes(self.eval(f, e.args[0], env))
            cv = self.eval(f, e.args[1], env)
            c = self.coerce.as_dtype(cv, allow_constraints=True)
            if c.scale_min_lower_bound is not None or c.scale_max_upper_bound is not None:
                raise self.ctx.fail(
                    cv.span,
                    "constrain() fixes quantization parameters; a constraint with scale_min or scale_max is used as a dtype instead",
                    "write it as input/output of a dtype set: {input: my_constraint, ...}",
                )
            out = tuple(self._constrain(cfg, c, e.span) for cfg in ds.configs)
            if out == ds.configs:
                raise self.ctx.fail(
                    e.span,
                    f"constrain() changes nothing: no dtype config in the set has {c.dtype} as its input or output",
                )
            return DTypeSet(out, e.span)
        if fn == "scalars_to_tensors":
            raise self.ctx.fail(
                e.func.span,
                "scalars_to_tensors(...) is a transform: it belongs in the 'transform' field of a quantizer",
                "write: quantizer my_backend { transform: scalars_to_tensors(aten.add.Tensor) }",
            )
        raise self.ctx.fail(
            e.func.span,
            f"unknown function '{fn}'",
            "the functions are sequential(Module) and constrain(dtypes, constraint); calls of symbols belong in 'fuse' definitions",
        )

    def _constrain(self, cfg: m.DTypeConfig, c: m.DType, span: Span) -> m.DTypeConfig:
        """Give the activations of ``cfg`` whose dtype is ``c``'s the constraints of ``c``."""

        def apply(d: m.DType | None) -> m.DType | None:
            if d is None or d.dtype != c.dtype:
                return d
            if d.scale_min_lower_bound is not None or d.scale_max_upper_bound is not None:
                raise self.ctx.fail(
                    span,
                    "scale bounds cannot be combined with fixed quantization parameters",
                    "constrain a dtype set without scale_min/scale_max",
                )
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

    def path(self, f: LoadedFile, e: syn.DottedName, env: Env) -> Value:
        parts = [self.interpolate(p, env, e.span) for p in e.parts]
        head = parts[0]
        if len(parts) == 1:
            if head in env:
                return env[head]
            entry = f.defs.get(head)
            if entry is not None and not isinstance(entry[0], (syn.AliasDecl, syn.GroupDecl)):
                return self.definitions.value(entry[0], entry[1], e.span)
            if entry is not None and isinstance(entry[0], syn.GroupDecl):
                raise self.ctx.fail(
                    e.span,
                    f"'{head}' is a group; a group is expanded with 'use {head}(...)', it is not a value",
                )
            if head in DTYPE_NAMES:
                return DTypeValue(m.DType(self.ctx.facts.dtype(head)), e.span)
            if entry is None and head not in BUILTIN_ALIASES:
                return Word(head, e.span)
        elif head in env:
            raise self.ctx.fail(e.span, f"'{head}' is a variable, it has no attribute '{parts[1]}'")
        elif head in f.defs and not isinstance(f.defs[head][0], syn.AliasDecl):
            raise self.ctx.fail(
                e.span,
                f"'{head}' is {DECL_WORDS[type(f.defs[head][0])]}, it has no attribute '{parts[1]}'",
            )
        return self.symbol(f, parts, e.span)

    def interpolate(self, part: str, env: Env, span: Span) -> str:
        if "${" not in part:
            return part
        out, rest = "", part
        while "${" in rest:
            pre, _, tail = rest.partition("${")
            var, _, rest = tail.partition("}")
            v = env.get(var)
            if v is None:
                raise self.ctx.fail(
                    span,
                    f"'${{{var}}}' names no loop variable or group parameter here",
                    self.ctx.suggest(var, list(env)),
                )
            if isinstance(v, Num) and isinstance(v.value, int):
                text = str(v.value)
            elif isinstance(v, Text):
                text = v.value
            elif isinstance(v, Word):
                text = v.text
            else:
                raise self.ctx.fail(
                    span,
                    f"cannot put {describe(v)} into a name; '${{{var}}}' needs a word, a string or an integer",
                )
            out += pre + text
        out += rest
        if not out.isidentifier():
            raise self.ctx.fail(span, f"'{out}' is not a valid name segment")
        return out

    def symbol(self, f: LoadedFile, parts: list[str], span: Span) -> Value:
        head = parts[0]
        prefix = self._expand_alias(f, head, span)
        full = prefix.split(".") + parts[1:]
        path = ".".join(full)
        try:
            facts = self.ctx.facts.lookup(path)
        except UnknownSymbol as exc:
            raise self.ctx.fail(
                span, exc.message, _in_user_terms(exc.suggestion, prefix, head)
            ) from None
        if facts.kind == m.SymbolKind.DTYPE:
            assert facts.dtype is not None
            return DTypeValue(m.DType(facts.dtype), span)
        return Sym(m.Symbol(path, facts.kind, facts.module), span)

    def expand_alias(self, f: LoadedFile, head: str, span: Span) -> str:
        """The full dotted path ``head`` stands for, without importing it."""
        return self._expand_alias(f, head, span)

    def _expand_alias(self, f: LoadedFile, head: str, span: Span) -> str:
        """The full dotted path ``head`` stands for: through aliases (which may name aliases,
        the built-in ones included), each in its own file's scope; else ``head`` itself."""
        prefix: list[str] = [head]
        scope, chain = f, list[tuple[str, str]]()
        while True:
            entry = scope.defs.get(prefix[0])
            if entry is None or not isinstance(entry[0], syn.AliasDecl):
                builtin = BUILTIN_ALIASES.get(prefix[0]) if entry is None else None
                if builtin is not None:
                    prefix = builtin.split(".") + prefix[1:]
                return ".".join(prefix)
            alias = entry[0]
            self.definitions.used.add((entry[1], alias.name))
            if (entry[1], alias.name) in chain:
                names = " -> ".join([n for _, n in chain] + [alias.name])
                raise self.ctx.fail(alias.target.span, f"alias cycle: {names}")
            chain.append((entry[1], alias.name))
            if len(chain) > MAX_ALIAS_CHAIN:
                raise self.ctx.fail(
                    span,
                    f"aliases name aliases more than {MAX_ALIAS_CHAIN} deep here",
                    "point the alias at the full dotted path",
                )
            if "${" in alias.target.text:
                raise self.ctx.fail(
                    alias.target.span,
                    f"an alias target cannot hold a ${{...}} hole: '{alias.target.text}'",
                )
            prefix = list(alias.target.parts) + prefix[1:]
            scope = self.program.files[entry[1]]


def _in_user_terms(hint: str | None, prefix: str, head: str) -> str | None:
    """Say a did-you-mean suggestion with the alias the spec used: 'nn.Conv2d', not 'torch.nn.Conv2d'."""
    if hint is None or prefix == head:
        return hint
    mt = re.fullmatch(r"did you mean '([^']*)'\?", hint)
    if mt and (mt.group(1) + ".").startswith(prefix + "."):
        return f"did you mean '{head}{mt.group(1)[len(prefix):]}'?"
    return hint
