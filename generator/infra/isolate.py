"""Run code that runs a user's code in a child process: it cannot end bcfg, write into its output, or hang it.

``bcfg import`` imports a user's module and calls its functions (the target,
getters, fusers). Whatever that code does (``sys.exit()``, ``os._exit()``,
printing to standard output, looping forever, crashing the interpreter) happens
in a child process:

* the child's standard output and error go to bcfg's standard error (the
  user's prints are shown, never mixed into a spec on standard output);
* the child sends its result, one JSON line, on a pipe of its own, after
  progress lines (``phase <text>``) that say what it is doing;
* a child that exits without a result, is killed by a signal or runs past the
  timeout (its whole process group is killed) is a one-line ``IsolationError``;
* a process the user's code started and left behind (a helper that inherited
  the child's standard output) neither delays the result nor outlives the run:
  once the child has ended, its output is read for ``GRACE`` seconds at most,
  and everything it left (its process group, its session, any process holding
  its pipes) is killed.

The child runs with ``PYTHONHASHSEED=0``, so the order of sets of strings is the
same in every run. Standard library only.

    python -m generator.infra.isolate MODULE:FUNCTION   # the child: JSON request on stdin
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any


class IsolationError(Exception):
    """The child did not return a result: why, in one line."""


# The folder a child may write scratch files to (``compat``'s scratch package): the parent
# makes it and removes it once the child has ended, however it ended.
SCRATCH_ENV = "BCFG_SCRATCH"


def run_isolated(entry: str, request: dict, timeout: float | None, err: IO[str], what: str) -> dict:
    """Call ``entry(request)`` (``module:function``) in a child process; return its JSON result.

    ``what`` names the work in messages (``the import of pkg:get_config``). Once the child has
    ended, whatever it started and left behind (a helper that inherited its output) is killed,
    and its result is used: nothing waits for a helper to close the output it holds. If bcfg
    is stopped meanwhile (SIGINT, SIGTERM: how ``timeout`` and CI runners stop it), the child
    and what it started are killed first; so is its scratch folder removed (``SCRATCH_ENV``).
    """
    import shutil
    import tempfile

    with _terminated_raises():
        scratch = tempfile.mkdtemp(prefix="bcfg-child-")
        try:
            return _run(entry, request, timeout, err, what, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


class Terminated(BaseException):
    """bcfg received SIGTERM while a child ran (raised in the main thread, as SIGINT is)."""


@contextlib.contextmanager
def _terminated_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` (so that the child is killed on the
    way out); afterwards bcfg ends as SIGTERM would have ended it. Only where SIGTERM would
    end the process at once (its default handler, in the main thread): a program that
    handles or ignores it keeps its own way."""
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    stopping: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        if not stopping:  # once: a second SIGTERM must not cut the clean-up short
            stopping.append(signum)
            raise Terminated

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)  # ends the process, as SIGTERM does (status 143)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run(
    entry: str, request: dict, timeout: float | None, err: IO[str], what: str, scratch: str
) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": "0", SCRATCH_ENV: scratch}
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator.infra.isolate", entry, str(write_fd)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        pass_fds=(write_fd,),
        start_new_session=True,
    )
    got = _Collected()
    pipes: set[int] = set()
    try:
        os.close(write_fd)
        assert proc.stdin is not None and proc.stdout is not None
        pipes = {_inode(read_fd), _inode(proc.stdout.fileno())}
        try:
            proc.stdin.write(json.dumps(request).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        deadline = None if timeout is None else time.monotonic() + timeout
        _collect(proc, read_fd, deadline, err, got)
    finally:
        # On a timeout, an interrupt or SIGTERM, or what the user's code left behind.
        _reap(proc, pipes if got.held else set())
        if proc.stdout is not None:
            proc.stdout.close()
    result, phase = got.result, got.phase
    if result is not None:
        return result
    if got.timed_out:
        raise IsolationError(
            f"{what} did not finish within {timeout:g} s (--timeout) while {phase}; the target's code may never return"
        )
    code = proc.returncode
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        raise IsolationError(f"{what} was killed by signal {name} while {phase}")
    raise IsolationError(
        f"{what} ended (exit status {code}) while {phase}, before bcfg had a result: "
        "the target's code ended the process (os._exit?)"
    )


# How long output left in the pipes is read once the child has ended: what it wrote is there
# at once; a helper it started may hold the pipes open for ever.
GRACE = 0.5
POLL = 0.1  # how often a running child is looked at


@dataclass
class _Collected:
    """What reading the child gave: its result, its last phase, whether time ran out, and
    whether something still held its pipes when reading stopped."""

    result: dict | None = None
    phase: str = "starting"
    timed_out: bool = False
    held: bool = True


def _collect(
    proc: subprocess.Popen, read_fd: int, deadline: float | None, err: IO[str], got: _Collected
) -> None:
    """Forward the child's output to ``err`` and read its result into ``got`` until the child
    has ended and its output is read, or time runs out."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    out_fd = proc.stdout.fileno()
    sel.register(out_fd, selectors.EVENT_READ)
    sel.register(read_fd, selectors.EVENT_READ)
    buffer = b""
    ended: float | None = None  # when the child was seen to have exited
    try:
        while sel.get_map():
            now = time.monotonic()
            if ended is None and proc.poll() is not None:
                ended = now
            if ended is not None and now - ended > GRACE:
                break  # a helper holds the pipes: the child's own output has been read
            if deadline is not None and now >= deadline:
                got.timed_out = True
                return
            # Wake up to see whether the child has ended: a helper may hold its pipes open.
            wait = min(POLL if ended is None else GRACE, _left(deadline, now))
            for key, _ in sel.select(wait):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.fd == out_fd:
                    err.write(chunk.decode("utf-8", "replace"))
                    err.flush()
                else:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.startswith(b"phase "):
                            got.phase = line[6:].decode("utf-8", "replace")
                        elif line.startswith(b"result "):
                            got.result = json.loads(line[7:])
        else:
            got.held = False  # both pipes closed
    finally:
        sel.close()
        os.close(read_fd)
    try:  # the child is ending
        proc.wait(None if deadline is None else _left(deadline, time.monotonic()) + POLL)
    except subprocess.TimeoutExpired:
        got.timed_out = True


def _left(deadline: float | None, now: float) -> float:
    return float("inf") if deadline is None else max(0.0, deadline - now)


def _inode(fd: int) -> int:
    return os.fstat(fd).st_ino


def _reap(proc: subprocess.Popen, pipes: set[int]) -> None:
    """Kill the child, if it still runs, and everything it started that is still there: its
    process group, its session, and any process holding one of ``pipes`` (Linux: ``/proc``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()
    left = _left_behind(proc.pid, pipes)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    until = time.monotonic() + 2.0  # a killed process ends when it is next scheduled
    while left and time.monotonic() < until:
        left = [pid for pid in left if _running(pid)]
        if left:
            time.sleep(0.01)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, waiting for its parent to reap it, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _left_behind(session: int, pipes: set[int]) -> list[int]:
    """Processes of ``session`` (the child's) or with one of the ``pipes`` open, bcfg excluded."""
    found = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # no /proc: the process group is all that can be found
        return []
    holds = {f"pipe:[{ino}]" for ino in pipes}
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            if os.getsid(pid) == session:
                found.append(pid)
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in holds:
                    found.append(pid)
                    break
    return found


class Channel:
    """The child's side: progress and the result, on the pipe the parent reads."""

    def __init__(self, fd: int):
        self.file = os.fdopen(fd, "wb", buffering=0)

    def phase(self, text: str) -> None:
        self.file.write(b"phase " + " ".join(text.split()).encode() + b"\n")

    def result(self, value: Any) -> None:
        self.file.write(b"result " + json.dumps(value).encode() + b"\n")


def _detail(exc: BaseException) -> str:
    try:
        return " ".join(str(exc).split())[:200]
    except Exception:  # noqa: BLE001  (a user's exception whose __str__ raises)
        return ""


def _place(exc: BaseException) -> str:
    """Where ``exc`` was raised: `` (file.py:line)``."""
    import traceback

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    return f" ({os.path.basename(where.filename)}:{where.lineno})" if where else ""


def _child(entry: str, fd: int) -> int:
    import importlib

    request = json.loads(sys.stdin.read() or "{}")
    channel = Channel(fd)
    # Whatever writes to standard output now writes to the error stream.
    os.dup2(2, 1)
    module, _, function = entry.partition(":")
    try:
        value = getattr(importlib.import_module(module), function)(request, channel)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001  (reported to the parent as an internal error)
        value = {"internal": f"{type(exc).__name__}: {_detail(exc)}{_place(exc)}"}
    except BaseException as exc:  # noqa: BLE001  (bcfg raises none: the user's code raised it)
        value = {
            "failure": f"the target's code raised {type(exc).__name__}"
            f"{': ' if _detail(exc) else ''}{_detail(exc)}{_place(exc)}, which ended the run"
        }
    channel.result(value)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], int(sys.argv[2])))
