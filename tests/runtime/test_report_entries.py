"""The report's entries on the benchmark's models, for every shipped PT2E target, against
entries saved (``report_entries.json``): a change in any entry (reason, detail, rule, scope,
role, specs) of any op fails here. Regenerate only for a change meant to alter the report:

    python -m tests.runtime.test_report_entries

Each target annotates a small conv net, transformer and cat-heavy net (the models of
``benchmarks/pt2e_scale.py``) with its default config globally, none for block 1 and the
default again for block 2 (three scopes), the report read before and after ``prepare_pt2e``.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402

from benchmarks.scale.models import FAMILIES, export  # noqa: E402
from benchmarks.scale.targets import TARGETS, Target  # noqa: E402
from tests.live.pt2e_support import report_read_early_and_late  # noqa: E402

SAVED = Path(__file__).with_name("report_entries.json")
BLOCKS = 3  # blocks of each model: block 1 and 2 get configs of their own


def _quantizer(target: Target) -> Any:
    config = target.make_config()
    q = target.generated_class("generated")().set_global(config)
    return q.set_module_name("1", None).set_module_name("2", config).report(None)


def _rows(report: Any) -> list[list[Any]]:
    return [list(e.__dict__.values()) for e in report.entries]


def _read(report: Any) -> dict[str, Any]:
    return {"entries": _rows(report), "matches": [list(m) for m in report.matches]}


def entries(target: Target, family: str) -> dict[str, Any]:
    """The report on one model, read in ``validate`` (after annotate, before prepare_pt2e
    inserts observers) and read after prepare_pt2e: the same."""
    fam = next(f for f in FAMILIES if f.name == family)
    gm = export(fam, BLOCKS)
    early, late = report_read_early_and_late(
        lambda: _quantizer(target), lambda: copy.deepcopy(gm), _read, lazy=False
    )
    assert late == early
    return early


# The targets configured as torchao's (set_global, set_module_name): the composable and pairs
# ones are made as ExecuTorch's flow makes them (``setup``); test_runtime_composable and
# test_runtime_pairs check their reports.
CASES = [(t.name, f.name) for t in TARGETS if not t.setup for f in FAMILIES]


@pytest.fixture(scope="module")
def saved() -> dict[str, Any]:
    return json.loads(SAVED.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("target", "family"), CASES)
def test_report_entries_are_the_saved_ones(saved: dict[str, Any], target: str, family: str) -> None:
    got = entries(next(t for t in TARGETS if t.name == target), family)
    assert got == saved[f"{target} {family}"]


def test_a_source_is_named_by_where_it_is_defined_not_its_address(saved: dict[str, Any]) -> None:
    """torch.cat's ``str`` holds its address: the cat net's source_partition detail names it
    ``torch.cat``, the same in every process."""
    details = [e[4] for case in saved.values() for e in case["entries"]]
    cat = [d for d in details if "matched by source partition (torch.cat)" in d]
    assert cat and not [d for d in details if " at 0x" in d]
    got = entries(next(t for t in TARGETS if t.name == "xnnpack_executorch"), "cat")
    assert [e for e in got["entries"] if "torch.cat)" in e[4]] == [
        e for e in saved["xnnpack_executorch cat"]["entries"] if "torch.cat)" in e[4]
    ]


if __name__ == "__main__":
    torch.manual_seed(0)
    out = {f"{t} {f}": entries(next(x for x in TARGETS if x.name == t), f) for t, f in CASES}
    SAVED.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    sys.exit(0)
