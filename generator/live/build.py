"""Build: a live ``BackendConfig`` straight from the resolved model, no code generated.

This is the second, independent path from spec to ``BackendConfig``. The tests
compare what the generated module builds with what this module builds, so a
bug in rendering cannot hide behind a matching bug in resolution. Defined
fusers and getters are interpreted here rather than printed as Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it loaded)
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
    ObservationType,
)
from torch.ao.quantization.fuser_method_mappings import _sequential_wrapper2

from ..config import DEFAULT_ALLOW
from ..lang.vocabulary import FIELDS, FieldKind
from ..semantics import model as m
from ..semantics.facts import resolve


def _obj(sym: m.Symbol) -> Any:
    return resolve(sym.path, (sym.path.split(".")[0], *DEFAULT_ALLOW)).obj


def _pattern(p: m.PatternValue) -> Any:
    if isinstance(p, tuple):
        return tuple(_pattern(x) for x in p)
    if isinstance(p, m.Symbol):
        return _obj(p)
    return p


def _dtype(d: m.DType | None) -> Any:
    if d is None:
        return None
    import torch

    dt = getattr(torch, d.dtype)
    if not d.constrained:
        return dt
    return DTypeWithConstraints(
        dtype=dt,
        quant_min_lower_bound=d.quant_min_lower_bound,
        quant_max_upper_bound=d.quant_max_upper_bound,
        scale_min_lower_bound=d.scale_min_lower_bound,
        scale_max_upper_bound=d.scale_max_upper_bound,
        scale_exact_match=d.scale_exact_match,
        zero_point_exact_match=d.zero_point_exact_match,
    )


def _dtype_config(c: m.DTypeConfig) -> DTypeConfig:
    import torch

    return DTypeConfig(
        input_dtype=_dtype(c.input),
        output_dtype=_dtype(c.output),
        weight_dtype=_dtype(c.weight),
        bias_dtype=getattr(torch, c.bias) if c.bias else None,
        is_dynamic=c.is_dynamic,
    )


def _bind(params: tuple[m.Param, ...], args: tuple[Any, ...], env: dict[str, Any]) -> None:
    if len(params) != len(args):
        raise TypeError(f"fuser takes {len(params)} matched modules, got {len(args)}")
    for p, a in zip(params, args):
        if p.name is None:
            _bind(p.items, tuple(a), env)
        elif p.name != "_":
            env[p.name] = a


def _defined_fuser(f: m.DefinedFuser) -> Callable:
    def evaluate(e: m.FuseExpr, env: dict[str, Any], is_qat: bool) -> Any:
        if isinstance(e, m.FuseArg):
            return env[e.name]
        if isinstance(e, m.FuseQat):
            return is_qat
        if isinstance(e, m.FuseConst):
            return e.value
        return _obj(e.function)(*(evaluate(a, env, is_qat) for a in e.args))

    def fuser(is_qat: bool, *matched: Any) -> Any:
        env: dict[str, Any] = {}
        _bind(f.params, matched, env)
        if f.same_mode and len({v.training for v in env.values()}) > 1:
            raise AssertionError(f"{', '.join(env)} must all be in the same mode (train or eval)")
        if f.eval_only and is_qat:
            raise NotImplementedError(f"Cannot fuse train modules: {tuple(env.values())}")
        return evaluate(f.body, env, is_qat)

    setattr(fuser, "bcfg_definition", f)  # noqa: B010  (what bcfg import reads back)
    return fuser


def _fuser(f: m.Fuser) -> Callable:
    if isinstance(f, m.SequentialFuser):
        return _sequential_wrapper2(_obj(f.fused))
    if isinstance(f, m.SymbolFuser):
        return _obj(f.function)
    return _defined_fuser(f)


def _pick(pattern: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        pattern = pattern[i]
    return pattern


# Each kind of field as the live value its setter takes.
_LIVE: dict[FieldKind, Callable[[Any], Any]] = {
    FieldKind.OBSERVATION: lambda v: ObservationType[v],
    FieldKind.DTYPES: lambda v: [_dtype_config(d) for d in v],
    FieldKind.MODULE: _obj,
    FieldKind.FUSER: _fuser,
    FieldKind.NODE_GETTER: lambda g: lambda pattern: _pick(pattern, g.path),
    FieldKind.INPUTS_GETTER: lambda g: lambda pattern: [_pick(pattern, p) for p in g.paths],
    FieldKind.NUM_TENSOR_ARGS: lambda v: {k: ObservationType[o] for k, o in v},
    FieldKind.INPUT_INDEX: dict,
}


def build_pattern_config(c: m.PatternConfig) -> BackendPatternConfig:
    """One ``BackendPatternConfig`` from its resolved model: each field through its setter."""
    if c.complex:
        conf = BackendPatternConfig()._set_pattern_complex_format(_pattern(c.pattern))
    else:
        conf = BackendPatternConfig(_pattern(c.pattern))
    for spec in FIELDS:
        value = getattr(c, spec.attr)
        if value is not None and value != ():
            getattr(conf, spec.setter)(_LIVE[spec.kind](value))
    return conf


def build_backend(backend: m.Backend) -> BackendConfig:
    """The ``BackendConfig`` a resolved backend describes."""
    return BackendConfig(backend.name).set_backend_pattern_configs(
        [build_pattern_config(c) for c in backend.configs]
    )
