"""The targets table the benchmarks time: the project's one target registry, ``tests/targets.py``.

Each row is a shipped PT2E target: the generated module and class, the hand-written class
it replaces, the config both are set up with, the environment the reference imports in and
how the benchmarks treat it (``prepare``, ``fresh``, ``strict``). A new target is a row
there. A hand-written class too slow for the large graphs (ExecuTorch's XNNPACK quantizer,
about 20 s for 1,000 nodes) is stopped by the benchmark's time limit. A row with ``bench``
False (the vendor targets not measured yet: Vulkan, MediaTek, Samsung, NXP, Qualcomm) is left out, so
the docs' figures (``benchmarks/scale/figures.json``) need not cover it until it is.
"""

from __future__ import annotations

from tests.targets import TARGETS as REGISTRY
from tests.targets import Target

TARGETS = tuple(t for t in REGISTRY if t.bench)

__all__ = ["TARGETS", "Target"]
