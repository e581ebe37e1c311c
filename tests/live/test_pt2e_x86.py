"""How far a spec gets on torchao's X86InductorQuantizer (issue 15's stretch goal).

``tests/live/x86_inductor.bcfg`` describes X86's conv, linear and unary
patterns (conv2d + relu/hardtanh/relu6/hardswish/silu, conv1d + relu, conv2d
alone, QAT conv2d + batch norm (+ relu/hardtanh), linear + relu/leaky_relu/
tanh/gelu, linear alone, static and dynamic). Each case exports a model,
annotates it with ``X86InductorQuantizer().set_global(get_default_x86_inductor_
quantization_config(...))`` and with the quantizer generated from the spec
through the real prepare_pt2e / prepare_qat_pt2e, and compares the two dumps
node by node (pt2e_support.dump: every input spec in order, output specs,
dtype, range, qscheme, axis, observer with its arguments).

Two differences are in the annotation scheme, not in what is quantized, and
are translated before comparing, each checked to hold exactly:

* X86 gives the last op of a pattern no output spec and flags it
  (``_X86InductorQuantizationAnnotation(_is_output_of_quantized_pattern=True)``);
  its output is observed by the input specs of quantized consumers. bcfg's
  runtime gives that op the config's output spec. A flagged node without an
  output spec counts as having the config's output spec.
* Empty marks (an annotation with no spec, only ``_annotated``), which
  prepare_pt2e ignores: bcfg marks the weight and bias of each annotated op,
  X86 marks nothing in PTQ and, in QAT, the batch norm and its parameters.

What is left differs for a reason the case names (EXPECTED): X86's
propagation and output-sharing post-pass (cat, pooling, flatten), its
binary patterns (conv + add (+ relu), mul of two tensors) and its
source-partition matching (non-strict graphs carry no ``source_fn_stack``, so
X86 does not fuse a functional ``F.relu`` with the conv or linear before it).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn

from .pt2e_support import ZOO, canon_spec, generate, pattern_cache, run

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")

SPEC = Path(__file__).with_name("x86_inductor.bcfg")
FLAG = "_is_output_of_quantized_pattern"


class Unary(nn.Module):
    """The unary fusions the XNNPACK zoo lacks: hardswish, silu, conv1d + relu, linear + gelu/tanh/leaky_relu."""

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


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...], bool]] = {
    **ZOO,
    "unary": (Unary, (torch.randn(2, 3, 8, 8),), False),
}


def x86_config(form: str) -> Any:
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        get_default_x86_inductor_quantization_config,
    )

    return get_default_x86_inductor_quantization_config(
        is_qat=form == "qat", is_dynamic=form == "dynamic"
    )


def export(name: str, strict: bool) -> tuple[torch.fx.GraphModule, tuple]:
    factory, args, train = MODELS[name]
    torch.manual_seed(0)
    return torch.export.export(factory().train(train), args, strict=strict).module(), args


def translate(dump: list, config: Any) -> tuple[dict[str, dict], list[str]]:
    """A dump in one annotation scheme: (records by node, empty marks), as the module docstring says."""
    out, marks = {}, []
    for name, record in dump:
        record = dict(record)
        kind, extra = record.pop("extra", ("QuantizationAnnotation", ()))
        fields = dict(extra)
        assert set(fields) <= {FLAG}, f"{name}: annotation fields {fields} not translated"
        if not record["inputs"] and record["output"] is None and not fields.get(FLAG):
            marks.append(name)
            continue
        if fields.get(FLAG) and record["output"] is None:
            record["output"] = canon_spec(config.output_activation)
        out[name] = record
    return out, marks


def compare_x86(
    model: str, form: str, strict: bool, candidate: Callable[[], Any]
) -> tuple[int, list[tuple[str, str]], list[str], list[str]]:
    """(nodes the same, [(node, 'x86 only' | 'bcfg only' | 'differs')], bcfg's marks, X86's marks)."""
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer

    config = x86_config(form)
    gm, args = export(model, strict)
    qat = form == "qat"
    ref = run(copy.deepcopy(gm), args, X86InductorQuantizer().set_global(config), qat)
    new = run(copy.deepcopy(gm), args, candidate().set_global(config), qat)
    if isinstance(ref[0], tuple) or isinstance(new[0], tuple):  # prepare failed
        failed = [
            f"{who} raises {d[1]}"
            for who, d in (("x86", ref[0]), ("bcfg", new[0]))
            if isinstance(d, tuple)
        ]
        return 0, [("prepare_pt2e", ", ".join(failed))], [], []
    theirs, their_marks = translate(ref[0], config)
    ours, our_marks = translate(new[0], config)
    diff = sorted(
        [(n, "x86 only") for n in theirs.keys() - ours.keys()]
        + [(n, "bcfg only") for n in ours.keys() - theirs.keys()]
        + [(n, "differs") for n in theirs.keys() & ours.keys() if theirs[n] != ours[n]]
    )
    same = len(theirs.keys() & ours.keys()) - sum(1 for _, k in diff if k == "differs")
    return same, diff, our_marks, their_marks


# What X86 does that the spec's rules do not, by the name of what is left.
PROPAGATION = (
    "X86 quantizes pooling, cat and flatten after quantized patterns and shares their outputs"
)
CONV_ADD = "X86's conv + add (+ relu): the add's other input quantized, the conv's output not"
MUL = "X86 quantizes mul of two tensors of one shape"
F_RELU = (
    "non-strict graphs have no source_fn_stack: X86 fuses nn.ReLU, not F.relu, with the op before"
)
SCALAR_ADD = "X86's linear + add matcher asserts on an add of a scalar (torchao 0.18)"

# (model, form, strict): {(node, how it differs): why}; absent: none differ.
EXPECTED: dict[tuple[str, str, bool], dict[tuple[str, str], str]] = {
    ("residual_add_relu", "static", True): {
        ("add", "x86 only"): CONV_ADD,
        ("conv2d_1", "differs"): CONV_ADD,
        ("relu_", "x86 only"): CONV_ADD,
    },
    ("residual_add_relu", "static", False): {
        ("add", "x86 only"): CONV_ADD,
        ("conv2d_1", "differs"): CONV_ADD,
        ("relu_", "x86 only"): CONV_ADD,
        ("conv2d", "differs"): F_RELU,
        ("relu", "bcfg only"): F_RELU,
    },
    ("linear_stack", "static", False): {
        ("linear_1", "differs"): F_RELU,
        ("relu_1", "bcfg only"): F_RELU,
    },
    ("linear_stack", "dynamic", False): {
        ("linear_1", "differs"): F_RELU,
        ("relu_1", "bcfg only"): F_RELU,
    },
    ("dyn_linear", "dynamic", False): {
        ("linear", "differs"): F_RELU,
        ("relu", "bcfg only"): F_RELU,
    },
    **{
        ("cat_pool", "static", strict): {
            (n, "x86 only"): PROPAGATION
            for n in (
                "adaptive_avg_pool2d",
                "adaptive_avg_pool2d_1",
                "avg_pool2d",
                "cat",
                "max_pool2d",
                "max_pool2d_1",
            )
        }
        for strict in (True, False)
    },
    **{
        ("mul", "static", strict): {("mul", "x86 only"): MUL, ("mul_2", "x86 only"): MUL}
        for strict in (True, False)
    },
    **{
        (model, "static", strict): {("flatten", "x86 only"): PROPAGATION}
        for model in ("depthwise", "unary")
        for strict in (True, False)
    },
    ("nested", "static", True): {("prepare_pt2e", "x86 raises AssertionError"): SCALAR_ADD},
}

# X86's empty marks: in QAT, the batch norm its conv-bn annotators matched and its
# parameters (strict) or the num_batches_tracked update (non-strict).
BN = ["bn_weight", "bn_bias", "bn_running_mean", "bn_running_var"]
X86_MARKS = {
    ("qat_conv_bn_relu", "qat", True): ["conv_weight", "conv_bias", *BN, "batch_norm"],
    ("qat_conv_bn_relu", "qat", False): ["add_", "batch_norm"],
    ("qat_conv_bn", "qat", True): ["conv_weight", *BN],
    ("qat_conv_bn", "qat", False): ["add_"],
}

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
]
CASES = (
    [(m, "static", True) for m in [*STATIC, "nested"]]
    + [(m, "static", False) for m in STATIC]
    + [(m, "dynamic", s) for m in ("dyn_linear", "linear_stack") for s in (True, False)]
    + [(m, "qat", s) for m in ("qat_conv_bn_relu", "qat_conv_bn") for s in (True, False)]
)
# How many annotated nodes agree (after the translation), per case: 86 in all.
AGREE = dict(
    zip(
        CASES,
        [2, 2, 5, 2, 2, 5, 3, 2, 12, 0]  # static, strict (nested last)
        + [2, 0, 3, 2, 2, 5, 3, 2, 12]  # static, non-strict
        + [3, 1, 5, 3]  # dynamic
        + [2, 2, 2, 2],  # QAT
    )
)


@pytest.fixture(scope="module")
def x86_spec(tmp_path_factory):
    with pattern_cache():
        yield generate(tmp_path_factory.mktemp("x86"), SPEC.read_text())


@pytest.mark.parametrize(("model", "form", "strict"), CASES)
def test_x86(model, form, strict, x86_spec):
    same, diff, our_marks, their_marks = compare_x86(model, form, strict, x86_spec)
    expected = EXPECTED.get((model, form, strict), {})
    assert dict.fromkeys(diff, "?") == dict.fromkeys(expected, "?"), diff
    assert their_marks == X86_MARKS.get((model, form, strict), [])
    gm, _ = export(model, strict)
    params = {n.name for n in gm.graph.nodes if n.op == "get_attr"}
    assert set(our_marks) <= params  # bcfg marks weights and biases only
    assert same == AGREE[model, form, strict]


def test_the_numbers_add_up():
    assert len(AGREE) == len(CASES) == 27 and sum(AGREE.values()) == 86
    assert set(EXPECTED) <= set(CASES) and set(X86_MARKS) <= set(CASES)


def test_x86_annotates_outputs_by_consumers(x86_spec):
    """The translation is needed: X86 leaves a pattern's output without a spec and flags it."""
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer

    gm, args = export("linear_stack", True)
    theirs = dict(run(gm, args, X86InductorQuantizer().set_global(x86_config("static")), False)[0])
    gm, args = export("linear_stack", True)
    ours = dict(run(gm, args, x86_spec().set_global(x86_config("static")), False)[0])
    assert theirs["relu"]["output"] is None and theirs["relu"]["extra"][1] == ((FLAG, True),)
    assert ours["relu"]["output"] == canon_spec(x86_config("static").output_activation)
    assert "fc1_weight" in ours and "fc1_weight" not in theirs


def test_the_comparison_notices_a_wrong_quantizer(x86_spec):
    """The spec's quantizer with weights in [-127, 127]: every conv differs."""

    def narrow():
        from torchao.quantization.pt2e.quantizer import QuantizationConfig

        q = x86_spec()
        set_global = q.set_global

        def wrong(cfg):
            weight = dataclasses.replace(cfg.weight, quant_min=-127)
            return set_global(
                QuantizationConfig(
                    cfg.input_activation, cfg.output_activation, weight, cfg.bias, cfg.is_qat
                )
            )

        q.set_global = wrong
        return q

    same, diff, _, _ = compare_x86("hardtanh_relu6", "static", True, narrow)
    assert same == 2 and sorted(n for n, _ in diff) == ["conv2d", "conv2d_1", "conv2d_2"]


def test_the_spec_is_canonically_formatted():
    from generator.lang.fmt import format_text

    assert format_text(SPEC.read_text()) == SPEC.read_text()
