"""``bcfg import`` on hostile targets: the user's code cannot end bcfg, write into its output, or hang it.

Each case runs the real command (the import runs in a child process) and
expects one clear line and exit 2, or a working import whose standard output
holds the spec and nothing else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HOSTILE = """
import os, sys, time
import torch
import torch.nn as nn
from torch.ao.quantization.backend_config import (
    BackendConfig, BackendPatternConfig, DTypeConfig, DTypeWithConstraints,
)

def exits():
    sys.exit(0)

def raises_exit():
    raise SystemExit("bye")

def hard_exit():
    os._exit(0)

def prints():
    print("HELLO FROM TARGET")
    os.write(1, b"RAW FD WRITE\\n")
    config = BackendPatternConfig(nn.Linear).set_dtype_configs([DTypeConfig(torch.quint8, torch.quint8)])
    return BackendConfig("p").set_backend_pattern_config(config)

def hangs():
    while True:
        time.sleep(0.05)

def getter_hangs():
    def getter(pattern):
        while True:
            pass
    return BackendConfig("g").set_backend_pattern_config(
        BackendPatternConfig((nn.Conv2d, nn.ReLU))._set_root_node_getter(getter))

class Weird:
    def __getattribute__(self, name):
        if name in ("__qualname__", "__module__", "__name__", "__code__"):
            raise RuntimeError("no " + name)
        return object.__getattribute__(self, name)
    def __repr__(self):
        raise RuntimeError("no repr")
    def __call__(self, *a):
        return None

def weird_fuser():
    return BackendConfig("w").set_backend_pattern_config(
        BackendPatternConfig((nn.Conv2d, nn.ReLU)).set_fuser_method(Weird()))

def this_module():
    def fuser(is_qat, a, b):
        return a
    fuser.__module__ = "this"  # importing `this` prints the Zen of Python
    fuser.__qualname__ = "fuser"
    return BackendConfig("t").set_backend_pattern_config(
        BackendPatternConfig((nn.Conv2d, nn.ReLU)).set_fuser_method(fuser))

def neg_zero():
    d = DTypeWithConstraints(torch.quint8, scale_exact_match=-0.0)
    return BackendConfig("z").set_backend_pattern_config(
        BackendPatternConfig(nn.Linear).set_dtype_configs([DTypeConfig(d, d)]))

def _relu_config(name):
    config = BackendPatternConfig(nn.ReLU).set_dtype_configs([DTypeConfig(torch.quint8, torch.quint8)])
    return BackendConfig(name).set_backend_pattern_config(config)

def _pid_file(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)

def starts_a_helper():
    # A helper that inherits standard output and would outlive the import by ten minutes.
    import subprocess
    code = f"import os, time; open({_pid_file('helper.pid')!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    subprocess.Popen([sys.executable, "-c", code])
    return _relu_config("helped")

def forks_a_daemon():
    # A daemon of its own session holding every descriptor the child has.
    if os.fork() == 0:
        os.setsid()
        open(_pid_file("daemon.pid"), "w").write(str(os.getpid()))
        time.sleep(600)
        os._exit(0)
    return _relu_config("forked")

def get_café_config():
    return _relu_config("café—x\u202e")

def get_names():
    return _relu_config("日本")

def digits():
    return _relu_config("١٢٣")

def 日本():
    return _relu_config("١٢٣")

def fusé(is_qat, a, b):
    return nn.Sequential(a, b)

def unicode_fuser():
    return BackendConfig("u").set_backend_pattern_config(
        BackendPatternConfig((nn.Linear, nn.ReLU)).set_fuser_method(fusé))

def deep():
    p = nn.ReLU
    for _ in range(2000):
        p = (nn.ReLU, p)
    return BackendConfig("d").set_backend_pattern_config(
        BackendPatternConfig()._set_pattern_complex_format(p))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "pyproject.toml").write_text("[tool.bcfg]\n")
    (root / "hostile.py").write_text(HOSTILE)
    return root


def bcfg_import(project: Path, target: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator", "import", f"hostile:{target}", *extra],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize(
    "target, message",
    [
        ("exits", "calling hostile:exits() failed: it called sys.exit(0)"),
        ("raises_exit", "calling hostile:raises_exit() failed: it called sys.exit('bye')"),
        ("hard_exit", "ended (exit status 0) while importing and calling hostile:hard_exit"),
        ("weird_fuser", "fuser_method <Weird object> raised RuntimeError when bcfg looked at it"),
        ("this_module", "fuser_method fuser has no importable dotted path"),
        ("neg_zero", "scale_exact_match=-0.0 is not positive"),
        ("deep", "the pattern nests more than 32 levels deep"),
    ],
)
def test_hostile_targets_are_one_line_and_exit_2(project: Path, target: str, message: str) -> None:
    run = bcfg_import(project, target)
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("bcfg import: "), run.stderr
    assert message in run.stderr, run.stderr
    assert "Zen of Python" not in run.stderr + run.stdout  # `this` was never imported


@pytest.mark.parametrize("target", ["hangs", "getter_hangs"])
def test_a_target_that_never_returns_is_stopped_by_the_timeout(project: Path, target: str) -> None:
    run = bcfg_import(project, target, "--timeout", "5")
    assert run.returncode == 2 and run.stdout == ""
    assert "did not finish within 5 s (--timeout)" in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1


def test_what_the_target_prints_never_lands_in_the_spec(project: Path) -> None:
    run = bcfg_import(project, "prints")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# Imported by `bcfg import hostile:prints`")
    assert "HELLO" not in run.stdout and "RAW FD" not in run.stdout
    assert "HELLO FROM TARGET" in run.stderr and "RAW FD WRITE" in run.stderr


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(
    "target, pid_file", [("starts_a_helper", "helper.pid"), ("forks_a_daemon", "daemon.pid")]
)
def test_a_helper_left_running_neither_delays_the_result_nor_outlives_it(project, target, pid_file):
    """The helper holds the child's output open for ten minutes; the import still ends with its
    result (well inside --timeout), and the helper is gone."""
    (project / pid_file).unlink(missing_ok=True)
    run = bcfg_import(project, target, "--timeout", "60")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"# Imported by `bcfg import hostile:{target}`")
    pid = int((project / pid_file).read_text())
    assert not alive(pid), f"the helper {pid} still runs"


@pytest.mark.parametrize(
    "target, backend",
    [
        ("get_café_config", 'backend cafe "café—x\\u202e" {'),
        ("get_names", 'backend names "日本" {'),
        ("digits", 'backend digits "١٢٣" {'),
        ("日本", 'backend imported "١٢٣" {'),
    ],
)
def test_non_ascii_names_import_into_a_spec_the_grammar_accepts(project, target, backend):
    run = bcfg_import(project, target)
    assert run.returncode == 0, run.stderr  # parsed, resolved and verified
    assert backend in run.stdout.splitlines()


def test_a_user_function_a_spec_cannot_name_is_said_so_or_traced(project):
    run = bcfg_import(project, "unicode_fuser")
    assert "unexpected character" not in run.stderr and "fusé" not in run.stdout, run.stderr
