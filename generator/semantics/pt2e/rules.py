"""A backend's patterns as PT2E rules: each pattern derived (how it is annotated, its ATen
chain, how it is found), its keys checked against the quantizer's settings, then built.
The quantizer's settings come in as a frozen value (``keys.Settings``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...lang.pt2e_keys import PT2E_TABLE, Scopes
from .. import model as m
from ..aten_ops import BATCH_NORM
from ..checks import pattern_text as shown
from ..context import Ctx, Fail
from . import dtypes, keys, order
from .keys import NOT_OBSERVED, SHARED, Derived, Settings, fail
from .mapping import ROOT_KINDS, Fusions, Mapping, weight_bias


@dataclass(frozen=True)
class Env:
    """What deriving a backend's rules reads: the run's mapping, the quantizer's settings,
    the backend's fusions."""

    ctx: Ctx
    mapping: Mapping
    settings: Settings
    fusions: Fusions


def rules(
    ctx: Ctx, mapping: Mapping, settings: Settings, backend: m.Backend
) -> tuple[m.Rule, ...] | None:
    """The rules of ``backend``'s quantizer in tried order; None if a pattern had an error."""
    env = Env(ctx, mapping, settings, Fusions.of(ctx, backend))
    built: list[m.Rule] = []
    failed = False
    for c in backend.configs:
        try:
            rule = rule_of(env, c)
        except Fail:
            failed = True
            continue
        if rule is not None:
            built.append(rule)
    if failed:
        return None
    ordered = order.tried_order(order.merged(built))
    order.order_warnings(ctx, ordered)
    dtypes.follow_warnings(ctx, backend, ordered)
    return ordered


def rule_of(env: Env, c: m.PatternConfig) -> m.Rule | None:
    """The rule of one pattern (None: the quantizer leaves it out): derive, check, build."""
    opts = c.pt2e or m.PT2EOptions()
    d = derive(env, c, opts)
    if d is None:
        return None
    keys.check(env.ctx, c, opts, d, env.settings)
    return build(env, c, opts, d)


def derive(env: Env, c: m.PatternConfig, opts: m.PT2EOptions) -> Derived | None:
    """How a pattern is annotated, its chain and how it is found; None: it is left out."""
    if opts.aten == () or c.observation == NOT_OBSERVED:
        return None
    kind = m.RuleKind.CHAIN
    if opts.annotate is not None:
        kind = m.RuleKind.HOOK
    elif c.observation == SHARED:
        kind = m.RuleKind.SHARED if opts.eager else m.RuleKind.PROPAGATE
    if kind is m.RuleKind.HOOK:
        chain = opts.aten or ()
    elif c.complex:
        raise fail(
            env.ctx,
            c,
            None,
            f"the PT2E quantizer matches chains of ops; complex pattern {shown(c.pattern)} is not one",
            "annotate it with a Python function, pt2e: {annotate: my_module.my_function}, "
            "or leave it out of the quantizer with pt2e: {aten: []}",
        )
    else:
        mapped = opts.aten or env.mapping.chain(c, env.fusions)
        if mapped is None:
            return None  # FX-only modules: never in an exported graph
        chain = mapped
    if kind in (m.RuleKind.SHARED, m.RuleKind.PROPAGATE) and len(chain) != 1:
        raise fail(
            env.ctx,
            c,
            None,
            f"a shared_observer pattern shares one op's observer; {shown(c.pattern)} maps to {len(chain)} ops",
            "write the ops one pattern each",
        )
    sources, partitions = _found_by(env, c, opts, kind)
    first = c.pattern[0] if isinstance(c.pattern, tuple) else c.pattern
    roots = (first,) if isinstance(first, m.Symbol) and first.kind in ROOT_KINDS else ()
    weight, bias = weight_bias(c, chain)
    return Derived(kind, chain, sources, partitions, weight, bias, roots)


def _found_by(
    env: Env, c: m.PatternConfig, opts: m.PT2EOptions, kind: m.RuleKind
) -> tuple[tuple[m.Symbol, ...], tuple[tuple[m.Symbol, ...], ...]]:
    """(sources, partitions): how ``match: source`` finds the pattern. A chain is found by
    its elements' partitions in an operator-scoped quantizer; one op by its own partitions."""
    if opts.match != m.Match.SOURCE or kind not in (m.RuleKind.CHAIN, m.RuleKind.SHARED):
        return (), ()  # not by source, or a kind keys.check refuses match: source on
    p = c.pattern
    operators = env.settings.scopes is m.Scopes.OPERATORS
    if isinstance(p, tuple) and kind is m.RuleKind.CHAIN and operators:
        return (), (_partition(env, c, p),)
    if not (isinstance(p, m.Symbol) and p.kind in (m.SymbolKind.MODULE, m.SymbolKind.FUNCTION)):
        raise keys.fail_key(
            env.ctx,
            c,
            "match",
            f"match: source finds the nodes one module class or function exported to; "
            f"pattern {shown(p)} is not one",
            "match the pattern by its ATen ops (the default)"
            + (
                "; a chain is found by source partitions under scopes: operators"
                if isinstance(p, tuple)
                else ""
            ),
        )
    return (p,), ()


def _partition(env: Env, c: m.PatternConfig, p: tuple) -> tuple[m.Symbol, ...]:
    """The source types a chain is found by (match: source): its modules and functions."""
    out = []
    for e in p:
        if not (isinstance(e, m.Symbol) and e.kind in ROOT_KINDS):
            raise keys.fail_key(
                env.ctx,
                c,
                "match",
                f"match: source finds a chain by the module classes and functions it was "
                f"exported from; {shown(e)} in pattern {shown(p)} is not one",
                "name a module class or function at every position, or match by ATen ops",
            )
        out.append(e)
    _check_types_once(env, c, p)
    return tuple(out)


# The source types torchao counts as one (``torchao.quantization.pt2e.graph_utils``'s
# ``_EQUIVALENT_TYPES``, methods aside): ``find_sequential_partitions`` takes each once.
# tests/semantics checks them against the installed torchao's.
SAME_SOURCE: tuple[tuple[str, ...], ...] = (
    ("torch.nn.Conv1d", "torch.nn.functional.conv1d"),
    ("torch.nn.Conv2d", "torch.nn.functional.conv2d"),
    ("torch.nn.AdaptiveAvgPool2d", "torch.nn.functional.adaptive_avg_pool2d"),
    ("torch.nn.ReLU", "torch.nn.functional.relu", "torch.nn.functional.relu_"),
    ("torch.nn.BatchNorm2d", "torch.nn.functional.batch_norm"),
    ("torch.nn.Hardtanh", "torch.nn.functional.hardtanh", "torch.nn.functional.hardtanh_"),
    ("torch.add", "operator.add", "operator.iadd"),
    ("torch.mul", "operator.mul", "operator.imul"),
)


def _check_types_once(env: Env, c: m.PatternConfig, p: tuple) -> None:
    """A chain found by source partitions names each type once, as torchao counts types
    (``find_sequential_partitions`` raises at annotate time otherwise)."""
    identity = env.ctx.facts.identity
    same = {identity(path): group for group in SAME_SOURCE for path in group}
    firsts: dict[object, m.Symbol] = {}
    repeats = []
    for e in p:
        first = firsts.setdefault(same.get(identity(e.path), identity(e.path)), e)
        if first is not e:
            repeats.append((first, e))
    if not repeats:
        return
    first, e = repeats[0]
    if identity(first.path) == identity(e.path):
        what = f"{shown(e)} is named twice"
    else:
        what = f"{shown(first)} and {shown(e)} are one type to torchao"
    raise keys.fail_key(
        env.ctx,
        c,
        "match",
        f"match: source finds chain {shown(p)} by one source partition of each type, and "
        f"torchao's find_sequential_partitions takes each type once: {what}",
        f"name each module class or function once, like {shown(tuple(firsts.values()))}, or "
        "leave the pattern out of the quantizer with pt2e: {aten: []}",
    )


def build(env: Env, c: m.PatternConfig, opts: m.PT2EOptions, d: Derived) -> m.Rule:
    """The rule of a derived, checked pattern."""
    if opts.qat_config is None:
        # The composable, pairs and registry bases try every chain with any config its dtypes
        # allow (ExecuTorch's Arm, Cortex-M and Cadence annotate conv + batch norm for PTQ
        # too): no QAT default.
        composable = env.settings.scopes in (Scopes.COMPOSABLE, Scopes.PAIRS, Scopes.REGISTRY)
        qat = not composable and any(op.path in BATCH_NORM for ops in d.chain[1:] for op in ops)
        qat_if_dynamic = False
    else:
        qat = opts.qat_config is m.QatConfig.REQUIRED
        qat_if_dynamic = opts.qat_config is m.QatConfig.REQUIRED_IF_DYNAMIC
    dtypes.mixed_dtypes(env.ctx, c, d.kind)
    allows: tuple[m.Allows, ...] = ()
    if d.kind is not m.RuleKind.PROPAGATE:
        allows = dtypes.allows(env.ctx, dtypes.dtypes_of(env.ctx, c, env.fusions))
    reused = opts.reused_weight or env.settings.reused
    return m.Rule(
        name=shown(c.pattern),
        kind=d.kind,
        chain=d.chain,
        sources=d.sources,
        weight=d.weight,
        bias=d.bias,
        allows=allows,
        qat=qat,
        qat_if_dynamic=qat_if_dynamic,
        reused_weight=reused if d.weighted else m.ReusedWeight.MATCH,
        partitions=d.partitions,
        roots=d.roots,
        origins=(c.origin,) if c.origin is not None else (),
        **{k.word: getattr(opts, k.word) for k in COPIED},
    )


# The keys whose value lands as is in the Rule field of their name; the others are derived
# above (aten, match, eager shape the rule; qat_config and reused_weight are resolved).
COPIED = tuple(k for k in PT2E_TABLE if k.lands == (k.word,) and k.word != "reused_weight")
