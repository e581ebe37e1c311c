"""The registry preset (``scopes: registry``, runtime ``registry.RegistryQuantizer``) and its
selector (``scopes.Select``, a spec's ``select:``): each node annotated by its op's
``annotate_node`` with the config of the first level that takes it; Qualcomm's priority
(node name > submodule predicate > op set > default) and torchao's (module name > module
type > default) are both orders of the same levels."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
from torchao.quantization.pt2e.observer import MinMaxObserver  # noqa: E402
from torchao.quantization.pt2e.quantizer import (  # noqa: E402
    QuantizationAnnotation,
    QuantizationConfig,
    QuantizationSpec,
)

from generator.runtime.api import Entry  # noqa: E402
from generator.runtime.model import Reason  # noqa: E402
from generator.runtime.registry import RegistryQuantizer  # noqa: E402
from generator.runtime.scopes import Select  # noqa: E402
from generator.runtime.values import KEY, Rule  # noqa: E402

aten = torch.ops.aten


def qconfig(dtype, low, high):
    act = QuantizationSpec(dtype, MinMaxObserver, low, high, torch.per_tensor_affine)
    return QuantizationConfig(act, act, None, None)


INT8, UINT8 = qconfig(torch.int8, -128, 127), qconfig(torch.uint8, 0, 255)
INT16 = qconfig(torch.int16, -32768, 32767)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head, self.body = Block(), Block()

    def forward(self, x):
        return torch.sigmoid(self.body(self.head(x)) + x)


@pytest.fixture(scope="module")
def exported():
    return torch.export.export(Net().eval(), (torch.randn(1, 4, 8, 8),), strict=True)


@pytest.fixture
def model(exported):
    return exported.module()


def first_input(node, config):
    node.meta[KEY] = QuantizationAnnotation({node.args[0]: config.input_activation}, None, True)


def in_body(node):
    return any("body" in path for path, _ in node.meta.get("nn_module_stack", {}).values())


def odd(match):
    """A per-node check: the node's name ends in an odd digit."""
    return match.node.name[-1] in "13579"


RULES = (
    Rule("conv", chain=[[aten.conv2d.default]], annotate_node=first_input),
    Rule("relu", chain=[[aten.relu.default]], annotate_node=first_input, when=[odd]),
    Rule("add", chain=[[aten.add.Tensor]], annotate_node=first_input),
)


class Qnnish(RegistryQuantizer):
    rules = RULES
    levels = ("node_name", "submodule", "op_set", "default")


def dtypes(model):
    return {
        n.name: next(iter(qa.input_qspec_map.values())).dtype
        for n in model.graph.nodes
        if (qa := n.meta.get(KEY)) is not None
    }


def test_each_node_gets_the_config_of_the_first_level_that_takes_it(model):
    q = Qnnish().set_default(INT8).set_op_set([aten.conv2d.default], INT16)
    q.add_submodule(in_body, UINT8).set_node_name("conv2d_1", INT8)
    q.annotate(model)
    assert dtypes(model) == {
        "conv2d": torch.int16,  # head: the op set beats the default
        "conv2d_1": torch.int8,  # body, but named: the node name beats the submodule
        "relu_1": torch.uint8,  # body: the submodule
        "add": torch.int8,  # the default
    }  # relu (even) declined by its when:, sigmoid in no entry of the registry


def test_a_config_may_be_a_function_of_the_node_and_none_leaves_it_float(model):
    q = Qnnish().set_default(lambda n: INT16 if n.target == aten.add.Tensor else None)
    q.report(None).annotate(model)
    assert dtypes(model) == {"add": torch.int16}
    entries = {e.node: e for e in q.last_report.entries}
    assert entries["conv2d"].reason == Reason.NO_CONFIG
    assert entries["add"].reason == Reason.ANNOTATED


def test_a_nodes_when_declines_it_and_the_report_says_which(model):
    q = Qnnish().set_default(INT8).report(None)
    q.annotate(model)
    assert "relu" not in dtypes(model) and "relu_1" in dtypes(model)
    relu = next(e for e in q.last_report.entries if e.node == "relu")
    assert (relu.quantized, relu.reason) == (False, Reason.SKIP)
    assert "condition odd does not hold for relu" in relu.detail


def test_discarded_nodes_and_ops_registered_by_a_mixin(model):
    q = Qnnish().set_default(INT8)
    q.discard_nodes = {"add"}
    q.registry[aten.sigmoid.default] = Entry(first_input)
    q.annotate(model)
    assert set(dtypes(model)) == {"conv2d", "conv2d_1", "relu_1", "sigmoid"}


def test_a_level_the_select_does_not_name_is_refused():
    class Torchao(RegistryQuantizer):
        rules = RULES
        levels = ("module_name", "module_type", "default")

    with pytest.raises(ValueError, match="selects a config by module_name, module_type, default"):
        Torchao().set_node_name("add", INT8)


def test_torchaos_precedence_is_another_order_of_the_same_levels(model):
    select = Select(("module_name", "module_type", "default"))
    select.set("module_type", [(Block, UINT8)])
    select.set("module_name", [("body", INT16)])
    select.set("default", [(None, INT8)])
    chosen = {n.name: select.choose(n) for n in model.graph.nodes if n.op == "call_function"}
    assert chosen["conv2d"].label == "module_type Block" and chosen["conv2d"].config is UINT8
    assert chosen["conv2d_1"].label == "module_name body" and chosen["conv2d_1"].config is INT16
    assert chosen["add"].label == "default" and chosen["add"].config is INT8
