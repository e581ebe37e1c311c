"""The full comparison matrix: generated/xnnpack_quantizer.py against torchao's XNNPACKQuantizer.

    python -m tests.live.pt2e_matrix [--strict-only] [--quick] [--no-pattern-cache]

Every zoo model with every config form it takes, every edge case, and the
scope scenarios, each exported strict and non-strict; for each, whether the
annotations (node by node), converted outputs and converted graphs are the
same. Scope scenarios where bcfg's quantizers differ from XNNPACK on purpose
(README, "PT2E quantizers") carry the reason and count as expected when they
differ and as a failure when they do not. Exit status 1 if any case is not
as expected. CI runs a part of this matrix (tests/live/test_pt2e_xnnpack.py). torchao's
QAT patterns are traced once (``pattern_cache``) unless --no-pattern-cache.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from .pt2e_support import (
    EDGES,
    NONDETERMINISTIC,
    QAT_EDGES,
    ZOO,
    compare,
    compare_zoo,
    export,
    export_edge,
    pattern_cache,
    symmetric_config,
)

# Forms of get_symmetric_quantization_config each zoo model is run with.
FORMS = {
    "dyn_linear": ["dynamic", "per_channel"],
    "qat_conv_bn_relu": ["qat", "qat_per_tensor"],
    "qat_conv_bn": ["qat", "qat_per_tensor"],
}
DEFAULT_FORMS = ["per_channel", "per_tensor"]

# Scope scenarios on the `nested` zoo model: setup, and why bcfg differs (None: it does not).
WEIGHTS_HAVE_NO_STACK = (
    "XNNPACK applies module filters to weight and bias nodes, which carry no module "
    "stack, so it annotates no conv and no fused linear + relu in a module scope; bcfg "
    "applies scopes to a pattern's ops"
)


def _scopes() -> dict[str, tuple[Callable[[Any], Any], str | None]]:
    import torch
    import torch.nn as nn

    from .pt2e_support import LinearStack

    pc, pt, dyn = (symmetric_config(c) for c in ("per_channel", "per_tensor", "dynamic"))
    return {
        "global per-tensor": (lambda q: q.set_global(pt), None),
        "module_name sub": (lambda q: q.set_module_name("sub", pc), WEIGHTS_HAVE_NO_STACK),
        "module_name block": (lambda q: q.set_module_name("block", pc), WEIGHTS_HAVE_NO_STACK),
        "module_name sub.fc3": (lambda q: q.set_module_name("sub.fc3", pc), None),
        "module_type nn.Linear": (lambda q: q.set_module_type(nn.Linear, pc), None),
        "module_type LinearStack": (
            lambda q: q.set_module_type(LinearStack, pc),
            WEIGHTS_HAVE_NO_STACK,
        ),
        "operator_type aten.linear": (
            lambda q: q.set_operator_type(torch.ops.aten.linear.default, pc),
            "XNNPACK ignores set_operator_type; bcfg gives it the usual precedence",
        ),
        "global + module_name sub.fc3": (
            lambda q: q.set_global(pt).set_module_name("sub.fc3", pc),
            None,
        ),
        "global dynamic + module_name fc": (
            lambda q: q.set_global(dyn).set_module_name("fc", pt),
            None,
        ),
    }


def plan(strict_only: bool = False, quick: bool = False) -> list[tuple[str, str, str, bool]]:
    """Every case: (group, name, config form or scope, strict)."""
    modes = [True] if strict_only else [True, False]
    cases = []
    for strict in modes:
        for model in ZOO:
            if model == "nested":
                continue
            for form in FORMS.get(model, DEFAULT_FORMS)[: 1 if quick else None]:
                cases.append(("zoo", model, form, strict))
        for name in [*EDGES, *QAT_EDGES]:
            cases.append(("edge", name, "", strict))
        for name in _scopes():
            cases.append(("scope", name, "", strict))
    return cases


def run_case(group: str, name: str, form: str, strict: bool) -> tuple[list[str], str | None]:
    """The differences of one case, and why bcfg differs from XNNPACK there (None: it should not)."""
    from generated.xnnpack_quantizer import get_xnnpack_quantizer

    if group == "zoo":
        return compare_zoo(name, form, strict, get_xnnpack_quantizer), None
    if group == "edge":
        gm, args, config = export_edge(name, strict)
        cfg = symmetric_config(config)
        reason = "torchao is not deterministic here" if (name, strict) in NONDETERMINISTIC else None
        setup = lambda q: q.set_global(cfg)  # noqa: E731
        return compare(gm, args, setup, get_xnnpack_quantizer, cfg.is_qat), reason
    setup, reason = _scopes()[name]
    gm, args = export("nested", strict)
    return compare(gm, args, setup, get_xnnpack_quantizer, False), reason


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    if "--no-pattern-cache" in argv:
        return _run(argv)
    with pattern_cache():
        return _run(argv)


def _run(argv: list[str]) -> int:
    cases = plan("--strict-only" in argv, "--quick" in argv)
    same = expected = bad = 0
    start = time.perf_counter()
    for group, name, form, strict in cases:
        t0 = time.perf_counter()
        problems, reason = run_case(group, name, form, strict)
        took = time.perf_counter() - t0
        if not problems and reason is None:
            same += 1
            verdict = "same"
        elif problems and reason is not None:
            expected += 1
            verdict = f"differs, as expected: {reason}"
        elif reason is not None and "deterministic" in reason:
            same += 1
            verdict = "same (this run)"
        else:
            bad += 1
            verdict = "UNEXPECTED: " + ("; ".join(p[:160] for p in problems[:3]) or reason or "")
        mode = "strict    " if strict else "non-strict"
        print(f"{group:5} {name[:38]:38} {form:14} {mode} {took:5.1f}s  {verdict}", flush=True)
    total = time.perf_counter() - start
    print(
        f"{len(cases)} cases in {total:.0f} s: {same} the same as XNNPACK, "
        f"{expected} different as documented, {bad} unexpected"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
