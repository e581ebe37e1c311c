"""``scopes: composable`` (ExecuTorch's Cortex-M and Arm scheme), without ExecuTorch: stages,
the longest supported chain, rejections with their reasons, shared clusters and the marks.

tests/live/test_pt2e_cortex_m.py compares the scheme with ExecuTorch's own class where
ExecuTorch's Cortex-M quantizer imports; these run wherever torchao does.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tests.live.pt2e_support import generate, symmetric_config  # noqa: E402

SPEC = """
    constraint act = qint8 {}
    dtypes s = {input: act, output: act, weight: qint8}
    dtypes io = {input: act, output: act}
    quantizer t { fx: false  scopes: composable }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default { dtypes: s }
        pattern aten.add.Tensor { dtypes: io  pt2e: {when: tests.live.pt2e_hooks.never} }
        pattern aten.max_pool2d.default {
            observation: shared_observer  dtypes: io  pt2e: {eager: true}
        }
        pattern aten.clone.default { observation: shared_observer  dtypes: io }
    }
"""


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return torch.clone(y) + y, nn.functional.max_pool2d(x.reshape(1, 1, 2, 8), 2)


@pytest.fixture(scope="module")
def annotated(tmp_path_factory):
    quantizer = generate(tmp_path_factory.mktemp("composable"), SPEC)()
    config = symmetric_config("per_tensor")
    aten = torch.ops.aten
    quantizer.add_stage(config, [aten.linear.default, aten.relu.default]).add_stage(config)
    gm = torch.export.export(Model().eval(), (torch.randn(4, 4),)).module()
    quantizer.annotate(gm)
    return quantizer, {n.name: n for n in gm.graph.nodes}, config


def test_the_longest_chain_is_matched_by_the_first_stage(annotated):
    quantizer, nodes, config = annotated
    linear, relu = nodes["linear"], nodes["relu"]
    assert linear.meta["quantization_annotation"].output_qspec is None  # inside the chain
    assert relu.meta["quantization_annotation"].output_qspec == config.output_activation
    weight = next(a for a in linear.all_input_nodes if a.op == "get_attr" and "weight" in a.name)
    assert linear.meta["quantization_annotation"].input_qspec_map[weight] == config.weight
    first = [m for m in quantizer.last_matches if linear in m.nodes]
    # the second stage tries the chain, then linear alone: both matched before
    assert [(len(m.nodes), m.accepted) for m in first] == [(2, True), (2, False), (1, False)]
    assert first[1].decline.reason == "annotated"


def test_a_failed_check_rejects_the_match_and_leaves_it_float(annotated):
    quantizer, nodes, _ = annotated
    (add,) = [m for m in quantizer.last_matches if nodes["add"] in m.nodes]
    assert not add.accepted and add.decline.reason == "skip"
    assert add.decline.detail.startswith("a when: condition (")
    assert "quantization_annotation" not in nodes["add"].meta


def test_shared_ops_share_one_spec_and_pools_their_input(annotated):
    _, nodes, config = annotated
    clone = nodes["clone"].meta["quantization_annotation"]
    (spec,) = clone.input_qspec_map.values()
    assert spec == config.output_activation  # the first spec found around the cluster: relu's
    pool = nodes["max_pool2d"].meta["quantization_annotation"].output_qspec
    assert pool.edge_or_node == (nodes["max_pool2d"].args[0], nodes["max_pool2d"])


def test_annotated_calls_carry_executorchs_marks(annotated):
    _, nodes, _ = annotated
    assert nodes["relu"].meta["custom"]["_arm_annotation_info"] == {"quantized": True}
    assert nodes["relu"].meta["_arm_disallow_tfa"] is False
    assert "_arm_annotation_info" not in nodes["add"].meta.get("custom", {})


def test_without_a_stage_annotating_is_an_error(tmp_path):
    quantizer = generate(tmp_path, SPEC)()
    gm = torch.export.export(Model().eval(), (torch.randn(4, 4),)).module()
    with pytest.raises(ValueError, match="add_stage"):
        quantizer.annotate(gm)


class _Finder:
    """A node finder as ExecuTorch's (``find_nodes(model)``): the nodes named ``names``."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def find_nodes(self, model):
        return (n for n in model.graph.nodes if n.name in self.names)


class _Accessors:
    """A config whose accessors say each op's specs, as ExecuTorch's Arm configs do."""

    def __init__(self, config) -> None:
        self.config = config
        self.asked: list[str] = []

    def __getattr__(self, name):
        return getattr(self.config, name)

    def get_input_act_qspec(self, node=None, input_node=None):
        self.asked.append(f"input {getattr(node, 'name', None)}")
        return self.config.input_activation

    def get_output_act_qspec(self, node=None):
        self.asked.append(f"output {getattr(node, 'name', None)}")
        return self.config.output_activation

    def get_weight_qspec(self, node=None):
        return self.config.weight

    def get_bias_qspec(self, node=None):
        return None


def _graph():
    return torch.export.export(Model().eval(), (torch.randn(4, 4),)).module()


def test_a_first_stage_by_finder_wins_over_the_global_stage(tmp_path):
    quantizer = generate(tmp_path, SPEC)()
    config = symmetric_config("per_tensor")
    quantizer.set_global_stage(config).add_stage(None, finder=_Finder("linear", "relu"))
    gm = _graph()
    quantizer.annotate(gm)
    nodes = {n.name: n for n in gm.graph.nodes}
    # The finder's stage (config None) marks linear and relu float before the global one runs.
    assert nodes["relu"].meta["custom"]["_arm_annotation_info"] == {"quantized": False}
    assert nodes["relu"].meta["quantization_annotation"].output_qspec is None
    assert nodes["x"].meta["quantization_annotation"].output_qspec == config.output_activation


def test_config_accessors_say_each_ops_specs(tmp_path):
    spec = SPEC.replace("scopes: composable", "scopes: composable  configs: accessors")
    quantizer = generate(tmp_path, spec)()
    assert quantizer.config_accessors
    config = _Accessors(symmetric_config("per_tensor"))
    quantizer.set_global_stage(config)
    quantizer.annotate(_graph())
    assert "output relu" in config.asked and "input linear" in config.asked


class _Validating(_Accessors):
    """A config whose accessors refuse a non-per-tensor activation, as ExecuTorch's Arm
    QuantizationConfig's do; ``refuse``: the field whose spec they refuse."""

    def __init__(self, config, refuse: str = "") -> None:
        super().__init__(config)
        self.refuse = refuse

    def get_input_act_qspec(self, node=None, input_node=None):
        if self.refuse == "input":
            raise ValueError("Unsupported quantization_spec for input_activation.")
        return super().get_input_act_qspec(node, input_node)

    def get_output_act_qspec(self, node=None):
        if self.refuse == "output":
            raise ValueError("Unsupported quantization_spec for output_activation.")
        return super().get_output_act_qspec(node)


def _specs(gm):
    """Each annotated node's input and output specs, as text (shared ones name nodes)."""
    return {
        n.name: repr((list(a.input_qspec_map.values()), a.output_qspec))
        for n in gm.graph.nodes
        if (a := n.meta.get("quantization_annotation")) is not None
    }


def test_validated_configs_are_read_through_their_accessors_which_may_refuse(tmp_path):
    spec = SPEC.replace("scopes: composable", "scopes: composable  configs: validated")
    (tmp_path / "v").mkdir(), (tmp_path / "p").mkdir()
    cls, plain = generate(tmp_path / "v", spec), generate(tmp_path / "p", SPEC)
    assert cls().config_validated and not plain().config_validated
    base = symmetric_config("per_tensor")
    config = _Validating(base)
    ours, theirs = _graph(), _graph()
    cls().set_global_stage(config).annotate(ours)
    plain().set_global_stage(base).annotate(theirs)
    # The same specs as the spec reads them, asked of the accessors without a node.
    assert _specs(ours) == _specs(theirs) and len(_specs(ours)) > 4
    assert set(config.asked) == {"input None", "output None"}
    for field in ("input", "output"):
        with pytest.raises(ValueError, match=f"for {field}_activation"):
            cls().set_global_stage(_Validating(base, field)).annotate(_graph())
        plain().set_global_stage(_Validating(base, field)).annotate(_graph())  # not asked


def test_a_foreign_quantizer_annotates_first(tmp_path):
    quantizer = generate(tmp_path, SPEC)()
    seen = []

    class Foreign:
        def annotate(self, model):
            seen.append(any("quantization_annotation" in n.meta for n in model.graph.nodes))

    quantizer.add_stage(symmetric_config("per_tensor")).add_quantizer(Foreign())
    quantizer.annotate(_graph())
    assert seen == [False]


def _report(quantizer, stream=None):
    gm = _graph()
    quantizer.report(stream).annotate(gm)
    annotated = {
        n.name
        for n in gm.graph.nodes
        if n.op == "call_function" and "quantization_annotation" in n.meta
    }
    return {e.node: e for e in quantizer.last_report.entries}, annotated


def test_the_report_names_each_ops_stage_and_rule_or_why_it_is_float(tmp_path):
    import io

    quantizer = generate(tmp_path, SPEC)()
    config = symmetric_config("per_tensor")
    aten = torch.ops.aten
    quantizer.add_stage(config, [aten.linear.default, aten.relu.default]).add_stage(config)
    stream = io.StringIO()
    entries, annotated = _report(quantizer, stream)
    first = "stage 1 (aten.linear.default, aten.relu.default)"
    chain = "(aten.linear.default, aten.relu.default)"
    got = {n: (e.reason, e.rule, e.scope, e.role) for n, e in entries.items()}
    assert got == {
        "linear": ("annotated", chain, first, "first op"),
        "relu": ("annotated", chain, first, "last op"),
        "clone": ("annotated", "aten.clone.default", "shared ops", "shared"),
        "add": ("skip", "aten.add.Tensor", "stage 2", None),
        "reshape": ("no_rule", None, None, None),
        "max_pool2d": ("annotated", "aten.max_pool2d.default", "stage 2", "op"),
    }
    assert entries["add"].detail == (
        "pattern aten.add.Tensor: match [add] rejected: a when: condition (never) rules the "
        "match out"
    )
    # What it says is quantized is what annotate annotated, no more, no less.
    assert {n for n, e in entries.items() if e.quantized} == annotated
    assert quantizer.last_report.matches == (
        (chain, first, 1),
        ("aten.max_pool2d.default", "stage 2", 1),
    )
    assert stream.getvalue().startswith("t quantizer: 4 of 6 op(s) quantized, 2 left float")


def test_the_report_says_which_dtypes_refuse_a_config_and_what_no_stage_sees(tmp_path):
    from torchao.quantization.pt2e.observer import MinMaxObserver
    from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec

    quantizer = generate(tmp_path, SPEC)()
    act = QuantizationSpec(torch.uint8, MinMaxObserver, 0, 255, torch.per_tensor_affine)
    quantizer.add_stage(QuantizationConfig(act, act, None, None), [torch.ops.aten.linear.default])
    entries, annotated = _report(quantizer)
    linear = entries["linear"]
    assert (linear.reason, linear.scope, linear.quantized) == (
        "not_tried",
        "stage 1 (aten.linear.default)",
        False,
    )
    assert "stage 1 (aten.linear.default) config is not one its dtypes allow: " in linear.detail
    assert "uint8" in linear.detail
    relu = entries["relu"]  # no stage sees it: on purpose
    assert (relu.reason, relu.deliberate) == ("no_config", True)
    assert annotated == set()


def test_the_report_of_a_stage_whose_config_is_none_and_of_an_added_quantizer(tmp_path):
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    quantizer = generate(tmp_path, SPEC)()

    class Foreign:
        def annotate(self, model):
            for n in model.graph.nodes:
                if n.name == "add":
                    n.meta["quantization_annotation"] = QuantizationAnnotation(_annotated=True)

    quantizer.set_global_stage(symmetric_config("per_tensor"))
    quantizer.add_stage(None, finder=_Finder("linear", "relu")).add_quantizer(Foreign())
    entries, annotated = _report(quantizer)
    assert (entries["relu"].reason, entries["relu"].role) == ("no_config", "marked")
    assert not entries["relu"].quantized and "relu" in annotated  # marked, not quantized
    assert (entries["add"].rule, entries["add"].scope) == ("Foreign", "added quantizer")
    assert entries["add"].quantized and "add" in annotated


def test_the_report_is_worked_out_when_read_from_what_the_annotate_left(tmp_path):
    """Annotate keeps what the report needs and explains nothing (the entries are worked out
    when first read); read in ``validate`` (before prepare_pt2e puts observers between the
    ops) or after prepare_pt2e, the entries are the same."""
    from tests.live.pt2e_support import report_read_early_and_late

    made = generate(tmp_path, SPEC)
    config = symmetric_config("per_tensor")
    aten = torch.ops.aten

    def quantizer():
        q = made().add_stage(config, [aten.linear.default, aten.relu.default])
        return q.add_stage(config).report(None)

    early, late = report_read_early_and_late(quantizer, _graph)
    assert late == early
    assert {e["reason"] for e in early} == {"annotated", "skip", "no_rule"}


BUILTINS = """
    constraint act = qint8 {}
    dtypes s = {input: act, output: act, weight: qint8}
    dtypes io = {input: act, output: act}
    quantizer t { fx: false  scopes: composable }
    backend t {
        pattern aten.linear.default { dtypes: s }
        pattern aten.relu.default { dtypes: io  pt2e: {when: input_quantized} }
        pattern aten.sigmoid.default { dtypes: io  pt2e: {when: user_quantizable} }
        pattern aten.tanh.default { dtypes: io  pt2e: {when: [input_quantized, user_quantizable]} }
    }
"""


class Builtins(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc, self.out = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.out(torch.sigmoid(torch.relu(self.fc(x)))), torch.tanh(x)


def test_builtin_conditions_mean_under_composable_what_they_mean_under_operators(tmp_path):
    """Issue 52.13: input_quantized and user_quantizable hold under scopes: composable where
    they hold under scopes: operators (they were called with the match's nodes for the
    quantizer's ops, and read a flag only the operators base set: they never held)."""
    quantizer = generate(tmp_path, BUILTINS)().report(None)
    quantizer.add_stage(symmetric_config("per_tensor"))
    gm = torch.export.export(Builtins().eval(), (torch.randn(4, 4),)).module()
    quantizer.annotate(gm)
    entries = {e.node: e for e in quantizer.last_report.entries}
    # relu's input is linear's quantized output; sigmoid's user is a linear (a rule's op)
    assert entries["relu"].quantized, entries["relu"].detail
    assert entries["sigmoid"].quantized, entries["sigmoid"].detail
    # tanh's input is the model's float input: input_quantized rules it out, with its name
    assert not entries["tanh"].quantized and entries["tanh"].reason == "skip"
    assert "input_quantized" in entries["tanh"].detail


@pytest.mark.parametrize(
    ("conv", "op", "shape"),
    [
        (nn.ConvTranspose1d(2, 3, 2), "conv_transpose1d.default", (1, 2, 5)),
        (nn.ConvTranspose2d(2, 3, 2), "conv_transpose2d.input", (1, 2, 5, 5)),
        (nn.ConvTranspose3d(2, 3, 2), "conv_transpose3d.input", (1, 2, 3, 3, 3)),
        (nn.Conv3d(2, 3, 2), "conv3d.default", (1, 2, 3, 3, 3)),
    ],
)
def test_a_convs_weight_and_bias_get_the_weight_and_bias_specs_not_the_input_one(
    tmp_path, conv, op, shape
):
    """Every conv and transposed conv torchao's and ExecuTorch's quantizers weigh: its weight
    (argument 1) and bias (argument 2) are parameters, not activations (an imported
    XNNPACK spec's conv_transpose1d got the input spec for both)."""
    spec = f"""
        constraint act = qint8 {{}}
        dtypes s = {{input: act, output: act, weight: qint8}}
        quantizer t {{ fx: false  scopes: composable }}
        backend t {{ pattern aten.{op} {{ dtypes: s }} }}
    """
    config = symmetric_config("per_tensor")
    quantizer = generate(tmp_path, spec)().add_stage(config)
    gm = torch.export.export(nn.Sequential(conv).eval(), (torch.randn(*shape),)).module()
    quantizer.annotate(gm)
    (node,) = [n for n in gm.graph.nodes if str(n.target) == f"aten.{op}"]
    qmap = node.meta["quantization_annotation"].input_qspec_map
    x, weight, bias = node.args[:3]
    assert (qmap[x], qmap[weight]) == (config.input_activation, config.weight)
    assert bias not in qmap or qmap[bias] is config.bias
