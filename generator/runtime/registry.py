"""The registry preset (``scopes: registry``): Qualcomm's scheme, a registry of per-op
annotators over a config chosen per node.

A composition of the engine's parts, with no matcher of chains: the registry maps each op
of the spec's patterns to an ``api.Entry`` (its pattern's ``annotate_node`` function,
``fn(node, config)``, and its ``when:`` conditions); ``annotate`` visits the graph's nodes in
order and, for a node calling a registered op and not discarded by name, takes the config
the selector chooses for it (``scopes.Select``, the levels of the spec's ``select:``), asks
the entry's conditions of the node (``model.Context``: a per-node validate; one that fails
leaves it float, declined), and calls the annotator. Each node tried is a ``model.Match``
(``last_matches``) that ``match_report.publish`` explains when reporting is on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import Quantizer

from . import transforms
from .api import Entry
from .conditions import unmet
from .graph import reindex
from .match_report import publish
from .model import Context, Match, first_ops
from .report import Reports
from .scopes import Select
from .values import selected

__all__ = ["RegistryQuantizer"]


class RegistryQuantizer(Reports, Quantizer):
    """A torchao Quantizer annotating node by node, each node by its op's entry, with the
    config its class's ``levels`` (the spec's ``select:``) choose (configured by ``set_node_name``,
    ``set_module_name``, ``set_module_type``, ``add_submodule``, ``set_op_set`` and
    ``set_default``; a level the spec's ``select:`` does not name is refused)."""

    backend = "registry"
    spec = ""
    rules: Sequence[Any] = ()
    levels: tuple[str, ...] = ("default",)
    transforms: Sequence[Any] = ()
    honours = frozenset(
        {"name", "kind", "chain", "weight", "bias", "allows", "when", "annotate_node", "given"}
    )

    def __init__(self) -> None:
        super().__init__()
        self.selection = Select(self.levels)
        self.discard_nodes: set[str] = set()
        self.last_matches: list[Match] = []
        self.added: dict[Node, str] = {}
        self.select()

    def select(self, **params: Any) -> RegistryQuantizer:
        """This instance's registry: the entries of the rules whose ``given`` (constructor
        parameters and values) ``params`` match (``values.selected``; a rule without is in
        every registry), the first rule of an op its entry. The generated constructor calls
        it with the parameters the spec's ``given:`` name (Qualcomm's ``backend``)."""
        self.rules = selected(type(self).rules, params)
        self.params = params
        self.registry: dict[Any, Entry] = {}
        for rule in self.rules:
            for op in rule.chain[0]:
                self.registry.setdefault(op, Entry(rule.annotate_node, rule.when, rule.name))
        return self

    def set_node_name(self, name: str, config: Any) -> RegistryQuantizer:
        self.selection.add("node_name", name, config)
        return self

    def set_module_name(self, name: str, config: Any) -> RegistryQuantizer:
        self.selection.add("module_name", name, config)
        return self

    def set_module_type(self, module_type: Any, config: Any) -> RegistryQuantizer:
        self.selection.add("module_type", module_type, config)
        return self

    def add_submodule(self, predicate: Callable[[Node], bool], config: Any) -> RegistryQuantizer:
        self.selection.add("submodule", predicate, config)
        return self

    def set_op_set(self, ops: Any, config: Any) -> RegistryQuantizer:
        self.selection.add("op_set", ops, config)
        return self

    def set_default(self, config: Any) -> RegistryQuantizer:
        self.selection.set("default", [(None, config)])
        return self

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        return transforms.run(self.transforms, model)

    def annotate(self, model: GraphModule) -> GraphModule:
        reindex(model)
        self.last_matches, quantizable = [], first_ops(self.rules)
        for node in model.graph.nodes:
            if node.op != "call_function" or node.name in self.discard_nodes:
                continue
            entry = self.registry.get(node.target)
            scope = None if entry is None else self.selection.choose(node)
            if entry is None or scope is None:
                continue
            config = scope.config  # None: left float on purpose (the report says so)
            why = None
            if entry.when and config is not None:
                why = unmet(entry.when, Context([node], config, quantizable, self.params))
            self.last_matches.append(Match([node], why, scope.label, config, entry.name))
            if why is None and config is not None:
                entry.annotate_fn(node, config)
        if self.reporter is not None:
            publish(model, self)
        return model

    def seen(self, model: GraphModule) -> set[Node]:
        """The nodes of registered ops the selector gives a config."""
        ops = [
            n for n in model.graph.nodes if n.op == "call_function" and n.target in self.registry
        ]
        return {n for n in ops if (s := self.selection.choose(n)) and s.config}

    def validate(self, model: GraphModule) -> None:
        pass
