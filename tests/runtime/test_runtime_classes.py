"""``classes:``: the generated module exports classes under a target's own names, with their
constructors (parameters, defaults by dotted path imported at construction, fixed
parameters, an init hook, mixins and a parent) and the stages they add."""

from __future__ import annotations

import inspect
import types

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tests.live.pt2e_support import dump, generate, symmetric_config  # noqa: E402

PER_TENSOR = symmetric_config("per_tensor")
PER_CHANNEL = symmetric_config("per_channel")
INITS: list[tuple] = []


class Front:
    """A mixin: what one target's class has of its own."""

    def describe(self) -> str:
        return f"{type(self).__name__} on {self.device}"


def setup(self, device, config, strict) -> None:
    INITS.append((type(self).__name__, device, config is PER_TENSOR, strict))
    self.device = device


SPEC = """
    alias here = tests.runtime.test_runtime_classes
    dtypes s = {input: qint8, output: qint8, weight: qint8}
    quantizer t {
        fx: false
        scopes: composable
        classes: [
            {
                name: TQuantizer,
                params: {config: here.PER_TENSOR, strict: false},
                fixed: [strict],
                stages: [
                    {config: here.PER_CHANNEL, chains: [aten.linear.default]},
                    {config: config},
                ],
            },
            {
                name: Target,
                base: here.Front,
                params: {device: required, config: no_such_package.CONFIG, strict: false},
                init: here.setup,
                stages: [{config: config, ops: [aten.add.Tensor]}],
            },
            {
                name: SubTarget, base: Target,
                params: {device: required, config: none, strict: 1},
                init: here.setup,
            },
        ]
    }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default { dtypes: s }
        pattern aten.add.Tensor { dtypes: {input: qint8, output: qint8} }
    }
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    getter = generate(tmp_path_factory.mktemp("classes"), SPEC, ("torch", "operator", "tests"))
    return types.SimpleNamespace(**getter.__globals__)  # the module, gone from sys.modules


def test_the_module_exports_the_classes_with_their_signatures(module):
    assert module.__all__ == ["TQuantizer", "Target", "SubTarget", "get_t_quantizer"]
    assert str(inspect.signature(module.TQuantizer)) == "(config=None, strict=False) -> None"
    assert str(inspect.signature(module.Target)) == "(device, config=None, strict=False) -> None"
    assert str(inspect.signature(module.SubTarget)) == "(device, config=None, strict=1) -> None"
    assert module.get_t_quantizer().__class__ is module.TQuantizer  # the generated class itself


def test_stages_in_order_with_the_default_imported_at_construction(module):
    aten = torch.ops.aten
    q = module.TQuantizer()
    assert [s.config for s in q.stages] == [PER_CHANNEL, PER_TENSOR]
    assert set(q.stages[0].targets) == {aten.linear.default, aten.relu.default}
    assert q.stages[1].targets is None
    assert module.TQuantizer(config=PER_CHANNEL).stages[1].config is PER_CHANNEL


def test_a_fixed_parameter_takes_only_its_default(module):
    with pytest.raises(NotImplementedError, match=r"TQuantizer\(strict=True\): only strict=False"):
        module.TQuantizer(strict=True)


def test_an_unimportable_default_fails_only_when_it_is_used(module):
    with pytest.raises(ModuleNotFoundError):
        module.Target("cpu")
    q = module.Target("cpu", PER_TENSOR)
    assert INITS[-1] == ("Target", "cpu", True, False)  # init(self, *params)
    assert q.describe() == "Target on cpu" and isinstance(q, module.TQuantizer)
    assert [(s.config, tuple(s.targets)) for s in q.stages] == [
        (PER_TENSOR, (torch.ops.aten.add.Tensor,))
    ]


def test_a_derived_class_has_its_parents_mixins_and_only_its_own_constructor(module):
    q = module.SubTarget("npu", PER_TENSOR)
    assert isinstance(q, module.Target) and q.describe() == "SubTarget on npu"
    assert INITS[-1] == ("SubTarget", "npu", True, 1) and q.stages == []


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x)) + x


def test_the_class_annotates_as_the_same_stages_added_by_hand(module):
    def annotations(q):
        gm = torch.export.export(Model().eval(), (torch.randn(2, 4),)).module()
        q.annotate(gm)
        return dump(gm)

    aten = torch.ops.aten
    plain = type("Plain", (module.ComposableSpecQuantizer,), {"rules": module.RULES})()
    plain.add_stage(PER_CHANNEL, [aten.linear.default, aten.relu.default]).add_stage(PER_TENSOR)
    ours = annotations(module.TQuantizer())
    assert ours == annotations(plain) and len(ours) >= 3
