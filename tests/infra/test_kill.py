"""Never half-written: a ``bcfg generate`` killed with SIGKILL leaves the set old, new, or finishable.

A project of many backends is generated once (the "old" files), its specs are
changed so that every file changes, and the expected "new" files are generated
in a second copy. Then ``bcfg generate`` runs on the old tree and is killed:

- while it writes temporary files (phase 1): every module is old;
- while it renames them into place (phase 2): every module is old or new, the
  journal says what is left, and the next run finishes the set;
- at random moments (``BCFG_KILL_ROUNDS``, default 6; run with 50 for a soak):
  every module is old or new, never partial; without a journal the whole set
  is old or the whole set is new.

To kill inside a phase for certain, the killed runs slow down ``os.fsync``
(phase 1) or ``os.replace`` (phase 2) by a few milliseconds; nothing else is
changed.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from generator.infra.write import JOURNAL
from tests.support import REPO

N_BACKENDS = 60
DELAY = 0.02  # seconds per file in the slowed-down phase
ROUNDS = int(os.environ.get("BCFG_KILL_ROUNDS", "6"))

# Run the CLI with one os function slowed down; argv after -c is the CLI's.
_SLOW_RUNNER = """
import os, sys, time
_slow = sys.argv.pop(1)
_delay = float(sys.argv.pop(1))
_real = getattr(os, _slow)
def _slowed(*args, **kwargs):
    time.sleep(_delay)
    return _real(*args, **kwargs)
setattr(os, _slow, _slowed)
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
    # Every module changes; __init__.py does not (the backends keep their module names).
    assert all(old_files[n] != new_files[n] for n in old_files if n != "__init__.py")
    return old, old_files, new_files


def _changed_copy(versions, tmp_path: Path) -> Path:
    old = versions[0]
    root = tmp_path / "project"
    shutil.copytree(old, root)
    for i in range(N_BACKENDS):  # every spec changes: the run rewrites every file
        (root / "specs" / f"b{i:03d}.bcfg").write_text(_spec(i, "v2"))
    return root


def _kill(root: Path, slow: str, delay: float, journal: bool = False) -> None:
    """Start generate with ``os.<slow>`` slowed; SIGKILL it ``delay`` after it begins writing.

    With ``journal``, after it begins renaming (its journal is there).
    """
    gen = root / "generated"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUNNER, slow, str(DELAY), "generate"],
        cwd=root,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            names = os.listdir(gen)
            if JOURNAL in names or (not journal and any(n.endswith(".tmp") for n in names)):
                break
            time.sleep(0.001)
        time.sleep(delay)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _states(root: Path, old_files, new_files) -> dict[str, str]:
    """Each module's state, old or new; fails on anything partial, lost, added or left visible."""
    after = _contents(root / "generated")
    assert set(after) == set(old_files), "no generated module is lost or added"
    states = {}
    for name, data in after.items():
        assert data in (old_files[name], new_files[name]), f"{name} is neither old nor new"
        if old_files[name] == new_files[name]:
            continue  # untouched by the change (__init__.py: the same backends), never rewritten
        states[name] = "new" if data == new_files[name] else "old"
    # Leftovers of a killed run are hidden: temporary files and the journal.
    leftovers = [
        n for n in os.listdir(root / "generated") if not n.endswith(".py") and n != "__pycache__"
    ]
    assert all(n.startswith(".") for n in leftovers), leftovers
    assert all(n.endswith(".tmp") or n == JOURNAL for n in leftovers), leftovers
    return states


def _finishes(root: Path, new_files) -> None:
    """A later complete run finishes the job and clears the killed run's files."""
    _generate(root)
    assert _contents(root / "generated") == new_files
    assert not [n for n in os.listdir(root / "generated") if n.startswith(".")]


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.8])
def test_killed_while_writing_temporaries_leaves_the_old_set(versions, tmp_path, delay):
    _, old_files, new_files = versions
    root = _changed_copy(versions, tmp_path)
    _kill(root, "fsync", delay)
    states = _states(root, old_files, new_files)
    assert set(states.values()) == {"old"}, states
    assert not (root / "generated" / JOURNAL).exists()
    _finishes(root, new_files)


@pytest.mark.parametrize("delay", [0.1, 0.5])
def test_killed_while_renaming_the_next_run_finishes_the_set(versions, tmp_path, delay):
    _, old_files, new_files = versions
    root = _changed_copy(versions, tmp_path)
    _kill(root, "replace", delay, journal=True)
    states = _states(root, old_files, new_files)
    assert "new" in states.values() and "old" in states.values(), states
    assert (root / "generated" / JOURNAL).exists()
    # __init__.py is renamed last (when it changes; here the backends stay the same, so it is
    # not rewritten at all; tests/infra/test_write.py checks the order with new modules).
    assert states.get("__init__.py", "old") == "old"
    _finishes(root, new_files)


def test_killed_at_random_moments(versions, tmp_path):
    """BCFG_KILL_ROUNDS kills at random moments of the write phase (fixed seed)."""
    _, old_files, new_files = versions
    rng = random.Random(11)
    seen: Counter[tuple[str, str, bool]] = Counter()
    for round_ in range(ROUNDS):
        root = _changed_copy(versions, tmp_path / str(round_))
        slow = rng.choice(["fsync", "replace"])
        _kill(root, slow, rng.uniform(0, 1.4 * N_BACKENDS * DELAY))
        states = set(_states(root, old_files, new_files).values())
        if not (root / "generated" / JOURNAL).exists():
            assert len(states) == 1, "without a journal the set is whole: all old or all new"
        journal = (root / "generated" / JOURNAL).exists()
        seen[(slow, "+".join(sorted(states)), journal)] += 1
        _finishes(root, new_files)
        shutil.rmtree(root)
    print(f"\nkill outcomes (slowed call, module states, journal left): {sorted(seen.items())}")
