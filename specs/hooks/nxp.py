"""What specs/nxp.bcfg still says in Python: NXP's own order of annotation, fusions, observers
and checks, as ExecuTorch 1.5.1's ``NeutronQuantizer`` has them.

- ``Neutron``, the generated ``NeutronQuantizer``'s mixin: its ``annotate`` gives the model's
  inputs the activation spec, runs the concat-cluster pair, then, at each node in graph order,
  the pair of its op: once (``op_to_applied_quantizer``, kept across calls as ExecuTorch keeps
  it), a shared pattern of one input at each of its nodes. ``transform_for_annotation`` is
  NXP's (ExecuTorch's aten passes, which need the eIQ Neutron SDK, imported when called).
- ``init`` makes the pairs: each one-op pattern of the spec (``qat_only`` ones in QAT only)
  with ExecuTorch's config; the chains are the fusions: a weighted op whose only user starts
  one leaves its output to the chain's last op.
- ``Pair``: a pair's anchors by the rule (NXP's ``get_anchors``): a ``shared_observer``
  pattern shares its input's spec (its inputs' first quantized one with ``inputs: [0, 1]``),
  is skipped while that is float (cat: plain specs then); a ``when:`` that fails makes an
  activation share its input's spec; a dtype with a scale gives fixed qparams; an input of
  the weight's dtype gets the weight spec.

torch and torchao are imported when called, so that bcfg resolves this module without them."""

from __future__ import annotations

import functools
import math
from typing import Any

KEY = "quantization_annotation"


@functools.cache
def _t() -> Any:
    """torch, torchao's pt2e and its quantizer module (imported when first called, once)."""
    import torch
    import torchao.quantization.pt2e as ao
    import torchao.quantization.pt2e.quantizer as q

    return torch, ao, q


def act_spec(is_qat: bool) -> Any:
    torch, ao, q = _t()
    ctr = (
        ao.FusedMovingAvgObsFakeQuantize.with_args(
            observer=ao.MovingAverageMinMaxObserver, eps=2**-12
        )
        if is_qat
        else ao.HistogramObserver.with_args(eps=2**-12)
    )
    return q.QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127,
                              qscheme=torch.per_tensor_affine, is_dynamic=False,
                              observer_or_fake_quant_ctr=ctr)  # fmt: skip


def sym_spec(is_qat: bool, ch_axis: int | None = None, channels: bool = False, axis=()) -> Any:
    """Int8 -127..127 symmetric, per tensor (``ch_axis`` only recorded) or per channel
    (``axis``: given to the observer too)."""
    torch, ao, q = _t()
    name = "PerChannelMinMaxObserver" if channels else "MinMaxObserver"
    kw = dict(zip(("ch_axis",) * len(axis), axis))
    ctr = (
        ao.FakeQuantize.with_args(observer=getattr(ao, "MovingAverage" + name), **kw)
        if is_qat
        else getattr(ao, name).with_args(**kw) if kw else getattr(ao, name)
    )
    scheme = torch.per_channel_symmetric if channels else torch.per_tensor_symmetric
    return q.QuantizationSpec(dtype=torch.int8, observer_or_fake_quant_ctr=ctr, quant_min=-127,
                              quant_max=127, qscheme=scheme, ch_axis=ch_axis)  # fmt: skip


def config(is_qat: bool) -> Any:
    """ExecuTorch's static_fc_qconfig (its static_qconfig's weight: ``axis0_weight``)."""
    return _t()[2].QuantizationConfig(act_spec(is_qat), act_spec(is_qat), sym_spec(is_qat), None)


def bias_qparams(obs: list, out_channels: int | None = None) -> Any:
    """The int32 bias's qparams: the input's scale times the weight's (repeated to
    ``out_channels``: a grouped transposed conv), zero point 0."""
    torch = _t()[0]
    act, weight = obs[0].calculate_qparams()[0], obs[1].calculate_qparams()[0]
    if out_channels is not None:
        weight = weight.flatten().repeat(out_channels // weight.numel())
        act = act.flatten()[0]
    scale = act * weight
    return scale, torch.zeros_like(scale, dtype=torch.int64)


def derived_bias(node: Any, x: int, w: int, fn: Any = bias_qparams, channels: bool = False) -> Any:
    torch, _, q = _t()
    return q.DerivedQuantizationSpec(
        derived_from=[(node.args[x], node), (node.args[w], node)], derive_qparams_fn=fn,
        dtype=torch.int32, quant_min=-(2**31) + channels, quant_max=2**31 - 1,
        qscheme=torch.per_channel_symmetric if channels else torch.per_tensor_affine,
        ch_axis=0 if channels else None,
    )  # fmt: skip


def axis0_weight(node: Any, config: Any, is_qat: bool = False) -> list:
    """mm, prelu: the weight (argument 1) per tensor, its spec recording ch_axis 0."""
    return [(node, node.args[1], sym_spec(is_qat, 0))]


def conv_parameters(node: Any, config: Any, is_qat: bool = False, axis: int = 0) -> list:
    """conv2d: the weight per channel (axis 0), the bias derived per channel; a transposed
    one's weight along axis 1, a grouped one's bias derived with the weight's scales
    repeated to the output channels."""
    grouped = axis and len(node.args) >= 7 and node.args[6] > 1
    fn = functools.partial(bias_qparams, out_channels=node.meta["val"].shape[1]) if grouped else bias_qparams  # fmt: skip
    has = len(node.args) > 2 and node.args[2] is not None
    bias = [(node, node.args[2], derived_bias(node, 0, 1, fn, channels=True))] if has else []
    weight = sym_spec(is_qat, axis, channels=True, axis=(axis,) if axis else ())
    return [(node, node.args[1], weight), *bias]


def transposed_conv_parameters(node: Any, config: Any, is_qat: bool = False) -> list:
    return conv_parameters(node, config, is_qat, axis=1)


def relu_bounds(m: Any) -> bool:
    """clamp, hardtanh: a ReLU (bounds (0, inf), (0, 6), (0, 1) or (-1, 1); hardtanh's
    default -1, 1)."""
    clamp = m.node.target == _t()[0].ops.aten.clamp.default
    bounds = (list(m.node.args[1:3]) + ([None, None] if clamp else [-1, 1][len(m.node.args) - 1 :]))[:2]  # fmt: skip
    bounds = tuple(v if v is not None and math.isfinite(v) else None for v in bounds)
    return bounds in ((-1, 1), (0, 1), (0, 6), (0, None))


def fuses(m: Any) -> bool:
    """A weighted op fuses the chain's activation: a hardtanh that is a ReLU or ReLU6; a
    linear of rank 2 at most."""
    aten, act, node = _t()[0].ops.aten, m.nodes[-1], m.node
    if act.target in (aten.hardtanh.default, aten.hardtanh_.default):
        if act.args[1:3] not in ((0.0, 6.0), (0.0, float("inf"))):
            return False
    return node.target != aten.linear.default or len(node.meta["val"].shape) <= 2


def qat_only(m: Any) -> bool:
    """A pattern of QAT only (read by ``init``: a PTQ quantizer has no pair of it)."""
    return True


class Pair:
    """NXP's anchors of a pair's rule (the mixin of ``NeutronAtenQuantizer``): ``rule`` and
    ``config`` are the pair's; ``owner`` the NeutronQuantizer whose pairs fusions take."""

    owner: Any = None
    cluster = False

    @property
    def is_qat(self) -> bool:  # the owner's, or (a pair of ExecuTorch's pattern) the pattern's
        return bool(getattr(self.owner or getattr(self, "pattern", None), "is_qat", False))

    def annotate(self, model: Any) -> Any:
        q = _t()[2]
        op = self.rule.chain[0][0]
        groups: dict = {}  # find_sequential_partitions_aten: by source, then graph order
        for n in model.graph.nodes:
            if (stack := n.meta.get("source_fn_stack")) is not None and n.target == op:
                groups.setdefault(stack[-1][1], []).append(n)
        for node in [n for g in groups.values() for n in g]:
            anchors = (
                self.cluster_anchors(model, node) if self.cluster else self.anchors(model, node)
            )
            if anchors is None:
                continue
            inputs, outputs = anchors
            if any(KEY in n.meta and n.meta[KEY]._annotated for n, *_ in inputs + outputs):
                continue
            for n, spec in outputs:
                n.meta[KEY] = q.QuantizationAnnotation(output_qspec=spec, _annotated=True)
            for n, arg, spec in inputs:
                annotation = n.meta.get(KEY, q.QuantizationAnnotation(_annotated=True))
                annotation.input_qspec_map[arg] = spec
                n.meta[KEY] = annotation
        return model

    def qspec(self, quant: Any, default: Any) -> Any:
        """A dtype's spec: fixed qparams if it has a scale, the weight's if it is the weight's
        dtype, else the config's."""
        torch, _, q = _t()
        if quant is not None and quant.scale is not None:
            return q.FixedQParamsQuantizationSpec(
                dtype=torch.int8, scale=quant.scale, zero_point=quant.zero_point,
                quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine,
            )  # fmt: skip
        if quant is not None and quant == self.rule.allows[0].weight:  # bmm's: the weight's
            return sym_spec(self.is_qat)
        return default

    def shared(self, node: Any) -> Any:
        q = _t()[2]
        rule, args = self.rule, node.args
        if isinstance(args[0], (list, tuple)):  # cat: its first quantized input's, or plain
            first = next((a for a in args[0] if KEY in a.meta), None)
            ins, out = self.config.input_activation, self.config.output_activation
            ins, out = (q.SharedQuantizationSpec(first),) * 2 if first else (ins, out)
            return [(node, a, ins) for a in args[0]], [(node, out)]
        if len(rule.inputs) > 1:  # maximum, minimum: the first quantized input's
            first = next((a for a in args if KEY in a.meta), None)
            if first is None:
                return None
            shared = q.SharedQuantizationSpec(first)
            return [(node, a, shared) for a in args], [(node, shared)]
        prev = node.all_input_nodes[0]
        if KEY not in prev.meta:  # a float input: nothing to share
            return None
        return [(node, args[0], self.config.input_activation)], [(node, q.SharedQuantizationSpec(prev))]  # fmt: skip

    def anchors(self, model: Any, node: Any) -> Any:
        """(inputs as (node, argument, spec), outputs as (node, spec)), or None: skipped."""
        rule, config = self.rule, self.config
        if rule.kind != "chain" or not all(f(self.api.Context([node])) for f in rule.when if f is not qat_only):  # fmt: skip
            return self.shared(node)
        allows, args, inputs = rule.allows[0] if rule.allows else None, node.args, []
        if rule.parameters != "float":  # batch norm (QAT): its output only
            spec = self.qspec(allows and allows.input, config.input_activation)
            inputs = [(node, args[i], spec) for i in rule.inputs if i < len(args) and hasattr(args[i], "meta")]  # fmt: skip
        if rule.weights is not None:
            inputs += rule.weights(node, config, self.is_qat)
        elif rule.weight is not None and rule.parameters != "float":
            inputs.append((node, args[rule.weight], config.weight))
            if rule.bias is not None and len(args) > rule.bias:
                inputs.append((node, args[rule.bias], derived_bias(node, rule.inputs[0], rule.weight)))  # fmt: skip
        out = [(node, self.qspec(allows and allows.output, config.output_activation))]
        return inputs, self.fused(model, node, out)

    def fused(self, model: Any, node: Any, out: list) -> list:
        """A chain of the owner's from ``node``, each op the only user of the one before: the
        ops after it annotated by their pairs, their inputs float, those before the last
        with no output; ``node`` then has no output spec."""
        for ops, when in getattr(self.owner, "follows", {}).get(node.target, ()):
            chain, n = [node], node
            for op in ops:
                users = list(n.users)
                if len(users) != 1 or users[0].target != op:
                    break
                chain.append(n := users[0])
            if len(chain) != len(ops) + 1 or not all(f(self.api.Context(chain)) for f in when):
                continue
            if ops[-1] == _t()[0].ops.aten.batch_norm.default:  # QAT: the batch norm's output
                return []
            for n in reversed(chain[1:]):  # the activation first
                self.owner.op_to_quantizer[n.target].annotate(model)
                n.meta[KEY].input_qspec_map = {}
                if n is not chain[-1]:
                    n.meta[KEY].output_qspec = None
            return []
        return out

    def cluster_anchors(self, model: Any, cat: Any) -> Any:
        """NXP's concat cluster: cat of like activations each fused to a conv2d or linear,
        compute ops and activations annotated by their pairs, cat sharing the first's spec."""
        torch, _, q = _t()
        aten, owner, acts = torch.ops.aten, self.owner, cat.all_input_nodes
        fusing = {op for chains in owner.follows.values() for ops, _ in chains for op in ops[-1:]}
        if not all(a.target in fusing and fuses(self.api.Context([a])) and _alike(a, acts[0]) for a in acts):  # fmt: skip
            return None
        computes = [c for a in acts for c in a.all_input_nodes]
        ok = (aten.conv2d.default, aten.addmm.default, aten.mm.default)
        if not all(c.op == "call_function" and (c.target in ok or (
                c.target == aten.linear.default and len(c.meta["val"].shape) == 2))
                for c in computes):  # fmt: skip
            return None
        for c in computes:
            owner.op_to_quantizer[c.target].annotate(model)
            c.meta[KEY].output_qspec = None
        for a in acts:
            owner.op_to_quantizer[a.target].annotate(model)
            a.meta[KEY].input_qspec_map = {}
        shared = q.SharedQuantizationSpec(acts[0])
        return [(cat, a, shared) for a in cat.args[0]], [(cat, shared)]


def _alike(a: Any, b: Any) -> bool:
    """Activations alike for the cluster: in place or not; a hardtanh (0, inf) and a relu."""
    ka, kb = (str(n.target).split(".")[1].rstrip("_") for n in (a, b))
    ht = [k == "hardtanh" and n.args[1:] == (0.0, float("inf")) for n, k in ((a, ka), (b, kb))]
    return ka == kb or (ht[0] and kb == "relu") or (ht[1] and ka == "relu")


class _Pair(Pair):
    def __init__(self, rule: Any, config: Any, owner: Any, cluster: bool = False) -> None:
        self.rule, self.config, self.owner, self.cluster, self.api = rule, config, owner, cluster, owner.api  # fmt: skip


def init(self: Any, neutron_target_spec: Any, is_qat: bool = False) -> None:
    """NeutronQuantizer's pairs: a one-op pattern each (QAT-only ones if ``is_qat``), the
    fusions from the chains, the concat-cluster pair."""
    self.neutron_target_spec, self.is_qat = neutron_target_spec, is_qat
    rules = [r for r in self.rules if is_qat or qat_only not in r.when]
    pair_config = config(is_qat)
    self.follows = {}
    for r in rules:
        if len(r.chain) > 1:
            self.follows.setdefault(r.chain[0][0], []).append(
                (tuple(ops[0] for ops in r.chain[1:]), [f for f in r.when if f is not qat_only])
            )
        else:
            self.quantizers.append(_Pair(r, pair_config, self))
    self.op_to_quantizer = {q.rule.chain[0][0]: q for q in self.quantizers}
    self.op_to_applied_quantizer = dict.fromkeys(self.op_to_quantizer, False)
    cat = self.op_to_quantizer[_t()[0].ops.aten.cat.default].rule
    self.cluster_quantizers = [_Pair(cat, pair_config, self, cluster=True)]


class Neutron:
    """The mixin of the generated NeutronQuantizer: NXP's order of annotation."""

    def transform_for_annotation(self, model: Any) -> Any:
        from executorch.backends.nxp.aten_passes import neutron_aten_pass_manager as pm

        me: Any = self
        model.graph.eliminate_dead_code()
        passes = pm._get_default_passes(me.neutron_target_spec, me.is_qat)
        model = pm.NeutronAtenPassManager(me.neutron_target_spec, passes)(model).graph_module
        model.graph.eliminate_dead_code()
        return model

    def annotate(self, model: Any) -> Any:
        q, me = _t()[2], self
        for n in model.graph.nodes:
            if n.op == "placeholder" and n.users and not getattr(n.meta.get(KEY), "_annotated", 0):
                n.meta[KEY] = q.QuantizationAnnotation(output_qspec=act_spec(me.is_qat), _annotated=True)  # fmt: skip
        for cluster in me.cluster_quantizers:
            cluster.annotate(model)
        for n in list(model.graph.nodes):
            pair = me.op_to_quantizer.get(n.target) if n.op == "call_function" else None
            if pair is None or me.op_to_applied_quantizer[n.target]:
                continue
            pair.annotate(model)  # a shared pattern of one input: again at its next node
            me.op_to_applied_quantizer[n.target] = (
                pair.rule.kind != "shared" or len(pair.rule.inputs) > 1
            )
        return model
