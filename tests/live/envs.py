"""The environment ExecuTorch's Arm and Cortex-M quantizers run in, apart from the project's.

    python -m tests.live.envs arm [--create]

prints the environment's Python (and creates it with ``--create`` if it does
not exist yet). Each lives under ``$BCFG_ENVS`` (default ``~/.cache/bcfg/envs``)
as its ``Env.name``, made on first use with ``pythonX.Y -m venv`` (pyenv's
newest X.Y, else one on PATH, else this Python if it is X.Y); it counts as
made once its ``probe`` imported (``.bcfg-ready`` then marks it). bcfg's
``generated/`` is reachable from it because runs start in the project's root
(``python -m pytest`` puts the working directory on ``sys.path``).

- ``ARM`` (``executorch-arm``, Python 3.11): ExecuTorch's Cortex-M and Arm
  quantizers import only with ``executorch[ethos-u]==1.5.1``, whose
  ``tosa-tools`` pins numpy below 2.2: never the project's ``.venv``. torch
  comes first, as the README's first command installs it (PyTorch's CPU index,
  else whatever the package index has; pip skips that index at once where it
  cannot be reached, as there). About 4 minutes to make on 2 shared cores.
  CI's full tier makes it (``.ci/full``; the PR tier needs it not): there its tests
  fail, not skip, if it is missing.

ExecuTorch's Cadence tests, which import ``typing.override`` (Python 3.12), run in
the project's environment with ``tests/live/typing_backport.py`` (its backport):
no environment of their own (it was Python 3.12 with a 5 GB CUDA build of torch,
as no CPU build of torch 2.13.0 for 3.12 is on the package index here).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tests.targets import TARGETS

if TYPE_CHECKING:
    import pytest


@dataclass(frozen=True)
class Env:
    name: str  # its folder under $BCFG_ENVS
    packages: tuple[tuple[str, ...], ...]  # the arguments of each `pip install`, in order
    probe: str  # what must import for it to count as made (the last step of making it)
    base: str  # the Python version it is made with ("3.11")
    in_ci: bool = False  # .ci/full makes it: its tests fail in CI where it is missing

    @property
    def key(self) -> str:
        """Its name on the command line: ``arm`` for ``executorch-arm``."""
        return self.name.removeprefix("executorch-")

    def command(self) -> str:
        """The command that makes it."""
        return f"python -m tests.live.envs {self.key} --create"

    def root(self) -> Path:
        envs = os.environ.get("BCFG_ENVS", Path.home() / ".cache" / "bcfg" / "envs")
        return Path(envs) / self.name

    def python(self) -> Path:
        return self.root() / "bin" / "python"

    def ready(self) -> bool:
        """Whether the environment exists and its probe imported in it."""
        return self.python().exists() and (self.root() / ".bcfg-ready").exists()

    def base_python(self) -> str:
        """A Python ``base``: pyenv's newest, else one on PATH that runs (pyenv's shim may
        not), else this one if it is that version."""
        pyenv = (
            Path.home() / ".pyenv" / "versions" / f"{self.base}.*" / "bin" / f"python{self.base}"
        )
        found = sorted(glob.glob(str(pyenv)), key=_version)[-1:]
        found += [p for p in [shutil.which(f"python{self.base}")] if p]
        for candidate in found:
            if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
                return candidate
        if f"{sys.version_info[0]}.{sys.version_info[1]}" == self.base:
            return sys.executable
        raise SystemExit(f"no Python {self.base} (~/.pyenv/versions or PATH): {self.name} needs it")

    def needed(self, what: str) -> pytest.MarkDecorator:
        """Mark a test module whose ``what`` imports only in this environment: its tests skip
        where the environment is not made, and fail where CI should have made it (``check``,
        called by tests/conftest.py's ``pytest_runtest_setup``)."""
        import pytest

        return pytest.mark.needs_env(self, what)

    def check(self, what: str) -> None:
        """Skip the running test if the environment is not made; under ``CI`` (set and not
        empty), fail it instead when CI makes this environment (``in_ci``: .ci/full makes it
        before the tests), so that a broken environment never goes green by skipping."""
        import pytest

        if self.ready():
            return
        reason = f"{what} imports only in {self.root()}, not made here: {self.command()}"
        if self.in_ci and os.environ.get("CI"):
            pytest.fail(f"CI makes this environment before the tests (.ci/full): {reason}", False)
        pytest.skip(reason)

    def run_module(
        self, module: str, *args: str, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """``python -m module *args`` with this environment's Python, from the checkout (which
        is how it imports the project), with a bare environment: a PATH, one torch thread,
        no byte code written into the checkout by another Python. Output captured as text."""
        return subprocess.run(
            [str(self.python()), "-m", module, *args],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=timeout,
        )

    def create(self, log: IO[str] | None = None) -> Path:
        """Make the environment (if it is not made yet) and return its Python; pip's output
        goes to ``log`` (default: nowhere), its errors to ``log`` (default: stderr)."""
        if self.ready():
            return self.python()
        out = log if log is not None else subprocess.DEVNULL
        python = str(self.python())
        if not self.python().exists():
            venv = [self.base_python(), "-m", "venv", str(self.root())]
            subprocess.run(venv, check=True, stdout=out, stderr=log)
        for packages in self.packages:
            pip = [python, "-m", "pip", "install", "-q", *packages]
            subprocess.run(pip, check=True, stdout=out, stderr=log)
        subprocess.run([python, "-c", self.probe], check=True, stdout=out, stderr=log)
        (self.root() / ".bcfg-ready").write_text("")
        return self.python()


def _version(path: str) -> tuple[int, ...]:
    """pyenv's 3.12.10 after 3.12.9."""
    release = Path(path).parent.parent.name
    return tuple(int(p) if p.isdigit() else -1 for p in release.split("."))


ARM = Env(
    "executorch-arm",
    (
        ("--retries", "0", "--timeout", "10", "torch==2.13.0")
        + ("--extra-index-url", "https://download.pytorch.org/whl/cpu"),
        ("--retries", "0", "--timeout", "10", "torch==2.13.0", "executorch[ethos-u]==1.5.1")
        + ("pytest", "expecttest"),
    ),
    "import executorch.backends.cortex_m.quantizer.quantizer, tosa_serializer",
    "3.11",
    in_ci=True,
)
ENVS = {env.key: env for env in (ARM,)}
# Which environment a target's quantizer (a row of executorch_swap.TARGETS) imports in: the
# registry's (tests/targets.py) ``env``, by the row's first suite.
TARGET_ENV = {t.suites[0]: ENVS[t.env] for t in TARGETS if t.env and t.suites}


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.live.envs")
    parser.add_argument("env", choices=sorted(ENVS))
    parser.add_argument("--create", action="store_true", help="make it if it is not made yet")
    args = parser.parse_args(argv)
    env = ENVS[args.env]
    if args.create:
        print(env.create(sys.stderr))
    elif env.ready():
        print(env.python())
    else:
        print(f"no environment at {env.root()}: {env.command()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
