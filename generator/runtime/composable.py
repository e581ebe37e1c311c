"""``ComposableSpecQuantizer`` (``scopes: composable``): ExecuTorch's composable quantizer
scheme (``arm_quantizer_utils``: pattern quantizers and a shared-qspec quantizer, as its
Cortex-M and composable Arm quantizers compose them), with the spec's rules as the support
table: stages in order, each a config and the nodes it sees; at each run of single-user
nodes the longest supported chain, declined (``last_matches``) and retried shorter; then
clusters of shared ops; and ExecuTorch's marks (``_arm_annotation_info``,
``_arm_disallow_tfa``), which its Arm and Cortex-M passes read. docs/reference/pt2e.md
(``scopes: composable``) has the scheme in full.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    QuantizationAnnotation,
    Quantizer,
    SharedQuantizationSpec,
)

from . import finders, match_report, report
from .annotate import output_spec, weight_spec
from .api import INFO, MATCHED, NO_TFA
from .conditions import HISTC_UPPER_BOUND, large_scalar
from .graph import float_tensor as float_out
from .matcher import LongestChains
from .model import Context, Decline, Match, Reason, failing, first_ops, view
from .objects import load_object
from .validate import SYMMETRIC, disallowed, refuse, refuse_when_set, required
from .values import KEY, STRUCTURAL, Rule, selected

__all__ = ["ComposableAPI", "ComposableSpecQuantizer", "Stage"]

# Why the matcher rejects a match (ExecuTorch's words where the report shows them).
MATCHED_FIRST = Decline(Reason.ANNOTATED, "Tried annotating already quantized node.")
SCALAR = Decline(
    Reason.SKIP,
    "Tried annotating a large constant scalar value that is not supported for quantization.",
)

# A config whose output spec the rule's output_qscheme refuses: declined, not a problem of
# validate's (the config is one the spec allows; ExecuTorch's ReluFusedPatternCheck).
OUTPUT_QSCHEME = Decline(
    Reason.NOT_TRIED, "its output_qscheme refuses the output spec the config gives"
)

aten = torch.ops.aten
# Ops whose weight (argument 1) and bias (argument 2) are parameters, not activations:
# ExecuTorch Arm's, and the transposed convs torchao's ``_is_conv_transpose_node`` names.
PARAMETER_TARGETS = {
    aten.linear.default, aten.convolution.default, aten.conv1d.default, aten.conv1d.padding,
    aten.conv2d.default, aten.conv2d.padding, aten.conv3d.default, aten.conv3d.padding,
    aten.conv_transpose1d.default, aten.conv_transpose2d.input, aten.conv_transpose3d.input,
}  # fmt: skip
# Shared ops that stay float in a cluster touching a uint8 model input or output.
UINT8_IO_BRIDGES = {
    aten.cat.default, aten.concatenate.default, aten.stack.default, aten.pixel_shuffle.default,
    aten.slice.Tensor,
}  # fmt: skip
NO_SPEC_AROUND = Decline(
    Reason.PRODUCER_FLOAT, "Couldn't find any adjacent quantization spec to annotate while_loop."
)
UNOBSERVED: dict[Any, tuple[int, ...]] = {aten.batch_norm.default: (1, 2, 3, 4)}  # state


class Stage:
    """A config and the nodes it sees: all (``targets`` None), those calling one of
    ``targets``, or those a ``finder`` finds (anything with ``find_nodes(model)``, as
    ExecuTorch's NodeFinders)."""

    def __init__(
        self, config: Any, targets: Sequence[Any] | None = None, finder: Any = None
    ) -> None:
        self.config = config
        self.targets = None if targets is None else list(targets)
        self.finder = finder

    def label(self, index: int) -> str:
        """How a report names the stage at ``index`` (from 1): what it sees."""
        if self.finder is not None:
            return f"stage {index} ({type(self.finder).__name__})"
        if self.targets is None:
            return f"stage {index}"
        shown = ", ".join(str(t) for t in self.targets[:2])
        return f"stage {index} ({shown}{', ...' if len(self.targets) > 2 else ''})"

    def nodes(self, model: GraphModule) -> Iterator[Node]:
        if self.finder is not None:
            return iter(self.finder.find_nodes(model))
        return (n for n in model.graph.nodes if self.targets is None or n.target in self.targets)


def table(rules: Sequence[Rule]) -> dict[tuple[Any, ...], Rule]:
    """The support table: each chain of overloads a chain rule matches -> the rule."""
    out: dict[tuple[Any, ...], Rule] = {}
    for rule in rules:
        if rule.kind in ("chain", "shared"):
            for key in itertools.product(*rule.chain):
                out.setdefault(key, rule)
    return out


def large_value(node: Node, model: GraphModule) -> bool:
    """A one-element constant (``large_scalar``) or a ``full`` too large for HistogramObserver."""
    if node.op == "call_function" and node.target in (aten.full.default, aten.fill_.Scalar):
        return abs(float(node.args[1])) > HISTC_UPPER_BOUND  # type: ignore[arg-type]
    return large_scalar(node, model)


def mark(node: Node, inputs: dict[Node, Any], output: Any, quantized: bool) -> None:
    """Annotate ``node`` as ExecuTorch's ``_mark_node_as_quantized`` does, marks included."""
    node.meta[KEY] = QuantizationAnnotation(inputs, output, _annotated=True)
    if node.op == "call_function":
        custom = node.meta.get("custom", {})
        custom[INFO] = {"quantized": quantized}
        node.meta["custom"] = custom
    node.meta[NO_TFA] = not quantized


class Matcher(LongestChains):
    """ExecuTorch's PatternMatcher over a support table (see the module docstring): the
    matcher family's longest chains, with the scheme's checks of a chain (``validate``)."""

    def __init__(
        self,
        rules: dict[tuple[Any, ...], Rule],
        accepts: Callable[[Rule, list[Node], Any], bool] = lambda rule, nodes, config: True,
        checked: bool = False,
        quantizable: frozenset[Any] = frozenset(),
        params: dict[str, Any] | None = None,
    ) -> None:
        self.table, self.accepts, self.checked = rules, accepts, checked
        self.quantizable, self.params = quantizable, params
        self.longest = max((len(k) for k in rules), default=0)

    def validate(self, nodes: list[Node], config: Any) -> Match:
        if any(n.meta.get(MATCHED, False) for n in nodes):
            return Match(nodes, MATCHED_FIRST)
        model = nodes[0].graph.owning_module
        if model is not None and any(large_value(n, model) for n in nodes):
            return Match(nodes, SCALAR)
        rule = self.table.get(tuple(n.target for n in nodes))
        if rule is not None and not all(n.op in ("placeholder", "output") for n in nodes):
            context = Context(nodes, config, self.quantizable, self.params)
            if rule.when and failing(rule.when, context) is not None:
                names = ", ".join(getattr(c, "__name__", "a condition") for c in rule.when)
                why = f"a when: condition ({names}) rules the match out"
                return Match(nodes, Decline(Reason.SKIP, why))
            if self.checked and rule.allows:  # ExecuTorch's checks read both activations
                checked = view(config, "validated")
                checked.input(), checked.output()
            refused = [disallowed(a, config) for a in rule.allows]
            if rule.allows and all(refused):
                return Match(nodes, Decline(Reason.NOT_TRIED, "; ".join(refused)))
            need = required(rule, config)
            if need:
                return Match(nodes, Decline(Reason.NOT_TRIED, need))
            if not self.accepts(rule, nodes, config):
                return Match(nodes, OUTPUT_QSCHEME)
        for n in nodes:
            n.meta[MATCHED] = True
        return Match(nodes)

    def alone(self, node: Node) -> Match:
        """A node's match under a stage whose config is None: marked, unless matched before."""
        if node.meta.get(MATCHED, False):
            return Match([node], MATCHED_FIRST)
        node.meta[MATCHED] = True
        return Match([node])


def _parameter(node: Node, index: int) -> bool:
    """Whether ``node`` is a parameter every user takes as argument ``index`` (weight, bias)."""
    return node.op == "get_attr" and all(
        u.target in PARAMETER_TARGETS and len(u.args) > index and u.args[index] is node
        for u in node.users
    )


def _inputs(node: Node, nodes: list[Node]) -> Iterator[tuple[Node, str]]:
    """The inputs of ``node`` (in the match ``nodes``) that get a spec, each with its role:
    ``weight`` and ``bias`` (parameters), ``input`` (a float activation from outside the match);
    a batch norm's state is not observed."""
    for arg in node.all_input_nodes:
        if not float_out(arg) or any(
            i < len(node.args) and node.args[i] is arg for i in UNOBSERVED.get(node.target, ())
        ):
            continue
        if _parameter(arg, 1):
            yield arg, "weight"
        elif _parameter(arg, 2):
            yield arg, "bias"
        elif arg not in nodes:
            yield arg, "input"


def annotate_match(
    nodes: list[Node], rule: Rule | None, config: Any, shares: set[Any], how: str = "spec"
) -> None:
    """Annotate an accepted match with ``config`` (None: mark it not quantized), read through
    its view (``how``: the spec's ``configs:``). Under ``accessors`` the config's own
    accessors say what each op's inputs and output get (ExecuTorch's Arm QuantizationConfig:
    ``get_input_act_qspec(node, input)`` and the rest); else the rule says (``weight_axis``,
    fixed qparams, shared outputs)."""
    specs, asked = view(config, how), how == "accessors"
    for node in nodes:
        inputs: dict[Node, Any] = {}
        for arg, role in _inputs(node, nodes):
            if not config:
                inputs[arg] = None
            elif role == "weight":
                inputs[arg] = (
                    specs.weight(node) if asked or rule is None else weight_spec(rule, specs)
                )
            elif role == "bias":
                inputs[arg] = specs.bias(node)
            else:
                inputs[arg] = specs.input(node, arg)
        output = None
        if all(u not in nodes for u in node.users) and float_out(node) and config:
            output = specs.output(node) if asked else _output(node, rule, specs, shares)
        mark(node, inputs, output, config is not None)


def _output(node: Node, rule: Rule | None, specs: Any, shares: set[Any]) -> Any:
    """A match's output spec: fixed qparams, its input's (a shared op, or an op after one)."""
    first = node.args[0] if node.args else None
    if node.target in shares and isinstance(first, Node):
        return SharedQuantizationSpec((first, node))
    if isinstance(first, Node) and first.target in shares and first.args:
        if isinstance(first.args[0], Node):
            return SharedQuantizationSpec(first.args[0])
    return specs.output() if rule is None else output_spec(rule, specs)


def share(model: GraphModule, ops: Sequence[Any], fallback: Any = None) -> list[Match]:
    """Give each cluster of connected shared ops not annotated yet one spec (ExecuTorch's
    SharedQspecQuantizer); the clusters, accepted or left float. ``fallback``: the spec of a
    cluster that touches a quantized model input or output but finds no spec around it."""
    out = []
    order = {n: i for i, n in enumerate(model.graph.nodes)}  # once: not once per cluster
    for node in order:
        if node.target in ops and KEY not in node.meta:
            out.append(_cluster(node, ops, order, fallback))
    return out


def _io(node: Node) -> bool:
    return node.op in ("placeholder", "output") and KEY in node.meta


def _uint8(spec: Any) -> bool:
    if isinstance(spec, list):
        return any(_uint8(s) for s in spec)
    return getattr(spec, "dtype", None) == torch.uint8


def _uint8_io(node: Node) -> bool:
    ann = node.meta.get(KEY) if _io(node) else None
    return ann is not None and (
        _uint8(ann.output_qspec) or any(_uint8(s) for s in ann.input_qspec_map.values())
    )


def _gather(root: Node, ops: Sequence[Any]) -> tuple[set[Node], list[Any], bool, bool]:
    """The cluster of shared ops around ``root``, the specs around it (a uint8 model input's
    or output's left out), whether it touches a quantized model input or output, a uint8 one."""
    nodes: set[Node] = set()
    queue, specs, io, io8 = [root], [], False, False
    while queue:
        node = queue.pop(0)
        nodes.add(node)
        # its inputs (their output specs), then its users (their input specs of it)
        for other in [*node.all_input_nodes, *node.users]:
            if other.target in ops and other not in nodes and KEY not in other.meta:
                queue.append(other)
            ann = other.meta.get(KEY)
            spec = None
            if ann is not None:
                spec = ann.input_qspec_map.get(node) if other in node.users else ann.output_qspec
            if spec is not None and not (other.op in ("placeholder", "output") and _uint8(spec)):
                specs.append(spec)
            io, io8 = io or _io(other), io8 or _uint8_io(other)
    return nodes, specs, io, io8


def _cluster(root: Node, ops: Sequence[Any], order: dict[Node, int], fallback: Any = None) -> Match:
    if not _float_inputs(root) and not _float_users(root):
        mark(root, {}, None, True)
        why = "No float inputs nor outputs to annotate"
        return Match([root], Decline(Reason.NOT_A_TENSOR_OP, why))
    nodes, specs, io, io8 = _gather(root, ops)
    if not specs and io and fallback is not None:
        specs = [fallback]
    ordered = sorted(nodes, key=lambda n: order.get(n, 0))
    if io8 and any(n.target in UINT8_IO_BRIDGES for n in nodes):
        why = "Shared-qspec bridge cluster touches uint8 model IO."
        return Match(ordered, Decline(Reason.PRODUCER_FLOAT, why))
    if root.target is torch.ops.higher_order.while_loop and root.meta.get("additional_inputs"):
        if not specs:
            return Match([root], NO_SPEC_AROUND)
        mark(root, dict.fromkeys(_float_inputs(root), specs[0]),
             specs[0] if _float_users(root) else None, True)  # fmt: skip
        return Match([root])
    first = _float_inputs(ordered[0])
    if not specs or not first:
        why = "All inputs and outputs to these nodes are non-quantized."
        return Match(ordered, Decline(Reason.PRODUCER_FLOAT, why))
    spec = SharedQuantizationSpec((first[0], ordered[0]))
    for node in nodes:
        mark(
            node,
            dict.fromkeys(_float_inputs(node), spec),
            spec if _float_users(node) else None,
            True,
        )
    ordered[0].meta[KEY].input_qspec_map[first[0]] = specs[0]
    return Match(ordered)


def _float_inputs(node: Node) -> list[Node]:
    return [n for n in node.all_input_nodes if float_out(n)]


def _float_users(node: Node) -> list[Node]:
    return list(node.users) if float_out(node) else []


class ComposableSpecQuantizer(report.Reports, Quantizer):
    """A torchao Quantizer of ExecuTorch's composable scheme over a spec's rules: stages
    (``add_stage``, ``add_quantizer``, ``set_global_stage``) annotate in order, then the
    shared ops; ``last_matches`` lists every match the last ``annotate`` tried."""

    # Call targets that share like the shared_observer rules but no rule can name.
    shared_targets: Sequence[Any] = ()
    # The spec's configs: accessors and configs: validated (how the config is read: configs()).
    config_accessors = False
    config_validated = False
    # True: annotate with no stage is an error (nothing would be quantized).
    needs_stage = True
    # The Rule fields this base reads (bcfg's table of PT2E keys says the same).
    honours: frozenset[str] = STRUCTURAL | {
        *("weight_axis", "when", "output_qscheme", "given", "weight_qscheme"),
        "activation_qscheme",
    }

    def __init__(self) -> None:
        super().__init__()
        self.select()
        self.stages: list[Any] = []
        self.global_stage: Stage | None = None
        self.last_matches: list[Match] = []
        self.added: dict[Node, str] = {}  # the nodes an added quantizer annotated: its class

    def select(self, **params: Any) -> ComposableSpecQuantizer:
        """This instance's support table: the rules whose ``given`` (constructor parameters
        and values) ``params`` match (``values.selected``)."""
        self.rules = selected(type(self).rules, params)
        self.params = params
        return self

    def chain_ops(self, *firsts: Any) -> list[Any]:
        """The ops of this instance's chain rules that begin with one of ``firsts``, in rule
        order (a stage's ``chains:``: the compiler only checks that some rule begins so)."""
        found = {
            op: None
            for r in self.rules
            if r.kind == "chain" and set(r.chain[0]) & set(firsts)
            for ops in r.chain
            for op in ops
        }
        return list(found)

    def add_stage(
        self,
        config: Any,
        targets: Sequence[Any] | None = None,
        finder: Any = None,
        first: bool = False,
    ) -> ComposableSpecQuantizer:
        rules = self.rules
        if targets is not None:  # a stage sees the nodes calling its targets
            rules = [r for r in rules if any(set(ops) & set(targets) for ops in r.chain)]
        refuse_when_set(self, "add_stage", config, rules)
        self.stages.insert(0 if first else len(self.stages), Stage(config, targets, finder))
        return self

    def add_quantizer(self, quantizer: Quantizer) -> ComposableSpecQuantizer:
        self.stages.insert(0, quantizer)
        return self

    def set_global_stage(self, config: Any) -> ComposableSpecQuantizer:
        refuse_when_set(self, "set_global_stage", config, self.rules)
        self.global_stage = Stage(config)
        return self

    def stage_list(self) -> list[Any]:
        """The stages in the order they annotate: added quantizers and stages, then the global."""
        return self.stages + ([] if self.global_stage is None else [self.global_stage])

    def seen(self, model: GraphModule) -> set[Node]:
        """The nodes some stage sees (an added quantizer's are its own business)."""
        return {n for s in self.stage_list() if isinstance(s, Stage) for n in s.nodes(model)}

    def annotate(self, model: GraphModule) -> GraphModule:
        stages = self.stage_list()
        if not stages and self.needs_stage:
            raise ValueError(
                f"{type(self).__name__} has no stage: add_stage(config, targets=None) says which "
                "config annotates which nodes"
            )
        supported = table(self.rules)
        accept = functools.partial(affine_output, self)  # output_qscheme
        matcher = Matcher(
            supported, accept, self.config_validated, first_ops(self.rules), self.params
        )
        shares = {op for r in self.rules if r.kind == "shared" for op in r.chain[0]}
        self.last_matches, self.added = [], {}
        for index, stage in enumerate(stages, 1):
            if not isinstance(stage, Stage):
                before = {n for n in model.graph.nodes if KEY in n.meta}
                stage.annotate(model)
                self.added.update(
                    (n, type(stage).__name__) for n in model.graph.nodes
                    if n not in before and KEY in n.meta
                )  # fmt: skip
                continue
            label = "global" if stage is self.global_stage else stage.label(index)
            for match in matcher.matches(stage.nodes(model), stage.config):
                rule = supported.get(tuple(n.target for n in match.nodes))
                match.stage, match.config = label, stage.config
                match.rule = rule.name if rule else None
                self.last_matches.append(match)
                if not match.accepted:
                    continue
                annotate_match(match.nodes, rule, stage.config, shares, self.configs())
        propagate = [r for r in self.rules if r.kind == "propagate"]
        ops = [op for r in propagate for op in r.chain[0]] + list(self.shared_targets)
        for match in share(model, ops, self._fallback()):
            owner = next((r.name for r in propagate if match.nodes[0].target in r.chain[0]), None)
            match.stage, match.rule = match_report.SHARED, owner or str(match.nodes[0].target)
            self.last_matches.append(match)
        if self.reporter is not None:
            match_report.publish(model, self)
        return model

    def _fallback(self) -> Any:
        config = None if self.global_stage is None else self.global_stage.config
        if config is None:
            return None
        return view(config, "spec" if self.configs() == "spec" else "validated").input()

    def configs(self) -> str:
        """How the runtime reads a config (``model.view``): the spec's ``configs:``."""
        return (
            "accessors"
            if self.config_accessors
            else "validated" if self.config_validated else "spec"
        )

    # What validate(model) checks: "none", or "one_device" (each op's inputs on one device).
    validation = "none"

    def validate(self, model: GraphModule) -> None:
        """Raise ValueError, as SpecQuantizer does, if a stage's config is one a pattern's
        dtype configs or ``weight_qscheme`` refuse and the match was left float for it."""
        refuse(self, self.problems(), ", and were left float")
        if self.validation == "one_device":
            one_device(model)

    def problems(self) -> list[str]:
        """Why a config the last ``annotate`` tried was refused by a pattern's spec (its
        dtype configs, ``weight_qscheme``), for each match left unannotated for it."""
        out = {
            f"pattern {m.rule}, {m.stage} config: {m.decline.detail}": None
            for m in self.last_matches
            if m.decline is not None
            and m.decline.reason is Reason.NOT_TRIED
            and m.decline is not OUTPUT_QSCHEME
            and KEY not in m.nodes[0].meta
        }
        return list(out)


# --- The spec's checks of a composable quantizer (output_qscheme, validate: one_device). ---


def affine_output(q: ComposableSpecQuantizer, rule: Rule, nodes: list[Node], config: Any) -> bool:
    """``output_qscheme: affine``: the output spec ``config`` gives the match's last op is
    not symmetric (ExecuTorch Arm's ReluFusedPatternCheck)."""
    if rule.output_qscheme != "affine" or config is None:
        return True
    if q.config_accessors:
        spec = view(config, "accessors").output(nodes[-1])
    else:
        spec = output_spec(rule, view(config))
    return spec is not None and getattr(spec, "qscheme", None) not in SYMMETRIC


def one_device(model: GraphModule) -> None:
    """``validate: one_device``: each call's tensor inputs on one device (ExecuTorch's Arm)."""
    for node in model.graph.nodes:
        if node.op != "call_function":
            continue
        devices: set[str] = set()
        for arg in node.all_input_nodes:
            val = arg.meta.get("val")
            for t in val if isinstance(val, (tuple, list)) else [] if val is None else [val]:
                devices.add(str(getattr(t, "device", f"Could not get device from {t}")))
            if len(devices) > 1:
                raise ValueError(
                    f"Quantizer detected operator {node.name} with different device inputs: "
                    f"{devices}."
                )


# --- api: composable: ExecuTorch's composable configuration methods. ---


class ComposableAPI:
    """ExecuTorch's composable configuration API, mixed in before ``ComposableSpecQuantizer``
    by ``api: composable``: each method returns the quantizer and adds a stage ahead of
    those added before it (``set_global``: the stage after all others). Node finders are
    bcfg's (``finders``); ``set_node_finder`` takes any object with ``find_nodes(model)``
    (ExecuTorch's NodeFinders). A config given to a property setter must be an instance of
    ``config_type`` (a dotted path, imported when first checked) or None."""

    config_type: str | None = None
    needs_stage = False  # no stage: nothing is quantized, as ExecuTorch's
    stages: list[Any]
    global_stage: Stage | None
    # ComposableSpecQuantizer's, which this is mixed in before (add_quantizer too).
    add_stage: Callable[..., Any]
    set_global_stage: Callable[[Any], Any]

    def _config(self, config: Any, what: str = "value") -> Any:
        if config is None or self.config_type is None:
            return config
        kind = load_object(self.config_type)
        if not isinstance(config, kind):
            raise TypeError(f"{what} must be {kind.__name__} or None, got {type(config).__name__}.")
        return config

    def set_global(self, quantization_config: Any) -> Any:
        return self.set_global_stage(quantization_config)

    @property
    def global_config(self) -> Any:
        return None if self.global_stage is None else self.global_stage.config

    @global_config.setter
    def global_config(self, value: Any) -> None:
        self.set_global(self._config(value, "global_config value"))

    def set_node_finder(self, quantization_config: Any, node_finder: Any) -> Any:
        return self.add_stage(quantization_config, finder=node_finder, first=True)

    def set_node_target(self, node_target: Any, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.TargetFinder(node_target))

    def set_node_name(self, node_name: str, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.NameFinder(node_name))

    def set_module_type(self, module_type: Any, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.ModuleTypeFinder(module_type))

    def set_module_name(self, module_name: str, quantization_config: Any) -> Any:
        return self.set_node_finder(quantization_config, finders.ModuleNameFinder(module_name))

    def set_io(self, quantization_config: Any) -> Any:
        self.set_node_finder(quantization_config, finders.InputFinder())
        return self.set_node_finder(quantization_config, finders.OutputFinder())

    def _clear(self, *kinds: type) -> None:
        self.stages = [s for s in self.stages if not isinstance(getattr(s, "finder", None), kinds)]

    def _replace(self, name: str, kind: type, value: Any, setter: Any, key: type) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict, got {type(value).__name__}.")
        for k, config in value.items():
            if not (callable(k) if key is type else isinstance(k, key)):
                want = "callable" if key is type else key.__name__
                raise TypeError(f"{name} keys must be {want}, got {type(k).__name__}.")
            self._config(config, f"{name} values")
        self._clear(kind)
        for k, config in value.items():
            setter(k, config)

    def _unreadable(self, name: str) -> Any:
        raise NotImplementedError(f"Composable quantizer does not allow accessing {name}.")

    def _set_io(self, value: Any) -> None:
        self._config(value, "io_config value")
        self._clear(finders.InputFinder, finders.OutputFinder)
        self.set_io(value)

    io_config = property(lambda self: self._unreadable("io_config"), _set_io)
    module_type_config = property(
        lambda self: self._unreadable("module_type_config"),
        lambda self, v: self._replace(
            "module_type_config", finders.ModuleTypeFinder, v, self.set_module_type, type
        ),
    )
    module_name_config = property(
        lambda self: self._unreadable("module_name_config"),
        lambda self, v: self._replace(
            "module_name_config", finders.ModuleNameFinder, v, self.set_module_name, str
        ),
    )
