"""Two independent paths agree: generated code vs building straight from the model."""

from __future__ import annotations

import pytest
from torch.ao.quantization.backend_config import BackendConfig

from generator.live.build import build_backend
from generator.live.canonical import compare_backend_configs
from tests.support import BACKENDS, generated_getter


@pytest.mark.parametrize("name", BACKENDS + ["my_backend"])
def test_generated_to_dict_equals_model_built(resolved, name):
    built = build_backend(resolved[name])
    generated = generated_getter(name)()
    assert compare_backend_configs(built.to_dict(), generated.to_dict()) == []


@pytest.mark.parametrize("name", BACKENDS + ["my_backend"])
def test_from_dict_round_trip(name):
    generated = generated_getter(name)()
    again = BackendConfig.from_dict(generated.to_dict())
    assert compare_backend_configs(generated, again) == []
    assert len(again.configs) == len(generated.configs)


def test_comparison_is_not_vacuous(resolved):
    # A model that differs in one pattern's dtype must not compare equal.
    from dataclasses import replace

    backend = resolved["my_backend"]
    first = backend.configs[0]
    changed = replace(
        backend,
        configs=(replace(first, dtype_configs=first.dtype_configs[:0]), *backend.configs[1:]),
    )
    diffs = compare_backend_configs(build_backend(backend), build_backend(changed))
    assert any("dtype" in d for d in diffs)
