"""Which QConfig a QConfigMapping gives an op, and which of its entries decided.

Restates ``_generate_node_name_to_qconfig`` (torch 2.13,
``fx/qconfig_mapping_utils.py``), saying where each QConfig came from. Per node
kind, later entries win:

* ``call_module``: global, object_type[type], the first matching regex,
  module_name (the module or a parent), module_name_object_type_order;
* ``call_function``: global, object_type[function], object_type[type of the
  enclosing module], regex and module_name of the enclosing module, order;
* ``call_method``: global, object_type[method], regex and module_name of the
  enclosing module, object_type[enclosing type], regex and module_name again.

Before that, prepare copies object_type entries to fused module types
(``_update_qconfig_for_fusion``: an error if the parts' entries differ) and,
for QAT, to the QAT classes (``_update_qconfig_for_qat``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import torch
from torch.ao.quantization import QConfigMapping
from torch.ao.quantization.backend_config import BackendConfig
from torch.ao.quantization.backend_config.utils import get_module_to_qat_module
from torch.ao.quantization.qconfig import qconfig_equals
from torch.ao.quantization.utils import _parent_name

from .names import object_text


@dataclass
class Resolved:
    """The object_type table prepare works with, and where each entry came from."""

    object_types: dict[Any, Any]
    origin: dict[Any, str]
    fusion_errors: dict[type, str] = field(default_factory=dict)


def resolve_object_types(
    mapping: QConfigMapping,
    backend_config: BackendConfig,
    is_qat: bool,
    fused_parts: dict[type, tuple[type, ...]],
) -> Resolved:
    """object_type after prepare's fusion and QAT updates, without a model.

    ``fused_parts`` maps each fused module type the backend's fusers build to
    the types of its parts, in order.
    """
    types = dict(mapping.object_type_qconfigs)
    origin = {k: f"object_type[{object_text(k)}]" for k in types}
    errors: dict[type, str] = {}
    if types:  # torch updates nothing when object_type is empty
        for fused, parts in fused_parts.items():
            first = types.get(parts[0])
            odd = [p for p in parts[1:] if not qconfig_equals(types.get(p), first)]
            if odd:
                errors[fused] = (
                    f"object_type gives {object_text(parts[0])} and {object_text(odd[0])} different "
                    f"QConfigs, so prepare_fx raises LookupError on any fused {object_text(fused)}"
                )
            elif first is not None:
                types[fused] = first
                origin[fused] = f"{origin[parts[0]]} (copied to the fused {object_text(fused)})"
    if is_qat:
        for float_type, qat_type in get_module_to_qat_module(backend_config).items():
            if float_type in types:
                types[qat_type] = types[float_type]
                origin[qat_type] = f"{origin[float_type]} (copied to {object_text(qat_type)})"
    return Resolved(types, origin, errors)


def qconfig_for_op(mapping: QConfigMapping, resolved: Resolved, op: Any) -> tuple[Any, str]:
    """The QConfig an op gets from global and object_type alone, and the entry that gave it."""
    if op in resolved.object_types:
        return resolved.object_types[op], resolved.origin[op]
    return mapping.global_qconfig, "global"


def possible_overrides(mapping: QConfigMapping, op: Any) -> tuple[str, ...]:
    """Mapping entries that may give single ops of this kind another QConfig (only a model tells)."""
    out = [f"module_name_regex[{rx!r}]" for rx in mapping.module_name_regex_qconfigs]
    out += [f"module_name[{name!r}]" for name in mapping.module_name_qconfigs]
    for (path, kind, index), _ in mapping.module_name_object_type_order_qconfigs.items():
        if kind is op:
            out.append(f"module_name_object_type_order[({path!r}, {object_text(kind)}, {index})]")
    if not _is_module_class(op):  # functions and methods take an enclosing module's entry
        out += [
            f"object_type[{object_text(k)}] (an enclosing module)"
            for k in mapping.object_type_qconfigs
            if _is_module_class(k) and not _is_leaf(k)
        ]
    return tuple(out)


def _is_module_class(obj: Any) -> TypeGuard[type[torch.nn.Module]]:
    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def _is_leaf(cls: type) -> bool:
    """``QuantizationTracer.is_leaf_module``: torch's modules but Sequential are not traced through."""
    module = cls.__module__
    return (module.startswith("torch.nn") or module.startswith("torch.ao.nn")) and not issubclass(
        cls, torch.nn.Sequential
    )


class NodeSources:
    """Which entry of the mapping gives each node of a traced model its QConfig.

    Feed nodes in graph order (the module_name_object_type_order counters
    depend on it). ``mapping`` is the one prepare uses, after its updates.
    """

    def __init__(
        self,
        mapping: QConfigMapping,
        modules: dict[str, torch.nn.Module],
        scopes: dict[str, tuple[str, Any]],
    ) -> None:
        self.mapping = mapping
        self.modules = modules
        self.scopes = scopes
        self._counts: dict[str, dict[Any, int]] = {}

    def __call__(self, node: torch.fx.Node) -> tuple[Any, str | None]:
        found: tuple[Any, str | None] = (self.mapping.global_qconfig, "global")
        if node.op == "get_attr":
            path, _ = _parent_name(str(node.target))
            return self._type_or_name(type(self.modules[path]), path, found)
        if node.op == "call_function":
            if node.target in self.mapping.object_type_qconfigs:
                found = self._object_type(node.target)
            path, scope_type = self.scopes[node.name]
            found = self._type_or_name(scope_type, path, found)
            return self._order(path, node.target, found)
        if node.op == "call_method":
            path, scope_type = self.scopes[node.name]
            found = self._type_or_name(node.target, path, found)
            return self._type_or_name(scope_type, path, found)
        if node.op == "call_module":
            target = str(node.target)
            found = self._type_or_name(type(self.modules[target]), target, found)
            path, scope_type = self.scopes[node.name]
            return self._order(_parent_name(path)[0], scope_type, found)
        return None, None

    def _object_type(self, key: Any) -> tuple[Any, str]:
        return self.mapping.object_type_qconfigs[key], f"object_type[{object_text(key)}]"

    def _type_or_name(
        self, kind: Any, path: str, found: tuple[Any, str | None]
    ) -> tuple[Any, str | None]:
        """object_type, then the first regex that matches, then module_name (walking up)."""
        if kind in self.mapping.object_type_qconfigs:
            found = self._object_type(kind)
        for rx, qconfig in self.mapping.module_name_regex_qconfigs.items():
            if re.match(rx, path):
                found = (qconfig, f"module_name_regex[{rx!r}]")
                break
        name = path
        while name != "":
            if name in self.mapping.module_name_qconfigs:
                return self.mapping.module_name_qconfigs[name], f"module_name[{name!r}]"
            name, _ = _parent_name(name)
        return found

    def _order(self, path: str, kind: Any, found: tuple[Any, str | None]) -> tuple[Any, str | None]:
        counts = self._counts.setdefault(path, {})
        index = counts.get(kind, 0)
        counts[kind] = index + 1
        key = (path, kind, index)
        table = self.mapping.module_name_object_type_order_qconfigs
        if key in table:
            text = f"module_name_object_type_order[({path!r}, {object_text(kind)}, {index})]"
            return table[key], text
        return found


def copied(mapping: QConfigMapping) -> QConfigMapping:
    """A deep copy: prepare changes the mapping it is given, and so would the analysis."""
    return copy.deepcopy(mapping)
