"""A stand-in for NXP's eIQ Neutron SDK, so that ExecuTorch's NeutronQuantizer imports here.

ExecuTorch 1.5.1's ``backends/nxp`` imports ``eiq_neutron_sdk`` (NXP's SDK, not
on the package index) at module level: ``backend/neutron_converter_manager.py``
does, and the quantizer reaches it through its aten passes, graph utilities and
``backend/neutron_target_spec.py``. ``NeutronTargetSpec(target)`` asks the SDK
whether the target exists (``neutron_library_utils.isNeutronTarget``) and for its
description (``neutron_converter.getNeutronTarget``), and refuses a target with a
subsystem (Neutron-S) or of a hardware version other than N3. Annotation reads
only its ``neutron_target_info`` (``NeutronTargetNeutronC``: pure Python, in
ExecuTorch), which the constructor sets once those checks pass.

``install()`` puts a module ``eiq_neutron_sdk`` with those two submodules in
``sys.modules`` (unless a real one imports): every target of ``TARGETS`` is a
Neutron-C (no subsystem) of hardware version N3. Nothing else of the SDK is
there: converting to Neutron microcode (``neutron_converter.convertModel``)
raises, so a test that lowers to the NPU fails rather than passing on a fake.
It is part of the test harness only (``tests/live/nxp_zoo.py``, ``python -m
tests.live.executorch_suites nxp``, whose pytest runs load it as a plugin:
``-p tests.live.nxp_sdk``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

# The Neutron-C targets the stand-in knows (ExecuTorch's tests build "imxrt700").
TARGETS = ("imxrt700", "mcxn94x", "mcxn54x")
N3 = 2  # NeutronHWVersion.N3's value


class Target(types.SimpleNamespace):
    """What ``getNeutronTarget`` describes: a Neutron-C of hardware version N3."""


def _target(name: str) -> Target:
    if name not in TARGETS:
        raise ValueError(f"the Neutron SDK stand-in knows no target {name!r}")
    return Target(name=name, subsystem=False, hwVersion=N3, numUnits=1, numPipes=1, numMacs=1)


def _no_converter(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError(
        "tests/live/nxp_sdk.py stands in for the eIQ Neutron SDK: it cannot convert a model"
    )


def install() -> None:
    """Put the stand-in in ``sys.modules`` as ``eiq_neutron_sdk``, unless the SDK imports."""
    if "eiq_neutron_sdk" in sys.modules:
        return
    try:
        importlib.import_module("eiq_neutron_sdk")
        return
    except ImportError:
        pass
    sdk = types.ModuleType("eiq_neutron_sdk")
    sdk.__doc__ = "A stand-in for NXP's eIQ Neutron SDK (bcfg's tests/live/nxp_sdk.py)."
    converter = types.ModuleType("eiq_neutron_sdk.neutron_converter")
    converter.getNeutronTarget = _target  # type: ignore[attr-defined]
    converter.convertModel = _no_converter  # type: ignore[attr-defined]
    converter.CompilationContext = _no_converter  # type: ignore[attr-defined]
    utils = types.ModuleType("eiq_neutron_sdk.neutron_library_utils")
    utils.isNeutronTarget = lambda name: name in TARGETS  # type: ignore[attr-defined]
    utils.getNeutronTargets = lambda: [_target(t) for t in TARGETS]  # type: ignore[attr-defined]
    sdk.neutron_converter, sdk.neutron_library_utils = converter, utils  # type: ignore[attr-defined]
    sys.modules.update({sdk.__name__: sdk, converter.__name__: converter, utils.__name__: utils})


def target_spec(target: str = "imxrt700") -> Any:
    """ExecuTorch's ``NeutronTargetSpec(target)``, built on the stand-in."""
    install()
    from executorch.backends.nxp.backend.neutron_target_spec import NeutronTargetSpec

    return NeutronTargetSpec(target)


def pytest_configure(config: Any) -> None:
    """As a pytest plugin (``-p tests.live.nxp_sdk``): install before collection."""
    install()
