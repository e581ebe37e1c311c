"""Every zoo model of tests/live/executorch_support.py, every config form, both export modes: deployed.

    python -m tests.live.executorch_matrix [model ...]

prints one line per case (ExecuTorch's XNNPACKQuantizer against the generated
class: the delegate calls, the q/dq nodes, the seconds it took, OK or every
difference: annotations node by node, delegation, q/dq nodes, runtime outputs)
and a summary; the exit status is 1 if a case differs. A program that ExecuTorch's
runtime refuses to load with ExecuTorch's own quantizer too (a reused conv) is
compared up to that stage and marked "(both fail on the runtime)". The CI
subset is tests/live/test_executorch_deploy.py.
"""

from __future__ import annotations

import sys
import time

from .executorch_support import (
    CANDIDATE,
    CONFIGS,
    RUNTIME,
    ZOO,
    deploy_zoo,
    differences,
    et_quantizer,
    spec_size,
)


def plan(models: list[str] | None = None) -> list[tuple[str, str, bool]]:
    return [(m, c, s) for m in (models or list(ZOO)) for c in CONFIGS for s in (True, False)]


def main(argv: list[str]) -> int:
    cases = plan(argv or None)
    ours, ref = spec_size()
    print(
        f"specs/xnnpack_executorch.bcfg: {ours} code lines, {ours / ref:.0%} of ExecuTorch's quantizer's {ref}"
    )
    same = 0
    start = time.perf_counter()
    for model, config, strict in cases:
        t = time.perf_counter()
        ref = deploy_zoo(model, config, et_quantizer, strict)
        new = deploy_zoo(model, config, CANDIDATE, strict)
        problems = (
            [f"ExecuTorch's quantizer failed: {ref.failed}"]
            if ref.failed and not ref.failed.startswith(RUNTIME)
            else differences(ref, new)
        )
        note = " (both fail on the runtime)" if ref.failed and not problems else ""
        same += not problems
        mode = "strict" if strict else "non-strict"
        print(
            f"{model:16} {config:12} {mode:10} delegates={ref.delegates} qdq={sum(ref.qdq.values()):3} "
            f"{time.perf_counter() - t:5.1f}s {'OK' + note if not problems else '; '.join(problems)}",
            flush=True,
        )
    print(f"{same} of {len(cases)} cases deploy identically ({time.perf_counter() - start:.0f} s)")
    return 0 if same == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
