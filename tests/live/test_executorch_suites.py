"""``python -m tests.live.executorch_suites`` with saved outcomes (``--original``, ``--swapped``,
``--save``): the comparison and its figures, without running ExecuTorch's suites."""

from __future__ import annotations

import json

import pytest

from .executorch_suites import main


def write(path, outcomes):
    path.write_text(json.dumps(outcomes))
    return str(path)


ORIGINAL = {
    "test_add.py::a": {"outcome": "passed", "quantizes": True},
    "test_add.py::b": {"outcome": "failed", "quantizes": True},
    "test_cat.py::c": {"outcome": "passed", "quantizes": False},
}


def test_saved_runs_are_compared_and_kept(tmp_path, capsys):
    swapped = {
        "test_add.py::a": {"outcome": "failed", "message": "AssertionError"},
        "test_add.py::b": {"outcome": "failed"},
        "test_cat.py::c": {"outcome": "failed"},  # does not quantize: not counted
    }
    original = write(tmp_path / "o.json", ORIGINAL)
    args = ["ops", "--original", original, "--swapped", write(tmp_path / "s.json", swapped)]
    assert main([*args, "--save", str(tmp_path / "kept")]) == 1
    out = capsys.readouterr().out
    assert "ops: 2 tests that quantize; passed: original 1, swapped 0; outcomes differ: 1" in out
    assert "  test_add.py::a: passed -> failed AssertionError" in out
    assert json.loads((tmp_path / "kept" / "ops-original.json").read_text()) == ORIGINAL
    assert main(["ops", "--original", original, "--swapped", original]) == 0


def test_saved_outcomes_are_one_suites(tmp_path):
    with pytest.raises(SystemExit):
        main(["all", "--original", write(tmp_path / "o.json", ORIGINAL)])


CORTEX_M = {"misc/test_quantization.py::a": {"outcome": "passed"}}
ARM = {
    "quantizer/test_set_module_name.py::a": {"outcome": "passed"},
    "misc/test_shared_qspecs.py::b": {"outcome": "xfailed"},
}


@pytest.mark.parametrize(
    "suite, original, swapped, lines",
    [
        (
            "cortex_m",
            CORTEX_M,
            {"misc/test_quantization.py::a": {"outcome": "failed", "message": "AssertionError"}},
            [
                "cortex_m: 1 tests; passed: original 1, swapped 0; outcomes differ: 1",
                "  swapped: 1 failed",
            ],
        ),
        (
            "arm",
            ARM,
            {**ARM, "misc/test_shared_qspecs.py::b": {"outcome": "failed"}},
            [
                "arm: 2 tests; passed: original 1, swapped 1; outcomes differ: 1",
                "  misc/test_shared_qspecs.py::b: xfailed -> failed",
            ],
        ),
    ],
)
def test_arm_env_runs_are_compared_without_their_environment(
    suite, original, swapped, lines, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("BCFG_ENVS", str(tmp_path / "none"))  # saved runs need no environment
    args = [suite, "--original", write(tmp_path / "o.json", original)]
    assert main([*args, "--swapped", write(tmp_path / "s.json", original)]) == 0
    assert main([*args, "--swapped", write(tmp_path / "n.json", swapped)]) == 1
    out = capsys.readouterr().out
    assert all(line in out for line in lines), out
    assert not (tmp_path / "none").exists()


def test_arm_swaps_one_class_or_a_module():
    with pytest.raises(SystemExit):
        main(["arm", "--swap", "m:C", "--swap-module", "m"])


def test_the_swap_replaces_each_class_on_every_module_holding_it(monkeypatch):
    """Arm's three classes, each by its namesake, on the defining module and on re-exports
    (a package __init__, a test module that imported it by name); the replacements' own
    module keeps the originals it wraps."""
    import sys
    import types

    from . import executorch_swap

    class TOSA:
        pass

    class EthosU(TOSA):
        pass

    defining = types.ModuleType("fake_arm_quantizer")
    defining.TOSA, defining.EthosU = TOSA, EthosU
    package = types.ModuleType("fake_arm")
    package.TOSA, package.Alias = TOSA, EthosU
    ours = types.ModuleType("fake_ours")
    ours.TOSA = type("TOSA", (), {"__module__": "fake_ours"})
    ours.EthosU = type("EthosU", (ours.TOSA,), {"__module__": "fake_ours"})
    ours.wrapped = TOSA
    for m in (defining, package, ours):
        monkeypatch.setitem(sys.modules, m.__name__, m)
    monkeypatch.setitem(executorch_swap.TARGETS, "fake", ("fake_arm_quantizer", ("TOSA", "EthosU")))
    replacements = executorch_swap.load("fake_ours", "fake")
    original, replaced = executorch_swap.swap(replacements, "fake")
    assert original is TOSA
    assert (defining.TOSA, defining.EthosU) == (ours.TOSA, ours.EthosU)
    assert (package.TOSA, package.Alias) == (ours.TOSA, ours.EthosU)
    assert ours.wrapped is TOSA
    assert sorted(replaced) == [
        "fake_arm.Alias",
        "fake_arm.TOSA",
        "fake_arm_quantizer.EthosU",
        "fake_arm_quantizer.TOSA",
    ]
    with pytest.raises(pytest.UsageError, match="has no EthosU"):
        executorch_swap.load("fake_arm", "fake")  # fake_arm has TOSA and Alias only


@pytest.mark.parametrize("key", ["arm"])
def test_an_environment_is_made_once_its_probe_imported(key, tmp_path, monkeypatch, capsys):
    """``python -m tests.live.envs KEY`` finds an environment under $BCFG_ENVS only once its
    probe imported (the ready mark is the last step of making it), and says how to make it."""
    from . import envs

    env = envs.ENVS[key]
    monkeypatch.setenv("BCFG_ENVS", str(tmp_path))
    assert env.root() == tmp_path / f"executorch-{key}"
    assert not env.ready() and envs.main([key]) == 1
    assert f"no environment at {env.root()}: python -m tests.live.envs {key} --create" in (
        capsys.readouterr().err
    )
    env.python().parent.mkdir(parents=True)
    env.python().write_text("")
    assert not env.ready()  # made, but its probe never imported
    (env.root() / ".bcfg-ready").write_text("")
    assert env.ready() and envs.main([key]) == 0
    assert capsys.readouterr().out == f"{env.python()}\n"
    assert env.create() == env.python()  # made already: nothing runs


def test_each_executorch_target_runs_in_its_environment_and_finds_its_tests():
    """Cortex-M and Arm run in one environment, the others (Cadence, NXP, ...) in the
    project's; each suite's files are where tests_dir says (found here in this environment's
    ExecuTorch, Cadence's alike)."""
    import sys
    from pathlib import Path

    from .envs import ARM as ARM_ENV
    from .envs import TARGET_ENV
    from .executorch_suites import CADENCE_FILES, SUITE_FILES, SUITE_PLUGINS, SUITE_TARGET, paths

    assert TARGET_ENV == {"cortex_m": ARM_ENV, "arm": ARM_ENV}
    assert set(SUITE_FILES) == set(SUITE_TARGET)  # each registry row's suite has its files
    # The others (Cadence's, NXP's, Vulkan's: WebGPU's linear test, Qualcomm's, Core ML's, a
    # new target's) run in the project's environment (Cadence's with typing.override's
    # backport, NXP's SDK replaced by tests/live/nxp_sdk.py; Qualcomm's with QNN_SDK_ROOT
    # empty): their files are here.
    here = sorted(set(SUITE_TARGET) - set(TARGET_ENV) - {"arm_ops"})
    assert {"cadence", "nxp", "vulkan", "qualcomm", "coreml"} <= set(here)
    assert SUITE_PLUGINS["cadence"] == ("-p", "tests.live.typing_backport")
    assert all(Path(p).is_file() for suite in here for p in paths(suite)), here
    pytest.importorskip("executorch.backends.cadence", reason="ExecuTorch is not installed")
    found = paths("cadence", Path(sys.executable))
    assert [Path(p).name for p in found] == CADENCE_FILES
    assert all(Path(p).is_file() for p in found), found
    assert all(Path(p).exists() for p in paths("quantizer") + paths("ops"))


def test_cadences_fusion_tests_collect_on_this_python_with_the_typing_backport(tmp_path):
    """ExecuTorch's Cadence fusion tests import typing.override (Python 3.12): on 3.11 they
    fail to collect, and collect with tests/live/typing_backport.py loaded, as the cadence
    suite's runs load it (executorch_suites.SUITE_PLUGINS)."""
    import os
    import re
    import subprocess
    import sys

    pytest.importorskip("executorch.backends.cadence", reason="ExecuTorch is not installed")
    from tests.support import REPO

    from .executorch_suites import SUITE_PLUGINS, paths

    fusion = [p for p in paths("cadence") if p.endswith("test_fusion_ops_passes.py")]

    def collect(*plugin: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"]
        cmd += ["-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO), *plugin, *fusion]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)

    backported = collect(*SUITE_PLUGINS["cadence"])
    assert backported.returncode == 0, backported.stdout[-2000:]
    collected = re.search(r"^(\d+) tests? collected", backported.stdout, re.M)
    assert collected and int(collected.group(1)) > 0, backported.stdout[-2000:]
    if sys.version_info < (3, 12):
        bare = collect()
        assert bare.returncode != 0 and "cannot import name 'override'" in bare.stdout, bare.stdout[
            -2000:
        ]


def test_the_full_tier_runs_every_registry_suite(capsys):
    """`.ci/full --suites` runs what ``--full-tier`` lists: XNNPACK's quantizer tests and each
    registry row's suites (a new row's too), but the on-demand Arm op tests."""
    from tests.targets import TARGETS

    assert main(["--full-tier"]) == 0
    listed = capsys.readouterr().out.split()
    named = {s for t in TARGETS for s in t.suites if t.suites[0] != "xnnpack"} - {"arm_ops"}
    assert listed[0] == "quantizer" and set(listed[1:]) == named and len(listed) == len(named) + 1
    assert {"cortex_m", "arm", "cadence", "nxp", "vulkan"} <= named
    from tests.support import REPO

    assert "--full-tier" in (REPO / ".ci" / "full").read_text()
