"""Never half-written: a ``bcfg generate`` killed with SIGKILL leaves every file old or new.

A project of many backends is generated once (the "old" files), its specs are
changed so that every file changes, and the expected "new" files are generated
in a second copy. Then ``bcfg generate`` runs on the old tree and is killed at
several moments after it starts writing. Every generated module must then be,
byte for byte, either its old or its new content: never partial, never empty.

To kill inside the write phase for certain, the killed runs slow down
``os.fsync`` (which the writer calls between writing a temporary file and
renaming it into place) by a few milliseconds; nothing else is changed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO

N_BACKENDS = 60
FSYNC_DELAY = 0.02  # seconds per file: the write phase lasts about N_BACKENDS * FSYNC_DELAY

# Run the CLI with os.fsync slowed down; argv after -c is the CLI's.
_SLOW_RUNNER = f"""
import os, sys, time
_fsync = os.fsync
def _slow_fsync(fd):
    time.sleep({FSYNC_DELAY})
    _fsync(fd)
os.fsync = _slow_fsync
from generator.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _spec(i: int, version: str) -> str:
    return (
        f"# backend {i}, {version}\n"
        f"dtypes d = {{input: quint8, output: quint8, weight: qint8, bias: float}}\n"
        f'backend b{i:03d} "b{i:03d}-{version}" {{\n'
        f"    pattern nn.Linear {{ dtypes: d  root: nn.Linear  reference: nnqr.Linear }}\n"
        f"    pattern (nn.Conv2d, nn.ReLU) {{ dtypes: d  fuser: sequential(nni.ConvReLU2d)  fused: nni.ConvReLU2d }}\n"
        f"}}\n"
    )


def _project(root: Path, version: str) -> Path:
    (root / "specs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.bcfg]\nspecs = "specs"\nout = "generated"\n')
    for i in range(N_BACKENDS):
        (root / "specs" / f"b{i:03d}.bcfg").write_text(_spec(i, version))
    return root


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}


def _generate(root: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "generator", "generate"],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("*.py")}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """(old project, old files, new files): generated before and after every spec changes."""
    old = _project(tmp_path_factory.mktemp("old"), "v1")
    _generate(old)
    new = _project(tmp_path_factory.mktemp("new"), "v2")
    _generate(new)
    old_files, new_files = _contents(old / "generated"), _contents(new / "generated")
    assert set(old_files) == set(new_files) and len(old_files) == N_BACKENDS + 1
    assert all(old_files[n] != new_files[n] for n in old_files)
    return old, old_files, new_files


def _kill_during_write(root: Path, old_files: dict[str, bytes], delay: float) -> None:
    """Start generate, wait until it begins writing, wait ``delay`` more, SIGKILL it."""
    gen = root / "generated"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUNNER, "generate"],
        cwd=root,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            names = os.listdir(gen)
            if any(n.endswith(".tmp") for n in names) or any(
                (gen / n).read_bytes() != old_files[n] for n in old_files if n in names
            ):
                break
            time.sleep(0.001)
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.5, 0.9])
def test_sigkill_leaves_every_file_old_or_new(versions, tmp_path, delay):
    old, old_files, new_files = versions
    root = tmp_path / "project"
    shutil.copytree(old, root)
    for i in range(N_BACKENDS):  # every spec changes: the run rewrites every file
        (root / "specs" / f"b{i:03d}.bcfg").write_text(_spec(i, "v2"))
    _kill_during_write(root, old_files, delay)
    after = _contents(root / "generated")
    assert set(after) == set(old_files), "no generated module is lost or added"
    states = {}
    for name, data in after.items():
        assert data in (
            old_files[name],
            new_files[name],
        ), f"{name} is neither old nor new ({len(data)} bytes)"
        states[name] = "new" if data == new_files[name] else "old"
    # Leftovers of a killed run can only be hidden temporary files, never a module.
    leftovers = [
        n for n in os.listdir(root / "generated") if not n.endswith(".py") and n != "__pycache__"
    ]
    assert all(n.startswith(".") and n.endswith(".tmp") for n in leftovers), leftovers
    if 0 < delay < N_BACKENDS * FSYNC_DELAY / 2:
        # Killed in the middle of the write phase: some files already new, some still old.
        assert "new" in states.values() and "old" in states.values(), states
    # A later complete run finishes the job and clears the killed run's temporary files.
    _generate(root)
    assert _contents(root / "generated") == new_files
    assert not [n for n in os.listdir(root / "generated") if n.endswith(".tmp")]
