"""The ATen mapping table (generator/semantics/aten_ops.py) is what torch.export emits.

Every way of using every entry (tests/live/aten_examples.py) is exported, all
at once, in strict and in non-strict mode; each must emit exactly a chain of
the entry (one op per position, each op one the table lists there), and
together they must emit every op the table lists. The weight and bias
positions are checked against the ops' schemas.
"""

from __future__ import annotations

import operator

import pytest
import torch
import torch.nn as nn

from generator.semantics.aten_ops import BATCH_NORM, FX_ONLY_PREFIXES, MAPPING, WEIGHT_BIAS

from .aten_examples import EXAMPLES


def test_every_entry_has_examples():
    assert set(EXAMPLES) == set(MAPPING)


class _All(nn.Module):
    """Every example as a submodule ``e<i>``, each called on its own inputs."""

    def __init__(self, modules: list[nn.Module], counts: list[int]):
        super().__init__()
        self.counts = counts
        for i, mod in enumerate(modules):
            setattr(self, f"e{i}", mod)

    def forward(self, *flat):
        out, k = [], 0
        for i, n in enumerate(self.counts):
            out.append(getattr(self, f"e{i}")(*flat[k : k + n]))
            k += n
        return tuple(out)


def _emitted(strict: bool) -> dict[str, list[list[str]]]:
    """For each entry, the ops (as dotted paths) each of its examples exports to."""
    cases = [(key, i) for key, examples in EXAMPLES.items() for i in range(len(examples))]
    torch.manual_seed(0)
    modules, counts, flat = [], [], []
    for key, i in cases:
        factory, inputs = EXAMPLES[key][i]
        modules.append(factory())
        counts.append(len(inputs))
        flat.extend(x.clone() for x in inputs)
    gm = torch.export.export(_All(modules, counts), tuple(flat), strict=strict).module()
    by_example: dict[str, list[str]] = {}
    for node in gm.graph.nodes:
        # getitem picks an output of a multi-output op: not an op of a pattern
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        stack = list(node.meta["nn_module_stack"].values())
        example = stack[1][0].split(".")[0]
        by_example.setdefault(example, []).append(f"torch.ops.{node.target}")
    out: dict[str, list[list[str]]] = {}
    for index, (key, _) in enumerate(cases):
        out.setdefault(key, []).append(by_example.get(f"e{index}", []))
    return out


def problems(emitted: dict[str, list[list[str]]], table: dict) -> list[str]:
    """Entries of ``table`` that are not what export emitted."""
    wrong = []
    for key, seen in emitted.items():
        want = table[key]
        each_a_chain = all(
            len(ops) == len(want) and all(op in pos for op, pos in zip(ops, want)) for ops in seen
        )
        every_op_seen = all(
            any(len(ops) == len(want) and ops[i] == op for ops in seen)
            for i, pos in enumerate(want)
            for op in pos
        )
        if not (each_a_chain and every_op_seen):
            wrong.append(f"{key}: export emits {seen}, the table says {want}")
    return wrong


@pytest.fixture(scope="module", params=[True, False], ids=["strict", "non-strict"])
def emitted(request):
    return _emitted(request.param)


def test_the_table_is_what_export_emits(emitted):
    assert problems(emitted, MAPPING) == []


def test_a_wrong_entry_is_noticed(emitted):
    a = "torch.ops.aten."
    for key, wrong in [
        ("torch.nn.ReLU", ((a + "relu.default",),)),  # misses relu_ (inplace=True)
        ("torch.nn.Conv2d", ((a + "conv2d.default", a + "conv2d.padding", a + "conv3d.default"),)),
        ("torch.nn.Linear", ((a + "linear.default",), (a + "relu.default",))),
        ("torch.add", ((a + "add_.Tensor",),)),
    ]:
        assert problems({key: emitted[key]}, {**MAPPING, key: wrong}), key


def _op(path: str):
    obj = torch.ops
    for part in path.removeprefix("torch.ops.").split("."):
        obj = getattr(obj, part)
    return obj


def test_weight_and_bias_positions_are_the_schemas():
    for path, (weight, bias) in WEIGHT_BIAS.items():
        args = [a.name for a in _op(path)._schema.arguments]
        assert args[weight] == "weight", path
        assert bias is None or args[bias] == "bias", path


def test_every_op_named_exists():
    named = {op for chain in MAPPING.values() for pos in chain for op in pos}
    for path in sorted(named | set(WEIGHT_BIAS) | set(BATCH_NORM)):
        assert isinstance(_op(path), torch._ops.OpOverload), path


def test_fx_only_modules_are_not_in_the_table():
    assert not [key for key in MAPPING if key.startswith(FX_ONLY_PREFIXES)]
