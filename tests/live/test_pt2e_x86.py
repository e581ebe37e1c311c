"""How far a spec gets on torchao's X86InductorQuantizer (issue 15's stretch goal).

``tests/live/x86_inductor.bcfg`` describes X86's conv, linear, unary,
binary and pooling patterns: conv2d + relu/hardtanh/relu6/hardswish/silu,
conv1d + relu, conv2d alone, QAT conv2d + batch norm (+ relu/hardtanh),
linear + relu/leaky_relu/tanh/gelu, linear alone (static and dynamic); conv2d
+ add (+ relu) and mul of two tensors through annotate hooks
(tests/live/x86_hooks.py); pooling, cat and flatten after quantized patterns.
Each case exports a model, annotates it with ``X86InductorQuantizer()
.set_global(get_default_x86_inductor_quantization_config(...))`` and with the
quantizer generated from the spec through the real prepare_pt2e /
prepare_qat_pt2e, and compares the two dumps node by node (pt2e_support.dump:
every input spec in order, output specs, dtype, range, qscheme, axis,
observer with its arguments).

The spec says ``outputs: consumers``: as X86 does, a pattern's last op gets
no output spec (its output is observed by the input specs of quantized
consumers), and pooling, cat and flatten are quantized when all their inputs
come from quantized patterns. What is left of the annotation scheme, which
prepare_pt2e ignores, is dropped before comparing, checked to be only that:

* X86's annotation subclass and its flag on a pattern's last op
  (``_X86InductorQuantizationAnnotation(_is_output_of_quantized_pattern=...)``);
* empty annotations (no spec, only ``_annotated``): both write one on the
  last op of a fused pattern; bcfg also marks the weight and bias of each
  annotated op (BCFG_MARKS pins the others), X86 marks nothing else in PTQ
  and, in QAT, the batch norm and its parameters (X86_MARKS).

Where no node differs, the converted models must also give the same outputs
(torch.equal) and the same graphs. What differs is pinned with its reason
(EXPECTED): X86's QAT output specs, and a torchao assert.
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

from .pt2e_support import ZOO, flat, generate, pattern_cache, run

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


def translate(dump: list) -> tuple[dict[str, dict], list[str]]:
    """A dump without what prepare_pt2e ignores: (records with a spec, by node; empty annotations)."""
    out, empty = {}, []
    for name, record in dump:
        record = dict(record)
        _, extra = record.pop("extra", ("QuantizationAnnotation", ()))
        assert {k for k, _ in extra} <= {FLAG}, f"{name}: annotation fields {extra} not translated"
        if record["inputs"] or record["output"] is not None:
            out[name] = record
        else:
            empty.append(name)
    return out, empty


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
    theirs, their_empty = translate(ref[0])
    ours, our_empty = translate(new[0])
    our_marks = [n for n in our_empty if n not in their_empty]
    their_marks = [n for n in their_empty if n not in our_empty]
    diff = sorted(
        [(n, "x86 only") for n in theirs.keys() - ours.keys()]
        + [(n, "bcfg only") for n in ours.keys() - theirs.keys()]
        + [(n, "differs") for n in theirs.keys() & ours.keys() if theirs[n] != ours[n]]
    )
    same = len(theirs.keys() & ours.keys()) - sum(1 for _, k in diff if k == "differs")
    if not diff:  # then the converted models must agree as well
        if not all(torch.equal(x, y) for x, y in zip(flat(ref[1]), flat(new[1]))):
            diff.append(("convert_pt2e", "outputs differ"))
        if ref[2] != new[2]:
            diff.append(("convert_pt2e", "graphs differ"))
    return same, diff, our_marks, their_marks


# What X86 does that the spec's rules do not, by the name of what is left.
QAT_OUT = "X86's QAT conv-bn annotators give the pattern's last op an output spec, its PTQ ones not"
F_RELU = (
    "non-strict graphs have no source_fn_stack: X86 fuses nn.ReLU, not F.relu, with the op before"
)
SCALAR_ADD = "X86's linear + add matcher asserts on an add of a scalar (torchao 0.18)"

# (model, form, strict): {(node, how it differs): why}; absent: none differ, and
# the converted models give the same outputs and graphs.
EXPECTED: dict[tuple[str, str, bool], dict[tuple[str, str], str]] = {
    **{
        ("qat_conv_bn_relu", "qat", strict): {("relu", "x86 only"): QAT_OUT}
        for strict in (True, False)
    },
    **{
        ("qat_conv_bn", "qat", strict): {("batch_norm", "x86 only"): QAT_OUT}
        for strict in (True, False)
    },
    ("nested", "static", True): {("prepare_pt2e", "x86 raises AssertionError"): SCALAR_ADD},
}

# Empty annotations only one side writes (prepare_pt2e ignores them). bcfg marks
# weights and biases, and the last op of a fused pattern: with F.relu in
# non-strict graphs (F_RELU, no observer changes) and in QAT (QAT_OUT).
BN = ["bn_weight", "bn_bias", "bn_running_mean", "bn_running_var"]
BCFG_MARKS = {
    ("residual_add_relu", "static", False): ["relu"],
    ("linear_stack", "static", False): ["relu_1"],
    ("linear_stack", "dynamic", False): ["relu_1"],
    ("dyn_linear", "dynamic", False): ["relu"],
    ("qat_conv_bn_relu", "qat", True): ["relu"],
    ("qat_conv_bn_relu", "qat", False): ["relu"],
    ("qat_conv_bn", "qat", True): ["batch_norm"],
    ("qat_conv_bn", "qat", False): ["batch_norm"],
}
# X86 marks, in QAT, the batch norm its conv-bn annotators matched and its
# parameters (strict) or the num_batches_tracked update (non-strict).
X86_MARKS = {
    ("qat_conv_bn_relu", "qat", True): [*BN, "batch_norm"],
    ("qat_conv_bn_relu", "qat", False): ["add_", "batch_norm"],
    ("qat_conv_bn", "qat", True): BN,
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
# How many nodes with a spec agree, per case: 82 in all.
AGREE = dict(
    zip(
        CASES,
        [1, 3, 3, 8, 4, 3, 3, 2, 7, 0]  # static, strict (nested last)
        + [1, 3, 3, 8, 4, 3, 3, 2, 7]  # static, non-strict
        + [2, 2, 3, 3]  # dynamic
        + [1, 1, 1, 1],  # QAT
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
    assert [n for n in our_marks if n not in params] == BCFG_MARKS.get((model, form, strict), [])
    assert same == AGREE[model, form, strict]


def test_the_numbers_add_up():
    assert len(AGREE) == len(CASES) == 27 and sum(AGREE.values()) == 82
    assert set(EXPECTED) | set(X86_MARKS) | set(BCFG_MARKS) <= set(CASES)
    assert len(set(CASES) - set(EXPECTED)) == 22  # converted models compared too


def test_outputs_consumers_is_what_x86_does(x86_spec, tmp_path):
    """X86 leaves a pattern's output to its consumers; the spec's ``outputs: consumers`` does too."""
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import X86InductorQuantizer

    config = x86_config("static")
    gm, args = export("linear_stack", True)
    theirs = dict(run(gm, args, X86InductorQuantizer().set_global(config), False)[0])
    gm, args = export("linear_stack", True)
    ours = dict(run(gm, args, x86_spec().set_global(config), False)[0])
    assert theirs["relu"]["output"] is None and theirs["relu"]["extra"][1] == ((FLAG, True),)
    assert ours["relu"]["output"] is None and "extra" not in ours["relu"]
    assert "fc1_weight" in ours and "fc1_weight" not in theirs

    # The default, outputs: patterns, gives each pattern's last op the output spec.
    text = SPEC.read_text(encoding="utf-8")
    patterns = generate(tmp_path, text.replace("outputs: consumers", "outputs: patterns"))
    same, diff, _, _ = compare_x86("linear_stack", "static", True, patterns)
    assert (same, diff) == (
        2,
        [("linear_2", "differs"), ("relu", "bcfg only"), ("relu_1", "bcfg only")],
    )


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
    assert same == 0 and sorted(n for n, _ in diff) == ["conv2d", "conv2d_1", "conv2d_2"]


def test_the_spec_is_canonically_formatted():
    from generator.lang.fmt import format_text

    assert format_text(SPEC.read_text()) == SPEC.read_text()
