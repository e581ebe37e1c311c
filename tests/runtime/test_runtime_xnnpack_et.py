"""What the PT2E runtime gained for ExecuTorch's XNNPACK quantizer (specs/xnnpack_executorch.bcfg):
a rule's weight channel axis, skip predicates of a pattern's first op, a list's qparams taken
from a quantized input, and ``set_filter_function``."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec  # noqa: E402
from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config  # noqa: E402

from generator.runtime.conditions import depthwise, grouped, relu_user  # noqa: E402
from generator.runtime.quantizer import SpecQuantizer  # noqa: E402
from generator.runtime.values import KEY, Rule  # noqa: E402

aten = torch.ops.aten


def quantizer(*rules):
    class Q(SpecQuantizer):
        pass

    Q.rules = rules
    return Q()


def exported(fn, *args, **modules):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            for k, v in modules.items():
                setattr(self, k, v)

        def forward(self, *xs):
            return fn(self, *xs)

    torch.manual_seed(0)
    return torch.export.export(M().eval(), args).module()


def nodes(gm, op):
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target == op]


CONFIG = get_symmetric_quantization_config(is_per_channel=True)


def test_weight_axis_puts_the_weight_spec_on_that_axis():
    gm = exported(lambda m, x: m.up(x), torch.randn(1, 4, 5, 5), up=nn.ConvTranspose2d(4, 8, 3))
    (conv,) = nodes(gm, aten.conv_transpose2d.input)
    rule = Rule("t", chain=[[aten.conv_transpose2d.input]], weight=1, bias=2, weight_axis=1)
    quantizer(rule).set_global(CONFIG).annotate(gm)
    qmap = conv.meta[KEY].input_qspec_map
    assert qmap[conv.args[1]].ch_axis == 1 and CONFIG.weight.ch_axis == 0
    assert qmap[conv.args[0]] is CONFIG.input_activation


def test_first_op_predicates():
    gm = exported(
        lambda m, x: (F.relu(m.dw(x)), m.pw(x), m.up(x)),
        torch.randn(1, 4, 6, 6),
        dw=nn.Conv2d(4, 4, 3, groups=4),
        pw=nn.Conv2d(4, 8, 1),
        up=nn.ConvTranspose2d(4, 8, 3, groups=2),
    )
    dw, pw = nodes(gm, aten.conv2d.default)
    (up,) = nodes(gm, aten.conv_transpose2d.input)
    assert depthwise(dw, gm) and not depthwise(pw, gm)
    assert relu_user(dw, gm) and not relu_user(pw, gm)
    assert grouped(up, gm) and grouped(dw, gm) and not grouped(pw, gm)
    rule = Rule(
        "c",
        chain=[[aten.conv2d.default, aten.conv_transpose2d.input]],
        weight=1,
        bias=2,
        skip=[depthwise, grouped],
    )
    quantizer(rule).set_global(CONFIG).annotate(gm)
    assert KEY not in dw.meta and KEY not in up.meta and pw.meta[KEY]._annotated


def test_a_list_shares_the_qparams_of_its_first_quantized_input():
    class Token(nn.Module):
        def __init__(self):
            super().__init__()
            self.t = nn.Parameter(torch.randn(1, 1, 8))

    def fn(m, x):
        p = m.conv(x).flatten(2).transpose(1, 2)
        return torch.cat([m.token.t.expand(1, -1, -1), p], dim=1)

    mods = {"conv": nn.Conv2d(3, 8, 4, stride=4), "token": Token()}
    for qparams, first in (("quantized", False), ("first", True)):
        gm = exported(fn, torch.randn(1, 3, 8, 8), **mods)
        rules = (
            Rule("conv", chain=[[aten.conv2d.default]], weight=1, bias=2),
            Rule("cat", kind="shared", chain=[[aten.cat.default]], qparams=qparams),
            Rule("flatten", kind="propagate", chain=[[aten.flatten.using_ints]]),
            Rule("transpose", kind="propagate", chain=[[aten.transpose.int]]),
        )
        quantizer(*rules).set_global(CONFIG).annotate(gm)
        (cat,) = nodes(gm, aten.cat.default)
        token, patches = cat.args[0]
        qmap = cat.meta[KEY].input_qspec_map
        source = token if first else patches
        assert qmap[source] is CONFIG.input_activation, qparams
        other = patches if first else token
        assert isinstance(qmap[other], SharedQuantizationSpec) and qmap[other].edge_or_node == (
            source,
            cat,
        )


def test_set_filter_function_quantizes_only_what_it_accepts():
    gm = exported(lambda m, x: m.b(m.a(x)), torch.randn(2, 4), a=nn.Linear(4, 4), b=nn.Linear(4, 4))
    first, second = nodes(gm, aten.linear.default)
    q = quantizer(Rule("linear", chain=[[aten.linear.default]], weight=1, bias=2)).set_global(
        CONFIG
    )
    assert q.set_filter_function(lambda n: n is not second) is q
    q.annotate(gm)
    assert first.meta[KEY]._annotated and KEY not in second.meta


def test_any_float_quantizes_fp16_activations():
    gm = exported(lambda m, x: m.fc(x), torch.randn(2, 4).half(), fc=nn.Linear(4, 4).half())
    (linear,) = nodes(gm, aten.linear.default)
    for any_float in (False, True):
        linear.meta.pop(KEY, None)
        for n in linear.args[1:]:
            n.meta.pop(KEY, None)
        rule = Rule("linear", chain=[[aten.linear.default]], weight=1, bias=2, any_float=any_float)
        quantizer(rule).set_global(CONFIG).annotate(gm)
        assert (KEY in linear.meta) == any_float


def test_operator_type_patterns_selects_the_rules_that_list_the_overload():
    """operator_type "patterns": set_operator_type(op) tries the rules whose operator_types hold
    op exactly; they match their own nodes; global still quantizes what is not annotated."""

    def annotated(op, global_config=None, op_config=CONFIG):
        gm = exported(
            lambda m, x: m.b(m.a(x)).relu(), torch.randn(2, 4), a=nn.Linear(4, 4), b=nn.Linear(4, 4)
        )
        rules = (
            Rule("linear_relu", chain=[[aten.linear.default], [aten.relu.default]], weight=1),
            Rule(
                "linear", chain=[[aten.linear.default]], weight=1, operator_types=[aten.mm.default]
            ),
        )
        q = quantizer(*rules)
        q.operator_type = "patterns"
        q.set_operator_type(op, op_config)
        if global_config is not None:
            q.set_global(global_config)
        q.annotate(gm)
        first, second = nodes(gm, aten.linear.default)
        return (KEY in first.meta, KEY in second.meta)

    # linear+relu is selected by its first op's overload; linear alone by mm only (it
    # then takes the second linear too, as no linear+relu rule ran).
    assert annotated(aten.linear.default) == (False, True)
    assert annotated(aten.mm.default) == (True, True)
    # A packet, or an op no rule lists, selects nothing; None does nothing, global still does.
    assert annotated(aten.linear) == (False, False)
    assert annotated(aten.relu.default) == (False, False)
    assert annotated(aten.linear.default, CONFIG, None) == (True, True)


def test_scope_first_op_and_none():
    """scope "first_op": the filter judges the first op only; "none": it is not consulted."""
    gm = exported(lambda m, x: m.a(x).relu(), torch.randn(2, 4), a=nn.Linear(4, 4))
    (linear,) = nodes(gm, aten.linear.default)
    for scope, quantized in (("all_ops", False), ("first_op", True), ("none", True)):
        linear.meta.pop(KEY, None)
        for n in gm.graph.nodes:
            n.meta.pop(KEY, None)
        rule = Rule("lr", chain=[[aten.linear.default], [aten.relu.default]], weight=1, scope=scope)
        q = quantizer(rule).set_global(CONFIG)
        q.set_filter_function(lambda n: n.target != aten.relu.default)
        q.annotate(gm)
        assert (KEY in linear.meta) == quantized, scope
    rule = Rule("l", chain=[[aten.linear.default]], weight=1, scope="none")
    linear.meta.pop(KEY, None)
    quantizer(rule).set_global(CONFIG).set_filter_function(lambda n: False).annotate(gm)
    assert KEY in linear.meta


def test_qat_if_dynamic():
    """qat_if_dynamic: static configs try the rule, QAT or not; dynamic ones only if QAT."""
    rule = Rule("r", chain=[[aten.linear.default]], qat_if_dynamic=True)
    forms = {
        (False, False): True,
        (True, False): True,
        (False, True): False,
        (True, True): True,
    }
    for (qat, dynamic), tried in forms.items():
        config = get_symmetric_quantization_config(is_qat=qat, is_dynamic=dynamic)
        assert rule.applies(config) == tried, (qat, dynamic)
