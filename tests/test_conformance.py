"""Conformance: every target's generated quantizer annotates its zoo as the recorded reference did.

The recordings (``tests/recordings/TARGET/``, made by ``python -m tests.record``: see
``tests/record.py``) hold each zoo model exported and the reference quantizer's
annotations of it. Here each program is loaded and annotated by the generated class
alone, and compared node by node, spec by spec (``tests/live/pt2e_dump.py``): no
reference class, no lowering. A recording made with other versions of torch, torchao or
ExecuTorch fails its target's tests, named, with the command that re-records it. The
targets whose generated class imports ExecuTorch's Arm code (its configs, its pass
pipeline) compare in the Arm environment (``tests/live/envs.py``), still against the
recording alone. The reference runs themselves (swapped suites, deployments) are the
full tier (docs/contributing/tests.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest

from tests.record import ROOT, Stale, compare, compare_deployment, folder, load, versions
from tests.support import REPO
from tests.targets import BY_NAME, TARGETS, Target

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")

HERE = [t for t in TARGETS if not t.record_env]  # compared in this environment
ELSEWHERE = [t for t in TARGETS if t.record_env]


def _models(target: Target) -> list[str]:
    path = folder(target) / "recording.json"
    return sorted(json.loads(path.read_text())["models"]) if path.exists() else []


CASES = [(t.name, m) for t in HERE for m in _models(t)]


@pytest.mark.parametrize("target", [t.name for t in TARGETS])
def test_every_target_is_recorded_on_its_whole_zoo_with_these_versions(target):
    t = BY_NAME[target]
    made = load(t)  # Stale: missing, or other versions
    assert sorted(made["models"]) == sorted(t.models()), f"re-record: {made['command']}"
    assert all(m["nodes"] for m in made["models"].values())


@pytest.mark.parametrize(("target", "model"), CASES)
def test_generated_annotates_as_recorded(target, model):
    assert compare(BY_NAME[target], model) == []


# The deploy targets' recordings hold the reference's deployment of each program: here the
# generated class goes through the same flow up to convert_pt2e (nothing lowered), and its
# converted model's outputs and q/dq nodes must be the recorded ones bit for bit; lowered and
# run, the program's bytes and runtime outputs, is tests/live/test_executorch_deploy.py's.
DEPLOY = [(t.name, m) for t in HERE if t.deploy for m in _models(t)]


@pytest.mark.parametrize(("target", "model"), DEPLOY)
def test_generated_converts_as_recorded(target, model):
    assert compare_deployment(BY_NAME[target], model, lower=False) == []


def test_every_deploy_target_records_its_deployments():
    assert DEPLOY and {t for t, _ in DEPLOY} == {t.name for t in TARGETS if t.deploy}
    for t in [t for t in TARGETS if t.deploy]:
        entries = [e["deploy"] for e in load(t)["models"].values()]
        assert all(e["converted"]["outputs"] and "deployed" in e for e in entries)
        assert sum(bool(e["deployed"]["runtime"]) for e in entries) >= len(entries) // 2


# Cortex-M's and Arm TOSA's generated classes, compared in a process of their own with
# tests/live/tosa_stand_in.py's tosa_serializer: then with no rule but cat's (as the vendors'
# test below), most models must differ, so the comparison there can fail.
ELSEWHERE_CODE = """
import json, sys
import torch
from tests.record import compare, load
from tests.targets import BY_NAME
t = BY_NAME[sys.argv[1]]
models = sorted(load(t)["models"])
report = {m: compare(t, m) for m in models}
cls = t.generated_class()
cat = torch.ops.aten.cat.default
cls.rules = tuple(r for r in cls.rules if r.chain[0][0] == cat)
print(json.dumps({"report": report, "without rules": [m for m in models if compare(t, m)]}))
"""


@pytest.mark.parametrize("target", [t.name for t in ELSEWHERE])
def test_generated_annotates_as_recorded_without_the_arm_environment(target, tmp_path):
    """Cortex-M's and Arm TOSA's generated classes load ExecuTorch's Arm configs (and TOSA's
    runs Arm's passes), whose package imports ``tosa_serializer`` (the Arm environment's):
    annotated here with a stand-in for it that raises if used, against the recording alone."""
    script = tmp_path / "compare.py"
    script.write_text(ELSEWHERE_CODE)
    run = subprocess.run(
        [sys.executable, "-m", "tests.live.tosa_stand_in", str(script), target],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=1200,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = json.loads(run.stdout[run.stdout.index("{") :])
    models = _models(BY_NAME[target])
    assert sorted(out["report"]) == models and len(models) >= 8
    assert {m: d for m, d in out["report"].items() if d} == {}
    assert len(out["without rules"]) >= len(models) * 3 // 4, out["without rules"]


def test_the_comparison_imports_neither_executorch_nor_a_reference_class():
    """Compared in a process of its own: the targets whose generated module and hooks name
    no ExecuTorch module (Cadence's loads ExecuTorch's configs and patterns itself; MediaTek's,
    Samsung's and NXP's hooks their qconfig modules and passes) and load nothing first."""
    own = [
        t.name
        for t in HERE
        if not t.before
        and not any(
            "executorch.backends" in (REPO / path).read_text()
            for path in (f"generated/{t.name}_quantizer.py", *t.hooks)
        )
    ]
    assert len(own) >= 5 and "vulkan" in own
    code = (
        "import sys\n"
        "from tests.record import compare, compare_deployment, load\n"
        "from tests.targets import BY_NAME\n"
        f"for t in [BY_NAME[n] for n in {own!r}]:\n"
        "    assert all(compare(t, m) == [] for m in load(t)['models']), t.name\n"
        "    if t.deploy:\n"
        "        assert all(compare_deployment(t, m, False) == [] for m in load(t)['models'])\n"
        "refs = {t.reference.partition(':')[0] for t in BY_NAME.values()}\n"
        "print(sorted(m for m in sys.modules if m.startswith('executorch') or m in refs))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert run.stdout.strip() == "[]", run.stdout[:2000]


class AnnotatesNothing:
    """A generated class's stand-in that annotates nothing."""

    def __init__(self, *args, **kwargs):
        from generated.xnnpack_quantizer import XnnpackQuantizer

        self.inner = XnnpackQuantizer(*args, **kwargs)

    def set_global(self, config):
        return self

    def transform_for_annotation(self, model):
        return model

    def annotate(self, model):
        return model

    def validate(self, model):
        pass


def test_the_comparison_catches_a_class_that_annotates_nothing():
    t = dataclasses.replace(BY_NAME["xnnpack"], stands_in=f"{__name__}:AnnotatesNothing")
    assert "annotated nodes differ" in " ".join(compare(t, "conv_bn_relu"))


@pytest.mark.parametrize("target", ["vulkan", "neuropilot", "enn", "nxp", "qualcomm"])
def test_the_comparison_catches_a_vendor_class_without_its_rules(target, monkeypatch):
    """The vendor targets compared with their recordings alone in the PR tier (their reference
    runs are the full tier's): the generated class with no rule but cat's (NXP's class needs
    that one) differs on most models (Samsung's op table annotates add, index, unbind, cat
    and the norms without a rule)."""
    import torch

    t = BY_NAME[target]
    cls = t.generated_class()
    cat = torch.ops.aten.cat.default
    monkeypatch.setattr(cls, "rules", tuple(r for r in cls.rules if r.chain[0][0] == cat))
    models = sorted(load(t)["models"])
    differ = [m for m in models if compare(t, m)]
    assert len(differ) >= len(models) * 3 // 4, sorted(set(models) - set(differ))


def test_the_deploy_comparison_catches_a_class_that_annotates_nothing():
    t = dataclasses.replace(BY_NAME["xnnpack_executorch"], stands_in=f"{__name__}:AnnotatesNothing")
    differ = " ".join(compare_deployment(t, "conv_bn_relu", lower=False))
    assert "converted qdq" in differ and "converted outputs" in differ


def test_the_comparison_catches_another_config(tmp_path):
    """The per-channel config where the per-tensor one (the default) was recorded."""
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    t = BY_NAME["xnnpack"]
    shutil.copytree(folder(t), tmp_path / t.name)
    config = get_symmetric_quantization_config(is_per_channel=True)
    (tmp_path / t.name / "config.pkl").write_bytes(pickle.dumps(config))
    diffs = compare(t, "conv_bn_relu", tmp_path)
    assert diffs and "per_channel_symmetric" in " ".join(diffs)


@pytest.mark.parametrize("package", ["torch", "torchao", "executorch"])
def test_a_recording_of_other_versions_is_named_not_compared(tmp_path, package):
    t = BY_NAME["xnnpack"]
    shutil.copytree(folder(t), tmp_path / t.name)
    path = tmp_path / t.name / "recording.json"
    made = json.loads(path.read_text())
    made[package] = "0.0.1"
    path.write_text(json.dumps(made))
    with pytest.raises(Stale) as caught:
        compare(t, "conv_bn_relu", tmp_path)
    message = str(caught.value)
    assert str(path) in message and "is stale" in message
    assert f"{package} 0.0.1 (here {versions()[package]})" in message
    assert "python -m tests.record xnnpack" in message


def test_a_missing_recording_is_named(tmp_path):
    with pytest.raises(Stale, match="no recording of cadence: python -m tests.record cadence"):
        load(BY_NAME["cadence"], tmp_path)


def test_the_recordings_are_the_registrys_targets():
    assert sorted(p.name for p in ROOT.iterdir() if p.is_dir()) == sorted(BY_NAME)


def test_the_tosa_stand_in_raises_when_used():
    """tests/live/tosa_stand_in.py lets Arm's modules import, and fails anything that would
    serialize TOSA, so the comparison above cannot pass on a fake serializer."""
    code = (
        "from tests.live.tosa_stand_in import install\n"
        "assert install()\n"
        "import tosa_serializer as ts\n"
        "table = {ts.DType.INT8: 'int8'}\n"
        "class Op(ts.TosaOp): pass\n"
        "ts.TosaSerializer('x')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 1
    assert "RuntimeError: tosa_serializer stand-in" in run.stderr
    assert "tosa_serializer.TosaSerializer was called" in run.stderr
