"""The PT2E runtime's modules, imported as ``generator.runtime`` (the copy beside generated
quantizers is the same code: tests/emit/test_pt2e_emit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
from torchao.quantization.pt2e.observer import HistogramObserver  # noqa: E402
from torchao.quantization.pt2e.quantizer import (  # noqa: E402
    QuantizationConfig,
    QuantizationSpec,
)

from generator.runtime.validate import disallowed  # noqa: E402
from generator.runtime.values import FLOAT, Allows, Quant, Rule  # noqa: E402


def spec(dtype=torch.int8, low=-128, high=127, dynamic=False, eps=2**-12):
    return QuantizationSpec(
        dtype,
        HistogramObserver.with_args(eps=eps),
        low,
        high,
        torch.per_tensor_affine,
        is_dynamic=dynamic,
    )


def config(act, weight=None, qat=False):
    return QuantizationConfig(act, act, weight, None, qat)


ACT = Quant(torch.int8, scale_min=2**-12)
STATIC = Allows("static", input=ACT, output=ACT, bias=FLOAT)
DYNAMIC = Allows("dynamic", input=ACT, output=FLOAT, dynamic=True)


def test_a_rule_is_tried_with_the_configs_its_dtype_configs_say():
    static, dynamic = config(spec()), config(spec(dynamic=True))
    assert Rule("s", allows=[STATIC]).applies(static)
    assert not Rule("s", allows=[STATIC]).applies(dynamic)
    assert Rule("d", allows=[STATIC, DYNAMIC]).applies(dynamic)
    assert Rule("any").applies(dynamic)
    assert not Rule("qat", qat=True).applies(static)
    assert Rule("qat", qat=True).applies(config(spec(), qat=True))


def test_disallowed_says_which_field_and_why():
    assert disallowed(STATIC, config(spec())) == ""
    assert disallowed(STATIC, config(spec(torch.uint8, 0, 255))) == (
        "input_activation.dtype is torch.uint8, the spec allows torch.int8"
    )
    assert "observer eps is 1e-05" in disallowed(STATIC, config(spec(eps=1e-5)))
    assert disallowed(Allows("n", input=Quant(torch.int8, quant_min=-127)), config(spec())) == (
        "input_activation.quant_min is -128, the spec allows -127 or more"
    )
    assert disallowed(STATIC, config(spec(dynamic=True))) == ""  # static is not pinned here
    assert "the dtype config is dynamic" in disallowed(DYNAMIC, config(spec()))


def test_rules_hold_tuples_whatever_the_table_wrote():
    rule = Rule("r", chain=[[torch.ops.aten.relu.default]], allows=[STATIC])
    assert rule.chain == ((torch.ops.aten.relu.default,),) and rule.allows == (STATIC,)
    with pytest.raises(AttributeError):
        rule.name = "other"  # type: ignore[misc]


def _graph():
    """x -> relu -> (cat [relu, x], mul(relu, relu), mul(relu, 2.0)), as a traced graph with vals."""
    from torch._subclasses import FakeTensorMode
    from torch.fx import symbolic_trace

    class M(torch.nn.Module):
        def forward(self, x):
            r = torch.relu(x)
            return torch.cat([r, x]), r * r, r * 2.0

    gm = symbolic_trace(M())
    with FakeTensorMode() as mode:
        for n in gm.graph.nodes:
            if n.op == "placeholder":
                n.meta["val"] = mode.from_tensor(torch.randn(2, 3))
            elif n.target is torch.relu:
                n.meta["val"] = mode.from_tensor(torch.randn(2, 3))
    return {n.name: n for n in gm.graph.nodes}


def test_the_when_conditions_read_the_outputs_of_quantized_patterns():
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    from generator.runtime.conditions import (
        input_quantized,
        inputs_quantized,
        same_shape,
        user_quantizable,
    )
    from generator.runtime.model import Context
    from generator.runtime.operators import Annotation
    from generator.runtime.values import KEY

    def at(node, quantizable=frozenset()):  # a match of one op
        return Context([node], None, quantizable)

    n = _graph()
    cat, relu = n["cat"], n["relu"]
    assert not input_quantized(at(cat)) and not inputs_quantized(at(cat))
    relu.meta[KEY] = Annotation(_annotated=True, _is_output_of_quantized_pattern=True)
    assert input_quantized(at(cat)) and not inputs_quantized(at(cat))
    n["x"].meta[KEY] = Annotation(_annotated=True)  # annotated, not a quantized pattern's output
    assert not inputs_quantized(at(cat))
    # an output spec (every composition but the operator-scoped one) says it too
    n["x"].meta[KEY] = QuantizationAnnotation(output_qspec=object(), _annotated=True)
    assert inputs_quantized(at(cat))
    assert same_shape(at(n["mul"])) and not same_shape(at(n["mul_1"]))
    assert not user_quantizable(at(relu)) and user_quantizable(at(relu, {torch.cat}))
    assert user_quantizable(at(n["output"]))  # no user at all


def test_a_pattern_with_two_default_ops_is_refused_as_torchao_refuses_it():
    from generator.runtime.operators import _exactly_one

    n = _graph()
    accept = _exactly_one({torch.relu, torch.cat})
    assert accept([n["relu"]]) and not accept([n["x"]])
    with pytest.raises(NotImplementedError, match="Several nodes"):
        accept([n["relu"], n["cat"]])


def test_a_layout_check_is_asked_once_per_shape_and_strides_of_a_graph():
    """Cortex-M's channels-last memo is the runtime's (``Context.layout``), not its hooks'."""
    from generator.runtime.model import Context

    n = _graph()
    asked = []

    def check(t):
        asked.append(t)
        return True

    match = Context([n["mul"]])
    vals = [n["relu"].meta["val"], n["x"].meta["val"], n["relu"].meta["val"]]
    assert all(match.layout(v, check) for v in vals)
    assert len(asked) == 1  # three tensors of one shape and strides: one question
    assert match.layout(torch.empty(3, 2), check) and len(asked) == 2


def test_hooks_use_the_hooks_api_not_the_runtimes_classes_or_meta_keys():
    from generator.runtime import api

    assert api.API_VERSION == 1
    hooks = "\n".join(p.read_text() for p in sorted(ROOT.glob("specs/hooks/*.py")))
    for private in ("__mro__", api.MATCHED, api.INFO, api.NO_TFA, "_LAYOUT"):
        assert private not in hooks, private
    assert 'meta["custom"]' not in hooks  # a condition tags meta through its slot (match.tag)


def test_a_condition_tags_meta_through_its_slot():
    from generator.runtime.model import Context

    n = _graph()
    match = Context([n["relu"]])
    match.tag(n["relu"], "custom", "cortex_m", "skip_quantized_max_pool2d")
    match.tag(n["relu"], "custom", "cortex_m", "other", value=3)
    want = {"skip_quantized_max_pool2d": True, "other": 3}
    assert n["relu"].meta["custom"] == {"cortex_m": want}


def test_the_runtime_reads_a_config_through_its_view():
    """``model.ConfigView``: a config's fields (torchao's, Cadence's), or ExecuTorch Arm's
    accessors without an op (configs: validated) or per op (configs: accessors)."""
    from generator.runtime.model import view

    class Arm:
        input_activation, output_activation, weight, bias = "in", "out", "w", None

        def get_input_act_qspec(self, node=None, arg=None):
            return ("in", node, arg)

        def get_output_act_qspec(self, node=None):
            return ("out", node)

        def get_weight_qspec(self, node=None):
            return ("w", node)

        def get_bias_qspec(self, node=None):
            return ("b", node)

    c = Arm()
    assert (view(c).input(), view(c).output(), view(c).weight(), view(c).bias()) == (
        "in",
        "out",
        "w",
        None,
    )
    assert view(c, "validated").input("n") == ("in", None, None)
    assert view(c, "validated").output("n") == ("out", None)
    assert view(c, "accessors").input("n", "a") == ("in", "n", "a")
    assert view(c, "accessors").bias("n") == ("b", "n")
    c.bias = lambda node: ("derived", node)  # a bias that is a function of the op
    assert view(c).bias("n") == ("derived", "n") and view(c).bias() is c.bias
