"""Closed or full standard streams: one line and a non-zero exit, never an internal error.

Every command that prints a result is run as a user runs it (a process of its
own) with standard output closed or on a full device (``/dev/full``), standard
input closed, standard error closed or full. When the result cannot be
written the run says so in one line on standard error and exits 2; when
nothing had to be written it ends as it would have; standard error that cannot
be written is given up, the exit status still tells. Never a traceback, never
"internal error".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import REPO
from tests.tools.test_diff import commit, git

# (arguments, whether the command writes a result on standard output, what it reads on stdin)
COMMANDS: list[tuple[tuple[str, ...], bool, bytes | None]] = [
    (("--version",), True, None),
    (("--help",), True, None),
    (("explain", "my_backend"), True, None),
    (("explain", "my_backend", "nn.Linear", "--format", "json"), True, None),
    (("diff", "HEAD", "--format", "json"), True, None),
    (("diff", "HEAD"), True, None),
    (("fmt", "-"), True, b"backend b {\n    pattern nn.ReLU {}\n}\n"),
    (("fmt", "--diff", "specs/my_backend.bcfg"), False, None),
    (("check",), False, None),
    (("explain", "no_such_backend"), False, None),
]
STATES = ["stdout closed", "stdout full", "stdin closed", "stderr closed", "stderr full"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("streams")
    for name in ("specs", "generated", "docs"):
        shutil.copytree(REPO / name, root / name)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    git(root, "init", "-q")
    commit(root, "project")
    return root


def run(root: Path, args: tuple[str, ...], state: str, stdin: bytes | None):
    """``bcfg ARGS`` with one standard stream closed or full: (exit code, stderr or None)."""
    full = open(os.devnull if "full" not in state else "/dev/full", "wb")  # noqa: SIM115
    closing = {"stdout closed": 1, "stdin closed": 0, "stderr closed": 2}.get(state)
    err_path = root / "stderr.txt"
    with open(err_path, "wb") as err:
        done = subprocess.run(
            [sys.executable, "-m", "generator", *args],
            cwd=root,
            **(
                {"input": stdin}
                if stdin is not None and closing != 0
                else {"stdin": subprocess.DEVNULL}
            ),
            stdout=full if state == "stdout full" else subprocess.PIPE,
            stderr=full if state == "stderr full" else err,
            env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
            preexec_fn=(lambda: os.close(closing)) if closing is not None else None,
            timeout=300,
            check=False,
        )
    full.close()
    said = None if state.startswith("stderr") else err_path.read_text(errors="replace")
    return done.returncode, said


def expected(args: tuple[str, ...], writes: bool, state: str, normal: int) -> int:
    if state in ("stdout closed", "stdout full") and writes:
        return 2
    if state == "stdin closed" and args == ("fmt", "-"):
        return 2
    return normal


NORMAL: dict[tuple[str, ...], int] = {}


def check_one(project: Path, case: int, state: str) -> None:
    args, writes, stdin = COMMANDS[case]
    if args not in NORMAL:
        NORMAL[args] = run(project, args, "none", stdin)[0]
    code, said = run(project, args, state, stdin)
    assert code == expected(args, writes, state, NORMAL[args]), (args, state, said)
    if said is not None:
        assert "internal error" not in said and "Traceback" not in said, said
        if code == 2 and NORMAL[args] != 2:
            (line,) = said.splitlines()
            stream = "standard input" if state == "stdin closed" else "standard output"
            assert stream in line and line.startswith("bcfg"), line


@pytest.mark.parametrize(
    "case, state",
    [
        (2, "stdout closed"),
        (3, "stdout full"),
        (6, "stdin closed"),
        (6, "stdout full"),
        (0, "stdout full"),
        (8, "stdout closed"),
    ],
)
def test_the_issues_cases(project, case, state):
    check_one(project, case, state)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, len(COMMANDS) - 1), st.sampled_from(STATES))
def test_any_command_with_any_stream_closed_or_full(project, case, state):
    check_one(project, case, state)


def test_a_reader_gone_away_is_exit_1_and_nothing_said(project):
    """``bcfg explain x | head -0``: the pipe is closed by the reader; nothing to report."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "explain", "onednn"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1 and err == ""
