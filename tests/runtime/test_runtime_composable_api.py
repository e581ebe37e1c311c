"""``api: composable``, ``config_type``, ``validate: one_device`` and ``output_qscheme: affine``:
ExecuTorch's composable configuration methods and its Arm checks, from a spec.

Stages are added as ExecuTorch's composable quantizer adds them (each ahead of those
before, the global one last); bcfg's node finders pick the nodes ExecuTorch's would; the
property setters check and refuse as ExecuTorch's do; a symmetric output refuses a fused
relu; validate names an op whose inputs are on two devices."""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tests.live.pt2e_support import dump, generate, symmetric_config  # noqa: E402

CONFIG = symmetric_config("per_tensor")  # affine activations
SYMMETRIC = dataclasses.replace(
    CONFIG,
    output_activation=dataclasses.replace(
        CONFIG.output_activation, qscheme=torch.per_tensor_symmetric
    ),
)

SPEC = """
    alias utils = torchao.testing.pt2e._xnnpack_quantizer_utils
    dtypes s = {input: qint8, output: qint8, weight: qint8}
    quantizer t {
        fx: false
        scopes: composable
        api: composable
        config_type: utils.QuantizationConfig
        validate: one_device
    }
    backend t {
        pattern (aten.linear.default, aten.relu.default) {
            dtypes: s
            pt2e: {output_qscheme: affine}
        }
        pattern aten.linear.default { dtypes: s }
        pattern aten.add.Tensor { dtypes: {input: qint8, output: qint8} }
    }
"""


class Inner(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        return self.out(self.inner(x)) + x


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    getter = generate(tmp_path_factory.mktemp("api"), SPEC, ("torch", "operator", "tests"))
    return types.SimpleNamespace(**getter.__globals__)


def exported() -> torch.fx.GraphModule:
    return torch.export.export(Model().eval(), (torch.randn(2, 4),)).module()


def annotated(q: Any) -> dict[str, bool]:
    """Each call node's name: whether the quantizer quantized it."""
    gm = q.annotate(exported())
    return {
        n.name: n.meta["custom"]["_arm_annotation_info"]["quantized"]
        for n in gm.graph.nodes
        if "custom" in n.meta and "_arm_annotation_info" in n.meta["custom"]
    }


def test_each_method_returns_the_quantizer_and_stages_go_ahead_of_earlier_ones(module):
    q = module.TQuantizer()
    assert q.set_global(CONFIG) is q and q.global_config is CONFIG
    assert q.set_module_type(Inner, None) is q and q.set_io(CONFIG) is q
    kinds = [type(s.finder).__name__ for s in q.stages]
    assert kinds == ["OutputFinder", "InputFinder", "ModuleTypeFinder"]
    assert q.needs_stage is False and module.TQuantizer().annotate(exported()) is not None


@pytest.mark.parametrize(
    ("configure", "outer_linear"),
    [
        (lambda q: q.set_module_type(Inner, None), True),
        (lambda q: q.set_module_name("inner", None), True),
        (lambda q: q.set_node_target(torch.ops.aten.linear.default, None), False),
    ],
    ids=["module_type", "module_name", "node_target"],
)
def test_a_finder_takes_its_nodes_from_the_global_config(module, configure, outer_linear):
    quantized = annotated(configure(module.TQuantizer().set_global(CONFIG)))
    assert quantized["linear"] is False and quantized.get("relu") is not True
    assert quantized["add"] is True and quantized["linear_1"] is outer_linear


def test_set_node_name_and_a_duck_typed_finder(module):
    class Adds:  # not bcfg's: any object with find_nodes(model)
        def find_nodes(self, model):
            return (n for n in model.graph.nodes if n.target == torch.ops.aten.add.Tensor)

    q = module.TQuantizer().set_node_name("linear_1", CONFIG).set_node_finder(CONFIG, Adds())
    quantized = annotated(q)
    assert quantized["linear_1"] is True and quantized["add"] is True
    assert "linear" not in quantized  # no stage saw it


def test_the_property_setters_check_and_replace_as_executorchs(module):
    q = module.TQuantizer()
    with pytest.raises(TypeError, match="global_config value must be QuantizationConfig or None"):
        q.global_config = 3
    with pytest.raises(TypeError, match="module_type_config keys must be callable, got str"):
        q.module_type_config = {"inner": CONFIG}
    with pytest.raises(TypeError, match="module_name_config must be a dict, got list"):
        q.module_name_config = []
    with pytest.raises(TypeError, match="module_name_config values must be QuantizationConfig"):
        q.module_name_config = {"inner": object()}
    with pytest.raises(NotImplementedError, match="does not allow accessing io_config"):
        q.io_config  # noqa: B018
    q.set_module_name("out", None).set_module_name("inner", None)
    q.module_name_config = {"inner": CONFIG}
    assert [s.finder.names for s in q.stages] == [["inner"]]
    q.io_config = CONFIG
    q.io_config = None
    assert [type(s.finder).__name__ for s in q.stages] == [
        "OutputFinder", "InputFinder", "ModuleNameFinder",
    ]  # fmt: skip


def test_a_symmetric_output_refuses_the_fused_relu(module):
    affine = module.TQuantizer().set_global(CONFIG)
    symmetric = module.TQuantizer().set_global(SYMMETRIC)
    gm = exported()
    affine.annotate(gm)
    assert any(m.accepted and len(m.nodes) == 2 for m in affine.last_matches)
    symmetric.annotate(exported())
    refused = [m for m in symmetric.last_matches if len(m.nodes) == 2]
    assert refused and not any(m.accepted for m in refused)
    # the linear is then matched alone
    assert any(m.accepted and m.nodes[0].name == "linear" for m in symmetric.last_matches)
    assert dump(gm) != dump(symmetric.annotate(exported()))


def test_validate_names_an_op_whose_inputs_are_on_two_devices(module):
    gm = exported()
    module.TQuantizer().validate(gm)  # one device
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    x.meta["val"] = torch.empty(2, 4, device="meta")
    with pytest.raises(ValueError, match="operator linear with different device inputs"):
        module.TQuantizer().validate(gm)
