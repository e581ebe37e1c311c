"""PT2E quantizers: ``quantizer NAME { ... }`` declarations, resolved into rules.

A quantizer is built from the resolved patterns of the backend it names, in
the backend's order. Each pattern becomes a rule matched on the exported ATen
graph: its elements are mapped to ATen overloads through the one table of
``aten_ops`` (or its ``pt2e: {aten: ...}``), its dtype configs become the
quantization configs the rule allows, and its observation type says how it is
annotated (a chain, an eager shared op, a propagated shared op). Patterns that
map to the same rule are one rule, where the first of them is. What PT2E
cannot express (a pattern without an ATen mapping, a dtype without a PT2E
equivalent, a bound no observer has) is an error at the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..lang import syntax as syn
from ..lang.vocabulary import (
    PT2E_DTYPES,
    PT2E_REUSED_WEIGHT_WORDS,
    QUANTIZER_FIELDS,
    QUANTIZER_OPERATOR_TYPE,
    QUANTIZER_OUTPUTS,
    QUANTIZER_SCOPES,
    spell,
)
from . import model as m
from .aten_ops import BATCH_NORM, FX_ONLY_PREFIXES, MAPPING, WEIGHT_BIAS
from .checks import pattern_text as _shown
from .coerce import Coercions
from .context import Ctx, Fail
from .delegates import DELEGATES
from .delegates import check as check_delegate
from .evaluate import Evaluator
from .facts import UnknownSymbol, exported_op
from .load import LoadedFile, Program
from .values import Seq, Sym, Word, describe

SHARED = "OUTPUT_SHARE_OBSERVER_WITH_INPUT"
NOT_OBSERVED = "INPUT_OUTPUT_NOT_OBSERVED"


class Quantizers:
    """Resolves the quantizer declarations of the specs of a run."""

    def __init__(self, ctx: Ctx, program: Program, evaluator: Evaluator, coerce: Coercions):
        self.ctx = ctx
        self.program = program
        self.evaluator = evaluator
        self.coerce = coerce
        self._index: dict[str, tuple[tuple[str, ...], ...]] | None = None
        # The backend being resolved: the pattern that fuses into each fused module, by identity.
        self._fusing: dict[str, m.PatternConfig] = {}
        # ... and the pattern config of each module a pattern names alone, by identity.
        self._modules: dict[str, m.PatternConfig] = {}
        # ... and the modules its sequential fusers build, by identity.
        self._built: set[str] = set()
        # ... and its quantizer's reused_weight, for patterns with a weight that do not say.
        self._reused = PT2E_REUSED_WEIGHT_WORDS[0]
        # ... and its quantizer's operator_type (patterns: rules say which overloads select them).
        self._operator_type = "nodes"
        self._scopes = QUANTIZER_SCOPES[0]

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

    # ------------------------------------------------------------ declaration

    def _quantizer(self, f: LoadedFile, decl: syn.QuantizerDecl, backend: m.Backend) -> m.Quantizer:
        transforms: tuple[m.Hook, ...] = ()
        outputs = QUANTIZER_OUTPUTS[0]
        scopes = QUANTIZER_SCOPES[0]
        fx = True
        reused = PT2E_REUSED_WEIGHT_WORDS[0]
        operator_type = QUANTIZER_OPERATOR_TYPE[0]
        typed = decl.span
        delegate = None  # bcfg diffrev (issue 36.5): the delegate field, for the key table
        failed = False
        names: set[str] = set()
        for fld in decl.fields:
            try:
                if fld.name not in QUANTIZER_FIELDS:
                    raise self.ctx.fail(
                        fld.span,
                        f"unknown quantizer field '{fld.name}'",
                        self.ctx.suggest(fld.name, list(QUANTIZER_FIELDS))
                        or f"fields are: {', '.join(QUANTIZER_FIELDS)}",
                    )
                if fld.name in names:
                    raise self.ctx.fail(fld.span, f"field '{fld.name}' is set twice")
                names.add(fld.name)
                if fld.name == "outputs":
                    outputs = self._outputs(f, fld.value)
                elif fld.name == "scopes":
                    scopes = self._word(f, fld.value, "scopes", QUANTIZER_SCOPES)
                elif fld.name == "fx":
                    fx = self._word(f, fld.value, "fx", ("true", "false")) == "true"
                elif fld.name == "reused_weight":
                    reused = self._word(f, fld.value, "reused_weight", PT2E_REUSED_WEIGHT_WORDS)
                elif fld.name == "operator_type":
                    operator_type = self._word(
                        f, fld.value, "operator_type", QUANTIZER_OPERATOR_TYPE
                    )
                    typed = fld.span
                elif fld.name == "delegate":  # bcfg diffrev (issue 36.5), for the key table
                    delegate = DELEGATES[self._word(f, fld.value, "delegate", tuple(DELEGATES))]
                else:
                    transforms = self._transforms(f, fld.value)
            except Fail:
                failed = True
        if operator_type != QUANTIZER_OPERATOR_TYPE[0] and scopes != QUANTIZER_SCOPES[0]:
            self.ctx.error(
                typed,
                f"operator_type: {operator_type} applies to a quantizer with scopes: modules; "
                f"this one has scopes: {scopes}, whose operator types are its own scheme",
                "remove operator_type, or scopes",
            )
            failed = True
        self._reused = reused
        self._operator_type = operator_type
        self._scopes = scopes
        rules = self._rules(backend)
        if failed or rules is None:
            raise Fail
        if delegate is not None:  # bcfg diffrev (issue 36.5): dtype configs it would refuse
            self.ctx.report(check_delegate(delegate, decl.name, backend, rules))
        return m.Quantizer(
            module=backend.module,
            rules=rules,
            transforms=transforms,
            spec_file=backend.spec_file,
            inputs=backend.inputs,
            span=decl.span,
            outputs=outputs,
            scopes=scopes,
            fx=fx,
            reused_weight=reused,
            operator_type=operator_type,
        )

    def _word(self, f: LoadedFile, e: syn.Expr, name: str, words: Sequence[str]) -> str:
        """A quantizer field whose value is one of ``words``."""
        v = self.evaluator.eval(f, e, {})
        if isinstance(v, Word) and v.text in words:
            return v.text
        close = self.ctx.suggest(v.text, list(words)) if isinstance(v, Word) else None
        raise self.ctx.fail(
            v.span,
            f"{name} must be {' or '.join(words)}, got {describe(v)}",
            close or QUANTIZER_FIELDS[name],
        )

    def _outputs(self, f: LoadedFile, e: syn.Expr) -> str:
        v = self.evaluator.eval(f, e, {})
        if isinstance(v, Word) and v.text in QUANTIZER_OUTPUTS:
            return v.text
        meaning = (
            "patterns: each pattern's last op gets the output spec; consumers: only "
            "quantized consumers observe a pattern's output"
        )
        close = self.ctx.suggest(v.text, QUANTIZER_OUTPUTS) if isinstance(v, Word) else None
        raise self.ctx.fail(
            v.span,
            f"outputs must be {' or '.join(QUANTIZER_OUTPUTS)}, got {describe(v)}",
            f"{close} ({meaning})" if close else meaning,
        )

    def _transforms(self, f: LoadedFile, e: syn.Expr) -> tuple[m.Hook, ...]:
        items = e.items if isinstance(e, syn.ListExpr) else (e,)
        out = []
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
            out.append(self.coerce.hook(v, {"scalars_to_tensors": ""}, "transform"))
        return tuple(out)

    # ------------------------------------------------------------ rules

    def _rules(self, backend: m.Backend) -> tuple[m.Rule, ...] | None:
        rules: list[m.Rule] = []
        positions: dict[tuple, int] = {}
        failed = False
        self._fusing = {}
        self._modules = {}
        self._built = set()
        for c in backend.configs:
            if c.fused_module is not None:
                self._fusing.setdefault(self.ctx.facts.identity(c.fused_module.path), c)
            p = c.pattern
            if isinstance(p, m.Symbol) and p.kind == m.SymbolKind.MODULE:
                self._modules.setdefault(self.ctx.facts.identity(p.path), c)
            if isinstance(c.fuser, m.SequentialFuser):
                self._built.add(self.ctx.facts.identity(c.fuser.fused.path))
        for c in backend.configs:
            try:
                rule = self._rule(c)
            except Fail:
                failed = True
                continue
            if rule is None:
                continue
            key = _merge_key(rule)
            if key in positions:
                i = positions[key]
                rules[i] = _merge(rules[i], rule)
                continue
            positions[key] = len(rules)
            rules.append(rule)
        if failed:
            return None
        ordered = tried_order(rules)
        self._order_warnings(ordered)
        self._follow_warnings(backend, ordered)
        return ordered

    def _rule(self, c: m.PatternConfig) -> m.Rule | None:
        opts = c.pt2e or m.PT2EOptions()
        if opts.aten == () or c.observation == NOT_OBSERVED:
            return None
        kind = m.RuleKind.CHAIN
        if opts.annotate is not None:
            kind = m.RuleKind.HOOK
        elif c.observation == SHARED:
            kind = m.RuleKind.SHARED if opts.eager else m.RuleKind.PROPAGATE
        elif opts.eager:
            raise self._fail(
                c,
                "pt2e",
                "eager: true applies to shared_observer patterns",
                "add observation: shared_observer, or remove eager",
            )
        if kind is m.RuleKind.HOOK:
            chain = opts.aten or ()
        elif c.complex:
            raise self._fail(
                c,
                None,
                f"the PT2E quantizer matches chains of ops; complex pattern {_shown(c.pattern)} is not one",
                "annotate it with a Python function, pt2e: {annotate: my_module.my_function}, "
                "or leave it out of the quantizer with pt2e: {aten: []}",
            )
        else:
            mapped = opts.aten or self._map(c)
            if mapped is None:
                return None  # FX-only modules: never in an exported graph
            chain = mapped
        if kind in (m.RuleKind.SHARED, m.RuleKind.PROPAGATE) and len(chain) != 1:
            raise self._fail(
                c,
                None,
                f"a shared_observer pattern shares one op's observer; {_shown(c.pattern)} maps to {len(chain)} ops",
                "write the ops one pattern each",
            )
        partitions: tuple[tuple[m.Symbol, ...], ...] = ()
        if opts.match == "source" and kind is m.RuleKind.CHAIN and isinstance(c.pattern, tuple):
            partitions = (self._partition(c),)
            sources: tuple[m.Symbol, ...] = ()
        else:
            sources = self._sources(c, opts, kind)
        if opts.other is not None and not any(
            op.path.startswith(_BINARY) for ops in chain[1:] for op in ops
        ):
            raise self._fail(
                c,
                "pt2e",
                f"other: says what a binary op's other input gets; pattern {_shown(c.pattern)} "
                "has no binary op (aten.add, aten.sub, aten.mul) after its first",
                "remove other:, or name the binary op in the pattern",
            )
        first = c.pattern[0] if isinstance(c.pattern, tuple) else c.pattern
        roots = (first,) if isinstance(first, m.Symbol) and first.kind in _ROOT_KINDS else ()
        weight, bias = self._weight_bias(c, chain)
        if opts.qparams != "first" and kind is not m.RuleKind.SHARED:
            raise self._fail(
                c,
                "pt2e",
                f"qparams: {opts.qparams} applies to shared_observer patterns annotated in order",
                "add observation: shared_observer and eager: true, or remove qparams",
            )
        if opts.weight_axis is not None and (weight is None or kind is not m.RuleKind.CHAIN):
            raise self._fail(
                c,
                "pt2e",
                f"weight_axis applies to a chain whose first op has a weight; {_shown(c.pattern)} has none",
                "set its weight position with input_index: {weight: 1}, or remove weight_axis",
            )
        weighted = weight is not None and kind is m.RuleKind.CHAIN
        if opts.reused_weight is not None and not weighted:
            raise self._fail(
                c,
                "pt2e",
                f"reused_weight applies to a chain whose first op has a weight; "
                f"{_shown(c.pattern)} has none",
                "set its weight position with input_index: {weight: 1}, or remove reused_weight",
            )
        if opts.operator_types is not None and self._operator_type != "patterns":
            raise self._fail(
                c,
                "pt2e",
                "operator_types says which set_operator_type overloads select a pattern; "
                "this quantizer's set_operator_type selects nodes",
                "add operator_type: patterns to the quantizer, or remove operator_types",
            )
        if opts.scope != "all_ops" and self._scopes != QUANTIZER_SCOPES[0]:
            raise self._fail(
                c,
                "pt2e",
                f"scope: {opts.scope} applies to a quantizer with scopes: modules; this one has "
                f"scopes: {self._scopes}",
                "remove scope",
            )
        if opts.scope != "all_ops" and kind not in (m.RuleKind.CHAIN, m.RuleKind.SHARED):
            raise self._fail(
                c,
                "pt2e",
                f"scope: {opts.scope} applies to patterns annotated in order; pattern "
                f"{_shown(c.pattern)} "
                + (
                    "is annotated by its function" if kind is m.RuleKind.HOOK else "only propagates"
                ),
                "remove scope",
            )
        if opts.qat_config is None:
            through_bn = any(op.path in BATCH_NORM for ops in chain[1:] for op in ops)
            qat, qat_if_dynamic = through_bn, False
        else:
            qat = opts.qat_config == "required"
            qat_if_dynamic = opts.qat_config == "required_if_dynamic"
        self._mixed_dtypes(c, kind)
        allows = self._allows(self._dtypes_of(c)) if kind is not m.RuleKind.PROPAGATE else ()
        return m.Rule(
            name=_shown(c.pattern),
            kind=kind,
            chain=chain,
            sources=sources,
            weight=weight,
            bias=bias,
            allows=allows,
            skip=opts.skip,
            annotate=opts.annotate,
            qat=qat,
            weight_axis=opts.weight_axis,
            qparams=opts.qparams,
            any_float=opts.any_float,
            partitions=partitions,
            roots=roots,
            other=opts.other,
            when=opts.when,
            opt_in=opts.opt_in,
            reused_weight=(opts.reused_weight or self._reused) if weighted else "match",
            operator_types=opts.operator_types,
            qat_if_dynamic=qat_if_dynamic,
            scope=opts.scope,
            origins=(c.origin,) if c.origin is not None else (),
        )

    def _partition(self, c: m.PatternConfig) -> tuple[m.Symbol, ...]:
        """The source types a chain is found by (match: source): its modules and functions."""
        assert isinstance(c.pattern, tuple)
        out = []
        for e in c.pattern:
            if not (isinstance(e, m.Symbol) and e.kind in _ROOT_KINDS):
                raise self._fail(
                    c,
                    "pt2e",
                    f"match: source finds a chain by the module classes and functions it was "
                    f"exported from; {_shown(e)} in pattern {_shown(c.pattern)} is not one",
                    "name a module class or function at every position, or match by ATen ops",
                )
            out.append(e)
        return tuple(out)

    def _sources(
        self, c: m.PatternConfig, opts: m.PT2EOptions, kind: m.RuleKind
    ) -> tuple[m.Symbol, ...]:
        if opts.match != "source":
            return ()
        p = c.pattern
        if kind in (m.RuleKind.PROPAGATE, m.RuleKind.HOOK):
            raise self._fail(
                c,
                "pt2e",
                f"match: source applies to patterns annotated in order; pattern {_shown(p)} "
                + (
                    "is annotated by its function" if kind is m.RuleKind.HOOK else "only propagates"
                ),
                "a shared_observer pattern is annotated in order with eager: true",
            )
        if not (isinstance(p, m.Symbol) and p.kind in (m.SymbolKind.MODULE, m.SymbolKind.FUNCTION)):
            raise self._fail(
                c,
                "pt2e",
                f"match: source finds the nodes one module class or function exported to; "
                f"pattern {_shown(p)} is not one",
                "match the pattern by its ATen ops (the default)",
            )
        assert isinstance(p, m.Symbol)
        return (p,)

    def _weight_bias(self, c: m.PatternConfig, chain: m.AtenChain) -> tuple[int | None, int | None]:
        given = dict(c.input_type_to_index)
        if "weight" in given or "bias" in given:
            return given.get("weight"), given.get("bias")
        if not chain:
            return None, None
        found = {WEIGHT_BIAS.get(op.path) for op in chain[0]}
        if len(found) == 1:
            only = found.pop()
            if only is not None:
                return only
        return None, None

    # ------------------------------------------------------------ mapping

    def _table(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """The mapping table by the identity of the object each key names (method names as is)."""
        if self._index is None:
            index: dict[str, tuple[tuple[str, ...], ...]] = {}
            for key, chain in MAPPING.items():
                if "." not in key:
                    index[key] = chain
                    continue
                try:
                    index.setdefault(self.ctx.facts.lookup(key).identity, chain)
                except UnknownSymbol:
                    continue  # not in this torch
            self._index = index
        return self._index

    def _map(self, c: m.PatternConfig) -> m.AtenChain | None:
        """The ATen chain of a pattern through the table; None if it is FX-only."""
        elements = c.pattern if isinstance(c.pattern, tuple) else (c.pattern,)
        out: list[tuple[m.Symbol, ...]] = []
        for e in elements:
            if isinstance(e, m.Symbol) and e.kind == m.SymbolKind.OP:
                out.append((e,))
                continue
            if isinstance(e, m.Symbol) and e.path.startswith(FX_ONLY_PREFIXES):
                return None
            if isinstance(e, str):
                chain = self._table().get(e)
            elif isinstance(e, m.Symbol):
                chain = self._table().get(self.ctx.facts.lookup(e.path).identity)
            else:
                chain = None
            if chain is None and isinstance(e, m.Symbol):
                fusing = self._fused_by(e)
                if fusing is not None:
                    if self._covered(fusing):
                        return (
                            None  # FX-only: PT2E graphs hold the ops it fuses, a rule of their own
                        )
                    raise self._fail(
                        c,
                        None,
                        f"{spell(e.path)} is FX's fused module of pattern {_shown(fusing.pattern)}"
                        + (f" ({fusing.origin.item})" if fusing.origin is not None else "")
                        + "; an exported graph holds that pattern's ops unfused, but the PT2E "
                        f"quantizer leaves it out, so nothing covers pattern {_shown(c.pattern)}",
                        f"give pattern {_shown(fusing.pattern)} a PT2E rule (pt2e: {{aten: ...}} "
                        "or pt2e: {annotate: ...}), or leave this pattern out of the quantizer "
                        "with pt2e: {aten: []}",
                    )
            if chain is None and isinstance(e, m.Symbol) and self._fused_module(c, e):
                root = c.root_module
                raise self._fail(
                    c,
                    None,
                    f"{spell(e.path)} is a fused module"
                    + (f" (its root is {spell(root.path)})" if root is not None else "")
                    + ": torch.export records the modules it holds, unfused, so no ATen op "
                    "stands for it, and no pattern of this backend fuses into it",
                    "write the chain it fuses as a pattern with 'fused: "
                    f"{spell(e.path)}' (its rule quantizes the unfused ops, and this pattern "
                    "stays FX-only), or leave this pattern out of the quantizer with "
                    "pt2e: {aten: []}",
                )
            if chain is None:
                shown = repr(e) if isinstance(e, str) else spell(str(getattr(e, "path", e)))
                # bcfg diffrev (issue 36.4): a torch.library op is named by its own namespace.
                likely = (
                    exported_op(e.path, self.ctx.facts.allow) if isinstance(e, m.Symbol) else None
                ) or f"aten.{_aten_name(e)}.default"
                raise self._fail(
                    c,
                    None,
                    f"{shown} has no ATen mapping: the PT2E quantizer cannot match pattern {_shown(c.pattern)}",
                    "name the ATen ops torch.export emits for it, likely "
                    f"pt2e: {{aten: {likely}}} (check the exported graph), "
                    "or leave the pattern out of the quantizer with pt2e: {aten: []}",
                )
            out.extend(tuple(self._op(path) for path in ops) for ops in chain)
        return tuple(out)

    def _fused_by(self, e: m.Symbol) -> m.PatternConfig | None:
        """The pattern of the backend whose ``fused:`` module ``e`` is, if any."""
        if e.kind != m.SymbolKind.MODULE:
            return None
        return self._fusing.get(self.ctx.facts.identity(e.path))

    def _fused_module(self, c: m.PatternConfig, e: m.Symbol) -> bool:
        """Whether module ``e`` (pattern ``c``, or an element of it) is a fused module: a fuser
        of the backend builds it, or ``c`` is ``e`` alone with another module as its root."""
        if e.kind != m.SymbolKind.MODULE:
            return False
        ident = self.ctx.facts.identity(e.path)
        if ident in self._built:
            return True
        root = c.root_module
        return c.pattern == e and root is not None and self.ctx.facts.identity(root.path) != ident

    def _covered(self, fusing: m.PatternConfig) -> bool:
        """Whether the quantizer has a rule for a fusion's own (unfused) pattern."""
        opts = fusing.pt2e or m.PT2EOptions()
        if opts.aten == () or fusing.observation == NOT_OBSERVED:
            return False
        return not fusing.complex or opts.annotate is not None

    def _op(self, path: str) -> m.Symbol:
        facts = self.ctx.facts.lookup(path)
        return m.Symbol(path, facts.kind, facts.module)

    # ------------------------------------------------------------ dtypes

    def _dtypes_of(self, c: m.PatternConfig) -> m.PatternConfig:
        """The config whose dtype configs a rule allows: a fusion's own, or, when it has none,
        its fused module's (by which FX quantizes the fusion); a rule with none would take any
        quantization config. A fusion into a module no pattern quantizes is warned about."""
        if c.dtype_configs or c.fused_module is None:
            return c
        fused = self._modules.get(self.ctx.facts.identity(c.fused_module.path))
        if fused is not None and fused.dtype_configs:
            return fused
        self.ctx.warning(
            c.field_span("fused"),
            f"pattern {_shown(c.pattern)} has no dtypes, nor has its fused module "
            f"{spell(c.fused_module.path)} a pattern with dtypes: FX never quantizes the fusion, "
            "and the PT2E rule would allow any quantization config",
            f"give pattern {spell(c.fused_module.path)} dtypes, or give pattern "
            f"{_shown(c.pattern)} the dtypes its kernel takes",
        )
        return c

    def _mixed_dtypes(self, c: m.PatternConfig, kind: m.RuleKind) -> None:
        """A static dtype config whose quantized input and output dtypes differ: FX never matches
        it (one QConfig activation observes both), PT2E can (a QuantizationConfig has an input
        and an output spec), and a shared-observer op follows its input whatever it says."""
        for d in c.dtype_configs:
            i, o = d.input, d.output
            if d.is_dynamic or i is None or o is None:
                continue
            if PT2E_DTYPES.get(i.dtype) is None or PT2E_DTYPES.get(o.dtype) is None:
                continue
            if PT2E_DTYPES[i.dtype] == PT2E_DTYPES[o.dtype]:
                continue
            named = f"dtype config {d.name}" if d.name else "a dtype config"
            if kind in (m.RuleKind.PROPAGATE, m.RuleKind.SHARED):
                pt2e = (
                    "the PT2E quantizer quantizes it anyway, with its input's spec (a "
                    "shared-observer op follows its input)"
                )
            else:
                pt2e = (
                    "the PT2E quantizer quantizes it with a config whose input and output "
                    "specs differ"
                )
            self.ctx.warning(
                c.field_span("dtypes"),
                f"pattern {_shown(c.pattern)}: {named} has input {i.dtype} and output "
                f"{o.dtype}; FX observes both with one QConfig activation, so it never matches "
                f"and leaves the pattern float, while {pt2e}: the spec means two things",
                "give input and output the same dtype",
            )
            return

    def _allows(self, c: m.PatternConfig) -> tuple[m.Allows, ...]:
        out = []
        for d in c.dtype_configs:
            out.append(
                m.Allows(
                    input=self._quant(c, d.input),
                    output=self._quant(c, d.output),
                    weight=self._quant(c, d.weight),
                    bias=self._quant(c, m.DType(d.bias)) if d.bias is not None else None,
                    dynamic=d.is_dynamic,
                    name=d.name,
                )
            )
        return tuple(dict.fromkeys(out))

    def _quant(self, c: m.PatternConfig, d: m.DType | None) -> m.Quant | None:
        if d is None:
            return None
        if d.dtype not in PT2E_DTYPES:
            raise self._fail(
                c,
                "dtypes",
                f"dtype {d.dtype} has no PT2E equivalent: a PT2E quantizer cannot quantize to it",
                f"PT2E dtypes are {', '.join(k for k in PT2E_DTYPES if k != 'float32')} and float; "
                "leave the pattern out of the quantizer with pt2e: {aten: []}",
            )
        if d.scale_max_upper_bound is not None:
            raise self._fail(
                c,
                "dtypes",
                f"constraint {d.name or d.dtype} sets scale_max, which no PT2E observer has: "
                "the quantizer could not check it",
                "remove scale_max, or leave the pattern out of the quantizer with pt2e: {aten: []}",
            )
        return m.Quant(
            PT2E_DTYPES[d.dtype],
            d.quant_min_lower_bound,
            d.quant_max_upper_bound,
            d.scale_min_lower_bound,
            d.scale_exact_match,
            d.zero_point_exact_match,
            name=d.name,
        )

    # ------------------------------------------------------------ checks

    def _order_warnings(self, rules: tuple[m.Rule, ...]) -> None:
        """A fused chain tried after a single-op rule of its first op never matches: say so.

        ``tried_order`` puts longer chains first, so this happens only where a
        rule that keeps its place (a hook, an eager shared op) stands between them.
        """
        for i, rule in enumerate(rules):
            if rule.kind is not m.RuleKind.CHAIN or len(rule.chain) < 2 or not rule.origins:
                continue
            for j, earlier in enumerate(rules[:i]):
                single = earlier.kind is m.RuleKind.CHAIN and len(earlier.chain) == 1
                if not (single and set(rule.chain[0]) <= set(earlier.chain[0])):
                    continue
                if earlier.sources:
                    continue
                fixed = next((r for r in rules[j + 1 : i] if r.kind in _KEEP_PLACE), None)
                if fixed is None:  # tried_order never leaves them so; nothing to say
                    continue
                where = earlier.origins[0].item if earlier.origins else None
                self.ctx.warning(
                    rule.origins[0].item,
                    f"pattern {rule.name} is tried after pattern {earlier.name}"
                    + (f" ({where})" if where is not None else "")
                    + f", which annotates its first op first: pattern {fixed.name} between them "
                    "keeps its place, so the PT2E quantizer never fuses it",
                    f"write pattern {rule.name} before pattern {fixed.name}, or pattern "
                    f"{earlier.name} after it",
                )
                break

    def _follow_warnings(self, backend: m.Backend, rules: tuple[m.Rule, ...]) -> None:
        """A shared-observer op that only follows (propagates) takes whatever its quantized input
        has; FX quantizes it only with a QConfig its dtype configs allow. Warn where another
        pattern's static output dtype is one its dtypes do not name: FX would leave the op float
        after that pattern, the PT2E quantizer quantizes it."""
        produced: dict[str, tuple[str, m.PatternConfig]] = {}
        for c in backend.configs:
            if c.observation in (SHARED, NOT_OBSERVED):
                continue
            for d in c.dtype_configs:
                out = d.output
                if d.is_dynamic or out is None or PT2E_DTYPES.get(out.dtype) is None:
                    continue
                produced.setdefault(str(PT2E_DTYPES[out.dtype]), (out.dtype, c))
        followers = {id(o): r for r in rules if r.kind is m.RuleKind.PROPAGATE for o in r.origins}
        for c in backend.configs:
            if c.observation != SHARED or c.origin is None or id(c.origin) not in followers:
                continue
            taken = {
                str(PT2E_DTYPES[d.input.dtype]): d.input.dtype
                for d in c.dtype_configs
                if d.input is not None and PT2E_DTYPES.get(d.input.dtype) is not None
            }
            if not taken:
                continue
            missing = [produced[k][0] for k in sorted(set(produced) - set(taken))]
            if not missing:
                continue
            word, other = next(v for v in produced.values() if v[0] == missing[0])
            self.ctx.warning(
                c.field_span("dtypes"),
                f"pattern {_shown(c.pattern)} shares its input's observer, and its dtypes take "
                f"{', '.join(sorted(taken.values()))} only: after pattern "
                f"{_shown(other.pattern)}, whose output is {word}, FX leaves it float, while "
                "the PT2E quantizer follows its quantized input",
                f"add a dtype config for {', '.join(missing)}, or pt2e: {{aten: []}} to "
                "keep the PT2E quantizer from following",
            )

    def _fail(self, c: m.PatternConfig, field: str | None, message: str, hint: str | None) -> Fail:
        """An error at the pattern (or one of its fields), with the use/for steps that placed it."""
        origin = c.origin
        span = None
        notes: tuple[str, ...] = ()
        if origin is not None:
            span = c.field_span(field) if field else origin.item
            notes = tuple(
                f"in '{s.text}' at {s.span}"
                for s in reversed(origin.chain)
                if s.kind == m.StepKind.USE
            )
        self.ctx.diag.error(span, message, hint, notes)
        return Fail()


# Binary ops a chain's other: applies to; what a rule's roots (and partitions) may be.
_BINARY = ("torch.ops.aten.add.", "torch.ops.aten.sub.", "torch.ops.aten.mul.")
_ROOT_KINDS = (m.SymbolKind.MODULE, m.SymbolKind.FUNCTION)

# Rules that read what earlier rules annotated keep their place in the spec's order.
_KEEP_PLACE = (m.RuleKind.SHARED, m.RuleKind.HOOK)


def tried_order(rules: Sequence[m.Rule]) -> tuple[m.Rule, ...]:
    """The order a PT2E quantizer tries ``rules`` (given in the spec's order), as FX orders patterns.

    Chain rules are tried longest chain first, in the spec's order among equals,
    so a spec written in torch's usual order (single ops before their fusions)
    fuses as FX does. Rules that read what earlier rules annotated keep their
    place: an eager shared op (its input shares its producer's spec if that is
    already quantized) and an ``annotate`` hook; chains are sorted only between
    two of them. Propagated shared ops are not tried in order (they follow
    quantized ops after every rule) and keep their place too.
    """
    out = list(rules)
    start = 0
    for end in [*(i for i, r in enumerate(rules) if r.kind in _KEEP_PLACE), len(rules)]:
        slots = [i for i in range(start, end) if rules[i].kind is m.RuleKind.CHAIN]
        ranked = sorted((rules[i] for i in slots), key=lambda r: -len(r.chain))
        for slot, rule in zip(slots, ranked):
            out[slot] = rule
        start = end + 1
    return tuple(out)


def _merge_key(r: m.Rule) -> tuple:
    """Rules with the same key match the same nodes the same way: they are one rule."""
    return (
        r.kind, r.chain, r.weight, r.bias, r.qat, r.skip, r.annotate, bool(r.sources),
        bool(r.partitions), r.other, r.when, r.opt_in, r.weight_axis, r.qparams,
        r.any_float, r.reused_weight, r.operator_types, r.qat_if_dynamic, r.scope,
    )  # fmt: skip


def _merge(a: m.Rule, b: m.Rule) -> m.Rule:
    """Two patterns that map to the same rule: one rule that allows what either allows."""
    return replace(
        a,
        sources=tuple(dict.fromkeys(a.sources + b.sources)),
        partitions=tuple(dict.fromkeys(a.partitions + b.partitions)),
        roots=tuple(dict.fromkeys(a.roots + b.roots)),
        allows=tuple(dict.fromkeys(a.allows + b.allows)),
        origins=a.origins + b.origins,
    )


def _aten_name(e: object) -> str:
    """The ATen op a module, function or method name most likely exports as:
    ``nn.PixelShuffle`` and ``F.pixel_shuffle`` -> ``pixel_shuffle``."""
    name = e if isinstance(e, str) else str(getattr(e, "path", e)).rpartition(".")[2]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
