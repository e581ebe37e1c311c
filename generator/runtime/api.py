"""The hooks API of bcfg's PT2E runtime (``API_VERSION``): what a spec's Python hooks may
read and call. A hook reads nothing else of the runtime: not its classes, not its meta keys.

One signature per hook kind (the key that names it):

* condition (``when:``, ``weights_only_when:``): ``fn(match) -> bool``, ``match`` a
  ``Context`` (exported here, for a mixin that asks a rule's conditions itself) (``node``, ``nodes``, ``config``, ``quantizable``, ``params``,
  ``model``; ``layout(tensor, check)``: a layout check, memoized). A condition does
  not change the graph, but for meta, through its slot: ``match.tag(node, *path,
  value=True)`` (Cortex-M's ``tag_unlowerable_pool``); no hook writes ``node.meta`` of a
  condition's match itself.
* skip predicate (``skip:``): ``fn(node, model) -> bool``, of an activation input.
* annotate function (``annotate:``): ``fn(model, config, accept) -> bool``.
* transform (``transform:``): ``fn(model) -> model``.
* weights function (``weights:``): ``fn(node, config) -> [(node, argument, spec)]``.
* node annotator (``annotate_node:``, ``scopes: registry``): ``fn(node, config)``, an op's
  entry of the registry; a mixin registers more ops as ``self.registry[op] =
  self.api.Entry(fn)``.
* class mixin (``classes:``): methods of the generated class; ``self.api`` is this module
  (of the runtime copy the class runs on), and the functions below are how a mixin touches
  the marks the runtime leaves on a graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torch.fx import GraphModule

from .model import Context
from .values import KEY

__all__ = ["API_VERSION", "Context", "Entry", "forget_marks", "keep_unmarked"]

API_VERSION = 1

# The meta keys of ExecuTorch's composable scheme (the runtime's to write and read).
MATCHED = "quantizer_matched"  # ExecuTorch's PatternMatcher.Q_PATTERN_MATCHED_KEY
INFO = "_arm_annotation_info"  # ArmAnnotationInfo.CUSTOM_META_KEY
NO_TFA = "_arm_disallow_tfa"  # DISALLOW_TFA_META_KEY


@dataclass
class Entry:
    """An op's entry of a registry quantizer (``scopes: registry``): its annotator
    ``annotate_fn(node, config)``, the conditions a node meets first (``when:``) and the name
    of its pattern."""

    annotate_fn: Callable[..., Any]
    when: Sequence[Callable[..., bool]] = ()
    name: str = ""


def keep_unmarked(model: GraphModule) -> None:
    """Mark every node an annotate did not mark as one ExecuTorch's transforms for
    annotation leave alone (``DISALLOW_TFA``): they rewrite the quantized ops only."""
    for node in model.graph.nodes:
        node.meta.setdefault(NO_TFA, True)


def forget_marks(model: GraphModule) -> None:
    """Drop what an annotate left on every node (annotations and marks), so that the graph
    is annotated afresh."""
    for node in model.graph.nodes:
        for key in (KEY, INFO, NO_TFA, MATCHED):
            node.meta.pop(key, None)
