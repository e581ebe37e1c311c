"""``PairQuantizer`` (ExecuTorch's Cadence scheme: one pattern, one config), without ExecuTorch:
anchors by argument index (the pt2e keys ``inputs``, ``parameters``, ``bias_spec``,
``weights_only_when`` and ``input_index``), the derived int32 bias, shared outputs (cat),
weights-only configs, the first pair winning, a config the spec does not allow, and
``PairsQuantizer`` composing pairs by their ops.

``python -m tests.live.executorch_suites cadence`` runs ExecuTorch's own Cadence tests with the
classes of generated/cadence_quantizer.py (specs/cadence.bcfg's classes:) in their place.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tests.live.pt2e_support import generate, symmetric_config  # noqa: E402

SPEC = """
    constraint act = qint8 {}
    dtypes s = {input: act, output: act, weight: qint8}
    dtypes w8 = {input: float, output: float, weight: qint8}
    quantizer t { fx: false  scopes: pairs }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default {
            dtypes: [s, w8]
            pt2e: {weights_only_when: tests.runtime.test_runtime_pairs.two_rows}
        }
        pattern aten.addmm.default { dtypes: s  input_index: {weight: 2, bias: 0}  pt2e: {inputs: 1} }
        pattern aten.cat.default { observation: shared_observer  dtypes: s  pt2e: {eager: true} }
    }
"""


def two_rows(match):
    """A weights-only condition: the input has 2 rows (the test's does)."""
    return match.node.args[0].meta["val"].shape[0] == 2


def never(match):
    return False


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(4, 4))
        self.b = nn.Parameter(torch.randn(4))

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return torch.cat([y, torch.addmm(self.b, x, self.w)])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pairs")
    getter = generate(tmp, SPEC)
    rules = {r.name: r for r in getter.__globals__["RULES"]}
    sys.path.insert(0, str(tmp))
    try:  # the runtime generate() wrote beside the quantizer
        PairQuantizer = importlib.import_module("gen_pt2e._bcfg_pt2e.pairs").PairQuantizer
    finally:
        sys.path.remove(str(tmp))
        for name in [m for m in sys.modules if m.startswith("gen_pt2e")]:
            del sys.modules[name]

    def graph():
        # strict: nodes carry the source_fn_stack that partitions read
        gm = torch.export.export(Model().eval(), (torch.randn(2, 4),), strict=True).module()
        return gm, {n.name: n for n in gm.graph.nodes}

    return rules, PairQuantizer, graph, getter


def specs(node):
    return node.meta["quantization_annotation"].input_qspec_map


def test_a_chain_anchors_input_weight_derived_bias_and_output(made):
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    gm, nodes = graph()
    PairQuantizer(rules["(aten.linear.default, aten.relu.default)"], config).annotate(gm)
    linear, relu = nodes["linear"], nodes["relu"]
    x, weight, bias = linear.args
    got = specs(linear)
    assert list(got) == [x, weight, bias]
    assert got[x] == config.input_activation and got[weight] == config.weight
    assert got[bias].dtype == torch.int32 and got[bias].derived_from == [
        (x, linear),
        (weight, linear),
    ]
    assert relu.meta["quantization_annotation"].output_qspec == config.output_activation
    # a second pair on linear alone finds it annotated: the first pair wins
    PairQuantizer(rules["aten.linear.default"], config).annotate(gm)
    assert linear.meta["quantization_annotation"].output_qspec is None


def test_anchors_by_argument_index_override_the_op_table(made):
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    gm, nodes = graph()
    PairQuantizer(rules["aten.addmm.default"], config).annotate(gm)  # inputs: 1, input_index
    addmm = nodes["addmm"]
    bias, x, weight = addmm.args
    got = specs(addmm)
    assert got[x] == config.input_activation and got[weight] == config.weight
    assert got[bias].derived_from == [(x, addmm), (weight, addmm)]
    gm, nodes = graph()
    plain = dataclasses.replace(rules["aten.addmm.default"], inputs=(0,), weight=None, bias=None)
    PairQuantizer(plain, config).annotate(gm)  # the keys' defaults: argument 0 only
    assert list(specs(nodes["addmm"])) == [nodes["addmm"].args[0]]
    gm, nodes = graph()
    weightless = dataclasses.replace(rules["aten.addmm.default"], parameters="float")
    PairQuantizer(weightless, config).annotate(gm)  # parameters: float: the input only
    assert list(specs(nodes["addmm"])) == [nodes["addmm"].args[1]]


def test_bias_spec_config_gives_the_configs_bias_spec(made):
    rules, PairQuantizer, graph, _ = made
    plain = symmetric_config("per_tensor")  # its bias spec: its weight's
    config = type(plain)(
        plain.input_activation, plain.output_activation, plain.weight, plain.weight
    )
    rule = dataclasses.replace(
        rules["(aten.linear.default, aten.relu.default)"], bias_spec="config"
    )
    gm, nodes = graph()
    PairQuantizer(rule, config).annotate(gm)
    linear = nodes["linear"]
    assert specs(linear)[linear.args[2]] == config.weight


def test_a_list_input_shares_its_first_elements_spec(made):
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    gm, nodes = graph()
    PairQuantizer(rules["aten.cat.default"], config).annotate(gm)
    cat = nodes["cat"]
    first, second = cat.args[0]
    got = specs(cat)
    assert got[first] == config.input_activation
    assert got[second].edge_or_node == (first, cat)
    assert cat.meta["quantization_annotation"].output_qspec.edge_or_node == (first, cat)


def test_float_activations_annotate_parameters_only_and_configs_are_checked(made):
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    w8 = type(config)(None, None, config.weight, config.weight)
    gm, nodes = graph()
    PairQuantizer(rules["aten.linear.default"], w8).annotate(gm)
    linear = nodes["linear"]
    assert specs(linear) == {linear.args[1]: config.weight, linear.args[2]: config.weight}
    assert linear.meta["quantization_annotation"].output_qspec is None
    with pytest.raises(ValueError, match=r"aten.addmm.default: a config the spec does not allow"):
        PairQuantizer(rules["aten.addmm.default"], w8)
    gm, nodes = graph()  # a weights-only condition that fails: nothing annotated
    rows = dataclasses.replace(rules["aten.linear.default"], weights_only_when=(never,))
    PairQuantizer(rows, w8).annotate(gm)
    assert "quantization_annotation" not in nodes["linear"].meta
    gm, nodes = graph()  # it binds weights-only configs only
    PairQuantizer(rows, config).annotate(gm)
    assert specs(nodes["linear"])[nodes["linear"].args[0]] == config.input_activation


def test_pairs_quantizer_composes_pairs_by_their_ops(made):
    _, _, graph, getter = made
    config = symmetric_config("per_tensor")
    quantizer = getter()
    quantizer.add_pair(torch.ops.aten.cat.default, config)
    quantizer.add_pair([torch.ops.aten.linear.default, torch.ops.aten.relu.default], config)
    gm, nodes = graph()
    quantizer.annotate(gm)
    assert nodes["cat"].meta["quantization_annotation"].output_qspec.edge_or_node[1] is nodes["cat"]
    assert nodes["relu"].meta["quantization_annotation"].output_qspec == config.output_activation
    with pytest.raises(ValueError, match=r"has no pattern of the ops \(<OpOverload"):
        quantizer.add_pair(torch.ops.aten.bmm.default, config)


def test_each_match_tried_is_recorded_with_why_it_was_skipped(made):
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    gm, nodes = graph()
    chain = PairQuantizer(rules["(aten.linear.default, aten.relu.default)"], config)
    alone = PairQuantizer(rules["aten.linear.default"], config)
    chain.annotate(gm)
    alone.annotate(gm)
    (first,) = chain.last_matches
    assert [n.name for n in first.nodes] == ["linear", "relu"] and first.accepted
    assert (first.rule, first.config, first.stage) == (chain.rule.name, config, "PairQuantizer")
    (second,) = alone.last_matches
    assert not second.accepted
    # the composable base's decline for a node matched first: the report's "annotated"
    assert second.decline.reason == "annotated"

    def never(match):
        return False

    gm, nodes = graph()
    checked = PairQuantizer(rules["aten.linear.default"], config)
    checked.checks = (never,)
    checked.annotate(gm)
    (match,) = checked.last_matches
    assert match.decline.reason == "skip"
    assert match.decline.detail == "a when: condition (never) rules the match out"
    assert "quantization_annotation" not in nodes["linear"].meta


def test_a_match_an_earlier_pair_took_reports_annotated_as_the_composable_base_does(made):
    _, _, graph, getter = made
    config = symmetric_config("per_tensor")
    quantizer = getter().report(None)
    quantizer.add_pair(torch.ops.aten.linear.default, config)
    quantizer.add_pair([torch.ops.aten.linear.default, torch.ops.aten.relu.default], config)
    gm, _ = graph()
    quantizer.annotate(gm)
    relu = next(e for e in quantizer.last_report.entries if e.node == "relu")
    assert not relu.quantized and relu.reason == "annotated"
    assert "linear was matched first" in relu.detail


def test_the_report_is_worked_out_when_read_from_what_the_annotate_left(made):
    """As the composable base's: annotate explains nothing; read before prepare_pt2e puts
    observers between the ops (in ``validate``) or after, the entries are the same, the
    float ops' (no pair has addmm here) from the arguments the annotate saw."""
    from tests.live.pt2e_support import report_read_early_and_late

    _, _, graph, getter = made
    config = symmetric_config("per_tensor")

    def quantizer():
        q = getter().add_pair([torch.ops.aten.linear.default, torch.ops.aten.relu.default], config)
        return q.add_pair(torch.ops.aten.cat.default, config).report(None)

    early, late = report_read_early_and_late(quantizer, lambda: graph()[0])
    assert late == early
    got = {e["node"]: (e["reason"], e["quantized"]) for e in early}
    assert got["relu"] == ("annotated", True) and got["addmm"][1] is False, got


def test_an_input_that_is_no_tensor_of_the_graph_declines_the_match(made):
    """Issue 52.9: ``inputs`` naming an argument the op does not have, or one that is a
    scalar in this graph, declined the match with an IndexError or annotated the scalar (and
    prepare_pt2e crashed inside torchao): now a decline with the reason, nothing annotated."""
    rules, PairQuantizer, graph, _ = made
    config = symmetric_config("per_tensor")
    addmm = rules["aten.addmm.default"]
    gm, nodes = graph()
    beyond = PairQuantizer(dataclasses.replace(addmm, inputs=(5,)), config)
    beyond.annotate(gm)
    (match,) = beyond.last_matches
    assert match.decline.reason == "non_float_input"
    assert match.decline.detail == "argument 5 of addmm (inputs) is no argument in this graph"
    assert "quantization_annotation" not in nodes["addmm"].meta
    gm, nodes = graph()
    nodes["addmm"].args = (2.0, *nodes["addmm"].args[1:])
    scalar = PairQuantizer(dataclasses.replace(addmm, inputs=(0,), bias=None), config)
    scalar.annotate(gm)
    (match,) = scalar.last_matches
    assert match.decline.detail == "argument 0 of addmm (inputs) is 2.0, not a tensor in this graph"
    assert "quantization_annotation" not in nodes["addmm"].meta
