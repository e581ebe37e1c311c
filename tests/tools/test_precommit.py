"""The pre-commit hooks of ``.pre-commit-hooks.yaml``, run by pre-commit itself, offline.

A temporary git repository holds this working tree's hooks file (so the test
checks the file as it is, committed or not); a temporary project uses it as a
hook repository by local path. The hooks are ``language: system``: pre-commit
clones the hook repository from the local path and installs nothing, so no
network is needed. ``PRE_COMMIT_HOME`` keeps pre-commit's own cache in the
test's folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO
from tests.tools.projects import SPEC, acme_project

BIN = Path(sys.executable).parent


def run(root: Path, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def git(root: Path, *argv: str, env: dict[str, str]) -> str:
    out = run(root, "git", *argv, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture
def project(tmp_path):
    """(project, environment): a committed project whose .pre-commit-config.yaml names the hooks."""
    assert (
        BIN / "pre-commit"
    ).exists(), "pre-commit is in the test extra: pip install -e '.[test]'"
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "NO_COLOR": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    root = tmp_path / "proj"
    (root / "specs").mkdir(parents=True)
    shutil.copy(REPO / "specs" / "my_backend.bcfg", root / "specs")
    (root / "pyproject.toml").write_text('[tool.bcfg]\nspecs = "specs"\nout = "generated"\n')
    use_hooks(root, tmp_path / "hooks", env)
    assert run(root, str(BIN / "bcfg"), "generate", env=env).returncode == 0
    git(root, "init", "-q", env=env)
    git(root, "add", "-A", env=env)
    git(root, "commit", "-qm", "project", env=env)
    return root, env


def use_hooks(root: Path, hooks: Path, env: dict[str, str]) -> None:
    """This working tree's hooks file as a hook repository at ``hooks``, named by ``root``'s
    .pre-commit-config.yaml."""
    hooks.mkdir()
    shutil.copy(REPO / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    git(hooks, "init", "-q", env=env)
    git(hooks, "add", "-A", env=env)
    git(hooks, "commit", "-qm", "hooks", env=env)
    rev = git(hooks, "rev-parse", "HEAD", env=env)
    (root / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"- repo: {hooks}\n"
        f"  rev: {rev}\n"
        "  hooks:\n"
        "  - id: bcfg-fmt\n"
        "  - id: bcfg-check\n"
    )


def pre_commit(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run(root, str(BIN / "pre-commit"), "run", "--all-files", env=env)


def test_hooks_pass_on_a_clean_project_and_catch_what_they_should(project):
    root, env = project
    out = pre_commit(root, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "bcfg fmt" in out.stdout and "bcfg check" in out.stdout

    # A spec in a layout of its own: bcfg-fmt rewrites it (and fails the run, as formatters do);
    # bcfg-check passes, since a layout edit changes no generated file.
    spec = root / "specs" / "my_backend.bcfg"
    canonical = spec.read_text()
    spec.write_text(canonical.replace("    pattern nn.Linear {", "  pattern   nn.Linear{"))
    out = pre_commit(root, env)
    assert out.returncode == 1, out.stdout
    assert "files were modified by this hook" in out.stdout
    assert spec.read_text() == canonical
    assert pre_commit(root, env).returncode == 0

    # A semantic edit without regenerating: bcfg-check fails with the diff.
    spec.write_text(canonical.replace("qat: nnqat.Linear\n", ""))
    out = pre_commit(root, env)
    assert out.returncode == 1
    assert "generated file(s) out of date; run `bcfg generate`" in out.stdout
    spec.write_text(canonical)

    # A hand edit of a generated file is named as one.
    module = root / "generated" / "my_backend.py"
    module.write_text(module.read_text().replace("nn.Linear)", "nn.Linear )", 1))
    out = pre_commit(root, env)
    assert out.returncode == 1
    assert "generated/my_backend.py was edited by hand" in out.stdout
    assert "network" not in out.stdout.lower()


def test_hooks_in_a_project_whose_specs_name_its_own_modules(tmp_path):
    """The vendor project (allow = ["acme_ops"]): bcfg-check imports acme_ops from the project
    root, passes, and fails a commit whose module edit the spec breaks on, saying why."""
    acme = acme_project(tmp_path / "acme", tmp_path / "xdg")
    env = acme.env | {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    use_hooks(acme.root, tmp_path / "hooks", env)
    acme.commit("hooks")
    out = pre_commit(acme.root, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "bcfg check" in out.stdout and "Passed" in out.stdout

    # A commit that touches only the package: bcfg-check runs (files: .py) and says why it fails.
    acme.edit("acme_ops/fused.py", "class LinearGELU(", "class LinearGelu(")
    acme.edit("acme_ops/__init__.py", "import LinearGELU", "import LinearGelu")
    acme.edit("acme_ops/__init__.py", '"LinearGELU"', '"LinearGelu"')
    acme.edit("acme_ops/fusers.py", "LinearGELU", "LinearGelu")
    assert run(acme.root, str(BIN / "pre-commit"), "install", env=env).returncode == 0
    acme.git("add", "-A")
    out = run(acme.root, "git", "commit", "-qm", "rename", env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{SPEC}:10:16: error: unknown symbol 'acme_ops.LinearGELU'" in out.stdout + out.stderr
    assert "did you mean 'acme_ops.LinearGelu'?" in out.stdout + out.stderr
