"""``bcfg import`` of PT2E quantizers on the whole probe zoo, both export modes (slow: minutes).

The vendor-style subject (``pt2e_subjects/acme_npu.py``): every graph the same but the two
behaviours the composable scheme does not have, each in the report with both sides (a
weight that is a model input, an add of int tensors). torchao's XNNPACK quantizer as
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


def _import(cwd: Path, target: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(REPO), str(SUBJECTS)])}
    (cwd / "pyproject.toml").write_text("[tool.bcfg]\n")
    return subprocess.run(
        [sys.executable, "-m", "generator", "import", target, "-o", "x.bcfg", "--format", "json",
         "--timeout", "1500", *extra],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=1600,
    )  # fmt: skip


def test_the_vendor_quantizer_imports_with_only_its_two_odd_behaviours_differing(tmp_path) -> None:
    run = _import(tmp_path, "acme_npu:get_quantizer")
    assert run.returncode == 1, run.stderr  # differences, and the hooks module is not allowed
    report = json.loads((tmp_path / "x.proof.json").read_text())
    differing = sorted({g["name"] for g in report["graphs"] if g["status"] == "differ"})
    assert differing == ["conv2d_functional_weight_input", "int_add", "linear_weight_input"]
    assert sum(g["status"] == "same" for g in report["graphs"]) >= 380
    for g in report["graphs"]:
        for d in g["differences"]:
            assert d["a"] is not None  # the original's side is shown, and the generated's
    assert all(m["status"] == "same" for m in report["models"] if m["name"].startswith("random"))
