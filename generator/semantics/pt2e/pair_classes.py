"""``classes: [...]`` under ``scopes: pairs``: ExecuTorch's Cadence scheme's classes.

A ``scopes: pairs`` quantizer's classes are built of (pattern, config) pairs:

* a **pair class** (``pair: true``): one pair, constructed as
  ``Class(pattern, quantization_config)``, whose pattern is an object with
  ``partition_types()`` (ExecuTorch's pattern objects), the first ops of a rule's chain;
* a **pairs class** (``pairs: [...]``): its constructor appends its pairs to its
  ``quantizers`` parameter (torchao's ``ComposableQuantizer`` name; a fresh list
  if it has none) and composes them, the first pair first. A pair is
  ``{pattern: P, config: C, qat: D}``: ``P`` an object by dotted path (or a list of
  them: one pair each), constructed then; ``C`` a parameter or an object by dotted
  path, and ``D`` the config taken instead when the class's ``is_qat`` parameter is
  true. A name of a pairs function of the list puts its pairs there;
* a **pairs function** (``function: NAME`` instead of ``name:``): returns its pairs, as a
  list (ExecuTorch's ``get_cadence_default_quantizers(is_qat)``). A parameter's
  default may be such a function (or ``[]``): the signature's default is then None,
  which stands for the list it returns (a fresh empty one), called with the
  parameters of the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lang import syntax as syn
from ...lang.pt2e_keys import PAIR_RECORD
from .. import model as m

if TYPE_CHECKING:
    from ..context import Ctx

PAIR_KEYS = tuple(PAIR_RECORD)  # the key table's rows (the language server reads them too)
PAIRS_ONLY = ("pair", "pairs", "function")  # the keys only a class of scopes: pairs takes
PAIR_CLASS = ("name", "base", "pair")  # the keys a pair class takes
QAT = m.PAIRS_QAT


class PairClasses:
    """The part of ``Classes`` that resolves a ``scopes: pairs`` quantizer's class records."""

    ctx: Ctx
    pairs: bool
    pair_class: str | None
    pair_classes: set[str]
    required: dict[str, tuple[str, ...]]  # each pairs function's parameters with no default
    functions: dict[str, tuple[str, ...]]

    def _path(self, e: syn.DottedName) -> str:
        raise NotImplementedError

    def _config(self, c: syn.Expr, params: list[str], what: str) -> m.ClassStage:
        raise NotImplementedError

    def _pairs_keys(self, rec: dict[str, syn.Entry]) -> str:
        """The key that names the record (``name``, or a pairs function's ``function``), after
        refusing the keys of the other scope."""
        if not self.pairs:
            other = next((rec[k] for k in PAIRS_ONLY if k in rec), None)
            if other is not None:
                raise self.ctx.fail(
                    other.span,
                    f"{other.key} is a key of a class of a quantizer with scopes: pairs; this "
                    "one's classes add stages",
                    "write stages: [{config: ...}], or scopes: pairs",
                )
            return "name"
        if "stages" in rec:
            raise self.ctx.fail(
                rec["stages"].span,
                "stages are a key of a class of a quantizer with scopes: composable; a class of "
                "scopes: pairs appends pairs",
                "write pairs: [{pattern: my.Pattern, config: my.config}]",
            )
        if "function" in rec and "name" in rec:
            raise self.ctx.fail(
                rec["function"].span,
                "a record names a class (name) or a pairs function (function), not both",
            )
        return "function" if "function" in rec else "name"

    def _list_param(self, name: str, e: syn.Expr) -> m.ClassParam | None:
        """A parameter whose default is a list: ``[]``, or a pairs function of the list."""
        if not self.pairs:
            return None
        if isinstance(e, syn.ListExpr) and not e.items:
            return m.ClassParam(name, calls="")
        if not (isinstance(e, syn.DottedName) and len(e.parts) == 1):
            return None
        word = e.parts[0]
        if word in self.functions:
            return m.ClassParam(name, calls=word)
        if word in ("true", "false", "none", "required"):
            return None
        raise self.ctx.fail(
            e.span,
            f"the default of '{name}' names no pairs function of the list: '{word}'",
            self.ctx.suggest(word, list(self.functions))
            or "define it earlier: {function: my_pairs, pairs: [...]}",
        )

    def _pairs_class(self, rec: dict[str, syn.Entry], c: m.QuantClass, e: syn.Expr) -> m.QuantClass:
        """A class (or pairs function) of a ``scopes: pairs`` quantizer."""
        pair = "pair" in rec and getattr(rec["pair"].value, "parts", ()) == ("true",)
        if c.parent is not None and (c.parent in self.pair_classes) != pair:
            kind = "pair class" if c.parent in self.pair_classes else "class of pairs"
            raise self.ctx.fail(
                rec["base"].value.span,
                f"class {c.name} derives from {c.parent}, a {kind}; "
                + (
                    "a pair class (pair: true) derives from pair classes only"
                    if pair
                    else "a class of pairs derives from classes of pairs only"
                ),
                "their constructors differ: (pattern, quantization_config) and the pairs "
                "appended; derive from a class of the same kind",
            )
        if "pair" in rec:
            v = rec["pair"].value
            if not (isinstance(v, syn.DottedName) and v.parts in (("true",), ("false",))):
                raise self.ctx.fail(v.span, "pair must be true or false")
            if v.parts == ("true",):
                other = next((rec[k] for k in rec if k not in PAIR_CLASS), None)
                if other is not None:
                    raise self.ctx.fail(
                        other.span,
                        f"a pair class takes no {other.key}: its constructor is "
                        "(pattern, quantization_config)",
                        "keep name, base and pair: true",
                    )
                self.pair_class = self.pair_class or c.name
                self.pair_classes.add(c.name)
                params = (
                    m.ClassParam("pattern", required=True),
                    m.ClassParam("quantization_config", required=True),
                )
                return m.QuantClass(c.name, c.mixins, c.parent, params, span=e.span, pair=True)
        function = "function" in rec
        if function:
            other = next((rec[k] for k in ("base", "fixed", "init") if k in rec), None)
            if other is not None:
                raise self.ctx.fail(other.span, f"a pairs function takes no {other.key}")
        names = [p.name for p in c.params]
        pairs = self._pairs(rec["pairs"], names) if "pairs" in rec else ()
        calls = [(p.calls, rec["params"]) for p in c.params if p.calls]
        calls += [(p.splice, rec["pairs"]) for p in pairs if p.splice is not None]
        for called, entry in calls:
            missing = [p for p in self.required.get(called, ()) if p not in names]
            if missing:
                raise self.ctx.fail(
                    entry.value.span,
                    f"pairs function {called} requires {', '.join(missing)}, which {c.name} "
                    f"does not pass: it calls {called} with its own parameters of the same "
                    f"names, and has no {missing[0]}",
                    f"give {c.name} a parameter {missing[0]}, or {called}'s a default",
                )
        if function:
            self.functions[c.name] = tuple(names)
            self.required[c.name] = tuple(p.name for p in c.params if p.required)
        return m.QuantClass(
            c.name, c.mixins, c.parent, c.params, c.init, span=e.span, pairs=pairs,
            function=function,
        )  # fmt: skip

    def _pairs(self, entry: syn.Entry, params: list[str]) -> tuple[m.ClassPair, ...]:
        if not isinstance(entry.value, syn.ListExpr):
            raise self.ctx.fail(
                entry.value.span,
                "pairs must be a list of pairs, like [{pattern: my.Pattern, config: my.config}]",
            )
        if self.pair_class is None:
            raise self.ctx.fail(
                entry.span,
                "pairs need a pair class earlier in the list, to make each pair",
                "add {name: MyPair, pair: true} before this record",
            )
        out: list[m.ClassPair] = []
        for x in entry.value.items:
            if isinstance(x, syn.DottedName) and len(x.parts) == 1:
                if x.parts[0] not in self.functions:
                    raise self.ctx.fail(
                        x.span,
                        f"'{x.parts[0]}' is no pairs function of the list",
                        self.ctx.suggest(x.parts[0], list(self.functions))
                        or "a pair is {pattern: ..., config: ...}, or a pairs function's name",
                    )
                out.append(m.ClassPair(splice=x.parts[0]))
                continue
            rec = self._record(x, PAIR_KEYS, "pair")
            if "pattern" not in rec or "config" not in rec:
                raise self.ctx.fail(x.span, "a pair needs a pattern and a config")
            config = self._config(rec["config"].value, params, "a pair's config")
            qat = None
            if "qat" in rec:
                if QAT not in params:
                    raise self.ctx.fail(
                        rec["qat"].span,
                        f"qat is the config when the class's {QAT} parameter is true; this "
                        f"one has no {QAT}",
                        f"add {QAT}: false to its params, or remove qat",
                    )
                qat = self._config(rec["qat"].value, params, "a pair's qat config")
            for p in self._patterns(rec["pattern"].value):
                out.append(m.ClassPair(p, config, qat))
        return tuple(out)

    def _patterns(self, e: syn.Expr) -> list[str]:
        items = e.items if isinstance(e, syn.ListExpr) else (e,)
        out = []
        for x in items:
            if not (isinstance(x, syn.DottedName) and len(x.parts) > 1):
                raise self.ctx.fail(
                    x.span,
                    "a pair's pattern is an object by dotted path, like patterns.AddPattern",
                    "its partition_types() are the first ops of one of the backend's patterns",
                )
            out.append(self._path(x))
        return out

    def _record(self, e: syn.Expr, keys: tuple[str, ...], what: str) -> dict[str, syn.Entry]:
        raise NotImplementedError
