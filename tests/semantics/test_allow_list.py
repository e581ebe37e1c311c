"""The allow-list cannot be walked around: a dotted path reaches only what allowed packages define.

Resolution walks attributes, so without a check ``torch.os.system`` would be
``os.system`` (torch imports ``os``). Every module, class and callable on the
walk must be defined in an allowed package, whatever attribute led to it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from generator.diagnostics import SpecError
from generator.semantics.driver import resolve_specs
from generator.semantics.facts import TorchFacts, UnknownSymbol, home, resolve

WALK_AROUNDS = [
    ("torch.os.system", "'torch.os' is the module 'os'"),
    ("torch.builtins.eval", "'torch.builtins' is the module 'builtins'"),
    ("torch.serialization.pickle.loads", "'torch.serialization.pickle' is the module 'pickle'"),
    ("torch.hub.urlopen", "'torch.hub.urlopen' is defined in 'urllib.request'"),
    ("torch.nn.functional.Optional", "'torch.nn.functional.Optional' is defined in 'typing'"),
    ("torch.nn.functional.torch.os.system", "'torch.nn.functional.torch.os' is the module 'os'"),
]


@pytest.mark.parametrize("path, message", WALK_AROUNDS)
def test_paths_through_other_packages_are_refused(path, message):
    with pytest.raises(UnknownSymbol) as exc:
        resolve(path)
    assert exc.value.message.startswith(message), exc.value.message
    assert "outside the allowed modules (allowed: torch, operator)" in exc.value.message
    # The cached table refuses them the same way (it learns through resolve).
    with pytest.raises(UnknownSymbol):
        TorchFacts().lookup(path)


@pytest.mark.parametrize(
    "path",
    [
        "torch.nn.Conv2d",
        "torch.nn.functional.max_pool2d",
        "torch.ops.aten.add.Tensor",
        "torch.float",
        "torch._C._nn.avg_pool2d",
        "torch.Tensor.add",
        "operator.getitem",  # defined in _operator, operator's C half
        "torch.ao.quantization.fuser_method_mappings.fuse_conv_bn",
    ],
)
def test_torch_own_names_still_resolve(path):
    assert resolve(path).path == path


def test_home_of_modules_classes_callables_and_data():
    import operator

    assert home(operator) == "operator"
    assert home(operator.add) == "_operator"
    assert home(Path) == "pathlib"
    assert home(3) is None and home("s") is None
    assert home(str.upper) == "builtins"  # a method descriptor: by the class that holds it


def test_an_allowed_user_module_cannot_reach_what_it_imports(tmp_path, monkeypatch):
    (tmp_path / "bcfg_kernels_x.py").write_text(
        "import os\nfrom os import system\nimport torch\n"
        "def fuse(is_qat, a, b):\n    return torch.nn.Sequential(a, b)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "t.bcfg"
    spec.write_text(
        "backend b {\n"
        "  pattern (nn.Conv2d, nn.ReLU) { fuser: bcfg_kernels_x.fuse  fused: nni.ConvReLU2d }\n"
        "  pattern (nn.Conv1d, nn.ReLU) { fuser: bcfg_kernels_x.os.system  fused: nni.ConvReLU1d }\n"
        "  pattern (nn.Conv3d, nn.ReLU) { fuser: bcfg_kernels_x.system  fused: nni.ConvReLU3d }\n"
        "}\n"
    )
    allow = ("torch", "operator", "bcfg_kernels_x")
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec], allow)
    msgs = [d.message for d in exc.value.diagnostics if d.severity == "error"]
    assert len(msgs) == 2, msgs
    assert msgs[0].startswith("'bcfg_kernels_x.os' is the module 'os'")
    assert msgs[1].startswith("'bcfg_kernels_x.system' is defined in 'posix'")
    sys.modules.pop("bcfg_kernels_x", None)


def test_a_fuse_body_cannot_run_a_shell_command(tmp_path):
    spec = tmp_path / "t.bcfg"
    spec.write_text(
        "fuse evil(a, b) = torch.os.system(torch.builtins.input())\n"
        "backend b {\n  pattern (nn.Conv2d, nn.ReLU) { fuser: evil  fused: nni.ConvReLU2d }\n}\n"
    )
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    (d,) = [d for d in exc.value.diagnostics if d.severity == "error"]
    assert str(d.span) == "t.bcfg:1:19"
    assert d.message.startswith("'torch.os' is the module 'os'")
