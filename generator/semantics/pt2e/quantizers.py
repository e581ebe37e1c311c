"""PT2E quantizers: ``quantizer NAME { ... }`` declarations, resolved into rules.

A quantizer is built from the resolved patterns of the backend it names, in
the backend's order. Each pattern becomes a rule matched on the exported ATen
graph: its elements are mapped to ATen overloads through the one table of
``aten_ops`` (or its ``pt2e: {aten: ...}``), its dtype configs become the
quantization configs the rule allows, and its observation type says how it is
annotated (a chain, an eager shared op, a propagated shared op). Patterns that
map to the same rule are one rule, where the first of them is. What PT2E
cannot express (a pattern without an ATen mapping, a dtype without a PT2E
equivalent, a bound no observer has) is an error at the pattern, and so is a
key the quantizer's runtime base does not honour (``keys``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...lang import syntax as syn
from ...lang.pt2e_keys import (
    QUANTIZER_KEY,
    QUANTIZER_TABLE,
    Api,
    Key,
    Kind,
    OperatorType,
    Scopes,
)
from .. import model as m
from ..coerce import Coercions
from ..context import Ctx, Fail
from ..delegates import DELEGATES
from ..delegates import check as check_delegate
from ..evaluate import Evaluator
from ..load import LoadedFile, Program
from ..values import Seq, Sym, describe
from . import given
from .classes import Classes
from .keys import Settings, unread
from .mapping import Mapping
from .rules import rules


class Quantizers:
    """Resolves the quantizer declarations of the specs of a run."""

    def __init__(self, ctx: Ctx, program: Program, evaluator: Evaluator, coerce: Coercions):
        self.ctx = ctx
        self.program = program
        self.evaluator = evaluator
        self.coerce = coerce
        self.mapping = Mapping(ctx)

    def resolve(self, files: list[LoadedFile], backends: list[m.Backend]) -> list[m.Quantizer]:
        """The quantizers declared in ``files``, for the ``backends`` that resolved."""
        by_name = {(b.spec_file, b.module): b for b in backends}
        out: list[m.Quantizer] = []
        seen: dict[str, syn.QuantizerDecl] = {}
        for f in files:
            if f.broken:
                continue
            declared = [d.name for d in f.spec.decls if isinstance(d, syn.BackendDecl)]
            for decl in f.spec.decls:
                if not isinstance(decl, syn.QuantizerDecl):
                    continue
                if decl.name in seen:
                    self.ctx.error(
                        decl.span,
                        f"backend '{decl.name}' already has a quantizer, declared at {seen[decl.name].span}",
                        "a backend has one quantizer; remove one of the two",
                    )
                    continue
                seen[decl.name] = decl
                if decl.name not in declared:
                    self.ctx.error(
                        decl.span,
                        f"quantizer '{decl.name}' names no backend of this file",
                        self.ctx.suggest(decl.name, declared)
                        or "a quantizer is declared in the file of its backend, by the backend's name",
                    )
                    continue
                backend = by_name.get((f.name, decl.name))
                if backend is None:
                    continue  # the backend had errors: they are reported
                try:
                    out.append(self._quantizer(f, decl, backend))
                except Fail:
                    pass
        return out

    def _quantizer(self, f: LoadedFile, decl: syn.QuantizerDecl, backend: m.Backend) -> m.Quantizer:
        values, spans, failed = self._fields(f, decl)
        scopes = values.get("scopes", Scopes.MODULES)
        operator_type = values.get("operator_type", OperatorType.NODES)
        failed = self._unread(values, spans, scopes) or failed
        settings = Settings(
            scopes, values.get("reused_weight", m.ReusedWeight.MATCH), operator_type
        )
        built = rules(self.ctx, self.mapping, settings, backend)
        if failed or built is None:
            raise Fail
        if "classes" in values:
            transforms = values.get("transforms", ())
            values["classes"] = self._classes(f, decl, values, scopes, built, transforms)
        generated = "".join(p[:1].upper() + p[1:] for p in decl.name.split("_") if p) + "Quantizer"
        if not given.check(self.ctx, backend, values.get("classes", ()), generated):
            raise Fail
        if values.get("delegate") is not None:  # the dtype configs the delegate would refuse
            delegate = DELEGATES[values["delegate"]]
            self.ctx.report(check_delegate(delegate, decl.name, backend, built))
        return m.Quantizer(
            module=backend.module,
            rules=built,
            spec_file=backend.spec_file,
            inputs=backend.inputs,
            span=decl.span,
            **values,
        )

    def _fields(
        self, f: LoadedFile, decl: syn.QuantizerDecl
    ) -> tuple[dict[str, Any], dict[str, Any], bool]:
        """The declaration's fields as Quantizer attributes (each as its row of the key table
        says), where each is written, and whether one had an error."""
        values: dict[str, Any] = {"transforms": ()}
        spans: dict[str, Any] = {}
        failed = False
        for fld in decl.fields:
            try:
                key = QUANTIZER_KEY.get(fld.name)
                if key is None:
                    raise self.ctx.fail(
                        fld.span,
                        f"unknown quantizer field '{fld.name}'",
                        self.ctx.suggest(fld.name, list(QUANTIZER_KEY))
                        or f"fields are: {', '.join(QUANTIZER_KEY)}",
                    )
                if fld.name in spans:
                    raise self.ctx.fail(fld.span, f"field '{fld.name}' is set twice")
                spans[fld.name] = fld.span
                if key.kind is Kind.HOOKS:
                    values[key.lands[0]] = self._transforms(f, fld.value)
                    continue
                if key.kind is Kind.CLASSES:  # resolved against the rules (_classes)
                    values[key.lands[0]] = fld
                    continue
                if key.kind is Kind.PATH:
                    values[key.lands[0]] = self._path(f, fld, key)
                    continue
                v = self.evaluator.eval(f, fld.value, {})
                values[key.lands[0]] = self.coerce.key_value(
                    replace(key, meaning=key.meaning or key.doc), v
                )
            except Fail:
                failed = True
        return values, spans, failed

    def _unread(self, values: dict[str, Any], spans: dict[str, Any], scopes: Scopes) -> bool:
        """An error at each field the declaration writes that no part of its composition
        reads (the rule of the pt2e keys: ``keys.unread``), and at a config_type without
        api: composable; whether any."""
        failed = False
        for key in QUANTIZER_TABLE:
            if key.word not in spans:
                continue
            problem = unread(key, values.get(key.lands[0]), scopes)
            if problem is not None:
                self.ctx.error(spans[key.word], *problem)
                failed = True
        if "config_type" in spans and values.get("api") is not Api.COMPOSABLE and not failed:
            self.ctx.error(
                spans["config_type"],
                "config_type says what the api: composable methods take; this quantizer has "
                "api: stages (add_stage takes any config)",
                "add api: composable, or remove config_type",
            )
            failed = True
        return failed

    def _path(self, f: LoadedFile, fld: syn.Field, key: Key) -> str:
        """A field naming an object by dotted path through the file's aliases (not imported)."""
        e = fld.value
        if not isinstance(e, syn.DottedName) or len(e.parts) < 2 or any("${" in p for p in e.parts):
            raise self.ctx.fail(
                e.span,
                f"{key.word} must be {key.expects}",
                "name the class by its module and name; an alias of the file may begin it",
            )
        head = self.evaluator.expand_alias(f, e.parts[0], e.span)
        return ".".join([head, *e.parts[1:]])

    def _classes(
        self,
        f: LoadedFile,
        decl: syn.QuantizerDecl,
        values: dict[str, Any],
        scopes: Scopes,
        built: tuple[m.Rule, ...],
        transforms: tuple[m.Hook, ...] = (),
    ) -> tuple[m.QuantClass, ...]:
        fld: syn.Field = values["classes"]
        getter = f"get_{decl.name}_quantizer"
        generated = "".join(p[:1].upper() + p[1:] for p in decl.name.split("_") if p) + "Quantizer"
        classes = Classes(
            self.ctx, self.evaluator, f, (getter,), scopes is Scopes.PAIRS, transforms
        )
        classes.generated = generated
        classes.scopes = scopes
        classes.api = values.get("api") is Api.COMPOSABLE
        return classes.resolve(fld.value, built)

    def _transforms(self, f: LoadedFile, e: syn.Expr) -> tuple[m.Hook, ...]:
        items = e.items if isinstance(e, syn.ListExpr) else (e,)
        out = []
        transform = QUANTIZER_KEY["transform"]
        for x in items:
            if isinstance(x, syn.Call) and x.func.text == "scalars_to_tensors":
                ops = []
                for a in x.args:
                    v = self.evaluator.eval(f, a, {})
                    if not (isinstance(v, Sym) and v.symbol.kind == m.SymbolKind.OP):
                        raise self.ctx.fail(
                            v.span,
                            f"scalars_to_tensors takes ATen ops, like aten.add.Tensor; got {describe(v)}",
                        )
                    ops.append(v.symbol)
                if not ops:
                    raise self.ctx.fail(x.span, "scalars_to_tensors() needs the ops it applies to")
                out.append(m.Hook("scalars_to_tensors", None, tuple(ops)))
                continue
            v = self.evaluator.eval(f, x, {})
            if isinstance(v, Seq):
                raise self.ctx.fail(v.span, "a list of transforms cannot nest")
            out.append(
                self.coerce.hook(v, {"scalars_to_tensors": ""}, transform.what, transform.arity)
            )
        return tuple(out)
