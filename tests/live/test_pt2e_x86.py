"""The proof on bcfg's own zoo: the generated X86 and Arm Inductor quantizers annotate as torchao's.

``generated/x86_inductor_quantizer.py`` (specs/x86_inductor.bcfg) and
``generated/arm_inductor_quantizer.py`` (specs/arm_inductor.bcfg) against
torchao 0.18's ``X86InductorQuantizer`` and ``ArmInductorQuantizer``: each
case exports a model (strict and non-strict), quantizes it with torchao's
class and with the generated one through the real prepare_pt2e /
prepare_qat_pt2e and convert_pt2e, and compares every annotation node by node
(pt2e_support.dump: input specs in order, output specs, dtype, range,
qscheme, axis, observer with its arguments, shared specs, the
``_is_output_of_quantized_pattern`` flag, and the empty annotations that
claim nodes), then the converted models' outputs (torch.equal) and graphs.
Nothing is pinned as different. torchao's own test files for the two
classes run with ``python -m tests.reference all`` (see tests/reference).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn

from .pt2e_support import ZOO, flat, run

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")


class Unary(nn.Module):
    """The unary fusions: hardswish, silu, conv1d + relu, linear + gelu/tanh/leaky_relu."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.a1 = nn.Conv2d(3, 4, 3), nn.Hardswish()
        self.c2, self.a2 = nn.Conv2d(4, 4, 3), nn.SiLU()
        self.c3, self.a3 = nn.Conv1d(4, 4, 3), nn.ReLU()
        self.l1, self.a4 = nn.Linear(14, 12), nn.GELU()
        self.l2, self.a5 = nn.Linear(12, 12), nn.Tanh()
        self.l3, self.a6 = nn.Linear(12, 8), nn.LeakyReLU()

    def forward(self, x):
        x = self.a2(self.c2(self.a1(self.c1(x))))
        x = self.a3(self.c3(x.flatten(2)))
        return self.a6(self.l3(self.a5(self.l2(self.a4(self.l1(x))))))


class Binary(nn.Module):
    """conv + add + relu, conv + add (either side), linear + add (+ relu), pooling and cat.

    Each ReLU is a module of its own: in non-strict graphs X86 raises on a module
    called twice in a fusion (a partition with two outputs)."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2, self.c3 = nn.Conv2d(3, 4, 3), nn.Conv2d(4, 4, 1), nn.Conv2d(4, 4, 1)
        self.relu, self.relu2, self.pool = nn.ReLU(), nn.ReLU(), nn.MaxPool2d(2)
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.l1, self.l2 = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        y = self.c1(x)
        y = self.relu(self.c2(y) + y)
        z = y + self.c3(y)
        p = torch.cat([self.pool(z), self.pool(y)], 1)
        v = torch.flatten(self.avg(p), 1)
        return self.relu2(self.l1(v) + v) + self.l2(v)


class Attention(nn.Module):
    """An attention-like block: q, k, v projections, matmul, softmax, mul of one shape."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(16, 16) for _ in range(4))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        a = torch.matmul(q, k.transpose(-2, -1)).softmax(-1)
        return self.o(torch.matmul(a, v) * v)


class QatBinary(nn.Module):
    """QAT conv + bn + add + relu, conv + bn + hardtanh, conv + bn + add."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.c2, self.b2 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)
        self.c3, self.b3 = nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4)
        self.relu, self.act = nn.ReLU(), nn.Hardtanh()

    def forward(self, x):
        y = self.act(self.b1(self.c1(x)))
        y = self.relu(self.b2(self.c2(y)) + y)
        return self.b3(self.c3(y)) + y


class ReusedLinear(nn.Module):
    """One Linear called twice, each call with its ReLU, then two Linears with one weight."""

    def __init__(self) -> None:
        super().__init__()
        self.l, self.r1, self.r2 = nn.Linear(8, 8), nn.ReLU(), nn.ReLU()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)
        self.b.weight = self.a.weight

    def forward(self, x):
        y = self.r2(self.l(self.r1(self.l(x))))
        return self.b(self.a(y))


class ReusedConv(nn.Module):
    """One Conv2d called twice, each call with its ReLU (in non-strict graphs torchao
    raises on it: the conv's source partition has two outputs)."""

    def __init__(self) -> None:
        super().__init__()
        self.c, self.r1, self.r2 = nn.Conv2d(4, 4, 1), nn.ReLU(), nn.ReLU()

    def forward(self, x):
        return self.r2(self.c(self.r1(self.c(x))))


class ReusedConvAlone(nn.Module):
    """One Conv2d called twice, nothing after."""

    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.c(self.c(x))


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...], bool]] = {
    **ZOO,
    "unary": (Unary, (torch.randn(2, 3, 8, 8),), False),
    "binary": (Binary, (torch.randn(2, 3, 10, 10),), False),
    "attention": (Attention, (torch.randn(2, 5, 16),), False),
    "qat_binary": (QatBinary, (torch.randn(2, 3, 8, 8),), True),
    "reused_linear": (ReusedLinear, (torch.randn(2, 8),), False),
    "reused_conv": (ReusedConv, (torch.randn(1, 4, 6, 6),), False),
    "reused_conv_alone": (ReusedConvAlone, (torch.randn(1, 4, 6, 6),), False),
}


def torchao(target: str) -> tuple[Any, Callable[..., Any]]:
    """torchao's class for ``target`` and its config function."""
    if target == "x86":
        from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as x

        return x.X86InductorQuantizer, x.get_default_x86_inductor_quantization_config
    from torchao.quantization.pt2e.quantizer import arm_inductor_quantizer as a

    return a.ArmInductorQuantizer, a.get_default_arm_inductor_quantization_config


def generated(target: str) -> Any:
    if target == "x86":
        from generated.x86_inductor_quantizer import X86InductorQuantizer

        return X86InductorQuantizer
    from generated.arm_inductor_quantizer import ArmInductorQuantizer

    return ArmInductorQuantizer


def configure(cls: Any, target: str, form: str, setup: str) -> Any:
    """A quantizer of ``cls`` set up as ``setup`` says (global, or with scopes too)."""
    config = torchao(target)[1](is_qat=form == "qat", is_dynamic=form == "dynamic")
    q = cls().set_global(config)
    if setup == "matmul":
        q.set_function_type_qconfig(torch.matmul, config)
    elif setup == "scopes":
        q.set_module_name_qconfig("l1", None).set_module_type_qconfig(nn.Conv2d, config)
        q.set_function_type_qconfig(torch.matmul, config)
    return q


def export(name: str, strict: bool) -> tuple[torch.fx.GraphModule, tuple]:
    factory, args, train = MODELS[name]
    torch.manual_seed(0)
    return torch.export.export(factory().train(train), args, strict=strict).module(), args


def plain(dump: list) -> list:
    """A dump with the annotation's class name left out (torchao's and bcfg's differ)."""
    out = []
    for name, record in dump:
        record = dict(record)
        if "extra" in record:
            record["extra"] = record["extra"][1]
        out.append((name, record))
    return out


def compare(
    target: str, model: str, form: str, strict: bool, setup: str = "global", cls: Any = None
) -> list[str]:
    """How the generated quantizer differs from torchao's on one case (empty: it does not)."""
    gm, args = export(model, strict)
    qat = form == "qat"
    ref = run(copy.deepcopy(gm), args, configure(torchao(target)[0], target, form, setup), qat)
    new = run(
        copy.deepcopy(gm), args, configure(cls or generated(target), target, form, setup), qat
    )
    if isinstance(ref[0], tuple) or isinstance(new[0], tuple):
        return [] if ref[0] == new[0] else [f"prepare: {ref[0]!r} / {new[0]!r}"]
    theirs, ours = dict(plain(ref[0])), dict(plain(new[0]))
    diff = [n for n in theirs.keys() | ours.keys() if theirs.get(n) != ours.get(n)]
    if diff:
        return sorted(diff)
    if not all(torch.equal(x, y) for x, y in zip(flat(ref[1]), flat(new[1]))):
        return ["convert_pt2e: outputs differ"]
    return [] if ref[2] == new[2] else ["convert_pt2e: graphs differ"]


STATIC = [
    "conv_bn_relu",
    "residual_add_relu",
    "linear_stack",
    "cat_pool",
    "mul",
    "hardtanh_relu6",
    "depthwise",
    "view_chain",
    "unary",
    "binary",
]
CASES = (
    [("x86", m, "static", s, "global") for m in STATIC for s in (True, False)]
    + [("x86", "attention", "static", s, "matmul") for s in (True, False)]
    + [("x86", m, "static", True, "scopes") for m in ("binary", "attention")]
    + [("x86", m, "dynamic", s, "global") for m in ("dyn_linear", "linear_stack") for s in (1, 0)]
    + [("x86", "attention", "dynamic", True, "matmul")]
    + [("x86", m, "qat", s, "global") for m in ("qat_conv_bn_relu", "qat_binary") for s in (1, 0)]
    + [("arm", m, "static", True, "global") for m in ("binary", "linear_stack", "unary")]
    + [("arm", "attention", "static", False, "matmul"), ("arm", "binary", "static", 1, "scopes")]
    + [("arm", "dyn_linear", "dynamic", True, "global"), ("arm", "qat_binary", "qat", 1, "global")]
    # Reused modules and tied weights: quantized at every call, as torchao's inductor does.
    + [
        ("x86", m, "static", s, "global")
        for m in ("reused_linear", "reused_conv_alone")
        for s in (1, 0)
    ]
    + [
        ("x86", "reused_conv", "static", True, "global"),
        ("x86", "reused_linear", "dynamic", 0, "global"),
    ]
    + [
        ("arm", "reused_linear", "static", False, "global"),
        ("arm", "reused_conv", "static", 1, "global"),
    ]
)


@pytest.mark.parametrize(("target", "model", "form", "strict", "setup"), CASES)
def test_annotates_as_torchao(target, model, form, strict, setup):
    assert compare(target, model, form, bool(strict), setup) == []


def test_a_wrong_spec_is_caught(tmp_path):
    """The X86 spec with the add's other input left float in conv + add: the zoo notices."""
    from pathlib import Path

    from .pt2e_support import generate

    text = (Path(__file__).parents[2] / "specs" / "x86_inductor.bcfg").read_text()
    wrong = text.replace(
        "pattern (nn.Conv2d, operator.add) {\n        dtypes: [static, dynamic]\n"
        "        pt2e: {match: source, other: quantized}",
        "pattern (nn.Conv2d, operator.add) {\n        dtypes: [static, dynamic]\n"
        "        pt2e: {match: source, other: float}",
    )
    assert wrong != text
    cls = type(generate(tmp_path, wrong)())
    assert compare("x86", "binary", "static", True, cls=cls) == ["add_1"]


def test_a_wrong_config_is_caught():
    """Weights in [-127, 127] through the generated class: every conv differs."""

    class Narrow(generated("x86")):  # type: ignore[misc]
        def set_global(self, cfg):
            from torchao.quantization.pt2e.quantizer import QuantizationConfig

            weight = dataclasses.replace(cfg.weight, quant_min=-127)
            return super().set_global(
                QuantizationConfig(
                    cfg.input_activation, cfg.output_activation, weight, cfg.bias, cfg.is_qat
                )
            )

    diff = compare("x86", "hardtanh_relu6", "static", True, cls=Narrow)
    assert diff == ["conv2d", "conv2d_1", "conv2d_2"]


def test_validate_rejects_what_the_spec_does_not_allow():
    """A config the spec allows passes validate; one it does not (int16 weights) is refused."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    cls, config_fn = generated("x86"), torchao("x86")[1]
    gm, args = export("linear_stack", True)
    prepare_pt2e(copy.deepcopy(gm), cls().set_global(config_fn()))
    config = config_fn()
    weight = dataclasses.replace(config.weight, dtype=torch.int16, quant_min=-1000, quant_max=1000)
    bad = dataclasses.replace(config, weight=weight)
    with pytest.raises(ValueError, match="weight.dtype is torch.int16"):
        prepare_pt2e(copy.deepcopy(gm), cls().set_global(bad))


def test_the_configuration_api_is_torchao_s():
    """Mixed QAT / static configs are skipped with torchao's warnings; unknown types warn."""
    cls, config_fn = generated("x86"), torchao("x86")[1]
    q = cls().set_global(config_fn())
    with pytest.warns(UserWarning, match="Mixed QAT and Non-QAT"):
        q.set_module_name_qconfig("sub", config_fn(is_qat=True))
    assert q.module_name_qconfig == {}
    with pytest.warns(UserWarning, match="Unable to customize"):
        q.set_module_type_qconfig(nn.LSTM, config_fn())
    q.set_module_type_qconfig(nn.Linear, None)
    assert q.operator_type_qconfig == {torch.ops.aten.linear.default: None}
    assert q.get_global_quantization_config() is config_fn()


def test_the_specs_are_a_quarter_of_torchao_s_code_at_most():
    """Spec and hook lines of both specs against torchao's quantizers (issue 22: 435 of 1,739)."""
    from tests.reference.size import figures

    ours, theirs = figures()
    assert ours <= 435 and ours <= theirs / 4, (ours, theirs)
    from pathlib import Path

    root = Path(__file__).parents[2]
    assert f"{ours} for both specs" in (root / "docs/guides/pt2e/x86-inductor.md").read_text()
    assert f"{ours} spec lines for both" in (root / "README.md").read_text()


def test_xnnpacks_configuration_names_mean_the_same():
    """set_module_name / set_module_type / set_operator_type are the _qconfig methods here."""
    cls, config_fn = generated("x86"), torchao("x86")[1]
    q = cls().set_module_name("sub", None).set_module_type(nn.Conv2d, config_fn())
    q.set_operator_type(torch.ops.aten.matmul.default, config_fn())
    assert q.module_name_qconfig == {"sub": None}
    assert set(q.operator_type_qconfig) == {
        torch.ops.aten.conv2d.default,
        torch.ops.aten.matmul.default,
    }


def lowered(cls: Any, model: str) -> tuple[list[str], torch.Tensor]:
    """The model quantized with ``cls`` and lowered by torchao's x86 lowering (Inductor's
    freezing passes, which fuse q/dq patterns into oneDNN's quantized kernels): the ops
    of the lowered graph, and its output."""
    from torchao.quantization.pt2e.lowering import lower_pt2e_quantized_to_x86
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    gm, args = export(model, True)
    prepared = prepare_pt2e(gm, configure(cls, "x86", "static", "global"))
    torch.manual_seed(1)
    prepared(*args)
    with torch.no_grad():
        low = lower_pt2e_quantized_to_x86(convert_pt2e(prepared), args)
        out = low(*args)
    return [str(n.target) for n in low.graph.nodes if n.op == "call_function"], out


@pytest.mark.parametrize("model", ["binary", "linear_stack"])
def test_inductor_lowers_to_the_same_quantized_kernels(model):
    ops, out = lowered(generated("x86"), model)
    assert any(op.startswith("onednn.q") for op in ops), ops  # quantized kernels, not dq/q
    assert (ops, out.tolist()) == (lambda r: (r[0], r[1].tolist()))(
        lowered(torchao("x86")[0], model)
    )


def test_the_report_says_what_the_inductor_scheme_did():
    """report(): the patterns matched by config, and a when: condition that did not hold."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    class ScaledConv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3)

        def forward(self, x):
            return self.c(x) * torch.randn(1, 4, 1, 1)

    gm = torch.export.export(ScaledConv().eval(), (torch.randn(1, 3, 6, 6),)).module()
    q = generated("x86")().set_global(torchao("x86")[1]()).report(None)
    prepare_pt2e(gm, q)
    text = q.last_report.text()
    assert "nn.Conv2d" in text and "global" in text, text
    assert "condition same_shape does not hold for mul" in text, text
