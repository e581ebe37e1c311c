"""ExecuTorch's own XNNPACK and Cortex-M tests, original against swapped, test by test.

    python -m tests.live.executorch_suites [quantizer|ops|all|SUITE]
        [--swap module:Class | --swap-module MODULE] [--tree DIR]
        [--original FILE] [--swapped FILE] [--save DIR] [--runxfail]
    python -m tests.live.executorch_suites --full-tier

(SUITE: a suite a row of tests/targets.py names: cortex_m, arm, arm_ops, cadence,
vulkan, coreml, nxp, qualcomm; ``--full-tier`` lists those `.ci/full --suites` runs)

runs ExecuTorch's XNNPACK quantizer tests (``backends/xnnpack/test/quantizer``,
57 tests) and the op tests that may quantize through the ``Tester``
(``backends/xnnpack/test/ops``, the 17 files below), where pip installed them,
twice: with ExecuTorch's XNNPACKQuantizer, and with it swapped for the generated
class (tests/live/executorch_swap.py). It prints the figures (passed of each
run; for the op tests, only those that ran the Tester's Quantize stage) and
every test whose outcome differs; the exit status is 1 if one does. The
quantizer tests take about 5 minutes a run on 2 free cores, the op files about
25: this is run before resolving, not in CI (tests/live/test_executorch_swap.py
runs a few of them there).

``cortex_m`` runs ExecuTorch's Cortex-M tests (``CORTEX_M_FILES`` under
``backends/cortex_m/test``, without ``test_implementation_*`` and
``*_runs_on_fvp``, which need a built runner or an FVP) with its ``CortexMQuantizer`` and with the generated
class, in the environment of ``tests/live/envs.py``'s ``ARM`` (made on first use:
they import only with ``executorch[ethos-u]``); about 9 minutes a run.
``--runxfail`` runs expected failures as plain tests, so that a difference
cannot hide behind a non-strict xfail.

``vulkan`` runs ``VULKAN_FILES`` (WebGPU's test of the 4-bit linear that ExecuTorch's
``VulkanQuantizer`` makes, the one CPU test that builds it) here, original against
``generated.vulkan_quantizer``'s class; about 30 s a run.

``cadence`` runs ExecuTorch's Cadence quantizer tests (``CADENCE_FILES`` under
``backends/cadence/aot/tests``) with its Cadence classes and with the
generated family (``--swap`` a module: every class and ``qconfig_*`` object of
ExecuTorch's ``cadence/aot/quantizer/quantizer.py`` that the module's
``__all__`` names, replaced together), in the project's environment: its
fusion files import ``typing.override`` (Python 3.12), which
``tests/live/typing_backport.py`` gives Python 3.11 (``typing_extensions``'
backport, loaded as a plugin before collection); about 7 minutes a run.

``arm`` runs ExecuTorch's Arm quantizer tests (``ARM_FILES`` under
``backends/arm/test``: ``quantizer/`` but ``test_selective_quantization.py``,
and ``misc/test_shared_qspecs.py``, ``misc/test_quant_custom_meta.py``,
``misc/test_bn_relu_folding_qat.py``; 69 tests, ``-k "not
test_implementation"``) in the same environment, with ExecuTorch's
``TOSAQuantizer``, ``EthosUQuantizer`` and ``VgfQuantizer`` and with each
replaced by its namesake in ``--swap-module`` (default
``generated.arm_tosa_quantizer``), on its defining module and on every module
that re-exports it (``executorch.backends.arm.quantizer``); ``--swap
module:Class`` puts one class in place of all three (``--swap
tests.live.executorch_swap:AnnotatesNothing``: 64 of the 69 fail). About 4
to 8 minutes a run on a loaded 2-core machine. ``arm_ops`` (on demand) runs
the TOSA INT op tests of ``ARM_OP_FILES`` (``-k tosa_INT``: they lower
through TOSA and run the TOSA reference model on CPU). ``--tree DIR`` imports
the replacement from another checkout of the project (its ``specs/`` and
``generated/``), e.g. a branch's worktree, while this checkout's harness runs.

``coreml`` runs ExecuTorch's Core ML quantizer tests (``COREML_FILES``: 6 tests, PTQ and
QAT) here, original against ``generated.coreml_quantizer``'s class; ExecuTorch's class
traces its pattern graphs at every annotate: about 10 to 15 minutes a run (the swapped
one under a minute).

``nxp`` runs ExecuTorch's NXP quantizer tests (``NXP_FILES`` under
``backends/nxp/tests``: 84 collected, 56 of them deselected by its conftest
for want of tflite) with its ``NeutronQuantizer`` and with the generated one,
in the project's environment, NXP's SDK replaced by tests/live/nxp_sdk.py's
stand-in (its tests then run from a temporary folder: its conftest makes a
``.outputs`` folder in the working directory); about 6 minutes a run.

``qualcomm`` runs ExecuTorch's Qualcomm tests that run on CPU without the QNN SDK
(``QUALCOMM_FILES`` under ``backends/qualcomm/tests``: 38 tests) with its ``QnnQuantizer``
and with the generated one, in the project's environment, ``QNN_SDK_ROOT`` set empty
(else building the class tries to download the SDK).

``--save DIR`` keeps each run's outcomes (``DIR/<suite>-original.json`` and
``DIR/<suite>-swapped.json``: each test's outcome, message, and for op tests
whether it quantized). ``--original FILE`` (or ``--swapped FILE``) reuses such a
file instead of running that side again, for one suite (``quantizer`` or
``ops``): the original run does not change with bcfg's specs, so it is run once
and compared with each swapped run. A file that does not exist yet (another run
is still writing it) is waited for once this run is done.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.live.executorch_swap import RENAMED
from tests.targets import TARGETS as REGISTRY

# What a suite's swapped side puts in place by default: the row's generated class, or its
# module where several classes (Arm's three) or a family (Cadence's) are replaced together.
DEFAULT_SWAP = {
    t.suites[0]: (
        f"generated.{t.name}_quantizer"
        if len(t.swap[1]) > 1 or t.suites[0] in RENAMED
        else f"generated.{t.name}_quantizer:{t.generated}"
    )
    for t in REGISTRY
    if t.swap and t.suites
}
SWAP = DEFAULT_SWAP["xnnpack"]
CORTEX_M_SWAP = DEFAULT_SWAP["cortex_m"]
# A module: its TOSAQuantizer, EthosUQuantizer and VgfQuantizer replace ExecuTorch's.
ARM_SWAP = DEFAULT_SWAP["arm"]
CADENCE_SWAP = DEFAULT_SWAP["cadence"]
CADENCE_NOTHING = "tests.live.executorch_swap:CadenceAnnotatesNothing"
# The one test that builds ExecuTorch's VulkanQuantizer on CPU (under backends/).
VULKAN_SWAP = DEFAULT_SWAP["vulkan"]
VULKAN_FILES = ["webgpu/test/ops/test_linear_qcs4w.py"]
NXP_SWAP = DEFAULT_SWAP["nxp"]
# ExecuTorch's Core ML quantizer test (under backends/; coremltools' native library is not
# needed by the quantizer, and the tests use none of it).
COREML_SWAP = DEFAULT_SWAP["coreml"]
COREML_FILES = ["apple/coreml/test/test_coreml_quantizer.py"]
NXP_NOTHING = "tests.live.executorch_swap:NeutronAnnotatesNothing"
QUALCOMM_SWAP = DEFAULT_SWAP["qualcomm"]
QUALCOMM_NOTHING = "tests.live.executorch_swap:QnnAnnotatesNothing"
# Under backends/qualcomm/tests: the tests that run on CPU without the QNN SDK.
QUALCOMM_FILES = ("test_conv_bn_qat.py", "test_passes.py")
# Under backends/nxp/tests: its quantizer tests (its conftest deselects those needing tflite).
NXP_FILES = ("generic_tests/test_quantizer.py",)
CADENCE_FILES = (
    "test_quantizer_ops.py test_fusion_ops_passes.py test_remove_bn_tracking_pass.py"
).split()
NOTHING = "tests.live.executorch_swap:AnnotatesNothing"
CORTEX_M_FILES = (
    "misc/test_quantization.py misc/test_quantizer_reporter.py misc/test_pattern_matcher.py "
    "misc/test_node_finders.py test_activation_lut.py ops/test_add.py ops/test_conv.py "
    "ops/test_softmax.py ops/test_linear.py models/test_nn_modules.py "
    "test_explicit_layout.py test_explicit_layout_pipeline.py"
).split()
# Under backends/arm/test: the quantizer tests (all but test_selective_quantization.py) and
# the misc tests that quantize without a runner.
ARM_FILES = (
    "quantizer/test_conv_relu_fusing.py quantizer/test_generic_annotater.py "
    "quantizer/test_partial_quantization.py quantizer/test_preserve_kwargs.py "
    "quantizer/test_set_module_name.py quantizer/test_tosa_quantizer_validate.py "
    "quantizer/test_uint8_io_quantization.py quantizer/test_vgf_snorm_quantization.py "
    "misc/test_shared_qspecs.py misc/test_quant_custom_meta.py misc/test_bn_relu_folding_qat.py"
).split()
# The TOSA INT op tests (-k tosa_INT) lower and run the TOSA reference model on CPU.
ARM_OP_FILES = "add mul cat conv2d linear avg_pool2d max_pool layer_norm softmax".split()
# Each suite's test files under executorch/backends/ (a new row's suite: its entry here).
SUITE_FILES: dict[str, list[str]] = {
    "cortex_m": [f"cortex_m/test/{name}" for name in CORTEX_M_FILES],
    "arm": [f"arm/test/{name}" for name in ARM_FILES],
    "arm_ops": [f"arm/test/ops/test_{name}.py" for name in ARM_OP_FILES],
    "cadence": [f"cadence/aot/tests/{name}" for name in CADENCE_FILES],
    "nxp": [f"nxp/tests/{name}" for name in NXP_FILES],
    "qualcomm": [f"qualcomm/tests/{name}" for name in QUALCOMM_FILES],
    "vulkan": VULKAN_FILES,
    "coreml": COREML_FILES,
}
# Which classes a suite replaces (a row of executorch_swap.TARGETS: the registry's row whose
# ``suites`` name it, under its first suite's name), and its pytest options. XNNPACK's suites
# (quantizer, ops, all) are the default's.
SUITE_TARGET = {s: t.suites[0] for t in REGISTRY for s in t.suites if t.suites[0] != "xnnpack"}
# The suites `.ci/full --suites` runs (``python -m tests.live.executorch_suites --full-tier``
# lists them): XNNPACK's quantizer tests and every registry row's suites but the on-demand
# Arm op tests (and XNNPACK's op tests, 25 minutes a run).
FULL_TIER = ["quantizer", *(s for s in SUITE_TARGET if s != "arm_ops")]
# Plugins a suite's runs load: Cadence's tests import typing.override (Python 3.12), which
# tests/live/typing_backport.py gives Python 3.11 (typing_extensions' backport).
SUITE_PLUGINS = {"cadence": ("-p", "tests.live.typing_backport")}
SUITE_K = {
    "cortex_m": "not test_implementation and not runs_on_fvp",
    "arm": "not test_implementation",
    "arm_ops": "tosa_INT and not test_implementation",
}
OP_FILES = (
    "add cat clamp conv1d conv2d elu hardtanh leaky_relu linear maxpool2d mean_dim "
    "multiply permute slice_copy static_constant_pad sub to_copy"
).split()


def installed(python: Path | None = None) -> Path:
    """Where ExecuTorch is installed in the environment of ``python`` (default: this one)."""
    if python is None:
        import importlib.util

        spec = importlib.util.find_spec("executorch")  # a namespace package: no __file__
        assert spec is not None and spec.submodule_search_locations, "ExecuTorch is not installed"
        return Path(list(spec.submodule_search_locations)[0])
    code = "import executorch, sys; sys.stdout.write(list(executorch.__path__)[0])"
    found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return Path(found.stdout)


# Where a backend's tests are under ExecuTorch's package (backends/<backend>/test otherwise).
TESTS = {"cadence": "cadence/aot/tests", "nxp": "nxp/tests", "qualcomm": "qualcomm/tests"}


def tests_dir(python: Path | None, backend: str) -> Path:
    """Where ExecuTorch's tests of ``backend`` (xnnpack, cortex_m, arm, cadence) are in the
    environment of ``python`` (None: this one)."""
    return installed(python) / "backends" / TESTS.get(backend, f"{backend}/test")


def paths(suite: str, python: Path | None = None) -> list[str]:
    """The test files of ``suite`` in the environment of ``python`` (None: this one)."""
    if suite in SUITE_FILES:
        return [str(installed(python) / "backends" / name) for name in SUITE_FILES[suite]]
    root = tests_dir(None, "xnnpack")
    if suite == "quantizer":
        return [str(root / "quantizer")]
    return [str(root / "ops" / f"test_{name}.py") for name in OP_FILES]


def run(
    targets: list[str],
    swap: str,
    out: Path,
    extra: tuple[str, ...] = (),
    python: Path | None = None,
    target: str = "xnnpack",
) -> dict[str, dict]:
    """One pytest run of ``targets`` (swapped for ``swap`` unless empty) with ``python``
    (default: this one): each test's outcome."""
    cmd = [
        str(python or sys.executable),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "tests.live.executorch_swap",
    ]
    cmd += ["--bcfg-target", target, "--bcfg-outcomes", str(out)]
    cmd += [*(["--bcfg-swap", swap] if swap else []), *extra, *targets]
    # No bytecode: it would land in generated/ and specs/hooks/, beside checked-in sources.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    root = Path(__file__).resolve().parents[2]
    cwd = root
    if target == "nxp":
        # NXP's conftest makes (and empties) ./.outputs: run it elsewhere, this checkout's
        # settings and root kept, the project importable.
        cwd = Path(tempfile.mkdtemp(prefix="bcfg-nxp-"))
        cmd[3:3] = ["-c", str(root / "pyproject.toml"), "--rootdir", str(root)]
        env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    if target == "qualcomm":  # this checkout's settings and plugin, not the venv's checkout's
        cmd[3:3] = ["-c", str(root / "pyproject.toml"), "--rootdir", str(root)]
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, check=False, env=env)
    if not out.exists():  # pytest stopped before running (its error is on stderr above)
        raise SystemExit(f"pytest ran no tests: {' '.join(cmd)}")
    return json.loads(out.read_text())


def saved(path: Path, wait: float = 4 * 3600) -> dict[str, dict]:
    """The outcomes a run saved at ``path``; waits for a run that has not written them yet."""
    start = time.monotonic()
    announced = False
    while True:
        try:
            return json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            if time.monotonic() - start > wait:
                raise
            if not announced:
                print(f"waiting for {path} (a run still writing it)", flush=True)
                announced = True
            time.sleep(30)


def compare(
    original: dict[str, dict], swapped: dict[str, dict], ops: bool
) -> tuple[list[str], list[str]]:
    """(the tests counted, those whose outcome differs) - for op tests, those that quantize."""
    counted = [k for k, v in original.items() if not ops or v.get("quantizes")]
    differ = [k for k in counted if swapped.get(k, {}).get("outcome") != original[k]["outcome"]]
    return counted, differ


def figures(name: str, original: dict, swapped: dict, ops: bool) -> list[str]:
    counted, differ = compare(original, swapped, ops)

    def passed(d: dict) -> int:
        return sum(d.get(k, {}).get("outcome") == "passed" for k in counted)

    print(
        f"{name}: {len(counted)} tests{' that quantize' if ops else ''}; passed: "
        f"original {passed(original)}, swapped {passed(swapped)}; outcomes differ: {len(differ)}"
    )
    for label, d in (("original", original), ("swapped", swapped)):
        tally = Counter(d.get(k, {}).get("outcome", "missing") for k in counted)
        print(f"  {label}: " + ", ".join(f"{n} {o}" for o, n in sorted(tally.items())))
    for k in differ:
        print(
            f"  {k}: {original[k]['outcome']} -> {swapped.get(k, {}).get('outcome')} {swapped.get(k, {}).get('message', '')}"
        )
    return differ


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tests.live.executorch_suites")
    parser.add_argument(
        "suite",
        nargs="?",
        default="all",
        choices=["quantizer", "ops", "all", *SUITE_TARGET],
    )
    parser.add_argument(
        "--swap",
        help=f"module:Class (default {SWAP}; cortex_m: {CORTEX_M_SWAP}); "
        "for arm, one class in place of all three",
    )
    parser.add_argument(
        "--swap-module",
        help=f"a module whose classes replace ExecuTorch's of the same names (arm: default {ARM_SWAP})",
    )
    parser.add_argument(
        "--tree", type=Path, help="another checkout of the project to import the swap from"
    )
    parser.add_argument("--runxfail", action="store_true", help="run expected failures as tests")
    parser.add_argument("--original", type=Path, help="a saved original run's outcomes (JSON)")
    parser.add_argument("--swapped", type=Path, help="a saved swapped run's outcomes (JSON)")
    parser.add_argument("--save", type=Path, help="a directory to keep the outcome files in")
    return parser


def main(argv: list[str]) -> int:
    if argv == ["--full-tier"]:  # the suites .ci/full --suites runs, one a line
        print("\n".join(FULL_TIER))
        return 0
    parser = _parser()
    args = parser.parse_args(argv)
    if (args.original or args.swapped) and args.suite == "all":
        parser.error(
            "--original and --swapped are one suite's outcomes: name it (quantizer, ops, cortex_m, arm, arm_ops, cadence)"
        )
    if args.swap and args.swap_module:
        parser.error("--swap and --swap-module: give one")
    differ: list[str] = []
    extra: tuple[str, ...] = ("--runxfail",) if args.runxfail else ()
    target = SUITE_TARGET.get(args.suite, "xnnpack")
    if args.suite in SUITE_K:
        extra += ("-k", SUITE_K[args.suite])
    if args.suite in ("vulkan", "qualcomm", "coreml", "cadence"):  # this checkout's settings
        here = Path(__file__).resolve().parents[2]
        extra += ("-c", str(here / "pyproject.toml"), "--rootdir", str(here))
    extra += SUITE_PLUGINS.get(args.suite, ())
    if args.tree:
        # One token: pytest takes a bare path argument for its rootdir (and that tree's ini).
        extra += (f"--bcfg-path={args.tree.resolve()}",)
    swap = args.swap or args.swap_module or DEFAULT_SWAP[target]

    def side(suite: str, cls: str, path: Path) -> dict[str, dict]:
        from .envs import TARGET_ENV

        # Arm's (or Cadence's) environment is made on first use, only to run a side.
        python = TARGET_ENV[target].create() if target in TARGET_ENV else None
        start = time.monotonic()
        result = run(paths(suite, python), cls, path, extra, python, target)
        tally = Counter(v["outcome"] for v in result.values())
        print(
            f"{suite} {'swapped for ' + cls if cls else 'original'}: "
            + ", ".join(f"{n} {o}" for o, n in sorted(tally.items()))
            + f" in {time.monotonic() - start:.0f} s",
            flush=True,
        )
        return result

    with tempfile.TemporaryDirectory() as tmp:
        out = args.save or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for suite in ("quantizer", "ops") if args.suite == "all" else (args.suite,):
            swapped = (
                saved(args.swapped)
                if args.swapped
                else side(suite, swap, out / f"{suite}-swapped.json")
            )
            if args.original:
                original = saved(args.original)
                kept = out / f"{suite}-original.json"
                if args.save and args.original.resolve() != kept.resolve():
                    shutil.copyfile(args.original, kept)
            else:
                original = side(suite, "", out / f"{suite}-original.json")
            differ += figures(suite, original, swapped, suite == "ops")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
