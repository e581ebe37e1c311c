"""bcfg's reproduced production quantizers as ``bcfg import`` takes them: each target's
reference class, configured by default as ``tests/targets.py`` sets it up (its ``make``),
and each target's zoo for ``--models``::

    bcfg import tests.tools.pt2e_subjects.production:cadence -o cadence.bcfg \\
        --models tests.tools.pt2e_subjects.production:cadence_zoo

Cortex-M and Arm TOSA import only in ExecuTorch's Arm environment (``tests/live/envs.py``).
The figures are in docs/guides/migrating.md ("Imported production quantizers").
"""

from __future__ import annotations

from typing import Any

from tests.targets import TARGETS


def _target(name: str) -> Any:
    return next(t for t in TARGETS if t.name == name)


def _reference(name: str) -> Any:
    target = _target(name)
    return target.make(target.reference_class())


def _zoo(name: str) -> dict[str, tuple[Any, tuple]]:
    return _target(name).models()


def xnnpack() -> Any:
    return _reference("xnnpack")


def xnnpack_executorch() -> Any:
    return _reference("xnnpack_executorch")


def x86_inductor() -> Any:
    return _reference("x86_inductor")


def arm_inductor() -> Any:
    return _reference("arm_inductor")


def cadence() -> Any:
    return _reference("cadence")


def cortex_m() -> Any:
    return _reference("cortex_m")


def arm_tosa() -> Any:
    return _reference("arm_tosa")


def xnnpack_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("xnnpack")


def xnnpack_executorch_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("xnnpack_executorch")


def x86_inductor_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("x86_inductor")


def arm_inductor_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("arm_inductor")


def cadence_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("cadence")


def cortex_m_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("cortex_m")


def arm_tosa_zoo() -> dict[str, tuple[Any, tuple]]:
    return _zoo("arm_tosa")
