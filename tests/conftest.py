"""Shared fixtures: torch's own backend getters, the generated ones, the resolved specs."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Keep bcfg's cache (and the CLI runs' caches) out of the user's cache folder."""
    import os

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


BACKENDS = [
    "native",
    "fbgemm",
    "qnnpack",
    "x86",
    "onednn",
    "executorch",
    "tensorrt",
    "qnnpack_pt2e",
]

# torch 2.13's pattern config counts (shared/notes/torch-facts.md).
CONFIG_COUNTS = {
    "native": 194,
    "fbgemm": 192,
    "qnnpack": 190,
    "x86": 192,
    "onednn": 221,
    "executorch": 84,
    "tensorrt": 149,
    "qnnpack_pt2e": 13,
}


def torch_getter(name: str):
    """torch's own getter for a backend."""
    import torch.ao.quantization.backend_config as bc

    if name == "x86":
        return importlib.import_module(
            "torch.ao.quantization.backend_config.x86"
        ).get_x86_backend_config
    if name == "qnnpack_pt2e":
        return importlib.import_module(
            "torch.ao.quantization.backend_config._qnnpack_pt2e"
        ).get_qnnpack_pt2e_backend_config
    return getattr(bc, f"get_{name}_backend_config")


def generated_getter(name: str):
    """The checked-in generated getter for a backend."""
    return getattr(importlib.import_module(f"generated.{name}"), f"get_{name}_backend_config")


@pytest.fixture(scope="session")
def resolved():
    """Every backend of specs/, resolved (not rendered), by module name."""
    from generator.config import find_project
    from generator.pipeline import spec_files
    from generator.resolve import resolve_specs

    project = find_project(REPO)
    result = resolve_specs(project.root, spec_files(project), project.allow)
    return {b.module: b for b in result.backends}


@pytest.fixture
def project_copy(tmp_path):
    """A scratch copy of the project (pyproject, specs, generated) to run the CLI in."""
    for name in ("specs", "generated"):
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
