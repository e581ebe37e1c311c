"""``examples/npu/``, a project of its own: in sync, warning-free, and explained by compat.

The example has its pyproject.toml (strict = true), specs/, generated/ and
npu_example.py. The site's NPU guide (docs/guides/npu.md) shows it: running
it, and what the guide shows, is checked by tests/docs/test_pages.py.
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


def test_the_example_ships_a_quantizer_under_strict_as_written(tmp_path):
    """The spec in torch's order (conv before conv + relu) ships ``quantizer npu {}``: generate
    under ``strict = true`` passes, and the quantizer fuses conv + relu as FX does."""
    pytest.importorskip("torchao", reason="the pt2e extra is not installed")
    project = tmp_path / "npu"
    for name in ("pyproject.toml", "npu_example.py", "specs/npu.bcfg"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes((EXAMPLE / name).read_bytes())
    spec = (project / "specs" / "npu.bcfg").read_text(encoding="utf-8")
    assert "\nquantizer npu {}\n" in spec
    assert spec.index("pattern nn.Conv2d {") < spec.index("pattern (nn.Conv2d, nn.ReLU) {")
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
