"""The names a ``classes:`` record introduces (a class, a pairs function, a parameter), checked
once, the same way, for every record: each is a Python name that is no keyword, is not
``self``, is not written twice (as Python compares names: after NFKC normalisation), and is
none of the names the generated module binds or reads (``model.GENERATED_NAMES``, the
heads of the modules it imports, the other classes of the list), which it would shadow."""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Iterable

from ...sources import Span
from .. import model as m
from ..context import Ctx


def same(name: str) -> str:
    """A name as Python compares identifiers (NFKC: ``ﬁx`` is ``fix``)."""
    return unicodedata.normalize("NFKC", name)


def module_heads(symbols: Iterable[m.Symbol]) -> set[str]:
    """The names binding the modules a generated module imports for these symbols (as its
    emitter imports them: aten ops through ``torch``, aliased modules by their alias)."""
    from ...lang.vocabulary import MODULE_ALIASES

    out = set()
    for s in symbols:
        if s.path.startswith("torch.ops.aten."):
            out.add("torch")
            continue
        module = s.module or s.path.split(".")[0]
        out.add(MODULE_ALIASES.get(module) or module.split(".")[0])
    return out


def rule_symbols(rules: Iterable[m.Rule], transforms: Iterable[m.Hook]) -> list[m.Symbol]:
    """The symbols of the rules (hooks, sources, roots, partitions) and transforms the
    generated module imports (as the emitter's ``_reserve_imports``)."""
    out: list[m.Symbol] = []
    rules = tuple(rules)
    hooks = [
        h for r in rules for h in (*r.skip, *r.when, r.annotate, *r.weights_only_when, r.weights)
    ]
    for h in [*hooks, *transforms]:
        if h is not None and h.function is not None:
            out.append(h.function)
    for r in rules:
        out += [*r.sources, *r.roots, *(s for p in r.partitions for s in p)]
    return out


class Names:
    """The names of one quantizer's ``classes:`` so far, by their normalised form."""

    def __init__(self, ctx: Ctx, taken: Iterable[str]):
        self.ctx = ctx
        self.taken = {same(n) for n in (*m.GENERATED_NAMES, *taken)}
        self.classes: dict[str, tuple[str, Span]] = {}  # normalised -> (as written, where)

    def check(self, name: str, span: Span, what: str) -> str:
        """``name`` as a Python name of its own (``what``: "class name", "parameter", ...)."""
        if not name.isidentifier():
            raise self.ctx.fail(
                span, f"{what} '{name}' is not a Python name", "use letters, digits and _"
            )
        key = same(name)
        if keyword.iskeyword(key):
            raise self.ctx.fail(span, f"{what} '{name}' is a Python keyword", "choose another name")
        if key in self.taken:
            shown = name if key == name else f"{name}' (as Python reads it, '{key}"
            raise self.ctx.fail(
                span,
                f"{what} '{shown}' is a name the generated module binds or reads, which it "
                "would shadow",
                "choose another name (the reference lists the names a generated module uses)",
            )
        return key

    def cls(self, name: str, span: Span, what: str) -> None:
        """A class or pairs function of the list: a name of its own, once in the list."""
        key = self.check(name, span, what)
        if key in self.classes:
            first, where = self.classes[key]
            same_text = "" if first == name else f" (as '{first}': Python reads both as '{key}')"
            raise self.ctx.fail(
                span,
                f"class '{name}' is defined twice in this module{same_text}, first at {where}",
                "give each class its own name",
            )
        self.classes[key] = (name, span)

    def params(self, names: list[tuple[str, Span]]) -> None:
        """A constructor's parameters: names of their own, not ``self``, each once."""
        seen: dict[str, str] = {}
        for name, span in names:
            if same(name) == "self":
                raise self.ctx.fail(
                    span,
                    "parameter 'self' is the instance the constructor takes first",
                    "choose another name",
                )
            key = self.check(name, span, "parameter")
            if key in self.classes:
                raise self.ctx.fail(
                    span,
                    f"parameter '{name}' is named like class '{self.classes[key][0]}' of the "
                    "list, which the constructors read",
                    "choose another name",
                )
            if key in seen:
                again = (
                    ""
                    if seen[key] == name
                    else f" (as '{seen[key]}': Python reads both as '{key}')"
                )
                raise self.ctx.fail(span, f"parameter '{name}' is written twice{again}")
            seen[key] = name

    def imports(self, symbols: Iterable[m.Symbol], span: Span) -> None:
        """A class's mixins and init hook: the modules imported for them are no class of the
        list (which would shadow them), and no later name may take them."""
        for head in sorted(module_heads(symbols)):
            key = same(head)
            if key in self.classes:
                first, where = self.classes[key]
                raise self.ctx.fail(
                    span,
                    f"the generated module imports the module '{head}' for this, and class "
                    f"'{first}' (at {where}) would shadow it",
                    f"rename class {first}",
                )
            self.taken.add(key)
