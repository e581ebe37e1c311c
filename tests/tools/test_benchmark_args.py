"""benchmarks/pt2e_scale.py's arguments: a bad value exits 2 naming it (issue 52, class 15),
before anything is measured; before, a misspelt target or family was dropped and the run
ended in a min() traceback, and a missing or empty --from file or --timeout -1 in tracebacks."""

from __future__ import annotations

import json

import pytest

pt2e_scale = pytest.importorskip("benchmarks.pt2e_scale")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--targets", "xnnpack", "xnnpak"], "unknown 'xnnpak'"),
        (["--families", "catt"], "unknown 'catt'"),
        (["--timeout", "-1"], "--timeout: -1.0"),
        (["--timeout", "nan"], "--timeout: nan"),
        (["--timeout", "0"], "--timeout: 0"),
        (["--slow", "-2"], "--slow: -2.0"),
        (["--rounds", "0"], "--rounds: 0"),
        (["--sizes", "100", "-5"], "--sizes: -5"),
        (["--from", "no/such/figures.json"], "no/such/figures.json: cannot be read"),
    ],
)
def test_a_bad_argument_exits_2_naming_it(argv, named, capsys):
    with pytest.raises(SystemExit) as exc:
        pt2e_scale.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


@pytest.mark.parametrize("content", ["{}", "not json", "[]", '{"limit": 1, "slow": 1}'])
def test_a_from_file_without_saved_figures_exits_2_naming_it(tmp_path, capsys, content):
    path = tmp_path / "figures.json"
    path.write_text(content)
    with pytest.raises(SystemExit) as exc:
        pt2e_scale.main(["--from", str(path)])
    assert exc.value.code == 2
    assert f"{path}: not figures saved with --json" in capsys.readouterr().err


def test_saved_figures_are_still_read(tmp_path):
    path = tmp_path / "figures.json"
    saved = {"limit": 5.0, "slow": 1.0, "rounds": 1, "graphs": [], "times": [], "over": []}
    path.write_text(json.dumps(saved))
    figures, rounds = pt2e_scale.from_json([path])
    assert (figures.limit, rounds) == (5.0, 1)


def test_every_benchmark_finds_the_repository():
    """Each benchmark module's REPO is the repository root (benchmarks/run.py's workspaces copy
    its pyproject.toml: when run.py was split into benchmarks/perf/, perf/workspace.py kept
    ``parent.parent``, and every run ended in FileNotFoundError before measuring anything)."""
    import importlib

    for name in ["perf.workspace", "pt2e_scale", "pt2e_report", "pt2e_report_scale"]:
        module = importlib.import_module(f"benchmarks.{name}")
        assert (module.REPO / "pyproject.toml").is_file(), name
        assert (module.REPO / "generator").is_dir(), name
