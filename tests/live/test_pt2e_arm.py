"""ExecuTorch's Arm quantizer (TOSAQuantizer, EthosUQuantizer, VgfQuantizer) and a class in its place.

ExecuTorch's Arm quantizer imports only in the environment of
``tests/live/envs.py``'s ``ARM`` (``executorch[ethos-u]``, whose tosa-tools pins numpy
below 2.2), so these tests run the Arm zoo (``tests/live/arm_zoo.py``) and a
few of ExecuTorch's own Arm tests (through ``tests/live/executorch_swap.py``)
there in a child process, and skip where that environment has not been made
(``python -m tests.live.envs arm --create``). They show the proof tells classes
apart: ExecuTorch's class compared with itself is the same in every model,
down to the TOSA flatbuffers and the reference model's outputs (three models
here: it only shows the harness is deterministic; ``BCFG_ARM_FULL=1`` runs
nine); a class that annotates nothing differs in every model and fails
ExecuTorch's tests. The generated classes (``generated/arm_tosa_quantizer.py``)
are compared where this tree has it, over nine models. About 8 minutes on a
2-core machine at load 4 to 6. ``python -m tests.live.arm_zoo`` runs the whole zoo and
``python -m tests.live.executorch_suites arm`` ExecuTorch's Arm tests.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support import REPO

from . import config_errors
from .envs import ARM

pytestmark = ARM.needed("ExecuTorch's Arm quantizer")

THEIRS = "executorch.backends.arm.quantizer:TOSAQuantizer"
NOTHING = "tests.live.executorch_swap:AnnotatesNothing"
OURS = REPO / "generated" / "arm_tosa_quantizer.py"
needs_ours = pytest.mark.skipif(
    not OURS.exists(), reason=f"no {OURS.relative_to(REPO)} in this tree (issue 33's Arm spec)"
)

# One model per kind of rule, deployed through TOSA: a conv chain with batch norm folded,
# a binary residual, a shared-qspec cat, a decomposed softmax, 16-bit activations, and
# set_module_type; set_io and Ethos-U and VGF's snorm config, not deployed.
SUBSET = [
    "conv_bn_relu",
    "add_mul_residual",
    "cat",
    "softmax",
    "a16w8_linear_add",
    "module_type_linear_float",
    "set_io_uint8",
    "ethos_u55_conv_add",
    "vgf_snorm_conv",
]


# Not lowered: Ethos-U and VGF (no FVP, no VGF runtime here), uint8 I/O (Arm's reference-model
# dispatch does not take the program's uint8 boundary).
NOT_DEPLOYED = {"set_io_uint8", "ethos_u55_conv_add", "vgf_snorm_conv"}

# ExecuTorch's class against itself only shows the harness is deterministic: in a run of the
# suite, three models (a conv lowered through TOSA, 16-bit activations lowered through
# TOSA+int16, and uint8 I/O, not lowered) instead of SUBSET's nine (about 2 minutes less on
# a loaded 2-core machine); BCFG_ARM_FULL=1 runs all nine, `python -m tests.live.arm_zoo
# --quantizer executorch.backends.arm.quantizer:TOSAQuantizer` the whole zoo.
SELF = (
    SUBSET
    if os.environ.get("BCFG_ARM_FULL")
    else ["conv_bn_relu", "a16w8_linear_add", "set_io_uint8"]
)


def zoo(quantizer: str, names: list[str], *options: str) -> tuple[int, dict]:
    run = ARM.run_module(
        "tests.live.arm_zoo", "--quantizer", quantizer, *options, *names, timeout=1800
    )
    assert run.stdout, run.stderr[-3000:]
    return run.returncode, json.loads(run.stdout)


def test_executorchs_class_against_itself_is_the_same_down_to_the_tosa_bytes():
    code, result = zoo(THEIRS, SELF)
    assert sorted(result) == sorted(SELF)
    assert code == 0, json.dumps(result, indent=1)
    for name, r in result.items():
        theirs, ours = r["annotated"]
        assert theirs == ours >= 3, (name, r)
        assert r["graph"] and r["converted"] and not r["differ"], (name, r)
        if name in NOT_DEPLOYED:
            assert "tosa" not in r, (name, r)
        else:
            assert r["tosa"] and r["reference"] and min(r["tosa_bytes"]) > 0, (name, r)


def test_a_class_that_annotates_nothing_differs_in_every_model():
    code, result = zoo(NOTHING, SUBSET, "--no-deploy")
    assert code == 1 and sorted(result) == sorted(SUBSET)
    for name, r in result.items():
        theirs, ours = r["annotated"]
        assert r["differ"] and ours == 0 < theirs and not r["converted"], (name, r)


@needs_ours
def test_the_generated_class_is_executorchs_in_the_zoo():
    code, result = zoo("generated.arm_tosa_quantizer:TOSAQuantizer", SUBSET)
    differ = {name: r for name, r in result.items() if r["differ"] or not r["converted"]}
    assert code == 0 and not differ, json.dumps(differ or result, indent=1)


# ExecuTorch's own Arm tests: shared qspecs over forks, conv+relu fused, set_module_name,
# and the uint8 I/O config's boundary through the composable quantizer.
CASES = [
    "misc/test_shared_qspecs.py::test_shared_qspec_quantizer[many_forks]",
    "quantizer/test_conv_relu_fusing.py::test_conv_relu_fusing_8a8w_tosa_INT_affine",
    "quantizer/test_set_module_name.py::test_set_module_name_tosa_INT",
    "quantizer/test_uint8_io_quantization.py::test_io_boundary_shared_cluster_is_quantized",
]


@needs_ours
def test_a_config_executorchs_accessors_refuse_raises_its_error_in_both_classes():
    """configs: accessors: ExecuTorch's validating accessors raise where ExecuTorch's do."""
    config_errors.check(config_errors.run("arm_tosa"))


def shipped(cls: str, out) -> dict[str, str]:
    from .executorch_suites import run, tests_dir

    root = tests_dir(ARM.python(), "arm")
    targets = [str(root / case) for case in CASES]
    result = run(targets, cls, out, (), ARM.python(), "arm")
    return {k.split("/test/", 1)[-1]: v["outcome"] for k, v in result.items()}


def test_executorchs_tests_pass_with_its_class_and_fail_with_nothing(tmp_path):
    assert shipped("", tmp_path / "original.json") == dict.fromkeys(CASES, "passed")
    assert shipped(NOTHING, tmp_path / "nothing.json") == dict.fromkeys(CASES, "failed")


@needs_ours
def test_executorchs_tests_pass_with_the_generated_classes(tmp_path):
    from .executorch_suites import ARM_SWAP

    assert shipped(ARM_SWAP, tmp_path / "swapped.json") == dict.fromkeys(CASES, "passed")
