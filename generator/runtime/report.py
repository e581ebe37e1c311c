"""Why a node is quantized or left float: the opt-in report of a generated quantizer.

``quantizer.report()`` turns it on: every later ``annotate`` records what the
rules matched and why a match was declined, then explains every op of the
graph in ``quantizer.last_report`` (a ``Report``) and prints its summary (a
table of the patterns matched, then the nodes left float with the reason)
on standard error, or on the stream given (None: print nothing). Off, the
only cost is a test of ``ACTIVE`` where a match is declined or annotated.
``recording`` sets ``ACTIVE`` for one annotate and puts it back however it
ends; a declined match's reason comes from the check that declined it
(``conditions.Decline``), never worked out again here.

A node left float gets one reason, with the rule nearest to quantizing it
(``Entry.reason`` is the code, ``Entry.detail`` says it in words):

* ``no_config``: the config of the node's scope is None (deliberate);
* ``not_a_tensor_op``: no floating-point tensor input, or no tensor output (deliberate);
* ``no_rule``: no rule of the quantizer has the node's op;
* ``chain_broke``: the nearest rule's chain broke at a node (another op, or
  an op whose output has a second user, ``second_user``);
* ``source_partition``: the rule matches by source partition, and the node
  is not the output of one (non-strict exports record none);
* ``non_float_input`` and ``skip``: an activation input is not a float32
  tensor (with ``any_float``, not a floating one), or a skip predicate of the
  rule (or a ``when:`` condition) rules the match out;
* ``scope_filter``: the match spans nodes its config does not configure;
* ``not_tried``: the rule's dtype configs do not take the config (static or
  dynamic, QAT);
* ``hook_declined``: the rule's ``annotate`` function left it;
* ``producer_float``: a shared-observer op whose input is not quantized;
* ``annotated``: another rule annotated a node of the match first.

A quantized node names the rule that annotated it and the specs it got; its
reason is ``disallowed`` when the config is not one the rule's dtype configs
allow (prepare_pt2e's ``validate`` then raises), else ``annotated``.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch
from torch.fx import GraphModule, Node

from .conditions import not_floating
from .graph import index as graph_index
from .graph import is_op, shared_inputs
from .matcher import candidates
from .validate import rejections
from .values import KEY, Rule

__all__ = ["ACTIVE", "Entry", "Recorder", "Report", "recording"]

# The recorder of the quantizer annotating now, or None (reporting is off). Set only by
# ``recording``, which puts back what was there however the annotate ends.
ACTIVE: Recorder | None = None


@contextmanager
def recording(rec: Recorder | None) -> Iterator[Recorder | None]:
    """Make ``rec`` the active recorder (None: reporting off) for one ``annotate``; the one
    before it is active again afterwards, whether the annotate returns or raises."""
    global ACTIVE
    before = ACTIVE
    ACTIVE = rec
    if rec is not None:
        rec.start()
    try:
        yield rec
    finally:
        ACTIVE = before


DELIBERATE = frozenset({"no_config", "not_a_tensor_op"})


@dataclass(frozen=True)
class Entry:
    """What happened to one op of the graph, and why."""

    node: str
    op: str
    quantized: bool
    reason: str  # a code: annotated, disallowed, or why the node is float (above)
    detail: str
    rule: str | None = None  # the rule that annotated it, or the nearest rule
    scope: str | None = None  # the config's scope: global, module_name 'block', ...
    role: str | None = None  # in its match: first op, inside, last op, op, shared, propagated
    specs: str | None = None

    @property
    def deliberate(self) -> bool:
        return self.reason in DELIBERATE


def _covered(n: Node, match: Entry, what: str, role: str) -> Entry:
    """An op annotated as part of ``match``'s entry (an inner op, a weight or bias)."""
    return Entry(
        n.name,
        _op(n),
        True,
        "annotated",
        f"pattern {match.rule}: {what}",
        match.rule,
        match.scope,
        role,
    )


@dataclass(frozen=True)
class Report:
    """The last ``annotate`` of a quantizer: one entry per op, and the matches per rule."""

    backend: str
    entries: tuple[Entry, ...]
    matches: tuple[tuple[str, str, int], ...]  # (rule, scope, how many matches)

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


class Recorder:
    """What the rules of one ``annotate`` matched and declined, by node."""

    def __init__(self, stream: Any = "stderr") -> None:
        self.stream = stream
        self.matches: list[tuple[Rule, list[Node], str]] = []
        self.declines: dict[Node, list[tuple[Rule, str, str]]] = {}
        # Nodes a match marked annotated without specs (a QAT chain's batch norm), by its first op.
        self.parts: dict[Node, Node] = {}

    def start(self) -> None:
        self.matches = []
        self.declines = {}
        self.parts = {}

    def matched(self, rule: Rule, nodes: Sequence[Node], how: str = "chain") -> None:
        self.matches.append((rule, list(nodes), how))

    def part_of(self, nodes: Iterable[Node], first: Node) -> None:
        """``nodes`` were marked annotated as part of the match whose first op is ``first``."""
        for n in nodes:
            self.parts.setdefault(n, first)

    def declined(self, rule: Rule, nodes: Iterable[Node], reason: str, detail: str) -> None:
        for n in nodes:
            self.declines.setdefault(n, []).append((rule, reason, detail))

    def declined_chain(
        self, rule: Rule, chain: Sequence[Node], params: Sequence[Node], accept: Any
    ) -> None:
        """A chain not annotated: a node of it annotated already, or it spans two scopes."""
        first = next(
            (n for n in [*chain, *params] if KEY in n.meta and n.meta[KEY]._annotated), None
        )
        if first is not None:
            self.declined(rule, chain, "annotated", f"{first.name} was annotated first")
            return
        outside = [n.name for n in chain if not accept([n])]
        if len(outside) < len(chain):  # partly in this config's scope: the match spans two
            self.declined(
                rule,
                chain,
                "scope_filter",
                f"the match spans two configs' scopes ({', '.join(outside)} in another)",
            )

    def annotated_nodes(self, model: GraphModule) -> set[Node]:
        return {n for n in model.graph.nodes if KEY in n.meta and n.meta[KEY]._annotated}

    def hooked(self, rule: Rule, model: GraphModule, before: set[Node]) -> None:
        """A hook annotated the nodes new since ``before``: one match of them."""
        new = [n for n in model.graph.nodes if n.op == "call_function"]
        new = [n for n in new if n not in before and KEY in n.meta and n.meta[KEY]._annotated]
        if new:
            self.matched(rule, new, "hook")

    def finish(self, model: GraphModule, quantizer: Any) -> Report:
        report = explain(model, quantizer, self)
        stream = sys.stderr if self.stream == "stderr" else self.stream
        if stream is not None:
            stream.write(report.text())
        return report


# ------------------------------------------------------------------ explain


def _ops(ops: Iterable[Any]) -> str:
    return " or ".join(str(op) for op in ops)


def _op(n: Node) -> str:
    return _name(n.target) if n.op == "call_function" else n.op


_NAMES: dict[Any, str] = {}  # str of an op, once per op: torch's OpOverload.__str__ is slow


def _name(target: Any) -> str:
    try:
        name = _NAMES.get(target)
    except TypeError:  # an unhashable target
        return str(target)
    if name is None:
        name = _NAMES[target] = str(target)
    return name


# What each spec says, by id, for one ``explain`` (the spec is kept, so its id stays its own):
# a config's few specs are shared by every match, and described once.
_SPECS: dict[int, tuple[Any, str]] = {}


def _spec(s: Any) -> str:
    name = type(s).__name__
    if name == "SharedQuantizationSpec":
        return "shared"
    known = _SPECS.get(id(s))
    if known is not None and known[0] is s:
        return known[1]
    text = _describe(s, name)
    _SPECS[id(s)] = (s, text)
    return text


def _describe(s: Any, name: str) -> str:
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


def describe_specs(first: Node, last: Node) -> str | None:
    """The specs a match got: its first op's inputs, its last op's output."""
    parts = []
    qa = first.meta.get(KEY)
    if qa is not None:
        for arg, s in qa.input_qspec_map.items():
            if s is not None:
                parts.append(f"{arg.name}: {_spec(s)}")
    qb = last.meta.get(KEY)
    if qb is not None and qb.output_qspec is not None:
        parts.append(f"output: {_spec(qb.output_qspec)}")
    return ", ".join(parts) or None


def _scope(scopes: Sequence[Any], nodes: Sequence[Node], rule: Rule | None = None) -> Any:
    """The scope whose config annotates ``nodes`` (with ``rule``): the first that accepts them."""
    for s in scopes:
        if s.config is None:
            continue
        selects = getattr(s, "selects", None)
        if rule is not None and selects is not None and not rule.selected_by(selects):
            continue  # an operator type that does not select the rule (operator_type "patterns")
        if not (rule.accept(s.accept) if rule is not None else s.accept)(nodes):
            continue
        if rule is None or rule.kind == "propagate" or rule.applies(s.config):
            return s
    return None


def _node_scope(scopes: Sequence[Any], n: Node) -> Any:
    for s in scopes:
        if s.accept([n]):
            return s
    return None


def _rejections(quantizer: Any) -> dict[tuple[str, str], str]:
    """Why the configs the last annotate used are not allowed, by (rule name, scope label)."""
    used = getattr(quantizer, "_used", {})
    return {
        (quantizer.rules[index].name, label): why
        for (index, label), why in rejections(quantizer.rules, used).items()
    }


def explain(model: GraphModule, quantizer: Any, rec: Recorder) -> Report:
    """One entry per op of ``model`` (after annotate), from what ``rec`` recorded."""
    _SPECS.clear()
    try:
        return _explain(model, quantizer, rec)
    finally:
        _SPECS.clear()


def _explain(model: GraphModule, quantizer: Any, rec: Recorder) -> Report:
    rules: Sequence[Rule] = quantizer.rules
    scopes = quantizer.scopes()
    bad = _rejections(quantizer)
    found = _Found(model)
    done: dict[Node, Entry] = {}
    counts: dict[tuple[str, str], int] = {}
    for rule, nodes, how in rec.matches:
        scope = _scope(scopes, nodes, rule)
        label = scope.label if scope is not None else "?"
        counts[(rule.name, label)] = counts.get((rule.name, label), 0) + 1
        specs = describe_specs(nodes[0], nodes[-1]) if how != "hook" else None
        for i, n in enumerate(nodes):
            if n in done:
                continue
            if how != "chain":
                role = how
            elif len(nodes) == 1:
                role = "op"
            else:
                role = "first op" if i == 0 else "last op" if i == len(nodes) - 1 else "inside"
            why = bad.get((rule.name, label))
            if how == "hook":
                specs = describe_specs(n, n)
            done[n] = Entry(
                n.name,
                _op(n),
                True,
                "disallowed" if why else "annotated",
                f"config {label} not allowed: {why}" if why else f"pattern {rule.name}",
                rule.name,
                label,
                role,
                specs,
            )
    share = [r for r in rules if r.kind in ("propagate", "shared")]
    entries = []
    for n in model.graph.nodes:
        if n.op != "call_function" or n.target is operator.getitem:
            continue
        if n in done:
            entries.append(done[n])
            continue
        qa = n.meta.get(KEY)
        owner = done.get(rec.parts.get(n))  # type: ignore[arg-type]
        if owner is not None and qa is not None and qa._annotated:
            entries.append(_covered(n, owner, "part of its match", "part"))
            continue
        if qa is not None and qa._annotated and not (qa.input_qspec_map or qa.output_qspec):
            user = next((done[u] for u in n.users if u in done), None)
            if user is not None:  # a weight or bias a match marked: no spec of its own
                entries.append(_covered(n, user, "a weight or bias of its match", "weight"))
                continue
            # Marked annotated without a spec (a config of None, a QAT partition's own op):
            # no later rule takes it, and it is not quantized; say why as for a float op.
            entries.append(replace(_why_float(n, scopes, rules, rec, found), role="marked"))
            continue
        if qa is not None and qa._annotated and (qa.input_qspec_map or qa.output_qspec):
            sharing = next((r for r in share if is_op(n, r.chain[0])), None)
            scope = _node_scope(scopes, n)
            entries.append(
                Entry(
                    n.name,
                    _op(n),
                    True,
                    "annotated",
                    "shares its input's observer",
                    sharing.name if sharing else None,
                    scope.label if scope is not None else None,
                    "propagated",
                    describe_specs(n, n),
                )
            )
            continue
        entries.append(_why_float(n, scopes, rules, rec, found))
    matches = tuple((r, s, c) for (r, s), c in counts.items())
    return Report(quantizer.backend, tuple(entries), matches)


def _float(n: Node, reason: str, detail: str, rule: Rule | None = None, scope: Any = None) -> Entry:
    label = scope.label if scope is not None else None
    return Entry(n.name, _op(n), False, reason, detail, rule.name if rule else None, label)


def _tensor_inputs(n: Node) -> list[Node]:
    out = []
    for a in n.args:
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, Node):
                out.append(x)
    return out


def _why_float(
    n: Node, scopes: Sequence[Any], rules: Sequence[Rule], rec: Recorder, found: _Found
) -> Entry:
    # No scope takes the op alone (operator scopes take matches by their first op): the
    # config of least precedence, the global one where it is set, decides what it says.
    scope = _node_scope(scopes, n) or (scopes[-1] if scopes else None)
    if not any(not not_floating(a) for a in _tensor_inputs(n)):
        return _float(n, "not_a_tensor_op", "no floating-point tensor input", scope=scope)
    if not isinstance(n.meta.get("val"), torch.Tensor):
        return _float(n, "not_a_tensor_op", "its output is not a tensor", scope=scope)
    if scope is None or scope.config is None:
        label = scope.label if scope is not None else "global"
        what = "no global config (set_global)" if label == "global" else f"{label} config is None"
        return _float(n, "no_config", f"left float on purpose: {what}", scope=scope)
    declines = rec.declines.get(n, [])
    for rule, reason, detail in declines:
        if reason != "annotated":
            return _float(n, reason, f"pattern {rule.name}: {detail}", rule, scope)
    candidates = _with_op(n, rules)
    if not candidates:
        return _no_rule(n, rules, scope)
    config = scope.config
    # The nearest rule: (ops matched, rule, why it broke: a _near break or a partition's)
    best: tuple[int, Rule, tuple[Any, ...]] | None = None
    for r, k in _positions(n, rules):
        if r.kind not in ("chain", "shared"):
            continue
        got, broke = _near(n, r, k)
        if broke is None and r.sources and n not in found(r):
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
                return _float(n, "not_tried", detail, r, scope)
            if not r.applies(config):
                return _float(n, "not_tried", _not_tried(r, config, scope), r, scope)
            continue
        if best is None or got > best[0]:
            best = (got, r, broke)
    for rule, _, detail in declines:
        return _float(n, "annotated", f"pattern {rule.name}: {detail}", rule, scope)
    if best is not None:
        _, r, broke = best
        reason, why = _broke(broke)
        return _float(n, reason, f"pattern {r.name}: {why}", r, scope)
    return _left(n, candidates, scope)


def _broke(broke: tuple[Any, ...]) -> tuple[str, str]:
    """(reason, what it says) of the nearest rule's break (``_near``'s, or a partition's)."""
    kind = broke[0]
    if kind == "source":
        return "source_partition", (
            f"matched by source partition ({_ops(broke[1])}), and {broke[2].name} is not the "
            "output of one (a non-strict export records no source_fn_stack)"
        )
    if kind == "partitions":
        return "source_partition", (
            f"matched by module source partitions, and {broke[1].name} is not in one of "
            "its modules (a functional call, or an export that records none)"
        )
    if kind == "before":  # the op before ``cur`` is not the chain's
        _, prev, cur, ops = broke
        shown = f"{prev.name} ({_op(prev)})" if isinstance(prev, Node) else repr(prev)
        return "chain_broke", f"chain broke at {shown}: it wants {_ops(ops)} before {cur.name}"
    if kind == "others":  # the op before ``cur`` has other users
        _, prev, cur = broke
        others = ", ".join(u.name for u in prev.users if u is not cur)
        return "second_user", f"chain broke at {prev.name}: its output has other users ({others})"
    if kind == "users":  # ``cur``'s output has no single user
        users = list(broke[1].users)
        shown = ", ".join(u.name for u in users) or "none"
        return "second_user", (
            f"chain broke at {broke[1].name}: its output has {len(users)} users ({shown})"
        )
    _, u, ops = broke  # "after": the op after is not the chain's
    return "chain_broke", f"chain broke at {u.name} ({_op(u)}): it wants {_ops(ops)}"


def _no_rule(n: Node, rules: Sequence[Rule], scope: Any) -> Entry:
    """A float op no rule has (hooks name no ops: any of them may have looked at it)."""
    detail = f"no rule of the quantizer has {_op(n)}"
    hooks = [r for r in rules if r.kind == "hook" and not r.chain]
    if hooks:
        names = ", ".join(
            f"{r.name} ({getattr(r.annotate, '__name__', 'annotate')})" for r in hooks
        )
        detail += f"; the hooks of {names} did not annotate it"
    return _float(n, "no_rule", detail, scope=scope)


def _left(n: Node, candidates: Sequence[Rule], scope: Any) -> Entry:
    """A float op that rules have, none of them in order: a shared op whose producer is
    float, or an op a hook left."""
    for r in candidates:
        if r.kind == "propagate":
            inputs = shared_inputs(n)
            cold = [i.name for i in inputs if not _quantized_output(i)]
            what = f"input {', '.join(cold)} is" if cold else "inputs are"
            return _float(
                n,
                "producer_float",
                f"pattern {r.name}: it shares its input's observer, and its {what} not quantized",
                r,
                scope,
            )
    for r in candidates:
        if r.kind == "hook":
            name = getattr(r.annotate, "__name__", "its annotate function")
            return _float(n, "hook_declined", f"pattern {r.name}: {name} left it", r, scope)
    r = candidates[0]
    return _float(
        n, "unexplained", f"pattern {r.name} has its op but did not annotate it", r, scope
    )


class _Found:
    """The nodes each rule that matches by source partition finds in the graph: torch's
    source partitioning runs once per rule and report, not once per float op."""

    def __init__(self, model: GraphModule) -> None:
        self.model = model
        self.by_rule: dict[int, set[Node]] = {}

    def __call__(self, rule: Rule) -> set[Node]:
        found = self.by_rule.get(id(rule))
        if found is None:
            found = set(candidates(self.model, rule, lambda nodes: True))
            self.by_rule[id(rule)] = found
        return found


def _with_op(n: Node, rules: Sequence[Rule]) -> list[Rule]:
    """The rules with ``n``'s op in their chain: once per op and annotate (the graph's index)."""
    return [r for r, _ in _positions(n, rules, first=True)]


def _positions(n: Node, rules: Sequence[Rule], first: bool = False) -> list[tuple[Rule, int]]:
    """(rule, position) of each place ``n``'s op has in the chains of ``rules`` (``first``: the
    first place of each rule), once per op, rules and annotate (memoized on the graph's index)."""
    model = n.graph.owning_module
    memo: dict[Any, list[tuple[Rule, int]]] = (
        graph_index(model).derived(("rule positions", id(rules), first), dict)
        if model is not None
        else {}
    )
    try:
        found = memo.get(n.target)
    except TypeError:  # an unhashable target: worked out afresh
        found, memo = None, {}
    if found is None:
        found = []
        for r in rules:
            for k, ops in enumerate(r.chain):
                if is_op(n, ops):
                    found.append((r, k))
                    if first:
                        break
        memo[n.target] = found
    return found


def _quantized_output(n: Node) -> bool:
    qa = n.meta.get(KEY)
    if qa is None or not qa._annotated:
        return False
    return qa.output_qspec is not None or any(
        u.meta.get(KEY) is not None and n in u.meta[KEY].input_qspec_map for u in n.users
    )


def _not_tried(rule: Rule, config: Any, scope: Any) -> str:
    if rule.qat and not config.is_qat:
        return f"pattern {rule.name} is for QAT only; {scope.label} config has is_qat False"
    act = config.input_activation
    dynamic = act is not None and bool(act.is_dynamic)
    want = "static" if dynamic else "dynamic"
    return (
        f"pattern {rule.name} allows {want} configs only; {scope.label} config has "
        f"input_activation.is_dynamic {dynamic}"
    )


def _near(n: Node, rule: Rule, k: int) -> tuple[int, tuple[Any, ...] | None]:
    """How many ops of ``rule``'s chain match around ``n`` at position ``k``, and where it broke
    (None: nowhere; else what ``_broke`` says in words)."""
    got = 1
    cur = n
    for j in range(k - 1, -1, -1):
        prev = cur.args[0] if cur.args else None
        if not isinstance(prev, Node) or not is_op(prev, rule.chain[j]):
            return got, ("before", prev, cur, rule.chain[j])
        if len(prev.users) != 1:
            return got, ("others", prev, cur)
        cur = prev
        got += 1
    cur = n
    for j in range(k + 1, len(rule.chain)):
        if len(cur.users) != 1:
            return got, ("users", cur)
        (u,) = cur.users
        if not is_op(u, rule.chain[j]) or u.args[0] is not cur:
            return got, ("after", u, rule.chain[j])
        cur = u
        got += 1
    return got, None
