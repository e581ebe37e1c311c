"""The key table enforces behaviour, not only declarations (issue 47): every row of the table
of PT2E keys (``generator/lang/pt2e_keys.py``) whose value a runtime part reads carries a
witness, a tiny graph and a setting, and setting the key changes what that part does on it
(what it annotates, declines or refuses). A key no part reads (the recipe of
docs/contributing/pt2e-key.md followed without its step 5) fails here."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torchao.quantization.pt2e.quantizer import (  # noqa: E402
    QuantizationAnnotation,
    QuantizationConfig,
)
from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config  # noqa: E402

from generator.lang import pt2e_keys as t  # noqa: E402
from generator.runtime import conditions  # noqa: E402
from generator.runtime.composable import ComposableAPI, ComposableSpecQuantizer  # noqa: E402
from generator.runtime.operators import OperatorScopedQuantizer  # noqa: E402
from generator.runtime.pairs import PairsQuantizer  # noqa: E402
from generator.runtime.quantizer import SpecQuantizer  # noqa: E402
from generator.runtime.registry import RegistryQuantizer  # noqa: E402
from generator.runtime.values import KEY, Rule  # noqa: E402

BASES: dict[t.Scopes, Any] = {
    t.Scopes.MODULES: SpecQuantizer,
    t.Scopes.OPERATORS: OperatorScopedQuantizer,
    t.Scopes.COMPOSABLE: ComposableSpecQuantizer,
    t.Scopes.PAIRS: PairsQuantizer,
    t.Scopes.REGISTRY: RegistryQuantizer,
}
CONFIG = get_symmetric_quantization_config(is_per_channel=True)
SYMMETRIC = dataclasses.replace(
    CONFIG.output_activation, qscheme=torch.per_tensor_symmetric  # type: ignore[arg-type]
)


@dataclasses.dataclass(frozen=True)
class Accessing(QuantizationConfig):
    """A config with ExecuTorch Arm's accessors, which say what each op of a match gets
    (``configs: accessors`` asks them): here an input that stays float."""

    def get_input_act_qspec(self, node: Any = None, arg: Any = None) -> Any:
        return None

    def get_output_act_qspec(self, node: Any = None) -> Any:
        return self.output_activation

    def get_weight_qspec(self, node: Any = None) -> Any:
        return self.weight

    def get_bias_qspec(self, node: Any = None) -> Any:
        return self.bias


# The configs a witness names (``Witness.config``).
CONFIGS = {
    "": CONFIG,
    "weights_only": QuantizationConfig(None, None, CONFIG.weight, CONFIG.bias),
    "symmetric_output": QuantizationConfig(
        CONFIG.input_activation, SYMMETRIC, CONFIG.weight, CONFIG.bias
    ),
    "accessors": Accessing(
        CONFIG.input_activation, CONFIG.output_activation, CONFIG.weight, CONFIG.bias
    ),
}


# ------------------------------------------------------------------ the witnesses' graphs


class Linear(nn.Module):
    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4).to(dtype)

    def forward(self, x):
        return self.fc(x)


class Twice(Linear):
    def forward(self, x):
        return self.fc(self.fc(x))


class Conv(nn.Module):
    def __init__(self, groups: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, groups=groups)

    def forward(self, x):
        return torch.relu(self.conv(x))


class ConvAdd(Conv):
    def forward(self, x):
        return self.conv(x) + torch.ones(1, 4, 6, 6)


class Cat(Linear):
    def forward(self, x):
        return torch.cat([x, self.fc(x)])


class Add(nn.Module):
    def forward(self, x):
        return x + x


class Add2(nn.Module):
    def forward(self, x, y):
        return x + y


class Split(nn.Module):
    def forward(self, x):
        return torch.ops.aten.max_pool2d_with_indices.default(x, [2, 2])[0]


IMAGE, ROW = (torch.randn(1, 4, 8, 8),), (torch.randn(2, 4),)
# A witness's graph by name: the module, its arguments, and rules beside the witness's own.
GRAPHS: dict[str, tuple[Any, tuple[Any, ...], tuple[Rule, ...]]] = {
    "linear": (Linear, ROW, ()),
    "linear_bf16": (lambda: Linear(torch.bfloat16), (ROW[0].bfloat16(),), ()),
    "linear_twice": (Twice, ROW, ()),
    "conv": (Conv, IMAGE, ()),
    "depthwise": (lambda: Conv(groups=4), IMAGE, ()),
    "conv_add": (ConvAdd, IMAGE, ()),
    "cat": (Cat, ROW, ()),
    "cat_after_linear": (
        Cat,
        ROW,
        (Rule("linear", chain=[[torch.ops.aten.linear.default]], weight=1, bias=2),),
    ),
    "add": (Add, ROW, ()),
    "pool_indices": (Split, IMAGE, ()),
    "conv_no_bias": (lambda: nn.Conv2d(4, 4, 3, stride=2, bias=False), IMAGE, ()),
    "add2": (Add2, (ROW[0], ROW[0] + 1), ()),
    "two_devices": (Add2, (ROW[0], ROW[0] + 1), ()),
}


def exported(graph: str) -> Any:
    make, args, _ = GRAPHS[graph]
    torch.manual_seed(0)
    model = torch.export.export(make().eval(), args, strict=True).module()
    if graph == "two_devices":  # y on another device, as the graph records it
        y = next(n for n in model.graph.nodes if n.op == "placeholder" and n.name == "y")
        y.meta["val"] = torch.empty(2, 4, device="meta")
    return model


def annotate_inputs(model, config, accept):
    """A witness's annotate hook: a linear's input only."""
    for n in model.graph.nodes:
        if n.target == torch.ops.aten.linear.default:
            n.meta[KEY] = QuantizationAnnotation(
                input_qspec_map={n.args[0]: config.input_activation}, _annotated=True
            )
    return True


def weight_only(node, config):
    """A witness's weights function: the weight of a linear, nothing else."""
    return [(node, node.args[1], config.weight)]


def add_to_mul(model):
    """A witness's transform: every add a mul."""
    for n in model.graph.nodes:
        if n.target == torch.ops.aten.add.Tensor:
            n.target = torch.ops.aten.mul.Tensor
    model.recompile()
    return model


def node_input(node, config):
    """A witness's node annotator: the node's first input only."""
    node.meta[KEY] = QuantizationAnnotation({node.args[0]: config.input_activation}, None, True)


def node_output(node, config):
    """A witness's node annotator: the node's output only."""
    node.meta[KEY] = QuantizationAnnotation({}, config.output_activation, True)


HOOKS = {
    "annotate_inputs": annotate_inputs,
    "weight_only": weight_only,
    "add_to_mul": add_to_mul,
    "node_input": node_input,
    "node_output": node_output,
}


# The fields whose values a witness names as a dotted path, kept as written (the runtime
# imports them).
PATH_FIELDS = {"config_type"}
# The fields whose values a witness names as hooks.
HOOK_FIELDS = {
    "skip",
    "annotate",
    "when",
    "weights_only_when",
    "weights",
    "transforms",
    "annotate_node",
}


def value(v: Any, hook: bool = False) -> Any:
    """A witness's value as the runtime holds it: an ATen op, an object by dotted path, a
    hook by name (``hook``: the witnesses' own, then the runtime's built-ins), nested tuples."""
    if isinstance(v, tuple):
        return tuple(value(x, hook) for x in v)
    if not isinstance(v, str):
        return v
    if v.startswith("aten."):
        _, name, overload = v.split(".")
        return getattr(getattr(torch.ops.aten, name), overload)
    if hook:
        return HOOKS[v] if v in HOOKS else getattr(conditions, v)
    if "." in v:
        module, _, name = v.rpartition(".")
        return getattr(importlib.import_module(module), name)
    return v


def values(pairs: Any) -> dict[str, Any]:
    return {k: v if k in PATH_FIELDS else value(v, k in HOOK_FIELDS) for k, v in pairs}


# ------------------------------------------------------------------ what a part did


def _spec(s: Any) -> Any:
    if s is None:
        return None
    if type(s).__name__ == "SharedQuantizationSpec":
        edge = s.edge_or_node
        return ("shared", tuple(n.name for n in edge) if isinstance(edge, tuple) else edge.name)
    return (type(s).__name__, s.dtype, getattr(s, "ch_axis", None), getattr(s, "qscheme", None))


def did(key: t.Key, rules: tuple[Rule, ...], attrs: dict[str, Any], base: Any = None) -> Any:
    """What the witness's base does on its graph with ``rules`` and class attributes ``attrs``:
    each node's annotation, or the error its annotate or validate raises."""
    w = key.witness
    assert w is not None
    model, config = exported(w.graph), CONFIGS[w.config]
    mixins = (ComposableAPI,) if w.api is t.Api.COMPOSABLE else ()
    cls = type("Witnessed", (*mixins, base or BASES[w.base]), {"rules": rules, **attrs})
    try:
        q = cls()
        for method, args in w.calls:
            getattr(q, method)(*value(args), config)
        if not w.calls and w.base is t.Scopes.COMPOSABLE:
            q.set_global_stage(config)
        elif not w.calls:
            q.set_global(config)
        model = q.transform_for_annotation(model)
        q.annotate(model)
        q.validate(model)
    except (ValueError, TypeError, AssertionError) as e:
        return ("raised", type(e).__name__, str(e))
    out = []
    for n in model.graph.nodes:
        qa = n.meta.get(KEY)
        if qa is not None:
            inputs = sorted(
                (str(getattr(a, "name", a)), _spec(s)) for a, s in qa.input_qspec_map.items()
            )
            out.append((n.name, tuple(inputs), _spec(qa.output_qspec), qa._annotated))
    return tuple(out)


def witnessed(key: t.Key, table: str, rule: Any = Rule, base: Any = None) -> tuple[Any, Any]:
    """What the reading part does on the key's witness, without the setting and with it
    (``rule``: the runtime's Rule class; ``base``: the class of the witness's base)."""
    w = key.witness
    assert w is not None
    beside = GRAPHS[w.graph][2]
    plain = rule("witness", **values(w.rule))
    attrs, setting = values(w.quantizer), values(w.setting)
    if table == "pattern":
        set_ = dataclasses.replace(plain, **setting)
        return did(key, (*beside, plain), attrs, base), did(key, (*beside, set_), attrs, base)
    return did(key, (*beside, plain), attrs, base), did(
        key, (*beside, plain), attrs | setting, base
    )


def check(key: t.Key, table: str, rule: Any = Rule, base: Any = None) -> None:
    """Fail unless the row has a witness under a base that reads it, and setting the key
    changes what that base does on it."""
    assert key.witness is not None, f"{key.word}: the row has no witness (a graph and a setting)"
    w = key.witness
    assert w.base in key.bases, f"{key.word}: witnessed under {w.base}, which does not read it"
    lands = set(key.lands) | set(key.attributes)  # a quantizer field's class attributes
    assert {k for k, _ in w.setting} & lands, f"{key.word}: the setting sets no lands"
    plain, set_ = witnessed(key, table, rule, base)
    assert plain != set_, f"{key.word}: setting it changes nothing {w.base.value} does"


def runtime_read(key: t.Key) -> bool:
    """Whether a runtime base reads the quantizer field: it lands in a class attribute of
    data (not a method, not the hooks API)."""
    return any(
        isinstance(getattr(BASES[b], land, None), (str, tuple, list))
        for b in key.bases
        for land in key.lands
    )


ROWS = [("pattern", k) for k in t.PT2E_TABLE] + [
    ("quantizer", k) for k in t.QUANTIZER_TABLE if runtime_read(k)
]


@pytest.mark.parametrize("table, key", ROWS, ids=[f"{a}:{k.word}" for a, k in ROWS])
def test_setting_a_key_changes_what_the_part_that_reads_it_does(table, key):
    check(key, table)


def test_the_recipe_for_a_new_key_without_a_part_that_reads_it_fails():
    """docs/contributing/pt2e-key.md's worked example, ``float_output``, followed literally
    but for the runtime module that reads it (its step 5): the row (with its witness), the
    Rule field, the base's honours; the test above fails for it, and for a row without a
    witness."""
    row = t.Key(
        "float_output",
        "true: the chain's last op gets no output spec; its output stays float",
        t.Kind.FLAG,
        False,
        ("float_output",),
        t.MODULES,
        "the chain's last op gets no output spec",
        witness=t.Witness(t.Scopes.MODULES, "linear", (("float_output", True),), t.LINEAR),
    )
    fields = [("float_output", bool, dataclasses.field(default=False))]
    rule = dataclasses.make_dataclass("Rule", fields, bases=(Rule,), frozen=True)

    class Honouring(SpecQuantizer):
        honours = SpecQuantizer.honours | {"float_output"}

    with pytest.raises(AssertionError, match="float_output: setting it changes nothing"):
        check(row, "pattern", rule, Honouring)
    with pytest.raises(AssertionError, match="float_output: the row has no witness"):
        check(dataclasses.replace(row, witness=None), "pattern", rule, Honouring)


def test_given_selects_the_registry_too():
    """``given:`` means the same under the registry (Qualcomm's backend): the witness of its
    row, on the registry's base, with a node annotator; a string compares with the
    argument's ``str()`` (an enum member's word), a flag as truth."""
    key = next(k for k in t.PT2E_TABLE if k.word == "given")
    assert key.witness is not None
    registry = dataclasses.replace(
        key.witness,
        base=t.Scopes.REGISTRY,
        rule=(("chain", (("aten.linear.default",),)), ("annotate_node", "node_input")),
        calls=(("set_default", ()),),
    )
    check(dataclasses.replace(key, witness=registry), "pattern")

    class Word:
        def __str__(self) -> str:
            return "lpai"

    rule = Rule("r", chain=[[torch.ops.aten.linear.default]], given=(("backend", "lpai"),))
    flag = Rule("f", chain=[[torch.ops.aten.linear.default]], given=(("flag", True),))
    q = type("Witnessed", (RegistryQuantizer,), {"rules": (rule, flag)})()
    assert q.registry == {} and q.select(backend=Word(), flag=1).rules == (rule, flag)
    assert q.select(backend="htp", flag=0).rules == () and q.registry == {}
    assert q.select(backend="lpai").rules == (rule,)
    assert torch.ops.aten.linear.default in q.registry
