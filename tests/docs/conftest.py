"""The documentation site, built once per test run with ``mkdocs build --strict``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import REPO

ABSENT = "MkDocs is not installed: pip install -e '.[docs]' (.ci/run installs it)"


@dataclass(frozen=True)
class Site:
    root: Path  # the built site
    log: str  # what mkdocs printed
    seconds: float


def require_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{ABSENT}; in CI it must be")
        pytest.skip(ABSENT)


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Site:
    require_mkdocs()
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stdout + done.stderr
    return Site(out, done.stdout + done.stderr, seconds)
