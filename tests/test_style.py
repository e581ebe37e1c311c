"""The project's own Python passes its checks: black (the same pinned black that formats
generated code), ruff and mypy, with the settings in pyproject.toml and zero findings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_black_clean():
    out = _run("black", "--check", "-q", "generator", "tests", "benchmarks", "docs/hooks.py")
    assert out.returncode == 0, out.stderr


def test_ruff_clean():
    out = _run("ruff", "check", "--no-cache", "generator", "tests", "benchmarks", "docs/hooks.py")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mypy_clean():
    out = _run("mypy", "--no-incremental")
    assert out.returncode == 0, out.stdout + out.stderr
