"""Verdicts on a model, checked against what a real ``prepare_fx`` does.

``analyse_model`` runs the analysis (``nodes``) and a real ``prepare_fx`` (or
``prepare_qat_fx``) on separate deep copies of the model (prepare sets
``.qconfig`` on the modules it is given) and compares the nodes they quantize,
``observed_node_names``, the set ``convert_fx`` works from. Any difference is
a ``Disagreement``: a bug, reported as one. When torch itself raises, the
result carries torch's message and no verdicts.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.ao.quantization import QConfigMapping
from torch.ao.quantization.backend_config import BackendConfig
from torch.ao.quantization.quantize_fx import prepare_fx, prepare_qat_fx

from ..targets import NOT_THE_USERS, failure
from .backend import BackendIndex
from .lowering import lowered
from .nodes import Disagreement, NodeJudge, trace
from .verdict import CompatResult


@dataclass(frozen=True)
class Truth:
    """What prepare_fx did: the nodes it quantizes, or the error it raised."""

    observed: frozenset[str] = frozenset()
    error: str | None = None
    # Nodes no pattern quantizes that convert_fx runs on quantized tensors (``lowering``).
    lowered: dict[str, list[str]] = field(default_factory=dict)


@contextlib.contextmanager
def _quiet_fx() -> Iterator[None]:
    """No warnings (torch's deprecation notices), no stack traces recorded while tracing,
    and what the model prints while it is traced goes to stderr.

    Recording stack traces makes the first trace of a process import about a
    thousand modules (seconds); nothing here reads them.
    """
    config = torch.fx.config
    before = config.do_not_emit_stack_traces
    config.do_not_emit_stack_traces = True
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            yield
    finally:
        config.do_not_emit_stack_traces = before


def ground_truth(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    mapping: QConfigMapping,
    backend_config: BackendConfig,
    is_qat: bool,
) -> Truth:
    """Run the real prepare on a deep copy; what it observed, or why it failed."""
    prepare = prepare_qat_fx if is_qat else prepare_fx
    try:
        with _quiet_fx():
            prepared = prepare(
                copy.deepcopy(model),
                copy.deepcopy(mapping),
                example_inputs,
                backend_config=backend_config,
            )
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (torch's failure, or the model's: any kind)
        return Truth(error=failure(exc))
    observed = prepared.meta["_observed_graph_module_attrs"].observed_node_names
    return Truth(frozenset(observed), lowered=lowered(prepared))


def analyse_model(
    model: torch.nn.Module,
    example_inputs: tuple[Any, ...],
    mapping: QConfigMapping,
    backend_config: BackendConfig,
    is_qat: bool = False,
) -> CompatResult:
    """One verdict per node of ``model`` that calls something, checked against prepare_fx."""
    truth = ground_truth(model, example_inputs, mapping, backend_config, is_qat)
    name = backend_config.name
    try:
        with _quiet_fx():
            traced = trace(model, mapping, backend_config, is_qat)
    except NOT_THE_USERS:
        raise
    except BaseException as exc:  # noqa: BLE001  (raised in the front half of prepare)
        if truth.error is None:
            raise Disagreement(
                f"the analysis raised {failure(exc)}, but prepare_fx does not"
            ) from None
        return CompatResult(name, is_qat, (), model=True, error=truth.error)
    if truth.error is not None:
        return CompatResult(name, is_qat, (), model=True, error=truth.error)
    with _quiet_fx():
        judge = NodeJudge(traced, BackendIndex.of(backend_config), is_qat)
        judge.lowered = truth.lowered
        judge.predict()
        verdicts = judge.verdicts()
    _agree(judge.observed, truth.observed)
    return CompatResult(name, is_qat, tuple(verdicts), model=True)


def _agree(predicted: set[str], observed: frozenset[str]) -> None:
    if predicted == observed:
        return
    extra, missing = sorted(predicted - observed), sorted(observed - predicted)
    parts = []
    if extra:
        parts.append(f"predicted quantized but not observed by prepare_fx: {', '.join(extra)}")
    if missing:
        parts.append(f"observed by prepare_fx but predicted float: {', '.join(missing)}")
    raise Disagreement("; ".join(parts))
