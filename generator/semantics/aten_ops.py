"""The one table of what ``torch.export`` turns modules, functions and Tensor methods into.

A PT2E quantizer matches patterns on the exported ATen graph, so each pattern
element a spec names for FX (``nn.Conv2d``, ``F.relu``, ``"view"``) is
mapped, through ``MAPPING``, to the ATen overloads ``torch.export.export(...)``
emits for it on torch 2.13, in strict and non-strict mode alike (checked by
``tests/live/test_aten_table.py``, which exports every entry). An entry is a
chain: one tuple of overloads per op, in forward order; a fused module
(``nni.ConvReLU2d``) exports as a chain of two or three.

Data only, by dotted path (ATen overloads as ``torch.ops.aten.<op>.<overload>``
paths): the resolver looks the paths up through its facts table, so a name is
matched by the object it names, whichever path the spec uses. A key that the
installed torch does not have is ignored.
"""

from __future__ import annotations

A = "torch.ops.aten."

# Overloads torch.export emits, reused below.
_CONV = {n: (f"{A}conv{n}d.default", f"{A}conv{n}d.padding") for n in (1, 2, 3)}
_CONV_T = {
    1: (f"{A}conv_transpose1d.default",),
    2: (f"{A}conv_transpose2d.input",),
    3: (f"{A}conv_transpose3d.input",),
}
_LINEAR = (f"{A}linear.default",)
_BN = (f"{A}batch_norm.default",)
_RELU = (f"{A}relu.default", f"{A}relu_.default")
_HARDTANH = (f"{A}hardtanh.default", f"{A}hardtanh_.default")


def _one(*ops: str) -> tuple[tuple[str, ...], ...]:
    return (tuple(A + op for op in ops),)


def _dims(template: str, ops: str) -> dict[str, tuple[tuple[str, ...], ...]]:
    """One entry per dimension: ``template`` and ``ops`` hold ``{n}``."""
    return {template.format(n=n): _one(*(o.format(n=n) for o in ops.split())) for n in (1, 2, 3)}


MAPPING: dict[str, tuple[tuple[str, ...], ...]] = {
    # convolution, linear, normalization
    **{f"torch.nn.Conv{n}d": (_CONV[n],) for n in (1, 2, 3)},
    **{f"torch.nn.functional.conv{n}d": (_CONV[n],) for n in (1, 2, 3)},
    **{f"torch.nn.ConvTranspose{n}d": (_CONV_T[n],) for n in (1, 2, 3)},
    **{f"torch.nn.functional.conv_transpose{n}d": (_CONV_T[n],) for n in (1, 2, 3)},
    "torch.nn.Linear": (_LINEAR,),
    "torch.nn.functional.linear": (_LINEAR,),
    **{f"torch.nn.BatchNorm{n}d": (_BN,) for n in (1, 2, 3)},
    "torch.nn.functional.batch_norm": (_BN,),
    "torch.nn.LayerNorm": _one("layer_norm.default"),
    "torch.nn.functional.layer_norm": _one("layer_norm.default"),
    "torch.nn.GroupNorm": _one("group_norm.default"),
    "torch.nn.Embedding": _one("embedding.default"),
    "torch.nn.functional.embedding": _one("embedding.default"),
    # activations
    "torch.nn.ReLU": (_RELU,),
    "torch.nn.functional.relu": (_RELU,),
    "torch.relu": _one("relu.default"),
    "torch.nn.functional.relu_": _one("relu_.default"),
    "torch.relu_": _one("relu_.default"),
    "relu": _one("relu.default"),
    "relu_": _one("relu_.default"),
    "torch.nn.ReLU6": (_HARDTANH,),
    "torch.nn.Hardtanh": (_HARDTANH,),
    "torch.nn.functional.hardtanh": (_HARDTANH,),
    "torch.nn.functional.hardtanh_": _one("hardtanh_.default"),
    "torch.nn.functional.relu6": _one("relu6.default"),
    "torch.nn.Hardswish": _one("hardswish.default", "hardswish_.default"),
    "torch.nn.functional.hardswish": _one("hardswish.default", "hardswish_.default"),
    "torch.nn.Hardsigmoid": _one("hardsigmoid.default", "hardsigmoid_.default"),
    "torch.nn.functional.hardsigmoid": _one("hardsigmoid.default", "hardsigmoid_.default"),
    "torch.nn.Sigmoid": _one("sigmoid.default"),
    "torch.sigmoid": _one("sigmoid.default"),
    "torch.nn.functional.sigmoid": _one("sigmoid.default"),
    "sigmoid": _one("sigmoid.default"),
    "sigmoid_": _one("sigmoid_.default"),
    "torch.nn.Tanh": _one("tanh.default"),
    "torch.tanh": _one("tanh.default"),
    "torch.nn.functional.tanh": _one("tanh.default"),
    "tanh": _one("tanh.default"),
    "tanh_": _one("tanh_.default"),
    "torch.nn.SiLU": _one("silu.default", "silu_.default"),
    "torch.nn.functional.silu": _one("silu.default", "silu_.default"),
    "torch.nn.GELU": _one("gelu.default"),
    "torch.nn.functional.gelu": _one("gelu.default"),
    "torch.nn.LeakyReLU": _one("leaky_relu.default", "leaky_relu_.default"),
    "torch.nn.functional.leaky_relu": _one("leaky_relu.default", "leaky_relu_.default"),
    "torch.nn.ELU": _one("elu.default", "elu_.default"),
    "torch.nn.functional.elu": _one("elu.default", "elu_.default"),
    "torch.nn.Softmax": _one("softmax.int"),
    "torch.nn.functional.softmax": _one("softmax.int"),
    "torch.nn.PReLU": _one("prelu.default"),
    "torch.clamp": _one("clamp.default"),
    "clamp": _one("clamp.default"),
    # arithmetic
    "torch.add": _one("add.Tensor"),
    "operator.add": _one("add.Tensor"),
    "operator.iadd": _one("add_.Tensor"),
    "add": _one("add.Tensor"),
    "add_": _one("add_.Tensor"),
    "torch.mul": _one("mul.Tensor"),
    "operator.mul": _one("mul.Tensor"),
    "operator.imul": _one("mul_.Tensor"),
    "mul": _one("mul.Tensor"),
    "mul_": _one("mul_.Tensor"),
    "torch.matmul": _one("matmul.default"),
    "operator.matmul": _one("matmul.default"),
    "matmul": _one("matmul.default"),
    "torch.bmm": _one("bmm.default"),
    "torch.cat": _one("cat.default"),
    "torch.concat": _one("concat.default"),
    "torch.stack": _one("stack.default"),
    # pooling and reductions
    **_dims("torch.nn.MaxPool{n}d", "max_pool{n}d.default"),
    **_dims("torch.nn.functional.max_pool{n}d", "max_pool{n}d.default"),
    **_dims("torch.nn.AvgPool{n}d", "avg_pool{n}d.default"),
    **_dims("torch.nn.functional.avg_pool{n}d", "avg_pool{n}d.default"),
    **_dims("torch.nn.AdaptiveAvgPool{n}d", "adaptive_avg_pool{n}d.default"),
    **_dims("torch.nn.functional.adaptive_avg_pool{n}d", "adaptive_avg_pool{n}d.default"),
    "torch.mean": _one("mean.default", "mean.dim"),
    "mean": _one("mean.default", "mean.dim"),
    # shapes and views
    "torch.flatten": _one("flatten.using_ints"),
    "torch.nn.Flatten": _one("flatten.using_ints"),
    "flatten": _one("flatten.using_ints"),
    "view": _one("view.default"),
    "torch.reshape": _one("reshape.default"),
    "reshape": _one("reshape.default"),
    "torch.permute": _one("permute.default"),
    "permute": _one("permute.default"),
    "torch.transpose": _one("transpose.int"),
    "transpose": _one("transpose.int"),
    "torch.squeeze": _one("squeeze.default", "squeeze.dim", "squeeze.dims"),
    "squeeze": _one("squeeze.default", "squeeze.dim", "squeeze.dims"),
    "torch.unsqueeze": _one("unsqueeze.default"),
    "unsqueeze": _one("unsqueeze.default"),
    "torch.chunk": _one("chunk.default"),
    "chunk": _one("chunk.default"),
    "torch.nn.Dropout": _one("dropout.default"),
    "torch.nn.functional.dropout": _one("dropout.default"),
    # fused modules (torch.ao.nn.intrinsic) export as the chain they fuse
    **{f"torch.ao.nn.intrinsic.ConvReLU{n}d": (_CONV[n], _RELU) for n in (1, 2, 3)},
    **{f"torch.ao.nn.intrinsic.ConvBn{n}d": (_CONV[n], _BN) for n in (1, 2, 3)},
    **{f"torch.ao.nn.intrinsic.ConvBnReLU{n}d": (_CONV[n], _BN, _RELU) for n in (1, 2, 3)},
    "torch.ao.nn.intrinsic.LinearReLU": (_LINEAR, _RELU),
    "torch.ao.nn.intrinsic.BNReLU2d": (_BN, _RELU),
    "torch.ao.nn.intrinsic.BNReLU3d": (_BN, _RELU),
}

# Where an op takes its weight and bias, when it is the first op of a pattern
# that does not say (``input_index``): (weight, bias) positions.
WEIGHT_BIAS: dict[str, tuple[int, int | None]] = {
    **{op: (1, 2) for n in (1, 2, 3) for op in _CONV[n] + _CONV_T[n]},
    _LINEAR[0]: (1, 2),
    _BN[0]: (1, 2),
    f"{A}layer_norm.default": (2, 3),
    f"{A}group_norm.default": (2, 3),
    f"{A}embedding.default": (0, None),
    f"{A}prelu.default": (1, None),
}

# The rank of the weight each op of ``WEIGHT_BIAS`` takes at its weight position, where
# it is fixed: a ``weight_axis`` must be below it.
WEIGHT_RANK: dict[str, int] = {
    **{op: n + 2 for n in (1, 2, 3) for op in _CONV[n] + _CONV_T[n]},
    _LINEAR[0]: 2,
    _BN[0]: 1,
    f"{A}group_norm.default": 1,
    f"{A}embedding.default": 2,
    f"{A}prelu.default": 1,
}

# Batch norm ops: a chain through one after its first op exists only in QAT
# graphs (prepare_pt2e folds batch norm into the op before it first).
BATCH_NORM: frozenset[str] = frozenset(
    {
        _BN[0],
        f"{A}_native_batch_norm_legit.default",
        f"{A}_native_batch_norm_legit_no_training.default",
        f"{A}native_batch_norm.default",
    }
)

# Modules that exist only in FX's flows (QAT modules swapped in by
# prepare_qat_fx; quantized and reference modules swapped in by convert):
# never in a float model, so never in an exported graph. Patterns of them
# belong to the BackendConfig alone.
FX_ONLY_PREFIXES: tuple[str, ...] = (
    "torch.ao.nn.qat.",
    "torch.ao.nn.intrinsic.qat.",
    "torch.ao.nn.quantized.",
    "torch.ao.nn.intrinsic.quantized.",
    "torch.ao.nn.quantizable.",
    "torch.nn.qat.",
    "torch.nn.intrinsic.qat.",
    "torch.nn.quantized.",
    "torch.nn.intrinsic.quantized.",
)
