"""Hover on a quantizer's settings and a pattern's ``pt2e:`` keys, from the PT2E key table.

``quantizer NAME { scopes: composable  configs: accessors }`` and ``pt2e: {when: ...,
eager: true}``: a key says what it sets, its values and which runtime bases read it
(``lang/pt2e_keys.py``, the table the compiler checks them by); a word after a key
says what it means (``scopes: composable``: the runtime base it picks).
"""

from __future__ import annotations

from ...escape import md_code
from ...lang import syntax as syn
from ...lang.pt2e_keys import (
    BASES,
    CLASS_RECORD,
    PAIR_RECORD,
    PT2E_KEY,
    QUANTIZER_KEY,
    STAGE_RECORD,
    Key,
    Scopes,
)

__all__ = ["class_key_hover", "setting_hover"]


def _place(nodes: list[syn.Node]) -> tuple[dict[str, Key], str, str] | None:
    """The table, what its keys are called, and the key of the innermost field or entry
    around the cursor: a quantizer's field, or an entry of a pattern's ``pt2e:`` record."""
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if isinstance(n, syn.Entry) and isinstance(n.key, str):
            # In a pattern's pt2e: record, or one a for list or use argument hands to it
            # (PT2E keys are no dtype config's nor constraint's).
            field = next((f for f in reversed(nodes[:i]) if isinstance(f, syn.Field)), None)
            if field is None or field.name == "pt2e":
                return PT2E_KEY, "PT2E key", n.key
            return None
        if isinstance(n, syn.Field):
            if i > 0 and isinstance(nodes[i - 1], syn.QuantizerDecl):
                return QUANTIZER_KEY, "quantizer setting", n.name
            return None
    return None


def _bases(k: Key) -> str:
    if k.bases == frozenset(Scopes):
        return "every runtime base reads it"
    return "read under " + " and ".join(f"`scopes: {s.value}`" for s in Scopes if s in k.bases)


def class_key_hover(word: str, nodes: list[syn.Node]) -> str | None:
    """The hover of a key of a class record (``classes: [{name: ..., stages: [...]}]``) or of
    one of its stages or pairs; None elsewhere."""
    field = next(
        (i for i in range(len(nodes) - 1, -1, -1) if isinstance(nodes[i], syn.Field)), None
    )
    if field is None or nodes[field].name != "classes" or not isinstance(nodes[-1], syn.Entry):
        return None
    entry = nodes[-1]
    if entry.key != word:
        return None
    around = [str(n.key) for n in nodes[field + 1 : -1] if isinstance(n, syn.Entry)]
    keys, what = {
        (): (CLASS_RECORD, "class record key"),
        ("stages",): (STAGE_RECORD, "stage key"),
        ("pairs",): (PAIR_RECORD, "pair key"),
    }.get(tuple(around), ({}, ""))
    if word not in keys:
        return None
    doc, values = keys[word]
    return f"**{what}** {md_code(word)}: {doc}\n\nvalues: {values}"


def setting_hover(word: str, nodes: list[syn.Node], is_key: bool) -> str | None:
    """The hover of ``word``: a key of the table (``is_key``: a ``:`` follows it), or a word
    of its value; None when the cursor is in neither a quantizer nor a ``pt2e:`` record."""
    if is_key and (found := class_key_hover(word, nodes)) is not None:
        return found
    place = _place(nodes)
    if place is None:
        return None
    table, what, key = place
    k = table.get(key)
    if k is None:
        return None
    if is_key:
        if word != key:
            return None
        out = f"**{what}** {md_code(word)}: {k.doc}\n\n{k.note}; {_bases(k)}"
        return out + f"\n\nvalues: {k.values}"
    if k.words is None or word not in {w.value for w in k.words}:
        return None
    out = f"**{what}** `{key}: {word}`"
    if k is QUANTIZER_KEY.get("scopes"):
        base = BASES[Scopes(word)]
        explained = "explains" if base.reports else "does not explain"
        return out + (
            f": the runtime base `{base.runtime}`; `bcfg compat` {explained} its quantizers "
            "op by op"
        )
    return out + (f": {k.meaning}" if k.meaning else f"\n\n{k.doc}")
