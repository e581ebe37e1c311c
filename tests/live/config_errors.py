"""Configs ExecuTorch's Arm QuantizationConfig refuses: ExecuTorch's class and the generated one raise alike.

    python -m tests.live.config_errors {cortex_m,arm_tosa}

runs in the environment of ``tests/live/envs.py``'s ``ARM`` and prints one JSON
object: for each (config, model), what ``prepare_pt2e`` raised with
ExecuTorch's class and with the generated one, as ``[type, message]``, or
``null`` when it raised nothing. The configs are ExecuTorch's int8 per-tensor
config with a per-channel input activation, output activation, both, or a
per-tensor affine weight, and the config itself (which raises nothing).
ExecuTorch's configs read their specs through validating accessors
(``get_input_act_qspec`` and the rest raise ``ValueError("Unsupported
quantization_spec ...")``): Arm TOSA's spec asks them per node (``configs:
accessors``), Cortex-M's reads the config's specs through them (``configs:
validated``), each where ExecuTorch reads them. ``tests/live/test_pt2e_cortex_m.py``
and ``test_pt2e_arm.py`` run it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import torch
from torch import nn


class Fn(nn.Module):
    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(*xs)


def models() -> dict[str, tuple[nn.Module, tuple]]:
    r = torch.randn
    return {
        "add": (Fn(lambda x, y: x + y), (r(2, 4), r(2, 4))),
        "linear": (nn.Linear(4, 4), (r(2, 4),)),
        "view": (Fn(lambda x: x.view(8)), (r(2, 4),)),
        "conv": (nn.Conv2d(3, 4, 3), (r(1, 3, 6, 6).to(memory_format=torch.channels_last),)),
    }


def configs(base: Any) -> dict[str, Any]:
    from torchao.quantization.pt2e import PerChannelMinMaxObserver
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    channel = QuantizationSpec(
        dtype=torch.int8,
        observer_or_fake_quant_ctr=PerChannelMinMaxObserver,
        qscheme=torch.per_channel_symmetric,
        ch_axis=1,
    )
    affine = dataclasses.replace(base.weight, qscheme=torch.per_tensor_affine)
    return {
        "valid": base,
        "per_channel_input": dataclasses.replace(base, input_activation=channel),
        "per_channel_output": dataclasses.replace(base, output_activation=channel),
        "per_channel_both": dataclasses.replace(
            base, input_activation=channel, output_activation=channel
        ),
        "affine_weight": dataclasses.replace(base, weight=affine),
    }


def raised(make: Any, module: nn.Module, inputs: tuple) -> list[str] | None:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    torch.manual_seed(0)
    model = torch.export.export(module.eval(), inputs).module()
    try:
        prepare_pt2e(model, make())
    except Exception as e:  # what each class raises is the result
        return [type(e).__name__, str(e)]
    return None


def classes(target: str) -> tuple[Any, Any, Any]:
    """ExecuTorch's class, the generated one, and a function of a config giving a quantizer."""
    if target == "cortex_m":
        from executorch.backends.cortex_m.quantizer import quantization_configs as c
        from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer

        from generated.cortex_m_quantizer import CortexMQuantizer as Ours

        return CortexMQuantizer, Ours, (c.INT8_PER_TENSOR_CONFIG, lambda cls, cfg: cls(cfg))
    from executorch.backends.arm.quantizer import arm_quantizer as a
    from executorch.backends.arm.tosa.specification import TosaSpecification

    from generated.arm_tosa_quantizer import TOSAQuantizer as Ours

    spec = TosaSpecification.create_from_string("TOSA-1.0+INT")
    base = a.get_symmetric_quantization_config()
    return a.TOSAQuantizer, Ours, (base, lambda cls, cfg: cls(spec).set_global(cfg))


def compare(target: str) -> dict[str, Any]:
    theirs, ours, (base, make) = classes(target)
    out = {}
    for cname, config in configs(base).items():
        for mname, (module, inputs) in models().items():
            out[f"{cname} {mname}"] = [
                raised(lambda cls=cls, config=config: make(cls, config), module, inputs)
                for cls in (theirs, ours)
            ]
    return out


def run(target: str) -> dict[str, Any]:
    """``compare(target)`` in the Arm environment (from the project's tests)."""
    from .envs import ARM

    done = ARM.run_module("tests.live.config_errors", target)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def check(result: dict[str, Any]) -> None:
    """Both classes raised alike for every config and model; the valid config raised nothing
    and a per-channel activation raised ExecuTorch's ValueError on every model."""
    differ = {k: v for k, v in result.items() if v[0] != v[1]}
    assert not differ, json.dumps(differ, indent=1)
    assert len(result) == 5 * 4  # configs() times models()
    for key, (theirs, _) in result.items():
        config = key.split()[0]
        if config == "valid":
            assert theirs is None, key
        elif config.startswith("per_channel"):
            assert theirs is not None and theirs[0] == "ValueError", key
            field = "input" if config.endswith("input") else "output"
            assert theirs[1].startswith("Unsupported quantization_spec"), theirs
            assert theirs[1].endswith(f"for {field}_activation."), theirs


if __name__ == "__main__":
    json.dump(compare(sys.argv[1]), sys.stdout, indent=1)
