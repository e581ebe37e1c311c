"""``classes: [...]``: the classes a quantizer module exports under the target's own names.

Each class record says the class's ``name``; its ``base`` (hook classes by dotted
path, mixed in before the generated class, and at most one earlier class of the
list to derive from); its constructor's ``params`` in order, each with its default
(``true``, ``false``, ``none``, a number, a string, an object by dotted path, or
``required``); which of them are ``fixed`` (only the default is reproduced);
an ``init`` hook called as ``init(self, *params)``; and its ``stages`` in order,
each ``{config: C}`` (every op), ``{config: C, ops: [...]}`` (the ops listed) or
``{config: C, chains: [...]}`` (every op of the rules whose chain begins with one
of the ops listed), where ``C`` is a parameter or an object by dotted path.

Objects by dotted path (defaults and stage configs) are imported when the class is
constructed, not at generation: they may live in a package the generated module
must not need at import (ExecuTorch's configs need its Arm dependencies).
"""

from __future__ import annotations

from typing import Any

from ...lang import syntax as syn
from ...lang.pt2e_keys import CLASS_RECORD, STAGE_RECORD, Scopes
from ...lang.vocabulary import BOOLEANS
from ...sources import Span
from .. import model as m
from ..checks import arity_mismatch
from ..context import Ctx, Fail
from ..evaluate import Evaluator
from ..load import LoadedFile
from ..values import Num, Seq, Sym, Text, describe
from .names import Names, module_heads, rule_symbols, same
from .pair_classes import PairClasses

CLASS_KEYS = tuple(CLASS_RECORD)  # the key table's rows (the language server reads them too)
STAGE_KEYS = tuple(STAGE_RECORD)
_LITERALS: dict[str, Any] = {"true": True, "false": False, "none": None}


class Classes(PairClasses):
    """Resolves one quantizer's ``classes:`` field against its rules."""

    def __init__(
        self,
        ctx: Ctx,
        evaluator: Evaluator,
        f: LoadedFile,
        taken: tuple[str, ...],
        pairs: bool = False,
        transforms: tuple[m.Hook, ...] = (),
    ):
        self.ctx = ctx
        self.evaluator = evaluator
        self.f = f
        self.names = Names(ctx, taken)
        self.getter = taken[0] if taken else ""
        self.transforms = transforms
        # scopes: pairs: its pair class and pairs functions (by name: their parameters) so far.
        self.pairs = pairs
        self.pair_class: str | None = None
        self.pair_classes: set[str] = set()
        self.required: dict[str, tuple[str, ...]] = {}
        self.functions: dict[str, tuple[str, ...]] = {}
        self.generated = ""  # the generated class's name: a record of that name is that class
        # the quantizer's scopes: stages only under composable (the other bases are configured
        # by set_global and the rest, which an init hook calls)
        self.scopes = Scopes.COMPOSABLE
        self.api = False  # the generated class mixes in the composable API
        self.base_spans: dict[str, Span] = {}

    def resolve(self, e: syn.Expr, rules: tuple[m.Rule, ...]) -> tuple[m.QuantClass, ...]:
        if not isinstance(e, syn.ListExpr):
            raise self.ctx.fail(
                e.span,
                "classes must be a list of class records",
                "like classes: [{name: MyQuantizer, stages: [{config: my.CONFIG}]}]",
            )
        out: list[m.QuantClass] = []
        seen: dict[str, Span] = {}
        self.names.taken |= module_heads(rule_symbols(rules, self.transforms))
        failed = False
        for item in e.items:
            try:
                c = self._class(item, rules, seen)
            except Fail:
                failed = True
                continue
            seen[c.name] = item.span
            out.append(c)
        if failed:
            raise Fail
        self._mro(out)
        return tuple(out)

    def _mro(self, classes: list[m.QuantClass]) -> None:
        """Every class's bases have a consistent order (Python's C3 linearisation, the
        mixins taken as classes of their own), so the generated module imports."""
        base = "the runtime's base"
        own = next((c for c in classes if c.name == self.generated), None)
        bases = {self.generated: [s.path for s in own.mixins] if own else []}
        bases[self.generated] += ["the API mixin", base] if self.api else [base]
        for c in classes:
            if c.name != self.generated and not c.function:
                parent = c.parent or ("PatternPair" if c.pair else self.generated)
                bases[c.name] = [s.path for s in c.mixins] + [parent]
        done: dict[str, list[str]] = {}

        def mro(name: str) -> list[str]:
            if name not in done:
                done[name] = [
                    name,
                    *_c3([mro(b) for b in bases.get(name, ())] + [bases.get(name, [])]),
                ]
            return done[name]

        failed = False
        for c in classes:
            if c.function:
                continue
            where = self.base_spans.get(c.name, c.span)
            assert where is not None
            twice = [b for b in dict.fromkeys(bases[c.name]) if bases[c.name].count(b) > 1]
            try:
                if twice:
                    raise self.ctx.fail(where, f"class {c.name} names base {twice[0]} twice")
                try:
                    mro(c.name)
                except ValueError as e:
                    own_bases = bases[c.name]
                    why = next(
                        (
                            f"{b} is named before {later}, which derives from it already"
                            for i, b in enumerate(own_bases)
                            for later in own_bases[i + 1 :]
                            if b in _safe_mro(mro, later)
                        ),
                        str(e),
                    )
                    raise self.ctx.fail(
                        where,
                        f"class {c.name}'s bases have no consistent order (Python's method "
                        f"resolution order): {why}",
                        "name a mixin once, on the class it first applies to: a class derived "
                        "from that one has it already",
                    ) from None
            except Fail:
                failed = True
        if failed:
            raise Fail

    def _record(self, e: syn.Expr, keys: tuple[str, ...], what: str) -> dict[str, syn.Entry]:
        if not isinstance(e, syn.Record):
            raise self.ctx.fail(
                e.span, f"a {what} is a record, like {{{keys[0]}: ...}}", f"keys: {', '.join(keys)}"
            )
        out: dict[str, syn.Entry] = {}
        for entry in e.entries:
            key = str(entry.key)
            if key not in keys:
                raise self.ctx.fail(
                    entry.span,
                    f"unknown {what} key '{key}'",
                    self.ctx.suggest(key, keys) or f"keys are: {', '.join(keys)}",
                )
            if key in out:
                raise self.ctx.fail(entry.span, f"{what} key '{key}' is set twice")
            out[key] = entry
        return out

    def _name(self, e: syn.Expr, what: str) -> str:
        if isinstance(e, syn.DottedName) and len(e.parts) == 1 and e.parts[0].isidentifier():
            return e.parts[0]
        raise self.ctx.fail(e.span, f"{what} must be a plain name, like MyQuantizer")

    def _class(self, e: syn.Expr, rules: tuple[m.Rule, ...], seen: dict[str, Span]) -> m.QuantClass:
        rec = self._record(e, CLASS_KEYS, "class record")
        word = self._pairs_keys(rec)
        if word not in rec:
            raise self.ctx.fail(e.span, "a class record needs a name", "add name: MyQuantizer")
        name = self._name(rec[word].value, "a class name")
        where = rec[word].value.span
        self.names.cls(name, where, "pairs function name" if word == "function" else "class name")
        pair = "pair" in rec and getattr(rec["pair"].value, "parts", ()) == ("true",)
        if same(name) == same(self.generated) and (word == "function" or pair):
            what = "pairs function" if word == "function" else "pair class"
            raise self.ctx.fail(
                where,
                f"{what} '{name}' is named like the generated class (named after the backend), "
                "whose constructor appends its pairs",
                f"name the {what} otherwise; a class record of this name is the generated class",
            )
        mixins, parent = self._bases(rec.get("base"), seen)
        if "base" in rec:
            self.base_spans[name] = rec["base"].value.span
        if parent is not None and name == self.generated:
            raise self.ctx.fail(
                where,
                f"class '{name}' is the generated class itself (named after the backend), "
                f"which derives from the runtime's base; it cannot derive from '{parent}'",
                f"name it otherwise to derive from {parent}, or remove {parent} from its base",
            )
        init = None
        if "init" in rec:
            v = self.evaluator.eval(self.f, rec["init"].value, {})
            if not (isinstance(v, Sym) and v.symbol.kind == m.SymbolKind.FUNCTION):
                raise self.ctx.fail(
                    v.span,
                    f"init must be a function named by its dotted path, got {describe(v)}",
                    "the class calls it as init(self, *params) after the base is constructed",
                )
            init = v.symbol
        for key, symbols in (("base", mixins), ("init", (init,) if init else ())):
            if key in rec:
                self.names.imports(symbols, rec[key].value.span)
        params = self._params(rec.get("params"), rec.get("fixed"))
        if init is not None:
            n = 1 + len(params)
            problem = arity_mismatch(self.ctx.facts.signature(init.path), n)
            if problem:
                call = ", ".join(["self", *(p.name for p in params)])
                raise self.ctx.fail(
                    rec["init"].value.span,
                    f"init '{init.path}' does not fit the call the class makes: {problem}",
                    f"the class calls it as init({call}); make the hook take them",
                )
        required = next((p for p in params if p.required), None)
        if required is not None and same(name) == same(self.generated):
            record = rec["params"].value
            assert isinstance(record, syn.Record)
            entry = next(x for x in record.entries if x.key == required.name)
            raise self.ctx.fail(
                entry.span,
                f"parameter '{required.name}' of the generated class {name} is required, and "
                f"its getter {self.getter}() constructs it with no arguments",
                "give it a default (none, or an object by dotted path, made at construction)",
            )
        if self.pairs:
            return self._pairs_class(rec, m.QuantClass(name, mixins, parent, params, init), e)
        names = [p.name for p in params]
        if "stages" in rec and self.scopes is not Scopes.COMPOSABLE:
            raise self.ctx.fail(
                rec["stages"].span,
                f"stages applies to a class of a quantizer with scopes: composable (its "
                f"constructor adds them); this one has scopes: {self.scopes}, whose base is "
                "configured by set_global and its other methods",
                "remove stages, and configure the class in its init hook: a function called "
                "as init(self, *params), like init: hooks.configure",
            )
        stages = self._stages(rec.get("stages"), names, rules)
        return m.QuantClass(name, mixins, parent, params, init, stages, e.span)

    def _bases(
        self, entry: syn.Entry | None, seen: dict[str, Span]
    ) -> tuple[tuple[m.Symbol, ...], str | None]:
        if entry is None:
            return (), None
        items = entry.value.items if isinstance(entry.value, syn.ListExpr) else (entry.value,)
        mixins: list[m.Symbol] = []
        parent = None
        for x in items:
            if isinstance(x, syn.DottedName) and len(x.parts) == 1 and x.parts[0] in seen:
                if parent is not None:
                    raise self.ctx.fail(x.span, "a class derives from one earlier class")
                parent = x.parts[0]
                continue
            v = self.evaluator.eval(self.f, x, {})
            if not (isinstance(v, Sym) and v.symbol.kind == m.SymbolKind.CLASS):
                hint = (
                    f"an earlier class of the list: {', '.join(seen)}"
                    if seen
                    else "a base is a hook class named by its dotted path"
                )
                raise self.ctx.fail(
                    v.span,
                    f"a base must be a class, or a class of this list; got {describe(v)}",
                    hint,
                )
            mixins.append(v.symbol)
        return tuple(mixins), parent

    def _params(self, entry: syn.Entry | None, fixed: syn.Entry | None) -> tuple[m.ClassParam, ...]:
        out: list[m.ClassParam] = []
        if entry is not None:
            if not isinstance(entry.value, syn.Record):
                raise self.ctx.fail(
                    entry.value.span,
                    "params must be a record of parameter: default",
                    "like params: {config: none, strict: false}",
                )
            self.names.params([(str(p.key), p.span) for p in entry.value.entries])
            for p in entry.value.entries:
                key = str(p.key)
                out.append(self._list_param(key, p.value) or self._param(key, p.value))
                if out[-1].required and any(not q.required for q in out[:-1]):
                    raise self.ctx.fail(
                        p.span, f"required parameter '{p.key}' follows one with a default"
                    )
        if fixed is None:
            return tuple(out)
        names = [p.name for p in out]
        items = fixed.value.items if isinstance(fixed.value, syn.ListExpr) else (fixed.value,)
        for x in items:
            name = self._name(x, "a fixed parameter")
            if name not in names:
                raise self.ctx.fail(
                    x.span,
                    f"fixed names no parameter of this class: '{name}'",
                    self.ctx.suggest(name, names) or f"parameters: {', '.join(names) or 'none'}",
                )
            i = names.index(name)
            if out[i].required or out[i].path is not None or out[i].calls is not None:
                raise self.ctx.fail(x.span, f"fixed parameter '{name}' needs a literal default")
            out[i] = m.ClassParam(name, out[i].value, fixed=True)
        return tuple(out)

    def _param(self, name: str, e: syn.Expr) -> m.ClassParam:
        if isinstance(e, (syn.Int, syn.Float, syn.Str, syn.BinOp, syn.Neg)):
            # a number or a string, by the rule of every record (finite, in range; -1, 2 ** -8)
            v = self.evaluator.eval(self.f, e, {})
            if isinstance(v, (Num, Text)):
                return m.ClassParam(name, v.value)
        if isinstance(e, syn.DottedName) and len(e.parts) == 1:
            word = e.parts[0]
            if word == "required":
                return m.ClassParam(name, required=True)
            if word in _LITERALS:
                return m.ClassParam(name, _LITERALS[word])
        if isinstance(e, syn.DottedName) and len(e.parts) > 1:
            return m.ClassParam(name, path=self._path(e))
        raise self.ctx.fail(
            e.span,
            f"the default of '{name}' must be {', '.join(BOOLEANS)}, none, required, a number, "
            "a string or an object by dotted path",
        )

    def _path(self, e: syn.DottedName) -> str:
        """A dotted path through the file's aliases, not imported (the class imports it)."""
        if any("${" in p for p in e.parts):
            raise self.ctx.fail(e.span, "an object's path cannot hold a ${...} hole here")
        head = self.evaluator.expand_alias(self.f, e.parts[0], e.span)
        return ".".join([head, *e.parts[1:]])

    def _stages(
        self, entry: syn.Entry | None, params: list[str], rules: tuple[m.Rule, ...]
    ) -> tuple[m.ClassStage, ...]:
        if entry is None:
            return ()
        if not isinstance(entry.value, syn.ListExpr):
            raise self.ctx.fail(entry.value.span, "stages must be a list of stage records")
        out = []
        for x in entry.value.items:
            rec = self._record(x, STAGE_KEYS, "stage")
            if "config" not in rec:
                raise self.ctx.fail(x.span, "a stage needs a config", "add config: a parameter")
            if "ops" in rec and "chains" in rec:
                raise self.ctx.fail(rec["chains"].span, "a stage takes ops or chains, not both")
            config = self._config(rec["config"].value, params, "a stage's config")
            targets: tuple[m.Symbol, ...] | None = None
            firsts: tuple[m.Symbol, ...] = ()
            if "ops" in rec:
                targets = self._ops(rec["ops"].value, rules)
            elif "chains" in rec:  # the instance finds their ops (runtime chain_ops)
                firsts = self._ops(rec["chains"].value)
                if not any(r.kind == "chain" and set(r.chain[0]) & set(firsts) for r in rules):
                    raise self.ctx.fail(
                        rec["chains"].value.span,
                        "no chain of this quantizer's rules begins with these ops",
                        "list the first ops of chain patterns of the backend",
                    )
            out.append(m.ClassStage(config.param, config.path, targets, firsts))
        return tuple(out)

    def _config(self, c: syn.Expr, params: list[str], what: str) -> m.ClassStage:
        """A config: a parameter of the class, or an object by dotted path."""
        if isinstance(c, syn.DottedName) and len(c.parts) == 1 and c.parts[0] in params:
            return m.ClassStage(c.parts[0], None)
        if isinstance(c, syn.DottedName) and len(c.parts) > 1:
            return m.ClassStage(None, self._path(c))
        word = c.parts[0] if isinstance(c, syn.DottedName) else describe_syntax(c)
        raise self.ctx.fail(
            c.span,
            f"unknown parameter '{word}' in {what}",
            self.ctx.suggest(word, params)
            or f"a config is a parameter ({', '.join(params) or 'this class has none'}) "
            "or an object by dotted path",
        )

    def _ops(self, e: syn.Expr, rules: tuple[m.Rule, ...] = ()) -> tuple[m.Symbol, ...]:
        """ATen ops; with ``rules``, each one an op of one of them (a stage sees only the
        nodes of its ops, and only a rule annotates one)."""
        v = self.evaluator.eval(self.f, e, {})
        items = v.items if isinstance(v, Seq) else (v,)
        known: set[m.Symbol] | None = {op for r in rules for pos in r.chain for op in pos}
        if not all(r.chain for r in rules):
            known = None  # a hook that names no ops may annotate any op
        out = []
        for x in items:
            if not (isinstance(x, Sym) and x.symbol.kind == m.SymbolKind.OP):
                raise self.ctx.fail(
                    x.span,
                    f"a stage's ops are ATen ops, like aten.conv2d.default; got {describe(x)}",
                )
            if rules and known is not None and x.symbol not in known:
                raise self.ctx.fail(
                    x.span,
                    f"no rule of this quantizer has {spell_op(x.symbol)}: the stage would "
                    "annotate nothing there",
                    "list ops of the backend's patterns (as under chains:)",
                )
            out.append(x.symbol)
        return tuple(out)


def _safe_mro(mro: Any, name: str) -> list[str]:
    try:
        return list(mro(name))
    except ValueError:
        return []


def _c3(sequences: list[list[str]]) -> list[str]:
    """Python's C3 merge of linearisations; ValueError naming the bases it cannot order."""
    seqs = [list(q) for q in sequences if q]
    out: list[str] = []
    while seqs:
        head = next((q[0] for q in seqs if not any(q[0] in r[1:] for r in seqs)), None)
        if head is None:
            stuck = ", ".join(dict.fromkeys(q[0] for q in seqs))
            raise ValueError(f"{stuck} must each come before another")
        out.append(head)
        seqs = [q[1:] if q[0] == head else q for q in seqs]
        seqs = [q for q in seqs if q]
    return out


def spell_op(op: m.Symbol) -> str:
    return op.path.removeprefix("torch.ops.")


def describe_syntax(e: syn.Expr) -> str:
    return type(e).__name__.lower()
