"""Entry points ``tests/infra/test_isolate.py`` runs in ``infra.isolate``'s child process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class Abort(BaseException):
    """A project's own way to stop: a BaseException that is no Exception."""


def aborts(request: dict, channel: Any) -> dict:
    channel.phase("calling the user's code")
    raise Abort("stopped by the project")


def breaks(request: dict, channel: Any) -> dict:
    raise KeyError("a bug of bcfg's")


def scratch(request: dict, channel: Any) -> dict:
    folder = Path(os.environ["BCFG_SCRATCH"])
    (folder / "left.txt").write_text("scratch\n")
    return {"folder": str(folder)}
