"""The runtime's model, which every part imports: why a match is declined (``Reason``,
``Decline``), what a matcher tried (``Match``), and what a check of a match reads
(``Context``: every ``when:`` condition is ``Check``, ``fn(match) -> bool``).

A decline is a typed value made where the check that declines a match runs; the report
(``report``, ``match_report``) reads its reason and words, never works them out again
from text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import QuantizationSpecBase

__all__ = [
    "Accessors",
    "Check",
    "ConfigView",
    "Context",
    "Decline",
    "Fields",
    "Match",
    "Reason",
    "Validated",
    "failing",
    "first_ops",
    "view",
]


class Reason(StrEnum):
    """Why an op of the report is quantized or left float: its value is the code the report
    prints (``Entry.reason``), equal to that string."""

    ANNOTATED = "annotated"  # quantized; or another match annotated a node of this one first
    DISALLOWED = "disallowed"  # quantized with a config its rule's dtype configs do not allow
    NO_CONFIG = "no_config"  # the config of the op's scope (stage, pair) is None: on purpose
    NOT_A_TENSOR_OP = "not_a_tensor_op"  # no floating-point tensor in or out: on purpose
    NO_RULE = "no_rule"  # no rule of the quantizer has the op
    CHAIN_BROKE = "chain_broke"  # the nearest rule's chain broke at another op
    SECOND_USER = "second_user"  # ... at an op whose output has a second user
    SOURCE_PARTITION = "source_partition"  # matched by source partition, and it is in none
    NON_FLOAT_INPUT = "non_float_input"  # an activation input is not a float tensor
    SKIP = "skip"  # a skip predicate or a when: condition rules the match out
    SCOPE_FILTER = "scope_filter"  # the match spans nodes its config does not configure
    NOT_TRIED = "not_tried"  # the rule's dtype configs do not take the config
    HOOK_DECLINED = "hook_declined"  # the rule's annotate function left it
    PRODUCER_FLOAT = "producer_float"  # a shared-observer op whose input is not quantized
    UNEXPLAINED = "unexplained"  # a rule has the op, and no reason above holds


# The reasons that are the user's choice, not a limit of the quantizer.
DELIBERATE = frozenset({Reason.NO_CONFIG, Reason.NOT_A_TENSOR_OP})


@dataclass(frozen=True)
class Decline:
    """Why a match is not annotated: the reason, and the same in words."""

    reason: Reason
    detail: str


@dataclass(eq=False, slots=True)
class Match:
    """A match a matcher tried: its nodes, and ``decline`` (None: accepted). The base that
    tried it adds the stage or pair that tried it (its label), its config and its rule's
    name."""

    nodes: list[Node]
    decline: Decline | None = None
    stage: str = ""
    config: Any = None
    rule: str | None = None

    @property
    def accepted(self) -> bool:
        return self.decline is None

    def __repr__(self) -> str:
        d = self.decline
        verdict = "accepted" if d is None else f"declined ({d.reason}): {d.detail}"
        return f"Match([{', '.join(n.name for n in self.nodes)}], {verdict})"


class Context:
    """What a check of a match reads, under every composition of parts: ``node`` (the
    match's first op), ``nodes`` (the match, in order), ``config`` (the config about to
    annotate it; None: one that leaves it float), ``quantizable`` (the first ops of the
    instance's rules: what it quantizes), ``params`` (the instance's constructor parameters,
    ``given:``'s), and the graph (``model``)."""

    __slots__ = ("node", "nodes", "config", "quantizable", "params")

    def __init__(
        self,
        nodes: Sequence[Node],
        config: Any = None,
        quantizable: frozenset[Any] = frozenset(),
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.node, self.nodes, self.config = nodes[0], nodes, config
        self.quantizable, self.params = quantizable, params or {}

    @property
    def model(self) -> GraphModule:
        return self.node.graph.owning_module  # type: ignore[return-value]

    def layout(self, tensor: Any, check: Callable[[Any], Any]) -> bool:
        """``check(tensor)``, for a check that reads only the tensor's shape and strides (a
        layout check: ExecuTorch's ``is_channels_last`` works it out through
        ``Tensor.dim_order``, dear when asked for every node), memoized by them for the graph;
        symbolic sizes (unhashable) are asked every time."""
        try:
            key = (id(check), tuple(tensor.shape), tensor.stride())
            hash(key)
        except TypeError:
            return bool(check(tensor))
        from .graph import index  # model is below graph: values reads configs through it

        memo = index(self.model).derived("layouts", dict)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = bool(check(tensor))
        return hit

    def tag(self, node: Node, *path: str, value: Any = True) -> None:
        """The slot of a hook that changes graph meta (hooks API 1): set
        ``node.meta[path[0]]...[path[-1]] = value``, making the dicts on the way (Cortex-M's
        ``tag(n, "custom", "cortex_m", "skip_quantized_max_pool2d")``). A condition changes
        meta only through it."""
        meta: dict[str, Any] = node.meta
        for key in path[:-1]:
            meta = meta.setdefault(key, {})
        meta[path[-1]] = value


# A ``when:`` condition (and ``weights_only_when:``): whether it holds for a match.
Check = Callable[[Context], bool]


def first_ops(rules: Sequence[Any]) -> frozenset[Any]:
    """The first ops of ``rules`` that have ops (``Context.quantizable``)."""
    return frozenset(op for r in rules if r.chain for op in r.chain[0])


def failing(checks: Sequence[Check], context: Context) -> Check | None:
    """The first of ``checks`` that does not hold for ``context``'s match, or None."""
    return next((c for c in checks if not c(context)), None)


class ConfigView(Protocol):
    """What the runtime reads of a quantization config, whatever its class: the spec each
    role of a match's op gets (``node``: the op; ``arg``: the input; None: the config's
    own, for any op), whether it is a QAT config and whether it quantizes activations
    dynamically. ``view(config, how)`` gives the adapter of a config."""

    config: Any

    def input(self, node: Node | None = None, arg: Node | None = None) -> Any: ...
    def output(self, node: Node | None = None) -> Any: ...
    def weight(self, node: Node | None = None) -> Any: ...
    def bias(self, node: Node | None = None) -> Any: ...
    def is_qat(self) -> Any: ...
    def dynamic(self) -> bool: ...


class Fields:
    """A config read by its fields: torchao's ``QuantizationConfig``, Cadence's (ExecuTorch's
    ``xnnpack_quantizer_utils`` one), ExecuTorch Arm's under ``configs: spec``. A bias that is
    a function of the op (no spec) is called with it."""

    __slots__ = ("config",)

    def __init__(self, config: Any) -> None:
        self.config = config

    def input(self, node: Node | None = None, arg: Node | None = None) -> Any:
        return self.config.input_activation

    def output(self, node: Node | None = None) -> Any:
        return self.config.output_activation

    def weight(self, node: Node | None = None) -> Any:
        return self.config.weight

    def bias(self, node: Node | None = None) -> Any:
        bias = self.config.bias
        spec = callable(bias) and not isinstance(bias, QuantizationSpecBase) and node is not None
        return bias(node) if spec else bias

    def is_qat(self) -> Any:
        return self.config.is_qat

    def dynamic(self) -> bool:
        act = self.config.input_activation
        return act is not None and bool(act.is_dynamic)


class Validated(Fields):
    """ExecuTorch Arm's config under ``configs: validated``: its activation specs through its
    validating accessors, called without an op (``get_input_act_qspec()``: ``ValueError`` for
    a spec it does not support), as ExecuTorch's Cortex-M reads them; its weight and bias as
    its fields."""

    __slots__ = ()

    def input(self, node: Node | None = None, arg: Node | None = None) -> Any:
        return self.config.get_input_act_qspec()

    def output(self, node: Node | None = None) -> Any:
        return self.config.get_output_act_qspec()


class Accessors(Fields):
    """ExecuTorch Arm's config under ``configs: accessors``: its accessors say what each op's
    inputs and output get (``get_input_act_qspec(node, input)`` and the rest)."""

    __slots__ = ()

    def input(self, node: Node | None = None, arg: Node | None = None) -> Any:
        return self.config.get_input_act_qspec(node, arg)

    def output(self, node: Node | None = None) -> Any:
        return self.config.get_output_act_qspec(node)

    def weight(self, node: Node | None = None) -> Any:
        return self.config.get_weight_qspec(node)

    def bias(self, node: Node | None = None) -> Any:
        return self.config.get_bias_qspec(node)


VIEWS: dict[str, type[Fields]] = {"spec": Fields, "validated": Validated, "accessors": Accessors}


def view(config: Any, how: str = "spec") -> ConfigView:
    """The adapter the runtime reads ``config`` through (a spec's ``configs:``)."""
    return VIEWS[how](config)
