"""benchmarks/pt2e_scale.py runs: on tiny graphs, every target, the table and the plot.

Structure only (rows, columns, the SVG's lines, the docs markers); the times
are the benchmark's business, never asserted.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")
pytest.importorskip("executorch", reason="the ExecuTorch target's hand-written class")

from benchmarks import pt2e_scale  # noqa: E402
from benchmarks.scale.targets import TARGETS, Target  # noqa: E402


def test_the_benchmark_times_every_target_on_a_tiny_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "plot.svg"
    assert (
        pt2e_scale.main(
            ["--sizes", "60", "160", "--rounds", "1", "--families", "conv", "--plot", str(plot)]
            + ["--timeout", "900"]  # ExecuTorch's class takes 8-20 s even here
        )
        == 0
    )
    out = capsys.readouterr().out
    here = [t for t in TARGETS if t.available()]  # the Arm ones import in their own environment
    rows = [line for line in out.splitlines() if line.startswith("| conv |")]
    # One row a size and target in the table; then a growth row a target (k of the generated
    # class and of the hand-written one, from the first size to the second).
    table = [r for r in rows if r.count("|") == 14]
    assert sorted(r.split("|")[3].strip() for r in table) == sorted(2 * [t.name for t in here])
    reports = {t.name: hasattr(t.generated_class("generated"), "report") for t in here}
    for r in table:
        cells = [c.strip() for c in r.split("|")[4:-1]]
        if not reports[r.split("|")[3].strip()]:  # no report(): its four columns are empty
            assert cells[3:7] == ["—"] * 4, r
            cells = cells[:3] + cells[7:]
        elif cells[3] == "no report":  # report() there, but its hooks' annotate keeps none
            assert cells[3:7] == ["no report", "—", "no report", "—"], r
            assert r.split("|")[3].strip() in out.split("did not report:")[1].split("\n\n")[1]
            cells = cells[:3] + cells[7:]
        assert all(re.fullmatch(r"\d+\.\d{3}|\d+\.\d{2}x", c) for c in cells), r
    growth = [[c.strip() for c in r.split("|")[2:-1]] for r in rows if r.count("|") == 8]
    assert sorted(g[0] for g in growth) == sorted(t.name for t in here)
    nodes: dict[str, list[int]] = {}  # each target's node counts, smaller graph first
    for r in table:
        nodes.setdefault(r.split("|")[3].strip(), []).append(int(r.split("|")[2].replace(",", "")))
    for target, sizes, *ks in growth:
        assert [int(n.replace(",", "")) for n in sizes.split("→")] == nodes[target], sizes
        assert all(re.fullmatch(r"-?\d+\.\d\d", k) for k in ks), ks
        assert ks[0] == ks[1] and ks[2] == ks[3]  # one step: each step is the overall
    svg = plot.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2 * len(here)
    # Each row compares the same work: both classes annotated the same nodes, some (Cadence's
    # on a strict export: on a non-strict one both annotate nothing).
    assert f"On each of the {2 * len(here)} rows where both annotates finished" in out, out


def test_a_call_over_the_time_limit_is_stopped_and_not_run_on_larger_graphs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = next(t for t in TARGETS if t.name == "xnnpack")
    slow = type("Slow", (target.reference_class(),), {"annotate": _sleeps})
    monkeypatch.setattr(Target, "reference_class", lambda self: slow)
    saved = tmp_path / "figures.json"
    args = ["--sizes", "40", "80", "--rounds", "2", "--families", "cat", "--targets", "xnnpack"]
    args += ["--timeout", "0.5", "--json", str(saved), "--plot", str(tmp_path / "p.svg")]
    assert pt2e_scale.main(args) == 0
    out = capsys.readouterr().out
    rows = [
        line for line in out.splitlines() if line.startswith("| cat |") and line.count("|") == 14
    ]
    small, large = ([c.strip() for c in r.split("|")[1:-1]] for r in rows)
    # stopped on the small graph; on the larger one not run at all; its prepare_pt2e neither
    assert small[3] == "> 0.5 s" and large[3] == "> 0.5 s*", rows
    assert small[10] == "> 0.5 s*" and large[10] == "> 0.5 s*", rows
    assert re.fullmatch(r"< \d+\.\d\dx", small[5]) and re.fullmatch(r"\d+\.\d{3}", small[4])
    assert (
        "<circle" in (tmp_path / "p.svg").read_text()
        and "stopped at 0.5 s" in (tmp_path / "p.svg").read_text()
    )
    # the saved figures render the same table without measuring
    assert (
        pt2e_scale.main(
            ["--from", str(saved), "--targets", "xnnpack", "--plot", str(tmp_path / "q.svg")]
        )
        == 0
    )
    assert capsys.readouterr().out == out


def test_a_call_that_raises_is_said_in_its_row_and_below_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-written class whose pass pipeline raises on the larger graph (Qualcomm's on the
    cat family, once): its annotate and prepare cells say ``raised``, what it raised is said
    below the table, the smaller graph's row is timed, and the saved figures render the same."""
    target = next(t for t in TARGETS if t.name == "xnnpack")
    fails = type("Fails", (target.reference_class(),), {"transform_for_annotation": _raises})
    monkeypatch.setattr(Target, "reference_class", lambda self: fails)
    saved = tmp_path / "figures.json"
    args = ["--sizes", "40", "80", "--rounds", "1", "--families", "cat", "--targets", "xnnpack"]
    args += ["--json", str(saved), "--plot", str(tmp_path / "p.svg")]
    assert pt2e_scale.main(args) == 0
    out = capsys.readouterr().out
    rows = [r for r in out.splitlines() if r.startswith("| cat |") and r.count("|") == 14]
    small, large = ([c.strip() for c in r.split("|")[1:-1]] for r in rows)
    assert re.fullmatch(r"\d+\.\d{3}", small[3]) and re.fullmatch(r"\d+\.\d\dx", small[5])
    assert large[3] == large[10] == "raised" and large[5] == large[12] == "—", large
    n = large[1]
    assert f"- xnnpack, hand-written annotate, on cat {n} nodes: `RuntimeError: {n}" in out
    assert f"- xnnpack, hand-written prepare_pt2e, on cat {n} nodes: `RuntimeError:" in out
    assert pt2e_scale.main(["--from", str(saved), "--plot", str(tmp_path / "q.svg")]) == 0
    assert capsys.readouterr().out == out


def _raises(self: object, model: Any) -> object:
    if len(model.graph.nodes) > 60:
        raise RuntimeError(f"{len(model.graph.nodes):,} nodes: the pass pipeline raised")
    return model


def _sleeps(self: object, model: object) -> object:
    time.sleep(5)
    return model


def test_the_docs_markers_take_the_table(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"intro\n{pt2e_scale.BEGIN}\nold\n{pt2e_scale.END}\nafter\n")
    pt2e_scale.write_docs("new table", "<svg/>", page=page, where=tmp_path / "p.svg")
    assert page.read_text() == f"intro\n{pt2e_scale.BEGIN}\nnew table\n{pt2e_scale.END}\nafter\n"
    assert (tmp_path / "p.svg").read_text() == "<svg/>"


def test_figures_of_two_environments_merge_into_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each environment measures the targets that import in it (--json); --from merges them,
    a row for each target measured on a graph and none for the others. The other
    environment's torch exported the same model with a node fewer: each row shows the count
    its target was measured on (a graph keyed by its node count lost the first run's rows)."""
    names = ["xnnpack", "cortex_m"]
    saved = []
    for i, name in enumerate(names):
        f = pt2e_scale.Figures(20.0, 5.0)
        f.counts[("transformer", 100)] = 98 - i
        f.times[("transformer", 98 - i, name, "gen")] = [0.01 * (i + 1)]
        f.times[("transformer", 98 - i, name, "ref")] = [0.02]
        saved.append(tmp_path / f"{name}.json")
        targets = [t for t in TARGETS if t.name == name]
        saved[-1].write_text(pt2e_scale.as_json(f, 1, targets))
    args = ["--from", *map(str, saved), "--plot", str(tmp_path / "p.svg")]
    assert pt2e_scale.main(args) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.count("|") == 14]
    assert [r.split("|")[3].strip() for r in rows[2:]] == names
    assert [r.split("|")[6].strip() for r in rows[2:]] == ["0.50x", "1.00x"]
    assert [r.split("|")[2].strip() for r in rows[2:]] == ["98", "97"]


def test_each_timed_annotate_starts_from_the_graph_as_it_was_before_any():
    """A class that marks the nodes it matched and passes over marked ones (as ExecuTorch's
    Arm classes do) annotates the same nodes in every round: the meta is put back, not only
    the annotations cleared."""
    import torch

    class Marks:
        def transform_for_annotation(self, gm):
            return gm

        def annotate(self, gm):
            for n in gm.graph.nodes:
                if n.op == "call_function" and not n.meta.get("matched"):
                    n.meta["matched"] = True
                    n.meta.setdefault("custom", {})["seen"] = True
                    n.meta[pt2e_scale.KEY] = object()
            return gm

    gm = torch.export.export(torch.nn.ReLU(), (torch.randn(2),)).module()
    call = pt2e_scale.annotate_call(Marks(), gm)
    f = pt2e_scale.Figures(20.0, 5.0)
    for r in range(2):
        f.run("relu", 3, "marks", "gen", call)
        f.compare("relu", 3, "marks", {"gen": call}, r)
    assert call.annotated() == {"relu"} and not f.unsteady


def test_envs_measures_a_target_of_another_environment_with_its_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--envs``: Cortex-M's reference imports only in the Arm environment; the benchmark
    runs itself there for it and merges its row into this run's table."""
    from tests.live.envs import ARM

    if not ARM.ready():
        ARM.check("ExecuTorch's Cortex-M quantizer")  # skips here, fails in CI
    args = ["--sizes", "60", "--rounds", "1", "--families", "conv", "--envs"]
    args += ["--targets", "xnnpack", "cortex_m", "--plot", str(tmp_path / "p.svg")]
    assert pt2e_scale.main(args) == 0
    out = capsys.readouterr().out
    rows = [r for r in out.splitlines() if r.startswith("| conv |") and r.count("|") == 14]
    assert [r.split("|")[3].strip() for r in rows] == ["xnnpack", "cortex_m"], out
    assert "On each of the 2 rows where both annotates finished" in out, out


def test_the_plot_labels_node_counts_that_crowd_once():
    """Exports of one size differ by a few nodes (Cadence's strict one, the Arm environment's
    torch): a panel labels the first of counts closer than a label's width, and every count
    that stands apart."""
    from benchmarks.scale.plot import svg

    lines = {
        ("conv", "a", "generated"): [(899, 0.01, True), (3_616, 0.04, True)],
        ("conv", "b", "generated"): [(992, 0.01, True), (3_995, 0.04, True), (16_007, 0.2, True)],
        ("conv", "c", "generated"): [(993, 0.01, True), (3_996, 0.04, True), (16_008, 0.2, True)],
    }
    labels = re.findall(r'text-anchor="middle">([0-9.k]+)</text>', svg(lines, "t"))
    assert labels == ["899", "3.616k", "16.007k"], labels


def test_the_alarm_wrapped_by_the_code_it_stopped_is_the_time_limit_not_an_error() -> None:
    """torch's pass manager, stopped by the limit's alarm in a pass, raises an ``Exception``
    from it (Qualcomm's pipeline in ``prepare_pt2e`` at 1k nodes): the call ran over, it did
    not raise."""

    def pipeline() -> float:
        try:
            time.sleep(5)
        except Exception as e:
            raise Exception("An error occurred when running the 'DecomposeTrunc' pass") from e
        return 5.0

    f = pt2e_scale.Figures(0.3, 5.0)
    f.run("transformer", 995, "qualcomm", "ref_prepare", pipeline)
    assert f.over == {("transformer", 995, "qualcomm", "ref_prepare"): "over"} and not f.errors


def test_a_named_target_is_measured_though_the_registry_does_not_bench_it() -> None:
    """``--targets qualcomm`` measures Qualcomm, whose registry row has ``bench`` off (the
    flag says only the default set); before, the run measured nothing and the plot raised."""
    benched = {t.name for t in pt2e_scale.chosen(None, saved=False)}
    assert "qualcomm" not in benched and "xnnpack" in benched
    assert [t.name for t in pt2e_scale.chosen(["qualcomm", "xnnpack"], saved=False)] == [
        "xnnpack",
        "qualcomm",
    ]
