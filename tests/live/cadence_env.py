"""The environment ExecuTorch's Cadence quantizer tests run in, apart from the project's.

    python -m tests.live.cadence_env [--create]

prints the environment's Python (and creates it with ``--create`` if it does
not exist yet). ExecuTorch's Cadence tests need Python 3.12
(``backends/cadence/aot/fuse_ops.py`` imports ``typing.override``; on 3.11
two of the three shipped test files fail to collect), and no CPU build of
torch 2.13.0 for Python 3.12 is on the package index here: the environment
gets the default torch 2.13.0 wheel (the CUDA build, about 5 GB, which runs
on the CPU), torchao 0.18 and ``executorch==1.5.1``. It lives under
``$BCFG_ENVS`` (default ``~/.cache/bcfg/envs``) as ``executorch-cadence``,
made on first use with ``python3.12 -m venv`` (pyenv's 3.12, else PATH).
bcfg's ``generated/`` is reachable from it because runs start in the
project's root (``python -m pytest`` puts the working directory on
``sys.path``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

NAME = "executorch-cadence"
PACKAGES = ["torch==2.13.0", "torchao==0.18.*", "executorch==1.5.1", "pytest", "expecttest"]
# pip gives up on a stalled download at once rather than waiting minutes per retry.
PIP_FLAGS = ["--retries", "0", "--timeout", "10"]
# What must import for the environment to count as made (the last step of creating it).
PROBE = "import typing; typing.override; import executorch.backends.cadence.aot.quantizer.quantizer"


def root() -> Path:
    return Path(os.environ.get("BCFG_ENVS", Path.home() / ".cache" / "bcfg" / "envs")) / NAME


def python() -> Path:
    return root() / "bin" / "python"


def ready() -> bool:
    """Whether the environment exists and ExecuTorch's Cadence quantizer imported in it."""
    return python().exists() and (root() / ".bcfg-ready").exists()


def base_python() -> str:
    """A Python 3.12: pyenv's newest 3.12, else one on PATH that runs (pyenv's shim may not)."""
    pyenv = sorted(
        glob.glob(str(Path.home() / ".pyenv" / "versions" / "3.12.*" / "bin" / "python3.12"))
    )
    found = pyenv[-1:] + [p for p in [shutil.which("python3.12")] if p]
    for candidate in found:
        if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
            return candidate
    raise SystemExit(
        "no Python 3.12 (~/.pyenv/versions/3.12.* or PATH): ExecuTorch's Cadence tests need it"
    )


def create(log=None) -> Path:
    """Make the environment (if it is not made yet) and return its Python."""
    if ready():
        return python()
    out = log if log is not None else subprocess.DEVNULL
    if not python().exists():
        subprocess.run(
            [base_python(), "-m", "venv", str(root())], check=True, stdout=out, stderr=out
        )
    pip = [str(python()), "-m", "pip", "install", "-q", *PIP_FLAGS]
    subprocess.run([*pip, *PACKAGES], check=True, stdout=out, stderr=out)
    subprocess.run([str(python()), "-c", PROBE], check=True, stdout=out, stderr=out)
    (root() / ".bcfg-ready").write_text("")
    return python()


if __name__ == "__main__":
    if "--create" in sys.argv[1:]:
        print(create(sys.stderr))
    elif ready():
        print(python())
    else:
        print(
            f"no environment at {root()}: python -m tests.live.cadence_env --create",
            file=sys.stderr,
        )
        sys.exit(1)
