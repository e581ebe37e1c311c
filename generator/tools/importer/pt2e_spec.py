"""From observations to a spec: the second step of ``bcfg import`` of a PT2E quantizer.

The observed matches (``pt2e_observe``) become the patterns of a ``scopes: composable``
spec (ExecuTorch's scheme: at each node, the longest chain of the support table that the
stage's config may quantize; shared-observer ops share what is around them):

* each distinct chain of ops is a pattern; the specs its roles got (activation input,
  weight, bias, output) are its *config*, and the distinct configs are the stages of the
  exported class, each seeing the chains that use it;
* an op that begins a chain on some probes and is left float on others gets a ``when:``
  condition, found by generate-and-test among the checks production quantizers make
  (``CONDITIONS``: rank, channels-last, groups, equal shapes, tensor operands, bias);
* shared-observer ops are ``shared_observer`` patterns (``eager`` where they are
  annotated though their input is not quantized, as cat is);
* ranges are constraints; fixed qparams (an int16 lookup table's output) are a constraint's
  ``scale`` and ``zero_point``.

What the language cannot say is Python in one hooks module beside the spec, each object
named and listed in the report: the quantization configs (observer classes and their
arguments have no words in the language), the derived bias (the quantizer's own derivation
function, by its dotted path; one of no dotted path, a closure, by the form a spec can say
that computes what it computes: ``live.probe.derive``) and the conditions.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .pt2e_observe import Match, Observations

# Checks production quantizers make on a match's first node, as (name, Python source of
# a function body over `node`): the candidates a condition is chosen from.
CONDITIONS: dict[str, str] = {
    "rank2": "return _rank(node) == 2",
    "rank3": "return _rank(node) == 3",
    "rank4": "return _rank(node) == 4",
    "not_rank2": "return _rank(node) != 2",
    "tensor_operands": "return all(isinstance(a, Node) for a in node.args[:2])",
    "same_shape": (
        "shapes = [_shape(a) for a in node.args[:2]]\n"
        "    return len(shapes) == 2 and None not in shapes and shapes[0] == shapes[1]"
    ),
    "ungrouped": "return _groups(node) == 1",
    "not_depthwise": (
        "w = _shape(node.args[1]) if len(node.args) > 1 else None\n"
        "    return not (_groups(node) > 1 and w is not None and len(w) > 1 and w[1] == 1)"
    ),
    "channels_last": "return _channels_last(node.args[0])",
    "not_channels_last": "return not _channels_last(node.args[0])",
    "has_bias": "return len(node.args) > 2 and node.args[2] is not None",
    "float_input": "return _float(node.args[0])",
    # torch's source metadata: strict export records it, non-strict does not (quantizers that
    # find ops by source partitions annotate only strict graphs)
    "has_source": 'return bool(node.meta.get("source_fn_stack"))',
    # a fused chain's first op used by the chain alone (torchao's inductor quantizers fuse
    # only then); a conv's or linear's weight a parameter, not a model input
    "single_user": "return len(node.users) == 1",
    # no one-element constant beyond what HistogramObserver's histc can observe (XNNPACK's)
    "no_large_scalar": "return not any(_large_scalar(a) for a in node.args[:2])",
    "weight_param": (
        'return len(node.args) > 1 and isinstance(node.args[1], Node) and node.args[1].op == "get_attr"'
    ),
    # a reduction or softmax over the last dim (CMSIS-NN's softmax, many NPUs' kernels)
    "last_dim": (
        "d, r = (node.args[1] if len(node.args) > 1 else -1), _rank(node)\n"
        "    return isinstance(d, int) and r > 0 and d % r == r - 1"
    ),
    # an elementwise op of operands of one shape, or channels-last with the other operand
    # broadcast along the channels (NHWC kernels: CMSIS-NN's add and mul)
    "same_shape_or_channel_broadcast": (
        "a, b = (_val(x) for x in (list(node.args[:2]) + [None, None])[:2])\n"
        "    if a is None or b is None or not hasattr(a, 'shape') or not hasattr(b, 'shape'):\n"
        "        return False\n"
        "    if tuple(a.shape) == tuple(b.shape):\n"
        "        return True\n"
        "    big, small = (a, b) if a.dim() >= b.dim() else (b, a)\n"
        "    if big.dim() != 4 or not _channels_last(node.args[0 if big is a else 1]):\n"
        "        return False\n"
        "    s = (1,) * (4 - small.dim()) + tuple(small.shape)\n"
        "    return s[1] == big.shape[1] and s[0] == s[2] == s[3] == 1"
    ),
    # an add or sub without a scale on its second operand (alpha)
    "unit_alpha": 'return node.kwargs.get("alpha", 1) == 1',
}

PRELUDE = """
def _val(n):
    return n.meta.get("val") if isinstance(n, Node) else None


def _shape(n):
    v = _val(n)
    return tuple(v.shape) if v is not None and hasattr(v, "shape") else None


def _rank(node):
    s = _shape(node.args[0]) if node.args else None
    return -1 if s is None else len(s)


def _groups(node):
    name = str(node.target)
    if "conv" not in name:
        return 1
    index = 8 if "transpose" in name else 6
    return node.args[index] if len(node.args) > index else 1


def _channels_last(n):
    v = _val(n)
    return v is not None and v.dim() == 4 and v.is_contiguous(memory_format=torch.channels_last) \\
        and not v.is_contiguous()


def _float(n):
    v = _val(n)
    return v is not None and v.is_floating_point()


def _large_scalar(n):
    if not isinstance(n, Node) or n.op != "get_attr":
        return False
    t = n.graph.owning_module
    for part in str(n.target).split("."):
        t = getattr(t, part, None)
    return isinstance(t, torch.Tensor) and t.numel() == 1 and abs(t.item()) > 3.4028235e15
"""


@dataclass
class Config:
    name: str
    key: tuple
    specs: dict[str, Any]
    chains: list[str] = field(default_factory=list)
    # the derived biases observed with it, each with its probe (live specs, in probe order)
    biases: list[tuple[str, Any]] = field(default_factory=list)
    # the form of FORMS its derived bias's unnamed function computes (derive.identify)
    bias_form: Any = None


@dataclass
class Pattern:
    ops: tuple[str, ...]
    kind: str
    config: Config | None
    when: list[str] = field(default_factory=list)
    eager: bool = False
    alternatives: int = 0  # other configs observed for these ops (not reproduced)
    other: str | None = None  # the binary op's other input, as most matches had it
    # checks of a chain of several ops, where a shorter chain was matched though its ops
    # followed (a fan-out: torchao's inductor quantizers fuse a single user only)
    chain_when: list[str] = field(default_factory=list)

    @property
    def checks(self) -> list[str]:
        """All checks of its ``when:``: its first op's, then its chain's."""
        return list(dict.fromkeys(self.when + self.chain_when))

    @property
    def when_name(self) -> str:
        """The hooks' name of its ``when:`` function (one per first op, unless its chain has
        checks of its own)."""
        ops = self.ops if self.chain_when else self.ops[:1]
        return "when_" + "__".join(_ident(op) for op in ops)


@dataclass
class Share:
    """A shared-observer op: how its specs refer to its inputs (``pt2e_observe._form``);
    ``eager``: annotated though its first input is not; ``spec``: a spec of its own
    (cat's first input)."""

    op: str
    form: tuple
    eager: bool
    spec: Any = None
    when: list[str] = field(default_factory=list)
    eager_form: tuple | None = None  # the form after an unquantized input, where it differs


@dataclass
class Interpretation:
    patterns: list[Pattern]
    configs: list[Config]
    notes: list[str]
    hooks: list[str]  # the hooks' names, each with what it says
    shares: list[Share] = field(default_factory=list)
    transform: bool = False  # the quantizer's transform_for_annotation changes graphs
    # first op of a conv or linear chain -> its config, where a weight that is a model input
    # got the config's weight spec (the quantizer reads weights by position)
    positional: dict[str, str] = field(default_factory=dict)
    # one-op patterns annotated though an input is no float tensor -> their config
    nonfloat: dict[str, str] = field(default_factory=dict)
    # the model's inputs and output node, quantized as observed (None: neither is)
    io: ModelIOPlan | None = None
    # the quantizer decides its shared ops before it annotates the model's inputs: an input
    # it annotated does not count as a quantized producer (see _io_after)
    io_after: bool = False
    # shared call targets no pattern can name (operator.getitem), by name: composable
    # (clusters) shares them as its shared_observer patterns (hooks.SharedTargets)
    shared_targets: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelIOPlan:
    """The model's inputs (placeholders) and output node as the quantizer annotates them:
    a stage of ``config`` for each of ``sides`` (``placeholder``, ``output``), each seeing the
    nodes that carry a float tensor only (``floats_only``) or all of them (the composable
    scheme annotates the others without a spec, as ExecuTorch's does)."""

    config: Config
    sides: list[tuple[str, bool]]


def interpret(obs: Observations) -> Interpretation:
    from .pt2e_observe import _spec_key

    notes: list[str] = []
    by_ops, shared, targets = _partition(obs, notes)
    configs: dict[tuple, Config] = {}

    def config_of(key: tuple, specs: dict[str, Any]) -> Config:
        if key not in configs:
            configs[key] = Config(f"CONFIG_{len(configs)}", key, specs)
        return configs[key]

    patterns = []
    positional: dict[str, str] = {}
    nonfloat: dict[str, str] = {}
    unbiased = ("input", "weight", "output")
    for ops, ms in by_ops.items():
        # a bias is quantized where there is one: matches without differ in nothing else
        keys = Counter(m.key(unbiased) for m in ms)
        (key, _), *others = keys.most_common()
        same = [m for m in ms if m.key(unbiased) == key]
        biased = [m for m in same if m.specs.get("bias") is not None]
        rep = biased[0] if biased else same[0]
        if len({_bias_kind(m.specs["bias"]) for m in biased}) > 1:
            notes.append(f"{' -> '.join(ops)}: biases of several kinds; the first is reproduced")
        cfg = config_of(_config_key(rep), rep.specs)
        cfg.biases += [(m.graph, m.specs["bias"]) for m in biased if _derived(m.specs["bias"])]
        if ops[0] not in cfg.chains:
            cfg.chains.append(ops[0])
        weight = cfg.specs.get("weight")
        if weight is not None and any(
            m.weight_input is not None and _spec_key(m.weight_input) == _spec_key(weight)
            for m in ms
        ):
            positional.setdefault(ops[0], cfg.name)
        if len(ops) == 1 and any(m.nonfloat for m in same):
            nonfloat.setdefault(ops[0], cfg.name)
        others_seen = Counter(m.other for m in ms if m.other is not None)
        other = others_seen.most_common(1)[0][0] if others_seen else None
        p = Pattern(ops, "chain", cfg, alternatives=len(others), other=other)
        if others:
            notes.append(
                f"{' -> '.join(ops)}: {len(others)} other configs seen on some probes "
                "are not reproduced (the most frequent is)"
            )
        patterns.append(p)
    # Longer chains first among those of one first op (the matcher takes the longest anyway).
    patterns.sort(key=lambda p: (p.ops[0], -len(p.ops)))
    io_after = _io_after(shared, obs)
    if io_after:
        for m in (m for ms in shared.values() for m in ms if m.after_io):
            m.eager = True  # its input counts as float: the quantizer annotated it later
    shares = _shares(shared, notes)
    hooks: list[str] = []
    _bias_forms(list(configs.values()), hooks)
    _conditions(patterns, obs, notes, hooks)
    if shares:
        hooks.append(
            "Sharing: the shared-observer ops, each sharing as observed ("
            + ", ".join(s.op for s in shares)
            + ")"
        )
    _share_conditions(shares, obs, notes, hooks, io_after)
    interp = Interpretation(patterns, list(configs.values()), notes, hooks, shares)
    interp.io_after = io_after
    interp.positional, interp.nonfloat = positional, nonfloat
    interp.io = _model_io(obs, interp.configs, notes, hooks)
    interp.shared_targets = targets
    _mixins(interp, obs, hooks)
    return interp


def _config_key(m: Match) -> tuple:
    """The config a chain match uses (``Match.key``), its derived bias by ``_bias_kind``."""
    return tuple((r, _bias_kind(m.specs.get(r)) if r == "bias" else v) for r, v in m.key())


def _bias_kind(spec: Any) -> Any:
    """A bias spec as plain data; a derived one by its function's code (and a partial's
    arguments) and its range, not by what it computes on one probe's shapes (which differs
    from probe to probe)."""
    from .pt2e_observe import _spec_key

    if not _derived(spec):
        return _spec_key(spec)
    fn = spec.derive_qparams_fn
    args = repr(sorted(getattr(fn, "keywords", {}).items())) + repr(getattr(fn, "args", ()))
    fn = getattr(fn, "func", fn)
    code = getattr(fn, "__code__", None)
    who = (code.co_filename, code.co_firstlineno, code.co_name) if code else _label(fn)
    common = (str(spec.dtype), spec.quant_min, spec.quant_max, str(spec.qscheme))
    return ("derived", who, args, *common, spec.ch_axis, spec.is_dynamic)


def _derived(spec: Any) -> bool:
    return type(spec).__name__ == "DerivedQuantizationSpec"


def nameable(obj: Any) -> bool:
    """Whether ``obj`` has a dotted path a hooks module can import it by (not a closure, a
    lambda or a partial)."""
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", "")
    return bool(module) and bool(qual) and "<" not in qual


# The derived specs a derived bias's function is tried on (derive.identify feeds each twice).
IDENTIFY_AT_MOST = 64


def _bias_forms(configs: list[Config], hooks: list[str]) -> None:
    """Each config whose derived bias is computed by a function of no dotted path: the form
    a spec can say that computes the same on every derived bias observed with it (a hook
    named in the header), if one does; else the writer warns."""
    from ...live.probe.derive import identify

    for cfg in configs:
        bias: Any = cfg.specs.get("bias")
        if not _derived(bias) or nameable(bias.derive_qparams_fn):
            continue
        specs = [s for _, s in cfg.biases[:IDENTIFY_AT_MOST]] or [bias]
        cfg.bias_form = identify(specs)
        if cfg.bias_form is not None:
            hooks.append(
                f"{cfg.bias_form.name}: the derived bias of {cfg.name}: "
                f"{_label(bias.derive_qparams_fn)} has no dotted path, and on the {len(specs)} "
                f"derived biases observed it computes {cfg.bias_form.says}"
            )


def _label(fn: Any) -> str:
    """A function as a report names it: its qualified name."""
    fn = getattr(fn, "func", fn)  # a partial: its function
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def _partition(
    obs: Observations, notes: list[str]
) -> tuple[dict[tuple[str, ...], list[Match]], dict[str, list[Match]], dict[str, Any]]:
    """The matches by chain of ops, the shared ones by op, and the shared call targets no
    pattern names (getitem), by name; the ops no pattern names are notes."""
    by_ops: dict[tuple[str, ...], list[Match]] = {}
    shared: dict[str, list[Match]] = {}
    unnamed: Counter[str] = Counter()
    targets: dict[str, Any] = {}
    for m in obs.matches:
        if any(not op.startswith("aten.") for op in m.ops):
            # a pattern names ATen ops: getitem, while_loop or cond cannot be written
            unnamed.update(op for op in m.ops if not op.startswith("aten."))
            if m.kind == "shared" and getattr(m.first, "op", None) == "call_function":
                targets.setdefault(m.ops[0], m.first.target)
        elif m.kind == "shared":
            shared.setdefault(m.ops[0], []).append(m)
        else:
            by_ops.setdefault(m.ops, []).append(m)
    notes += [
        f"{op}: annotated on {n} probe nodes, not reproduced: a pattern names ATen ops only"
        + (" (composable (clusters) shares it by hooks.SharedTargets)" if op in targets else "")
        for op, n in sorted(unnamed.items())
    ]
    return by_ops, shared, targets


def _model_io(
    obs: Observations, configs: list[Config], notes: list[str], hooks: list[str]
) -> ModelIOPlan | None:
    """How the model's inputs and output node are annotated, if they are: the spec most
    probes gave them (the placeholders' output spec, the output node's input spec), whether
    nodes without a float tensor are annotated too; what differs from that is a note."""
    from .pt2e_observe import _spec_key

    specs: dict[str, Any] = {}
    sides = []
    for kind, role, what in (("placeholder", "output", "model inputs"),
                             ("output", "input", "model outputs")):  # fmt: skip
        seen = [s for s in obs.io if s.kind == kind]
        quantized = [s for s in seen if s.float and s.spec is not None]
        if not quantized:
            continue
        keys = Counter(_spec_key(s.spec) for s in quantized)
        key = keys.most_common(1)[0][0]
        specs[role] = next(s.spec for s in quantized if _spec_key(s.spec) == key)
        others = [s for s in seen if not s.float]
        floats_only = sum(s.annotated for s in others) * 2 <= len(others)
        odd = [
            s
            for s in seen
            if (s.float and (s.spec is None or _spec_key(s.spec) != key or not s.uniform))
            or (not s.float and (s.annotated == floats_only or s.spec is not None))
        ]
        if odd:
            notes.append(
                f"{what}: quantized as most probes' are; {len(odd)} of {len(seen)} are "
                f"annotated otherwise (first: {odd[0].graph})"
            )
        sides.append((kind, floats_only))
    if not sides:
        return None
    key = (("input", _spec_key(specs.get("input"))), ("output", _spec_key(specs.get("output"))))
    config = next((c for c in configs if c.key[::3] == key), None)
    if config is None:
        config = Config(f"CONFIG_{len(configs)}", key, specs)
        configs.append(config)
    said = " and ".join("inputs" if k == "placeholder" else "output" for k, _ in sides)
    hooks.append(f"model_io: the model's {said} get {config.name}'s specs, as observed")
    return ModelIOPlan(config, sides)


def _io_after(shared: dict[str, list[Match]], obs: Observations) -> bool:
    """Whether the quantizer annotates the model's inputs after it decides its shared ops: an
    op shared only after quantized ops (never eagerly) was left float on an input it
    annotated. (ExecuTorch's composable scheme annotates the inputs first: its shared ops
    share an input's spec.)"""
    from .pt2e_observe import KEY, flat_inputs

    for op, ms in shared.items():
        if any(m.eager for m in ms):
            continue  # annotated after float ops too: its inputs tell nothing
        for _, node in obs.unannotated.get(op, []):
            inputs = flat_inputs(node)
            if inputs and inputs[0].op == "placeholder" and KEY in inputs[0].meta:
                return True
    return False


def _shares(shared: dict[str, list[Match]], notes: list[str]) -> list[Share]:
    """The shared-observer ops, each with the form it was seen to share in."""
    shares = []
    for op, ms in shared.items():
        # the form after a quantized input, and (eager_form) after an unquantized one where
        # it differs: torchao's XNNPACK shares adaptive_avg_pool2d's input observer with a
        # quantized producer and gives an unquantized one a spec of its own
        after = [m for m in ms if not m.eager] or ms
        eager_ms = [m for m in ms if m.eager]
        (form, _), *others = Counter(m.form for m in after).most_common()
        eager_form = None
        if eager_ms and after is not ms:
            (eager_form, _), *more = Counter(m.form for m in eager_ms).most_common()
            others += more
            eager_form = None if eager_form == form else eager_form
        if others or "other" in form or (eager_form and "other" in eager_form):
            notes.append(f"{op}: shares its observer in ways bcfg does not reproduce")
        spec = next((m.specs["input"] for m in ms if m.specs.get("input") is not None), None)
        sh = Share(op, form, eager=bool(eager_ms), spec=spec, eager_form=eager_form)
        shares.append(sh)
    return shares


def _mixins(interp: Interpretation, obs: Observations, hooks: list[str]) -> None:
    """The hooks mixins an interpretation needs, said in ``hooks``."""
    nonfloat, positional = interp.nonfloat, interp.positional
    if nonfloat:
        hooks.append(
            "NonFloatInputs: an op annotated though an input is no float tensor ("
            + ", ".join(nonfloat)
            + ")"
        )
    if positional:
        hooks.append(
            "PositionalWeights: a weight given as a model input gets the weight's spec ("
            + ", ".join(positional)
            + ")"
        )
    if obs.transformed:
        interp.transform = True
        hooks.append(
            f"transform: the quantizer's own transform_for_annotation, delegated (it changed "
            f"{len(obs.transformed)} probe graphs, first {obs.transformed[0]})"
        )


def _checks() -> dict[str, Any]:
    import torch
    from torch.fx import Node

    env: dict[str, Any] = {"torch": torch, "Node": Node}
    exec(PRELUDE, env)  # noqa: S102  (bcfg's own source: the helpers the conditions use)
    checks = {}
    for name, body in CONDITIONS.items():
        exec(f"def {name}(node):\n    {body}\n", env)  # noqa: S102
        checks[name] = env[name]
    return checks


def _share_conditions(
    shares: list[Share], obs: Observations, notes: list[str], hooks: list[str], io_after: bool
) -> None:
    """A condition for each shared op left float where it would have been annotated (its first
    input quantized, or anywhere if it is eager)."""
    from .pt2e_observe import KEY, flat_inputs

    checks = _checks()
    for sh in shares:
        pos = [m.first for m in obs.matches if m.kind == "shared" and m.ops[0] == sh.op]
        neg = []
        for _, node in obs.unannotated.get(sh.op, []):
            inputs = flat_inputs(node)
            first = inputs[0] if inputs else None
            quantized = first is not None and KEY in first.meta
            if io_after and first is not None and first.op == "placeholder":
                quantized = False
            if inputs and (sh.eager or quantized):
                neg.append(node)
        if not neg:
            continue
        found = _separate(checks, pos, neg)
        if found == ["?"]:
            notes.append(
                f"{sh.op}: shared on {len(pos)} probes and left float on {len(neg)} alike, "
                "by no condition bcfg knows"
            )
            continue
        sh.when = found
        hooks.append(f"Sharing: {sh.op} only where {' and '.join(found)}")


def _conditions(
    patterns: list[Pattern], obs: Observations, notes: list[str], hooks: list[str]
) -> None:
    """A ``when:`` for each first op of chains that is left float on some probes."""
    checks = _checks()
    firsts: dict[str, list[Any]] = {}
    for m in obs.matches:
        if m.kind == "chain":
            firsts.setdefault(m.ops[0], []).append(m.first)
    done: dict[str, list[str]] = {}
    for p in patterns:
        op = p.ops[0]
        if p.kind != "chain" or not obs.unannotated.get(op):
            continue
        if op not in done:
            pos = firsts.get(op, [])
            neg = [n for _, n in obs.unannotated[op]]
            done[op] = _separate(checks, pos, neg)
            best, left = (["?"], neg) if done[op] != ["?"] else _closest(checks, pos, neg)
            if done[op] == ["?"] and best != ["?"]:
                # no check rules out every float node: the one that rules out the most
                # (a module called twice, one call left float, is no node's own property)
                done[op] = best
                first = next(g for g, n in obs.unannotated[op] if n is left[0])
                notes.append(
                    f"{op}: annotated on {len(pos)} probes and left float on {len(neg)}: "
                    f"where {' and '.join(best)}, but on {len(left)} of them by no condition "
                    f"bcfg knows (first: {first})"
                )
            if done[op] == ["?"]:
                notes.append(
                    f"{op}: annotated on {len(pos)} probes and left float on {len(neg)}, "
                    "by no condition bcfg knows: the spec annotates it everywhere "
                    f"(first float: {obs.unannotated[op][0][0]})"
                )
            else:
                hooks.append(
                    f"when_{_ident(op)}: {op} is quantized where {' and '.join(done[op])} "
                    f"({len(pos)} probes quantized it, {len(neg)} left it float)"
                )
        p.when = [] if done[op] == ["?"] else done[op]
    _chain_conditions(patterns, obs, notes, hooks, checks)


def _chain_conditions(
    patterns: list[Pattern],
    obs: Observations,
    notes: list[str],
    hooks: list[str],
    checks: dict[str, Any],
) -> None:
    """A ``when:`` for each chain of several ops where, on some probes, a shorter chain was
    matched at its first op though the chain's ops followed it."""
    from ...live.probe.annotations import op_name

    def path(node: Any, ops: tuple[str, ...], taken: set[Any]) -> list[Any] | None:
        """The nodes after ``node`` that continue the chain ``ops`` (none in ``taken``)."""
        out = []
        for op in ops[1:]:
            nxt = [u for u in node.users if op_name(u) == op and u not in taken]
            if not nxt:
                return None
            node = nxt[0]
            out.append(node)
        return out

    chains = [m for m in obs.matches if m.kind == "chain"]
    for p in patterns:
        if p.kind != "chain" or len(p.ops) < 2:
            continue
        pos = [m.first for m in chains if m.ops == p.ops]
        # the nodes positive matches hold (the other conv of an add of two is not a negative)
        taken = {n for first in pos for n in path(first, p.ops, set()) or []}
        neg = [
            m.first
            for m in chains
            if len(m.ops) < len(p.ops)
            and p.ops[: len(m.ops)] == m.ops
            and path(m.first, p.ops, taken) is not None
        ]
        if not neg:
            continue
        found = _separate(checks, pos, neg)
        chain = " -> ".join(p.ops)
        if found == ["?"]:
            notes.append(
                f"{chain}: matched on {len(pos)} probes, and a shorter chain on {len(neg)} "
                "where its ops followed, by no condition bcfg knows"
            )
            continue
        p.chain_when = found
        hooks.append(
            f"{p.when_name}: {chain} is matched where {' and '.join(p.checks)} ({len(neg)} "
            "probes matched a shorter chain where its ops followed)"
        )


def _separate(checks: dict[str, Any], pos: list[Any], neg: list[Any]) -> list[str]:
    """The fewest checks (one or two) true on every positive and false together on every
    negative; ["?"] if there are none."""

    def holds(name: str, node: Any) -> bool:
        return _holds(checks[name], node)

    ok = [c for c in checks if all(holds(c, n) for n in pos)]
    for c in ok:
        if not any(holds(c, n) for n in neg):
            return [c]
    for i, a in enumerate(ok):
        for b in ok[i + 1 :]:
            if not any(holds(a, n) and holds(b, n) for n in neg):
                return [a, b]
    return ["?"]


def _closest(checks: dict[str, Any], pos: list[Any], neg: list[Any]) -> tuple[list[str], list]:
    """The one check true on every positive that is false on the most negatives (["?"] if
    none is false on any), and the negatives it leaves."""
    best: tuple[list[str], list] = (["?"], neg)
    for name, check in checks.items():
        if not all(_holds(check, n) for n in pos):
            continue
        left = [n for n in neg if _holds(check, n)]
        if len(left) < len(best[1]):
            best = ([name], left)
    return best


def _holds(check: Any, node: Any) -> bool:
    try:
        return bool(check(node))
    except Exception:  # noqa: BLE001  (a check that cannot read the node does not hold)
        return False


def _share_text(sh: Share) -> str:
    text = _form_text(sh.form)
    if sh.eager_form is not None:
        return f"{text} after a quantized op; {_form_text(sh.eager_form)} after an unquantized one"
    return text + ("; even after an unquantized op" if sh.eager else "; after a quantized op")


def _form_text(form: tuple) -> str:
    first, rest, out = form
    words = {"act": "a spec of its own", "node0": "shares the first input's observer",
             "edge0": "shares the first input's edge", "none": "none", "other": "other"}  # fmt: skip
    text = f"first input {words[first]}"
    if rest is not None:
        text += f", other inputs {words[rest]}"
    return text + f", output {words[out]}"


COMPOSABLE = "composable"
# scopes: composable with the shared ops as its own shared_observer patterns (clusters that
# share the first spec around them, as ExecuTorch's composable quantizers share), not
# hooks.Sharing
CLUSTERS = "composable (clusters)"
COMPOSITIONS = (COMPOSABLE, CLUSTERS, "operators", "modules")
# The binary ops a chain's other: says the other input of (scopes: operators)
BINARY = {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor"}


class Unsayable(Exception):
    """The observed rules cannot be written under a composition (why, in its message)."""


def _source_element(op: str) -> str | None:
    """The module class, else function, that torch.export turns into the ATen op ``op``
    alone (``aten.conv2d.default`` -> ``torch.nn.Conv2d``): a chain's element under
    ``scopes: operators``, which finds chains by source partitions."""
    from ...semantics.aten_ops import MAPPING

    full = "torch.ops." + op
    found = [k for k, v in MAPPING.items() if len(v) == 1 and full in v[0] and "." in k]

    def rank(k: str) -> int:
        last = k.rsplit(".", 1)[-1]
        if k.startswith("torch.nn.") and last[:1].isupper() and "functional" not in k:
            return 0
        return 1 if k.startswith("torch.nn.functional.") else 2 if k.startswith("operator.") else 3

    return min(found, key=lambda k: (rank(k), k)) if found else None


def split_configs(interp: Interpretation) -> tuple[list[Config], list[tuple[str, str]]]:
    """The observed configs as one global config and operator-type configs, for ``scopes:
    operators`` and ``modules``: the configs by how many chains use them (the global config
    takes each role from the first that has it), and (ATen op, config) for the chains of a
    config that gives a role another spec than the global one."""
    from .pt2e_observe import _spec_key

    order = sorted(interp.configs, key=lambda c: -len(c.chains))
    merged: dict[str, Any] = {}
    for c in order:
        for role, spec in c.specs.items():
            if spec is not None:
                merged.setdefault(role, _spec_key(spec))
    per_op = []
    for c in order:
        if any(
            spec is not None and _spec_key(spec) != merged[role] for role, spec in c.specs.items()
        ):
            per_op += [(op, c.name) for op in c.chains]
    return order, per_op


def _any_spec(interp: Interpretation) -> Any:
    for c in interp.configs:
        if c.specs.get("input") is not None:
            return c.specs["input"]
    return None


def _ident(op: str) -> str:
    return re.sub(r"\W+", "_", op.removeprefix("aten.")).strip("_")


# ------------------------------------------------------------------ writing


def backend_name(class_name: str) -> str:
    """``AcmeNPUQuantizer`` -> ``acme_npu``."""
    base = class_name.removesuffix("Quantizer") or class_name
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", base).lower()
    snake = re.sub(r"\W+", "_", snake).strip("_")
    return snake if snake and not snake[0].isdigit() else f"imported_{snake}"


_DTYPES = {
    "torch.int8": "int8", "torch.uint8": "uint8", "torch.int16": "int16",
    "torch.int32": "int32", "torch.qint8": "qint8", "torch.quint8": "quint8",
    "torch.qint32": "qint32", "torch.uint16": "uint16", "torch.float16": "float16",
}  # fmt: skip


def _number(v: float) -> str:
    mant, exp = math.frexp(v)
    if v > 0 and mant == 0.5 and exp - 1 < -3:
        return f"2 ** -{1 - exp}"
    return repr(float(v))


def _literal(v: Any) -> str | None:
    """An observer argument as Python source; None where Python cannot spell it (Qualcomm's
    ConcatObserver takes the annotated graph: the hooks pass None, the proof shows it)."""
    import torch

    if isinstance(v, (torch.dtype, torch.qscheme)):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    if isinstance(v, (int, float, str, bool)) or v is None:
        return repr(v)
    return None


class Writer:
    def __init__(self, name: str, hooks_module: str, target: str, class_name: str) -> None:
        self.name = name
        self.hooks_module = hooks_module
        self.target = target
        self.class_name = class_name
        self.constraints: dict[tuple, str] = {}
        self.dtypes: dict[tuple, str] = {}
        self.problems: list[str] = []
        self.forms: set[str] = set()  # the derive forms the hooks define already

    def constraint(self, spec: Any) -> str:
        """A constraint for a spec's range (``float`` for none)."""
        if spec is None:
            return "float"
        if type(spec).__name__ == "SharedQuantizationSpec":
            return "float"
        dtype = _DTYPES.get(str(spec.dtype))
        if dtype is None:
            self.problems.append(f"dtype {spec.dtype} has no word in the language")
            return "float"
        # a range left None is the dtype's own (ExecuTorch's Cortex-M configs leave it)
        fields = [
            f"{name}: {value}"
            for name, value in (("quant_min", spec.quant_min), ("quant_max", spec.quant_max))
            if value is not None
        ]
        if type(spec).__name__ == "FixedQParamsQuantizationSpec":
            fields += [f"scale: {_number(float(spec.scale))}", f"zero_point: {spec.zero_point}"]
        key = (dtype, *fields)
        if key not in self.constraints:
            self.constraints[key] = f"c{len(self.constraints)}_{dtype}"
        return self.constraints[key]

    def dtype_config(self, cfg: Config) -> str:
        parts = [
            ("input", self.constraint(cfg.specs.get("input"))),
            ("output", self.constraint(cfg.specs.get("output"))),
        ]
        if cfg.specs.get("weight") is not None:
            parts.append(("weight", self.constraint(cfg.specs["weight"])))
        key = tuple(parts)
        if key not in self.dtypes:
            self.dtypes[key] = f"d{len(self.dtypes)}"
        return self.dtypes[key]

    def spec_text(
        self, interp: Interpretation, header: list[str], composition: str = "composable"
    ) -> str:
        """The spec under one of ``COMPOSITIONS``: ``composable`` (stages of the observed
        configs, sharing by the hooks' mixin) or ``operators``/``modules`` (the language's
        other schemes: shared ops are ``shared_observer`` patterns after quantized inputs, and
        the observed configs are merged into the global config ``hooks.configure`` sets)."""
        if composition not in (COMPOSABLE, CLUSTERS):
            return self._scoped_text(interp, header, composition)
        from ...emit.pt2e import class_name as generated_class

        body = self._patterns(interp, eager=True, elements={})
        stages = [
            f"                {{config: hooks.{c.name}, chains: [{', '.join(c.chains)}]}},"
            for c in interp.configs
            if c.chains
        ]
        clusters = composition == CLUSTERS and bool(interp.shares)
        if clusters:
            body = body + _cluster_patterns(self._shared_ops(interp))
        names = [generated_class(self.name)]
        mixins = ["hooks.Sharing"] * (bool(interp.shares) and not clusters)
        mixins += ["hooks.SharedTargets"] * (clusters and bool(interp.shared_targets))
        mixins += ["hooks.PositionalWeights"] * bool(interp.positional)
        mixins += ["hooks.NonFloatInputs"] * bool(interp.nonfloat)
        mixin = (
            ""
            if not mixins
            else f" base: {mixins[0]}," if len(mixins) == 1 else f" base: [{', '.join(mixins)}],"
        )
        if self.class_name and self.class_name != names[0] and self.class_name.isidentifier():
            names.append(self.class_name)
        classes = []
        # each class runs its own init (a derived class not its parent's): the model's io
        init = " init: hooks.model_io," if interp.io is not None else ""
        for i, n in enumerate(names):
            base = mixin if i == 0 else f" base: {names[0]},"
            classes += ["        {", f"            name: {n},{base}{init}", "            stages: ["]
            classes += stages
            classes += ["            ],", "        },"]
        out = [*(f"# {h}" if h else "#" for h in header), ""]
        out.append(f"alias hooks = {self.hooks_module}")
        out.append("")
        for key, name in self.constraints.items():
            out.append(f"constraint {name} = {key[0]} {{{', '.join(key[1:])}}}")
        for key, name in self.dtypes.items():
            fields = ", ".join(f"{role}: {c}" for role, c in key)
            out.append(f"dtypes {name} = {{{fields}}}")
        out.append("dtypes io_any = {input: float, output: float}")
        out += [
            "",
            f"quantizer {self.name} {{",
            "    scopes: composable",
            *(["    transform: hooks.transform"] if interp.transform else []),
            "    fx: false",
            "    classes: [",
            *classes,
            "    ]",
            "}",
            "",
            f"backend {self.name} {{",
            *body,
            *(
                ["    # Shared-observer ops (hooks.Sharing annotates them, as observed):"]
                + [f"    #   {sh.op}: {_share_text(sh)}" for sh in interp.shares]
                if interp.shares and not clusters
                else []
            ),
            "}",
            "",
        ]
        return "\n".join(out)

    def _shared_ops(self, interp: Interpretation) -> list[tuple[Share, str]]:
        """The shared ops written as ``shared_observer`` patterns, each with its dtypes' name
        (one constraint of its spec, else any observed input spec, for input and output);
        one that is a one-op pattern already is left out (one op, one pattern of the spec)."""
        singles = {p.ops[0] for p in interp.patterns if len(p.ops) == 1}
        out = []
        for sh in interp.shares:
            if sh.op in singles:
                continue
            c = self.constraint(sh.spec if sh.spec is not None else _any_spec(interp))
            name = self.dtypes.setdefault((("input", c), ("output", c)), f"d{len(self.dtypes)}")
            out.append((sh, name))
        return out

    def _patterns(
        self, interp: Interpretation, eager: bool, elements: dict[str, str | None]
    ) -> list[str]:
        body: list[str] = []
        written: dict[str, list[str]] = {}  # each pattern's element -> its lines
        for p in interp.patterns:
            source = len(p.ops) > 1 and bool(elements)
            ops = ", ".join(str(elements[o]) if source else o for o in p.ops)
            element = p.ops[0] if len(p.ops) == 1 else f"({ops})"
            if source and len({elements[o] for o in p.ops}) < len(p.ops):
                # torch's source partitions find a chain of distinct types only (its
                # matcher raises on (Linear, add, ReLU, add)): not said under operators
                self.problems.append(
                    f"{' -> '.join(p.ops)}: not written under scopes: operators, whose "
                    f"source partitions find a chain of distinct elements only ({ops})"
                )
                continue
            lines = self._pattern_lines(p, element, source, eager)
            if element in written:
                # chains of ATen ops one source element stands for (add.Tensor and add_.Tensor
                # are both operator.add): one pattern, which source partitions match for both
                if written[element] != lines:
                    self.problems.append(
                        f"{' -> '.join(p.ops)}: written as {element} like an earlier chain of "
                        "other rules, which it takes (source partitions do not tell them apart)"
                    )
                continue
            written[element] = lines
            body.extend(lines)
        return body

    def _pattern_lines(self, p: Pattern, element: str, source: bool, eager: bool) -> list[str]:
        """One pattern of the spec: ``element`` with the rules of ``p``."""
        lines = [f"    pattern {element} {{"]
        if p.kind == "shared":
            lines.append("        observation: shared_observer")
        cfg = p.config
        lines.append(f"        dtypes: {self.dtype_config(cfg) if cfg else 'io_any'}")
        keys = ["match: source"] if source else []
        if source and p.other is not None and BINARY & set(p.ops[1:]):
            keys.append(f"other: {p.other}")
        if p.eager and eager:
            keys.append("eager: true")
        if p.checks:
            keys.append(f"when: hooks.{p.when_name}")
        if keys:
            lines.append(f"        pt2e: {{{', '.join(keys)}}}")
        lines.append("    }")
        return lines

    def _scoped_text(self, interp: Interpretation, header: list[str], composition: str) -> str:
        # scopes: operators finds a chain by its elements' source partitions: each ATen op is
        # written as the module class (or function) torch.export turns into it
        chains = [p for p in interp.patterns if len(p.ops) > 1]
        elements = {op: _source_element(op) for p in chains for op in p.ops}
        if composition == "operators" and None in elements.values():
            missing = sorted(op for op, e in elements.items() if e is None)
            raise Unsayable(f"no module class or function exports to {', '.join(missing)}")
        conditions = [p.checks for p in interp.patterns] + [sh.when for sh in interp.shares]
        if composition == "modules" and any(conditions):
            # its base reads no when: the rules are tried without their conditions
            interp = dataclasses.replace(
                interp,
                patterns=[dataclasses.replace(p, when=[], chain_when=[]) for p in interp.patterns],
                shares=[dataclasses.replace(sh, when=[]) for sh in interp.shares],
            )
        body = self._patterns(
            interp, eager=False, elements=elements if composition == "operators" else {}
        )
        for sh, name in self._shared_ops(interp):
            whens = [] if sh.eager or composition == "modules" else ["input_quantized"]
            if sh.when:
                whens.append(f"hooks.when_shared_{_ident(sh.op)}")
            when = (
                ""
                if not whens
                else (
                    f"\n        pt2e: {{when: {whens[0] if len(whens) == 1 else '[' + ', '.join(whens) + ']'}}}"
                )
            )
            body += [
                f"    pattern {sh.op} {{",
                "        observation: shared_observer",
                f"        dtypes: {name}{when}",
                "    }",
            ]
        head = [
            *(f"# {h}" if h else "#" for h in header),
            "",
            f"alias hooks = {self.hooks_module}",
            "",
        ]
        for key, name in self.constraints.items():
            head.append(f"constraint {name} = {key[0]} {{{', '.join(map(str, key[1:]))}}}")
        for roles, name in self.dtypes.items():
            head.append(f"dtypes {name} = {{{', '.join(f'{r}: {c}' for r, c in roles)}}}")
        head.append("dtypes io_any = {input: float, output: float}")
        fields = [f"    scopes: {composition}"]
        fields += ["    transform: hooks.transform"] if interp.transform else []
        fields += ["    fx: false", "    classes: ["]
        # the observed configs are set by the constructor (hooks.configure: set_global and
        # set_operator_type), so that the getter's quantizer needs no configuration
        fields += [f"        {{{c}}}," for c in self._class_records("init: hooks.configure")]
        return "\n".join(
            [*head, "", f"quantizer {self.name} {{", *fields, "    ]", "}", "",
             f"backend {self.name} {{", *body, "}", ""]
        )  # fmt: skip

    def _class_records(self, own: str) -> list[str]:
        """The generated class's record (``own``: its keys after the name) and, when the
        original's class name differs, a class of that name derived from it."""
        from ...emit.pt2e import class_name as generated_class

        names = [generated_class(self.name)]
        records = [f"name: {names[0]}, {own}"]
        if self.class_name and self.class_name != names[0] and self.class_name.isidentifier():
            records.append(f"name: {self.class_name}, base: {names[0]}")
        return records

    def hooks_text(self, interp: Interpretation, composition: str = "composable") -> str:
        imports: set[str] = set()
        lines = self.hooks_header() + self.config_lines(interp, imports)
        composable = composition in (COMPOSABLE, CLUSTERS)
        sharing = bool(interp.shares) and composition == COMPOSABLE
        if sharing:
            lines += self.sharing(interp.shares, imports, interp.io_after)
        if interp.positional and composable:
            lines += _positional_lines(interp.positional, sharing)
        if interp.nonfloat and composable:
            lines += _nonfloat_lines(interp, sharing or bool(interp.positional))
        if interp.io is not None and composable:
            lines += _io_lines(interp.io)
        if composition == CLUSTERS and interp.shares and interp.shared_targets:
            refs = [self.ref(t, imports) for t in interp.shared_targets.values()]
            lines += [
                "",
                # at module level: an alias of _operator (__operator) would be mangled in a class
                f"_SHARED_TARGETS = ({', '.join(refs)},)",
                "",
                "",
                "class SharedTargets:",
                '    """Call targets shared like the shared_observer patterns, which no pattern',
                '    can name (not ATen ops): the composable scheme\'s clusters take them."""',
                "",
                "    shared_targets = _SHARED_TARGETS",
                "",
            ]
        if not composable:
            lines += _configure_lines(interp, composition)
        if interp.transform:
            lines += _transform_lines(self.target)
        lines += _when_lines(interp, composition)
        text = "\n".join(lines)
        return text.replace("#IMPORTS", "\n".join(sorted(imports)))

    def hooks_header(self) -> list[str]:
        """The hooks module's docstring and imports (``#IMPORTS`` is replaced at the end)."""
        return [
            f'"""What the spec {self.name}.bcfg cannot say, imported by probing {self.target}.',
            "",
            "Each object is named in the spec; bcfg import wrote this module.",
            '"""',
            "",
            "import torch",
            "from torch.fx import Node",
            "from torchao.quantization.pt2e.quantizer import (",
            "    DerivedQuantizationSpec,",
            "    FixedQParamsQuantizationSpec,",
            "    QuantizationAnnotation,",
            "    QuantizationConfig,",
            "    QuantizationSpec,",
            "    SharedQuantizationSpec,",
            ")",
            "#IMPORTS",
            "",
        ]

    def config_lines(self, interp: Interpretation, imports: set[str]) -> list[str]:
        """One ``QuantizationConfig`` per observed config (a derived bias gets its function)."""
        lines: list[str] = []
        for c in interp.configs:
            fields = {}
            for role, attr in (("input", "input_activation"), ("output", "output_activation"),
                               ("weight", "weight")):  # fmt: skip
                fields[attr] = self.python_spec(c.specs.get(role), imports)
            bias = c.specs.get("bias")
            if bias is not None and type(bias).__name__ == "DerivedQuantizationSpec":
                fn = f"_bias_{c.name.lower()}"
                lines += self.derived(fn, c, imports)
                fields["bias"] = fn
            else:
                fields["bias"] = self.python_spec(bias, imports)
            args = ", ".join(f"{k}={v}" for k, v in fields.items())
            lines += [f"{c.name} = QuantizationConfig({args}, is_qat=False)", ""]
        return lines

    def sharing(self, shares: list[Share], imports: set[str], io_after: bool) -> list[str]:
        rows = []
        for sh in shares:
            spec = self.python_spec(sh.spec, imports) if sh.spec is not None else "None"
            when = f"'_when_shared_{_ident(sh.op)}'" if sh.when else "None"
            rows.append(
                f"    {sh.op!r}: ({sh.form!r}, {sh.eager}, {spec}, {when}, {sh.eager_form!r}),"
            )
        return [
            "# op: ((first input, other inputs, output), eager, the first input's own spec,",
            "# the name of the condition it is shared under, the form after an unquantized",
            "# first input where it differs):",
            "# act: that spec; node0: shares the first input's output; edge0: shares the first",
            "# input's edge into the op; eager: annotated though the first input is not.",
            "SHARED = {",
            *rows,
            "}",
            "# True: an annotated model input is no quantized producer (the original annotates",
            "# the model's inputs after it decides its shared ops)",
            f"IO_AFTER = {io_after}",
            "",
            "",
            *_SHARING_CLASS,
        ]

    def python_spec(self, spec: Any, imports: set[str]) -> str:
        if spec is None or type(spec).__name__ == "SharedQuantizationSpec":
            return "None"
        common = (
            f"dtype={spec.dtype}, quant_min={spec.quant_min}, quant_max={spec.quant_max}, "
            f"qscheme={spec.qscheme}"
        )
        if type(spec).__name__ == "FixedQParamsQuantizationSpec":
            return (
                f"FixedQParamsQuantizationSpec({common}, scale={float(spec.scale)!r}, "
                f"zero_point={spec.zero_point}, is_dynamic={spec.is_dynamic})"
            )
        ctr = self.python_ctr(spec.observer_or_fake_quant_ctr, imports)
        return (
            f"QuantizationSpec({common}, ch_axis={spec.ch_axis}, is_dynamic={spec.is_dynamic}, "
            f"observer_or_fake_quant_ctr={ctr})"
        )

    def python_ctr(self, ctr: Any, imports: set[str]) -> str:
        import functools

        if isinstance(ctr, type):
            return self.ref(ctr, imports)
        f = getattr(ctr, "p", ctr)
        kwargs: dict[str, Any] = {}
        while isinstance(f, functools.partial):
            for k, v in f.keywords.items():
                kwargs.setdefault(k, v)
            f = getattr(f.func, "p", f.func)
        if not isinstance(f, type):
            self.problems.append(f"observer constructor {ctr!r} is not a class with arguments")
            return "None"
        args = ", ".join(f"{k}={self.value(v, imports)}" for k, v in sorted(kwargs.items()))
        return f"{self.ref(f, imports)}.with_args({args})"

    def value(self, v: Any, imports: set[str]) -> str:
        if isinstance(v, type):
            return self.ref(v, imports)
        text = _literal(v)
        if text is None:  # an object bound to what the original annotated: see _literal
            self.problems.append(
                f"observer argument {type(v).__name__} {v!r} cannot be written: the hooks pass None"
            )
        return text or "None"

    def ref(self, obj: Any, imports: set[str]) -> str:
        if not nameable(obj):
            self.problems.append(f"{obj!r} has no importable dotted path")
            return "None"
        module, qual = obj.__module__, obj.__qualname__
        alias = f"_{re.sub(r'[^A-Za-z0-9]', '_', module)}"
        imports.add(f"import {module} as {alias}")
        return f"{alias}.{qual}"

    def derived(self, fn: str, cfg: Config, imports: set[str]) -> list[str]:
        """``fn(node)``, the derived bias spec of ``cfg`` at ``node``: its function by its dotted
        path, or the form it was identified by (``cfg.bias_form``, written once before), or
        none, with a warning naming it and the first probe it was seen on."""
        spec = cfg.specs["bias"]
        refs = []
        for e in spec.derived_from:
            if isinstance(e, tuple):
                refs.append(e)
            else:
                self.problems.append("a derived spec derives from a node, not an edge")
        first = spec.derived_from[0] if spec.derived_from else None
        node = first[1] if isinstance(first, tuple) else None
        args = []
        for a, n in refs:
            if n is node and a in node.args:
                args.append(f"(node.args[{node.args.index(a)}], node)")
            else:
                self.problems.append(
                    "the derived bias derives from other nodes than its own inputs"
                )
        lines: list[str] = []
        if nameable(spec.derive_qparams_fn):
            derive = self.ref(spec.derive_qparams_fn, imports)
        else:
            derive, lines = _unnamed_derive(cfg, self.forms, self.problems)
        return lines + [
            f"def {fn}(node):",
            "    return DerivedQuantizationSpec(",
            f"        derived_from=[{', '.join(args)}],",
            f"        derive_qparams_fn={derive},",
            f"        dtype={spec.dtype}, quant_min={spec.quant_min}, quant_max={spec.quant_max},",
            f"        qscheme={spec.qscheme}, ch_axis={spec.ch_axis}, is_dynamic={spec.is_dynamic},",
            "    )",
            "",
        ]


def _unnamed_derive(cfg: Config, forms: set[str], problems: list[str]) -> tuple[str, list[str]]:
    """The hooks' name of the derived bias function of ``cfg`` where the original's has no
    dotted path, and the lines that define it first: the form it was identified by (once in
    the hooks: ``forms``), or None with a warning (``problems``) naming the function and
    the first probe it was seen on."""
    form = cfg.bias_form
    if form is not None:
        lines = [] if form.name in forms else [*form.source.splitlines(), "", ""]
        forms.add(form.name)
        return form.name, lines
    first = cfg.biases[0][0] if cfg.biases else "?"
    problems.append(
        f"the derived bias of {cfg.name} (first on probe {first}) is computed by "
        f"{_label(cfg.specs['bias'].derive_qparams_fn)}, which has no importable dotted path "
        "and computes none of the forms a spec can say (the product of the input's and the "
        "weight's scales, zero point 0): the hooks give it no function, so biased ops differ"
    )
    return "None", []


# The hooks' Sharing mixin and its helpers (bcfg import writes them with SHARED and IO_AFTER).
_SHARING_CLASS = [
    "class Sharing:",
    '    """After the spec\'s patterns, the shared-observer ops in graph order, as observed."""',
    "",
    "    def annotate(self, model):",
    "        model = super().annotate(model)",
    "        for node in model.graph.nodes:",
    '            entry = SHARED.get(str(node.target)) if node.op == "call_function" else None',
    "            if entry is None or _KEY in node.meta:",
    "                continue",
    "            form, eager, own, when, eager_form = entry",
    "            inputs = _inputs(node)",
    "            quantized = bool(inputs) and _KEY in inputs[0].meta",
    "            if IO_AFTER and quantized and inputs[0].op == 'placeholder':",
    "                quantized = False  # the original annotates model inputs later",
    "            if not inputs or (not eager and not quantized):",
    "                continue",
    "            first, rest, out = eager_form if eager_form and not quantized else form",
    "            if when is not None and not globals()[when](node):",
    "                continue",
    "            specs = {}",
    "            for i, arg in enumerate(inputs):",
    "                kind = first if i == 0 else rest",
    "                spec = _shared(kind, inputs[0], node, own)",
    "                if spec is not None:",
    "                    specs[arg] = spec",
    "            node.meta[_KEY] = QuantizationAnnotation(",
    "                input_qspec_map=specs,",
    "                output_qspec=_shared(out, inputs[0], node, own),",
    "                _annotated=True,",
    "            )",
    "        return model",
    "",
    "",
    '_KEY = "quantization_annotation"',
    "",
    "",
    "def _inputs(node):",
    "    out = []",
    "    for arg in node.args:",
    "        for a in arg if isinstance(arg, (list, tuple)) else [arg]:",
    "            if isinstance(a, Node) and a not in out:",
    "                out.append(a)",
    "    return out",
    "",
    "",
    "def _shared(kind, first, node, own):",
    '    if kind == "act":',
    "        return own",
    '    if kind == "node0":',
    "        return SharedQuantizationSpec(first)",
    '    if kind == "edge0":',
    "        return SharedQuantizationSpec((first, node))",
    "    return None",
    "",
]


def _cluster_patterns(shared_ops: list[tuple[Share, str]]) -> list[str]:
    """The shared ops as the composable scheme's own ``shared_observer`` patterns, for
    ``CLUSTERS``: clusters of connected shared ops that share the first spec found around
    them (ExecuTorch's SharedQspecQuantizer). None is eager: a cluster shares what is around
    it (a pool after a quantized op gets that op's spec, as an eager one would its config's),
    and a cluster of which nothing around is quantized stays float."""
    body: list[str] = []
    for sh, name in shared_ops:
        body += [f"    pattern {sh.op} {{", "        observation: shared_observer",
                 f"        dtypes: {name}", "    }"]  # fmt: skip
    return body


def _transform_lines(target: str) -> list[str]:
    """``transform``: the original quantizer's own transform_for_annotation."""
    module, _, function = target.partition(":")
    return [
        "_ORIGINAL = []",
        "",
        "",
        "def transform(model):",
        f'    """{target}()\'s own transform_for_annotation (bcfg cannot say it)."""',
        "    if not _ORIGINAL:",
        f"        import {module} as _target",
        "",
        f"        _ORIGINAL.append(_target.{function}())",
        "    return _ORIGINAL[0].transform_for_annotation(model)",
        "",
    ]


def _positional_lines(positional: dict[str, str], shared: bool) -> list[str]:
    """``PositionalWeights``: the weight (and bias) of a conv or linear given as a model input
    gets its config's weight (and bias) spec, as the quantizer reads them by position (the
    composable scheme takes only parameters as weights)."""
    rows = [f"    {op!r}: {name}," for op, name in positional.items()]
    lines = ["", "POSITIONAL = {", *rows, "}", "", ""]
    if not shared:  # Sharing's module helpers are written with it
        lines += ['_KEY = "quantization_annotation"', "", ""]
    return lines + [
        "class PositionalWeights:",
        '    """After the spec\'s patterns: weights and biases that are model inputs, by position."""',
        "",
        "    def annotate(self, model):",
        "        model = super().annotate(model)",
        "        for node in model.graph.nodes:",
        '            config = POSITIONAL.get(str(node.target)) if node.op == "call_function" else None',
        "            qa = node.meta.get(_KEY)",
        "            if config is None or qa is None:",
        "                continue",
        "            for i, spec in ((1, config.weight), (2, config.bias)):",
        "                arg = node.args[i] if len(node.args) > i else None",
        '                if isinstance(arg, Node) and arg.op != "get_attr" and arg in qa.input_qspec_map:',
        "                    qa.input_qspec_map[arg] = spec(node) if callable(spec) else spec",
        "        return model",
        "",
    ]


def _nonfloat_lines(interp: Interpretation, key_written: bool) -> list[str]:
    """``NonFloatInputs``: a one-op pattern the quantizer annotates though an input is no
    float tensor (the composable scheme quantizes float tensors only), under its ``when:``."""
    whens = {p.ops[0]: p.when_name for p in interp.patterns if len(p.ops) == 1 and p.checks}
    rows = [f"    {op!r}: ({name}, {whens.get(op)!r})," for op, name in interp.nonfloat.items()]
    lines = ["", "# op: (its config, the name of its when: condition)", "NONFLOAT = {", *rows]
    lines += ["}", "", ""]
    if not key_written:
        lines += ['_KEY = "quantization_annotation"', "", ""]
    return lines + [
        "class _At:",
        "    def __init__(self, node):",
        "        self.node = node",
        "",
        "",
        "class NonFloatInputs:",
        '    """After the spec\'s patterns: the ops annotated though an input is no float tensor."""',
        "",
        "    def annotate(self, model):",
        "        model = super().annotate(model)",
        "        for node in model.graph.nodes:",
        '            entry = NONFLOAT.get(str(node.target)) if node.op == "call_function" else None',
        "            qa = node.meta.get(_KEY)",
        "            if entry is None or (qa is not None and (qa.input_qspec_map or qa.output_qspec)):",
        "                continue  # the spec's patterns annotated it",
        "            config, when = entry",
        "            inputs = [a for a in node.args if isinstance(a, Node)]",
        "            vals = [a.meta.get('val') for a in inputs]",
        "            if not any(getattr(v, 'dtype', torch.float).is_floating_point is False for v in vals):",
        "                continue  # float inputs: the spec's patterns decided",
        "            if when is not None and not globals()[when](_At(node)):",
        "                continue",
        "            node.meta[_KEY] = QuantizationAnnotation(",
        "                input_qspec_map={a: config.input_activation for a in inputs},",
        "                output_qspec=config.output_activation,",
        "                _annotated=True,",
        "            )",
        "        return model",
        "",
    ]


def _io_lines(io: ModelIOPlan) -> list[str]:
    """``model_io``: the init hook that adds a stage of the observed config for the model's
    inputs and its output node (the composable scheme annotates a placeholder with the
    config's output spec, the output node with its input spec on each float input)."""
    stages = [
        f"    quantizer.add_stage({io.config.name}, finder=_ModelIO({kind!r}, {floats}))"
        for kind, floats in io.sides
    ]
    return [
        "",
        "class _ModelIO:",
        '    """The nodes of a stage of the model\'s io: placeholders or the output node (with',
        '    floats: those carrying a float tensor only)."""',
        "",
        "    def __init__(self, op, floats):",
        "        self.op, self.floats = op, floats",
        "",
        "    def find_nodes(self, model):",
        "        return [",
        "            n for n in model.graph.nodes",
        "            if n.op == self.op and (not self.floats or _carries_float(n))",
        "        ]",
        "",
        "",
        "def _carries_float(node):",
        '    nodes = node.all_input_nodes if node.op == "output" else [node]',
        '    return any(getattr(getattr(n.meta.get("val"), "dtype", None), "is_floating_point", False)',
        "               for n in nodes)",
        "",
        "",
        "def model_io(quantizer):",
        '    """The model\'s inputs and output, quantized as observed: a stage each."""',
        *stages,
        "",
    ]


def _configure_lines(interp: Interpretation, composition: str) -> list[str]:
    """``configure``: the observed configs for a composition other than composable (the
    global config merged from them, operator types for the ops of a config that differs)."""
    order, per_op = split_configs(interp)
    names = ", ".join(c.name for c in order)
    ops = "".join(f"        (torch.ops.{op}, {c}),\n" for op, c in per_op)
    return [
        "",
        "def configure(quantizer):",
        f'    """The observed configs (scopes: {composition}): merged into the global',
        '    config, but for the ops of a config that differs from it: operator types."""',
        "    fields = {}",
        f"    for config in ({names},):",
        "        for f in ('input_activation', 'output_activation', 'weight', 'bias'):",
        "            if fields.get(f) is None:",
        "                fields[f] = getattr(config, f)",
        "    quantizer.set_global(QuantizationConfig(**fields, is_qat=False))",
        f"    for op, config in (\n{ops}    ):",
        "        quantizer.set_operator_type(op, config)",
        "    return quantizer",
        "",
    ]


def _when_lines(interp: Interpretation, composition: str) -> list[str]:
    """The ``when:`` conditions of patterns and shares, with the checks they use (none
    when no pattern or share has a condition)."""
    whens = [(f"_when_shared_{_ident(sh.op)}", sh.when) for sh in interp.shares if sh.when]
    if not any(p.checks for p in interp.patterns) and not whens:
        return []
    lines = PRELUDE.strip("\n").splitlines() + [""]
    for fname, checks in whens:
        lines.append(f"def {fname}(node):")
        lines.append(f"    return {' and '.join(f'_check_{c}(node)' for c in checks)}")
        lines.append("")
        if composition != "composable":
            lines += [
                f"def {fname[1:]}(match):",
                f"    return {fname}(match.node)",
                "",
            ]
    written = set()
    for p in interp.patterns:
        if not p.checks or p.when_name in written:
            continue
        written.add(p.when_name)
        lines.append(f"def {p.when_name}(match):")
        lines.append(f"    return {' and '.join(f'_check_{c}(match.node)' for c in p.checks)}")
        lines.append("")
    used = {c for p in interp.patterns for c in p.checks} | {c for _, w in whens for c in w}
    for check in sorted(used):
        lines += ["", f"def _check_{check}(node):", f"    {CONDITIONS[check]}", ""]
    return lines
