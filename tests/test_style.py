"""The project's own Python is black-formatted (the same pinned black that formats generated code)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO


def test_black_clean():
    out = subprocess.run(
        [sys.executable, "-m", "black", "--check", "-q", "generator", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
