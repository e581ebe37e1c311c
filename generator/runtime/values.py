"""The values a generated quantizer's tables hold: dtypes, dtype configs and rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch.fx import GraphModule, Node

from .model import view

__all__ = [
    "FLOAT",
    "KEY",
    "Accept",
    "Allows",
    "Quant",
    "Rule",
    "unhonoured",
    "selected",
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
    """One pattern of the spec, as the quantizer matches and annotates it. A field is what a
    key of bcfg's table of PT2E keys (``lang/pt2e_keys.py``) lands as: the key's row says what
    it means and which bases read it (each base's ``honours``)."""

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
    any_float: bool = False
    reused_weight: str = "match"
    operator_types: tuple[Any, ...] | None = None
    qat_if_dynamic: bool = False
    scope: str = "all_ops"
    partitions: tuple[tuple[Any, ...], ...] = ()
    roots: tuple[Any, ...] = ()
    other: str | None = None
    when: tuple[Callable[..., bool], ...] = ()
    opt_in: bool = False
    inputs: tuple[int, ...] = (0,)
    output_index: int | None = None
    bias_spec: str = "derived"
    none_bias: bool = False
    parameters: str = "quantized"
    weights_only_when: tuple[Callable[..., bool], ...] = ()
    weights: Callable[..., Any] | None = None
    output_qscheme: str = "any"
    given: tuple[tuple[str, Any], ...] = ()
    weight_qscheme: str = "any"
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
        specs = view(config)
        if self.qat and not specs.is_qat():
            return False
        dynamic = specs.dynamic()
        if self.qat_if_dynamic and dynamic and not specs.is_qat():
            return False
        return any(bool(a.dynamic) == dynamic for a in self.allows) or not self.allows


# The Rule fields every base reads: what the pattern and its dtype configs say (as the key
# table's PATTERN_FIELDS read by every base).
STRUCTURAL = frozenset({"name", "kind", "chain", "weight", "bias", "allows"})


def selected(rules: Sequence[Any], params: dict[str, Any]) -> tuple[Any, ...]:
    """An instance's support table (``given:``, under every scope that reads it): the rules
    whose ``given`` values its constructor's ``params`` match; a rule without is in every
    table. A flag compares as truth (ExecuTorch's ``if use_explicit_layout``), a string
    with the argument or its ``str()`` (Qualcomm loads ``{str(backend)}_rules``: an enum
    member whose str is a word), anything else by equality."""

    def holds(name: str, value: Any) -> bool:
        if name not in params:
            return False
        got = params[name]
        if isinstance(value, bool):
            return bool(got) == value
        return got == value or (isinstance(value, str) and str(got) == value)

    return tuple(r for r in rules if all(holds(k, v) for k, v in getattr(r, "given", ())))


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
