"""The two tiers (tests/conftest.py's FULL): the PR tier leaves the full tier's files out."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import FULL, SLOW
from tests.support import REPO

QUICK = "tests/infra/test_order.py"
HEAVY = "tests/live/test_executorch_swap.py"


def collected(*args: str) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return {line.split("::")[0] for line in run.stdout.splitlines() if "::" in line}


def test_every_full_tier_entry_is_a_test_file_and_not_also_slow():
    assert FULL and all((REPO / path).is_file() for path in FULL), sorted(FULL)
    assert not set(FULL) & set(SLOW)


def test_the_pr_tier_leaves_the_full_tier_out_and_full_or_m_full_take_it():
    assert collected(QUICK, HEAVY) == {QUICK}
    assert collected(QUICK, HEAVY, "--full") == {QUICK, HEAVY}
    assert collected(QUICK, HEAVY, "-m", "full") == {HEAVY}
    assert collected(HEAVY) == {HEAVY}  # a full-tier file named alone is run
    assert HEAVY not in collected(QUICK, HEAVY, "-m", "not slow", "--full")
