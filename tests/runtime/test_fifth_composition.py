"""A fifth composition made of the engine's parts alone (issue 47): a quantizer of Qualcomm's
shape (QnnQuantizer: a registry of per-op annotators, each with a per-node
``validate(node, constraints, soc_info)``, and a config priority: node name, then a
submodule predicate, then a per-op config, then the default) from the selector
(``scopes.Select``, the levels a spec's ``select:`` ranks), the matcher (``matcher.nodes_calling``), the checks (``model.Context``,
``conditions.unmet``/``decline``), the annotator (``annotate.write``) and the recorder
(``model.Match``, ``match_report.publish``), with no base class of the runtime's."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
from torchao.quantization.pt2e.observer import MinMaxObserver  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
from torchao.quantization.pt2e.quantizer import (  # noqa: E402
    QuantizationConfig,
    QuantizationSpec,
    Quantizer,
)

from generator.runtime import report  # noqa: E402
from generator.runtime.annotate import write  # noqa: E402
from generator.runtime.conditions import decline, unmet  # noqa: E402
from generator.runtime.graph import is_annotated, reindex  # noqa: E402
from generator.runtime.match_report import publish  # noqa: E402
from generator.runtime.matcher import nodes_calling  # noqa: E402
from generator.runtime.model import Context, Match, Reason  # noqa: E402
from generator.runtime.scopes import Select  # noqa: E402
from generator.runtime.values import STRUCTURAL, Rule  # noqa: E402

aten = torch.ops.aten
CONV, ADD, RELU = aten.conv2d.default, aten.add.Tensor, aten.relu.default


def conv_validate(node, constraints, soc_info):
    """Qualcomm's shape of a per-node check: the SoC's HTP takes kernels up to a size."""
    return node.args[1].meta["val"].shape[-1] <= soc_info["max_kernel"]


def valid(validate):
    """A registry entry's ``validate`` as a check of a match (``model.Check``)."""

    def check(match: Context) -> bool:
        return validate(match.node, match.params["constraints"], match.params["soc_info"])

    check.__name__ = validate.__name__
    return check


# The registry: one annotator per op (a Rule: what the annotator part writes), with its
# per-node validate (a when: check).
REGISTRY = {
    CONV: Rule("conv2d", chain=[[CONV]], weight=1, bias=2, when=[valid(conv_validate)]),
    ADD: Rule("add", chain=[[ADD]]),
    RELU: Rule("relu", chain=[[RELU]]),
}


class QnnShaped(report.Reports, Quantizer):
    """Qualcomm's configuration API over the parts: ``set_node_name``, ``add_submodule``
    (a predicate of a node), ``set_per_op``, ``set_default``."""

    backend = "qnn-shaped"
    rules = tuple(REGISTRY.values())
    honours = STRUCTURAL | {"when"}  # the one key this composition reads beyond the pattern

    def __init__(self, soc_info, constraints=None):
        super().__init__()
        self.params = {"soc_info": soc_info, "constraints": constraints or {}}
        self.names, self.submodules, self.per_op = {}, [], {}
        self.default = None
        self.last_matches, self.added = [], {}

    def set_node_name(self, name, config):
        self.names[name] = config
        return self

    def add_submodule(self, predicate, config):
        self.submodules.append((predicate, config))
        return self

    def set_per_op(self, op, config):
        self.per_op[op] = config
        return self

    def set_default(self, config):
        self.default = config
        return self

    def selector(self):
        """The config priority: node name > submodule predicate > per-op > default."""
        select = Select(("node_name", "submodule", "op_set", "default"))
        select.set("node_name", self.names)
        select.set("submodule", self.submodules)
        select.set("op_set", self.per_op)
        select.set("default", [(None, self.default)])
        return select

    def annotate(self, model):
        reindex(model)
        self.last_matches = []
        select = self.selector()
        for op, rule in REGISTRY.items():  # the registry's order, node by node
            for node in nodes_calling(model, (op,)):
                scope = select.choose(node)
                if scope is None or scope.config is None or is_annotated([node]):
                    continue
                match = Context([node], scope.config, params=self.params)
                inputs = [a for a in node.args if isinstance(a, torch.fx.Node)][:1]
                why = unmet(rule.when, match) or decline(rule, inputs, model, node)
                self.last_matches.append(Match([node], why, scope.label, scope.config, rule.name))
                if why is None:
                    write([node], rule, scope.config)
        if self.reporter is not None:
            publish(model, self)
        return model

    def seen(self, model):
        select = self.selector()
        return {n for n in model.graph.nodes if (s := select.choose(n)) and s.config}

    def validate(self, model):
        pass


def qconfig(dtype, low, high):
    act = QuantizationSpec(dtype, MinMaxObserver, low, high, torch.per_tensor_affine)
    weight = QuantizationSpec(torch.int8, MinMaxObserver, -127, 127, torch.per_tensor_symmetric)
    return QuantizationConfig(act, act, weight, None)


INT8, UINT8 = qconfig(torch.int8, -128, 127), qconfig(torch.uint8, 0, 255)
INT16 = qconfig(torch.int16, -32768, 32767)


class Block(torch.nn.Module):
    def __init__(self, kernel=3):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, kernel, padding=kernel // 2)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head, self.body, self.wide = Block(), Block(), Block(7)

    def forward(self, x):
        return self.wide(self.body(self.head(x)) + x)


@pytest.fixture
def graph():
    x = (torch.randn(1, 4, 8, 8),)
    return torch.export.export(Net().eval(), x, strict=True).module(), x


def in_body(node):
    return any("body" in path for path, _ in node.meta.get("nn_module_stack", {}).values())


def act_dtype(node):
    qa = node.meta.get("quantization_annotation")
    return None if qa is None else next(iter(qa.input_qspec_map.values())).dtype


def named(model):
    return {n.name: n for n in model.graph.nodes}


def test_the_config_priority_is_node_name_then_submodule_then_per_op_then_default(graph):
    model, _ = graph
    q = QnnShaped({"max_kernel": 7}).set_default(INT8).set_per_op(RELU, INT16)
    q.add_submodule(in_body, UINT8).set_node_name("relu", INT8)  # relu: head's relu
    q.annotate(model)
    nodes = named(model)
    assert act_dtype(nodes["conv2d"]) == torch.int8  # head: default
    assert act_dtype(nodes["relu"]) == torch.int8  # node name beats per-op
    assert act_dtype(nodes["conv2d_1"]) == torch.uint8  # body: submodule
    assert act_dtype(nodes["relu_1"]) == torch.uint8  # submodule beats per-op
    assert act_dtype(nodes["relu_2"]) == torch.int16  # wide: per-op beats default
    assert act_dtype(nodes["add"]) == torch.int8  # default


def test_a_node_its_validate_refuses_stays_float_and_the_report_says_why(graph):
    model, x = graph
    q = QnnShaped({"max_kernel": 5}).set_default(INT8).report(None)
    q.annotate(model)
    nodes = named(model)
    assert act_dtype(nodes["conv2d_1"]) == torch.int8
    assert "quantization_annotation" not in nodes["conv2d_2"].meta  # the 7x7 conv
    entries = {e.node: e for e in q.last_report.entries}
    wide = entries["conv2d_2"]
    assert (wide.quantized, wide.reason) == (False, Reason.SKIP)
    assert "condition conv_validate does not hold for conv2d_2" in wide.detail
    assert entries["conv2d"].reason == Reason.ANNOTATED and entries["conv2d"].rule == "conv2d"
    assert ("conv2d", "default", 2) in q.last_report.matches


def test_it_prepares_and_converts_as_any_torchao_quantizer(graph):
    model, x = graph
    q = QnnShaped({"max_kernel": 7}).set_default(INT8)
    prepared = prepare_pt2e(model, q)
    prepared(*x)
    converted = convert_pt2e(prepared)
    ops = [str(n.target) for n in converted.graph.nodes if n.op == "call_function"]
    assert sum("quantize_per_tensor" in op for op in ops) >= 4


def test_the_composition_names_no_base_of_the_runtime():
    from generator.runtime import composable, operators, pairs, quantizer

    bases = (quantizer.SpecQuantizer, composable.ComposableSpecQuantizer, pairs.PairsQuantizer)
    assert not issubclass(QnnShaped, bases + (operators.OperatorScopedQuantizer,))


def test_a_registry_entry_setting_a_key_the_composition_does_not_read_is_refused():
    class Stray(QnnShaped):
        rules = (Rule("relu", chain=[[RELU]], other="float"),)

    with pytest.raises(ValueError, match="pattern relu sets other"):
        Stray({"max_kernel": 7})
