"""A wheel built from the repo carries the grammar, templates and the bcfg:torch library, and its generator works (modules and docs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

from tests.support import REPO


def test_wheel_generates_the_same_output(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("bcfg-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "generator/grammar/bcfg.lark",
        "generator/templates/backend.py.jinja",
        "generator/templates/docs/index.html.jinja",
        "generator/templates/docs/page.js",
        "generator/library/torch.bcfg",
    } <= names
    assert not any(n.startswith(("specs/", "generated/", "tests/")) for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # A project that is not this repo, using the installed generator only.
    project = tmp_path / "project"
    shutil.copytree(REPO / "specs", project / "specs")
    (project / "pyproject.toml").write_text("[tool.bcfg]\n")
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "generator", "generate"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    for p in (REPO / "generated").glob("*.py"):
        assert (project / "generated" / p.name).read_bytes() == p.read_bytes(), p.name
    docs = [p.relative_to(REPO / "docs") for p in (REPO / "docs").rglob("*") if p.is_file()]
    assert len(docs) == 11
    for rel in docs:
        assert (project / "docs" / rel).read_bytes() == (REPO / "docs" / rel).read_bytes(), rel
