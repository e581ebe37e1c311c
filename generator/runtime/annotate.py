"""How a match is annotated: chains, shared-observer ops, hooks, and propagation after them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    FixedQParamsQuantizationSpec,
    QuantizationAnnotation,
    SharedQuantizationSpec,
)

from .conditions import decline
from .graph import index, is_annotated, is_op, mark, shared_inputs
from .matcher import candidates, chain_at
from .model import ConfigView, view
from .values import KEY, Accept, Rule

__all__ = ["ANNOTATORS", "Annotating", "Annotator", "follow", "propagate", "share_first", "write"]


@dataclasses.dataclass(frozen=True)
class Annotating:
    """What an annotator (``ANNOTATORS``: ``fn(rule, accept, at) -> bool``, whether it
    annotated anything) reads besides its rule and the scope's accept: the graph, the scope's
    config, the outputs of quantized patterns (None: not collected), the ops that share their
    input's observer, the quantizer's recorder (None: reporting is off), and the ops it
    quantizes (``when:`` conditions read them: the operators base's)."""

    model: GraphModule
    config: Any
    outputs: set[Node] | None
    share: frozenset[Any]
    rec: Any
    quantizable: Any = frozenset()


Annotator = Callable[[Rule, Accept, Annotating], bool]


def roles(root: Node, rule: Rule) -> list[tuple[Node, str]]:
    """The tensor arguments of ``root``, in argument order, each with its role."""
    out: list[tuple[Node, str]] = []
    for i, arg in enumerate(root.args):
        if i == rule.weight or i == rule.bias:
            if isinstance(arg, Node):
                out.append((arg, "weight" if i == rule.weight else "bias"))
            continue
        for a in arg if isinstance(arg, (list, tuple)) else (arg,):
            if isinstance(a, Node):
                out.append((a, "input"))
    return out


def output_spec(rule: Rule, specs: ConfigView) -> Any:
    """The config's output spec, or the fixed-qparams spec a dtype config fixes for its dtype."""
    out = specs.output()
    for a in rule.allows:
        q = a.output
        if q is None or q.scale is None or q.zero_point is None:
            continue
        if out is not None and out.dtype == q.dtype:
            return FixedQParamsQuantizationSpec(
                dtype=q.dtype,
                scale=q.scale,
                zero_point=q.zero_point,
                quant_min=q.quant_min,
                quant_max=q.quant_max,
                qscheme=torch.per_tensor_affine,
            )
    return out


def weight_spec(rule: Rule, specs: ConfigView) -> Any:
    """The config's weight spec, on the channel axis the rule's weight has (``weight_axis``)."""
    spec = specs.weight()
    if rule.weight_axis is None or spec is None or spec.ch_axis == rule.weight_axis:
        return spec
    return dataclasses.replace(spec, ch_axis=rule.weight_axis)


def roles_specs(rule: Rule, specs: ConfigView) -> dict[str, Any]:
    """The spec each role of a chain's first op gets (``roles``)."""
    return {"input": specs.input(), "weight": weight_spec(rule, specs), "bias": specs.bias()}


def annotate_chain(rule: Rule, accept: Accept, at: Annotating) -> bool:
    """Annotate every match of a chain rule: inputs of its first op, output of its last."""
    model, config, outputs, rec = at.model, at.config, at.outputs, at.rec
    specs = roles_specs(rule, view(config))
    done = False
    # match: source (a one-op chain): the op as its sources' partitions give it, as torchao's
    ends = candidates(model, rule, accept) if rule.sources else index(model).calling(rule.chain[-1])
    for node in ends:
        chain = chain_at(node, rule)
        if chain is None:
            continue
        root = chain[0]
        found = roles(root, rule)
        params = [n for n, role in found if role != "input"]
        checked = params if rule.reused_weight == "decline" else []
        if is_annotated(chain[::-1] + checked) or not accept(chain):
            if rec is not None:
                rec.declined_chain(rule, chain, checked, accept)
            continue
        why = decline(rule, [n for n, role in found if role == "input"], model, root)
        if why is not None:
            if rec is not None:
                rec.declined(rule, chain, why.reason, why.detail)
            continue
        write(chain, rule, config, outputs, found, specs)
        if rec is not None:
            rec.matched(rule, chain)
        done = True
    return done


def write(
    chain: list[Node],
    rule: Rule,
    config: Any,
    outputs: set[Node] | None = None,
    found: list[tuple[Node, str]] | None = None,
    specs: dict[str, Any] | None = None,
) -> None:
    """Annotate one match of a chain rule with ``config`` (the annotator part, for a
    composition that matches and checks by itself): its first op's inputs by role
    (``roles``), its last op's output (None, but a fixed-qparams spec, when ``outputs``
    collects them: consumers observe them); its weight and bias are marked."""
    root, last = chain[0], chain[-1]
    found = roles(root, rule) if found is None else found
    specs = roles_specs(rule, view(config)) if specs is None else specs
    output = output_spec(rule, view(config))
    if outputs is not None:
        outputs.add(last)
        if not isinstance(output, FixedQParamsQuantizationSpec):
            output = None  # observed by the consumers' input specs
    root.meta[KEY] = QuantizationAnnotation(
        input_qspec_map={n: specs[role] for n, role in found},
        output_qspec=output if root is last else None,
        _annotated=True,
    )
    if root is not last:
        last.meta[KEY] = QuantizationAnnotation(output_qspec=output, _annotated=True)
    mark([n for n, role in found if role != "input"])


def share_first(
    node: Node,
    config: Any,
    consumers: bool,
    qparams: str = "first",
    share: frozenset[Any] = frozenset(),
) -> QuantizationAnnotation:
    """The first input gets the input spec (or its quantized producer's); the rest share it.

    ``consumers``: outputs are observed by their consumers, so the first input
    always gets the input spec. ``qparams="quantized"``: a list's inputs share
    the first one that comes from a quantized op (through ``share`` ops), if any.
    """
    first = node.args[0]
    if isinstance(first, (list, tuple)):
        head = first[0]
        if qparams == "quantized":
            head = next(
                (a for a in first if isinstance(a, Node) and from_quantized(a, share)), head
            )
        qmap = {head: view(config).input()} if isinstance(head, Node) else {}
        shared = SharedQuantizationSpec((head, node))
        for a in shared_inputs(node):
            qmap.setdefault(a, shared)
    else:
        assert isinstance(first, Node)
        qa = first.meta.get(KEY)
        quantized = (
            not consumers and qa is not None and qa._annotated and qa.output_qspec is not None
        )
        qmap = {first: (SharedQuantizationSpec(first) if quantized else view(config).input())}
        shared = SharedQuantizationSpec((first, node))
    return QuantizationAnnotation(input_qspec_map=qmap, output_qspec=shared, _annotated=True)


def from_quantized(node: Node, share: frozenset[Any]) -> bool:
    """Whether ``node`` has an output spec, or passes one on from such a node through ``share`` ops."""
    seen: set[Node] = set()
    while node not in seen:
        seen.add(node)
        qa = node.meta.get(KEY)
        if qa is not None and qa._annotated and qa.output_qspec is not None:
            return True
        prev = node.args[0] if node.args else None
        if not is_op(node, share) or not isinstance(prev, Node):
            return False
        node = prev
    return False


def annotate_shared(rule: Rule, accept: Accept, at: Annotating) -> bool:
    """Annotate a shared-observer op in rule order (``eager``), quantized input or not.

    ``at.share``: the ops that pass their input's qparams on (for ``qparams="quantized"``).
    """
    model, config, outputs, share, rec = at.model, at.config, at.outputs, at.share, at.rec
    done = False
    for node in candidates(model, rule, accept):
        if is_annotated([node]):
            continue
        inputs = shared_inputs(node)
        why = decline(rule, inputs, model) if inputs else None
        if not inputs or why is not None:
            if rec is not None and why is not None:
                rec.declined(rule, [node], why.reason, why.detail)
            continue
        node.meta[KEY] = share_first(node, config, outputs is not None, rule.qparams, share)
        if rec is not None:
            rec.matched(rule, [node], "shared")
        if outputs is not None:
            outputs.add(node)
        done = True
    return done


def annotate_hook(rule: Rule, accept: Accept, at: Annotating) -> bool:
    """A named Python function annotates the pattern: ``fn(model, config, accept) -> bool``."""
    model, rec = at.model, at.rec
    assert rule.annotate is not None
    before = rec.annotated_nodes(model) if rec is not None else set()
    done = bool(rule.annotate(model, at.config, accept))
    if rec is not None:
        rec.hooked(rule, model, before)
    return done


ANNOTATORS: dict[str, Annotator] = {
    "chain": annotate_chain,
    "shared": annotate_shared,
    "hook": annotate_hook,
}


def propagate(model: GraphModule, share: frozenset[Any]) -> None:
    """Ops that share their producer's observer: quantized where the producer's output is."""
    for n in index(model).calling(share) if share else ():
        prev = n.args[0] if n.args else None
        if not isinstance(prev, Node):
            continue
        qa = prev.meta.get(KEY)
        if qa is None or not qa.output_qspec:
            continue
        if KEY in n.meta and n.meta[KEY]._annotated:
            continue
        shared = SharedQuantizationSpec(prev)
        n.meta[KEY] = QuantizationAnnotation(
            input_qspec_map={prev: shared}, output_qspec=shared, _annotated=True
        )


def follow(
    model: GraphModule,
    share: frozenset[Any],
    config: Any,
    accept: Accept,
    outputs: set[Node],
) -> None:
    """Shared-observer ops whose tensor inputs all come from quantized patterns: quantized as one."""
    for n in index(model).calling(share) if share else ():
        if is_annotated([n]) or not accept([n]):
            continue
        inputs = shared_inputs(n)
        if inputs and all(pattern_output(i, outputs) for i in inputs):
            n.meta[KEY] = share_first(n, config, True)
            outputs.add(n)


def pattern_output(node: Node, outputs: set[Node]) -> bool:
    """Whether ``node`` is the output of a quantized pattern (a hook's: it has an output spec)."""
    qa = node.meta.get(KEY)
    return node in outputs or (qa is not None and qa.output_qspec is not None)
