"""``classes:`` under ``scopes: pairs`` (ExecuTorch's Cadence scheme), without ExecuTorch: a
pair class of pattern objects, a pairs function, classes appending their pairs to
``quantizers`` (a default list, a fresh one, or the caller's), the QAT config chosen by
``is_qat``, a function's pairs spliced in the middle, and the ops kept from decomposition."""

from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402

from tests.live.pt2e_support import generate, symmetric_config  # noqa: E402

aten = torch.ops.aten
PTQ = symmetric_config("per_tensor")
QAT = symmetric_config("per_channel")
OTHER = symmetric_config("per_tensor")


class LinearPattern:
    def partition_types(self):
        return [aten.linear.default]


class LinearReluPattern:
    def partition_types(self):
        return [aten.linear.default, aten.relu.default]


class CatPattern:
    def partition_types(self):
        return [aten.cat.default]


class BmmPattern:  # no pattern of the spec has it
    def partition_types(self):
        return [aten.bmm.default]


SPEC = """
    alias here = tests.runtime.test_pair_classes
    constraint act = qint8 {}
    dtypes s = {input: act, output: act, weight: qint8}
    quantizer t {
        fx: false
        scopes: pairs
        classes: [
            {name: Pair, pair: true},
            {name: TQuantizer, params: {quantizers: []}},
            {
                function: defaults, params: {is_qat: false},
                pairs: [{pattern: here.LinearPattern, config: here.PTQ, qat: here.QAT}],
            },
            {name: Default, params: {quantizers: defaults, is_qat: false}},
            {
                name: Fused, params: {quantizers: [], is_qat: false},
                pairs: [
                    {pattern: here.LinearReluPattern, config: here.PTQ, qat: here.QAT},
                    defaults,
                    {pattern: [here.CatPattern, here.LinearPattern], config: here.OTHER},
                ],
            },
            {name: Given, params: {config: required}, pairs: [{pattern: here.CatPattern, config: config}]},
        ]
    }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default { dtypes: s }
        pattern aten.cat.default { observation: shared_observer  dtypes: s  pt2e: {eager: true} }
    }
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("pair_classes"), SPEC).__globals__


def pairs(q):
    return [(type(p.pattern).__name__, p.quantization_config) for p in q.quantizers]


def test_constructors_are_the_records(module):
    sig = {n: str(inspect.signature(module[n])) for n in ("Pair", "TQuantizer", "Default", "Fused")}
    assert sig == {
        "Pair": "(pattern: 'Any', quantization_config: 'Any') -> 'None'",
        "TQuantizer": "(quantizers=None) -> None",
        "Default": "(quantizers=None, is_qat=False) -> None",
        "Fused": "(quantizers=None, is_qat=False) -> None",
    }
    assert str(inspect.signature(module["defaults"])) == "(is_qat=False) -> list"
    assert issubclass(module["Default"], module["TQuantizer"])
    assert module["TQuantizer"]().quantizers == []


def test_pairs_in_order_with_the_qat_config_when_is_qat(module):
    assert pairs(module["Default"]()) == [("LinearPattern", PTQ)]
    assert pairs(module["Default"](is_qat=True))[0][1] is QAT
    fused = pairs(module["Fused"](is_qat=True))
    assert fused == [
        ("LinearReluPattern", QAT), ("LinearPattern", QAT), ("CatPattern", OTHER),
        ("LinearPattern", OTHER),
    ]  # fmt: skip
    assert pairs(module["Given"](OTHER)) == [("CatPattern", OTHER)]


def test_the_callers_list_is_extended_and_kept(module):
    mine = [module["Pair"](CatPattern(), PTQ)]
    q = module["Default"](quantizers=mine)  # a list given: no default pairs
    assert q.quantizers is mine and pairs(q) == [("CatPattern", PTQ)]
    nested = module["TQuantizer"]([module["Fused"](), module["Pair"](CatPattern(), PTQ)])
    kept = set(nested.get_ops_to_preserve_from_decomposition())
    assert kept == {aten.linear.default, aten.relu.default, aten.cat.default}


def test_a_pattern_no_rule_has_is_an_error_naming_it(module):
    with pytest.raises(ValueError, match=r"BmmPattern: .* has no pattern of the ops"):
        module["Pair"](BmmPattern(), PTQ)


def test_a_pair_annotates_its_rule(module):
    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.fc(x))

    gm = torch.export.export(Model().eval(), (torch.randn(2, 4),), strict=True).module()
    module["Fused"]().annotate(gm)
    relu = next(n for n in gm.graph.nodes if n.target == aten.relu.default)
    assert relu.meta["quantization_annotation"].output_qspec == PTQ.output_activation
