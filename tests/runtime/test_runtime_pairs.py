"""``PairQuantizer`` (ExecuTorch's Cadence scheme: one pattern, one config), without ExecuTorch:
anchors by argument index, the derived int32 bias, shared outputs (cat), float activations,
the first pair winning, and a config the spec does not allow.

``python -m tests.live.executorch_suites cadence`` runs ExecuTorch's own Cadence tests with the
classes of specs/hooks/cadence_quantizer.py (on this runtime) in their place.
"""

from __future__ import annotations

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
    quantizer t { fx: false  scopes: composable }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default { dtypes: [s, w8] }
        pattern aten.addmm.default { dtypes: s }
        pattern aten.cat.default { observation: shared_observer  dtypes: s  pt2e: {eager: true} }
    }
"""


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
    rules = {r.name: r for r in generate(tmp, SPEC).__globals__["RULES"]}
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

    return rules, PairQuantizer, graph


def specs(node):
    return node.meta["quantization_annotation"].input_qspec_map


def test_a_chain_anchors_input_weight_derived_bias_and_output(made):
    rules, PairQuantizer, graph = made
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
    rules, PairQuantizer, graph = made
    config = symmetric_config("per_tensor")
    gm, nodes = graph()
    anchors = {"inputs": (1,), "weight": 2, "bias": 0}
    PairQuantizer(rules["aten.addmm.default"], config, anchors).annotate(gm)
    addmm = nodes["addmm"]
    bias, x, weight = addmm.args
    got = specs(addmm)
    assert got[x] == config.input_activation and got[weight] == config.weight
    assert got[bias].derived_from == [(x, addmm), (weight, addmm)]
    gm, nodes = graph()
    PairQuantizer(rules["aten.addmm.default"], config).annotate(gm)  # no anchors: argument 0 only
    assert list(specs(nodes["addmm"])) == [nodes["addmm"].args[0]]


def test_a_list_input_shares_its_first_elements_spec(made):
    rules, PairQuantizer, graph = made
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
    rules, PairQuantizer, graph = made
    config = symmetric_config("per_tensor")
    w8 = type(config)(None, None, config.weight, config.weight)
    gm, nodes = graph()
    PairQuantizer(rules["aten.linear.default"], w8).annotate(gm)
    linear = nodes["linear"]
    assert specs(linear) == {linear.args[1]: config.weight, linear.args[2]: config.weight}
    assert linear.meta["quantization_annotation"].output_qspec is None
    with pytest.raises(ValueError, match=r"aten.addmm.default: a config the spec does not allow"):
        PairQuantizer(rules["aten.addmm.default"], w8)


def test_each_match_tried_is_recorded_with_why_it_was_skipped(made):
    rules, PairQuantizer, graph = made
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
    assert second.message == "linear was annotated first (by an earlier pair)"

    def never(node, nodes):
        return False

    gm, nodes = graph()
    checked = PairQuantizer(rules["aten.linear.default"], config, float_checks=())
    checked.checks = (never,)
    checked.annotate(gm)
    (match,) = checked.last_matches
    assert match.message == "a when: condition (never) rules the match out"
    assert "quantization_annotation" not in nodes["linear"].meta
