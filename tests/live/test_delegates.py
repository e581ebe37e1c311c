"""``delegate: xnnpack``: what generate warns about is what ExecuTorch 1.5.1 does.

Each case generates a quantizer from a small spec that says ``delegate: xnnpack``,
takes the warnings generate gives, configures the quantizer with a config its
dtype configs allow, and lowers a linear and a conv through ExecuTorch's own flow
(``executorch_support.deploy``: export, prepare/convert, ``XnnpackPartitioner``,
``to_executorch``, the runtime). A spec the delegate accepts gets no warning and
runs delegated; one it refuses gets the warning, and fails where it says.
"""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn as nn

pytest.importorskip(
    "executorch", reason="ExecuTorch deployment needs executorch (pip install '.[executorch]')"
)

from generator.emit.pt2e import render_quantizer, render_runtime  # noqa: E402
from generator.semantics.delegates import XNNPACK  # noqa: E402
from generator.semantics.driver import resolve_specs  # noqa: E402
from generator.semantics.model import quantizer_module  # noqa: E402

from .executorch_support import deploy  # noqa: E402

INT8 = "qint8 {quant_min: -128, quant_max: 127}"
SYMMETRIC_INT8 = "qint8 {quant_min: -127, quant_max: 127}"
SPEC = """
constraint act = ACT
constraint w = WEIGHT
dtypes weighted = {input: act, output: act, weight: w, bias: float}
backend npu {
    pattern nn.Linear { dtypes: weighted }
    pattern nn.Conv2d { dtypes: weighted }
}
quantizer npu { delegate: xnnpack }
"""


def quantizer(tmp_path, act: str, weight: str):
    """The generated quantizer of SPEC and the warnings generate gave for it."""
    import importlib
    import sys

    tmp_path.mkdir(exist_ok=True)
    spec = tmp_path / "npu.bcfg"
    spec.write_text(textwrap.dedent(SPEC.replace("ACT", act).replace("WEIGHT", weight)))
    analysis = resolve_specs(tmp_path, [spec], ("torch", "operator"))
    (q,) = analysis.quantizers
    pkg = tmp_path / "gen_delegate"
    for name, text in {
        **render_runtime(),
        f"{quantizer_module(q.module)}.py": render_quantizer(q),
    }.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    (pkg / "__init__.py").write_text("")
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module(f"gen_delegate.{quantizer_module(q.module)}")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("gen_delegate")]:
            del sys.modules[name]
    return module.get_npu_quantizer(), [d.message for d in analysis.warnings]


def config(
    act: torch.dtype, act_range: tuple[int, int], weight: torch.dtype, weight_range, qscheme
):
    from torchao.quantization.pt2e.observer import MinMaxObserver, PerChannelMinMaxObserver
    from torchao.quantization.pt2e.quantizer import QuantizationSpec
    from torchao.quantization.pt2e.quantizer.utils import QuantizationConfig

    per_channel = qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
    a = QuantizationSpec(
        dtype=act,
        quant_min=act_range[0],
        quant_max=act_range[1],
        qscheme=torch.per_tensor_affine,
        observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=2**-12),
    )
    w = QuantizationSpec(
        dtype=weight,
        quant_min=weight_range[0],
        quant_max=weight_range[1],
        qscheme=qscheme,
        ch_axis=0,
        observer_or_fake_quant_ctr=(
            PerChannelMinMaxObserver if per_channel else MinMaxObserver
        ).with_args(eps=2**-12),
    )
    return QuantizationConfig(a, a, w, None, False)


class LinearConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        return self.fc(self.conv(x).mean(dim=(2, 3)))


def lower(q, cfg):
    torch.manual_seed(0)
    return deploy(LinearConv().eval(), (torch.randn(1, 3, 8, 8),), q.set_global(cfg))


def test_int8_activations_and_symmetric_int8_weights_run_delegated(tmp_path):
    q, warnings = quantizer(
        tmp_path,
        INT8,
        SYMMETRIC_INT8,
    )
    assert warnings == []
    out = lower(
        q, config(torch.int8, (-128, 127), torch.int8, (-127, 127), torch.per_channel_symmetric)
    )
    assert out.failed == "" and out.outputs is not None
    assert out.delegates >= 1
    assert not [op for op in out.outside_ops if "quantize" in op]  # every q/dq in the delegate
    # a narrower int8 activation range runs too ("any range inside -128..127")
    q, warnings = quantizer(
        tmp_path / "narrow",
        "qint8 {quant_min: -64, quant_max: 63}",
        SYMMETRIC_INT8,
    )
    assert warnings == []
    out = lower(
        q, config(torch.int8, (-64, 63), torch.int8, (-127, 127), torch.per_tensor_symmetric)
    )
    assert out.failed == ""


def test_uint8_activations_are_the_warning_and_fail_at_to_executorch(tmp_path):
    """The npu guide's activations (quint8 0..127) lowered to XNNPACK."""
    q, warnings = quantizer(tmp_path, "quint8 {quant_min: 0, quant_max: 127}", SYMMETRIC_INT8)
    (warning,) = warnings
    assert warning.startswith("activations in quint8 (constraint act; dtype config weighted;")
    assert XNNPACK.failure["activation"] in warning
    out = lower(
        q, config(torch.uint8, (0, 127), torch.int8, (-127, 127), torch.per_channel_symmetric)
    )
    assert out.failed.startswith("to_executorch: RuntimeError: Missing out variants: ")
    assert "'quantized_decomposed::quantize_per_tensor'" in out.failed
    assert any("quantize_per_tensor" in op for op in out.outside_ops)  # left outside the delegate


def test_uint8_weights_are_the_warning_and_the_program_does_not_load(tmp_path, capfd):
    q, warnings = quantizer(tmp_path, INT8, "quint8 {quant_min: 0, quant_max: 255}")
    (warning,) = warnings
    assert warning.startswith("weights in quint8 (constraint w; dtype config weighted;")
    assert XNNPACK.failure["weight"] in warning
    capfd.readouterr()
    out = lower(q, config(torch.int8, (-128, 127), torch.uint8, (0, 255), torch.per_tensor_affine))
    assert out.failed.startswith("runtime: RuntimeError: Failed to load method forward")
    assert out.delegates >= 1  # it lowered
    assert "xnn_status_invalid_parameter" in capfd.readouterr().err  # the runtime's own log


def test_asymmetric_int8_weights_are_the_configs_and_xnnpack_refuses_or_miscomputes_them(tmp_path):
    """The guide's table: symmetry is the config's qscheme, which the spec does not say (no
    warning); an affine weight makes the linear's program fail to load, and per channel it runs
    with wrong results."""
    q, warnings = quantizer(
        tmp_path,
        INT8,
        INT8,
    )
    assert warnings == []
    out = lower(
        q, config(torch.int8, (-128, 127), torch.int8, (-128, 127), torch.per_tensor_affine)
    )
    assert out.failed.startswith("runtime: RuntimeError: Failed to load method forward")

    def error(qscheme) -> float:
        out = lower(q, config(torch.int8, (-128, 127), torch.int8, (-128, 127), qscheme))
        assert out.failed == "" and out.outputs is not None
        torch.manual_seed(0)
        model, x = LinearConv().eval(), torch.randn(1, 3, 8, 8)
        return (out.outputs[0] - model(x)).abs().max().item()

    symmetric, affine = error(torch.per_channel_symmetric), error(torch.per_channel_affine)
    print(f"largest error: symmetric {symmetric:.3g}, affine {affine:.3g}")
    assert affine > 5 * symmetric  # measured: 0.028 against 0.002
