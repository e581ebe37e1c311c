"""``python -m tests.live.executorch_suites`` with saved outcomes (``--original``, ``--swapped``,
``--save``): the comparison and its figures, without running ExecuTorch's suites."""

from __future__ import annotations

import json

import pytest

from .executorch_suites import main


def write(path, outcomes):
    path.write_text(json.dumps(outcomes))
    return str(path)


ORIGINAL = {
    "test_add.py::a": {"outcome": "passed", "quantizes": True},
    "test_add.py::b": {"outcome": "failed", "quantizes": True},
    "test_cat.py::c": {"outcome": "passed", "quantizes": False},
}


def test_saved_runs_are_compared_and_kept(tmp_path, capsys):
    swapped = {
        "test_add.py::a": {"outcome": "failed", "message": "AssertionError"},
        "test_add.py::b": {"outcome": "failed"},
        "test_cat.py::c": {"outcome": "failed"},  # does not quantize: not counted
    }
    original = write(tmp_path / "o.json", ORIGINAL)
    args = ["ops", "--original", original, "--swapped", write(tmp_path / "s.json", swapped)]
    assert main([*args, "--save", str(tmp_path / "kept")]) == 1
    out = capsys.readouterr().out
    assert "ops: 2 tests that quantize; passed: original 1, swapped 0; outcomes differ: 1" in out
    assert "  test_add.py::a: passed -> failed AssertionError" in out
    assert json.loads((tmp_path / "kept" / "ops-original.json").read_text()) == ORIGINAL
    assert main(["ops", "--original", original, "--swapped", original]) == 0


def test_saved_outcomes_are_one_suites(tmp_path):
    with pytest.raises(SystemExit):
        main(["all", "--original", write(tmp_path / "o.json", ORIGINAL)])


def test_cortex_m_runs_are_compared_without_their_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BCFG_ENVS", str(tmp_path / "none"))  # saved runs need no environment
    original = {"misc/test_quantization.py::a": {"outcome": "passed"}}
    nothing = {"misc/test_quantization.py::a": {"outcome": "failed", "message": "AssertionError"}}
    args = ["cortex_m", "--original", write(tmp_path / "o.json", original)]
    assert main([*args, "--swapped", write(tmp_path / "s.json", original)]) == 0
    assert main([*args, "--swapped", write(tmp_path / "n.json", nothing)]) == 1
    out = capsys.readouterr().out
    assert "cortex_m: 1 tests; passed: original 1, swapped 0; outcomes differ: 1" in out
    assert "  swapped: 1 failed" in out
    assert not (tmp_path / "none").exists()
