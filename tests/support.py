"""What the tests share: the repository, torch's eight backends and their getters."""

from __future__ import annotations

import importlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


BACKENDS = [
    "native",
    "fbgemm",
    "qnnpack",
    "x86",
    "onednn",
    "executorch",
    "tensorrt",
    "qnnpack_pt2e",
]

# torch 2.13's pattern config counts (shared/notes/torch-facts.md).
CONFIG_COUNTS = {
    "native": 194,
    "fbgemm": 192,
    "qnnpack": 190,
    "x86": 192,
    "onednn": 221,
    "executorch": 84,
    "tensorrt": 149,
    "qnnpack_pt2e": 13,
}


def torch_getter(name: str):
    """torch's own getter for a backend."""
    import torch.ao.quantization.backend_config as bc

    if name == "x86":
        return importlib.import_module(
            "torch.ao.quantization.backend_config.x86"
        ).get_x86_backend_config
    if name == "qnnpack_pt2e":
        return importlib.import_module(
            "torch.ao.quantization.backend_config._qnnpack_pt2e"
        ).get_qnnpack_pt2e_backend_config
    return getattr(bc, f"get_{name}_backend_config")


def generated_getter(name: str):
    """The checked-in generated getter for a backend."""
    return getattr(importlib.import_module(f"generated.{name}"), f"get_{name}_backend_config")
