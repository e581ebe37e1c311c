"""The values a generated quantizer's tables hold: dtypes, dtype configs and rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch.fx import GraphModule, Node

__all__ = [
    "FLOAT",
    "KEY",
    "Accept",
    "Allows",
    "Quant",
    "Rule",
    "is_dynamic",
    "unhonoured",
    "STRUCTURAL",
]

# Where torchao keeps a node's annotation.
KEY = "quantization_annotation"
# A scope's test of the nodes of a match: whether its config annotates them.
Accept = Callable[[Sequence[Node]], bool]


@dataclass(frozen=True)
class Quant:
    """A dtype a spec allows, with its constraints; dtype None: not quantized (float)."""

    dtype: torch.dtype | None
    quant_min: int | None = None
    quant_max: int | None = None
    scale_min: float | None = None
    scale: float | None = None
    zero_point: int | None = None


FLOAT = Quant(None)


@dataclass(frozen=True)
class Allows:
    """One dtype config of the spec: what a quantization config may say; None: anything."""

    name: str
    input: Quant | None = None
    output: Quant | None = None
    weight: Quant | None = None
    bias: Quant | None = None
    dynamic: bool | None = None


@dataclass(frozen=True)
class Rule:
    """One pattern of the spec, as the quantizer matches and annotates it."""

    name: str
    kind: str = "chain"
    chain: tuple[tuple[Any, ...], ...] = ()
    sources: tuple[Any, ...] = ()
    weight: int | None = None
    bias: int | None = None
    allows: tuple[Allows, ...] = ()
    skip: tuple[Callable[[Node, GraphModule], bool], ...] = ()
    annotate: Callable[..., Any] | None = None
    qat: bool = False
    weight_axis: int | None = None
    qparams: str = "first"
    any_float: bool = False  # activation inputs of any floating dtype, not float32 only
    # "decline": a match whose weight or bias an earlier match annotated (a module called
    # twice, tied weights) is left to the rules after; "match": only its ops are checked.
    reused_weight: str = "match"
    # A quantizer whose operator_type is "patterns": the overloads whose
    # set_operator_type selects the rule (exact equality); None: its first op's.
    operator_types: tuple[Any, ...] | None = None
    qat_if_dynamic: bool = False  # a dynamic config tries it only if it is a QAT config
    # Which ops of a match a scope (module name or type, filter function) judges:
    # "all_ops", "first_op", or "none" (it matches anywhere, with each config in turn).
    scope: str = "all_ops"
    # Operator-scoped quantizers (operators.py): sequences of source types a chain
    # is found by, the module classes and functions its first op comes from, what
    # a binary op's other input gets ("quantized" or "float"), conditions a match
    # must meet, and whether only an operator-type or module-name config annotates it.
    # Which base reads which field: each base's ``honours`` (bcfg's table of PT2E keys).
    partitions: tuple[tuple[Any, ...], ...] = ()
    roots: tuple[Any, ...] = ()
    other: str | None = None
    when: tuple[Callable[..., bool], ...] = ()
    opt_in: bool = False
    # Pairs (pairs.py, ExecuTorch's Cadence scheme): the first op's arguments that get the
    # input spec, the getitem of the last op's user that gets the output spec, the bias's
    # spec ("derived" or "config"), a None bias annotated too, the weight and bias left
    # "float", conditions of weights-only configs, a function giving the weight anchors.
    inputs: tuple[int, ...] = (0,)
    output_index: int | None = None
    bias_spec: str = "derived"
    none_bias: bool = False
    parameters: str = "quantized"
    weights_only_when: tuple[Callable[..., bool], ...] = ()
    weights: Callable[..., Any] | None = None
    # Composable: "affine": a config giving the last op a symmetric output spec is refused.
    output_qscheme: str = "any"
    # Composable (composable.py): the constructor parameters (name, value) an instance's
    # support table needs the rule under (select); none: every instance's.
    given: tuple[tuple[str, Any], ...] = ()
    # The weight spec a config must give: "any", "per_channel" or "per_tensor" (validate).
    weight_qscheme: str = "any"
    # The activation specs' qscheme a config must give: "any", "symmetric", "affine".
    activation_qscheme: str = "any"
    # Registry (registry.py): the op's annotator, fn(node, config).
    annotate_node: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        # Generated tables write lists; a rule holds tuples, so that it stays immutable.
        object.__setattr__(self, "chain", tuple(tuple(ops) for ops in self.chain))
        object.__setattr__(self, "partitions", tuple(tuple(p) for p in self.partitions))
        if self.operator_types is not None:
            object.__setattr__(self, "operator_types", tuple(self.operator_types))
        for name in ("sources", "allows", "skip", "roots", "when", "inputs", "weights_only_when"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "given", tuple((k, v) for k, v in self.given))

    def selected_by(self, op: Any) -> bool:
        """Whether ``set_operator_type(op, ...)`` selects the rule (operator_type "patterns")."""
        ops = self.chain[0] if self.operator_types is None else self.operator_types
        return any(op == o for o in ops)

    def accept(self, accept: Accept) -> Accept:
        """A scope's test as this rule applies it (``scope``: the ops of a match it judges)."""
        if self.scope == "none":
            return _anywhere
        if self.scope == "first_op":
            return lambda nodes: accept(nodes[:1])
        return accept

    def applies(self, config: Any) -> bool:
        """Whether the rule is tried with ``config``: its dtype configs say static or dynamic."""
        if self.qat and not config.is_qat:
            return False
        dynamic = is_dynamic(config)
        if self.qat_if_dynamic and dynamic and not config.is_qat:
            return False
        return any(bool(a.dynamic) == dynamic for a in self.allows) or not self.allows


# The Rule fields every base reads: what the pattern and its dtype configs say.
STRUCTURAL = frozenset({"name", "kind", "chain", "weight", "bias", "allows", "sources", "qat"})


def unhonoured(rules: Sequence[Rule], honours: frozenset[str]) -> list[str]:
    """``pattern NAME sets FIELD`` for each field a rule sets (not at its default) that a base
    whose ``honours`` is given does not read: it would be silently ignored."""
    return [
        f"pattern {rule.name} sets {f.name}"
        for rule in rules
        for f in fields(rule)
        if f.name not in honours and getattr(rule, f.name) != f.default
    ]


def _anywhere(nodes: Sequence[Node]) -> bool:
    return True


def is_dynamic(config: Any) -> bool:
    """Whether a quantization config quantizes activations dynamically."""
    act = config.input_activation
    return act is not None and bool(act.is_dynamic)
