"""Whether the pt2e keys a pattern sets apply: its quantizer's base honours each, and the
pattern is what each needs. One loop over the key table, each message once.

A key the base does not honour (``when:`` under ``scopes: modules``, ``skip:``
under ``scopes: operators``) is an error at the key, never a value the runtime
silently ignores; so is a key on a pattern it cannot act on (``skip:`` on a
shared op that only propagates).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang.pt2e_keys import PT2E_KEY, Key, Kind, Need, OperatorType, Scopes
from ...lang.vocabulary import spell
from ...sources import Span
from .. import model as m
from ..aten_ops import WEIGHT_BIAS, WEIGHT_RANK
from ..checks import pattern_text as shown
from ..context import Ctx, Fail

SHARED = "OUTPUT_SHARE_OBSERVER_WITH_INPUT"
NOT_OBSERVED = "INPUT_OUTPUT_NOT_OBSERVED"
# Binary ops a chain's other: applies to.
BINARY = ("torch.ops.aten.add.", "torch.ops.aten.sub.", "torch.ops.aten.mul.")


@dataclass(frozen=True)
class Settings:
    """What the quantizer declaration says that its rules depend on: a frozen value."""

    scopes: Scopes = Scopes.MODULES
    reused: m.ReusedWeight = m.ReusedWeight.MATCH  # for patterns with a weight that do not say
    operator_type: OperatorType = OperatorType.NODES


@dataclass(frozen=True)
class Derived:
    """What a pattern is as a rule, before its keys are checked: how it is annotated, its ATen
    chain, how it is found, its weight and bias positions, the callables it comes from."""

    kind: m.RuleKind
    chain: m.AtenChain
    sources: tuple[m.Symbol, ...] = ()
    partitions: tuple[tuple[m.Symbol, ...], ...] = ()
    weight: int | None = None
    bias: int | None = None
    roots: tuple[m.Symbol, ...] = ()

    @property
    def weighted(self) -> bool:
        return self.weight is not None and self.kind is m.RuleKind.CHAIN


def fail(ctx: Ctx, c: m.PatternConfig, field: str | None, message: str, hint: str | None) -> Fail:
    """An error at the pattern (or one of its fields), with the use/for steps that placed it."""
    return fail_at(ctx, c, c.field_span(field) if field else None, message, hint)


def fail_key(ctx: Ctx, c: m.PatternConfig, key: str, message: str, hint: str | None) -> Fail:
    """An error at a pt2e key of the pattern (the whole ``pt2e`` field if it was not written)."""
    opts = c.pt2e or m.PT2EOptions()
    return fail_at(ctx, c, opts.span(key) or c.field_span("pt2e"), message, hint)


def fail_at(
    ctx: Ctx, c: m.PatternConfig, span: Span | None, message: str, hint: str | None
) -> Fail:
    origin = c.origin
    notes: tuple[str, ...] = ()
    where = None
    if origin is not None:
        where = span or origin.item
        notes = tuple(
            f"in '{s.text}' at {s.span}" for s in reversed(origin.chain) if s.kind == m.StepKind.USE
        )
    ctx.diag.error(where, message, hint, notes)
    return Fail()


def listed(words: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def said(key: Key, value: object) -> str:
    """A key as messages show it: ``scope: first_op``, ``eager: true``, ``skip``."""
    if key.kind is Kind.WORD:
        return f"{key.word}: {value}"
    if key.kind is Kind.FLAG:
        return f"{key.word}: {'true' if value else 'false'}"
    return key.word


def unread(key: Key, value: object, scopes: Scopes) -> tuple[str, str] | None:
    """(the error, the hint) if no part of the composition ``scopes`` names reads ``key``, a
    pt2e key or a quantizer field set to ``value``; None if one does. One rule for both
    tables: the row's ``bases``."""
    if scopes in key.bases:
        return None
    bases = [b for b in Scopes if b in key.bases]  # the table's order
    named = listed([b.value for b in bases])
    others = [b.value for b in bases if b is not Scopes.MODULES]
    other = f", or give the quantizer scopes: {listed(others)}" if others else ""
    return (
        f"{said(key, value)} applies to a quantizer with scopes: {named}, whose runtime "
        f"reads it; this one has scopes: {scopes.value}",
        f"remove {key.word}{other}",
    )


def check(ctx: Ctx, c: m.PatternConfig, opts: m.PT2EOptions, d: Derived, s: Settings) -> None:
    """Raise Fail (with a located error) if a key the pattern sets does not apply."""
    for word in opts.set_keys():
        key = PT2E_KEY[word]
        value = getattr(opts, word)
        problem = unread(key, value, s.scopes)
        if problem is not None:
            raise fail_key(ctx, c, word, *problem)
        for need in key.needs:
            problem = _unmet(need, word, c, d, s)
            if problem is not None:
                message, hint = problem
                raise fail_key(ctx, c, word, f"{said(key, value)} applies to {message}", hint)
        for mine, other, theirs, why in key.conflicts:
            if value == mine and other in opts.set_keys() and getattr(opts, other) == theirs:
                raise fail_key(
                    ctx,
                    c,
                    word,
                    f"{said(key, value)} contradicts {said(PT2E_KEY[other], theirs)} of the "
                    f"same pattern: {why}, so the runtime would never read {other}",
                    f"remove {other}, or {word}",
                )
    if opts.weight_axis is not None:
        _check_rank(ctx, c, opts.weight_axis, d)
    if s.scopes is Scopes.PAIRS:
        _check_inputs(ctx, c, opts, d)
    if s.scopes is Scopes.REGISTRY:
        _check_entry(ctx, c, opts, d)
    if s.scopes is Scopes.OPERATORS and d.kind is m.RuleKind.CHAIN and len(d.chain) > 1:
        if not d.partitions:
            raise fail(
                ctx,
                c,
                None,
                f"a quantizer with scopes: operators finds a chain by its source partitions; "
                f"pattern {shown(c.pattern)} is matched by ATen ops (match: chain), which it "
                "would match at the chain's first op alone",
                "add pt2e: {match: source}, or write the ops one pattern each",
            )


def _check_entry(ctx: Ctx, c: m.PatternConfig, opts: m.PT2EOptions, d: Derived) -> None:
    """A ``scopes: registry`` pattern is one op's entry: one op (or a list of ops), annotated
    by its ``annotate_node``."""
    if d.kind is not m.RuleKind.CHAIN or len(d.chain) != 1:
        what = f"a chain of {len(d.chain)} ops" if len(d.chain) > 1 else "not annotated in order"
        raise fail(
            ctx,
            c,
            None,
            f"a quantizer with scopes: registry annotates node by node, each by its op's entry; "
            f"pattern {shown(c.pattern)} is {what}",
            "write its ops one pattern each, each with pt2e: {annotate_node: fn}",
        )
    if opts.annotate_node is None:
        raise fail(
            ctx,
            c,
            None,
            f"pattern {shown(c.pattern)} has no annotate_node: a quantizer with scopes: "
            "registry annotates a node by its op's annotate_node function, fn(node, config)",
            "add pt2e: {annotate_node: fn}",
        )


def _unmet(
    need: Need, word: str, c: m.PatternConfig, d: Derived, s: Settings
) -> tuple[str, str] | None:
    """(what the key applies to, the hint) if the pattern does not meet ``need``."""
    p = shown(c.pattern)
    if need is Need.SHARED_OBSERVER and d.kind is not m.RuleKind.SHARED:
        return "shared_observer patterns", "add observation: shared_observer, or remove eager"
    if need is Need.IN_ORDER and d.kind not in (m.RuleKind.CHAIN, m.RuleKind.SHARED):
        why = "is annotated by its function" if d.kind is m.RuleKind.HOOK else "only propagates"
        return (
            f"patterns annotated in order; pattern {p} {why}",
            (
                "a shared_observer pattern is annotated in order with eager: true"
                if d.kind is m.RuleKind.PROPAGATE
                else f"remove {word}"
            ),
        )
    if need is Need.EAGER_SHARED and d.kind is not m.RuleKind.SHARED:
        return (
            "shared_observer patterns annotated in order",
            "add observation: shared_observer and eager: true, or remove qparams",
        )
    if need is Need.WEIGHTED_CHAIN and not d.weighted:
        return (
            f"a chain whose first op has a weight; {p} has none",
            "set its weight position with input_index: {weight: 1}, or remove " + word,
        )
    if need is Need.BINARY_OP and not any(
        op.path.startswith(BINARY) for ops in d.chain[1:] for op in ops
    ):
        return (
            f"a chain with a binary op (aten.add, aten.sub, aten.mul) after its first op; "
            f"pattern {p} has none",
            "remove other:, or name the binary op in the pattern",
        )
    if need is Need.OPERATOR_TYPE_PATTERNS and s.operator_type is not OperatorType.PATTERNS:
        return (
            "a quantizer whose set_operator_type selects patterns; this one's selects nodes",
            "add operator_type: patterns to the quantizer, or remove operator_types",
        )
    if need is Need.WEIGHTS_ONLY and not _weights_only(c):
        return (
            f"patterns whose dtypes include a weights-only config (input: float); pattern {p} "
            "takes none, so no config would check it",
            f"add a dtype config with input: float to its dtypes, or remove {word}",
        )
    if need is Need.TRIED and d.kind is m.RuleKind.PROPAGATE:
        return (
            f"patterns tried with a config; pattern {p} only propagates (it follows its "
            "quantized input, whatever the config)",
            "add eager: true to annotate it in order, or remove qat_config",
        )
    return None


def _weights_only(c: m.PatternConfig) -> bool:
    """Whether a weights-only config (float input activations) may quantize the pattern: one
    of its dtype configs says so, or it has none (a PT2E-only pattern takes any config)."""
    floats = [dc.input is not None and dc.input.dtype == "float32" for dc in c.dtype_configs]
    return not floats or any(floats)


def _check_inputs(ctx: Ctx, c: m.PatternConfig, opts: m.PT2EOptions, d: Derived) -> None:
    """A pair's input arguments (``inputs``, default the first) are tensor arguments of each
    op of its first position (by the op's schema), and not its weight or bias argument."""
    for op in d.chain[0] if d.chain and opts.inputs else ():
        args = ctx.facts.op_arguments(op.path)
        if args is None:
            continue
        for index in opts.inputs:
            if index >= len(args):
                taken = ", ".join(f"{i}: {name}" for i, (name, _) in enumerate(args))
                raise fail_key(
                    ctx,
                    c,
                    "inputs",
                    f"inputs names argument {index}, and {spell(op.path)} takes {len(args)} "
                    f"({taken})",
                    "name the index of a tensor argument of the op",
                )
            if not args[index][1]:
                raise fail_key(
                    ctx,
                    c,
                    "inputs",
                    f"inputs names argument {index} ({args[index][0]}) of {spell(op.path)}, which is "
                    "no tensor: an input activation spec on it would fail prepare_pt2e",
                    "name the index of a tensor argument of the op",
                )
    if opts.parameters is m.Parameters.FLOAT or opts.weights is not None or not d.weighted:
        return
    for name, at in (("weight", d.weight), ("bias", d.bias)):
        if at in opts.inputs:
            raise fail_key(
                ctx,
                c,
                "inputs",
                f"inputs names argument {at}, which is the {name} of pattern {shown(c.pattern)} "
                "(input_index's, or the op table's): it would get the input activation spec "
                f"and the {name} spec",
                f"give the {name} another position with input_index: {{{name}: N}}, or name "
                "another argument in inputs",
            )


def _check_rank(ctx: Ctx, c: m.PatternConfig, axis: int, d: Derived) -> None:
    """A weight_axis the weight of the chain's first op has (its rank is known per op)."""
    for op in d.chain[0] if d.chain else ():
        rank = WEIGHT_RANK.get(op.path)
        if rank is None or WEIGHT_BIAS[op.path][0] != d.weight or axis < rank:
            continue
        raise fail_key(
            ctx,
            c,
            "weight_axis",
            f"weight_axis: {axis} is beyond the weight of {spell(op.path)}, which has {rank} "
            f"dimension{'s' if rank != 1 else ''} (axes 0 to {rank - 1}); the observer would "
            "fail at the first calibration batch",
            "transposed convs take 1 (their output channels); other ops take the config's axis",
        )
