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
  timeout (its whole process group is killed) is a one-line ``IsolationError``.

The child runs with ``PYTHONHASHSEED=0``, so the order of sets of strings is the
same in every run. Standard library only.

    python -m generator.infra.isolate MODULE:FUNCTION   # the child: JSON request on stdin
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import IO, Any


class IsolationError(Exception):
    """The child did not return a result: why, in one line."""


def run_isolated(entry: str, request: dict, timeout: float | None, err: IO[str], what: str) -> dict:
    """Call ``entry(request)`` (``module:function``) in a child process; return its JSON result.

    ``what`` names the work in messages (``the import of pkg:get_config``).
    """
    env = {**os.environ, "PYTHONHASHSEED": "0"}
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
    os.close(write_fd)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    deadline = None if timeout is None else time.monotonic() + timeout
    result, phase = _collect(proc, read_fd, deadline, err)
    try:
        left = None if deadline is None else max(0.1, deadline - time.monotonic())
        code = proc.wait(left)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise IsolationError(
            f"{what} did not finish within {timeout:g} s (--timeout) while {phase}; "
            "the target's code may never return"
        ) from None
    if result is not None:
        return result
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        raise IsolationError(f"{what} was killed by signal {name} while {phase}")
    raise IsolationError(
        f"{what} ended (exit status {code}) while {phase}, before bcfg had a result: "
        "the target's code ended the process (os._exit?)"
    )


def _collect(
    proc: subprocess.Popen, read_fd: int, deadline: float | None, err: IO[str]
) -> tuple[dict | None, str]:
    """Forward the child's output to ``err`` and read its result, until both end or time runs out."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    out_fd = proc.stdout.fileno()
    sel.register(out_fd, selectors.EVENT_READ)
    sel.register(read_fd, selectors.EVENT_READ)
    buffer, phase, result = b"", "starting", None
    try:
        while sel.get_map():
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait == 0.0:
                return None, phase
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
                            phase = line[6:].decode("utf-8", "replace")
                        elif line.startswith(b"result "):
                            result = json.loads(line[7:])
    finally:
        sel.close()
        os.close(read_fd)
    return result, phase


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


class Channel:
    """The child's side: progress and the result, on the pipe the parent reads."""

    def __init__(self, fd: int):
        self.file = os.fdopen(fd, "wb", buffering=0)

    def phase(self, text: str) -> None:
        self.file.write(b"phase " + " ".join(text.split()).encode() + b"\n")

    def result(self, value: Any) -> None:
        self.file.write(b"result " + json.dumps(value).encode() + b"\n")


def _child(entry: str, fd: int) -> int:
    import importlib
    import traceback

    request = json.loads(sys.stdin.read() or "{}")
    channel = Channel(fd)
    # Whatever writes to standard output now writes to the error stream.
    os.dup2(2, 1)
    module, _, function = entry.partition(":")
    try:
        value = getattr(importlib.import_module(module), function)(request, channel)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # noqa: BLE001  (reported to the parent as an internal error)
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        detail = " ".join(str(exc).split())[:200]
        place = f" ({os.path.basename(where.filename)}:{where.lineno})" if where else ""
        value = {"internal": f"{type(exc).__name__}: {detail}{place}"}
    channel.result(value)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], int(sys.argv[2])))
