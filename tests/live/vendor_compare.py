"""``bcfg compare`` of ExecuTorch's vendor quantizers against the generated classes, on the
probe zoo: the subjects (``MODULE:FUNCTION``) and the run, on demand.

Each function returns a quantizer made as tests/targets.py's row makes it (its ``setup``,
its ``before`` hook: NXP's SDK stand-in, MediaTek's package past its ``__init__``,
Qualcomm's ``QNN_SDK_ROOT`` set empty)::

    python -m generator compare tests.live.vendor_compare:vulkan_reference \\
        tests.live.vendor_compare:vulkan_generated

``python -m tests.live.vendor_compare [NAME ...]`` runs the comparison of each (default:
all six; ``qualcomm_lpai`` is Qualcomm's classes built with ``backend=kLpaiBackend``) on
every probe of the zoo, strict and non-strict exports, and prints each one's summary;
``tests/live/test_vendor_compare.py`` (the full tier) asserts the figures the
targets' docs pages state.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NAMES = ("vulkan", "enn", "neuropilot", "nxp", "qualcomm", "qualcomm_lpai")


def _made(name: str, side: str) -> Any:
    from tests.targets import BY_NAME

    t = BY_NAME[name]
    cls = t.reference_class() if side == "reference" else t.generated_class()
    return _fresh(lambda: t.make(cls)) if name in FRESH else t.make(cls)


# ExecuTorch's NeutronQuantizer annotates once: ``annotate`` marks each op's quantizer applied
# (``op_to_applied_quantizer``) and nothing resets it, so after the first graph with a cat
# (even one it found no partition in: a non-strict export) it leaves every later cat float.
# Its flow makes a quantizer a model; so does the comparison, on both sides.
FRESH = ("nxp",)


def _fresh(make: Any) -> Any:
    """A quantizer that makes a new one of ``make()`` for each graph it transforms."""
    from torchao.quantization.pt2e.quantizer import Quantizer

    class Fresh(Quantizer):
        def __init__(self) -> None:
            super().__init__()
            self.current = make()

        def transform_for_annotation(self, model: Any) -> Any:
            self.current = make()
            return self.current.transform_for_annotation(model)

        def annotate(self, model: Any) -> Any:
            return self.current.annotate(model)

        def validate(self, model: Any) -> None:
            self.current.validate(model)

    return Fresh()


def vulkan_reference() -> Any:
    return _made("vulkan", "reference")


def vulkan_generated() -> Any:
    return _made("vulkan", "generated")


def enn_reference() -> Any:
    return _made("enn", "reference")


def enn_generated() -> Any:
    return _made("enn", "generated")


def neuropilot_reference() -> Any:
    return _made("neuropilot", "reference")


def neuropilot_generated() -> Any:
    return _made("neuropilot", "generated")


def nxp_reference() -> Any:
    return _made("nxp", "reference")


def nxp_generated() -> Any:
    return _made("nxp", "generated")


def qualcomm_reference() -> Any:
    return _made("qualcomm", "reference")


def qualcomm_generated() -> Any:
    return _made("qualcomm", "generated")


def _lpai(side: str) -> Any:
    """Qualcomm's class (ExecuTorch's or the generated one) for its LPAI backend."""
    from executorch.backends.qualcomm.serialization.qc_schema import QnnExecuTorchBackendType

    return type(_made("qualcomm", side))(backend=QnnExecuTorchBackendType.kLpaiBackend)


def qualcomm_lpai_reference() -> Any:
    return _lpai("reference")


def qualcomm_lpai_generated() -> Any:
    return _lpai("generated")


def compare(name: str, *extra: str) -> dict[str, Any]:
    """``bcfg compare`` of ``name``'s reference and generated class: its JSON report."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "compare",
            f"tests.live.vendor_compare:{name}_reference",
            f"tests.live.vendor_compare:{name}_generated",
            "--format",
            "json",
            "--timeout",
            "5400",  # MediaTek's transform: about 40 minutes at load 15 on 2 cores
            *extra,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if run.returncode not in (0, 1):
        raise RuntimeError(f"bcfg compare of {name} exited {run.returncode}: {run.stderr[-2000:]}")
    return json.loads(run.stdout)


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Graphs same / differ / not exported, annotated nodes compared and differing, and the
    differing graphs by name. (A derived spec's function compares by what it computes: NXP's
    hooks' own ``bias_qparams`` and ExecuTorch's ``get_bias_qparams``, in a module that
    imports NXP's SDK, compare the same.)"""
    status: dict[str, int] = {}
    for g in report["graphs"]:
        status[g["status"]] = status.get(g["status"], 0) + 1
    differing = [g for g in report["graphs"] if g["status"] == "differ"]
    return {
        "graphs": len(report["graphs"]),
        **status,
        "nodes": sum(v["nodes"] for v in report["ops"].values()),
        "nodes differ": sum(v["differ"] for v in report["ops"].values()),
        "differing": [f"{g['name']} ({g['export']})" for g in differing],
    }


if __name__ == "__main__":
    for name in sys.argv[1:] or NAMES:
        print(name, json.dumps(summary(compare(name)), indent=1), flush=True)
