"""``classes:`` under hostile input (issue 52): what a class record says is checked at generate
time, with a located error, where the generated module would otherwise fail."""

from __future__ import annotations

import textwrap

import pytest

from generator.diagnostics import SpecError
from generator.semantics import model as m
from generator.semantics.driver import resolve_specs

ALLOW = ("torch", "operator", "tests")
BACKEND = """
    backend b {
        pattern aten.relu.default { dtypes: {input: qint8, output: qint8} }
        pattern (aten.conv2d.default, aten.relu.default) { dtypes: {input: qint8, output: qint8, weight: qint8} }
    }
"""


def composable(classes: str, head: str = "", scopes: str = "composable") -> str:
    return (
        head
        + f"quantizer b {{\n scopes: {scopes}\n fx: false\n classes: [{classes}]\n}}\n"
        + BACKEND
    )


def resolve(tmp_path, text: str) -> tuple[m.Quantizer, ...]:
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(text))
    return resolve_specs(tmp_path, [spec], ALLOW).quantizers


def errors(tmp_path, text: str) -> list[str]:
    """The messages of the spec's errors."""
    with pytest.raises(SpecError) as exc:
        resolve(tmp_path, text)
    return [d.message for d in exc.value.diagnostics]


# ----------------------------------------------------------------- 1, 2: names


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ("{name: class}", "class name 'class' is a Python keyword"),
        ("{name: A, params: {self: 1}}", "parameter 'self' is the instance"),
        ("{name: A, params: {x: 1, x: 2}}", "parameter 'x' is written twice"),
        ('{name: A, params: {"ﬁx": 1, fix: 2}}', "Python reads both as 'fix'"),
        ("{name: A}, {name: A}", "class 'A' is defined twice"),
        ("{name: ComposableSpecQuantizer}", "is a name the generated module binds or reads"),
        ("{name: PatternPair}", "is a name the generated module binds or reads"),
        ("{name: super}", "is a name the generated module binds or reads"),
        ("{name: A, params: {refuse: 1}}", "parameter 'refuse' is a name the generated module"),
        ("{name: A}, {name: B, params: {A: 1}}", "parameter 'A' is named like class 'A'"),
    ],
)
def test_a_name_a_class_record_introduces_is_a_python_name_of_its_own(tmp_path, classes, message):
    first, *_ = errors(tmp_path, composable(classes))
    assert message in first


def test_a_class_named_like_a_module_the_generated_module_imports(tmp_path):
    """The heads of imported modules (here ``tests``, for a mixin) are reserved in order:
    a class of that name before the mixin is refused at the mixin."""
    head = "alias here = tests.runtime.test_runtime_classes\n"
    (message,) = errors(tmp_path, composable("{name: tests}, {name: A, base: here.Front}", head))
    assert "imports the module 'tests' for this, and class 'tests'" in message
    (message,) = errors(tmp_path, composable("{name: A, base: here.Front}, {name: tests}", head))
    assert message.startswith("class name 'tests' is a name the generated module binds")


# ----------------------------------------------------------------- 3: bases Python can order

TRACER = "alias fx = torch.fx\n"


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        (
            "{name: BQuantizer, base: fx.Tracer}, {name: A, base: fx.Tracer}",
            "fx.Tracer is named before BQuantizer",
        ),
        ("{name: A, base: [fx.Tracer, fx.Tracer]}", "class A names base torch.fx.Tracer twice"),
        (
            "{name: A, base: fx.Tracer}, {name: B, base: [fx.Tracer, A]}",
            "fx.Tracer is named before A",
        ),
    ],
)
def test_bases_python_cannot_order_are_an_error(tmp_path, classes, message):
    (first,) = errors(tmp_path, composable(classes, TRACER))
    assert message in first


def test_bases_python_can_order_generate_a_module_that_imports(tmp_path):
    """The check is Python's: bases it orders pass, and the module imports."""
    pytest.importorskip("torchao")
    from tests.live.pt2e_support import generate

    text = composable("{name: A, base: fx.Tracer}, {name: B, base: A}, {name: C, base: B}", TRACER)
    getter = generate(tmp_path, text, ALLOW)
    module = getter.__globals__
    mro = [k.__name__ for k in module["C"].__mro__]
    assert mro[:4] == ["C", "B", "A", "Tracer"] and "BQuantizer" in mro


# ----------------------------------------------------------------- 4: numbers


def test_a_default_is_a_number_by_the_rule_of_every_record(tmp_path):
    """Not finite or too large: the evaluator's error, as under given:; an expression is
    a number as anywhere else."""
    assert errors(tmp_path, composable("{name: A, params: {x: 1e999}}")) == [
        "this number is not finite"
    ]
    assert errors(tmp_path, composable("{name: A, params: {x: -1e999}}")) == [
        "this number is not finite"
    ]
    assert errors(tmp_path, composable("{name: A, params: {x: 10 ** 400}}")) == [
        "10 ** 400 is too large a number"
    ]
    (q,) = resolve(tmp_path, composable("{name: A, params: {x: -1, y: 2 ** -8, z: 1.5}}"))
    assert [(p.name, p.value) for p in q.classes[0].params] == [("x", -1), ("y", 2**-8), ("z", 1.5)]


# ----------------------------------------------------------------- 5: the generated class's name

PAIRS_BACKEND = "alias m = mypkg.cadence\n"


@pytest.mark.parametrize(
    "record",
    [
        "{name: Pair, pair: true}, {function: BQuantizer, pairs: [{pattern: m.P, config: m.c}]}",
        "{name: BQuantizer, pair: true}",
    ],
)
def test_a_pairs_function_or_pair_class_is_not_named_like_the_generated_class(tmp_path, record):
    (message,) = errors(tmp_path, composable(record, PAIRS_BACKEND, scopes="pairs"))
    assert "'BQuantizer' is named like the generated class" in message


# ----------------------------------------------------------------- 6: pair classes and classes of pairs


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("{name: FromPair, base: Pair}", "class FromPair derives from Pair, a pair class"),
        ("{name: PairFromPairs, base: Pairs, pair: true}", "derives from Pairs, a class of pairs"),
    ],
)
def test_a_pair_class_and_a_class_of_pairs_do_not_derive_from_each_other(tmp_path, record, message):
    text = composable("{name: Pair, pair: true}, {name: Pairs}, " + record, PAIRS_BACKEND, "pairs")
    (first,) = errors(tmp_path, text)
    assert message in first


def test_classes_of_one_kind_derive_from_each_other_and_construct(tmp_path):
    pytest.importorskip("torchao")
    from tests.live.pt2e_support import generate

    text = composable(
        "{name: Pair, pair: true}, {name: Pairs}, {name: PairFromPair, base: Pair, pair: true}, "
        "{name: PairsFromPairs, base: Pairs}",
        "",
        "pairs",
    )
    module = generate(tmp_path, text, ALLOW).__globals__
    assert issubclass(module["PairFromPair"], module["Pair"])
    assert isinstance(module["PairsFromPairs"](), module["Pairs"])


# ----------------------------------------------------------------- 7: the getter constructs the generated class


@pytest.mark.parametrize("scopes", ["composable", "pairs"])
def test_the_generated_class_has_no_required_parameter(tmp_path, scopes):
    (message,) = errors(
        tmp_path, composable("{name: BQuantizer, params: {x: required}}", "", scopes)
    )
    assert message.startswith("parameter 'x' of the generated class BQuantizer is required")
    (q,) = resolve(tmp_path, composable("{name: A, params: {x: required}}", "", scopes))
    assert q.classes[0].params[0].required  # another class may require it


# ----------------------------------------------------------------- 10: calls that cannot fit


def test_an_init_hook_takes_what_the_class_passes(tmp_path):
    head = (
        "alias here = tests.runtime.test_runtime_classes\n"  # setup(self, device, config, strict)
    )
    (message,) = errors(tmp_path, composable("{name: A, params: {x: 1}, init: here.setup}", head))
    assert "init 'tests.runtime.test_runtime_classes.setup' does not fit the call" in message
    assert "cannot take 2 arguments" in message
    fits = "{name: A, params: {device: 1, config: none, strict: false}, init: here.setup}"
    assert resolve(tmp_path, composable(fits, head))[0].classes[0].init is not None


@pytest.mark.parametrize(
    "caller",
    ["{name: C, params: {quantizers: f}}", "{name: C, pairs: [f]}"],
)
def test_a_pairs_function_gets_its_required_parameters(tmp_path, caller):
    f = "{name: Pair, pair: true}, {function: f, params: {is_qat: required}}, "
    (message,) = errors(tmp_path, composable(f + caller, "", "pairs"))
    assert message.startswith("pairs function f requires is_qat, which C does not pass")
    fits = caller.replace("{name: C, ", "{name: C, params: {is_qat: false}, ").replace(
        "params: {is_qat: false}, params: {", "params: {is_qat: false, "
    )
    resolve(tmp_path, composable(f + fits, "", "pairs"))


# ----------------------------------------------------------------- 11: a stage's ops


def test_a_stages_ops_are_ops_of_the_rules_as_under_chains(tmp_path):
    stage = "{name: A, stages: [{config: my.C, ops: [aten.relu.default, aten.gelu.default]}]}"
    (message,) = errors(tmp_path, composable(stage))
    assert message.startswith("no rule of this quantizer has aten.gelu.default")
    (q,) = resolve(tmp_path, composable(stage.replace("aten.gelu", "aten.conv2d")))
    assert len(q.classes[0].stages[0].targets) == 2  # conv2d: the chain's first op


# ----------------------------------------------------------------- 14: given: variants and FX

VARIANTS = """
quantizer b {{
    scopes: composable
    {fx}
    classes: [{{name: BQuantizer, params: {{explicit: false}}}}]
}}
backend b {{
    pattern nn.ReLU {{ dtypes: {{input: qint8, output: qint8}}  pt2e: {{given: {{explicit: false}}}} }}
    pattern nn.ReLU {{ dtypes: {{input: quint8, output: quint8}}  pt2e: {{given: {{explicit: true}}}} }}
}}
"""


def test_given_variants_are_refused_where_an_fx_backend_config_would_keep_one(tmp_path):
    (message,) = errors(tmp_path, VARIANTS.format(fx=""))
    assert "variants are PT2E's, and this backend also makes an FX BackendConfig" in message
    (q,) = resolve(tmp_path, VARIANTS.format(fx="fx: false"))
    assert [r.given for r in q.rules] == [(("explicit", False),), (("explicit", True),)]


# ----------------------------------------------------------------- 12: given: and the generated class

GIVEN = """
quantizer b {{
    scopes: composable
    fx: false
    classes: [{{name: {name}, params: {{explicit: false, bits: 8}}}}]
}}
backend b {{
    pattern aten.conv2d.default {{ dtypes: {{input: qint8, output: qint8}}  pt2e: {{given: {{explicit: false}}}} }}
    pattern aten.conv2d.default {{ dtypes: {{input: qint8, output: qint8}}  pt2e: {{given: {{explicit: true, bits: {bits}}}}} }}
}}
"""


def test_given_needs_the_generated_class_whose_table_the_getter_and_compat_use(tmp_path):
    messages = errors(tmp_path, GIVEN.format(name="Other", bits=8))
    assert len(messages) == 2
    assert all("the generated class BQuantizer (what the getter returns" in m for m in messages)
    (q,) = resolve(tmp_path, GIVEN.format(name="BQuantizer", bits=8))
    assert len(q.rules) == 2


def test_a_given_value_is_of_the_kind_of_the_default(tmp_path):
    (message,) = errors(tmp_path, GIVEN.format(name="BQuantizer", bits='"8"'))
    assert message.startswith("given: 'bits' is '8', a string; the parameter of class BQuantizer")


# ----------------------------------------------------------------- 9: pairs anchors that are tensors

PAIRS_INPUTS = """
dtypes s = {{input: qint8, output: qint8}}
quantizer p {{ fx: false  scopes: pairs }}
backend p {{
    pattern aten.clamp.default {{ dtypes: s  pt2e: {{inputs: {inputs}}} }}
}}
"""


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ("[0, 1]", "inputs names argument 1 (min) of aten.clamp.default, which is no tensor"),
        ("5", "inputs names argument 5, and aten.clamp.default takes 3 (0: self, 1: min, 2: max)"),
    ],
)
def test_a_pairs_input_is_a_tensor_argument_of_the_op(tmp_path, inputs, message):
    (first,) = errors(tmp_path, PAIRS_INPUTS.format(inputs=inputs))
    assert first.startswith(message)
    (q,) = resolve(tmp_path, PAIRS_INPUTS.format(inputs="0"))
    assert q.rules


# ----------------------------------------------------------------- the bases configured by set_global


def configure(quantizer):
    """An init hook that configures a quantizer of scopes: modules or operators."""
    from torchao.testing.pt2e._xnnpack_quantizer import (
        get_symmetric_quantization_config,
    )

    quantizer.set_global(get_symmetric_quantization_config())


@pytest.mark.parametrize("scopes", ["modules", "operators"])
def test_under_a_base_configured_by_set_global_the_init_hook_configures_the_getter(
    tmp_path, scopes
):
    """``bcfg import`` writes ``init: hooks.configure`` there: the getter's quantizer needs no
    configuration (issue 48); stages, which those bases have no add_stage for, are an error."""
    pytest.importorskip("torchao")
    from tests.live.pt2e_support import generate

    head = "alias here = tests.semantics.test_classes_hardening\n"

    def spec(classes: str) -> str:  # one-op patterns (operators finds chains by source)
        chain = "pattern (aten.conv2d.default, aten.relu.default)"
        return composable(classes, head, scopes).replace(chain, "pattern aten.conv2d.default")

    quantizer = generate(tmp_path, spec("{name: BQuantizer, init: here.configure}"), ALLOW)()
    assert quantizer.global_config is not None
    (message,) = errors(tmp_path, spec("{name: A, stages: [{config: here.X}]}"))
    assert message.startswith("stages applies to a class of a quantizer with scopes: composable")
