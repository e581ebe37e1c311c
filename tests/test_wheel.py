"""A wheel built from the repo carries the grammar (and Lark's analysis of it), templates, the
bcfg:torch library and the shipped torch facts, and its generator works (modules and docs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

from generator.infra.write import DOCS
from tests.support import REPO


def test_wheel_generates_the_same_output(tmp_path, pt2e_only):
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
        "bcfg_resources/grammar/bcfg.lark",
        "bcfg_resources/templates/backend.py.jinja",
        "bcfg_resources/templates/docs/index.html.jinja",
        "bcfg_resources/templates/docs/page.js",
        "generator/library/torch.bcfg",
        "generator/runtime/__init__.py",
        "generator/runtime/quantizer.py",
        "bcfg_resources/grammar/bcfg.lark.analysis",
    } <= names
    # The torch facts of every verified build (semantics/shipped.py).
    tables = {n for n in names if n.startswith("generator/torch_facts/torch-")}
    assert tables == {
        f"generator/{p.relative_to(REPO / 'generator').as_posix()}"
        for p in (REPO / "generator" / "torch_facts").glob("*.json")
    }
    assert len(tables) >= 2
    assert not any(n.startswith(("specs/", "generated/", "tests/")) for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # A project that is not this repo, using the installed generator only.
    project = tmp_path / "project"
    shutil.copytree(REPO / "specs", project / "specs")
    # specs/hooks/ holds the Python specs/cortex_m.bcfg, arm_tosa.bcfg and cadence.bcfg name; my_backend is the docs' example.
    (project / "pyproject.toml").write_text(
        '[tool.bcfg]\nallow = ["specs"]\nexamples = ["my_backend"]\n'
    )
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
    modules = [*(REPO / "generated").glob("*.py"), *(REPO / "generated").glob("_bcfg_pt2e/*.py")]
    assert any(p.parent.name == "_bcfg_pt2e" for p in modules)
    for p in modules:
        rel = p.relative_to(REPO / "generated")
        assert (project / "generated" / rel).read_bytes() == p.read_bytes(), rel
    # The support matrix bcfg wrote into docs/ (the site's pages beside it are not bcfg's).
    docs = [p.relative_to(REPO / "docs") for p in DOCS.files(REPO / "docs")]
    assert len(docs) == 2 + 10 + len(pt2e_only)  # README, index.html, a page a backend
    for rel in docs:
        assert (project / "docs" / rel).read_bytes() == (REPO / "docs" / rel).read_bytes(), rel


def test_installing_bcfg_never_shadows_a_users_generated_package(tmp_path):
    """bcfg's own `generated/` (and `tests/`) are the repo's, never importable packages of the install.

    The test runs in the environment bcfg is installed in (editable, as the
    README installs it): a user's `generated` package, here a namespace package
    without `__init__.py` that any regular package of that name would shadow,
    is the one imported; from elsewhere there is no `generated` at all.
    """
    project = tmp_path / "elsewhere"
    (project / "generated").mkdir(parents=True)
    (project / "generated" / "mine.py").write_text("WHO = 'the user'\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import generated.mine as g, generator; print(g.WHO); print(generator.__file__)"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "the user"
    assert run.stdout.splitlines()[1].endswith("__init__.py")  # bcfg itself is installed
    for name in ("generated", "tests", "benchmarks"):
        run = subprocess.run(
            [sys.executable, "-c", f"import {name}"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
        assert "ModuleNotFoundError" in run.stderr, (name, run.stderr)
