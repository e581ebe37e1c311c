"""The runtime side of the table of PT2E keys: each base reads only the Rule fields it
declares (``honours``), conditions return a decline with a named reason the report takes
as is, the recorder is the instance's own (no module-global state), and the report
runs torch's source partitioning once per rule, not once per float op (issue 35, class 3)."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import dataclasses  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config  # noqa: E402

from generator.runtime import matcher, report  # noqa: E402
from generator.runtime.operators import OperatorScopedQuantizer  # noqa: E402
from generator.runtime.quantizer import SpecQuantizer  # noqa: E402
from generator.runtime.values import Allows, Rule  # noqa: E402

aten = torch.ops.aten
CONFIG = get_symmetric_quantization_config(is_per_channel=False)


def quantizer(*rules, base=SpecQuantizer):
    class Q(base):  # type: ignore[misc, valid-type]
        pass

    Q.rules = rules
    return Q()


def exported(model, *args):
    torch.manual_seed(0)
    return torch.export.export(model.eval(), args).module()


def by_node(q):
    return {e.node: e for e in q.last_report.entries}


def test_a_base_refuses_a_rule_field_it_does_not_read():
    with pytest.raises(ValueError, match="pattern r sets other"):
        quantizer(Rule("r", chain=[[aten.add.Tensor]], other="quantized"))
    with pytest.raises(ValueError, match="pattern r sets skip"):
        quantizer(Rule("r", chain=[[aten.add.Tensor]], skip=[len]), base=OperatorScopedQuantizer)
    quantizer(Rule("r", chain=[[aten.add.Tensor]], when=[len]), base=OperatorScopedQuantizer)


class Bf16(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


def test_a_bf16_op_without_a_rule_is_no_rule_not_deliberate():
    """xnnpack_executorch has no sigmoid rule; on a bf16 model the report said
    ``not_a_tensor_op`` (it ignored any_float), as if leaving it were deliberate."""
    from generated.xnnpack_executorch_quantizer import get_xnnpack_executorch_quantizer

    model = Bf16().to(torch.bfloat16)
    gm = exported(model, torch.randn(2, 4, dtype=torch.bfloat16))
    q = get_xnnpack_executorch_quantizer().set_global(CONFIG).report(None)
    q.annotate(gm)
    e = by_node(q)
    assert e["linear"].quantized  # any_float: the bf16 linear is quantized
    assert e["sigmoid"].reason == "no_rule" and not e["sigmoid"].deliberate


def test_a_decline_names_its_reason_and_the_report_takes_it():
    gm = exported(nn.Sequential(nn.Linear(4, 4)).to(torch.bfloat16), torch.randn(2, 4).bfloat16())
    rule = Rule("nn.Linear", chain=[[aten.linear.default]], weight=1, bias=2)
    q = quantizer(rule).set_global(CONFIG).report(None)
    q.annotate(gm)
    (linear,) = [e for e in q.last_report.entries if e.op == "aten.linear.default"]
    assert linear.reason == "non_float_input"
    assert linear.detail.endswith("is a torch.bfloat16 tensor, not float32")


def raises(model, config, accept):
    raise RuntimeError("a hook that fails")


def test_the_recorder_is_the_instances_and_an_annotate_that_raised_leaves_none_behind():
    gm = exported(nn.Sequential(nn.ReLU()), torch.randn(2, 4))
    q = quantizer(Rule("boom", kind="hook", annotate=raises)).set_global(CONFIG).report(None)
    with pytest.raises(RuntimeError, match="a hook that fails"):
        q.annotate(gm)
    assert not hasattr(report, "ACTIVE")  # no module-global recorder
    other = quantizer(Rule("boom", kind="hook", annotate=raises)).set_global(CONFIG)
    assert other.reporter is None and q.reporter is not None


class Relus(nn.Module):
    def forward(self, x):
        for _ in range(40):
            x = F.relu(x) + 1.0
        return x


def test_the_report_partitions_by_source_once_per_rule(monkeypatch):
    """A float op a source-matched rule could have taken: the report asks for the rule's
    source partitions once, whatever the number of such ops (it asked per op); the graph's
    index then answers from what annotate found."""
    gm = exported(Relus(), torch.randn(2, 4))
    calls = []
    real = matcher.source_partitions

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(matcher, "source_partitions", counted)
    rule = Rule("nn.ReLU", kind="shared", chain=[[aten.relu.default]], sources=[nn.ReLU])
    quantizer(rule).set_global(CONFIG).annotate(gm)
    off = len(calls)
    calls.clear()
    q = quantizer(rule).set_global(CONFIG).report(None)
    q.annotate(gm)
    relus = [e for e in q.last_report.entries if e.op == "aten.relu.default"]
    assert len(relus) == 40 and all(e.reason == "source_partition" for e in relus)
    assert len(calls) == off + 1


WEIGHT_SPEC = """
    dtypes s = {input: qint8, output: qint8, weight: qint8, bias: float}
    quantizer t { fx: false  scopes: SCOPES }
    backend t {
        pattern aten.linear.default { dtypes: s  pt2e: {weight_qscheme: per_channel} }
        pattern aten.conv2d.default { dtypes: s }
    }
"""
# Every pattern requires: a config that breaks it is one no pattern takes.
NO_TAKER = "        pattern aten.conv2d.default { dtypes: s }\n"


ACTIVATION_SPEC = WEIGHT_SPEC.replace(
    "weight_qscheme: per_channel", "activation_qscheme: symmetric"
)


def symmetric_activations(config):
    """``config`` with its activation specs made symmetric (zero point 0)."""

    def sym(spec):
        return dataclasses.replace(spec, qscheme=torch.per_tensor_symmetric)

    return dataclasses.replace(
        config,
        input_activation=sym(config.input_activation),
        output_activation=sym(config.output_activation),
    )


@pytest.mark.parametrize("scopes", ["modules", "composable"])
@pytest.mark.parametrize("key", ["weight_qscheme", "activation_qscheme"])
def test_a_requirement_refuses_a_config_that_breaks_it_at_validate(tmp_path, scopes, key):
    """``weight_qscheme: per_channel`` (a hardware that only runs per-channel weights) and
    ``activation_qscheme: symmetric`` (activations with zero point 0, issue 53.3): a config
    that breaks it (per-tensor weights; XNNPACK's affine activations), one the conv takes,
    so set_global sets it, is refused by validate for the linear it quantized, saying which
    pattern and why; one that keeps it is not. Without the key it passed without a word."""
    from tests.live.pt2e_support import generate, symmetric_config

    spec, per_channel = WEIGHT_SPEC, symmetric_config("per_channel")
    bad, good = symmetric_config("per_tensor"), per_channel
    said = "the spec requires per-channel weights (weight_qscheme: per_channel)"
    if key == "activation_qscheme":
        spec, bad, good = ACTIVATION_SPEC, per_channel, symmetric_activations(per_channel)
        said = (
            "input_activation.qscheme is torch.per_tensor_affine, the spec requires symmetric "
            "activations (activation_qscheme: symmetric)"
        )
    get = generate(tmp_path, spec.replace("SCOPES", scopes))
    model = nn.Sequential(nn.Linear(4, 4))
    for config, refused in ((bad, True), (good, False)):
        gm = exported(model, torch.randn(2, 4))
        q = get()
        q.set_global(config) if scopes == "modules" else q.set_global_stage(config)
        q.annotate(gm)
        if not refused:
            q.validate(gm)
            continue
        with pytest.raises(ValueError) as exc:
            q.validate(gm)
        assert "aten.linear.default" in str(exc.value) and said in str(exc.value)


@pytest.mark.parametrize("scopes", ["modules", "composable"])
def test_a_config_no_pattern_takes_is_refused_when_set(tmp_path, scopes):
    """A config whose weights or activations break the requirement of every pattern it
    could quantize is refused by the setter itself, naming the method, the pattern and
    why; one a pattern takes, or one for unweighted ops (weight None), is set (issue 53.3:
    before, only validate refused it, after annotating)."""
    from tests.live.pt2e_support import generate, symmetric_config

    for sub in "wat":
        (tmp_path / sub).mkdir()
    api = scopes if scopes == "modules" else "composable  api: composable"
    weights = generate(tmp_path / "w", WEIGHT_SPEC.replace(NO_TAKER, "").replace("SCOPES", api))
    activations = generate(
        tmp_path / "a", ACTIVATION_SPEC.replace(NO_TAKER, "").replace("SCOPES", api)
    )
    per_tensor, per_channel = symmetric_config("per_tensor"), symmetric_config("per_channel")
    setters = ["set_global"] if scopes == "modules" else ["set_global_stage", "add_stage"]
    if scopes == "modules":
        setters += ["set_module_type", "set_module_name", "set_operator_type"]
    else:  # ExecuTorch's composable API: its setters add stages
        setters += ["set_global", "set_module_type", "set_module_name"]
    first = {
        "set_module_type": nn.Linear,
        "set_module_name": "0",
        "set_operator_type": aten.linear.default,
    }
    for get, bad, good, said in (
        (weights, per_tensor, per_channel, "requires per-channel weights"),
        (activations, per_channel, symmetric_activations(per_channel), "symmetric activations"),
    ):
        for setter in setters:
            args = (first[setter],) if setter in first else ()
            getattr(get(), setter)(*args, good)
            with pytest.raises(ValueError) as exc:
                getattr(get(), setter)(*args, bad)
            method = setter
            if scopes == "composable" and setter in ("set_global", *first):
                # set_global's stage; a node finder's stage
                method = "set_global_stage" if setter == "set_global" else "add_stage"
            assert f".{method} was given a config that no pattern" in str(exc.value)
            assert "pattern aten.linear.default: " in str(exc.value) and said in str(exc.value)
    activation_only = dataclasses.replace(per_tensor, weight=None)
    q = weights()
    q.set_global(activation_only) if scopes == "modules" else q.add_stage(activation_only)
    # set_operator_type of an op no requiring pattern has, or a config the conv takes:
    # not refused (validate judges the patterns it quantized)
    if scopes == "modules":
        weights().set_operator_type(aten.relu.default, per_tensor)
    taker = generate(tmp_path / "t", WEIGHT_SPEC.replace("SCOPES", scopes))()
    taker.set_global(per_tensor) if scopes == "modules" else taker.add_stage(per_tensor)


class LinearThenF(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return F.linear(self.fc(x), self.fc.weight)


def test_match_source_on_a_single_op_chain_finds_its_nodes_by_source_partition():
    """``match: source`` under ``scopes: modules`` on a one-op chain: the chain annotator finds
    the op through torch's source partitions of the rule's sources, as the key table says the
    modules base reads it (it matched every linear, by ATen op, whatever the sources said)."""
    annotated = {}
    for sources in ((), (nn.Linear,), (nn.Conv2d,)):
        rule = Rule("r", chain=[[aten.linear.default]], weight=1, bias=2, sources=sources)
        q = quantizer(rule).set_global(CONFIG)
        model = exported(LinearThenF(), torch.randn(2, 4))
        q.annotate(model)
        annotated[sources] = sorted(
            n.name
            for n in model.graph.nodes
            if n.op == "call_function" and "quantization_annotation" in n.meta
        )
    assert annotated[()] == ["linear", "linear_1"]
    assert annotated[(nn.Linear,)] == ["linear"]  # the module's, not the function's
    assert annotated[(nn.Conv2d,)] == []


def test_the_report_reads_a_config_through_its_view_as_the_rules_do(monkeypatch):
    """Why a rule is not tried with a config (``not_tried``) is read through the config's
    view (``model.view``), as ``Rule.applies`` reads it: a config only its view understands
    (no ``input_activation`` or ``is_qat`` of its own) is reported, not an AttributeError."""
    from generator.runtime import model

    class Wrapped:  # a config whose specs only its view finds
        def __init__(self, inner):
            self.inner = inner

    class WrappedView(model.Fields):
        def __init__(self, config):
            super().__init__(config.inner if isinstance(config, Wrapped) else config)

    monkeypatch.setitem(model.VIEWS, "spec", WrappedView)
    dynamic = get_symmetric_quantization_config(is_per_channel=False, is_dynamic=True)
    static = Rule(
        "linear", chain=((aten.linear.default,),), weight=1, bias=2,
        allows=(Allows("s", dynamic=False),),
    )  # fmt: skip
    q = quantizer(static).set_global(Wrapped(dynamic)).report(None)
    q.annotate(exported(torch.nn.Linear(4, 4), torch.randn(2, 4)))
    (entry,) = [e for e in q.last_report.entries if e.node == "linear"]
    assert (entry.reason, entry.rule) == ("not_tried", "linear")
    assert entry.detail == (
        "pattern linear allows static configs only; global config has "
        "input_activation.is_dynamic True"
    )
