"""benchmarks/pt2e_scale.py runs: on tiny graphs, every target, the table and the plot.

Structure only (rows, columns, the SVG's lines, the docs markers); the times
are the benchmark's business, never asserted.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")
pytest.importorskip("executorch", reason="the ExecuTorch target's hand-written class")

from benchmarks import pt2e_scale  # noqa: E402
from benchmarks.scale.targets import TARGETS  # noqa: E402


def test_the_benchmark_times_every_target_on_a_tiny_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "plot.svg"
    assert (
        pt2e_scale.main(
            ["--sizes", "60", "160", "--rounds", "1", "--families", "conv", "--plot", str(plot)]
        )
        == 0
    )
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| conv |")]
    # One row a size and target in the table; then the growth rows (generated and hand-written).
    table = [r for r in rows if r.count("|") == 12]
    assert sorted(r.split("|")[3].strip() for r in table) == sorted(2 * [t.name for t in TARGETS])
    for r in table:
        cells = [c.strip() for c in r.split("|")[4:-1]]
        assert all(re.fullmatch(r"\d+\.\d{3}|\d+\.\d{2}x", c) for c in cells), r
    growth = [r for r in rows if r.count("|") == 6]
    assert {(r.split("|")[2].strip(), r.split("|")[3].strip()) for r in growth} == {
        (t.name, who) for t in TARGETS for who in ("generated", "hand-written")
    }
    svg = plot.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2 * len(TARGETS)


def test_a_capped_hand_written_class_is_left_out_above_its_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capped = [t for t in TARGETS if t.reference_max_nodes is not None]
    assert capped, "ExecuTorch's class is capped (it is ~100x slower)"
    args = ["--sizes", "40", "--rounds", "1", "--families", "cat", "--targets", capped[0].name]
    small = dataclasses.replace(capped[0], reference_max_nodes=10)
    monkeypatch.setattr(pt2e_scale, "TARGETS", (small,))
    assert pt2e_scale.main([*args, "--plot", str(tmp_path / "p.svg")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| cat |"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[3] == "—" and cells[8] == "—" and cells[4] != "—", row
    assert f"{capped[0].name} (over 10 nodes)" in out


def test_the_docs_markers_take_the_table(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"intro\n{pt2e_scale.BEGIN}\nold\n{pt2e_scale.END}\nafter\n")
    pt2e_scale.write_docs("new table", "<svg/>", page=page, where=tmp_path / "p.svg")
    assert page.read_text() == f"intro\n{pt2e_scale.BEGIN}\nnew table\n{pt2e_scale.END}\nafter\n"
    assert (tmp_path / "p.svg").read_text() == "<svg/>"
