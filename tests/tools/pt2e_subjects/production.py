"""bcfg's reproduced production quantizers as ``bcfg import`` takes them: each target's
reference class, configured by default as ``tests/targets.py`` sets it up (its ``make``),
and each target's zoo for ``--models``::

    bcfg import tests.tools.pt2e_subjects.production:cadence -o cadence.bcfg \\
        --models tests.tools.pt2e_subjects.production:cadence_zoo

Cortex-M and Arm TOSA import only in ExecuTorch's Arm environment (``tests/live/envs.py``).
The figures are in docs/guides/migrating.md ("Imported production quantizers").
"""

from __future__ import annotations

import functools
from typing import Any

from tests.targets import TARGETS


def _target(name: str) -> Any:
    return next(t for t in TARGETS if t.name == name)


def _reference(name: str) -> Any:
    """The target's reference class, configured as ``tests/targets.py`` sets it up."""
    target = _target(name)
    return target.make(target.reference_class())


def _zoo(name: str) -> dict[str, tuple[Any, tuple]]:
    return _target(name).models()


# NAME() and NAME_zoo() for each reproduced production quantizer
NAMES = ("xnnpack", "xnnpack_executorch", "x86_inductor", "arm_inductor", "cadence", "cortex_m",
         "arm_tosa")  # fmt: skip
for _name in NAMES:
    globals()[_name] = functools.partial(_reference, _name)
    globals()[f"{_name}_zoo"] = functools.partial(_zoo, _name)
