"""The tests that need an environment of tests/live/envs.py skip where it is not made, except
in CI, whose full tier makes the Arm one (.ci/full): there they fail, so it is never green."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.live.envs import ARM, Env
from tests.support import REPO


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("BCFG_ENVS", str(tmp_path))
    assert not ARM.ready()


def test_a_missing_environment_skips_outside_ci_and_says_how_to_make_it(nowhere, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="python -m tests.live.envs arm --create"):
        ARM.check("ExecuTorch's Arm quantizer")


def test_in_ci_a_missing_arm_environment_fails_and_one_ci_does_not_make_skips(nowhere, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI makes this environment .*arm --create"):
        ARM.check("ExecuTorch's Arm quantizer")
    # An environment CI does not make (in_ci false): its tests skip there too.
    other = Env("executorch-other", (), "import sys", "3.11")
    with pytest.raises(pytest.skip.Exception, match="other --create"):
        other.check("another quantizer")


def test_a_made_environment_runs_its_tests(nowhere, monkeypatch):
    monkeypatch.setenv("CI", "true")
    ARM.python().parent.mkdir(parents=True)
    ARM.python().write_text("")
    (ARM.root() / ".bcfg-ready").write_text("")
    ARM.check("ExecuTorch's Arm quantizer")  # neither skips nor fails


@pytest.mark.parametrize("ci", ["", "true"])
def test_the_marked_modules_skip_or_fail_through_the_conftest(ci, tmp_path):
    """Env.needed's mark reaches Env.check (tests/conftest.py) in a real pytest run."""
    env = {**os.environ, "BCFG_ENVS": str(tmp_path), "CI": ci}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly"]
        + ["tests/live/test_pt2e_cortex_m.py", "-k", "subset"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if ci:
        assert run.returncode == 1 and "1 error" in run.stdout, run.stdout
        assert "CI makes this environment before the tests" in run.stdout
    else:
        assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout
