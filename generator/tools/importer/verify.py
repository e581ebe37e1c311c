"""Verify an import before it is written: the spec must regenerate an equivalent config.

The resolved spec is built into a live ``BackendConfig`` (``live.build``, the
second path to torch besides the generated module) and compared with the
target's configs in the canonical form of ``live.canonical``. ``compare`` is
the one comparison used; it is a module attribute so that a live comparison of
two configs with more to say (``bcfg diff --configs``) can take its place.

A fuser bcfg proved by tracing is compared the same way on real modules where
the comparison can build them; where it cannot (a project's own module
classes), the two fusers must trace to the same expression: the proof is
symbolic, so is the check.
"""

from __future__ import annotations

from typing import Any

from ...live.canonical import compare_backend_configs
from ...live.names import public_names
from ...semantics import model

compare = compare_backend_configs


def verify(name: str, configs: list[Any], backend: model.Backend) -> list[str]:
    """Differences between the target's configs (in the order written) and what the spec builds."""
    import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it)
    from torch.ao.quantization.backend_config import BackendConfig

    from ...live.build import build_backend

    built = build_backend(backend)
    expected = BackendConfig(name).set_backend_pattern_configs(configs)
    for src, out in zip(expected.configs, built.configs):
        f, g = src.fuser_method, out.fuser_method
        if f is not None and g is not None and f is not g and _same_proof(f, g, src):
            out.set_fuser_method(f)
    return compare(expected, built)


def _same_proof(f: Any, g: Any, config: Any) -> bool:
    """Whether both fusers trace to the same expression on this config's pattern."""
    from .prove import NotProvable, trace
    from .reader import param_shape

    complex_ = config._pattern_complex_format is not None
    pattern = config._pattern_complex_format if complex_ else config.pattern
    shape, types_of = param_shape(pattern)
    table = public_names()

    def named(obj: Any) -> str | None:
        n = table.name(obj)
        return None if n is None else n.path

    try:
        return trace(f, shape, named, types_of) == trace(g, shape, named, types_of)
    except NotProvable:
        return False
