"""Load what ``bcfg compare`` and the PT2E import compare: quantizers and models.

A quantizer is ``MODULE:FUNCTION`` (called without arguments, returning a
ready torchao ``Quantizer``) or the name of a backend of the project's specs
(its generated quantizer, rendered into a scratch package; ``--config``
configures it as ``bcfg compat`` does). Models are ``MODULE:FUNCTION`` returning
``(model, example_inputs)``, a list of such pairs, or a dict of them by name.
Every failure of the user's code is an ``ImportFailure`` of one line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...live.targets import ImportFailure, call_function, find_function
from .engine import Graph


def is_quantizer(obj: Any) -> bool:
    """A PT2E quantizer: an instance of a class deriving from a ``Quantizer`` (torchao's, or
    a copy), with ``annotate``."""
    return (
        not isinstance(obj, type)
        and callable(getattr(obj, "annotate", None))
        and any(c.__name__ == "Quantizer" for c in type(obj).__mro__)
    )


def _kind(value: Any) -> str:
    if isinstance(value, type):
        return f"the class {value.__name__}"
    return "None" if value is None else type(value).__name__


def load_quantizer(target: str) -> Any:
    """The quantizer ``MODULE:FUNCTION`` returns."""
    result = call_function(target, find_function(target))
    if not is_quantizer(result):
        hint = " (call it: return an instance)" if isinstance(result, type) else ""
        raise ImportFailure(
            f"{target}() returned {_kind(result)}, not a PT2E quantizer "
            f"(an instance of a torchao Quantizer){hint}"
        )
    return result


def generated_quantizer(name: str, root: Path, config: str | None) -> Any:
    """The generated quantizer of backend ``name`` of the project's specs (built into a scratch
    package under ``root``), configured by ``config`` (``MODULE:FUNCTION``) if given."""
    from ...cli import UsageError
    from ...config import find_project
    from ...live.compat.pt2e import build_quantizer, configure
    from ...pipeline import analyze_project, paused_gc

    project = find_project()
    with paused_gc():
        analysis = analyze_project(project)
    quantizer = next((q for q in analysis.quantizers if q.module == name), None)
    if quantizer is None:
        names = sorted(q.module for q in analysis.quantizers)
        raise UsageError(
            f"'{name}' is neither MODULE:FUNCTION nor a backend with a PT2E quantizer "
            f"(those of the project: {', '.join(names) or 'none'})"
        )
    getter = build_quantizer(quantizer, root)
    q = getter()
    if config is not None:
        q, _how = configure(q, config, find_function(config))  # how: compat's report line
    return q


def load_models(target: str) -> list[Graph]:
    """The user's models: one ``(model, example_inputs)`` pair, a list of them or a dict."""
    import torch

    result = call_function(target, find_function(target))
    expected = "(model, example_inputs) pairs: a pair, a list of pairs or a dict of them by name"
    if isinstance(result, dict):
        items = [(str(k), v) for k, v in result.items()]
    elif isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module):
        items = [(target.partition(":")[2], result)]
    elif isinstance(result, (list, tuple)):
        items = [(f"{target.partition(':')[2]}[{i}]", v) for i, v in enumerate(result)]
    else:
        raise ImportFailure(f"{target}() returned {_kind(result)}, not {expected}")
    graphs = []
    for name, pair in items:
        if not (
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], torch.nn.Module)
            and isinstance(pair[1], tuple)
        ):
            raise ImportFailure(
                f"{target}(): {name} is {_kind(pair)}, not (model, example_inputs), "
                "an nn.Module and a tuple of inputs"
            )
        model, inputs = pair
        graphs.append(Graph(name, "model", _constant(model, inputs), model.training))
    return graphs


def _constant(model: Any, inputs: tuple[Any, ...]) -> Callable[[], tuple[Any, tuple[Any, ...]]]:
    return lambda: (model, inputs)
