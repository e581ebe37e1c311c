"""``bcfg import`` of PT2E quantizers on the whole probe zoo, both export modes (slow: minutes).

The vendor-style subject (``pt2e_subjects/acme_npu.py``): every graph the same, with the
two behaviours the composable scheme does not have in the hooks (a weight that is a model
input, an add of int tensors); a second one in another style
(``pt2e_subjects/borealis_dsp.py``): every graph the same. Production checks found on a few probes of torchao's X86 and XNNPACK. torchao's XNNPACK quantizer as
configured by its users: the report is written and names each graph that differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUBJECTS = Path(__file__).resolve().parent / "pt2e_subjects"
PRODUCTION = "tests.tools.pt2e_subjects.production"


def _import(cwd: Path, target: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(REPO), str(SUBJECTS)])}
    (cwd / "pyproject.toml").write_text("[tool.bcfg]\n")
    return subprocess.run(
        [sys.executable, "-m", "generator", "import", target, "-o", "x.bcfg", "--format", "json",
         "--timeout", "1500", *extra],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=1600,
    )  # fmt: skip


def test_the_vendor_quantizer_imports_identical(tmp_path) -> None:
    run = _import(tmp_path, "acme_npu:get_quantizer")
    assert run.returncode == 1, run.stderr  # the hooks module is not allowed
    report = json.loads((tmp_path / "x.proof.json").read_text())
    differing = sorted({g["name"] for g in report["graphs"] if g["status"] == "differ"})
    # a weight given as a model input (hooks.PositionalWeights) and an add of int tensors
    # (hooks.NonFloatInputs) differed before
    assert differing == []
    assert sum(g["status"] == "same" for g in report["graphs"]) >= 380
    for g in report["graphs"]:
        for d in g["differences"]:
            assert d["a"] is not None  # the original's side is shown, and the generated's
    assert all(m["status"] == "same" for m in report["models"] if m["name"].startswith("random"))


def test_a_second_vendor_quantizer_in_another_style_imports_identical(tmp_path) -> None:
    # pt2e_subjects/borealis_dsp.py: per-op validate functions in a registry, walked from the
    # graph's end, uint8 activations, int16 multiplies, fixed-qparams lookup tables
    run = _import(tmp_path, "borealis_dsp:get_quantizer")
    assert run.returncode == 1, run.stderr  # the hooks module is not allowed, nothing differs
    assert "proved:" in run.stderr, run.stderr
    report = json.loads((tmp_path / "x.proof.json").read_text())
    assert all(g["status"] == "same" for g in report["graphs"]), [
        g["name"] for g in report["graphs"] if g["status"] != "same"
    ]
    assert len(report["graphs"]) >= 380


def _probes(*names: str) -> list[str]:
    return [a for n in names for a in ("--probe", n)]


def test_production_checks_are_found_and_said_in_the_hooks(tmp_path) -> None:
    # torchao's X86 Inductor: a conv whose weight is a model input is left float (its weight
    # is no parameter), a conv used twice is not fused with the add after it (its single
    # user); torchao's XNNPACK: an add of a constant beyond HistogramObserver's range is left
    # float, and a weight that is a model input gets the weight's spec (by position)
    x86 = ("fan_out", "conv2d_functional_weight_input", "conv2d_no_bias", "conv2d", "conv->add")
    run = _import(tmp_path, f"{PRODUCTION}:x86_inductor", "--export", "non-strict", *_probes(*x86))
    assert run.returncode == 1, run.stderr  # the hooks module is not allowed
    assert "proved:" in run.stderr, run.stderr
    hooks = (tmp_path / "x_hooks.py").read_text()
    assert "return _check_weight_param(match.node)\n" in hooks
    assert "return _check_weight_param(match.node) and _check_single_user(match.node)\n" in hooks
    assert "when: hooks.when_conv2d_default__add_Tensor" in (tmp_path / "x.bcfg").read_text()
    xnnpack = ("add", "add_scalar", "add_large_scalar", "conv2d", "conv2d_functional_weight_input")
    run = _import(tmp_path, f"{PRODUCTION}:xnnpack", "--export", "non-strict", *_probes(*xnnpack))
    report = json.loads((tmp_path / "x.proof.json").read_text())
    assert all(g["status"] == "same" for g in report["graphs"] if g["kind"] == "probe"), report
    assert "_check_no_large_scalar(match.node)" in (tmp_path / "x_hooks.py").read_text()
    assert "base: hooks.PositionalWeights" in (tmp_path / "x.bcfg").read_text()
    # torchao's XNNPACK (strict: its source partitions): adaptive_avg_pool2d shares its input's
    # observer after a quantized op and has a spec of its own after an unquantized one
    pools = ("adaptive_avg_pool2d", "conv2d->adaptive_avg_pool2d", "conv2d")
    run = _import(tmp_path, f"{PRODUCTION}:xnnpack", "--export", "strict", *_probes(*pools))
    report = json.loads((tmp_path / "x.proof.json").read_text())
    assert all(g["status"] == "same" for g in report["graphs"] if g["kind"] == "probe"), report
    assert (
        "a spec of its own, output shares the first input's edge after an unquantized one"
        in (tmp_path / "x.bcfg").read_text()
    )
    # acme, on the probes that differed: a weight that is a model input keeps the weight's
    # spec, an add of int tensors is quantized (the composable scheme quantizes float only)
    odd = ("int_add", "add", "conv2d_functional_weight_input", "linear_weight_input", "fan_out")
    run = _import(tmp_path, "acme_npu:get_quantizer", *_probes(*odd, "conv2d->relu"))
    report = json.loads((tmp_path / "x.proof.json").read_text())
    assert all(g["status"] == "same" for g in report["graphs"] if g["kind"] == "probe"), report
    spec = (tmp_path / "x.bcfg").read_text()
    assert "base: [hooks.PositionalWeights, hooks.NonFloatInputs]" in spec
