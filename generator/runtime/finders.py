"""bcfg's node finders: which nodes a stage of a composable quantizer sees.

Each has ``find_nodes(model)``, as ExecuTorch's NodeFinders (which a stage takes as
they are: any object with that method); ``ComposableAPI``'s configuration methods
build these (``set_node_target``, ``set_node_name``, ``set_module_type``,
``set_module_name``, ``set_io``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer.utils import get_module_name_filter

from .scopes import module_type_filter

__all__ = [
    "InputFinder", "ModuleNameFinder", "ModuleTypeFinder", "NameFinder", "OutputFinder",
    "TargetFinder",
]  # fmt: skip


def _listed(item: Any) -> list[Any]:
    return list(item) if isinstance(item, (list, tuple, set)) else [item]


class Finder:
    """The nodes of a model for which ``test`` holds, in graph order."""

    what = ""

    def test(self, node: Node) -> bool:
        raise NotImplementedError

    def find_nodes(self, model: GraphModule) -> Iterator[Node]:
        return (n for n in model.graph.nodes if self.test(n))

    def __repr__(self) -> str:
        return f"{type(self).__name__} targeting {self.what}"


class InputFinder(Finder):
    what = "all placeholder nodes"

    def test(self, node: Node) -> bool:
        return node.op == "placeholder"


class OutputFinder(Finder):
    what = "the output node"

    def test(self, node: Node) -> bool:
        return node.op == "output"


class TargetFinder(Finder):
    """Nodes calling one of ``targets`` (an op or a list)."""

    def __init__(self, targets: Any) -> None:
        self.targets = _listed(targets)
        self.what = "node targets: " + ", ".join(str(t) for t in self.targets)

    def test(self, node: Node) -> bool:
        return node.target in self.targets


class NameFinder(Finder):
    """Nodes named one of ``names``."""

    def __init__(self, names: Any) -> None:
        self.names = _listed(names)
        self.what = "names: " + ", ".join(self.names)

    def test(self, node: Node) -> bool:
        return node.name in self.names


class ModuleTypeFinder(Finder):
    """Nodes from a module of one of ``types`` (exactly, by the node's module stack)."""

    def __init__(self, types: Any) -> None:
        self.types = _listed(types)
        self.filters = [module_type_filter(t) for t in self.types]
        self.what = "module types: " + ", ".join(t.__name__ for t in self.types)

    def test(self, node: Node) -> bool:
        return any(f(node) for f in self.filters)


class ModuleNameFinder(Finder):
    """Nodes from a module named one of ``names`` or inside one (torchao's module-name filter)."""

    def __init__(self, names: Any) -> None:
        self.names = _listed(names)
        self.filters = [get_module_name_filter(n) for n in self.names]
        self.what = "module names: " + ", ".join(self.names)

    def test(self, node: Node) -> bool:
        return any(f(node) for f in self.filters)
