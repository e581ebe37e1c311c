"""``bcfg compat`` on a ``scopes: pairs`` target: specs/cadence.bcfg as shipped (its hooks
need no ExecuTorch), each op's verdict checked against what the quantizer annotated.

compat itself compares its report with a plain prepare of the same quantizer (a
``Disagreement`` is an internal error); these tests compare it again, with a
prepare of their own, and check the verdicts the report gives by name.
Cortex-M and Arm TOSA import ExecuTorch's Arm stack (tosa-tools): their compat
reports are checked in ``tests/live/test_compat_composable.py``, in that environment.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support import REPO

pytest.importorskip("torchao", reason="PT2E compat needs torchao (pip install '.[pt2e]')")

USER = """\
import torch
from torch import nn
from torchao.quantization.pt2e.observer import HistogramObserver, MinMaxObserver
from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec


def _config(dtype, lo, hi):
    act = QuantizationSpec(dtype, HistogramObserver, lo, hi, torch.per_tensor_affine)
    weight = QuantizationSpec(torch.int8, MinMaxObserver, -127, 127, torch.per_tensor_symmetric)
    return QuantizationConfig(act, act, weight, None)


def int8():
    return _config(torch.int8, -128, 127)


def int16():
    return _config(torch.int16, -32768, 32767)


def linear_only(quantizer):
    quantizer.add_pair(torch.ops.aten.linear.default, int8())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = torch.relu(self.conv(x)).mean((2, 3))
        z = self.fc(y)
        return torch.softmax(z, -1) + z


def model():
    return Net().eval(), (torch.randn(1, 3, 8, 8),)
"""

ARGS = (
    "compat",
    "cadence",
    "--strict-export",
    "--model",
    "compat_cadence_user:model",
    "--quantization-config",
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compat_composable")
    (root / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["specs", "compat_cadence_user"]\n')
    (root / "specs" / "hooks").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "cadence.bcfg", root / "specs" / "cadence.bcfg")
    shutil.copy(REPO / "specs" / "hooks" / "cadence.py", root / "specs" / "hooks" / "cadence.py")
    (root / "compat_cadence_user.py").write_text(USER)
    return root


def annotated(project: Path, configure: str) -> set[str]:
    """The ops the cadence quantizer annotates on the model, by a prepare of this test's."""
    import importlib
    import sys

    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    from generator.config import find_project
    from generator.live.compat.pt2e import build_quantizer, export, scratch
    from generator.live.compat.pt2e import configure as apply
    from generator.live.targets import find_function
    from generator.pipeline import analyze_project

    sys.path.insert(0, str(project))
    try:
        user = importlib.import_module("compat_cadence_user")
        quantizer = next(q for q in analyze_project(find_project()).quantizers)
        with scratch() as root:
            q = build_quantizer(quantizer, root)()
            apply(q, configure, find_function(configure, ["compat_cadence_user"]))
            gm = export(*user.model(), strict=True)
            seen: set[str] = set()
            annotate = q.annotate

            def snapshot(model):  # the ops annotated right after annotate, as compat's truth
                out = annotate(model)
                seen.update(
                    n.name
                    for n in out.graph.nodes
                    if n.op == "call_function" and n.meta.get(KEY_) is not None
                )
                return out

            q.annotate = snapshot
            prepare_pt2e(gm, q)
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("compat_cadence_user", None)
    return seen


KEY_ = "quantization_annotation"


def verdicts(out: str) -> dict[str, tuple[str, str | None, str]]:
    doc = json.loads(out)
    return {
        e["node"]: (e["reason"], e["pattern"], e["status"]) for e in doc["skipped"] + doc["honored"]
    }


def test_cadence_int8_each_op_as_annotated(run, project):
    code, out, err = run(*ARGS, "compat_cadence_user:int8", "--format", "json")
    assert code == 1, err  # softmax and mean are left float
    got = verdicts(out)
    assert got == {
        "conv2d": ("annotated", "(aten.conv2d.default, aten.relu.default)", "quantized"),
        "relu": ("annotated", "(aten.conv2d.default, aten.relu.default)", "quantized"),
        "mean": ("no_rule", None, "left float"),
        "linear": ("annotated", "aten.linear.default", "quantized"),
        "softmax": ("no_rule", None, "left float"),
        "add": ("annotated", "aten.add.Tensor", "quantized"),
    }
    quantized = {n for n, (_, _, status) in got.items() if status == "quantized"}
    assert quantized == annotated(project, "compat_cadence_user:int8")


def test_cadence_int16_says_which_dtypes_refuse_the_config(run, project):
    code, out, err = run(*ARGS, "compat_cadence_user:int16", "--format", "json")
    assert code == 1, err
    doc = json.loads(out)
    relu = next(e for e in doc["skipped"] if e["node"] == "relu")
    assert relu["reason"] == "not_tried" and relu["pattern"] == "aten.relu.default"
    assert "global config is not one its dtypes allow" in relu["detail"]
    assert "dtype" in relu["detail"] or "int16" in relu["detail"]
    conv = next(e for e in doc["honored"] if e["node"] == "conv2d")
    assert conv["pattern"] == "aten.conv2d.default" and conv["role"] == "op"  # A16 allows it
    quantized = {e["node"] for e in doc["honored"]}
    assert quantized == annotated(project, "compat_cadence_user:int16")


def test_a_pair_of_linear_alone_leaves_the_rest_on_purpose(run, project):
    code, out, err = run(*ARGS, "compat_cadence_user:linear_only")
    assert code == 1, err  # mean and softmax have no rule; the rest no pair, on purpose
    lines = {line.split()[0]: line for line in out.splitlines()[3:] if line}
    assert "pair 1 (aten.linear.default)  quantized" in lines["linear"]
    assert all(lines[n].endswith("left float on purpose") for n in ("conv2d", "relu", "add"))
    assert "1 quantized, 2 left float, 3 left float on purpose (no config, or" in out
    code, out, err = run(*ARGS, "compat_cadence_user:linear_only", "--format", "json")
    detail = next(e["detail"] for e in json.loads(out)["skipped"] if e["node"] == "add")
    assert detail == "left float on purpose: no pair has its pattern (add_pair, set_global)"


def test_a_non_strict_export_says_pairs_need_source_partitions(run, project):
    args = tuple(a for a in ARGS if a != "--strict-export")
    code, out, err = run(*args, "compat_cadence_user:int8", "--format", "json")
    assert code == 1, err
    conv = next(e for e in json.loads(out)["skipped"] if e["node"] == "conv2d")
    assert conv["reason"] == "skip" and "a strict export records" in conv["detail"]


def test_text_shows_the_rule_and_where_the_spec_writes_it(run):
    code, out, err = run(*ARGS, "compat_cadence_user:int8")
    assert code == 1, err
    assert out.startswith("backend cadence (specs/cadence.bcfg), PT2E quantizer")
    assert "mean: left float\n    no rule of the quantizer has aten.mean.dim [no_rule]" in out
    assert "6 op(s): 4 quantized, 2 left float" in out
