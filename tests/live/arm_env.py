"""The environment ExecuTorch's Arm and Cortex-M quantizers import in, apart from the project's.

    python -m tests.live.arm_env [--create]

prints the environment's Python (and creates it with ``--create`` if it does
not exist yet). ExecuTorch's Cortex-M and Arm quantizers import only with
``executorch[ethos-u]==1.5.1``, whose ``tosa-tools`` pins numpy below 2.2:
they get a virtual environment of their own, never the project's ``.venv``.
It lives under ``$BCFG_ENVS`` (default ``~/.cache/bcfg/envs``) as
``executorch-arm``, made on first use with ``python3.11 -m venv``; torch comes
first, as the README's first command installs it (PyTorch's CPU index, else
whatever the package index has). bcfg's ``generated/`` is reachable from it
because runs start in the project's root (``python -m pytest`` puts the
working directory on ``sys.path``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

NAME = "executorch-arm"
TORCH = ["torch==2.13.0", "--extra-index-url", "https://download.pytorch.org/whl/cpu"]
PACKAGES = ["torch==2.13.0", "executorch[ethos-u]==1.5.1", "pytest", "expecttest"]
# What must import for the environment to count as made (the last step of creating it).
PROBE = "import executorch.backends.cortex_m.quantizer.quantizer, tosa_serializer"


def root() -> Path:
    return Path(os.environ.get("BCFG_ENVS", Path.home() / ".cache" / "bcfg" / "envs")) / NAME


def python() -> Path:
    return root() / "bin" / "python"


def ready() -> bool:
    """Whether the environment exists and ExecuTorch's Cortex-M quantizer imports in it."""
    marker = root() / ".bcfg-ready"
    return python().exists() and marker.exists()


def create(log=None) -> Path:
    """Make the environment (if it is not made yet) and return its Python."""
    if ready():
        return python()
    base = shutil.which("python3.11") or sys.executable
    out = log if log is not None else subprocess.DEVNULL
    if not python().exists():
        subprocess.run([base, "-m", "venv", str(root())], check=True, stdout=out)
    pip = [str(python()), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *TORCH], check=True, stdout=out)
    subprocess.run([*pip, *PACKAGES], check=True, stdout=out)
    subprocess.run([str(python()), "-c", PROBE], check=True, stdout=out)
    (root() / ".bcfg-ready").write_text("")
    return python()


if __name__ == "__main__":
    if "--create" in sys.argv[1:]:
        print(create(sys.stderr))
    elif ready():
        print(python())
    else:
        print(f"no environment at {root()}: python -m tests.live.arm_env --create", file=sys.stderr)
        sys.exit(1)
