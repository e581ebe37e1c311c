"""Shared fixtures: torch's own backend getters, the generated ones, the resolved specs."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from hypothesis import settings

from tests.support import REPO

# In CI every hypothesis test runs a fixed sequence of examples (no database,
# no fresh randomness), so a red build means a change, not a lucky draw.
# Locally each run explores new examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Keep bcfg's cache (and the CLI runs' caches) out of the user's cache folder."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(autouse=True)
def _restore_sys_path():
    """A CLI run in-process puts its project's root on ``sys.path`` (as the ``bcfg`` process
    would, for its whole life); the next test must not import that project's modules."""
    saved = list(sys.path)
    yield
    sys.path[:] = saved


@pytest.fixture(scope="session")
def resolved():
    """Every backend of specs/, resolved (not rendered), by module name."""
    from generator.config import find_project
    from generator.semantics.driver import resolve_specs

    project = find_project(REPO)
    result = resolve_specs(project.root, project.spec_files(), project.allow)
    return {b.module: b for b in result.backends}


@pytest.fixture(scope="session")
def every_backend(resolved):
    """``resolved`` and the PT2E-only targets (fx: false, no BackendConfig), by module name:
    every column of the support matrix."""
    from generator.config import find_project
    from generator.semantics.driver import resolve_specs

    project = find_project(REPO)
    result = resolve_specs(project.root, project.spec_files(), project.allow)
    return {**resolved, **{b.module: b for b in result.pt2e_only}}


@pytest.fixture
def project_copy(tmp_path):
    """A scratch copy of the project (pyproject, specs, generated, docs) to run the CLI in."""
    for name in ("specs", "generated", "docs"):
        shutil.copytree(REPO / name, tmp_path / name)
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def pytest_addoption(parser):
    parser.addoption(
        "--accept",
        action="store_true",
        default=False,
        help="tests/test_errors.py: write the current message of each error case as its expected one",
    )
