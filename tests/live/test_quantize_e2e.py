"""End-to-end check: the generated backend configs quantize real models exactly
like torch's built-in ones.

For every backend, small deterministic models are quantized with FX graph mode
quantization twice -- once with ``generated.<name>.get_<name>_backend_config()``
and once with torch's own getter -- and the two results must agree exactly:
prepared graph, converted graph and code, module tree (types and extra_repr,
which carries scales / zero points), state_dict (including packed quantized
weights) and outputs on fixed inputs (``torch.equal``).

Each case also asserts that quantization actually happened (quantized or
reference-quantized modules, quantize ops in the graph), so a test cannot pass
just because neither config matched anything.
"""

from __future__ import annotations

import importlib
import operator

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.ao.quantization import (
    MinMaxObserver,
    PerChannelMinMaxObserver,
    QConfig,
    QConfigMapping,
    default_dynamic_qconfig,
    float16_dynamic_qconfig,
    float_qparams_weight_only_qconfig,
    get_default_qat_qconfig_mapping,
    get_default_qconfig,
    get_default_qconfig_mapping,
)
from torch.ao.quantization.backend_config import (
    get_executorch_backend_config,
    get_fbgemm_backend_config,
    get_native_backend_config,
    get_onednn_backend_config,
    get_qnnpack_backend_config,
    get_tensorrt_backend_config,
)
from torch.ao.quantization.backend_config._qnnpack_pt2e import (
    get_qnnpack_pt2e_backend_config,
)
from torch.ao.quantization.backend_config.x86 import get_x86_backend_config
from torch.ao.quantization.qconfig_mapping import (
    _get_symmetric_qnnpack_qat_qconfig_mapping,
    _get_symmetric_qnnpack_qconfig_mapping,
)

# Importing quantize_fx also imports torch.ao.quantization.backend_config.utils,
# which torch's own getters need but do not import themselves.
from torch.ao.quantization.quantize_fx import (
    convert_fx,
    convert_to_reference_fx,
    prepare_fx,
    prepare_qat_fx,
)

# torch.ao.quantization's FX entry points are deprecated and warn on every call;
# some default qconfigs warn about the CPU (e.g. oneDNN without VNNI).
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore:.*torch.ao.quantization is deprecated"),
    pytest.mark.filterwarnings("ignore:Default qconfig of oneDNN"),
    pytest.mark.filterwarnings("ignore:Please use quant_min and quant_max"),
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor, torch.quantize_per"),
    pytest.mark.filterwarnings("ignore:To copy construct from a tensor"),
    pytest.mark.filterwarnings("ignore:.*must run observer before calling"),
]

TORCH_GETTERS = {
    "native": get_native_backend_config,
    "fbgemm": get_fbgemm_backend_config,
    "qnnpack": get_qnnpack_backend_config,
    "x86": get_x86_backend_config,
    "onednn": get_onednn_backend_config,
    "executorch": get_executorch_backend_config,
    "tensorrt": get_tensorrt_backend_config,
    "qnnpack_pt2e": get_qnnpack_pt2e_backend_config,
}

# Backends whose convert step lowers to quantized kernels, with the engine that
# runs them.  The others are lowered with convert_to_reference_fx.
ENGINES = {
    "fbgemm": "fbgemm",
    "qnnpack": "qnnpack",
    "x86": "x86",
    "onednn": "onednn",
}
REFERENCE_BACKENDS = {"native", "executorch", "tensorrt", "qnnpack_pt2e"}


def generated_getter(name):
    module = importlib.import_module(f"generated.{name}")
    return getattr(module, f"get_{name}_backend_config")


# ---------------------------------------------------------------------------
# QConfigMappings
# ---------------------------------------------------------------------------


def _tensorrt_qconfig_mapping():
    # TensorRT only accepts qint8 activations and weights (symmetric).  The
    # weight observer differs from the activation one on purpose, so a config
    # that loses `input_type_to_index` (e.g. addmm's weight slot) or the
    # weight dtype changes the result.
    qconfig = QConfig(
        activation=MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
        weight=PerChannelMinMaxObserver.with_args(
            dtype=torch.qint8, qscheme=torch.per_channel_symmetric
        ),
    )
    return QConfigMapping().set_global(qconfig)


def _onednn_qconfig_mapping():
    # The default mapping gives nn.Tanh a fixed-qparams qconfig and nn.Linear
    # none (global only), which makes onednn's (Linear, Tanh) -> LinearTanh
    # fusion fail in torch itself ("LookupError: During fusion, we need to
    # specify the same qconfigs for all module types in <class '...LinearTanh'>
    # offending type: <class '...Tanh'>").  Give every module type that takes
    # part in a fusion the same qconfig, so fusion sees one qconfig per fused
    # module; torch.sigmoid etc. keep their fixed-qparams qconfigs.
    qconfig = get_default_qconfig("onednn")
    mapping = get_default_qconfig_mapping("onednn")
    fusable = (nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.Linear, nn.Tanh, nn.LeakyReLU)
    for module_type in fusable:
        mapping.set_object_type(module_type, qconfig)
    return mapping


STATIC_QCONFIG_MAPPINGS = {
    "fbgemm": lambda: get_default_qconfig_mapping("fbgemm"),
    "qnnpack": lambda: get_default_qconfig_mapping("qnnpack"),
    "x86": lambda: get_default_qconfig_mapping("x86"),
    "onednn": lambda: _onednn_qconfig_mapping(),
    # qint8 symmetric with scale/range constraints: exercises DTypeWithConstraints
    "qnnpack_symmetric": _get_symmetric_qnnpack_qconfig_mapping,
    "tensorrt": _tensorrt_qconfig_mapping,
}


# ---------------------------------------------------------------------------
# Models (deterministic: built under a fixed seed, BN stats randomized so that
# conv-bn folding is not a no-op)
# ---------------------------------------------------------------------------


def _randomize_bn(bn):
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)


class ConvBnReluNet(nn.Module):
    """conv-bn-relu, conv-bn + add + relu, mul by a scalar, maxpool / adaptive
    avgpool (share qparams), cat, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)
        _randomize_bn(self.bn1)
        _randomize_bn(self.bn2)

    def forward(self, x):
        y = self.relu1(self.bn1(self.conv1(x)))
        z = self.bn2(self.conv2(y)) + y
        z = self.relu2(z) * 0.5  # mul with one tensor arg: shares qparams
        z = torch.cat([self.pool(z), F.adaptive_avg_pool2d(z, 4)], dim=1)
        z = torch.flatten(z, 1)
        return self.fc(z)


class LinearNet(nn.Module):
    """linear-relu, functional linear-relu, linear-tanh, linear-leaky_relu,
    layer_norm, addmm, sigmoid (fixed qparams), reshape (method pattern)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.w = nn.Parameter(torch.randn(32, 32) * 0.2)
        self.b = nn.Parameter(torch.randn(32) * 0.1)
        self.fc2 = nn.Linear(32, 32)
        self.tanh = nn.Tanh()
        self.fc3 = nn.Linear(32, 24)
        self.lrelu = nn.LeakyReLU(0.1)
        self.ln = nn.LayerNorm(24)
        self.mm_w = nn.Parameter(torch.randn(24, 16) * 0.2)
        self.mm_b = nn.Parameter(torch.randn(16) * 0.1)
        self.fc4 = nn.Linear(16, 8)

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = F.relu(F.linear(x, self.w, self.b))
        x = self.tanh(self.fc2(x))
        x = self.lrelu(self.fc3(x))
        x = self.ln(x)
        x = torch.addmm(self.mm_b, x, self.mm_w)
        x = torch.sigmoid(self.fc4(x))
        return x.reshape(-1, 2, 4)


class SeqNet(nn.Module):
    """Embedding (weight-only) -> LSTM (dynamic int8) -> Linear (dynamic fp16)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, tokens):
        x = self.emb(tokens)
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class AtenNet(nn.Module):
    """Calls aten overloads directly, so FX symbolic tracing records them as
    call_function nodes and qnnpack_pt2e's aten-level patterns can match:
    convolution+relu, add.Tensor+relu, (getitem, max_pool2d_with_indices, 0)
    and addmm with a transposed weight (input_type_to_index)."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(4, 3, 3, 3) * 0.3)
        self.b1 = nn.Parameter(torch.randn(4) * 0.1)
        self.w2 = nn.Parameter(torch.randn(4, 4, 1, 1) * 0.3)
        self.b2 = nn.Parameter(torch.randn(4) * 0.1)
        self.fw = nn.Parameter(torch.randn(5, 4 * 4 * 4) * 0.2)
        self.fb = nn.Parameter(torch.randn(5) * 0.1)

    def forward(self, x):
        aten = torch.ops.aten
        y = aten.convolution.default(x, self.w1, self.b1, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        y = aten.relu.default(y)
        z = aten.convolution.default(y, self.w2, self.b2, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
        y = aten.relu.default(aten.add.Tensor(z, y))
        y = aten.add.Tensor(y, 0.25)  # one tensor arg
        y = operator.getitem(aten.max_pool2d_with_indices.default(y, [2, 2], [2, 2]), 0)
        y = aten.view.default(y, [y.shape[0], -1])
        return aten.addmm.default(self.fb, y, aten.t.default(self.fw))


def _inputs(shape, n=3, seed=1234):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) for _ in range(n)]


def _token_inputs(n=3, seed=1234):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 20, (2, 5), generator=g) for _ in range(n)]


MODELS = {
    # name: (factory, inputs: calibration inputs + held-out evaluation input)
    "conv_bn_relu": (ConvBnReluNet, lambda: _inputs((2, 3, 8, 8))),
    "linear": (LinearNet, lambda: _inputs((4, 16))),
    "lstm": (SeqNet, _token_inputs),
    "aten": (AtenNet, lambda: _inputs((2, 3, 8, 8))),
}


def _build(model_name, train=False):
    factory, _ = MODELS[model_name]
    torch.manual_seed(0)
    model = factory()
    return model.train() if train else model.eval()


# ---------------------------------------------------------------------------
# Quantization flow and comparison helpers
# ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _quantized_engine_and_threads():
    # Tests switch the quantized engine per backend; restore it afterwards.
    # One intra-op thread: the models are tiny, and this keeps the runtime
    # stable on a busy 2-core machine.
    saved_engine = torch.backends.quantized.engine
    saved_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved_threads)
    torch.backends.quantized.engine = saved_engine


def _quantize(backend, getter, model_name, qconfig_mapping_fn, *, qat=False, reference=None):
    """Run prepare -> calibrate -> convert with the config `getter()` builds.

    `reference` selects convert_to_reference_fx (default: only for the backends
    without quantized kernels).  Returns (prepared code and module summary
    before calibration, converted module, inputs).
    """
    if reference is None:
        reference = backend in REFERENCE_BACKENDS
    if backend in ENGINES:
        torch.backends.quantized.engine = ENGINES[backend]
    backend_config = getter()
    model = _build(model_name, train=qat)
    inputs = MODELS[model_name][1]()
    example_inputs = (inputs[0],)
    prepare = prepare_qat_fx if qat else prepare_fx
    prepared = prepare(model, qconfig_mapping_fn(), example_inputs, backend_config=backend_config)
    prepared_summary = (prepared.code, _module_summary(prepared))
    with torch.no_grad():
        for x in inputs[:-1]:
            prepared(x)
    prepared.eval()
    convert = convert_to_reference_fx if reference else convert_fx
    converted = convert(prepared, backend_config=backend_config)
    return prepared_summary, converted, inputs


def _assert_same_value(a, b, where):
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.is_quantized:
            assert a.qscheme() == b.qscheme(), where
            if a.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
                assert a.q_scale() == b.q_scale(), where
                assert a.q_zero_point() == b.q_zero_point(), where
            else:
                assert torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales())
                assert torch.equal(a.q_per_channel_zero_points(), b.q_per_channel_zero_points())
                assert a.q_per_channel_axis() == b.q_per_channel_axis(), where
            assert torch.equal(a.int_repr(), b.int_repr()), where
        else:
            assert torch.equal(a, b), where
    elif isinstance(a, torch.ScriptObject):
        # packed quantized weights (LinearPackedParamsBase, Conv2dPackedParams,
        # CellParamsBase): compare their serialized state, which unpacks them
        _assert_same_value(a.__getstate__(), b.__getstate__(), f"{where}.state")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_value(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _assert_same_value(a[k], b[k], f"{where}[{k!r}]")
    else:
        assert a == b, where


def _type_name(m):
    # GraphModule instances get a fresh per-instance class; compare by name.
    t = type(m)
    return f"{t.__module__}.{t.__qualname__}"


def _module_summary(gm):
    return [(name, _type_name(m), m.extra_repr()) for name, m in gm.named_modules()]


def _assert_identical(gen, ref):
    """`gen` and `ref` are (prepared summary, converted, inputs) triples."""
    gen_prepared, gen_conv, inputs = gen
    ref_prepared, ref_conv, _ = ref
    assert gen_prepared == ref_prepared, "prepared graphs differ"
    assert str(gen_conv.graph) == str(ref_conv.graph), "converted graphs differ"
    assert gen_conv.code == ref_conv.code, "converted code differs"
    assert _module_summary(gen_conv) == _module_summary(ref_conv)
    _assert_same_value(gen_conv.state_dict(), ref_conv.state_dict(), "state_dict")
    with torch.no_grad():
        for i, x in enumerate(inputs):
            _assert_same_value(gen_conv(x), ref_conv(x), f"output on input {i}")


def _module_types(gm):
    return {type(m) for _, m in gm.named_modules()}


def _has_module_from(gm, prefix):
    return any(t.__module__.startswith(prefix) for t in _module_types(gm))


def _run_both(backend, model_name, qconfig_mapping_fn, **kwargs):
    """Quantize with the generated config and with torch's; assert identical."""
    gen = _quantize(backend, generated_getter(backend), model_name, qconfig_mapping_fn, **kwargs)
    ref = _quantize(backend, TORCH_GETTERS[backend], model_name, qconfig_mapping_fn, **kwargs)
    _assert_identical(gen, ref)
    return ref[1]


def _assert_statically_quantized(converted, reference):
    code = converted.code
    assert "quantize_per_tensor" in code, code
    if reference:
        assert "dequantize" in code, code
        assert _has_module_from(converted, "torch.ao.nn.quantized.reference"), _module_types(
            converted
        )
    else:
        assert _has_module_from(converted, "torch.ao.nn.quantized.modules") or (
            _has_module_from(converted, "torch.ao.nn.intrinsic.quantized")
        ), _module_types(converted)


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

# (backend, qconfig mapping, lowering) for static post-training quantization.
# "qnnpack_symmetric" is lowered to reference modules: this CPU wheel's QNNPACK
# conv kernel rejects qint8 activations ("quantized::conv(qnnpack): Expected
# activation data type QUInt8 but got QInt8").
STATIC_CASES = [
    ("native", "fbgemm", "reference"),
    ("fbgemm", "fbgemm", "kernels"),
    ("qnnpack", "qnnpack", "kernels"),
    ("qnnpack", "qnnpack_symmetric", "reference"),
    ("x86", "x86", "kernels"),
    ("onednn", "onednn", "kernels"),
    ("executorch", "qnnpack", "reference"),
    ("executorch", "qnnpack_symmetric", "reference"),
    ("tensorrt", "tensorrt", "reference"),
]


@pytest.mark.parametrize("model_name", ["conv_bn_relu", "linear"])
@pytest.mark.parametrize(
    "backend,qconfig,lowering", STATIC_CASES, ids=["-".join(c) for c in STATIC_CASES]
)
def test_static_ptq_identical(backend, qconfig, lowering, model_name):
    reference = lowering == "reference"
    converted = _run_both(
        backend, model_name, STATIC_QCONFIG_MAPPINGS[qconfig], reference=reference
    )
    _assert_statically_quantized(converted, reference)


def test_onednn_fuses_conv_bn_add_relu():
    # onednn's complex-format patterns (add, (bn, conv), MatchAllNode) under a
    # relu, with their fuser / root-node / extra-inputs getters.
    converted = _run_both("onednn", "conv_bn_relu", STATIC_QCONFIG_MAPPINGS["onednn"])
    types = {t.__name__ for t in _module_types(converted)}
    assert "ConvAddReLU2d" in types, types


def test_onednn_fuses_linear_eltwise():
    converted = _run_both("onednn", "linear", STATIC_QCONFIG_MAPPINGS["onednn"])
    types = {t.__name__ for t in _module_types(converted)}
    assert {"LinearReLU", "LinearTanh", "LinearLeakyReLU"} <= types, types


# Dynamic quantization: LSTM int8 dynamic, Linear dynamic (fp16 where the
# engine has an fp16 kernel; QNNPACK lacks one: "quantized::linear_prepack_fp16
# is currently not supported by QNNPACK"; onednn has no fp16 dtype config),
# Embedding weight-only.
DYNAMIC_CASES = [
    ("native", float16_dynamic_qconfig),
    ("fbgemm", float16_dynamic_qconfig),
    ("qnnpack", default_dynamic_qconfig),
    ("x86", float16_dynamic_qconfig),
    ("onednn", default_dynamic_qconfig),
]


@pytest.mark.parametrize("backend,linear_qconfig", DYNAMIC_CASES, ids=[b for b, _ in DYNAMIC_CASES])
def test_dynamic_lstm_identical(backend, linear_qconfig):
    def mapping():
        return (
            QConfigMapping()
            .set_object_type(nn.LSTM, default_dynamic_qconfig)
            .set_object_type(nn.Linear, linear_qconfig)
            .set_object_type(nn.Embedding, float_qparams_weight_only_qconfig)
        )

    converted = _run_both(backend, "lstm", mapping)
    prefix = (
        "torch.ao.nn.quantized.reference"
        if backend in REFERENCE_BACKENDS
        else "torch.ao.nn.quantized.dynamic"
    )
    for name in ("lstm", "fc"):
        mod = converted.get_submodule(name)
        assert type(mod).__module__.startswith(prefix), (name, type(mod))
    emb = converted.get_submodule("emb")
    if backend == "onednn":
        # onednn's embedding dtype config is weight-only qint8, which
        # float_qparams_weight_only_qconfig (quint8) does not match
        assert type(emb) is nn.Embedding, type(emb)
    else:
        assert type(emb).__module__.startswith("torch.ao.nn.quantized"), type(emb)
        assert type(emb).__name__ == "Embedding", type(emb)


def test_dynamic_linear_executorch_identical():
    # executorch has no RNN configs; it quantizes linear dynamically and
    # embeddings weight-only.
    def mapping():
        return (
            QConfigMapping()
            .set_object_type(nn.LSTM, default_dynamic_qconfig)
            .set_object_type(nn.Linear, default_dynamic_qconfig)
            .set_object_type(nn.Embedding, float_qparams_weight_only_qconfig)
        )

    converted = _run_both("executorch", "lstm", mapping)
    assert type(converted.get_submodule("lstm")) is nn.LSTM
    for name in ("fc", "emb"):
        mod = converted.get_submodule(name)
        assert type(mod).__module__.startswith("torch.ao.nn.quantized.reference"), (
            name,
            type(mod),
        )


# (backend, QAT qconfig mapping, lowering)
QAT_CASES = [
    ("x86", lambda: get_default_qat_qconfig_mapping("x86"), "kernels"),
    ("qnnpack", lambda: get_default_qat_qconfig_mapping("qnnpack"), "kernels"),
    ("qnnpack", _get_symmetric_qnnpack_qat_qconfig_mapping, "reference"),
]


@pytest.mark.parametrize(
    "backend,qconfig_mapping_fn,lowering",
    QAT_CASES,
    ids=["x86", "qnnpack", "qnnpack_symmetric"],
)
def test_qat_conv_bn_relu_identical(backend, qconfig_mapping_fn, lowering):
    # Calibration runs in train mode: fake-quant observers and BN statistics
    # are updated before converting.
    reference = lowering == "reference"
    converted = _run_both(
        backend, "conv_bn_relu", qconfig_mapping_fn, qat=True, reference=reference
    )
    _assert_statically_quantized(converted, reference)
    types = {t.__name__ for t in _module_types(converted)}
    assert "ConvReLU2d" in types, types


def test_qat_prepared_modules_are_qat_modules():
    # prepare_qat_fx swaps in the QAT modules named by qat_module / fused_module
    # (compared between configs by test_qat_conv_bn_relu_identical); make sure
    # that swap really happens so that comparison is not vacuous.
    torch.backends.quantized.engine = "x86"
    prepared = prepare_qat_fx(
        _build("conv_bn_relu", train=True),
        get_default_qat_qconfig_mapping("x86"),
        (MODELS["conv_bn_relu"][1]()[0],),
        backend_config=generated_getter("x86")(),
    )
    types = {_type_name(m) for _, m in prepared.named_modules()}
    assert "torch.ao.nn.intrinsic.qat.modules.conv_fused.ConvBnReLU2d" in types, types
    assert "torch.ao.nn.qat.modules.linear.Linear" in types, types


# qnnpack_pt2e's patterns are aten overloads.  Ordinary FX symbolic tracing of
# nn.Modules never produces aten ops, so real models go through it unquantized
# (still checked below); AtenNet calls aten overloads directly so the patterns
# do match in FX.  The full contents of the config (every pattern, getter and
# dtype) are covered by the config-equivalence tests.


def test_qnnpack_pt2e_aten_model_identical():
    converted = _run_both("qnnpack_pt2e", "aten", lambda: get_default_qconfig_mapping("qnnpack"))
    code = converted.code
    # conv+relu, conv, add+relu, maxpool (share qparams), addmm are quantized
    assert code.count("torch.quantize_per_tensor(") >= 8, code
    # conv weights (index 1) and addmm's transposed weight (index 2) are
    # observed as qint8 via input_type_to_index; biases stay float
    assert code.count("torch.qint8") == 3, code


@pytest.mark.parametrize("model_name", ["conv_bn_relu", "linear"])
def test_qnnpack_pt2e_module_models_identical(model_name):
    _run_both("qnnpack_pt2e", model_name, lambda: get_default_qconfig_mapping("qnnpack"))
