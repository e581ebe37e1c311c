"""A vendor's project whose specs name its own modules, and the ``bcfg`` script run in it.

``acme_project(dest)`` copies ``tests/tools/acme_project/`` (pyproject with
``[tool.bcfg] allow = ["acme_ops"]``, the package ``acme_ops`` with fused
modules, fuser functions, PT2E hooks, a QConfigMapping and a hand-written
BackendConfig, and ``specs/acme_npu.bcfg``) and makes it a git repository with
one commit. ``Console`` runs the installed console script (``bin/bcfg``, as
pre-commit and CI run it) as a subprocess, without PYTHONPATH, in any folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ACME = Path(__file__).resolve().parent / "acme_project"
BIN = Path(sys.executable).parent
SPEC = "specs/acme_npu.bcfg"


def console_env(cache: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH, bcfg's scripts on PATH, git set up."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("BCFG_")}
    return env | {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_CACHE_HOME": str(cache),
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@dataclass(frozen=True)
class Console:
    """Commands run as a user runs them, in the project ``root`` (or a folder of it)."""

    root: Path
    env: dict[str, str]

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            argv,
            cwd=cwd or self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def bcfg(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """``bin/bcfg ARGV``: the console script, not ``python -m generator``."""
        return self.run(str(BIN / "bcfg"), *argv, cwd=cwd)

    def git(self, *argv: str, cwd: Path | None = None) -> str:
        out = self.run("git", *argv, cwd=cwd)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    def commit(self, message: str, cwd: Path | None = None) -> None:
        self.git("add", "-A", cwd=cwd)
        self.git("commit", "-qm", message, cwd=cwd)

    def edit(self, name: str, old: str, new: str) -> None:
        """Replace ``old`` (which must be there) by ``new`` in the project's file ``name``."""
        path = self.root / name
        text = path.read_text()
        assert old in text, f"{old!r} is not in {name}"
        path.write_text(text.replace(old, new))


def acme_project(dest: Path, cache: Path) -> Console:
    """The vendor project at ``dest``, generated and committed (one commit, branch main)."""
    shutil.copytree(ACME, dest)
    console = Console(dest, console_env(cache))
    console.git("init", "-q", "-b", "main")
    done = console.bcfg("generate")
    assert done.returncode == 0, done.stderr
    console.commit("acme npu")
    return console
