"""Comparable: a live ``BackendConfig`` read back into the resolved model, for ``bcfg diff --configs``.

Any two BackendConfig getters (torch's built-in, a generated module, a user's
hand-written one) become ``model.Backend`` values that ``semantics.compare``
compares as it compares specs: classes and functions by their public dotted
paths (``live.names``), ``_sequential_wrapper2(cls)`` fusers as
``sequential(cls)``, getters that pick elements of the pattern as
``pattern[i][j]``. Objects no public path reaches are named
``module.qualname`` (or their ``repr``), so reading never fails on a
well-formed config.

Two callables with different names may still do the same thing (a generated
module defines its own copies of torch's private fusers): ``read_pair``
compares such pairs by behaviour (``canonical.callable_difference``) and
gives both the same name when they agree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig

from ..lang.vocabulary import CONSTRAINT_FIELDS, FIELDS
from ..semantics import model as m
from ..semantics.facts import kind_of
from ..sources import Span
from .canonical import callable_difference
from .getters import pick_paths
from .names import public_names, sequential_class


class Unreadable(Exception):
    """A config the model cannot hold (a getter that does more than pick pattern elements)."""


def _name(obj: Any) -> str:
    found = public_names().name(obj)
    if found is not None:
        return found.path
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}.{qualname}"
    return repr(obj)


def _symbol(obj: Any) -> m.Symbol:
    return m.Symbol(_name(obj), kind_of(obj))


def _atom(p: Any) -> m.PatternValue:
    if isinstance(p, tuple):
        return tuple(_atom(x) for x in p)
    if isinstance(p, (str, int)) and not isinstance(p, bool):
        return p
    return _symbol(p)


def _dtype(value: Any) -> m.DType | None:
    """A dtype slot of a DTypeConfig dict: a torch dtype or a DTypeWithConstraints."""
    if value is None:
        return None
    dtype = getattr(value, "dtype", value)
    if dtype is None:
        return None
    bounds = {long: getattr(value, long, None) for long, _ in CONSTRAINT_FIELDS}
    return m.DType(str(dtype).removeprefix("torch."), **bounds)


def _dtype_config(d: Any) -> m.DTypeConfig:
    data = d.to_dict() if hasattr(d, "to_dict") else d
    bias = data.get("bias_dtype")
    return m.DTypeConfig(
        input=_dtype(data.get("input_dtype")),
        output=_dtype(data.get("output_dtype")),
        weight=_dtype(data.get("weight_dtype")),
        bias=str(bias).removeprefix("torch.") if bias is not None else None,
        is_dynamic=data.get("is_dynamic"),
    )


def _fuser(fn: Any) -> m.Fuser:
    wrapped = sequential_class(fn)
    if wrapped is not None:
        return m.SequentialFuser(_symbol(wrapped))
    return m.SymbolFuser(_symbol(fn))


def _getter(where: str, fn: Any, pattern: Any, many: bool) -> Any:
    paths = pick_paths(fn, pattern, many)
    if paths is None:
        raise Unreadable(
            f"{where}: {_name(fn)} does more than pick elements of the pattern; "
            "bcfg diff compares only getters like pattern[1][0]"
        )
    return m.ExtraInputsGetter(paths) if many else m.NodeGetter(paths)


def pattern_config(i: int, pc: BackendPatternConfig) -> m.PatternConfig:
    """Config ``i`` of a BackendConfig, in the model's terms."""
    d = pc.to_dict()
    complex_ = pc._pattern_complex_format is not None
    raw = pc._pattern_complex_format if complex_ else pc.pattern
    reversed_pattern = raw if complex_ else m.reversed_nested(raw)
    where = f"config {i} (pattern {'complex ' if complex_ else ''}{_atom(raw)})"
    values: dict[str, Any] = {}
    for spec in FIELDS:
        if spec.dict_key not in d or spec.word in ("observation", "dtypes"):
            continue
        value = d[spec.dict_key]
        if spec.word in ("root", "qat", "reference", "fused"):
            values[spec.attr] = _symbol(value)
        elif spec.word == "fuser":
            values[spec.attr] = _fuser(value)
        elif spec.word in ("root_node", "extra_inputs"):
            many = spec.word == "extra_inputs"
            values[spec.attr] = _getter(f"{where} {spec.dict_key}", value, reversed_pattern, many)
        elif spec.word == "num_tensor_args":
            values[spec.attr] = tuple((k, v.name) for k, v in value.items())
        else:
            values[spec.attr] = tuple(value.items())
    return m.PatternConfig(
        pattern=_atom(raw),
        complex=complex_,
        observation=d["observation_type"].name,
        dtype_configs=tuple(_dtype_config(x) for x in d.get("dtype_configs", [])),
        **values,
    )


def backend(config: BackendConfig, module: str, label: str) -> m.Backend:
    """A live BackendConfig as a ``model.Backend`` called ``module``; ``label`` names where it came from."""
    configs = tuple(pattern_config(i, pc) for i, pc in enumerate(config.configs))
    return m.Backend(
        module=module,
        name=config.name,
        configs=configs,
        spec_file=label,
        inputs=(),
        span=Span(label, 0, 0, 0, 0),
    )


def read_pair(
    a: BackendConfig, b: BackendConfig, labels: tuple[str, str]
) -> tuple[m.Backend, m.Backend]:
    """Both configs as one backend (named after ``b``), fusers that behave alike named alike."""
    module = b.name or a.name or "backend"
    base, head = backend(a, module, labels[0]), backend(b, module, labels[1])
    older = {(c.complex, c.pattern): (pc, c) for pc, c in zip(a.configs, base.configs)}
    configs = []
    for pc, c in zip(b.configs, head.configs):
        match = older.get((c.complex, c.pattern))
        configs.append(c if match is None else _same_fuser(*match, pc, c))
    return base, dataclasses.replace(head, configs=tuple(configs))


def _same_fuser(
    pa: BackendPatternConfig, a: m.PatternConfig, pb: BackendPatternConfig, b: m.PatternConfig
) -> m.PatternConfig:
    """``b`` with its fuser named as ``a``'s if the two differ in name but not in behaviour."""
    if a.fuser is None or b.fuser is None or a.fuser == b.fuser:
        return b
    if callable_difference("fuser_method", pa.fuser_method, pb.fuser_method, pa) is None:
        return dataclasses.replace(b, fuser=a.fuser)
    return b
