"""The targets table the benchmarks time: the project's one target registry, ``tests/targets.py``.

Each row is a shipped PT2E target: the generated module and class, the hand-written class
it replaces, the config both are set up with, the environment the reference imports in and
how the benchmarks treat it (``prepare``, ``fresh``, ``strict``). A new target is a row
there. A hand-written class too slow for the large graphs (ExecuTorch's XNNPACK quantizer,
about 20 s for 1,000 nodes) is stopped by the benchmark's time limit. A row with ``bench``
False (the vendor targets not measured yet: Vulkan, MediaTek, Samsung; NXP and Qualcomm, measured
but not at every size) is left out by default, so the docs' figures
(``benchmarks/scale/figures.json``) need not cover it at every size; ``--targets`` names any
row of ``ALL``.
"""

from __future__ import annotations

from tests.targets import TARGETS as REGISTRY
from tests.targets import Target

ALL = tuple(REGISTRY)
TARGETS = tuple(t for t in REGISTRY if t.bench)

__all__ = ["ALL", "TARGETS", "Target"]
