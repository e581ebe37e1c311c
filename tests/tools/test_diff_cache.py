"""``bcfg diff`` keeps what a side resolved to by content (``generator/tools/diff_cache.py``):
a side whose every input is as before is not resolved again, and any input that changed (a
spec, a file only imported, a user module the specs name) is resolved afresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli import main
from generator.semantics import driver
from tests.support import REPO

from .test_diff import commit, git


@pytest.fixture
def repo(project_copy, monkeypatch, tmp_path_factory):
    """A git repository of the project, as the working directory, with a cache of its own."""
    git(project_copy, "init", "-q")
    commit(project_copy, "project")
    monkeypatch.chdir(project_copy)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("BCFG_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    return project_copy


@pytest.fixture
def resolutions(monkeypatch) -> list[list[str]]:
    """The spec names of every side a diff resolved (not taken from the cache)."""
    calls: list[list[str]] = []
    analyze = driver.analyze

    def counted(sources, names, *args, **kwargs):
        calls.append(list(names))
        return analyze(sources, names, *args, **kwargs)

    monkeypatch.setattr(driver, "analyze", counted)
    return calls


def diff(capsys, *argv: str) -> tuple[int, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_side_as_before_is_taken_from_the_cache_with_the_same_report(
    repo, resolutions, capsys, monkeypatch
):
    (repo / "specs" / "x86.bcfg").write_text(
        (repo / "specs" / "x86.bcfg").read_text().replace("weighted_int8", "weighted_int8", 1)
        + "\n# a comment\n"
    )
    text = (repo / "specs" / "common.bcfg").read_text()
    (repo / "specs" / "common.bcfg").write_text(text.replace("qint8", "quint8", 1))
    first = diff(capsys)
    assert len(resolutions) == 2 and first[0] == 0 and "changed" in first[1], first
    assert diff(capsys) == first and len(resolutions) == 2  # both sides from the cache
    json_first = diff(capsys, "--format", "json")
    assert len(resolutions) == 2 and json_first[0] == 0
    monkeypatch.setenv("BCFG_NO_CACHE", "1")
    assert diff(capsys) == first and len(resolutions) == 4  # resolved: the same report


def test_a_file_only_imported_that_changed_is_resolved_afresh(repo, resolutions, capsys):
    (repo / "specs" / "more").mkdir()
    extra = repo / "specs" / "more" / "extra.bcfg"
    extra.write_text("# imported, named by no run\n")
    spec = repo / "specs" / "my_backend.bcfg"
    spec.write_text('import "more/extra.bcfg"\n' + spec.read_text())
    commit(repo, "an import")
    # The working tree is HEAD, text for text: its side is HEAD's, resolved once.
    assert diff(capsys)[0] == 0 and len(resolutions) == 1
    assert diff(capsys)[0] == 0 and len(resolutions) == 1
    extra.write_text("# imported, named by no run, changed\n")
    assert diff(capsys)[0] == 0
    assert resolutions == [resolutions[0]] * 2  # the working tree again; HEAD from the cache


def test_a_user_module_changed_is_imported_afresh(project_copy, tmp_path):
    """A hook the spec names, gone from its module: the cached sides must not hide it (each
    run its own process, as the bcfg script runs)."""
    env = {**os.environ, "NO_COLOR": "1", "BCFG_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = str(REPO)

    def run() -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "generator", "diff"]
        return subprocess.run(argv, cwd=project_copy, env=env, capture_output=True, text=True)

    git(project_copy, "init", "-q")
    commit(project_copy, "project")
    first = run()
    assert first.returncode == 0 and "no semantic change" in first.stdout, first.stderr
    assert list(Path(env["BCFG_CACHE_DIR"]).glob("diff-resolved/*.json"))
    hooks = project_copy / "specs" / "hooks" / "cortex_m.py"
    hooks.write_text(hooks.read_text().replace("def softmax_dim(", "def softmax_dim_gone("))
    second = run()
    assert second.returncode == 2, second.stdout
    assert "softmax_dim" in second.stdout + second.stderr
