"""Where the benchmark runs: a copy of the project with its own caches, checkouts of
other revisions, and running commands in them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # benchmarks/perf/ -> the repository
PY = sys.executable
# The console script next to this Python (pip install -e .), as pre-commit and CI run bcfg.
SCRIPT = Path(PY).parent / "bcfg"
# A vendor's project whose specs name its own package (tests/tools/acme_project/).
ACME = REPO / "tests" / "tools" / "acme_project"


def spec_lines(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


# ------------------------------------------------------------------ running


class Workspace:
    """A copy of the project (pyproject.toml and specs/) with its own cache folder.

    ``code`` is the checkout whose ``generator`` runs there (the one benchmarked,
    or the ``--against`` revision's). With ``own_modules``, also the vendor
    project's spec and its package ``acme_ops``, allow-listed: a project whose
    specs name its own modules.
    """

    def __init__(
        self,
        root: Path,
        name: str,
        specs: dict[str, str] | None = None,
        code: Path = REPO,
        own_modules: bool = False,
    ):
        self.code = code
        self.dir = root / name
        self.dir.mkdir()
        shutil.copy(REPO / "pyproject.toml", self.dir / "pyproject.toml")
        if specs is None:
            shutil.copytree(REPO / "specs", self.dir / "specs")
        else:
            (self.dir / "specs").mkdir()
            for fname, text in specs.items():
                (self.dir / "specs" / fname).write_text(text, encoding="utf-8")
        if own_modules:
            shutil.copytree(ACME / "acme_ops", self.dir / "acme_ops")
            shutil.copy(ACME / "specs" / "acme_npu.bcfg", self.dir / "specs")
            pyproject = self.dir / "pyproject.toml"
            text = pyproject.read_text(encoding="utf-8")
            allowed, n = re.subn(r"(?m)^allow = \[", 'allow = ["acme_ops", ', text)
            if n != 1:
                raise SystemExit("pyproject.toml has no one [tool.bcfg] allow line to extend")
            pyproject.write_text(allowed.replace(", ]", "]"))
        self.cache = root / f"{name}-cache"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BCFG_")}
        env["PYTHONPATH"] = str(self.code)
        env["XDG_CACHE_HOME"] = str(self.cache)
        env["PYTHONWARNINGS"] = "ignore"
        return env

    def clear_cache(self) -> None:
        shutil.rmtree(self.cache, ignore_errors=True)

    def clear_generated(self) -> None:
        shutil.rmtree(self.dir / "generated", ignore_errors=True)

    def bcfg(self, *args: str, expect: int = 0) -> tuple[float, int, str, float]:
        """Run ``python -m generator args``: (seconds, peak RSS in MB, stderr, CPU seconds)."""
        return run([PY, "-m", "generator", *args], self.dir, self.env(), expect)

    def script(self, *args: str, expect: int = 0) -> tuple[float, int, str, float]:
        """Run the ``bcfg`` script as a user's shell does: no PYTHONPATH."""
        env = {k: v for k, v in self.env().items() if k != "PYTHONPATH"}
        return run([str(SCRIPT), *args], self.dir, env, expect)


def run(
    cmd: list[str], cwd: Path, env: dict[str, str], expect: int = 0
) -> tuple[float, int, str, float]:
    """Run a command; return wall time, its peak resident memory (MB), its stderr, and the CPU
    time it and the processes it waited for used (user and system)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != expect:
        raise SystemExit(
            f"{' '.join(cmd)} in {cwd} exited {proc.returncode}, expected {expect}:\n{stderr}"
        )
    return elapsed, usage.ru_maxrss // 1024, stderr, usage.ru_utime + usage.ru_stime


def python_out(code: str, cwd: Path, env: dict[str, str]) -> str:
    """Run Python code in a fresh interpreter; return its standard output."""
    proc = subprocess.run(
        [PY, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise SystemExit(f"benchmark helper failed:\n{proc.stderr}")
    return proc.stdout


def clone(where: Path, source: Path = REPO) -> Path:
    """The package, grammar and templates of ``source`` at ``where``, without byte code."""
    shutil.rmtree(where, ignore_errors=True)
    for name in ("generator", "grammar", "templates"):
        shutil.copytree(source / name, where / name, ignore=shutil.ignore_patterns("__pycache__"))
    return where


def checkout(rev: str, where: Path) -> Path:
    """The files of revision ``rev`` of this repository at ``where`` (git archive)."""
    where.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def diff_workspace(root: Path, tag: str = "", code: Path = REPO) -> Workspace:
    """A git repository of the project's specs with a second commit that changes BackendConfigs.

    The change: x86's nn.Conv2d gains a symmetric int8 dtype config, and the
    shared dynamic_fp16 dtype set takes a float16 bias (17 patterns in each of
    five backends).
    """
    ws = Workspace(root, f"{tag}diff", code=code)
    env = {**ws.env(), "GIT_CONFIG_GLOBAL": os.devnull}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b")
    env.update(GIT_COMMITTER_EMAIL="b@b")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=ws.dir, env=env, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "specs")
    x86 = ws.dir / "specs" / "x86.bcfg"
    x86.write_text(
        x86.read_text().rstrip().removesuffix("}")
        + "    override pattern nn.Conv2d {\n"
        + "        dtypes: [weighted_int8, weighted_qint8_symmetric]\n"
        + "        root: nn.Conv2d\n        reference: nnqr.Conv2d\n        qat: nnqat.Conv2d\n"
        + "    }\n}\n"
    )
    common = ws.dir / "specs" / "common.bcfg"
    common.write_text(
        common.read_text().replace(
            "weight: float16, bias: float, dynamic: true",
            "weight: float16, bias: float16, dynamic: true",
        )
    )
    git("commit", "-qam", "change")
    return ws
