"""The report of a composable or pairs quantizer (``report()``): why each op is quantized or
left float, from the matches its last ``annotate`` recorded (``last_matches``: accepted, or
with its ``Decline``, each with the stage or pair that tried it and its rule), as the same
``report.Report`` the other bases give (one ``Entry`` per op, the same reason codes), so that
``bcfg compat`` reads every base alike.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from torch.fx import GraphModule, Node
from torch.fx.node import map_arg

from .graph import float_tensor
from .model import Match, Reason
from .report import Entry, _op, _role, _spec_text
from .values import KEY

__all__ = ["SHARED", "publish"]

SHARED = "shared ops"  # the scope of clusters of shared ops
# Why an op no stage sees is float (a quantizer's ``unseen`` says it in its own words).
UNSEEN = "no stage sees it (add_stage's targets or finder, set_global_stage)"


Specs = Callable[[Node, Node], "str | None"]  # the specs a match got (``_Taken.specs``)


def _accepted(n: Node, match: Any, i: int, describe_specs: Specs) -> Entry:
    """An op of an accepted match (a stage's, or a cluster of shared ops)."""
    if match.stage == SHARED:
        return Entry(n.name, _op(n), True, Reason.ANNOTATED, "shares the spec around its cluster "
                     "of shared ops", match.rule, SHARED, "shared", describe_specs(n, n))  # fmt: skip
    if match.config is None:
        detail = f"left float on purpose: {match.stage} config is None"
        return Entry(
            n.name, _op(n), False, Reason.NO_CONFIG, detail, match.rule, match.stage, "marked"
        )
    nodes = match.nodes
    return Entry(
        n.name, _op(n), True, Reason.ANNOTATED, f"pattern {match.rule}", match.rule, match.stage,
        _role(nodes, i), describe_specs(nodes[0], nodes[-1]),
    )  # fmt: skip


def _rejected(n: Node, match: Match, first: dict[Node, tuple[Match, int]]) -> Entry:
    """An op only in rejected matches: the decline of ``match``, the one that says most."""
    reason, why = match.decline.reason, match.decline.detail  # type: ignore[union-attr]
    if match.stage == SHARED:
        if reason is Reason.PRODUCER_FLOAT:
            why = f"a cluster of shared ops left float: {why}"
        role = "marked" if reason is Reason.NOT_A_TENSOR_OP else None  # no float input nor output
        return Entry(n.name, _op(n), False, reason, why, match.rule, SHARED, role)
    if reason is Reason.ANNOTATED:
        taken = [m for m in match.nodes if m in first]
        why = f"{', '.join(m.name for m in taken) or 'a node'} was matched first"
        if taken:  # which match took it: a stage that saw only part of this pattern splits it
            by = first[taken[0]][0]
            what = "a cluster of shared ops" if by.stage == SHARED else f"pattern {by.rule}"
            why += (
                f", by {what} of {by.stage}; the ops of this match are not quantized together "
                f"(a stage that sees only some of them, as set_module_type of one module, "
                f"matches those alone)"
            )
    elif reason is Reason.NOT_TRIED:
        why = f"{match.stage} config is not one its dtypes allow: {why}"
    ops = ", ".join(m.name for m in match.nodes)
    detail = f"pattern {match.rule}: match [{ops}] rejected: {why}"
    return Entry(n.name, _op(n), False, reason, detail, match.rule, match.stage)


def _unmatched(
    n: Node, quantizer: Any, seen: set[Node], said: Callable[[Node], str | None], inputs: Any
) -> Entry:
    """An op in no match: why no stage tried it (``said``: the base's own words, if any;
    ``inputs``: its input nodes as the annotate left them)."""
    if not any(float_tensor(a) for a in inputs) or not float_tensor(n):
        what = "no floating-point tensor input" if float_tensor(n) else "no float tensor output"
        return Entry(n.name, _op(n), False, Reason.NOT_A_TENSOR_OP, what)
    if n not in seen:
        detail = f"left float on purpose: {getattr(quantizer, 'unseen', UNSEEN)}"
        return Entry(n.name, _op(n), False, Reason.NO_CONFIG, detail)
    words = said(n)
    if words:
        return Entry(n.name, _op(n), False, Reason.SKIP, words)
    having = [r for r in quantizer.rules if any(n.target in ops for ops in r.chain)]
    if not having:
        return Entry(
            n.name, _op(n), False, Reason.NO_RULE, f"no rule of the quantizer has {_op(n)}"
        )
    r = having[0]
    k = next(i for i, ops in enumerate(r.chain) if n.target in ops)
    before = " or ".join(str(op) for op in r.chain[k - 1]) if k else ""
    detail = f"pattern {r.name}: no chain of the table matches here"
    if before:
        detail += f" (it wants {before} before {n.name}, the only user of it)"
    return Entry(n.name, _op(n), False, Reason.CHAIN_BROKE, detail, r.name)


class _Taken:
    """What explaining a composable or pairs annotate reads, as the annotate left it: the
    graph's nodes in order, each one's arguments and annotation (prepare_pt2e puts
    observers between them later: a node's args tuple and kwargs dict are ones fx replaces,
    never changes, so they are kept as they are; its input-node dict fx changes in place),
    the matches and added annotations of the annotate,
    the nodes a stage sees and the base's own words (``unmatched(model)``). The entries are
    worked out when the report is first read (``explain``): an annotate with the report on
    costs this pass, not the explaining."""

    def __init__(self, model: GraphModule, quantizer: Any) -> None:
        self.quantizer = quantizer
        self.matches, self.added = quantizer.last_matches, quantizer.added
        self.seen = quantizer.seen(model)
        # The base's own words for an op in no match (``unmatched(model)``: a test of a node).
        words = getattr(quantizer, "unmatched", None)
        self.said = words(model) if words is not None else lambda n: None
        self.nodes = nodes = list(model.graph.nodes)
        self._args = [n._args for n in nodes]  # Node.args without the property's call
        self._kwargs = [n._kwargs for n in nodes]
        self._qa = [n.meta.get(KEY) for n in nodes]

    def specs(self, first: Node, last: Node) -> str | None:
        """The specs a match got (``report._spec_text``, from the kept annotations)."""
        return _spec_text(self.qa(first), self.qa(last), self.memo)

    def qa(self, n: Node) -> Any:
        at = self.at.get(n)
        return self._qa[at] if at is not None else None

    def explain(self) -> tuple[tuple[Entry, ...], tuple[tuple[str, str, int], ...]]:
        """(one entry per op, (rule, stage, how many matches) per rule and stage)."""
        self.at = {n: i for i, n in enumerate(self.nodes)}
        self.memo: dict[int, tuple[Any, str]] = {}  # spec texts, by the spec's id
        quantizer, added = self.quantizer, self.added
        accepted: dict[Node, tuple[Any, int]] = {}
        rejected: dict[Node, Any] = {}
        counts: dict[tuple[str, str], int] = {}
        for match in self.matches:
            if match.accepted:
                if match.config is not None and match.stage != SHARED and match.rule is not None:
                    key = (match.rule or "?", match.stage)
                    counts[key] = counts.get(key, 0) + 1
                for i, n in enumerate(match.nodes):
                    accepted.setdefault(n, (match, i))
                continue
            for n in match.nodes:  # a match it starts says more than one it is inside
                if n not in rejected or n is match.nodes[0] or rejected[n].nodes[0] is not n:
                    rejected[n] = match
        first = accepted
        entries = []
        for i, n in enumerate(self.nodes):
            if n.op != "call_function" or n.target is operator.getitem:
                continue
            if n in accepted:
                entries.append(_accepted(n, *accepted[n], self.specs))
            elif n in added:
                entries.append(_added(n, added[n], self.specs))
            elif n in rejected:
                entries.append(_rejected(n, rejected[n], first))
            else:
                inputs: dict[Node, None] = {}  # Node.all_input_nodes, of the kept arguments
                map_arg((self._args[i], self._kwargs[i]), inputs.setdefault)
                entries.append(_unmatched(n, quantizer, self.seen, self.said, inputs))
        matches = tuple((r, s, c) for (r, s), c in counts.items())
        return tuple(entries), matches


def _added(n: Node, owner: str, describe_specs: Specs) -> Entry:
    """An op a quantizer added with ``add_quantizer`` annotated (no stage matched it)."""
    return Entry(n.name, _op(n), True, Reason.ANNOTATED, f"annotated by {owner} (add_quantizer)",
                 owner, "added quantizer", "op", describe_specs(n, n))  # fmt: skip


def publish(model: GraphModule, quantizer: Any) -> None:
    """``quantizer.last_report`` from the matches of its last annotate (its recorder writes
    its summary where ``quantizer.report(stream)`` said)."""
    rec = quantizer.reporter
    rec.start()
    quantizer.last_report = rec.finish(model, quantizer, _Taken(model, quantizer))
