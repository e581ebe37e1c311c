"""What the tests share: the repository, torch's eight backends and their getters."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


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


def tree(folder: Path) -> dict[str, Path]:
    """Every file under ``folder`` (a generated package: the runtime's sub-folder too), by its
    relative POSIX path, caches left out."""
    return {
        p.relative_to(folder).as_posix(): p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
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


def run_cli(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """Run ``bcfg ARGS`` in-process in ``cwd``: (exit code, stdout, stderr)."""
    import contextlib
    import io
    import os
    import sys

    from generator import cli

    out, err = io.StringIO(), io.StringIO()
    old, real_stdin = os.getcwd(), sys.stdin
    try:
        os.chdir(cwd)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = cli.main(list(args))
    finally:
        os.chdir(old)
        sys.stdin = real_stdin
    return code, out.getvalue(), err.getvalue()


def scratch_project(tmp_path: Path, monkeypatch) -> Path:
    """A scratch project (pyproject, specs) with its own cache folder, as the working directory."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("BCFG_CACHE_DIR", raising=False)
    monkeypatch.delenv("BCFG_NO_CACHE", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(root)
    return root


def shipped_table():  # -> generator.semantics.shipped.Shipped
    """The torch facts bcfg ships for the installed torch build; the test is skipped without
    them (a build bcfg has no table for), and fails under CI, whose torch must have one."""
    import os

    import pytest

    from generator.semantics import shipped

    table = shipped.load()
    if table is None:
        message = "bcfg ships no torch facts for the installed torch build"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return table
