"""``examples/npu/``, run as the README's tour runs it: in sync, quantized, explained.

The example is a project of its own (pyproject.toml with strict = true,
specs/, generated/, npu_example.py); the README shows its spec verbatim.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator import cli
from tests.support import REPO

EXAMPLE = REPO / "examples" / "npu"
DEFAULT = "torch.ao.quantization:get_default_qconfig_mapping"


@pytest.fixture
def in_example(monkeypatch, capsys):
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def call(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def test_the_example_is_in_sync_and_warning_free(in_example):
    code, _, err = in_example("check")  # strict = true: a warning would fail it
    assert code == 0, err
    assert "warning" not in err


def test_the_example_quantizes_with_its_generated_backend():
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "npu_example.py"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:3] == [
        "conv1: torch.ao.nn.intrinsic.quantized.ConvReLU2d",
        "conv2: torch.ao.nn.intrinsic.quantized.ConvReLU2d",
        "fc: torch.ao.nn.quantized.Linear",
    ]
    error = float(lines[3].split(": ")[1].split()[0])
    assert 0 < error < 0.05


def test_the_example_ships_a_quantizer_under_strict_as_written(tmp_path):
    """The spec in torch's order (conv before conv + relu) plus ``quantizer npu {}``: generate
    under ``strict = true`` passes, and the quantizer fuses conv + relu as FX does."""
    pytest.importorskip("torchao", reason="the pt2e extra is not installed")
    project = tmp_path / "npu"
    for name in ("pyproject.toml", "npu_example.py", "specs/npu.bcfg"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes((EXAMPLE / name).read_bytes())
    spec = project / "specs" / "npu.bcfg"
    spec.write_text(spec.read_text(encoding="utf-8") + "\nquantizer npu {}\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    run = dict(cwd=project, capture_output=True, text=True, env=env, timeout=300)
    done = subprocess.run([sys.executable, "-m", "generator", "generate"], **run)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    code = (
        "import torch\n"
        "from torchao.quantization.pt2e import HistogramObserver, MinMaxObserver\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
        "from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec\n"
        "from npu_example import model\n"
        "from generated.npu_quantizer import get_npu_quantizer\n"
        "act = QuantizationSpec(torch.uint8, HistogramObserver.with_args(eps=2**-10), 0, 127,"
        " torch.per_tensor_affine)\n"
        "w = QuantizationSpec(torch.int8, MinMaxObserver, -127, 127, torch.per_tensor_symmetric)\n"
        "net, args = model()\n"
        "gm = torch.export.export(net, args).module()\n"
        "q = get_npu_quantizer().set_global(QuantizationConfig(act, act, w, None))\n"
        "prepared = prepare_pt2e(gm, q)\n"
        "convs = [n for n in prepared.graph.nodes if n.target == torch.ops.aten.conv2d.default]\n"
        "print(' '.join(str(u.target) for c in convs for u in c.users))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], **run)
    assert done.returncode == 0, done.stderr
    # Each conv feeds its relu directly: no observer between them, the two are one pattern.
    assert done.stdout.split() == ["aten.relu.default", "aten.relu.default"], done.stdout


def test_compat_honours_the_example_mapping_and_explains_the_default(in_example):
    model = ("--model", "npu_example:model")
    code, out, err = in_example(
        "compat", "npu", "--qconfig-mapping", "npu_example:npu_qconfig_mapping", *model
    )
    assert code == 0, err
    assert out.splitlines()[-1] == "5 node(s): 5 honoured, 0 not honoured"
    code, out, _ = in_example(
        "compat", "npu", "--qconfig-mapping", DEFAULT, *model, "--format", "json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["honored"] == []
    for entry in doc["skipped"]:
        assert entry["closest"]["failures"][0]["message"] == (
            "eps 2**-23 is below the backend's scale_min 2**-10"
        )
        assert "eps=2**-10" in entry["suggested_qconfig"]


def test_the_readme_shows_the_example_as_it_is(in_example):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert (EXAMPLE / "specs" / "npu.bcfg").read_text(encoding="utf-8") in readme
    code, out, _ = in_example(
        "compat", "npu", "--qconfig-mapping", DEFAULT, "--model", "npu_example:model"
    )
    shown = out.replace(f"torch {_torch_version()}", "torch 2.13.0+cpu")
    assert shown in readme, "re-run the command and paste its output into the README's tour"


def _torch_version() -> str:
    import torch

    return torch.__version__


def _readme_block(language: str, starting: str) -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = readme.split(f"```{language}\n")[1:]
    return next(b.split("```\n", 1)[0] for b in blocks if b.startswith(starting))


def test_the_tour_shows_the_repository_spec_and_its_snippet_quantizes():
    """The tour's spec is specs/my_backend.bcfg verbatim, and its FX snippet runs as shown."""
    spec = _readme_block("bcfg", "# The example from BackendConfig's docstring")
    assert spec == (REPO / "specs" / "my_backend.bcfg").read_text(encoding="utf-8")
    snippet = _readme_block("python", "import torch\nfrom torch import nn\n")
    done = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr
    conv, fc = done.stdout.splitlines()
    assert conv.startswith("QuantizedConvReLU2d(3, 8, kernel_size=(3, 3)")
    assert fc.startswith("QuantizedLinear(in_features=8, out_features=4")


def test_the_readme_pt2e_example_runs_as_shown(tmp_path):
    """The tour's spec plus `quantizer my_backend {}` generates what the README says, and its
    PT2E snippet quantizes conv + relu and linear."""
    pytest.importorskip("torchao", reason="the pt2e extra is not installed")
    (tmp_path / "specs").mkdir()
    spec = (REPO / "specs" / "my_backend.bcfg").read_text(encoding="utf-8")
    (tmp_path / "specs" / "my_backend.bcfg").write_text(spec + "quantizer my_backend {}\n")
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    bcfg = [sys.executable, "-m", "generator"]
    run = dict(cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    generated = subprocess.run([*bcfg, "generate"], **run)
    assert generated.returncode == 0, generated.stderr
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "wrote generated/my_backend_quantizer.py" in generated.stderr + generated.stdout
    assert "wrote generated/my_backend_quantizer.py" in readme
    snippet = _readme_block("python", "import torch\nfrom torch import nn\nfrom torchao.")
    done = subprocess.run([sys.executable, "-c", snippet], **run)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.strip()
    assert f"```\n{shown}\n```" in readme
    assert "'conv2d.default', 'relu.default', 'quantize_per_tensor.default'" in shown
