"""``bcfg compare``: two PT2E quantizers, node by node, on the probe zoo and the user's models.

In process (``tools.compare.engine``): the generated XNNPACK quantizer against
torchao's, with no difference; an altered torchao quantizer, with exactly the nodes it
changed; quantizers that raise on one graph, annotate differently twice or hang, each a
report entry while the run goes on. Through the CLI (one child process a run): bad
targets are one line and exit 2, a difference exits 1 with both annotations side by side.
A handful of probes each (non-strict export): seconds, not minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.tools.compare import engine
from generator.tools.compare.load import generated_quantizer, load_models, load_quantizer

REPO = Path(__file__).resolve().parents[2]
PROBES = ["linear", "conv2d->relu", "conv->add", "conv->cat", "linear_rank3", "conv2d->max_pool2d"]

SUBJECTS = """
import os, sys, time
import torch
import torch.nn as nn
from torchao.testing.pt2e._xnnpack_quantizer import (
    XNNPACKQuantizer, get_symmetric_quantization_config,
)

def config():
    return get_symmetric_quantization_config(is_per_channel=True)

def xnnpack():
    return XNNPACKQuantizer().set_global(config())

def altered():
    # Linear per tensor instead of per channel; nothing else changes.
    return xnnpack().set_module_type(nn.Linear, get_symmetric_quantization_config())

def not_a_quantizer():
    return 3

def the_class():
    return XNNPACKQuantizer

def raises():
    raise ValueError("no licence")

def exits():
    sys.exit(3)

def models():
    return {"mlp": (nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval(), (torch.randn(2, 4),))}

def bad_models():
    return [nn.Linear(4, 4)]
"""


@pytest.fixture(scope="module")
def subjects(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    (root / "subjects.py").write_text(SUBJECTS)
    return root


@pytest.fixture(scope="module")
def torchao_xnnpack():
    from torchao.testing.pt2e._xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


def _compare(a, b, probes=PROBES, seconds=30.0):
    return engine.compare(a, b, engine.probe_graphs(probes), (False,), seconds, ("A", "B"))


def test_the_generated_xnnpack_quantizer_annotates_as_torchaos(tmp_path, torchao_xnnpack) -> None:
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    cwd = os.getcwd()
    os.chdir(REPO)  # the project whose specs name the backend
    try:
        generated = generated_quantizer("xnnpack", tmp_path, None)
    finally:
        os.chdir(cwd)
    generated.set_global(get_symmetric_quantization_config(is_per_channel=True))
    result = _compare(torchao_xnnpack, generated)
    assert [g.status for g in result.graphs] == ["same"] * len(PROBES)
    # the probes were annotated: the comparison is not of two empty dumps
    ops = result.ops()
    assert ops["aten.linear.default"][0] >= 2 and ops["aten.conv2d.default"][0] >= 4, ops


def test_config_configures_the_backends_generated_quantizer(
    tmp_path, subjects, monkeypatch, torchao_xnnpack
) -> None:
    """``--config`` (the migration guide's ``bcfg compare subjects:xnn xnnpack --config
    subjects:cfg``): the backend's generated quantizer configured by the function, which
    then annotates as torchao's (it was handed on as compat's ``(quantizer, how)`` pair, and
    every graph failed on the tuple)."""
    monkeypatch.syspath_prepend(str(subjects))
    monkeypatch.chdir(REPO)  # the project whose specs name the backend
    generated = generated_quantizer("xnnpack", tmp_path, "subjects:config")
    assert hasattr(generated, "annotate"), generated
    result = _compare(torchao_xnnpack, generated)
    assert [g.status for g in result.graphs] == ["same"] * len(PROBES)


def test_an_altered_quantizer_differs_at_exactly_the_nodes_it_changed(torchao_xnnpack) -> None:
    import torch.nn as nn
    from torchao.testing.pt2e._xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    altered = (
        XNNPACKQuantizer()
        .set_global(get_symmetric_quantization_config(is_per_channel=True))
        .set_module_type(nn.Linear, get_symmetric_quantization_config())
    )
    result = _compare(torchao_xnnpack, altered)
    differing = {(g.name, d.node) for g in result.differing for d in g.diffs}
    assert differing == {("linear", "linear"), ("linear_rank3", "linear")}
    (d,) = result.differing[0].diffs
    a, b = d.lines()
    assert len(a) == len(b) == 1  # only the weight's spec differs
    assert "per_channel_symmetric axis 0" in a[0] and "per_tensor_symmetric" in b[0]
    assert result.ops()["aten.linear.default"] == (2, 2)


class _Delegate:
    """A quantizer that behaves as ``inner`` except where ``hook(model)`` says otherwise."""

    @staticmethod
    def make(inner, hook):
        from torchao.quantization.pt2e.quantizer import Quantizer

        class Q(Quantizer):
            def transform_for_annotation(self, model):
                return inner.transform_for_annotation(model)

            def annotate(self, model):
                model = inner.annotate(model)
                hook(model)
                return model

            def validate(self, model):
                return inner.validate(model)

        return Q()


def _has(model, name: str) -> bool:
    return any(name in str(n.target) for n in model.graph.nodes)


def test_an_input_mapped_to_no_spec_is_the_same_as_an_input_left_out(torchao_xnnpack) -> None:
    """prepare_pt2e inserts no observer for either, so a quantizer that leaves a float bias
    out of input_qspec_map compares the same as one mapping it to None (Samsung's Enn does the
    first, torchao's XNNPACK the second); a dropped spec that is not None still differs."""
    dropped = []

    def drop(model, keep=lambda spec: spec is not None):
        for n in model.graph.nodes:
            qa = n.meta.get("quantization_annotation")
            if qa is None:
                continue
            gone = [i for i, spec in qa.input_qspec_map.items() if not keep(spec)]
            for i in gone:
                del qa.input_qspec_map[i]
            dropped.extend(gone)

    result = _compare(torchao_xnnpack, _Delegate.make(torchao_xnnpack, drop))
    assert dropped  # the probes have float biases mapped to None
    assert not result.differing
    weights = _Delegate.make(torchao_xnnpack, lambda m: drop(m, lambda s: s is None))
    assert _compare(torchao_xnnpack, weights).differing


def test_a_quantizer_that_fails_on_one_probe_is_reported_and_the_run_goes_on(
    torchao_xnnpack,
) -> None:
    def crash(model):
        if _has(model, "cat"):
            raise RuntimeError("cat is not supported")

    def hang(model):
        if _has(model, "max_pool2d"):
            time.sleep(30)

    calls = []

    def unstable(model):  # the second annotation of the linear probe drops the output spec
        if _has(model, "linear") and not _has(model, "relu"):
            calls.append(1)
            if len(calls) % 2 == 0:
                for n in model.graph.nodes:
                    if "quantization_annotation" in n.meta:
                        n.meta["quantization_annotation"].output_qspec = None

    combined = _Delegate.make(torchao_xnnpack, lambda m: (crash(m), hang(m), unstable(m)))
    start = time.monotonic()
    result = _compare(torchao_xnnpack, combined, seconds=2.0)
    assert time.monotonic() - start < 25
    by = {g.name: g for g in result.graphs}
    assert by["conv->cat"].status == "differ"
    assert by["conv->cat"].reason == "B failed: raised RuntimeError: cat is not supported"
    assert by["conv2d->max_pool2d"].reason == "B failed: ran past the limit of 2 s per graph"
    assert by["linear"].reason == "B annotated this graph differently twice"
    assert by["linear_rank3"].reason == "B annotated this graph differently twice"
    assert by["conv2d->relu"].status == by["conv->add"].status == "same"


def test_load_quantizer_says_what_is_wrong_in_one_line(subjects, monkeypatch) -> None:
    from generator.live.targets import ImportFailure

    monkeypatch.syspath_prepend(str(subjects))
    for target, message in [
        ("subjects:not_a_quantizer", "returned int, not a PT2E quantizer"),
        ("subjects:the_class", "returned the class XNNPACKQuantizer, not a PT2E quantizer"),
        ("subjects:raises", "calling subjects:raises() failed: ValueError: no licence"),
        ("subjects:exits", "it called sys.exit(3)"),
        ("subjects:missing", "subjects has no attribute 'missing'"),
    ]:
        with pytest.raises(ImportFailure) as info:
            load_quantizer(target)
        assert message in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ImportFailure) as info:
        load_models("subjects:bad_models")
    assert "bad_models(): bad_models[0] is Linear, not (model, example_inputs)" in str(info.value)


def _bcfg(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": f"{REPO}{os.pathsep}{cwd}"}
    return subprocess.run(
        [sys.executable, "-m", "generator", "compare", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_command_exits_1_on_a_difference_with_both_sides_in_json(subjects) -> None:
    run = _bcfg(
        subjects,
        "subjects:xnnpack",
        "subjects:altered",
        "--models",
        "subjects:models",
        "--probe",
        "conv2d->relu",
        "--export",
        "non-strict",
        "--format",
        "json",
    )
    assert run.returncode == 1, run.stderr
    data = json.loads(run.stdout)
    assert not data["same"]
    assert {m["name"]: m["status"] for m in data["models"]} == {
        "mlp": "differ",
        "conv2d->relu": "same",
    }
    (graph,) = [g for g in data["graphs"] if g["status"] == "differ"]
    nodes = [(d["node"], d["op"]) for d in graph["differences"]]
    # a module-type config splits linear + relu: relu then shares linear's observer
    assert nodes == [
        ("linear", "aten.linear.default"),
        ("relu", "aten.relu.default"),
        ("linear_1", "aten.linear.default"),
    ]
    relu = graph["differences"][1]
    assert relu["a"]["inputs"] == [] and relu["b"]["output"] == ["shared", ["node", "linear"]]


def test_bad_targets_are_one_line_and_exit_2(subjects) -> None:
    run = _bcfg(subjects, "subjects:raises", "subjects:xnnpack")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (
        "bcfg compare: calling subjects:raises() failed: ValueError: no licence"
    ), run.stderr


def test_torchaos_pattern_traces_are_made_once_a_run(monkeypatch) -> None:
    # QAT annotators re-trace fixed pattern functions at every call (ExecuTorch's XNNPACK:
    # seconds a graph); the probe run hands out one trace's copies (live/probe/traces.py)
    import torch
    from torchao.quantization.pt2e import utils
    from torchao.quantization.pt2e.export_utils import WrapperModule
    from torchao.quantization.pt2e.quantizer import Quantizer

    traces, calls = [], []
    real = utils._get_aten_graph_module_for_pattern

    def counting(*args, **kwargs):
        traces.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(utils, "_get_aten_graph_module_for_pattern", counting)

    def pattern(x):
        return torch.relu(x) * 3.0

    class Tracing(Quantizer):
        def annotate(self, model):
            traced = utils._get_aten_graph_module_for_pattern(
                WrapperModule(pattern), (torch.randn(2),)
            )
            calls.append(traced)
            return model

        def validate(self, model):
            pass

    result = _compare(Tracing(), Tracing(), probes=["linear", "conv2d->relu"])
    assert all(g.a_error is None for g in result.graphs), result.graphs
    assert len(calls) == 8  # two graphs, both sides, each twice
    assert len(traces) <= 1  # traced once (or never: an earlier test of the process did)
    assert len({id(c) for c in calls}) == 8  # each call its own copy


def _bias_qparams(obs):
    """The int32 bias's qparams: the input's scale times the weight's, zero point 0."""
    import torch

    scale = obs[0].calculate_qparams()[0] * obs[1].calculate_qparams()[0]
    return scale, torch.zeros_like(scale, dtype=torch.int64)


def _derived_bias(fn):
    """A hook giving each conv's bias a derived spec of ``fn`` (torchao's XNNPACK keeps it
    float: a vendor's derived bias, as NXP's and Qualcomm's have)."""
    import torch
    from torchao.quantization.pt2e.quantizer import DerivedQuantizationSpec

    def hook(model):
        for n in model.graph.nodes:
            qa = n.meta.get("quantization_annotation")
            if qa is not None and "conv" in str(n.target) and len(n.args) > 2:
                x, w, b = n.args[:3]
                qa.input_qspec_map[b] = DerivedQuantizationSpec(
                    derived_from=[(x, n), (w, n)], derive_qparams_fn=fn, dtype=torch.int32,
                    quant_min=-(2**31) + 1, quant_max=2**31 - 1,
                    qscheme=torch.per_channel_symmetric, ch_axis=0,
                )  # fmt: skip

    return hook


def test_derive_functions_compare_by_what_they_compute_not_by_name(torchao_xnnpack) -> None:
    """A vendor's bias function and a copy of it elsewhere (another module, another name: a
    generated quantizer's, where the vendor's module imports its SDK) compare the same; a
    function that computes otherwise differs, at the conv's bias only, both scales shown."""
    import functools

    copy = functools.partial(lambda obs, unused: _bias_qparams(obs), unused=None)

    def doubled(obs):
        return tuple(t * 2 if t.is_floating_point() else t for t in _bias_qparams(obs))

    a, b, c = (
        _Delegate.make(torchao_xnnpack, _derived_bias(fn)) for fn in (_bias_qparams, copy, doubled)
    )
    same = _compare(a, b, ["conv2d->relu"])
    assert [g.status for g in same.graphs] == ["same"], same
    differ = _compare(a, c, ["conv2d->relu"])
    (d,) = differ.differing[0].diffs
    la, lb = d.lines()
    assert d.node == "conv2d" and len(la) == len(lb) == 1, (la, lb)
    assert "derived from" in la[0] and "giving scale" in la[0] and la[0] != lb[0], (la, lb)


def test_an_observer_bound_to_the_annotated_graph_compares_by_node_not_address() -> None:
    """Qualcomm's cat: ``ConcatObserver.with_args(graph=..., node_name=...)``, the graph each
    annotate's own copy; two annotates compare the same (not unstable), another node differs."""
    import torch
    from torchao.quantization.pt2e import MinMaxObserver
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    from generator.live.probe.annotations import canon_spec

    def spec(node_name: str) -> QuantizationSpec:
        ctr = MinMaxObserver.with_args(graph=torch.fx.Graph(), node_name=node_name)
        return QuantizationSpec(dtype=torch.uint8, observer_or_fake_quant_ctr=ctr)

    assert canon_spec(spec("cat")) == canon_spec(spec("cat")) != canon_spec(spec("cat_1"))
