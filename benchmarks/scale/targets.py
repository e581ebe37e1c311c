"""The targets table the benchmarks time: the project's one target registry, ``tests/targets.py``.

Each row is a shipped PT2E target: the generated module and class, the hand-written class
it replaces, the config both are set up with, the environment the reference imports in and
how the benchmarks treat it (``prepare``, ``fresh``, ``strict``). A new target is a row
there. A hand-written class too slow for the large graphs (ExecuTorch's XNNPACK quantizer,
about 20 s for 1,000 nodes) is stopped by the benchmark's time limit.
"""

from __future__ import annotations

from tests.targets import TARGETS, Target

__all__ = ["TARGETS", "Target"]
