"""``bcfg compat``'s analysis against torch: verdicts must be what prepare_fx and convert_fx do.

``analyse_model`` runs a real prepare_fx beside the analysis and raises
``Disagreement`` when the nodes it predicts quantized are not the ones torch
observes, so every call below is also an agreement check. The matrix covers
torch's own backends with torch's default mappings, bcfg's generated
backends, and mappings of every kind (None entries, regexes, module names,
orders, enclosing modules, dynamic, float16).
"""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.ao.quantization.backend_config.utils  # noqa: F401
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization import QConfig, QConfigMapping, get_default_qconfig_mapping
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
)
from torch.ao.quantization.observer import (
    FixedQParamsObserver,
    HistogramObserver,
    MinMaxObserver,
    PlaceholderObserver,
)
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

from generator.live.compat import nodes, truth
from generator.live.compat.observers import MappingError, Observers, constraint_failures
from generator.live.compat.patterns import analyse_patterns
from generator.live.compat.truth import analyse_model
from generator.live.compat.verdict import Status
from tests.live.compat_models import (
    MAPPINGS,
    MODELS,
    QINT8,
    default_for,
    qat_default_for,
)
from tests.support import generated_getter, torch_getter

FX_BACKENDS = ["native", "fbgemm", "qnnpack", "x86", "onednn", "executorch", "tensorrt"]


def backend(name: str) -> BackendConfig:
    if name.startswith("bcfg:"):
        return generated_getter(name.removeprefix("bcfg:"))()
    return torch_getter(name)()


def judge(model: str, mapping: QConfigMapping, backend_name: str, is_qat: bool = False):
    m, example = MODELS[model]()
    if is_qat:
        m.train()
    return analyse_model(m, example, mapping, backend(backend_name), is_qat)


def by_node(result):
    return {v.node: v for v in result.verdicts}


# ----------------------------------------------------------- agreement matrix


@pytest.mark.parametrize("backend_name", FX_BACKENDS + ["bcfg:x86", "bcfg:qnnpack"])
def test_torch_default_mappings_on_every_backend_agree_with_prepare_fx(backend_name):
    for model in MODELS:
        result = judge(model, default_for(backend_name.removeprefix("bcfg:")), backend_name)
        if result.error is None:
            assert result.verdicts, model


@pytest.mark.parametrize("mapping", sorted(MAPPINGS))
@pytest.mark.parametrize("backend_name", ["x86", "executorch"])
def test_every_kind_of_mapping_agrees_with_prepare_fx(mapping, backend_name):
    for model in ("conv_bn_relu_linear", "mixed", "outer"):
        judge(model, MAPPINGS[mapping](), backend_name)


@pytest.mark.parametrize("backend_name", ["x86", "qnnpack", "bcfg:x86"])
def test_qat_agrees_with_prepare_qat_fx(backend_name):
    mapping = qat_default_for(backend_name.removeprefix("bcfg:"))
    result = judge("conv_bn_relu_linear", mapping, backend_name, is_qat=True)
    assert by_node(result)["conv"].pattern == "nniqat.ConvBnReLU2d"
    assert by_node(result)["linear"].status is Status.HONOURED


def test_a_disagreement_with_prepare_fx_is_an_error(monkeypatch):
    real = truth.ground_truth

    def lying(*args, **kwargs):
        t = real(*args, **kwargs)
        return truth.Truth(t.observed - {"linear"}, t.error)

    monkeypatch.setattr(truth, "ground_truth", lying)
    with pytest.raises(nodes.Disagreement, match="predicted quantized but not observed.*linear"):
        judge("conv_bn_relu_linear", get_default_qconfig_mapping("x86"), "x86")


def test_a_wrong_support_check_is_caught_against_torchs(monkeypatch):
    monkeypatch.setattr(nodes, "dtype_config_failures", lambda *a: [])
    with pytest.raises(nodes.Disagreement, match="support check disagrees"):
        judge("conv_bn_relu_linear", QConfigMapping().set_global(QINT8), "x86")


# ------------------------------------------------------------ node verdicts


def test_reasons_are_torchs_fields():
    qnnpack = by_node(judge("conv_bn_relu_linear", QConfigMapping().set_global(QINT8), "qnnpack"))
    conv = qnnpack["conv"]
    assert conv.status is Status.REJECTED and conv.pattern == "nni.ConvReLU2d"
    fields = [f.field for f in conv.closest.failures]
    assert fields == ["input scale_min", "output scale_min"]
    assert "eps 2**-23 is below the backend's scale_min 2**-12" in conv.reason
    assert qnnpack["flatten"].status is Status.NO_PATTERN
    x86 = by_node(judge("conv_bn_relu_linear", QConfigMapping().set_global(QINT8), "x86"))
    assert [str(f) for f in x86["linear"].closest.failures] == [
        "input dtype: qint8; the backend wants quint8",
        "output dtype: qint8; the backend wants quint8",
    ]


def test_a_functional_weight_is_checked_a_module_weight_is_not():
    result = by_node(judge("mixed", QConfigMapping().set_global(QINT8), "qnnpack"))
    assert "weight quant_min/quant_max: -128..127 is outside the backend's -127..127" in (
        result["linear"].reason
    )
    assert "weight" not in result["lin"].reason


def test_every_mapping_entry_kind_is_named_as_the_source():
    result = by_node(judge("mixed", MAPPINGS["overrides"](), "x86"))
    assert result["linear"].source == "module_name_object_type_order[('', F.linear, 0)]"
    assert result["lin"].source == "module_name_regex['li.*']"
    assert result["sigmoid"].source == "object_type[torch.sigmoid]"
    assert result["cumsum"].source == "object_type[torch.cumsum]"
    assert result["cumsum"].status is Status.NO_PATTERN
    outer = by_node(judge("outer", MAPPINGS["overrides"](), "x86"))
    assert outer["add"].source == "object_type[tests.live.compat_models.Block]"
    assert outer["block_fc"].source == "global"  # a leaf module is not inside Block's scope
    # object_type(F.relu, None) makes the whole (F.linear, F.relu) match float
    assert outer["relu"].status is Status.SKIPPED and outer["relu"].deliberate
    assert outer["linear"].status is Status.IN_PATTERN
    assert "relu has the QConfig None" in outer["linear"].reason


def test_no_tensor_inputs_and_deliberate_skips_are_not_failures():
    mapping = get_default_qconfig_mapping("x86").set_object_type(nn.Linear, None)
    result = judge("mixed", mapping, "x86")
    nodes_ = by_node(result)
    assert nodes_["size"].status is Status.NOT_A_TENSOR_OP
    assert nodes_["lin"].status is Status.SKIPPED
    assert "object_type[nn.Linear] gives it the QConfig None" == nodes_["lin"].reason
    assert all(v.deliberate for v in result.skipped if v.node in ("size", "lin"))


def test_observed_as_float_is_not_honoured(monkeypatch):
    """torch lists a weight-only embedding with a static QConfig as observed; nothing is quantized.

    The suggestion, as printed, quantizes it through convert_fx.
    """
    import torch.ao.nn.quantized as nnq
    import torch.ao.quantization as tq

    emb = by_node(judge("embedding", get_default_qconfig_mapping("x86"), "x86"))["emb"]
    assert emb.status is Status.REJECTED
    assert "observed_node_names" in emb.notes[0]
    assert "PlaceholderObserver.with_args(dtype=torch.float32)" in emb.suggestion
    space = {"torch": torch, **{k: getattr(tq, k) for k in dir(tq) if not k.startswith("_")}}
    mapping = get_default_qconfig_mapping("x86").set_module_name("emb", eval(emb.suggestion, space))
    m, example = MODELS["embedding"]()
    monkeypatch.setattr(torch.fx.config, "do_not_emit_stack_traces", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(m, mapping, example, backend_config=backend("x86"))
        prepared(*example)
        converted = convert_fx(prepared, backend_config=backend("x86"))
    assert type(converted.emb) is nnq.Embedding


def test_dynamic_lstm_is_honoured_static_is_not():
    static = by_node(judge("lstm", get_default_qconfig_mapping("x86"), "x86"))["lstm"]
    assert static.status is Status.REJECTED and "is_dynamic" in static.reason
    dynamic = by_node(judge("lstm", MAPPINGS["dynamic"](), "x86"))["lstm"]
    assert dynamic.status is Status.HONOURED


def test_kept_float_by_convert_agrees_with_convert_fx(monkeypatch):
    """A quint8 weight passes prepare's check on a module (weights are not graph inputs), not convert's."""
    quint8_weight = QConfig(
        activation=HistogramObserver.with_args(reduce_range=True),
        weight=MinMaxObserver.with_args(dtype=torch.quint8),
    )
    mapping = QConfigMapping().set_global(quint8_weight)
    result = by_node(judge("conv_bn_relu_linear", mapping, "x86"))
    assert result["linear"].status is Status.FLOAT_AT_CONVERT
    assert "weight dtype: quint8; the backend wants qint8" in result["linear"].reason
    m, example = MODELS["conv_bn_relu_linear"]()
    monkeypatch.setattr(torch.fx.config, "do_not_emit_stack_traces", True)  # a faster first trace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(m, mapping, example, backend_config=backend("x86"))
        prepared(*example)
        converted = convert_fx(prepared, backend_config=backend("x86"))
    assert type(converted.linear) is nn.Linear  # torch kept it float, as predicted


def _runs_on_quantized(model: nn.Module, example: tuple, mapping, bc) -> dict[str, bool]:
    """Per node of the model convert_fx makes: whether its first input is a quantized tensor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(
            copy.deepcopy(model), copy.deepcopy(mapping), example, backend_config=bc
        )
        prepared(*example)
        converted = convert_fx(prepared, backend_config=bc)
    seen: dict[str, bool] = {}

    class Recording(torch.fx.Interpreter):
        def run_node(self, n):
            first = n.args[0] if n.args else next(iter(n.kwargs.values()), None)
            values = self.map_nodes_to_values(first, n) if first is not None else None
            values = values if isinstance(values, (list, tuple)) else [values]
            tensors = [v for v in values if isinstance(v, torch.Tensor)]
            seen[n.name] = bool(tensors) and all(t.is_quantized for t in tensors)
            return super().run_node(n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cat of tensors with other qparams: torch warns
        Recording(converted).run(*example)
    return seen


def _linear_only() -> BackendConfig:
    weighted = DTypeConfig(torch.quint8, torch.quint8, torch.qint8, torch.float)
    return BackendConfig("linear_only").set_backend_pattern_config(
        BackendPatternConfig(nn.Linear)
        .add_dtype_config(weighted)
        .set_root_module(nn.Linear)
        .set_reference_quantized_module(torch.ao.nn.quantized.reference.Linear)
    )


@pytest.mark.parametrize("backend_name", ["linear_only", "x86", "qnnpack", "executorch"])
def test_ops_without_a_pattern_run_quantized_exactly_where_convert_fx_runs_them_so(backend_name):
    """Issue 36: an op no pattern matches, between quantized ops, runs on the quantized
    tensor once convert_fx has lowered the model (torch.flatten, nn.ReLU, cat, ...): the
    verdict says so exactly for the nodes whose input is quantized in the converted model."""
    bc = _linear_only() if backend_name == "linear_only" else backend(backend_name)
    counted = {Status.QUANTIZED_AT_CONVERT: 0, Status.NO_PATTERN: 0}
    for model_name in ("between", "conv_bn_relu_linear", "mixed"):
        for mapping in (default_for("x86"), QConfigMapping().set_global(default_qconfig_x86())):
            m, example = MODELS[model_name]()
            result = analyse_model(m, example, mapping, bc)
            if result.error is not None:
                continue
            quantized = _runs_on_quantized(m, example, mapping, bc)
            for v in result.verdicts:
                if v.status in counted:
                    counted[v.status] += 1
                    lowered = v.status is Status.QUANTIZED_AT_CONVERT
                    assert quantized[v.node] == lowered, (model_name, v.node, v.status)
                    assert v.honoured == lowered
    assert all(counted.values()) or backend_name != "linear_only", counted


def test_a_copy_op_between_quantized_ops_is_said_to_run_quantized():
    result = by_node(analyse_model(*MODELS["between"](), default_for("x86"), _linear_only()))
    assert result["flatten"].status is Status.QUANTIZED_AT_CONVERT
    assert result["flatten"].reason == (
        "no pattern config of the backend matches it, but it runs on the quantized output of a: "
        "convert_fx lowers torch.flatten to work on quantized tensors (the scale and zero point "
        "are its input's); convert_to_reference_fx keeps it float, between a dequantize and a "
        "quantize"
    )
    assert result["relu"].status is Status.QUANTIZED_AT_CONVERT
    assert result["cat"].status is Status.QUANTIZED_AT_CONVERT
    assert result["relu"].reason.startswith("no pattern config of the backend matches it, but")
    for name in ("reshape", "reshape_1"):  # one's consumer is the other: float between them
        assert result[name].status is Status.NO_PATTERN
    assert result["flatten_1"].status is Status.NO_PATTERN  # only the model's output reads it


def default_qconfig_x86() -> QConfig:
    return get_default_qconfig_mapping("x86").global_qconfig


def test_a_missing_qat_module_is_reported():
    result = by_node(judge("transposed", qat_default_for("x86"), "x86", is_qat=True))
    assert result["up"].status is Status.NO_QAT_MODULE
    assert result["conv"].status is Status.HONOURED


def test_prepare_errors_are_torchs_own():
    mapping = QConfigMapping().set_global(QINT8).set_object_type(nn.Conv2d, QINT8)
    result = judge("conv_bn_relu_linear", mapping, "x86")
    assert result.error is not None and result.error.startswith("LookupError: ")
    assert result.verdicts == ()


@pytest.mark.parametrize(
    "mapping, backend_name, models",
    [
        (QConfigMapping().set_global(QINT8), "qnnpack", ("mixed",)),
        (QConfigMapping().set_global(QINT8), "x86", ("conv_bn_relu_linear",)),
        (get_default_qconfig_mapping("x86"), "x86", ("embedding", "lstm")),
        (
            QConfigMapping().set_global(QConfig(HistogramObserver, MinMaxObserver)),
            "executorch",
            ("mixed",),
        ),
    ],
)
def test_suggestions_are_python_that_fits(mapping, backend_name, models):
    """Each suggested QConfig, evaluated as printed and set where the rejected one was, is honoured."""
    import torch.ao.quantization as tq

    space = {"torch": torch, **{k: getattr(tq, k) for k in dir(tq) if not k.startswith("_")}}
    for model in models:
        for v in judge(model, mapping, backend_name).verdicts:
            if v.status is not Status.REJECTED:
                continue
            assert v.suggestion is not None, (model, v.node)
            fixed = copy.deepcopy(mapping).set_module_name(
                _module_of(model, v), eval(v.suggestion, space)
            )
            if _module_of(model, v) != "":
                again = by_node(judge(model, fixed, backend_name))[v.node]
                assert again.status in (Status.HONOURED, Status.FLOAT_AT_CONVERT), (model, v)
            else:
                fixed = QConfigMapping().set_global(eval(v.suggestion, space))
                again = by_node(judge(model, fixed, backend_name))[v.node]
                assert again.status is Status.HONOURED, (model, v, again)


def _module_of(model: str, v) -> str:
    """The module a call_module node runs (a module_name entry reaches it), else ''."""
    return v.op.split(" ", 1)[1] if v.op.startswith("call_module") else ""


# ---------------------------------------------------------- pattern verdicts


def test_pattern_verdicts_agree_with_node_verdicts():
    """Without a model, what global and object_type give each pattern decides as on a model."""
    compared = 0
    for backend_name, mapping in [
        ("x86", "default"),
        ("x86", "dynamic"),
        ("qnnpack", "qint8"),
        ("executorch", "symmetric_qnnpack"),
    ]:
        bc = backend(backend_name)
        patterns = analyse_patterns(bc, MAPPINGS[mapping]()).verdicts
        for model in ("conv_bn_relu_linear", "mixed", "embedding", "lstm"):
            for v in judge(model, MAPPINGS[mapping](), backend_name).verdicts:
                if v.config is None or v.status in (Status.IN_PATTERN, Status.NOT_A_TENSOR_OP):
                    continue
                if v.source != "global" and not v.source.startswith("object_type["):
                    continue
                assert patterns[v.config].status is v.status, (backend_name, mapping, v)
                compared += 1
    assert compared > 40


def test_pattern_verdicts_without_a_model():
    result = analyse_patterns(backend("x86"), get_default_qconfig_mapping("x86"))
    by_label = {v.pattern: v for v in result.verdicts}
    assert by_label["nn.Linear"].status is Status.HONOURED
    assert by_label["(nn.Conv2d, nn.ReLU)"].status is Status.FUSED
    assert "fused into nni.ConvReLU2d" in by_label["(nn.Conv2d, nn.ReLU)"].reason
    assert by_label['"size"'].status is Status.NOT_A_TENSOR_OP
    lstm = by_label["nn.LSTM"]
    assert lstm.status is Status.REJECTED and lstm.closest.index == 0
    assert "is_dynamic=True" in lstm.suggestion
    assert not result.error and len(result.verdicts) == len(backend("x86").configs)


def test_pattern_verdicts_for_qat_fusion_errors_and_overrides():
    qat = {
        v.pattern: v
        for v in analyse_patterns(backend("x86"), qat_default_for("x86"), True).verdicts
    }
    assert qat["nn.Linear"].status is Status.SWAPPED
    assert "nnqat.Linear" in qat["nn.Linear"].reason
    assert qat["nn.ConvTranspose2d"].status is Status.NO_QAT_MODULE
    assert qat["(nn.Conv2d, nn.BatchNorm2d, nn.ReLU)"].reason.startswith(
        "fused into nni.ConvBnReLU2d, then nniqat.ConvBnReLU2d for QAT"
    )
    mapping = QConfigMapping().set_global(QINT8).set_object_type(nn.Conv2d, QINT8)
    mapping.set_module_name("head", None)
    ptq = {v.pattern: v for v in analyse_patterns(backend("x86"), mapping).verdicts}
    assert ptq["(nn.Conv2d, nn.ReLU)"].status is Status.FAILS
    assert "LookupError" in ptq["(nn.Conv2d, nn.ReLU)"].reason
    assert "module_name['head']" in ptq["nn.Linear"].overrides
    assert ptq["nn.Conv2d"].source == "object_type[nn.Conv2d]"


def test_a_pattern_without_dtype_configs_and_a_none_qconfig():
    bc = BackendConfig("b").set_backend_pattern_configs(
        [BackendPatternConfig(nn.ReLU), BackendPatternConfig(nn.Tanh).set_dtype_configs([])]
    )
    mapping = QConfigMapping().set_global(QINT8).set_object_type(nn.Tanh, None)
    relu, tanh = analyse_patterns(bc, mapping).verdicts
    assert relu.status is Status.NO_DTYPE_CONFIGS and not relu.deliberate
    assert tanh.status is Status.SKIPPED and tanh.deliberate


def test_fixed_qparams_are_explained_and_fixed():
    fixed = DTypeWithConstraints(
        dtype=torch.quint8,
        quant_min_lower_bound=0,
        quant_max_upper_bound=255,
        scale_exact_match=1.0 / 256.0,
        zero_point_exact_match=0,
    )
    dc = DTypeConfig(input_dtype=fixed, output_dtype=fixed)
    bc = BackendConfig("b").set_backend_pattern_config(
        BackendPatternConfig(torch.sigmoid).set_dtype_configs([dc])
    )
    wrong = FixedQParamsObserver.with_args(scale=2.0 / 256.0, zero_point=128, dtype=torch.quint8)
    for qconfig, message in [
        (
            QConfig(HistogramObserver, MinMaxObserver),
            "HistogramObserver is not a FixedQParamsObserver",
        ),
        (
            QConfig(wrong, MinMaxObserver),
            "scale=2**-7, zero_point=128; the backend fixes scale=2**-8, zero_point=0",
        ),
    ]:
        (v,) = analyse_patterns(bc, QConfigMapping().set_global(qconfig)).verdicts
        assert v.status is Status.REJECTED and message in v.reason
        assert "FixedQParamsObserver.with_args(scale=2**-8, zero_point=0" in v.suggestion


def test_a_broken_observer_is_a_mapping_error():
    def broken():
        raise ValueError("no such observer")

    mapping = QConfigMapping().set_global(QConfig(activation=broken, weight=MinMaxObserver))
    with pytest.raises(MappingError, match="ValueError: no such observer"):
        analyse_patterns(backend("x86"), mapping)


# ------------------------------------------------- the checks against torch's


def test_constraint_failures_agree_with_torch_on_a_grid():
    """Every observer against every constraint: no failure exactly when torch accepts."""
    from torch.ao.quantization.fx.utils import _qconfig_satisfies_dtype_config_constraints

    observers = [
        HistogramObserver.with_args(dtype=torch.qint8),
        HistogramObserver.with_args(dtype=torch.qint8, eps=2**-12),
        HistogramObserver.with_args(dtype=torch.qint8, eps=1e-4),  # rounds in float32
        MinMaxObserver.with_args(dtype=torch.qint8, quant_min=-127, quant_max=127),
        MinMaxObserver.with_args(dtype=torch.quint8, reduce_range=True),
        PlaceholderObserver.with_args(dtype=torch.qint8),
        FixedQParamsObserver.with_args(scale=2**-8, zero_point=0, dtype=torch.quint8),
    ]
    constraints = [
        DTypeWithConstraints(dtype=torch.qint8, scale_min_lower_bound=2**-12),
        DTypeWithConstraints(dtype=torch.qint8, scale_min_lower_bound=1e-4),
        DTypeWithConstraints(
            dtype=torch.qint8, quant_min_lower_bound=-127, quant_max_upper_bound=127
        ),
        DTypeWithConstraints(
            dtype=torch.quint8, quant_min_lower_bound=0, quant_max_upper_bound=127
        ),
        DTypeWithConstraints(dtype=torch.quint8, scale_exact_match=2**-8, zero_point_exact_match=0),
        DTypeWithConstraints(dtype=torch.quint8, scale_exact_match=2**-7, zero_point_exact_match=0),
    ]
    seen = set()
    for ctr in observers:
        qconfig = QConfig(activation=ctr, weight=MinMaxObserver)
        for dwc in constraints:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = _qconfig_satisfies_dtype_config_constraints(qconfig, dwc)
            got = not constraint_failures(qconfig, dwc, "input", Observers())
            assert got == want, (ctr, dwc)
            seen.add(want)
    assert seen == {True, False}


def test_torch_functions_are_what_the_models_use():
    """Guard the model zoo: F.linear on a Parameter stays a functional call with a weight input."""
    from torch.fx import symbolic_trace

    graph = symbolic_trace(MODELS["outer"]()[0]).graph
    assert any(n.target is F.linear for n in graph.nodes)
