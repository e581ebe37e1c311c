"""The runtime's model, which every part imports: why a match is declined (``Reason``,
``Decline``) and what a matcher tried (``Match``).

A decline is a typed value made where the check that declines a match runs; the report
(``report``, ``match_report``) reads its reason and words, never works them out again
from text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from torch.fx import Node

__all__ = ["Decline", "Match", "Reason"]


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


class Match:
    """A match a matcher tried: its nodes, and ``decline`` (None: accepted). The base that
    tried it adds the stage or pair that tried it (its label), its config and its rule's
    name."""

    __slots__ = ("nodes", "decline", "stage", "config", "rule")

    def __init__(
        self,
        nodes: list[Node],
        decline: Decline | None = None,
        stage: str = "",
        config: Any = None,
        rule: str | None = None,
    ) -> None:
        self.nodes, self.decline = nodes, decline
        self.stage, self.config, self.rule = stage, config, rule

    @property
    def accepted(self) -> bool:
        return self.decline is None

    def __repr__(self) -> str:
        d = self.decline
        verdict = "accepted" if d is None else f"declined ({d.reason}): {d.detail}"
        return f"Match([{', '.join(n.name for n in self.nodes)}], {verdict})"
