"""Why a node is quantized or left float: the opt-in report of a generated quantizer.

``quantizer.report()`` (``Reports``, every base's) gives the quantizer its own
``Recorder``: every later ``annotate`` records what the rules matched and why
a match was declined, then explains every op of the graph in
``quantizer.last_report`` (a ``Report``) and prints its summary (a table of the
patterns matched, then the nodes left float with the reason) on standard
error, or on the stream given (None: print nothing). Off, the only cost is a
test of the recorder (None) where a match is declined or annotated. A
declined match's reason comes from the check that declined it (a
``model.Decline``), never worked out again here.

A node left float gets one reason (``model.Reason``: each says what it means),
with the rule nearest to quantizing it (``Entry.reason`` is the code,
``Entry.detail`` says it in words).
A quantized node names the rule that annotated it and the specs it got; its
reason is ``disallowed`` when the config is not one the rule's dtype configs
allow (prepare_pt2e's ``validate`` then raises), else ``annotated``.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Self

import torch
from torch.fx import GraphModule, Node

from . import api
from .conditions import not_floating
from .graph import index as graph_index
from .graph import is_annotated, is_op, shared_inputs
from .matcher import candidates, near
from .model import DELIBERATE, Reason, view
from .scopes import everything
from .validate import rejections
from .values import KEY, Rule, unhonoured

__all__ = ["Entry", "Recorder", "Report", "Reports"]

_set = object.__setattr__


@dataclass(frozen=True, init=False)
class Entry:
    """What happened to one op of the graph, and why."""

    node: str
    op: str
    quantized: bool
    reason: Reason  # annotated, disallowed, or why the node is float (model.Reason)
    detail: str
    rule: str | None = None  # the rule that annotated it, or the nearest rule
    scope: str | None = None  # the config's scope: global, module_name 'block', ...
    role: str | None = None  # in its match: first op, inside, last op, op, shared, propagated
    specs: str | None = None

    def __init__(
        self,
        node: str,
        op: str,
        quantized: bool,
        reason: Reason,
        detail: str,
        rule: str | None = None,
        scope: str | None = None,
        role: str | None = None,
        specs: str | None = None,
    ) -> None:
        # The fields above, set at once: a report makes one entry per op, and the frozen
        # dataclass's own __init__ (one object.__setattr__ a field) took most of its time.
        _set(self, "__dict__", {
            "node": node, "op": op, "quantized": quantized, "reason": reason,
            "detail": detail, "rule": rule, "scope": scope, "role": role, "specs": specs,
        })  # fmt: skip

    @property
    def deliberate(self) -> bool:
        return self.reason in DELIBERATE


def _covered(n: Node, match: tuple[Any, ...], what: str, role: str) -> Entry:
    """An op annotated as part of ``match`` (rule, nodes, how, scope label, annotations): an
    inner op, a weight or bias."""
    rule, label = match[0].name, match[3]
    return Entry(
        n.name, _op(n), True, Reason.ANNOTATED, f"pattern {rule}: {what}", rule, label, role
    )


class Report:
    """The last ``annotate`` of a quantizer: one entry per op, and the matches per rule.

    ``Report(backend, entries, matches)``, or ``later``: what makes them on first read
    (``explain()``): the modules and operators bases' ``Explained``, whose float ops were
    explained as the annotate ended, so that a graph changed since (prepare_pt2e's
    observers) does not change what it says; the composable and pairs bases' matches."""

    __slots__ = ("backend", "_entries", "_matches", "_later")

    def __init__(
        self,
        backend: str,
        entries: Sequence[Entry] = (),
        matches: Sequence[tuple[str, str, int]] = (),
        later: Any = None,
    ) -> None:
        self.backend = backend
        self._entries, self._matches = tuple(entries), tuple(matches)
        self._later = later

    def _made(self) -> None:
        if self._later is not None:
            self._entries, self._matches = self._later.explain()
            self._later = None

    @property
    def entries(self) -> tuple[Entry, ...]:
        self._made()
        return self._entries

    @property
    def matches(self) -> tuple[tuple[str, str, int], ...]:  # (rule, scope, how many matches)
        self._made()
        return self._matches

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Report):
            return NotImplemented
        return self._key() == other._key()

    def _key(self) -> tuple[Any, ...]:
        return (self.backend, self.entries, self.matches)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Report({self.backend!r}, {self.entries!r}, {self.matches!r})"

    @property
    def float_nodes(self) -> list[Entry]:
        return [e for e in self.entries if not e.quantized]

    @property
    def rejected(self) -> list[Entry]:
        return [e for e in self.entries if e.reason == "disallowed"]

    def summary(self) -> str:
        n = len(self.entries)
        q = sum(e.quantized for e in self.entries)
        out = f"{q} of {n} op(s) quantized, {n - q} left float"
        if self.rejected:
            out += f", {len(self.rejected)} with a config their rule does not allow"
        return out

    def text(self) -> str:
        lines = [f"{self.backend} quantizer: {self.summary()}"]
        if self.matches:
            lines += ["", "patterns matched:"]
            rows = [(rule, scope, str(count)) for rule, scope, count in self.matches]
            lines += _table(("PATTERN", "CONFIG", "MATCHES"), rows)
        if self.rejected:
            lines += ["", "configs the rules do not allow (prepare_pt2e's validate raises):"]
            rows = [(e.node, e.rule or "", e.detail) for e in self.rejected]
            lines += _table(("NODE", "PATTERN", "WHY"), rows)
        left = self.float_nodes
        if left:
            lines += ["", "left float:"]
            lines += _table(("NODE", "OP", "WHY"), [(e.node, e.op, e.detail) for e in left])
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "summary": self.summary(),
            "matches": [{"pattern": r, "config": s, "count": c} for r, s, c in self.matches],
            "nodes": [asdict(e) | {"deliberate": e.deliberate} for e in self.entries],
        }


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
        for row in [tuple(head), *rows]
    ]


class Reports:
    """Mixed in first by every base: what a generated class sets (its backend, spec, rules and
    transforms), ``report()`` (opting in; the recorder is the instance's own), the refusal of
    rules that set a field the base does not read (``honours``), and the spec's transforms
    run before annotating (``transform_for_annotation``)."""

    backend = ""
    spec = ""
    rules: Sequence[Rule] = ()
    transforms: Sequence[Callable[[GraphModule], GraphModule]] = ()
    honours: frozenset[str] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        ignored = unhonoured(self.rules, self.honours)
        if ignored:
            raise ValueError(
                f"{type(self).__name__} does not read what its rules set: {'; '.join(ignored)}"
            )
        super().__init__(*args, **kwargs)

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        for transform in self.transforms:
            model = transform(model)
        return model

    api = api  # the hooks API of this runtime copy (a class mixin's ``self.api``)
    reporter: Recorder | None = None  # None: reporting is off
    last_report: Report | None = None

    def report(self, stream: Any = "stderr") -> Self:
        """Opt in: after each ``annotate``, ``last_report`` says why every op is quantized or
        left float (a ``Report``), and its summary is written on ``stream`` (standard error by
        default; None: nowhere). Returns the quantizer."""
        self.reporter = Recorder(stream)
        return self


# ------------------------------------------------------------------ explain


def _ops(ops: Iterable[Any]) -> str:
    return " or ".join(_name(op) for op in ops)


def _op(n: Node) -> str:
    return _name(n.target) if n.op == "call_function" else n.op


def _once(memo: dict[int, tuple[Any, Any]], key: Any, make: Callable[[Any], Any]) -> Any:
    """``make(key)``, made once per ``key`` in ``memo``: by id, the key kept beside (so that
    its id stays its own; torch's OpOverload.__hash__ and __str__ are Python calls)."""
    known = memo.get(id(key))
    if known is None or known[0] is not key:
        known = memo[id(key)] = (key, make(key))
    return known[1]


_NAMES: dict[int, tuple[Any, str]] = {}  # the name of each op, once


def _name(target: Any) -> str:
    """How the report names an op or a source: its ``str``, but a builtin or function whose
    ``str`` holds its address (``<built-in method cat of type object at 0x...>``) by where
    it is defined (``torch.cat``), so that a report reads the same in every process."""
    return _once(_NAMES, target, _stable)


def _stable(target: Any) -> str:
    text = str(target)
    if " at 0x" not in text:
        return text
    module = (
        getattr(target, "__module__", None) or type(getattr(target, "__self__", None)).__module__
    )
    return f"{module}.{getattr(target, '__name__', type(target).__name__)}"


def _spec(s: Any, memo: dict[int, tuple[Any, str]]) -> str:
    """What a spec says, once per spec in ``memo`` (a config's few specs are shared by every
    match)."""
    return "shared" if type(s).__name__ == "SharedQuantizationSpec" else _once(memo, s, _describe)


def _describe(s: Any) -> str:
    name = type(s).__name__
    dtype = str(getattr(s, "dtype", "?")).removeprefix("torch.")
    if name == "FixedQParamsQuantizationSpec":
        return f"{dtype} fixed qparams"
    if name == "DerivedQuantizationSpec":
        return f"{dtype} derived"
    qscheme = getattr(s, "qscheme", None)
    out = dtype
    if qscheme in (torch.per_channel_symmetric, torch.per_channel_affine):
        out += " per channel"
    if getattr(s, "is_dynamic", False):
        out += " dynamic"
    return out


def _role(nodes: Sequence[Node], i: int) -> str:
    """The role of ``nodes[i]`` in a chain's match."""
    if len(nodes) == 1:
        return "op"
    return "first op" if i == 0 else "last op" if i == len(nodes) - 1 else "inside"


def _spec_text(a: Any, b: Any, memo: dict[int, tuple[Any, str]]) -> str | None:
    """What annotations ``a`` (a match's first op's) and ``b`` (its last op's) say."""
    parts = []
    if a is not None:
        for arg, s in a.input_qspec_map.items():
            if s is not None:
                parts.append(f"{arg.name}: {_spec(s, memo)}")
    if b is not None and b.output_qspec is not None:
        parts.append(f"output: {_spec(b.output_qspec, memo)}")
    return ", ".join(parts) or None


def _scope(scopes: Sequence[Any], nodes: Sequence[Node], rule: Rule) -> Any:
    """The scope whose config annotates ``nodes`` with ``rule``: the first that accepts them."""
    return next((s for s in scopes if _tries(s, rule) and rule.accept(s.accept)(nodes)), None)


def _tries(s: Any, rule: Rule) -> bool:
    """Whether scope ``s``'s config tries ``rule``, whatever the nodes."""
    if s.config is None:
        return False
    selects = getattr(s, "selects", None)
    if selects is not None and not rule.selected_by(selects):
        return False  # an operator type that does not select the rule (operator_type "patterns")
    return rule.kind == "propagate" or rule.applies(s.config)


def _node_scope(scopes: Sequence[Any], n: Node) -> Any:
    for s in scopes:
        if s.accept is everything or s.accept([n]):
            return s
    return None


def _rejections(
    rules: Sequence[Rule], used: dict[tuple[int, str], Any]
) -> dict[tuple[str, str], str]:
    """Why the configs an annotate used are not allowed, by (rule name, scope label)."""
    return {
        (rules[index].name, label): why for (index, label), why in rejections(rules, used).items()
    }


class Recorder:
    """What the rules of one ``annotate`` matched and declined, by node; as the annotate
    ends, every op explained from that and the graph as the matchers left it."""

    def __init__(self, stream: Any = "stderr") -> None:
        self.stream = stream
        self.start()

    def start(self, scopes: Sequence[Any] | None = None) -> None:
        """Record anew, the quantizer annotating with ``scopes`` (None: its own, ``scopes()``)."""
        self.matches: list[tuple[Rule, list[Node], str]] = []
        self.declines: dict[Node, list[tuple[Rule, Reason, str | Node]]] = {}
        # Nodes a match marked annotated without specs (a QAT chain's batch norm), by its first op.
        self.parts: dict[Node, Node] = {}
        # The position in ``scopes`` of the one annotating now (None: not said), and that
        # position for each match.
        self.scopes = scopes
        self.at: int | None = None
        self.matched_at: list[int | None] = []

    def matched(self, rule: Rule, nodes: Sequence[Node], how: str = "chain") -> None:
        self.matches.append((rule, list(nodes), how))
        self.matched_at.append(self.at)

    def part_of(self, nodes: Iterable[Node], first: Node) -> None:
        """``nodes`` were marked annotated as part of the match whose first op is ``first``."""
        for n in nodes:
            self.parts.setdefault(n, first)

    def declined(
        self, rule: Rule, nodes: Iterable[Node], reason: Reason, detail: str | Node
    ) -> None:
        """``rule`` declined a match of ``nodes``: why (``detail``: in words, or the node
        annotated first, put in words when the report is read)."""
        item = (rule, reason, detail)
        declines = self.declines
        for n in nodes:
            got = declines.get(n)
            if got is None:
                declines[n] = [item]
            else:
                got.append(item)

    def declined_chain(
        self, rule: Rule, chain: Sequence[Node], params: Sequence[Node], accept: Any
    ) -> None:
        """A chain not annotated: a node of it annotated already, or it spans two scopes."""
        first = next(
            (n for n in [*chain, *params] if KEY in n.meta and n.meta[KEY]._annotated), None
        )
        if first is not None:  # the words when read (_said): by the node
            return self.declined(rule, chain, Reason.ANNOTATED, first)
        outside = [n.name for n in chain if not accept([n])]
        if len(outside) < len(chain):  # partly in this config's scope: the match spans two
            spans = f"the match spans two configs' scopes ({', '.join(outside)} in another)"
            self.declined(rule, chain, Reason.SCOPE_FILTER, spans)

    def annotated_nodes(self, model: GraphModule) -> set[Node]:
        return {n for n in model.graph.nodes if is_annotated([n])}

    def hooked(self, rule: Rule, model: GraphModule, before: set[Node]) -> None:
        """A hook annotated the nodes new since ``before``: one match of them."""
        new = [n for n in model.graph.nodes if n.op == "call_function" and n not in before]
        new = [n for n in new if is_annotated([n])]
        if new:
            self.matched(rule, new, "hook")

    def finish(self, model: GraphModule, quantizer: Any, later: Any = None) -> Report:
        """The report of the annotate just done, its text written on the stream: the float
        ops explained now, from what this recorder recorded and the graph as the matchers
        left it; the matched ops' entries, which need only the matches and their
        annotations, made when the report is first read (``later``: what explains it all
        then instead: the composable and pairs bases' matches)."""
        report = Report(
            quantizer.backend,
            later=later if later is not None else Explained(self, model, quantizer),
        )
        stream = sys.stderr if self.stream == "stderr" else self.stream
        if stream is not None:
            stream.write(report.text())
        return report


class Explained:
    """An annotate of the modules or operators base, explained as it ends (from its
    ``Recorder`` and the graph as the matchers left it): the ops a rule has and no match
    holds now (the near misses, the annotated ops of no match); the matches (rule, nodes,
    how, scope label, the annotations they got) and the ops no rule has (their arguments
    kept: prepare_pt2e replaces them) when the report is first read (``explain``)."""

    def __init__(self, rec: Recorder, model: GraphModule, quantizer: Any) -> None:
        self.rules, self.declines, self.parts = quantizer.rules, rec.declines, rec.parts
        # The scopes the annotate used (the quantizer's own, ``scopes()``, when it did not say).
        self.used_scopes: Sequence[Any] = (
            rec.scopes if rec.scopes is not None else quantizer.scopes()
        )
        self.used = (self.rules, dict(getattr(quantizer, "_used", {})))
        self.model, index = model, graph_index(model)
        self.memo: dict[int, tuple[Any, str]] = index.derived("spec text", dict)
        self.found: dict[int, set[Node]] = {}  # the nodes a source-partition rule finds
        # What an op's target decides, once (by id: an op's hash is a Python call): the rules
        # with the op, and what a float op no rule has says.
        self.by_op: dict[int, tuple[Any, Any]] = {}
        self.no_rule: dict[int, tuple[Any, str]] = {}
        self.taken: dict[tuple[int, int], bool] = {}
        # Each match with its scope's label and the annotations it got; the match each
        # matched node is entered by (its first).
        self.matches: list[tuple[Rule, list[Node], str, str, list[Any]]] = []
        self.first: dict[Node, int] = {}
        first = self.first
        for i, ((rule, nodes, how), at) in enumerate(zip(rec.matches, rec.matched_at)):
            scope = self._scope_of(rule, nodes, how, at)
            label = scope.label if scope is not None else "?"
            if how == "hook":
                qas = [n.meta.get(KEY) for n in nodes]
            else:
                qas = [nodes[0].meta.get(KEY), nodes[-1].meta.get(KEY)]
            self.matches.append((rule, nodes, how, label, qas))
            for n in nodes:
                first.setdefault(n, i)
        share = [r for r in self.rules if r.kind in ("propagate", "shared")]
        getitem = operator.getitem
        self.ops = [n for n in index.order if n.op == "call_function" and n.target is not getitem]
        # An op's entry, or (an op no rule has) its arguments as the annotate left them.
        self.rest: dict[Node, Any] = {}
        for n in self.ops:
            if n in first:
                continue
            qa = n.meta.get(KEY)
            if qa is not None and qa._annotated:
                self.rest[n] = self._unmatched(n, qa, share)
            elif self._op_rules(n)[1]:
                self.rest[n] = self._why_float(n, n.args)
            else:
                self.rest[n] = n.args

    def explain(self) -> tuple[tuple[Entry, ...], tuple[tuple[str, str, int], ...]]:
        """(one entry per op, (rule, scope, how many matches) per rule and scope)."""
        done: dict[Node, Entry] = {}
        counts: dict[tuple[str, str], int] = {}
        bad = _rejections(*self.used)
        memo, first = self.memo, self.first
        said: dict[tuple[str, str], tuple[Reason, str]] = {}  # (reason, detail) by rule and scope
        for i, (rule, nodes, how, label, qas) in enumerate(self.matches):
            key = (rule.name, label)
            counts[key] = counts.get(key, 0) + 1
            known = said.get(key)
            if known is None:
                why = bad.get(key)
                known = said[key] = (
                    (Reason.DISALLOWED, f"config {label} not allowed: {why}")
                    if why
                    else (Reason.ANNOTATED, f"pattern {rule.name}")
                )
            reason, detail = known
            specs = _spec_text(qas[0], qas[-1], memo) if how != "hook" else None
            for j, n in enumerate(nodes):
                if first[n] != i:
                    continue
                role = how if how != "chain" else _role(nodes, j)
                if how == "hook":
                    specs = _spec_text(qas[j], qas[j], memo)
                done[n] = Entry(n.name, _op(n), True, reason, detail, rule.name, label, role, specs)
        rest, float_op = self.rest, self._why_float
        entries = tuple(
            done[n] if n in done else e if isinstance(e := rest[n], Entry) else float_op(n, e)
            for n in self.ops
        )
        return entries, tuple((r, s, c) for (r, s), c in counts.items())

    def _scope_of(self, rule: Rule, nodes: list[Node], how: str, at: int | None) -> Any:
        """The scope of a match: the first that takes it. A match the quantizer annotated with
        its scope at ``at`` (a chain or shared op: it accepted the match) is taken by that one
        if its rule is tried with that config, unless an earlier one takes it."""
        scopes = self.used_scopes
        if at is None or how == "hook":
            return _scope(scopes, nodes, rule)
        earlier = _scope(scopes[:at], nodes, rule) if at else None
        if earlier is not None:
            return earlier
        key = (id(rule), at)
        taken = self.taken.get(key)
        if taken is None:  # _scope's test, but for the accept the annotate passed
            taken = self.taken[key] = _tries(scopes[at], rule)
        return scopes[at] if taken else _scope(scopes[at + 1 :], nodes, rule)

    def _unmatched(self, n: Node, qa: Any, share: list[Rule]) -> Entry:
        """An annotated op no match of the recorder holds: part of one, a weight, propagated,
        or marked (``qa``: its annotation)."""
        first = self.first
        owner = first.get(self.parts.get(n))  # type: ignore[arg-type]
        if owner is not None:
            return _covered(n, self.matches[owner], "part of its match", "part")
        if not (qa.input_qspec_map or qa.output_qspec):
            user = next((first[u] for u in n.users if u in first), None)
            if user is not None:  # a weight or bias a match marked: no spec of its own
                return _covered(n, self.matches[user], "a weight or bias of its match", "weight")
            # Marked annotated without a spec (a config of None, a QAT partition's own op):
            # no later rule takes it, and it is not quantized; say why as for a float op.
            return replace(self._why_float(n, n.args), role="marked")
        sharing = next((r for r in share if is_op(n, r.chain[0])), None)
        scope = _node_scope(self.used_scopes, n)
        return Entry(
            n.name,
            _op(n),
            True,
            Reason.ANNOTATED,
            "shares its input's observer",
            sharing.name if sharing else None,
            scope.label if scope is not None else None,
            "propagated",
            _spec_text(qa, qa, self.memo),
        )

    def _finds(self, r: Rule) -> set[Node]:
        """The nodes source-partition rule ``r`` finds (torch's partitioning, memoized on the
        index: what the annotate found)."""
        got = self.found.get(id(r))
        if got is None:
            got = self.found[id(r)] = set(candidates(self.model, r, lambda nodes: True))
        return got

    def _why_float(self, n: Node, args: Any) -> Entry:
        # No scope takes the op alone (operator scopes take matches by their first op): the
        # config of least precedence, the global one where it is set, decides what it says.
        scopes = self.used_scopes
        scope = _node_scope(scopes, n) or (scopes[-1] if scopes else None)
        if not _floating_input(args):
            return _float(n, Reason.NOT_A_TENSOR_OP, "no floating-point tensor input", scope=scope)
        if not isinstance(n.meta.get("val"), torch.Tensor):
            return _float(n, Reason.NOT_A_TENSOR_OP, "its output is not a tensor", scope=scope)
        if scope is None or scope.config is None:
            label = scope.label if scope is not None else "global"
            what = (
                "no global config (set_global)" if label == "global" else f"{label} config is None"
            )
            return _float(n, Reason.NO_CONFIG, f"left float on purpose: {what}", scope=scope)
        declines = self.declines.get(n, [])
        for rule, reason, detail in declines:
            if reason != "annotated":
                return _float(n, reason, f"pattern {rule.name}: {_said(detail)}", rule, scope)
        return self._nearest(n, scope, declines)

    def _op_rules(self, n: Node) -> tuple[list[tuple[Rule, int]], list[Rule]]:
        """(rule, position) of each place ``n``'s op has in the chains of the chain and shared
        rules, and the rules with the op (each once): once per op."""
        return _once(self.by_op, n.target, lambda _: self._places(n))

    def _places(self, n: Node) -> tuple[list[tuple[Rule, int]], list[Rule]]:
        places = [(r, k) for r in self.rules for k, ops in enumerate(r.chain) if is_op(n, ops)]
        with_op = list({id(r): r for r, _ in places}.values())
        return [(r, k) for r, k in places if r.kind in ("chain", "shared")], with_op

    def _no_rule(self, n: Node, scope: Any) -> Entry:
        """A float op no rule has (hooks name no ops: any of them may have looked at it), its
        words worked out once per op."""
        return _float(n, Reason.NO_RULE, _once(self.no_rule, n.target, self._none_has), scope=scope)

    def _none_has(self, target: Any) -> str:
        detail = f"no rule of the quantizer has {_name(target)}"
        hooks = [r for r in self.rules if r.kind == "hook" and not r.chain]
        if hooks:
            named = (f"{r.name} ({getattr(r.annotate, '__name__', 'annotate')})" for r in hooks)
            detail += f"; the hooks of {', '.join(named)} did not annotate it"
        return detail

    def _nearest(
        self, n: Node, scope: Any, declines: list[tuple[Rule, Reason, str | Node]]
    ) -> Entry:
        """A float op in a configured scope that no rule declined: the nearest rule's break."""
        places, with_op = self._op_rules(n)
        if not with_op:
            return self._no_rule(n, scope)
        config = scope.config
        # The nearest rule: (ops matched, rule, why it broke: a near miss's break or a partition's)
        best: tuple[int, Rule, tuple[Any, ...]] | None = None
        for r, k in places:
            got, broke = near(n, r, k)
            if broke is None and r.sources and n not in self._finds(r):
                if best is None or got >= best[0]:
                    best = (got, r, ("source", r.sources, n))
                continue
            if broke is None and r.partitions and r.applies(config):
                # Matched by module partitions (find_sequential_partitions): had the ops been
                # one, the rule would have annotated them or said why above.
                if best is None or got >= best[0]:
                    best = (got, r, ("partitions", n))
                continue
            if broke is None:
                if r.opt_in and scope.label == "global":
                    detail = (
                        f"pattern {r.name} is opt-in: the global config does not try it, "
                        "a config set for its operator or module does"
                    )
                    return _float(n, Reason.NOT_TRIED, detail, r, scope)
                if not r.applies(config):
                    return _float(n, Reason.NOT_TRIED, _not_tried(r, config, scope), r, scope)
                continue
            if best is None or got > best[0]:
                best = (got, r, broke)
        for rule, _, said in declines:
            return _float(n, Reason.ANNOTATED, f"pattern {rule.name}: {_said(said)}", rule, scope)
        if best is not None:
            _, r, broke = best
            reason, why = self._broke(broke)
            return _float(n, reason, f"pattern {r.name}: {why}", r, scope)
        return self._left(n, with_op, scope)

    def _broke(self, broke: tuple[Any, ...]) -> tuple[Reason, str]:
        """(reason, what it says) of the nearest rule's break (``near``'s, or a partition's)."""
        kind = broke[0]
        if kind == "source":
            return Reason.SOURCE_PARTITION, (
                f"matched by source partition ({_ops(broke[1])}), and {broke[2].name} is not "
                "the output of one (a non-strict export records no source_fn_stack)"
            )
        if kind == "partitions":
            return Reason.SOURCE_PARTITION, (
                f"matched by module source partitions, and {broke[1].name} is not in one of "
                "its modules (a functional call, or an export that records none)"
            )
        if kind == "before":  # the op before ``cur`` is not the chain's
            _, prev, cur, ops = broke
            shown = f"{prev.name} ({_op(prev)})" if isinstance(prev, Node) else repr(prev)
            return (
                Reason.CHAIN_BROKE,
                f"chain broke at {shown}: it wants {_ops(ops)} before {cur.name}",
            )
        if kind == "others":  # the op before ``cur`` has other users
            _, prev, cur = broke
            others = ", ".join(u.name for u in prev.users if u is not cur)
            return Reason.SECOND_USER, (
                f"chain broke at {prev.name}: its output has other users ({others})"
            )
        if kind == "users":  # ``cur``'s output has no single user
            users = list(broke[1].users)
            shown = ", ".join(u.name for u in users) or "none"
            return Reason.SECOND_USER, (
                f"chain broke at {broke[1].name}: its output has {len(users)} users ({shown})"
            )
        _, u, ops = broke  # "after": the op after is not the chain's
        return Reason.CHAIN_BROKE, f"chain broke at {u.name} ({_op(u)}): it wants {_ops(ops)}"

    def _left(self, n: Node, with_op: Sequence[Rule], scope: Any) -> Entry:
        """A float op that rules have, none of them in order: a shared op whose producer is
        float, or an op a hook left."""
        for r in with_op:
            if r.kind == "propagate":
                cold = [i.name for i in shared_inputs(n) if not self._quantized_output(i)]
                what = f"input {', '.join(cold)} is" if cold else "inputs are"
                detail = f"it shares its input's observer, and its {what} not quantized"
                return _float(n, Reason.PRODUCER_FLOAT, f"pattern {r.name}: {detail}", r, scope)
        for r in with_op:
            if r.kind == "hook":
                name = getattr(r.annotate, "__name__", "its annotate function")
                return _float(
                    n, Reason.HOOK_DECLINED, f"pattern {r.name}: {name} left it", r, scope
                )
        r = with_op[0]
        why = f"pattern {r.name} has its op but did not annotate it"
        return _float(n, Reason.UNEXPLAINED, why, r, scope)

    def _quantized_output(self, n: Node) -> bool:
        qa = n.meta.get(KEY)
        if qa is None or not qa._annotated:
            return False
        if qa.output_qspec is not None:
            return True
        for u in n.users:
            other = u.meta.get(KEY)
            if other is not None and n in other.input_qspec_map:
                return True
        return False


def _floating_input(args: Any) -> bool:
    """Whether an argument (or a node of a list argument) is a floating tensor."""
    for a in args:
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, Node) and not not_floating(x):
                return True
    return False


def _said(detail: str | Node) -> str:
    """A decline's words: as recorded, or that of the node annotated first."""
    return detail if isinstance(detail, str) else f"{detail.name} was annotated first"


def _float(
    n: Node, reason: Reason, detail: str, rule: Rule | None = None, scope: Any = None
) -> Entry:
    label = scope.label if scope is not None else None
    return Entry(n.name, _op(n), False, reason, detail, rule.name if rule else None, label)


def _not_tried(rule: Rule, config: Any, scope: Any) -> str:
    specs = view(config)  # the config as the rules read it (Rule.applies)
    if rule.qat and not specs.is_qat():
        return f"pattern {rule.name} is for QAT only; {scope.label} config has is_qat False"
    dynamic = specs.dynamic()
    want = "static" if dynamic else "dynamic"
    return (
        f"pattern {rule.name} allows {want} configs only; {scope.label} config has "
        f"input_activation.is_dynamic {dynamic}"
    )
