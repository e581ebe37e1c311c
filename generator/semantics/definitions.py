"""Definitions: the values of ``dtypes``, ``constraint`` and ``fuse`` declarations.

Evaluated on first use, once each (memoised by file and name), with a stack
that turns a definition defined in terms of itself into an error rather than a
recursion. A definition means the same wherever it is used, so its errors
carry no group notes. ``check_all`` resolves the ones nothing used, so their
errors are reported too; ``unused_warnings`` says which were never used.
"""

from __future__ import annotations

import keyword
from dataclasses import replace
from typing import Any, Protocol

from ..lang import syntax as syn
from ..lang.vocabulary import BOOLEANS, CONSTRAINT_FIELDS, CONSTRAINT_KEYS, FUSE_FLAGS
from ..sources import SourceSet, Span
from . import checks
from . import model as m
from .coerce import Coercions
from .context import Ctx, Fail
from .load import DECL_WORDS, DEFINITIONS, Definition, LoadedFile, Program
from .values import DTypeSet, DTypeValue, FuserValue, Rec, Sym, Value, describe, plain_name


class Evaluates(Protocol):
    """What definitions need of the evaluator that owns them (``evaluate.Evaluator``).

    The evaluator makes its ``Definitions`` and hands itself in: a definition's
    value is an expression, and an expression may name a definition. This
    protocol is that back reference, so this module does not import the evaluator.
    """

    def eval(self, f: LoadedFile, e: syn.Expr, env: dict[str, Value]) -> Value: ...

    def number(self, f: LoadedFile, e: syn.Expr, env: dict[str, Value]) -> int | float: ...

    def symbol(self, f: LoadedFile, parts: list[str], span: Span) -> Value: ...

    def interpolate(self, part: str, env: dict[str, Value], span: Span) -> str: ...


# Definitions defined in terms of definitions, more than this deep, are an
# error: each level is a few Python frames of the recursive evaluator.
MAX_DEFINITION_DEPTH = 64
# How a DefinitionRef names each kind of definition: by its keyword.
_KIND = {syn.DTypesDecl: "dtypes", syn.ConstraintDecl: "constraint", syn.FuseDecl: "fuse"}


class Definitions:
    """Memoised values of the named definitions, and which were used."""

    def __init__(self, ctx: Ctx, program: Program, evaluator: Evaluates, coerce: Coercions):
        self.ctx = ctx
        self.program = program
        self.evaluator = evaluator
        self.coerce = coerce
        self.used: set[tuple[str, str]] = set()  # (file, name) of every definition used
        self._fusers: dict[tuple[str, str], m.DefinedFuser] = {}
        self._constraints: dict[tuple[str, str], m.DType] = {}
        self._dtypes: dict[tuple[str, str], DTypeSet] = {}
        self._resolving: list[tuple[str, str]] = []
        # The definitions each definition refers to, transitively, by (file, name).
        self._uses: dict[tuple[str, str], tuple[m.DefinitionRef, ...]] = {}

    def value(self, decl: Definition, where: str, span: Span) -> Value:
        """The value of a dtype set, constraint or fuse definition, used at ``span``."""
        key = (where, decl.name)
        self.used.add(key)
        outer = self.ctx.recording
        if outer is not None:
            outer.append((m.DefinitionRef(_KIND[type(decl)], decl.name, decl.span), span))
        if key in self._resolving:
            chain = " -> ".join(n for _, n in self._resolving[self._resolving.index(key) :] + [key])
            raise self.ctx.fail(span, f"'{decl.name}' is defined in terms of itself: {chain}")
        if len(self._resolving) >= MAX_DEFINITION_DEPTH:
            raise self.ctx.fail(
                span,
                f"definitions nest more than {MAX_DEFINITION_DEPTH} deep here "
                f"('{self._resolving[0][1]}' -> ... -> '{decl.name}')",
                "define the value directly instead of through a chain of names",
            )
        value = self._value(decl, where, key, span)
        if outer is not None:
            outer.extend((ref, span) for ref in self._uses.get(key, ()))
        return value

    def _value(self, decl: Definition, where: str, key: tuple[str, str], span: Span) -> Value:
        """Evaluate (once) and return the definition; remember the definitions it refers to."""
        df = self.program.files[where]
        # A definition means the same wherever it is used: no group notes.
        self._resolving.append(key)
        trail, self.ctx.trail = self.ctx.trail, []
        recording, self.ctx.recording = self.ctx.recording, []
        inner = self.ctx.recording
        try:
            if isinstance(decl, syn.DTypesDecl):
                if key not in self._dtypes:
                    v = self.evaluator.eval(df, decl.value, {})
                    if isinstance(v, Rec):
                        self._dtypes[key] = DTypeSet(
                            (self.coerce.dtype_config(v, decl.name),), v.span
                        )
                    else:
                        self._dtypes[key] = self.coerce.as_dtypes(v)
                return replace(self._dtypes[key], span=span)
            if isinstance(decl, syn.ConstraintDecl):
                if key not in self._constraints:
                    self._constraints[key] = self._constraint(df, decl)
                return DTypeValue(self._constraints[key], span)
            assert isinstance(decl, syn.FuseDecl)
            if key not in self._fusers:
                self._fusers[key] = self._fuse(df, decl)
            return FuserValue(self._fusers[key], span)
        finally:
            self.ctx.trail = trail
            self.ctx.recording = recording
            self._resolving.pop()
            # Evaluated once (memoised), so what it referred to is known from its first use.
            self._uses.setdefault(key, tuple(dict.fromkeys(ref for ref, _ in inner)))

    def _constraint(self, f: LoadedFile, decl: syn.ConstraintDecl) -> m.DType:
        base = self.coerce.as_dtype(self.evaluator.eval(f, decl.dtype, {}), allow_constraints=False)
        values: dict[str, Any] = {}
        spans: dict[str, Span] = {}
        failed = False
        for ent in decl.entries:
            key = CONSTRAINT_KEYS.get(str(ent.key))
            if key is None:
                self.ctx.error(
                    ent.span,
                    f"unknown constraint {ent.key!r}",
                    self.ctx.suggest(str(ent.key), list(CONSTRAINT_KEYS))
                    or f"constraints are: {', '.join(short for _, short in CONSTRAINT_FIELDS)}",
                )
                failed = True
                continue
            if key in values:
                self.ctx.error(ent.span, f"constraint {ent.key!r} is given twice")
                failed = True
                continue
            try:
                values[key] = self.evaluator.number(f, ent.value, {})
            except Fail:
                failed = True
                continue
            spans[key] = ent.value.span
        if failed or self.ctx.report(checks.constraint_findings(base.dtype, values, spans)):
            raise Fail
        return replace(base, name=decl.name, **values)

    def _fuse(self, f: LoadedFile, decl: syn.FuseDecl) -> m.DefinedFuser:
        for flag in decl.flags:
            if flag not in FUSE_FLAGS:
                self.ctx.error(
                    decl.span,
                    f"unknown fuse option '{flag}'",
                    self.ctx.suggest(flag, FUSE_FLAGS) or "options are eval_only and same_mode",
                )
                raise Fail
        names: list[str] = []

        def collect(p: syn.Param) -> None:
            if p.name is None:
                for q in p.items:
                    collect(q)
            elif p.name != "_":
                if p.name in names:
                    raise self.ctx.fail(p.span, f"parameter '{p.name}' appears twice")
                if not plain_name(p.name) or keyword.iskeyword(p.name) or p.name == "is_qat":
                    raise self.ctx.fail(p.span, f"'{p.name}' cannot be a parameter name")
                names.append(p.name)

        for p in decl.params:
            collect(p)
        if not isinstance(decl.body, syn.Call):
            raise self.ctx.fail(
                decl.body.span, "a fuse definition must build a module: Module(args)"
            )
        body = self._fuse_expr(f, decl.body, set(names))
        assert isinstance(body, m.FuseCall)
        unused = [n for n in names if not _mentions(body, n)]
        if unused:
            self.ctx.warning(
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

    def _fuse_expr(self, f: LoadedFile, e: syn.Expr, params: set[str]) -> m.FuseExpr:
        if isinstance(e, syn.DottedName) and len(e.parts) == 1 and e.parts[0] in params:
            return m.FuseArg(e.parts[0])
        if isinstance(e, syn.DottedName) and e.parts == ("is_qat",):
            return m.FuseQat()
        if isinstance(e, syn.DottedName) and len(e.parts) == 1 and e.parts[0] in BOOLEANS:
            return m.FuseConst(e.parts[0] == "true")
        if isinstance(e, (syn.Int, syn.Float, syn.Neg, syn.BinOp)):
            return m.FuseConst(self.evaluator.number(f, e, {}))
        if isinstance(e, syn.Call):
            fn = self.evaluator.symbol(
                f,
                [self.evaluator.interpolate(p, {}, e.func.span) for p in e.func.parts],
                e.func.span,
            )
            if not isinstance(fn, Sym) or fn.symbol.kind not in ("module", "class", "function"):
                raise self.ctx.fail(
                    e.func.span,
                    f"'{e.func.text}' cannot be called in a fuse definition; it is {describe(fn)}",
                )
            problem = checks.arity_mismatch(self.ctx.facts.signature(fn.symbol.path), len(e.args))
            if problem:
                raise self.ctx.fail(e.span, f"{e.func.text}(...) {problem}")
            return m.FuseCall(fn.symbol, tuple(self._fuse_expr(f, a, params) for a in e.args))
        if isinstance(e, syn.DottedName) and len(e.parts) == 1:
            raise self.ctx.fail(
                e.span,
                f"'{e.parts[0]}' is not a parameter of this fuser",
                self.ctx.suggest(e.parts[0], [*params, "is_qat"])
                or f"its parameters are {', '.join(sorted(params)) or 'none'}; is_qat is torch's QAT flag",
            )
        raise self.ctx.fail(
            e.span,
            "a fuse body may only use its parameters, is_qat, true, false, numbers and calls of modules or functions",
        )

    def check_all(self) -> None:
        """Resolve the dtype sets, constraints and fusers nothing used, so that their errors are reported too."""
        for f in list(self.program.files.values()):
            for decl in f.spec.decls:
                if not isinstance(decl, (syn.DTypesDecl, syn.ConstraintDecl, syn.FuseDecl)):
                    continue
                if f.defs.get(decl.name, (None,))[0] is not decl:
                    continue  # defined twice: already an error
                key = (f.name, decl.name)
                was_used = key in self.used
                try:
                    self.value(decl, f.name, decl.span)
                except Fail:
                    pass
                if not was_used:
                    self.used.discard(key)

    def unused_warnings(self, files: list[LoadedFile], sources: SourceSet) -> None:
        """Warn about definitions in ``files`` that no backend or group of this run used.

        A file without backends is a library: its definitions are there for
        other specs, so they are reported only when every spec beside it was
        part of the run (a full run), never when it is compiled on its own.
        """
        loaded = self.program.files
        for f in files:
            is_library = not any(isinstance(d, syn.BackendDecl) for d in f.spec.decls)
            if is_library:
                siblings = sources.siblings(f.name)
                if siblings is None or not all(n in loaded for n in siblings):
                    continue
            for decl in f.spec.decls:
                if isinstance(decl, DEFINITIONS) and (f.name, decl.name) not in self.used:
                    self.ctx.warning(
                        decl.span,
                        f"{DECL_WORDS[type(decl)].split(' ', 1)[1]} '{decl.name}' is defined but never used",
                        "remove it, or use it in a backend",
                    )


def _mentions(e: m.FuseExpr, name: str) -> bool:
    if isinstance(e, m.FuseArg):
        return e.name == name
    if isinstance(e, m.FuseCall):
        return any(_mentions(a, name) for a in e.args)
    return False
