"""The order a PT2E quantizer tries its rules, and patterns that are one rule (merged)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

from .. import model as m
from ..context import Ctx

# Rules that read what earlier rules annotated keep their place in the spec's order.
KEEP_PLACE = (m.RuleKind.SHARED, m.RuleKind.HOOK)

# The Rule fields two merged rules take the union of; ``origins`` too. The rest, but the
# name (the first pattern's), are the merge key: rules that differ in any are not merged.
UNION = ("sources", "partitions", "roots", "allows")
# Of these, whether a rule has any takes part in the key (by source or not).
KEYED_BY_PRESENCE = ("sources", "partitions")


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
    for end in [*(i for i, r in enumerate(rules) if r.kind in KEEP_PLACE), len(rules)]:
        slots = [i for i in range(start, end) if rules[i].kind is m.RuleKind.CHAIN]
        ranked = sorted((rules[i] for i in slots), key=lambda r: -len(r.chain))
        for slot, rule in zip(slots, ranked):
            out[slot] = rule
        start = end + 1
    return tuple(out)


def merge_key(r: m.Rule) -> tuple:
    """Rules with the same key match the same nodes the same way: they are one rule.

    Every field of ``Rule`` takes part, so a field added to it keeps rules that differ
    in it apart, unless it is listed in ``UNION`` (and then merged by union)."""
    out: list[object] = []
    for f in fields(r):
        if f.name in ("name", "origins") or (f.name in UNION and f.name not in KEYED_BY_PRESENCE):
            continue
        value = getattr(r, f.name)
        out.append(bool(value) if f.name in KEYED_BY_PRESENCE else value)
    return tuple(out)


def merge(a: m.Rule, b: m.Rule) -> m.Rule:
    """Two patterns that map to the same rule: one rule that allows what either allows."""
    union: dict[str, Any] = {
        name: tuple(dict.fromkeys(getattr(a, name) + getattr(b, name))) for name in UNION
    }
    return replace(a, **union, origins=a.origins + b.origins)


def merged(rules: Sequence[m.Rule]) -> list[m.Rule]:
    """``rules`` with those of one merge key made one, where the first of them is."""
    out: list[m.Rule] = []
    positions: dict[tuple, int] = {}
    for rule in rules:
        key = merge_key(rule)
        if key in positions:
            i = positions[key]
            out[i] = merge(out[i], rule)
            continue
        positions[key] = len(out)
        out.append(rule)
    return out


def order_warnings(ctx: Ctx, rules: tuple[m.Rule, ...]) -> None:
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
            fixed = next((r for r in rules[j + 1 : i] if r.kind in KEEP_PLACE), None)
            if fixed is None:  # tried_order never leaves them so; nothing to say
                continue
            where = earlier.origins[0].item if earlier.origins else None
            ctx.warning(
                rule.origins[0].item,
                f"pattern {rule.name} is tried after pattern {earlier.name}"
                + (f" ({where})" if where is not None else "")
                + f", which annotates its first op first: pattern {fixed.name} between them "
                "keeps its place, so the PT2E quantizer never fuses it",
                f"write pattern {rule.name} before pattern {fixed.name}, or pattern "
                f"{earlier.name} after it",
            )
            break
