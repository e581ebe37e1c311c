"""``bcfg compat`` stopped while the user's code hangs: the child it runs that code in (a
session of its own, which no terminal or ``timeout`` signals) never outlives it.

Each test runs bcfg as CI runs it, in a process of its own, with a mapping function that
writes the child's process id to a file and then sleeps; waits are bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO

SPEC = """\
dtypes d = {input: quint8, output: quint8, weight: qint8, bias: float}
backend tiny {
    pattern nn.Linear { dtypes: d  root: nn.Linear  reference: nnqr.Linear }
}
"""

USER = """\
import os
import time


def hangs():
    with open(os.environ["HANG_MARK"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
"""

WAIT = 120.0  # the longest a child may take to start (torch's import on a loaded machine)
TIMEOUT = 30  # --timeout of the timeout's test: twice the longest start seen at load 10


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["stop_user"]\n')
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tiny.bcfg").write_text(SPEC)
    (tmp_path / "stop_user.py").write_text(USER)
    (tmp_path / "tmp").mkdir()
    return tmp_path


def _start(project: Path, *extra: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HANG_MARK": str(project / "mark"),
        "TMPDIR": str(project / "tmp"),
        "NO_COLOR": "1",
    }
    argv = ["compat", "tiny", "--qconfig-mapping", "stop_user:hangs", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "generator", *argv],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal's Ctrl-C finds it (a shell's background job ignores it).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _child_pid(project: Path, proc: subprocess.Popen) -> int:
    """The pid of the child running the user's code, once it is in the hanging function."""
    mark = project / "mark"
    until = time.monotonic() + WAIT
    while not (mark.exists() and mark.read_text()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < until, "the child never reached the user's function"
        time.sleep(0.1)
    return int(mark.read_text())


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def _gone(pid: int) -> bool:
    until = time.monotonic() + 10
    while _running(pid) and time.monotonic() < until:
        time.sleep(0.05)
    return not _running(pid)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes in /proc")
@pytest.mark.parametrize(
    "sig, code",
    [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stopped_compat_kills_the_child_and_leaves_nothing(project, sig, code):
    proc = _start(project)
    try:
        child = _child_pid(project, proc)
        assert _running(child) and os.getsid(child) != os.getsid(proc.pid)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert proc.returncode == code
        assert _gone(child), f"the child {child} outlived bcfg"
        assert [p.name for p in (project / "tmp").iterdir() if p.name.startswith("bcfg")] == []
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes in /proc")
def test_a_check_past_its_timeout_is_stopped_with_a_message(project):
    # The timeout counts from the child's start (torch's import included: under 15 s at load
    # 10 on 2 cores), so the message names the phase the child hangs in; the test waits it out.
    proc = _start(project, "--timeout", str(TIMEOUT))
    try:
        child = _child_pid(project, proc)
        out, err = proc.communicate(timeout=WAIT)
        assert (proc.returncode, out) == (2, "")
        assert err.endswith(
            f"bcfg compat: the check of stop_user:hangs did not finish within {TIMEOUT} s (--timeout) "
            "while calling stop_user:hangs; the target's code may never return\n"
        ), err
        assert _gone(child)
    finally:
        proc.kill()
        proc.communicate()
