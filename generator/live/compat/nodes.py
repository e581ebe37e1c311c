"""Verdicts on a model: for each node of the traced graph, will prepare_fx quantize it, and why not.

The front half of ``prepare`` is torch's own (trace, fuse, QConfig updates and
propagation, ``_generate_node_name_to_qconfig``, ``_find_matches``, target
dtypes); the support check is ``observers``' restatement with reasons. As in
prepare (torch 2.13, ``insert_observers_for_model``):

1. every node of a match gets target dtypes from the QConfig of the match's
   output node (the first one processed);
2. each node's check uses those dtypes and its own QConfig's constraints; a
   pattern that fails for any of its nodes is reset to float;
3. the check is made again after the reset, and a node whose QConfig is not
   None and passes adds its whole match to ``observed_node_names``.

A pattern can pass the second check against a float dtype config (weight-only
embeddings): torch then lists it as observed although nothing is quantized,
so "honoured" is the first check, not membership of ``observed_node_names``.
``truth`` compares the predicted set with a real prepare_fx.
"""

from __future__ import annotations

import copy
import importlib
import warnings
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.ao.nn.intrinsic import _FusedModule
from torch.ao.quantization import QConfigMapping
from torch.ao.quantization.backend_config import BackendConfig
from torch.ao.quantization.backend_config.utils import (
    get_fusion_pattern_to_root_node_getter,
    get_module_to_qat_module,
)
from torch.ao.quantization.fx.custom_config import FuseCustomConfig
from torch.ao.quantization.fx.match_utils import _find_matches
from torch.ao.quantization.fx.pattern_utils import _sorted_patterns_dict
from torch.ao.quantization.fx.qconfig_mapping_utils import (
    _generate_node_name_to_qconfig,
    _get_flattened_qconfig_dict,
    _update_qconfig_for_fusion,
    _update_qconfig_for_qat,
)
from torch.ao.quantization.fx.quantize_handler import (
    _default_root_node_getter,
    _get_pattern_to_quantize_handlers,
)
from torch.ao.quantization.fx.tracer import QuantizationTracer
from torch.ao.quantization.fx.utils import (
    all_node_args_have_no_tensors,
    node_arg_is_bias,
    node_arg_is_weight,
)
from torch.ao.quantization.qconfig import _default_fp32_placeholder_qconfig
from torch.ao.quantization.quantize import propagate_qconfig_
from torch.ao.quantization.quantize_fx import (
    _attach_meta_to_node_if_not_exist,
    _fuse_fx,
    _swap_ff_with_fxff,
)
from torch.fx import GraphModule, Node

from .backend import BackendIndex, after_prepare
from .mapping import NodeSources
from .names import object_text
from .observers import Args, Observers, Targets, dtype_config_failures
from .suggest import qconfig_text, rejected
from .verdict import Failure, Status, Verdict

# ``torch.ao.quantization.fx.prepare`` the module (the package re-exports a function of that name).
PREPARE = importlib.import_module("torch.ao.quantization.fx.prepare")
CALLS = ("call_module", "call_method", "call_function")


class Disagreement(Exception):
    """The analysis and torch disagree: a bug in bcfg (or a torch it does not know)."""


@dataclass
class Match:
    """One entry of ``_find_matches``, with the QConfig torch gives its node."""

    last: Node
    nodes: Any  # the matched node pattern (nested tuples of nodes)
    pattern: Any  # the backend's reversed nested pattern
    handler: Any
    qconfig: Any


@dataclass
class Traced:
    """The model as prepare sees it before inserting observers."""

    graph: GraphModule
    modules: dict[str, torch.nn.Module]
    mapping: QConfigMapping  # after prepare's fusion and QAT updates
    scopes: dict[str, tuple[str, Any]]
    qconfigs: dict[str, Any]  # node name -> QConfig, as torch computes it
    matches: dict[str, Match]


def trace(
    model: torch.nn.Module, mapping: QConfigMapping, bc: BackendConfig, is_qat: bool
) -> Traced:
    """``_prepare_fx`` and ``prepare`` up to the matches, on copies; raises what they raise."""
    model = copy.deepcopy(model)
    _swap_ff_with_fxff(model)
    tracer = QuantizationTracer([], [])
    graph = GraphModule(model, tracer.trace(model))
    _attach_meta_to_node_if_not_exist(graph)
    graph = _fuse_fx(graph, is_qat, FuseCustomConfig(), bc)
    mapping = copy.deepcopy(mapping)
    patterns = _sorted_patterns_dict(_get_pattern_to_quantize_handlers(bc))
    getters = get_fusion_pattern_to_root_node_getter(bc)
    _update_qconfig_for_fusion(graph, mapping)
    propagate_qconfig_(graph, _get_flattened_qconfig_dict(mapping), {})
    if is_qat:
        PREPARE._qat_swap_modules(graph, get_module_to_qat_module(bc))
        _update_qconfig_for_qat(mapping, bc)
    modules = dict(graph.named_modules(remove_duplicate=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qconfigs = _generate_node_name_to_qconfig(
            graph, modules, graph.graph, mapping, tracer.node_name_to_scope
        )
    found = _find_matches(graph.graph, modules, patterns, getters)
    matches = {name: Match(*entry, qconfigs[name]) for name, entry in found.items()}
    return Traced(graph, modules, mapping, tracer.node_name_to_scope, qconfigs, matches)


class NodeJudge:
    """Predicts prepare's decisions for every node of a traced model, with reasons."""

    def __init__(self, traced: Traced, index: BackendIndex, is_qat: bool) -> None:
        self.t = traced
        self.index = index
        self.is_qat = is_qat
        self.observers = Observers()
        self.getters = get_fusion_pattern_to_root_node_getter(index.config)
        self.no_tensors: dict[Node, bool] = {}
        self.sources: dict[str, tuple[Any, str | None]] = {}
        self.initial: dict[str, list[list[Failure]]] = {}
        self.kinds: dict[str, Args] = {}
        self.governors: dict[int, str] = {}  # id of a match's nodes -> its output node's name
        self.observed: set[str] = set()
        # Nodes no pattern quantizes that convert_fx runs on the quantized outputs of others
        # (``lowering``, read from the real prepare's observers).
        self.lowered: dict[str, list[str]] = {}

    # ------------------------------------------------------------- prediction

    def predict(self) -> None:
        """Steps 1-4 of prepare, without observers; fills ``initial`` and ``observed``."""
        self._sources()
        self._set_targets()
        mismatched = []
        for name, match in self.t.matches.items():
            self.governors.setdefault(id(match.nodes), name)
            self.kinds[name] = self._inputs(match)[1]
            self.initial[name] = self._failures(match, match.qconfig)
            if _fits(self.initial[name]) != self._torch_supported(match):
                mismatched.append(name)
        if mismatched:
            raise Disagreement(
                f"the support check disagrees with torch's on {', '.join(mismatched)}"
            )
        processed: set[Node] = set()
        for name, match in self.t.matches.items():
            if not _fits(self.initial[name]):
                self._set_pattern(match, _default_fp32_placeholder_qconfig, None, processed)
        for node in self.t.graph.graph.nodes:
            found = self.t.matches.get(node.name)
            if node.op not in CALLS or found is None or found.qconfig is None:
                continue
            if _fits(self._failures(found, found.qconfig)):
                self.observed.update(n.name for n in _flat(found.nodes) if isinstance(n, Node))

    def _sources(self) -> None:
        sources = NodeSources(self.t.mapping, self.t.modules, self.t.scopes)
        for node in self.t.graph.graph.nodes:
            if node.op == "call_module" and _is_observer(self.t.modules[str(node.target)]):
                continue
            qconfig, source = sources(node)
            if node.op in CALLS and qconfig_text(qconfig) != qconfig_text(
                self.t.qconfigs[node.name]
            ):
                raise Disagreement(f"the QConfig of node {node.name} is not the one torch gives it")
            self.sources[node.name] = (qconfig, source)

    def _set_targets(self) -> None:
        """Steps 1, 2.1 and 2.2: target dtypes from the matches, then nodes without Tensors."""
        for node in self.t.graph.graph.nodes:
            node.meta["target_dtype_info"] = copy.copy(
                PREPARE._DEFAULT_FP32_QCONFIG_FOR_TARGET_DTYPE_INFO
            )
        processed: set[Node] = set()
        for match in self.t.matches.values():
            self._set_pattern(match, match.qconfig, match.handler, processed)
        for node in self.t.graph.graph.nodes:
            if node.op in CALLS and self._has_no_tensors(node):
                node.meta["target_dtype_info"] = {
                    "input_act_obs_or_fq_ctr": None,
                    "output_act_obs_or_fq_ctr": None,
                }
        raw = {
            k: (m.last, m.nodes, m.pattern, m.handler, m.qconfig) for k, m in self.t.matches.items()
        }
        PREPARE.propagate_dtypes_for_known_nodes(self.t.graph.graph, raw)

    def _set_pattern(self, match: Match, qconfig: Any, handler: Any, processed: set[Node]) -> None:
        PREPARE._set_target_dtype_info_for_matched_node_pattern(
            match.nodes,
            match.last,
            qconfig,
            handler,
            self.index.config,
            self.t.modules,
            self.no_tensors,
            processed,
        )

    def _has_no_tensors(self, node: Node) -> bool:
        return bool(all_node_args_have_no_tensors(node, self.t.modules, self.no_tensors))

    def _failures(self, match: Match, qconfig: Any) -> list[list[Failure]]:
        """Per dtype config of the matched pattern, why it does not fit (an empty list: it fits)."""
        targets, kinds = self._inputs(match)
        return [
            dtype_config_failures(dc, qconfig, targets, kinds, self.observers)
            for dc in self.index.dtype_configs(match.pattern)
        ]

    def _inputs(self, match: Match) -> tuple[Targets, Args]:
        """What the check compares: the target dtypes of root and output, and the root's inputs."""
        root = self.getters.get(match.pattern, _default_root_node_getter)(match.nodes)
        output = _flat_first(match.nodes)
        info_in, info_out = root.meta["target_dtype_info"], output.meta["target_dtype_info"]
        args = [a for a in _flat((*root.args, *root.kwargs.values())) if isinstance(a, Node)]
        weight = [node_arg_is_weight(root, a) for a in args]
        bias = [node_arg_is_bias(root, a) for a in args]
        kinds = Args(
            activation=any(not w and not b for w, b in zip(weight, bias)),
            weight=any(weight),
            bias=any(bias),
        )
        targets = Targets(
            info_in.get("input_act_obs_or_fq_ctr"),
            info_out.get("output_act_obs_or_fq_ctr", PREPARE._DEFAULT_FP32_OBS_OR_FQ_CTR),
            info_in.get("weight_obs_or_fq_ctr"),
            info_in.get("bias_obs_or_fq_ctr"),
        )
        return targets, kinds

    def _torch_supported(self, match: Match) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(
                PREPARE._is_pattern_dtype_config_and_qconfig_supported_by_backend(
                    match.pattern, match.nodes, match.qconfig, self.index.config
                )
            )

    # --------------------------------------------------------------- verdicts

    def verdicts(self) -> list[Verdict]:
        """One verdict per call node, in graph order."""
        return [
            self._verdict(n)
            for n in self.t.graph.graph.nodes
            if n.op in CALLS and not self._hidden(n)
        ]

    def _hidden(self, node: Node) -> bool:
        return node.op == "call_module" and _is_observer(self.t.modules[str(node.target)])

    def _verdict(self, node: Node) -> Verdict:
        qconfig, source = self.sources.get(node.name, (None, None))
        match = self.t.matches.get(node.name)
        base: dict[str, Any] = {
            "node": node.name,
            "op": f"{node.op} {_target_text(node)}",
            "source": source,
            "qconfig": qconfig_text(qconfig),
        }
        if match is None:
            if self._has_no_tensors(node):
                return Verdict(None, Status.NOT_A_TENSOR_OP, _NO_TENSORS, **base)
            inputs = self.lowered.get(node.name)
            if inputs:
                reason = _LOWERED.format(inputs=", ".join(inputs), op=_target_text(node))
                return Verdict(None, Status.QUANTIZED_AT_CONVERT, reason, **base)
            return Verdict(None, Status.NO_PATTERN, _NO_PATTERN, **base)
        base["config"] = self.index.position.get(match.pattern)
        label = self.index.label(base["config"]) if base["config"] is not None else None
        early = self._early(node, match, source)
        if early is not None:
            return Verdict(label, early[0], early[1], **base)
        return self._checked(node, match, label, qconfig, base)

    def _early(self, node: Node, match: Match, source: str | None) -> tuple[Status, str] | None:
        if match.qconfig is None:
            return Status.SKIPPED, f"{source} gives it the QConfig None"
        if self._has_no_tensors(node):
            return Status.NOT_A_TENSOR_OP, _NO_TENSORS
        if not self.index.dtype_configs(match.pattern):
            return (
                Status.NO_DTYPE_CONFIGS,
                "the pattern config has no dtype configs: torch never quantizes it",
            )
        governor = self.governors[id(match.nodes)]
        if governor != node.name:
            gov = self.t.matches[governor]
            if gov.qconfig is None:
                return Status.IN_PATTERN, f"the match's output node {governor} has the QConfig None"
            if not _fits(self.initial[governor]):
                return Status.IN_PATTERN, f"the match's output node {governor} is not quantized"
        return None

    def _checked(
        self, node: Node, match: Match, label: str | None, qconfig: Any, base: dict[str, Any]
    ) -> Verdict:
        failures = self.initial[node.name]
        fits = next((k for k, f in enumerate(failures) if not f), None)
        if fits is None:
            return self._rejected(node, match, label, qconfig, failures, base)
        if node.name not in self.observed:
            others = [
                n.name for n in _flat(match.nodes) if isinstance(n, Node) and n.name in self.initial
            ]
            bad = [n for n in others if not _fits(self.initial[n])]
            why = f"{', '.join(bad)} of the same match" if bad else "another node of the match"
            return Verdict(
                label,
                Status.IN_PATTERN,
                f"torch reset the match to float: {why} is not supported",
                **base,
            )
        concern = self._after_prepare(node, match)
        if concern is not None:
            return Verdict(label, concern[0], concern[1], fits=fits, **base)
        count = len(failures)
        reason = f"the QConfig from {base['source']} fits dtype config {fits + 1} of {count}"
        return Verdict(label, Status.HONOURED, reason, fits=fits, **base)

    def _after_prepare(self, node: Node, match: Match) -> tuple[Status, str] | None:
        if node.op != "call_module":
            return None
        module = self.t.modules[str(node.target)]
        parts = (
            tuple(type(m) for m in module._modules.values())
            if isinstance(module, _FusedModule)
            else ()
        )
        return after_prepare(
            self.index, type(module), parts, match.qconfig, self.is_qat, self.observers
        )

    def _rejected(
        self,
        node: Node,
        match: Match,
        label: str | None,
        qconfig: Any,
        failures: list[list[Failure]],
        base: dict[str, Any],
    ) -> Verdict:
        kinds = replace(self.kinds[node.name], activation=True)
        notes: tuple[str, ...] = ()
        if node.name in self.observed:
            notes = (
                "torch still lists it in observed_node_names: after the reset to float a float dtype "
                "config fits, but nothing is quantized",
            )
        dcs = self.index.dtype_configs(match.pattern)
        return rejected(
            label, qconfig, dcs, failures, kinds, self.is_qat, False, notes=notes, **base
        )


def _fits(failures: list[list[Failure]]) -> bool:
    """Some dtype config fits (torch tries them in order and takes the first that does)."""
    return any(not f for f in failures)


_NO_PATTERN = "no pattern config of the backend matches it: it stays float"
_LOWERED = (
    "no pattern config of the backend matches it, but it runs on the quantized output of "
    "{inputs}: convert_fx lowers {op} to work on quantized tensors (the scale and zero point "
    "are its input's); convert_to_reference_fx keeps it float, between a dequantize and a "
    "quantize"
)
_NO_TENSORS = "its inputs hold no Tensor (x.size(), x.shape): FX never quantizes it"


def _is_observer(module: torch.nn.Module) -> bool:
    from torch.ao.quantization.observer import _is_activation_post_process

    return bool(_is_activation_post_process(module))


def _flat(x: Any) -> list[Any]:
    """Nodes (and other leaves) of nested tuples and lists, in order."""
    if isinstance(x, (list, tuple)):
        return [y for item in x for y in _flat(item)]
    return [x]


def _flat_first(x: Any) -> Any:
    while isinstance(x, (list, tuple)):
        x = x[0]
    return x


def _target_text(node: Node) -> str:
    if node.op == "call_module":
        return str(node.target)
    return object_text(node.target) if node.op == "call_function" else f'"{node.target}"'
