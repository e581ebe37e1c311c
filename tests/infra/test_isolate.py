"""``infra.isolate``: what the child process's end says, and what it leaves behind.

The commands that run a user's code (``compat``, ``diff --configs``, ``import``) share it; the
signals that stop bcfg meanwhile are tests/tools/test_compat_stop.py's."""

from __future__ import annotations

import io
import re
from pathlib import Path

from generator.infra.isolate import run_isolated

ENTRIES = "tests.infra.isolated_entries"


def _run(entry: str) -> dict:
    return run_isolated(f"{ENTRIES}:{entry}", {}, 120, io.StringIO(), "the test")


def test_a_base_exception_of_the_users_code_is_its_failure_not_a_bug():
    """Not an Exception, so bcfg's code raised it not: it is the user's, named with its place."""
    result = _run("aborts")
    assert list(result) == ["failure"]
    assert re.fullmatch(
        r"the target's code raised Abort: stopped by the project \(isolated_entries\.py:\d+\), "
        "which ended the run",
        result["failure"],
    ), result


def test_an_exception_escaping_bcfgs_code_is_an_internal_error():
    result = _run("breaks")
    assert list(result) == ["internal"]
    assert re.fullmatch(
        r"KeyError: \"a bug of bcfg's\" \(isolated_entries\.py:\d+\)", result["internal"]
    )


def test_the_childs_scratch_folder_is_removed():
    folder = Path(_run("scratch")["folder"])
    assert folder.name.startswith("bcfg-child-") and not folder.exists()
