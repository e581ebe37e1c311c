"""A pytest plugin: torchao's inductor quantizer classes replaced by bcfg's generated ones.

Loaded with ``-p tests.reference.swap`` before collection, so the test
modules import the generated class under torchao's name. ``BCFG_SWAP`` says
which: ``x86``, ``arm``, ``xnnpack`` (torchao's test copy of XNNPACKQuantizer,
``torchao.testing.pt2e._xnnpack_quantizer``), or empty for torchao's own
classes (the original run); ``x86-null``, ``arm-null`` or ``xnnpack-null``
swap in a generated class that annotates nothing, to see that the swap is live
(tests must fail). Torchao's Arm tests skip unless ``platform.processor()`` is
``aarch64``; they only annotate and convert, so both runs report aarch64.
Both runs export each of torchao's QAT pattern graphs once (the live suites'
cache, ``tests/live/pt2e_support.pattern_cache``): its QAT tests otherwise export the same
conv + batch norm patterns about 110 times per convert.
"""

from __future__ import annotations

import os
import platform

_CACHE = None


def pytest_configure(config) -> None:  # noqa: ANN001 - pytest's hook signature
    platform.processor = lambda: "aarch64"  # type: ignore[assignment]
    from tests.live.pt2e_support import pattern_cache

    global _CACHE  # kept: a dropped context manager would be collected and restore the tracer
    _CACHE = pattern_cache()
    _CACHE.__enter__()  # on for the whole run
    which, _, null = os.environ.get("BCFG_SWAP", "").partition("-")
    if which in ("x86", "all"):
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq

        from generated.x86_inductor_quantizer import X86InductorQuantizer

        xiq.X86InductorQuantizer = _nothing(X86InductorQuantizer) if null else X86InductorQuantizer
    if which in ("arm", "all"):
        import torchao.quantization.pt2e.quantizer.arm_inductor_quantizer as aiq

        from generated.arm_inductor_quantizer import ArmInductorQuantizer

        aiq.ArmInductorQuantizer = _nothing(ArmInductorQuantizer) if null else ArmInductorQuantizer
    if which == "xnnpack":
        import torchao.testing.pt2e._xnnpack_quantizer as xq

        from generated.xnnpack_quantizer import XnnpackQuantizer

        xq.XNNPACKQuantizer = _nothing(XnnpackQuantizer) if null else XnnpackQuantizer


def _nothing(cls: type) -> type:
    """``cls`` with an annotate that annotates nothing."""
    return type(cls.__name__, (cls,), {"annotate": lambda self, model: model})
