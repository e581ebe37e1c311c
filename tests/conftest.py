"""Shared fixtures: torch's own backend getters, the generated ones, the resolved specs."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support import REPO

# In CI every hypothesis test runs a fixed sequence of examples (no database,
# no fresh randomness), so a red build means a change, not a lucky draw.
# Locally each run explores new examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Keep bcfg's cache (and the CLI runs' caches) out of the user's cache folder."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(autouse=True)
def _restore_sys_path():
    """A CLI run in-process puts its project's root on ``sys.path`` (as the ``bcfg`` process
    would, for its whole life); the next test must not import that project's modules."""
    saved = list(sys.path)
    yield
    sys.path[:] = saved


@pytest.fixture(autouse=True)
def _restore_onednn():
    """Qualcomm's quantizer, ExecuTorch's and the generated copy alike, turns oneDNN off for the
    whole process on AMD CPUs (``disable_mkldnn_on_amd``, in ``transform_for_annotation``):
    after a test that ran it, the next test's numerics must not change (a converted model's
    outputs, compared bit for bit with a recording, did)."""
    torch = sys.modules.get("torch")
    before = torch.backends.mkldnn.enabled if torch is not None else True
    yield
    torch = sys.modules.get("torch")
    if torch is not None and torch.backends.mkldnn.enabled != before:
        torch.backends.mkldnn.enabled = before


@pytest.fixture(scope="session")
def analysis():
    """specs/ resolved: the FX backends, the PT2E-only targets and the quantizers."""
    from generator.config import find_project
    from generator.semantics.driver import resolve_specs

    project = find_project(REPO)
    return resolve_specs(project.root, project.spec_files(), project.allow)


@pytest.fixture(scope="session")
def resolved(analysis):
    """Every backend of specs/, resolved (not rendered), by module name."""
    return {b.module: b for b in analysis.backends}


@pytest.fixture(scope="session")
def every_backend(resolved, analysis):
    """``resolved`` and the PT2E-only targets (fx: false, no BackendConfig), by module name:
    every column of the support matrix."""
    return {**resolved, **{b.module: b for b in analysis.pt2e_only}}


@pytest.fixture(scope="session")
def pt2e_only(analysis) -> list[str]:
    """The PT2E-only targets (the specs that say ``fx: false``), sorted, as the support
    matrix orders their columns after the FX backends': the one list the tests take them
    from, so that a new target needs no test edit."""
    names = sorted(b.module for b in analysis.pt2e_only)
    assert names, "specs/ resolves no PT2E-only target"
    return names


@pytest.fixture
def project_copy(tmp_path):
    """A scratch copy of the project (pyproject, specs, generated, docs) to run the CLI in."""
    for name in ("specs", "generated", "docs"):
        shutil.copytree(REPO / name, tmp_path / name)
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


# The quick run, ``pytest -m "not slow"``, leaves these out: each module (or folder) takes a
# minute or more on a 2-core machine, mostly exporting, compiling, lowering or running many
# processes. README command 2 and CI run everything. docs/contributing/tests.md has the figures.
SLOW = {
    "tests/live/": "exports, quantizes and compares real models with torch's, torchao's "
    "and ExecuTorch's (most of the suite's time)",
    "tests/docs/test_site.py": "builds the site with MkDocs, and broken copies of it",
    "tests/docs/test_site_browser.py": "opens the built site in Chromium",
    "tests/emit/test_docs_browser.py": "opens the support matrix in Chromium",
    "tests/emit/test_stability.py": "regenerates every backend after each of its edits",
    "tests/tools/test_fuzz.py": "1,000 hypothesis mutants of the real specs",
    "tests/tools/test_lsp_fuzz.py": "the fuzzers' mutants through the language server",
    "tests/tools/test_projects.py": "a vendor's project driven through the bcfg script",
    "tests/tools/test_lsp_projects.py": "language servers on real projects",
    "tests/tools/test_precommit.py": "pre-commit itself, installing its hook repository",
    "tests/tools/test_compat.py": "bcfg compat against real prepare_fx runs",
    "tests/tools/test_compat_pt2e.py": "bcfg compat --pt2e: exports and prepare_pt2e runs",
    "tests/tools/test_diff_git.py": "bcfg diff on real git histories",
    "tests/infra/test_kill.py": "runs killed with SIGKILL at random moments",
    "tests/test_wheel.py": "builds a wheel and generates from it",
    "tests/test_examples.py": "the NPU example, quantized end to end",
    "tests/test_style.py": "black, ruff and mypy over every source (run ruff and mypy yourself)",
    "tests/emit/test_layout.py": "layout against black on every backend and random fragments",
    "tests/tools/test_import_hostile.py": "hostile import targets, each in its own process",
    "tests/tools/test_import_projects.py": "real projects' configs imported through the CLI",
    "tests/tools/test_streams.py": "every command with each stream closed or full",
    "tests/tools/test_hostile_text.py": "hypothesis' hostile names through every output",
    "tests/tools/test_import.py": "bcfg import of real and random BackendConfigs, in processes",
    "tests/tools/test_import_pt2e_full.py": "bcfg import of whole PT2E quantizers: the probe zoo, "
    "both export modes, and the proof",
    "tests/infra/test_fastcheck.py": "the fast path and each of its fallbacks, through the CLI",
    "tests/test_conformance.py": "every target's zoo annotated and compared with its recording",
    "tests/infra/test_tiers.py": "collects the suite three times, once a tier",
}


# The full tier: the reference quantizers run again (their self-checks, ExecuTorch's tests
# with the generated classes swapped in, deployments lowered and run), the recordings made
# again and compared with the checked-in ones, the docs pages' programs, the benchmark run.
# Left out of a run (deselected) unless it asks for them: ``--full`` (everything), ``-m full``
# (the full tier alone), or a file or folder of this table named on the command line. The
# PR tier (README command 2, CI) compares the generated classes with the recordings instead
# (tests/test_conformance.py). docs/contributing/tests.md has both tiers and their times.
FULL = {
    "tests/live/test_pt2e_arm.py": "ExecuTorch's Arm classes against themselves, a do-nothing "
    "class and the generated ones, lowered to TOSA, and four of ExecuTorch's tests",
    "tests/live/test_pt2e_x86.py": "torchao's X86 and Arm Inductor classes against the "
    "generated ones, prepared, converted and compiled",
    "tests/live/test_pt2e_xnnpack.py": "torchao's XNNPACK copy against the generated class, "
    "prepared and converted, both export modes, QAT",
    "tests/live/test_executorch_deploy.py": "the deploy zoo lowered to XNNPACK and run in "
    "ExecuTorch's runtime with both classes",
    "tests/live/test_pt2e_cortex_m.py": "ExecuTorch's Cortex-M class against the generated "
    "one, converted and lowered to CMSIS-NN",
    "tests/live/test_delegates.py": "generated quantizers lowered and run through ExecuTorch",
    "tests/live/test_executorch_swap.py": "ExecuTorch's own tests with the classes swapped",
    "tests/live/test_pt2e_scale_bench.py": "the scale benchmark's run",
    "tests/live/test_recordings.py": "the recordings made again, compared with tests/recordings",
    "tests/docs/test_pages.py": "runs every program and shell session the site shows",
    "tests/live/test_compat_composable.py": "bcfg compat on Cortex-M and Arm TOSA in the Arm "
    "environment (compat's exports keep torch's _guards_fn, which Cortex-M's passes refuse, "
    "wherever the path names no executorch)",
    # ExecuTorch's vendor classes (the PR tier: their recordings, tests/test_conformance.py,
    # and their quick checks, tests/live/test_vendor_targets.py).
    "tests/live/test_pt2e_vulkan.py": "ExecuTorch's Vulkan class against the generated one on "
    "zoo models, every setup, both export modes, and WebGPU's test swapped",
    "tests/live/test_pt2e_mediatek.py": "ExecuTorch's MediaTek class against the generated one "
    "on zoo models, two precisions, both export modes",
    "tests/live/test_pt2e_samsung.py": "ExecuTorch's Samsung class against the generated one on "
    "zoo models, two setups, both export modes",
    "tests/live/test_pt2e_nxp.py": "ExecuTorch's NXP class against the generated one on zoo "
    "models, and three of ExecuTorch's NXP tests swapped",
    "tests/live/test_vendor_compare.py": "bcfg compare of ExecuTorch's Vulkan, Samsung, MediaTek, "
    "NXP and Qualcomm (HTP, LPAI) classes against the generated ones on the probe zoo, both "
    "export modes",
    "tests/live/test_pt2e_qualcomm.py": "ExecuTorch's Qualcomm class against the generated one "
    "on zoo models, four setups, both export modes, LPAI's on three models, and its QAT conv-bn "
    "tests swapped",
    "tests/live/test_pt2e_coreml.py": "ExecuTorch's Core ML class against the generated one on "
    "zoo models, two configs, both export modes",
}


def _reason(table: dict[str, str], path: str) -> str | None:
    for where, reason in table.items():
        if path == where or (where.endswith("/") and path.startswith(where)):
            return reason
    return None


def _slow_reason(path: str) -> str | None:
    return _reason(SLOW, path) or _reason(FULL, path)


def wants_full(config: pytest.Config) -> bool:
    """Whether this run takes the full tier: ``--full``, a ``-m`` naming ``full``, or only
    full-tier files and folders named on the command line."""
    if config.getoption("--full") or "full" in (config.option.markexpr or ""):
        return True
    named = [a.split("::")[0].rstrip("/") for a in config.args]
    paths = []
    for arg in named:
        where = (REPO / arg).resolve() if not os.path.isabs(arg) else Path(arg).resolve()
        if not where.is_relative_to(REPO):
            return False
        paths.append(where.relative_to(REPO).as_posix())
    return bool(paths) and all(_reason(FULL, p) or _reason(FULL, p + "/") for p in paths)


# ``--dist loadfile`` (CI) hands each worker a whole file at a time, in the order the files
# are collected: the longest files go first, so that the run does not end with one worker
# on a long file while the other is idle (xdist's own order, by number of tests, left the
# few-test minutes-long files to the end). Seconds of each file's tests (setup included)
# with ``--durations=0``, two workers on 2 cores at load 10 to 12 (November 28; the files
# that run had not reached, from the morning's list, scaled): only their order matters.
# The Arm environment's files (which CI makes) and test_diff.py (since diff_cache) were
# timed one file at a time at load 4 to 6, and scaled by 1.5: test_diff.py and
# test_pages.py took 1.4 to 1.6 times less there than this list said. The files cut for
# time since (test_pt2e_arm.py's self-comparison to three models, test_pt2e_cortex_m.py's
# comparisons and deployment in one child process, test_fastcheck.py's warm cache,
# test_pages.py's first x86-inductor program run in test_pt2e_inductor_compile.py) are
# the figure before, less the time the cut saved in a one-file run at load 4 to 5, scaled
# alike. test_pt2e_scale_bench.py (its tiny-graph run, now with Cadence's strict export
# and --envs' run in the Arm environment) took 196 s plus about 75 s alone at load 3.
# A file not listed goes after these, a slow one (SLOW) before the quick ones.
SECONDS = {
    "tests/live/test_pt2e_arm.py": 780,
    "tests/docs/test_pages.py": 670,
    "tests/live/test_pt2e_x86.py": 480,
    "tests/live/test_pt2e_xnnpack.py": 410,
    "tests/live/test_executorch_deploy.py": 330,
    "tests/tools/test_import.py": 280,
    "tests/infra/test_fastcheck.py": 275,
    "tests/live/test_pt2e_scale_bench.py": 250,
    "tests/tools/test_diff.py": 240,
    "tests/live/test_compat.py": 210,
    "tests/live/test_compat_pt2e.py": 200,
    "tests/live/test_recordings.py": 200,
    "tests/live/test_pt2e_cortex_m.py": 195,
    "tests/tools/test_projects.py": 180,
    "tests/live/test_compat_composable.py": 165,
    "tests/live/test_pt2e_nxp.py": 60,  # alone (November 29): two short runs of ExecuTorch's tests
    "tests/live/test_delegates.py": 150,
    "tests/live/test_executorch_swap.py": 120,
    "tests/tools/test_fuzz.py": 100,
    # ExecuTorch's vendor quantizers (one file each, timed alone at load 3 to 4 on Nov 29).
    "tests/live/test_pt2e_mediatek.py": 100,
    "tests/live/test_pt2e_vulkan.py": 95,
    "tests/live/test_pt2e_samsung.py": 70,
    # six comparisons (Nov 29, at load 15: Vulkan, Samsung, NXP 3 to 4 min each, MediaTek 40;
    # Qualcomm 14 at load 16, its LPAI build 15 at load 8)
    "tests/live/test_vendor_compare.py": 4800,
    # alone at load 13 (Nov 29): two runs of a shipped file; LPAI's models 25 s at load 8
    "tests/live/test_pt2e_qualcomm.py": 1030,
    "tests/live/test_pt2e_coreml.py": 150,  # ExecuTorch's pattern graphs traced once: ~60 s
    "tests/live/test_vendor_targets.py": 25,  # alone at load 3 (Nov 29): MediaTek's imports
    "tests/test_conformance.py": 200,  # with Cortex-M and TOSA through the stand-in (Nov 29)
    "tests/tools/test_compat_stop.py": 70,
    # alone at load 7 (Nov 29): imports of small subjects on a few probes, each in a process
    "tests/tools/test_import_pt2e.py": 190,
    "tests/runtime/test_versions.py": 70,
    "tests/test_style.py": 70,
    "tests/runtime/test_key_witnesses.py": 40,  # alone at load 7 (Nov 29): 30 tiny exports
    "tests/runtime/test_registry.py": 40,  # alone at load 3, a zoo run beside (Nov 29): 1 export
    # 321 s alone at load 15 (Nov 29), an estimate for a free machine: two collections of
    # Cadence's fusion tests (typing backport) and the suites' CLI in processes
    "tests/live/test_executorch_suites.py": 80,
}


def file_weight(path: str) -> float:
    """How early ``--dist loadfile`` should start the file at ``path`` (more: earlier)."""
    if path in SECONDS:
        return SECONDS[path]
    return 1.0 if _slow_reason(path) is not None else 0.0


def _path(item: pytest.Item) -> str:
    return item.path.relative_to(REPO).as_posix() if item.path.is_relative_to(REPO) else ""


def pytest_configure(config):
    """With ``--dist loadfile``, keep the order pytest_collection_modifyitems gives the files
    (xdist would otherwise reorder them by their number of tests, the cheap corpus cases
    first and the few long tests last)."""
    config.addinivalue_line(
        "markers", "needs_env(env, what): needs an environment of tests/live/envs.py (Env.needed)"
    )

    if getattr(config.option, "dist", "no") in ("loadfile", "loadscope"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Mark the tests of SLOW's modules ``slow`` (``-m "not slow"`` is the quick run); in an
    xdist worker (whose collection order is the order the work is handed out in), put the
    longest files first (``SECONDS``)."""
    full, kept = [], []
    for item in items:
        path = _path(item)
        if _slow_reason(path) is not None:
            item.add_marker(pytest.mark.slow)
        if _reason(FULL, path) is not None:
            item.add_marker(pytest.mark.full)
            full.append(item)
        else:
            kept.append(item)
    if full and not wants_full(config):
        config.hook.pytest_deselected(items=full)
        items[:] = kept
    if hasattr(config, "workerinput"):
        order = {id(item): i for i, item in enumerate(items)}
        items.sort(key=lambda item: (-file_weight(_path(item)), order[id(item)]))


def pytest_runtest_setup(item):
    """A test marked by ``Env.needed`` skips where its environment is not made, and fails
    there under CI, which makes the Arm environment (``Env.check``)."""
    for mark in item.iter_markers("needs_env"):
        env, what = mark.args
        env.check(what)


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="run the full tier too (tests/conftest.py's FULL: the reference runs, the docs "
        "programs, the benchmark); -m full runs it alone",
    )
    parser.addoption(
        "--accept",
        action="store_true",
        default=False,
        help="tests/test_errors.py: write the current message of each error case as its expected one",
    )


def pytest_sessionfinish(session, exitstatus):
    """Take hypothesis' garbage-collection timer out before an xdist worker is stopped.

    pytest-xdist stops a worker by interrupting its main thread; when a collection is under
    way then, the ``KeyboardInterrupt`` lands in hypothesis' ``gc.callbacks`` entry and
    pytest prints it as an unraisable-exception warning after the last test, which is not
    the contributor's doing. The tests are over when this runs, so the timer is not needed.
    """
    import gc

    gc.callbacks[:] = [
        c for c in gc.callbacks if "gc_cumulative_time" not in getattr(c, "__qualname__", "")
    ]
