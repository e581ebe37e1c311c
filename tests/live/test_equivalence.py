"""The generated modules build BackendConfigs equivalent to torch's own, config by config."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from generator.live.canonical import compare_backend_configs
from tests.support import BACKENDS, CONFIG_COUNTS, REPO, generated_getter, torch_getter

# Modules the generated code must never import: torch's own backend definitions.
FORBIDDEN = {
    f"torch.ao.quantization.backend_config.{m}"
    for m in (
        "native",
        "fbgemm",
        "qnnpack",
        "x86",
        "onednn",
        "executorch",
        "tensorrt",
        "_qnnpack_pt2e",
        "_common_operator_config_utils",
    )
}


@pytest.mark.parametrize("name", BACKENDS)
def test_equivalent_to_torch(name):
    expected, actual = torch_getter(name)(), generated_getter(name)()
    assert len(actual.configs) == CONFIG_COUNTS[name]
    assert actual.name == expected.name
    assert compare_backend_configs(expected, actual) == []


def test_backend_names_and_getters():
    import generated

    assert generated.get_qnnpack_pt2e_backend_config().name == "qnnpack_pytorch_2.0_export"
    for name in BACKENDS + ["my_backend"]:
        assert callable(getattr(generated, f"get_{name}_backend_config"))
        assert f"get_{name}_backend_config" in generated.__all__


@pytest.mark.parametrize("name", BACKENDS + ["my_backend"])
def test_imports_only_torch_and_stdlib(name):
    tree = ast.parse((REPO / "generated" / f"{name}.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert imported, "a generated module imports at least torch"
    for mod in imported:
        top = mod.split(".")[0]
        assert top == "torch" or top in sys.stdlib_module_names, mod
        assert not any(mod == f or mod.startswith(f + ".") for f in FORBIDDEN), mod


@pytest.mark.parametrize("name", ["onednn", "qnnpack_pt2e", "my_backend"])
def test_first_import_in_fresh_interpreter(name):
    # torch 2.13's BackendConfig reaches backend_config.utils by attribute without importing it.
    code = (
        f"import generated.{name} as g\n"
        f"bc = g.get_{name}_backend_config()\n"
        "print(len(bc.configs))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == CONFIG_COUNTS.get(name, 3)


def _mutables(obj, seen=None):
    """ids of every mutable object reachable from a BackendConfig's to_dict()."""
    from torch.ao.quantization.backend_config import (
        BackendPatternConfig,
        DTypeConfig,
        DTypeWithConstraints,
    )

    seen = set() if seen is None else seen
    if isinstance(obj, (list, dict, DTypeConfig, DTypeWithConstraints, BackendPatternConfig)):
        seen.add(id(obj))
    if isinstance(obj, dict):
        for v in obj.values():
            _mutables(v, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _mutables(v, seen)
    return seen


@pytest.mark.parametrize("name", BACKENDS)
def test_every_call_builds_fresh_objects(name):
    get = generated_getter(name)
    first, second = get(), get()
    shared_configs = {id(c) for c in first.configs} & {id(c) for c in second.configs}
    assert not shared_configs
    objs_a = {id(x) for c in first.configs for x in (c, *c.dtype_configs)}
    objs_a |= {id(d.input_dtype_with_constraints) for c in first.configs for d in c.dtype_configs}
    objs_b = {id(x) for c in second.configs for x in (c, *c.dtype_configs)}
    objs_b |= {id(d.input_dtype_with_constraints) for c in second.configs for d in c.dtype_configs}
    assert not objs_a & objs_b
    # Editing one returned config does not change the next call's.
    before = get()
    c0 = first.configs[0]
    c0.dtype_configs[0].input_dtype_with_constraints.quant_min_lower_bound = -99
    c0.dtype_configs.clear()
    for c in first.configs:
        c._input_type_to_index["weight"] = 99
        c._num_tensor_args_to_observation_type.clear()
    assert compare_backend_configs(before, get()) == []


def test_torch_shares_configs_between_calls_but_we_do_not():
    # The reason for the test above: torch's onednn returns shared objects.
    a, b = torch_getter("onednn")(), torch_getter("onednn")()
    assert {id(c) for c in a.configs} & {id(c) for c in b.configs}
    a, b = generated_getter("onednn")(), generated_getter("onednn")()
    assert not {id(c) for c in a.configs} & {id(c) for c in b.configs}
