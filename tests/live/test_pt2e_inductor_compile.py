"""The converted models lower through Inductor (``torch.compile``) into the same kernels.

Issue 22's last bar for the X86 and Arm Inductor quantizers: after
``convert_pt2e``, ``torch.compile`` (Inductor on CPU, with
``torch._inductor.config.freezing``, as torchao's docs set it for quantized
models) turns the model quantized by the generated class into the same code
as the one quantized by torchao's class. Each case quantizes a small model
with both classes (static, global config), converts, compiles each (in an
Inductor cache made fresh for the run, with the FX graph cache off: each side
is lowered, not read back from the other's entry), and compares:

- the calls of the generated ``call`` function, in order, names normalised
  (``cpp_fused_quantize_per_tensor_0`` -> ``cpp_fused_quantize_per_tensor``;
  a oneDNN op with its string arguments, the post-op ``'relu'``/``'sum'``),
  so the comparison is about which kernels run, not about numbering;
- the outputs, with ``torch.equal``.

On X86 the quantized patterns become oneDNN's ``qconv_pointwise`` /
``qlinear_pointwise`` / ``qconv2d_pointwise.binary`` kernels (asserted, so a
model that lowered to float kernels on both sides would fail). Arm's int8
activations are not fused by Inductor's x86 passes on this CPU: its case
proves the same lowered code (quantize/dequantize kernels around the float
op), not oneDNN kernels. Three X86 models and one Arm model, and the two programs
of docs/guides/pt2e/x86-inductor.md, run in this process (it shares the first
C++ compile): ~35 s in all, most of it that first compile.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")


class ConvReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.relu = nn.Conv2d(3, 8, 3), nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


class Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 8)

    def forward(self, x):
        return self.linear(x)


class ConvAdd(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3), nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.a(x) + self.b(x)


MODELS: dict[str, tuple[Callable[[], nn.Module], Callable[[], torch.Tensor]]] = {
    "conv_relu": (ConvReLU, lambda: torch.randn(2, 3, 8, 8)),
    "linear": (Linear, lambda: torch.randn(4, 16)),
    "conv_add": (ConvAdd, lambda: torch.randn(2, 3, 8, 8)),
}
# The oneDNN kernel each X86 model must lower to.
ONEDNN = {
    "conv_relu": "torch.ops.onednn.qconv_pointwise.tensor('relu')",
    "linear": "torch.ops.onednn.qlinear_pointwise.tensor('none')",
    "conv_add": "torch.ops.onednn.qconv2d_pointwise.binary_tensor('sum', 'none')",
}


def classes(target: str) -> tuple[Any, Any, Callable[..., Any]]:
    """torchao's class, the generated one, and torchao's default config function."""
    if target == "x86":
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as x

        from generated.x86_inductor_quantizer import X86InductorQuantizer

        return (
            x.X86InductorQuantizer,
            X86InductorQuantizer,
            x.get_default_x86_inductor_quantization_config,
        )
    from torchao.quantization.pt2e.quantizer import arm_inductor_quantizer as a

    from generated.arm_inductor_quantizer import ArmInductorQuantizer

    return (
        a.ArmInductorQuantizer,
        ArmInductorQuantizer,
        a.get_default_arm_inductor_quantization_config,
    )


_CALL = re.compile(
    r"\b(cpp_fused_\w+?)(?:_\d+)?\(|\b(torch\.ops\.[\w.]+)\(([^\n]*)\)|\b(extern_kernels\.\w+)\("
)


def kernels(code: str) -> list[str]:
    """The calls of the generated ``call`` function, in order, without Inductor's numbering;
    a ``torch.ops`` call with its string arguments (oneDNN's post-ops)."""
    body = code[code.index("def call(") :]
    body = body[: body.find("\ndef ", 1)] if "\ndef " in body[1:] else body
    out = []
    for m in _CALL.finditer(body):
        if m.group(1):
            out.append(m.group(1))
        elif m.group(2):
            strings = re.findall(r"'([^']*)'", m.group(3))
            out.append(f"{m.group(2)}({', '.join(repr(s) for s in strings if s)})")
        else:
            out.append(m.group(4))
    return out


def compiled(cls: Any, config: Any, model: str) -> tuple[list[str], torch.Tensor]:
    """The model quantized with ``cls``, converted and compiled by Inductor: the kernels its
    code calls, and its output."""
    from torch._inductor import config as inductor
    from torch._inductor.utils import run_and_get_code
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    factory, example = MODELS[model]
    torch.manual_seed(0)
    args = (example(),)
    gm = torch.export.export(factory().eval(), args).module()
    prepared = prepare_pt2e(gm, cls().set_global(config))
    prepared(*args)
    converted = convert_pt2e(prepared)
    torch._dynamo.reset()
    with inductor.patch(freezing=True, fx_graph_cache=False), torch.no_grad():
        out, codes = run_and_get_code(torch.compile(converted), *args)
    torch._dynamo.reset()
    return kernels("\n".join(codes)), out


CASES = [("x86", "conv_relu"), ("x86", "linear"), ("x86", "conv_add"), ("arm", "linear")]


@pytest.fixture(scope="module")
def inductor_cache(tmp_path_factory):
    """A fresh Inductor cache for this run's compiles (its C++ kernels are built once)."""
    import os
    import shutil

    if not any(shutil.which(cc) for cc in ("g++", "c++", "clang++")):
        absent = "Inductor compiles C++ kernels on CPU: no C++ compiler (apt-get install g++)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{absent}; in CI there must be one")
        pytest.skip(absent)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("inductor")))
        yield


@pytest.mark.parametrize("target,model", CASES)
def test_compiles_to_the_same_kernels_as_torchao(target, model, inductor_cache):
    theirs, ours, config = classes(target)
    want = compiled(theirs, config(), model)
    got = compiled(ours, config(), model)
    assert got[0] == want[0]
    assert any("quantize_per_tensor" in k for k in got[0]), got[0]  # quantized, not float
    if target == "x86":
        assert ONEDNN[model] in got[0], got[0]
    assert torch.equal(got[1], want[1])


def test_kernels_normalises_numbering_and_keeps_post_ops():
    code = (
        "cpp_fused_quantize_per_tensor_0 = async_compile.cpp_pybinding([])\n"
        "def call(self, args):\n"
        "    cpp_fused_quantize_per_tensor_0(arg0_1, buf0)\n"
        "    buf1 = torch.ops.onednn.qconv_pointwise.tensor(buf0, 1.0, 0, 'relu', [None], '')\n"
        "    extern_kernels.addmm(a, b, c, out=buf2)\n"
        "    cpp_fused_dequantize_per_tensor_12(buf1, buf3)\n"
    )
    assert kernels(code) == [
        "cpp_fused_quantize_per_tensor",
        "torch.ops.onednn.qconv_pointwise.tensor('relu')",
        "extern_kernels.addmm",
        "cpp_fused_dequantize_per_tensor",
    ]


PAGE, START = "guides/pt2e/x86-inductor.md", "import re\n\nimport torch\n"


def test_the_guides_program_prints_what_the_guide_shows(inductor_cache):
    """The page's torch.compile program, run here (tests/docs lists it as run): what it
    prints is the output the page shows. Its Inductor settings end with it."""
    import contextlib
    import io

    from torch._inductor import config as inductor

    from tests.docs.pages import block, matches
    from tests.docs.test_pages import shown_after

    source = block(PAGE, "python", starting=START)
    out = io.StringIO()
    with inductor.patch(freezing=False, fx_graph_cache=True), contextlib.redirect_stdout(out):
        exec(compile(source, PAGE, "exec"), {"__name__": "__main__"})
    torch._dynamo.reset()
    assert "onednn.qconv_pointwise" in out.getvalue()
    assert matches(shown_after(PAGE, START), out.getvalue()), out.getvalue()


FIRST = "import torch\nfrom torchao."


def test_the_guides_first_program_quantizes_as_shown():
    """The page's first program (prepare and convert, no compile), run here rather than in a
    child process of tests/docs/test_pages.py (which lists it as run here): one import of
    torch and torchao fewer. What it prints is the output the page shows."""
    import contextlib
    import io

    from tests.docs.pages import block, matches
    from tests.docs.test_pages import shown_after

    source = block(PAGE, "python", starting=FIRST)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, PAGE, "exec"), {"__name__": "__main__"})
    assert "conv2d.default" in out.getvalue()
    assert matches(shown_after(PAGE, FIRST), out.getvalue()), out.getvalue()
