"""``bcfg import`` of a PT2E quantizer, by probing: a vendor-style quantizer
(``pt2e_subjects/acme_npu.py``: op by op, shape checks, shared observers, derived bias,
int16 fixed-qparams outputs) on a few probes (non-strict), through the CLI.

The spec, its hooks module and the proof report are written beside each other; the
spec says the conditions the quantizer checks, found by generate-and-test; the proof
compares the generated quantizer with the original. The whole zoo, both export modes
and production quantizers are test_import_pt2e_full.py's (slow).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUBJECTS = Path(__file__).resolve().parent / "pt2e_subjects"
PROBES = [
    "conv2d->relu", "conv2d_depthwise", "conv2d_grouped", "conv2d_no_bias", "add", "add_broadcast_channel",
    "add_scalar", "conv->add->relu", "conv2d->max_pool2d", "conv2d->view", "conv->cat",
    "sigmoid", "linear->tanh", "linear", "view", "cat", "conv2d->hardtanh",
]  # fmt: skip

HOSTILE = """
from acme_npu import AcmeNPUQuantizer

class Flaky(AcmeNPUQuantizer):
    def annotate(self, model):
        if any("sigmoid" in str(n.target) for n in model.graph.nodes):
            raise RuntimeError("no lookup table today")
        return super().annotate(model)

def flaky():
    return Flaky()

def nothing():
    from torchao.quantization.pt2e.quantizer import Quantizer
    class Lazy(Quantizer):
        def annotate(self, model):
            return model
        def validate(self, model):
            pass
    return Lazy()
"""


def bcfg_import(cwd: Path, *args: str, probes: list[str] = PROBES) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(SUBJECTS), str(cwd)]),
    }
    extra = [a for p in probes for a in ("--probe", p)]
    return subprocess.run(
        [sys.executable, "-m", "generator", "import", *args, *extra, "--export", "non-strict"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("acme")
    (root / "pyproject.toml").write_text('[tool.bcfg]\nspecs = "."\nallow = ["acme_hooks"]\n')
    return root, bcfg_import(root, "acme_npu:get_quantizer", "-o", "acme.bcfg")


def test_the_import_writes_a_spec_its_hooks_and_a_proof(imported) -> None:
    root, run = imported
    assert run.returncode == 0, run.stderr
    assert "wrote acme.bcfg: backend acme_npu" in run.stderr
    assert "wrote acme_hooks.py: the spec's hooks" in run.stderr
    assert (
        "proved: the generated quantizer annotates as acme_npu:get_quantizer() on all 25 graphs"
        in run.stderr
    ), run.stderr
    spec = (root / "acme.bcfg").read_text()
    hooks = (root / "acme_hooks.py").read_text()
    proof = (root / "acme.proof.txt").read_text()
    # the conditions the vendor checks, found among the candidates
    assert "when_conv2d_default: aten.conv2d.default is quantized where not_depthwise" in spec
    assert "when_add_Tensor: aten.add.Tensor is quantized where same_shape" in spec
    # int16 fixed qparams of the lookup tables, in the language
    assert "int16 {quant_min: -32768, quant_max: 32767, scale: 2 ** -15, zero_point: 0}" in spec
    assert "pattern (aten.conv2d.default, aten.relu.default)" in spec
    # the derived bias by the vendor's own function
    assert "derive_qparams_fn=_acme_npu.derive_bias_qparams" in hooks
    assert "'aten.cat.default': (('act', 'edge0', 'edge0'), True" in hooks
    assert "0 differ" in proof and "same" in proof.splitlines()[-1]


def test_the_imported_spec_generates_a_class_under_the_vendors_name(imported) -> None:
    root, _ = imported
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(SUBJECTS), str(root)])}
    gen = subprocess.run(
        [sys.executable, "-m", "generator", "generate"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
    )
    assert gen.returncode == 0, gen.stderr
    code = (
        "from generated.acme_npu_quantizer import AcmeNPUQuantizer, get_acme_npu_quantizer\n"
        "print(type(get_acme_npu_quantizer()).__name__, AcmeNPUQuantizer.__mro__[1].__name__)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env
    )
    assert run.stdout.split() == ["AcmeNpuQuantizer", "AcmeNpuQuantizer"], run.stderr


def test_a_quantizer_that_fails_on_a_probe_is_reported_and_the_import_goes_on(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    (tmp_path / "hostile.py").write_text(HOSTILE)
    run = bcfg_import(tmp_path, "hostile:flaky", "-o", "flaky.bcfg", "--no-verify",
                      probes=["sigmoid", "conv2d->relu"])  # fmt: skip
    assert run.returncode == 1, run.stderr  # the hooks module is not on the allow-list
    assert "warning: sigmoid (non-strict): raised RuntimeError: no lookup table today" in run.stderr
    assert (
        "before bcfg generate accepts the spec: extend [tool.bcfg] allow with flaky_hooks"
        in run.stderr
    )
    assert (
        "pattern (aten.conv2d.default, aten.relu.default)" in (tmp_path / "flaky.bcfg").read_text()
    )
    assert not (tmp_path / "flaky.proof.txt").exists()  # --no-verify


@pytest.mark.parametrize(
    "args, message",
    [
        (["hostile:flaky"], "a PT2E quantizer: its import writes a spec, a hooks module and a proof report: name the spec with -o NAME.bcfg"),
        (["hostile:nothing", "-o", "x.bcfg"], "returned a quantizer that annotated nothing on 2 probe graphs"),
        # a --probe the zoo has not was an internal error (a KeyError in the worker)
        (["hostile:flaky", "-o", "x.bcfg", "--probe", "nosuch"], "no probe named nosuch (--probe: a graph of the probe zoo)"),
    ],
)  # fmt: skip
def test_bad_targets_are_one_line_and_write_nothing(tmp_path, args, message) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    (tmp_path / "hostile.py").write_text(HOSTILE)
    run = bcfg_import(tmp_path, *args, probes=["sigmoid", "conv2d->relu"])
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and message in run.stderr, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.py", "pyproject.toml"]


def test_the_hooks_module_imports_with_conditions_on_shared_ops() -> None:
    """A shared op with a condition (cat found by source partitions: strict exports only)
    names its condition before the condition is defined: the module must still import."""
    from generator.tools.importer.pt2e_spec import Interpretation, Share, Writer

    interp = Interpretation(
        [],
        [],
        [],
        [],
        [Share("aten.cat.default", ("act", "edge0", "edge0"), True, None, ["has_source"])],
    )
    text = Writer("x", "x_hooks", "pkg:get", "XQuantizer").hooks_text(interp)
    namespace: dict = {}
    exec(compile(text, "x_hooks.py", "exec"), namespace)  # noqa: S102
    name = namespace["SHARED"]["aten.cat.default"][3]
    assert callable(namespace[name])


IO = """
from torchao.quantization.pt2e.quantizer import QuantizationAnnotation
from acme_npu import ACT, AcmeNPUQuantizer

KEY = "quantization_annotation"


def _float(node):
    val = node.meta.get("val")
    return getattr(val, "dtype", None) is not None and val.dtype.is_floating_point


class EdgeNPU(AcmeNPUQuantizer):
    \"\"\"Acme's, with the model's float inputs and outputs quantized as well.\"\"\"

    def annotate(self, model):
        model = super().annotate(model)
        for node in model.graph.nodes:
            if node.op == "placeholder" and _float(node):
                node.meta[KEY] = QuantizationAnnotation(output_qspec=ACT, _annotated=True)
            elif node.op == "output":
                floats = [a for a in node.all_input_nodes if _float(a)]
                if floats:
                    node.meta[KEY] = QuantizationAnnotation(
                        input_qspec_map=dict.fromkeys(floats, ACT), _annotated=True
                    )
        return model


def edge():
    return EdgeNPU()
"""


def test_the_models_inputs_and_output_are_observed_and_reproduced(tmp_path) -> None:
    # ExecuTorch's Cortex-M quantizes the model's inputs and output: the import read call
    # nodes only, and its spec differed on every graph
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["edge_hooks"]\n')
    (tmp_path / "edge.py").write_text(IO)
    run = bcfg_import(tmp_path, "edge:edge", "-o", "edge.bcfg")
    assert run.returncode == 0, run.stderr
    assert "proved: the generated quantizer annotates as edge:edge() on all" in run.stderr
    spec = (tmp_path / "edge.bcfg").read_text()
    assert "init: hooks.model_io," in spec
    assert "model_io: the model's inputs and output get CONFIG_" in spec
    hooks = (tmp_path / "edge_hooks.py").read_text()
    assert "finder=_ModelIO('placeholder', True)" in hooks
    assert "finder=_ModelIO('output', True)" in hooks
    # it annotates the inputs after its shared ops: a view of an input stays float
    assert "IO_AFTER = True" in hooks


X86 = """
def get_quantizer():
    from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer,
        get_default_x86_inductor_quantization_config,
    )

    q = X86InductorQuantizer()
    q.set_global(get_default_x86_inductor_quantization_config())
    return q
"""


def test_the_composition_is_chosen_by_generate_and_test(tmp_path) -> None:
    # torchao's X86 Inductor flags a pattern's output (_is_output_of_quantized_pattern), which
    # the composable scheme does not: scopes: operators (its outputs observed by their
    # consumers) does, and wins
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    (tmp_path / "x86_subject.py").write_text(X86)
    probes = ["conv2d->relu", "conv2d->max_pool2d", "linear", "linear->tanh", "conv2d->view"]
    probes += ["conv->add", "conv->add_->relu"]  # other: quantized; an in-place add has none
    run = bcfg_import(
        tmp_path, "x86_subject:get_quantizer", "-o", "x.bcfg", "--format", "json", probes=probes
    )
    assert run.returncode in (0, 1), run.stderr
    report = json.loads((tmp_path / "x.proof.json").read_text())
    tried = {c["scopes"]: c["result"] for c in report["compositions"]}
    # modules is tried too while operators leaves a graph differing (a random model's)
    assert list(tried)[:3] == ["composable", "composable (clusters)", "operators"]
    # the shared ops as the composable scheme's own clusters: a spec that generates
    assert tried["composable (clusters)"][0].isdigit(), tried
    counts = {c: int(r.split()[0]) for c, r in tried.items() if r[0].isdigit()}
    assert counts["composable"] > counts["operators"]
    assert min(counts.values()) == counts["operators"]
    assert report["composition"] == "operators"
    assert sum(g["status"] == "differ" for g in report["graphs"]) == counts["operators"]
    probes = {g["name"]: g["status"] for g in report["graphs"] if g["kind"] == "probe"}
    assert probes["conv->add"] == "same" and probes["conv->add_->relu"] == "same"
    spec = (tmp_path / "x.bcfg").read_text()
    # scopes: operators reads no outputs: (writing it there is an error)
    assert "    scopes: operators\n" in spec and "outputs:" not in spec
    assert "by generate-and-test: composable:" in spec
    assert "def configure(quantizer):" in (tmp_path / "x_hooks.py").read_text()
    # the getter's quantizer is configured by its constructor (the proof takes it as it is)
    assert "init: hooks.configure}" in spec


def test_a_chain_under_operators_is_written_by_its_source_elements() -> None:
    from generator.tools.importer.pt2e_spec import _source_element

    assert _source_element("aten.conv2d.default") == "torch.nn.Conv2d"
    assert _source_element("aten.add.Tensor") == "operator.add"
    assert _source_element("aten.no_such_op.default") is None


def test_chains_one_source_element_stands_for_are_written_once_under_operators() -> None:
    # add.Tensor and add_.Tensor are both operator.add: the spec named one pattern twice and
    # did not generate (the X86 import, conv -> add -> relu and conv -> add_ -> relu)
    from generator.tools.importer.pt2e_spec import Config, Interpretation, Pattern, Writer

    config = Config("CONFIG_0", (), {})
    chains = [
        ("aten.conv2d.default", add, "aten.relu.default")
        for add in ("aten.add.Tensor", "aten.add_.Tensor")
    ]
    interp = Interpretation([Pattern(c, "chain", config) for c in chains], [config], [], [])
    spec = Writer("x", "x_hooks", "pkg:get", "XQuantizer").spec_text(interp, [], "operators")
    assert spec.count("pattern (torch.nn.Conv2d, operator.add, torch.nn.ReLU) {") == 1
    # a chain whose elements repeat is left out: torch's source partitions raise on it (the
    # X86 spec's (Linear, add, ReLU, add) made its class raise on every graph)
    ops = ("aten.linear.default", "aten.add.Tensor", "aten.relu.default", "aten.add.Tensor")
    interp = Interpretation([Pattern(ops, "chain", config)], [config], [], [])
    writer = Writer("x", "x_hooks", "pkg:get", "XQuantizer")
    assert "operator.add, torch.nn.ReLU, operator.add" not in writer.spec_text(
        interp, [], "operators"
    )
    assert "source partitions find a chain of distinct elements only" in writer.problems[0]


def test_an_op_a_pattern_cannot_name_is_a_note_not_a_spec_that_does_not_generate() -> None:
    # ExecuTorch's Arm quantizer shares getitem's observer: no pattern can name it (a spec
    # naming _operator.getitem did not generate)
    from generator.tools.importer.pt2e_observe import Match, Observations
    from generator.tools.importer.pt2e_spec import interpret

    obs = Observations(
        [Match(("_operator.getitem",), "shared", None, "g", form=("node0", None, "node0"))]
    )
    interp = interpret(obs)
    assert interp.shares == [] and interp.patterns == []
    assert interp.notes == [
        "_operator.getitem: annotated on 1 probe nodes, not reproduced: a pattern names ATen ops only"
    ]


def test_every_condition_written_into_the_hooks_runs_on_a_node() -> None:
    # the conditions are written as functions beside the prelude's helpers: a condition named
    # like a helper (channels_last) once replaced it and called itself on node.args[0] until
    # IndexError (the imported Cortex-M class raised on every conv2d)
    from types import SimpleNamespace

    import torch

    from generator.live.probe.zoo import _x, export_model
    from generator.tools.importer.pt2e_spec import (
        CONDITIONS,
        Config,
        Interpretation,
        Pattern,
        Writer,
    )

    gm = export_model(torch.nn.Conv2d(3, 3, 1), (_x(1, 3, 4, 4, channels_last=True),), False)
    conv = next(n for n in gm.graph.nodes if n.op == "call_function")
    results = {}
    for check in CONDITIONS:
        pattern = Pattern(("aten.conv2d.default",), "chain", Config("C", (), {}), when=[check])
        interp = Interpretation([pattern], [], [], [])
        text = Writer("x", "x_hooks", "pkg:get", "XQuantizer").hooks_text(interp)
        namespace: dict = {}
        exec(compile(text, "x_hooks.py", "exec"), namespace)  # noqa: S102
        results[check] = namespace[pattern.when_name](SimpleNamespace(node=conv))
    assert results["channels_last"] and not results["not_channels_last"]
    assert results["rank4"] and results["has_bias"] and not results["rank2"]
    assert results["unit_alpha"] and not results["last_dim"]  # a conv's args[1] is its weight


def test_composable_clusters_share_the_targets_no_pattern_names() -> None:
    # ExecuTorch's composable quantizers share getitem's observer: under composable (clusters)
    # the hooks' SharedTargets gives it to the clusters (Cortex-M's chunk and split differed)
    import operator

    from generator.tools.importer.pt2e_spec import CLUSTERS, Interpretation, Share, Writer

    share = Share("aten.view.default", ("node0", None, "node0"), False)
    interp = Interpretation([], [], [], [], [share])
    interp.shared_targets = {"_operator.getitem": operator.getitem}
    writer = Writer("x", "x_hooks", "pkg:get", "XQuantizer")
    assert "base: hooks.SharedTargets," in writer.spec_text(interp, [], CLUSTERS)
    namespace: dict = {}
    exec(
        compile(writer.hooks_text(interp, CLUSTERS), "x_hooks.py", "exec"), namespace
    )  # noqa: S102
    assert namespace["SharedTargets"].shared_targets == (operator.getitem,)


def test_an_op_left_float_by_no_known_condition_takes_the_closest() -> None:
    # torchao's inductor quantizers leave a conv float where its weight is a model input
    # (weight_param) and one call of a conv module called twice (no node's own property):
    # the spec annotated every conv, the weight-input probes too
    from generator.tools.importer.pt2e_spec import _closest, _separate

    checks = {"positive": lambda n: n > 0, "not_five": lambda n: n != 5, "odd": lambda n: n % 2}
    pos, neg = [1, 3, 7], [5, -1, -3, 9]
    assert _separate(checks, pos, neg) == ["?"]
    assert _closest(checks, pos, neg) == (["positive"], [5, 9])
    assert _closest({"odd": checks["odd"]}, pos, [9]) == (["?"], [9])


def test_a_node_of_no_tensor_output_whose_users_share_its_edge_is_a_shared_op() -> None:
    # ExecuTorch's composable clusters give chunk its input's spec and each getitem the edge
    # into chunk: chunk, its output a list, was read as a chain of its own, and the imported
    # clusters never reached the getitems (Cortex-M's chunk and split differed)
    import torch
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation, SharedQuantizationSpec

    from generator.live.probe.zoo import export_model
    from generator.tools.importer.pt2e_observe import KEY, read_matches
    from tests.tools.pt2e_subjects.acme_npu import ACT

    class Chunk(torch.nn.Module):
        def forward(self, x):
            a, b = torch.chunk(x, 2)
            return a, b

    gm = export_model(Chunk(), (torch.randn(4, 3),), False)
    x, chunk = [n for n in gm.graph.nodes if n.op in ("placeholder", "call_function")][:2]
    chunk.meta[KEY] = QuantizationAnnotation({x: ACT}, None, _annotated=True)
    for user in chunk.users:
        shared = SharedQuantizationSpec((x, chunk))
        user.meta[KEY] = QuantizationAnnotation({}, shared, _annotated=True)
    matches, _ = read_matches(gm, "chunk")
    assert [(m.ops[0], m.kind) for m in matches][0] == ("aten.chunk.default", "shared")


# a closure's subject: conv (biased or not) and linear, each derived bias made per op
CLOSURE_PROBES = ["conv2d->relu", "linear", "conv2d_no_bias"]


def test_a_bias_derived_by_a_closure_is_written_as_the_form_it_computes(tmp_path) -> None:
    # ExecuTorch Arm's bias is derived by a local closure (get_bias_qspec.<locals>): the import
    # wrote no function for it, and every biased conv and linear differed (TOSA: 294 of 422)
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["closure_hooks"]\n')
    run = bcfg_import(
        tmp_path, "closure_bias:get_quantizer", "-o", "closure.bcfg", probes=CLOSURE_PROBES
    )
    assert run.returncode == 0, run.stderr
    assert "proved: the generated quantizer annotates as closure_bias:get_quantizer()" in run.stderr
    assert "no importable dotted path" not in run.stderr
    hooks = (tmp_path / "closure_hooks.py").read_text()
    assert "derive_qparams_fn=derive_scale_product_zero_int32," in hooks
    assert "def derive_scale_product_zero_int32(observers):" in hooks
    spec = (tmp_path / "closure.bcfg").read_text()
    assert "derive_scale_product_zero_int32: the derived bias of CONFIG_0: closure_bias." in spec
    assert "bias_spec.<locals>._derive_qparams_fn has no dotted path" in spec


def test_a_closure_computing_another_bias_is_not_taken_for_the_standard_form(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["doubled_hooks"]\n')
    run = bcfg_import(
        tmp_path,
        "closure_bias:get_doubling_quantizer",
        "-o",
        "doubled.bcfg",
        "--format",
        "json",
        probes=CLOSURE_PROBES,
    )
    assert run.returncode == 1, run.stderr
    assert (
        "(first on probe linear (non-strict)) is computed by closure_bias."
        "ClosureBiasQuantizer.bias_spec.<locals>._derive_qparams_fn, which has no importable "
        "dotted path and computes none of the forms a spec can say" in run.stderr
    ), run.stderr
    assert "derive_scale_product" not in (tmp_path / "doubled_hooks.py").read_text()
    report = json.loads((tmp_path / "doubled.proof.json").read_text())
    probes = {g["name"]: g["status"] for g in report["graphs"] if g["kind"] == "probe"}
    assert probes == {"conv2d->relu": "differ", "linear": "differ", "conv2d_no_bias": "same"}


def test_a_derive_function_is_identified_by_what_it_computes() -> None:
    import copy
    import dataclasses

    import torch

    from generator.live.probe.derive import FORMS, identify
    from generator.live.probe.zoo import export_model
    from tests.tools.pt2e_subjects import closure_bias

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3), torch.nn.Conv2d(5, 4, 1))
    gm = export_model(model, (torch.randn(1, 3, 8, 8),), False)

    def biases(quantizer):  # each conv's derived bias spec
        annotated = quantizer.annotate(copy.deepcopy(gm))
        convs = [n for n in annotated.graph.nodes if n.target == torch.ops.aten.conv2d.default]
        return [c.meta["quantization_annotation"].input_qspec_map[c.args[2]] for c in convs]

    standard = biases(closure_bias.get_quantizer())
    assert identify(standard) is FORMS[0]
    assert identify(biases(closure_bias.get_doubling_quantizer())) is None

    def int64_zero(observers):  # NXP's get_bias_qparams: its zero point int64
        scale = observers[0].calculate_qparams()[0] * observers[1].calculate_qparams()[0]
        return scale, torch.zeros_like(scale, dtype=torch.int64)

    form = identify([dataclasses.replace(s, derive_qparams_fn=int64_zero) for s in standard])
    assert form is not None and form.name == "derive_scale_product_zero_int64"

    def per_shape(observers):  # the standard product on 5 channels only: not the standard
        scale = observers[0].calculate_qparams()[0] * observers[1].calculate_qparams()[0]
        scale = scale if scale.numel() == 5 else scale * 2
        return scale.float(), torch.zeros_like(scale, dtype=torch.int32)

    odd = [dataclasses.replace(s, derive_qparams_fn=per_shape) for s in standard]
    assert identify(odd[:1]) is FORMS[0]  # one probe's shape cannot tell
    assert identify(odd) is None  # every derived bias observed is tried


def test_the_on_demand_runs_figures_name_the_composition_kept(tmp_path) -> None:
    # the run's figures said composition null under -- --format json (they read proof.txt
    # only) and "composable" for "composable (clusters)"
    from tests.tools.pt2e_subjects.run import figures

    stdout = "not proved: 16 of 98 graphs differ; each is in x.proof.json"
    (tmp_path / "x.proof.json").write_text('{"composition": "composable (clusters)"}')
    got = figures(tmp_path, "x", stdout, 413.2, 1)
    assert (got["graphs_same"], got["graphs"], got["seconds"]) == (82, 98, 413)
    assert got["composition"] == "composable (clusters)"
    (tmp_path / "x.proof.json").unlink()
    (tmp_path / "x.proof.txt").write_text(
        "scopes: composable: 2 of 9\nkept: scopes: composable (clusters)\n"
    )
    assert figures(tmp_path, "x", stdout, 1, 1)["composition"] == "composable (clusters)"


def test_an_observer_argument_python_cannot_spell_leaves_valid_hooks_and_a_problem() -> None:
    """Qualcomm's ConcatObserver takes the annotated graph: its repr in the hooks was a
    SyntaxError, and the import ended in an internal error. Now the hooks pass None and the
    import names it; a non-finite float is spelled so that it reads back."""
    import ast
    import math

    import torch

    from generator.tools.importer.pt2e_spec import Writer

    writer = Writer("npu", "npu_hooks", "m:f", "NPUQuantizer")
    imports: set[str] = set()
    graph = writer.value(torch.fx.Graph(), imports)
    ast.parse(graph, mode="eval")
    assert graph == "None"
    assert writer.problems and "Graph" in writer.problems[0]
    for v in (math.inf, -math.inf):
        assert eval(writer.value(v, imports)) == v
    assert math.isnan(eval(writer.value(math.nan, imports)))
