"""Getters: which elements of a matched pattern a ``root_node_getter`` or ``extra_inputs_getter`` picks.

torch's getters only pick elements of the pattern (``pattern[1][0]``), which
the language writes as such; ``bcfg import`` and ``bcfg diff --configs`` find
out which by calling a getter on a pattern of sentinels.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any


class _Node:
    """A sentinel standing for one element of a matched pattern."""

    __slots__ = ("path",)

    def __init__(self, path: tuple[int, ...]):
        self.path = path


def pick_paths(fn: Callable, reversed_pattern: Any, many: bool) -> Any:
    """If ``fn`` returns elements of the pattern (one, or a list), their index paths; else None."""

    where: dict[int, tuple[int, ...]] = {}

    def sentinels(p: Any, path: tuple[int, ...]) -> Any:
        if isinstance(p, tuple):
            node: Any = tuple(sentinels(x, path + (j,)) for j, x in enumerate(p))
        else:
            node = _Node(path)
        where[id(node)] = path
        return node

    nodes = sentinels(reversed_pattern, ())
    keep = [nodes]  # noqa: F841  (keeps every sentinel alive while ids are compared)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(nodes)
    except Exception:  # noqa: BLE001  (a getter that needs real nodes is no picker)
        return None
    if many:
        if type(result) is not list or not all(id(x) in where for x in result):
            return None
        return tuple(where[id(x)] for x in result)
    return where.get(id(result))
