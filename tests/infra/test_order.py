"""The order xdist hands the files out in (tests/conftest.py): the longest first."""

from __future__ import annotations

from tests.conftest import SECONDS, SLOW, file_weight
from tests.support import REPO


def test_every_file_the_order_names_is_a_test_file():
    assert SECONDS and all((REPO / path).is_file() for path in SECONDS), sorted(SECONDS)


def test_the_listed_files_go_first_then_the_slow_ones_then_the_quick_ones():
    slow = next(p for p in SLOW if p.endswith(".py") and p not in SECONDS)
    listed = min(SECONDS.values())
    assert listed > file_weight(slow) > file_weight("tests/lang/test_highlight.py")
    assert file_weight("tests/docs/test_pages.py") == SECONDS["tests/docs/test_pages.py"]
