"""Generated names are collision-free by construction, whatever the spec calls things.

Each case names something in the spec like something the generated module
binds (a module alias, an import, a getter local, a helper function, a
placeholder for ``_``). The module must compile, import, and build a
``BackendConfig`` equivalent (fusers called on real modules included) to the
one built straight from the model without generating code.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from generator.emit.backend_config import render_backend
from generator.live.build import build_backend
from generator.live.canonical import compare_backend_configs
from generator.semantics.driver import resolve_specs

FUSE_CONV_RELU = (
    "    pattern (nn.Conv2d, nn.ReLU) {{ dtypes: {ds}  fuser: {f}  fused: nni.ConvReLU2d }}\n"
)

CASES = {
    # fuse parameters named like modules the body uses, like is_qat, a builtin, a placeholder
    "param_named_like_alias": "fuse f(nni, relu) = nni.ConvReLU2d(nni, relu)\n"
    + "backend b {\n"
    + FUSE_CONV_RELU.format(ds="[]", f="f")
    + "}\n",
    "param_named_torch": "fuse f(torch, nn) = nni.ConvReLU2d(torch, nn)\n"
    + "backend b {\n"
    + FUSE_CONV_RELU.format(ds="[]", f="f")
    + "}\n",
    "param_named_like_builtins": "fuse f(NotImplementedError, AssertionError) eval_only same_mode = "
    "nni.ConvReLU2d(NotImplementedError, AssertionError)\n"
    + "backend b {\n"
    + FUSE_CONV_RELU.format(ds="[]", f="f")
    + "}\n",
    "placeholder_next_to_underscore": "fuse f(relu, (add, _0, _)) = nni.ConvAddReLU2d(_0, add, relu)\n"
    "backend b {\n    pattern complex (nn.ReLU, (operator.add, nn.Conv2d, MatchAllNode)) "
    "{ fuser: f  fused: nni.ConvAddReLU2d  root: nn.Conv2d }\n}\n",
    "joined_tuple_name_taken": "fuse f(bn_conv, (bn, conv), _) = nni.ConvAdd2d(conv, bn_conv)\n"
    "backend b {\n    pattern complex (operator.add, (nn.BatchNorm2d, nn.Conv2d), MatchAllNode) "
    "{ fuser: f  fused: nni.ConvAdd2d  root: nn.Conv2d }\n}\n",
    # dtype sets and constraints named like modules, getter locals, helpers, the getter
    "dtypes_named_like_everything": "".join(
        f"dtypes {n} = {{input: quint8, output: quint8, weight: qint8, bias: float, dynamic: {d}}}\n"
        for n, d in [
            ("nnqr", "false"),
            ("torch", "true"),
            ("configs", "false"),
            ("different_observer", "true"),
            ("_fuse_f", "false"),
            ("BackendConfig", "true"),
            ("get_b_backend_config", "false"),
            ("dtype_config", "true"),
            ("quint4x2", "false"),
            ("is_qat", "true"),
        ]
    )
    + "constraint _root_node_1 = quint8 {scale: 0.5}\n"
    + "fuse f(conv, relu) = nni.ConvReLU2d(conv, relu)\n"
    + "backend b {\n"
    + FUSE_CONV_RELU.format(
        ds="[nnqr, torch, configs, different_observer, _fuse_f, BackendConfig, "
        "get_b_backend_config, dtype_config, quint4x2, is_qat, {input: _root_node_1}]",
        f="f",
    )
    + "    pattern nn.Linear { observation: shared_observer  dtypes: configs  root: nn.Linear  "
    "reference: nnq.Linear }\n" + "}\n",
}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(tmp_path: Path, text: str, allow=("torch", "operator"), extra_files=()) -> str:
    spec = tmp_path / "t.bcfg"
    spec.write_text(text)
    paths = [spec, *extra_files]
    (backend,) = resolve_specs(tmp_path, paths, allow).backends
    source = render_backend(backend)
    ast.parse(source)
    out = tmp_path / f"gen_{backend.module}.py"
    out.write_text(source)
    module = _load(out, f"bcfg_names_{tmp_path.name}")
    generated = getattr(module, f"get_{backend.module}_backend_config")()
    assert compare_backend_configs(build_backend(backend), generated) == []
    return source


@pytest.mark.parametrize("case", sorted(CASES))
def test_spec_names_never_shadow_generated_ones(tmp_path, case):
    source = _check(tmp_path, CASES[case])
    if case == "param_named_like_alias":
        assert "def _fuse_f(is_qat, nni_2, relu):" in source
        assert "return nni.ConvReLU2d(nni_2, relu)" in source
    if case == "placeholder_next_to_underscore":
        assert "add, _0, _1 = add__0" in source


def test_two_fusers_of_one_name_get_two_functions(tmp_path):
    """Scoping makes this hard to write in a spec; the emitter does not rely on it."""
    from dataclasses import replace

    text = (
        "fuse f(a, b) = nni.LinearReLU(a, b)\nfuse g(conv, relu) = nni.ConvReLU2d(conv, relu)\n"
        "backend b {\n    pattern (nn.Linear, nn.ReLU) { fuser: f  fused: nni.LinearReLU }\n"
        + FUSE_CONV_RELU.format(ds="[]", f="g")
        + "}\n"
    )
    (tmp_path / "t.bcfg").write_text(text)
    (backend,) = resolve_specs(tmp_path, [tmp_path / "t.bcfg"]).backends
    second = backend.configs[1]
    renamed = replace(second, fuser=replace(second.fuser, name="f"))
    backend = replace(backend, configs=(backend.configs[0], renamed))
    source = render_backend(backend)
    assert "def _fuse_f(" in source and "def _fuse_f_2(" in source
    (tmp_path / "gen_two.py").write_text(source)
    generated = _load(tmp_path / "gen_two.py", "bcfg_names_two").get_b_backend_config()
    assert compare_backend_configs(build_backend(backend), generated) == []


# Names an allow-listed module could have that the generated module also binds.
# (A module named like a built-in alias, nni, is shadowed by the alias in specs already.)
CLASHING_MODULES = ["configs", "is_qat", "BackendConfig", "different_observer", "_fuse_g"]


@pytest.mark.parametrize("module_name", CLASHING_MODULES)
def test_allowed_modules_named_like_generated_names(tmp_path, monkeypatch, module_name):
    """An allow-listed module may be called anything: it is imported under an alias if need be."""
    pkg = tmp_path / "mods"
    pkg.mkdir()
    (pkg / f"{module_name}.py").write_text(
        "import torch.ao.nn.intrinsic as _nni\n"
        "def fuse(is_qat, conv, relu):\n    return _nni.ConvReLU2d(conv, relu)\n"
    )
    monkeypatch.syspath_prepend(str(pkg))
    sys.modules.pop(module_name, None)
    local = module_name.lstrip("_")
    text = (
        "dtypes configs_ = {input: quint8, output: quint8}\n"
        f"dtypes {local}_module = {{input: qint8, output: qint8}}\n"
        "fuse g(conv, relu) = nni.ConvReLU1d(conv, relu)\n"
        "backend b {\n"
        f"    pattern (nn.Conv2d, nn.ReLU) {{ dtypes: [configs_, {local}_module]  "
        f"fuser: {module_name}.fuse  fused: nni.ConvReLU2d }}\n"
        "    pattern (nn.Conv1d, nn.ReLU) { dtypes: configs_  fuser: g  fused: nni.ConvReLU1d }\n"
        "}\n"
    )
    try:
        source = _check(tmp_path, text, allow=("torch", "operator", module_name))
    finally:
        sys.modules.pop(module_name, None)
    assert f"import {module_name} as {local}_module\n" in source
    assert f"    {local}_module_ = DTypeConfig(" in source
