"""Test fixtures: our own small re-creations of how real projects build BackendConfigs.

No code of those projects is copied; these reproduce the *shapes* of their
configs (names and counts chosen to match) on torch 2.13. Each get_* function
returns a BackendConfig.

    migraphx_like      torch helpers only (conv, linear, binary, share_qparams, tensor_info)
    qattn_like         one inline config + torch helpers, qint8 activations, dynamic with qint8 bias
    mmrazor_like_*     own copies of the helpers in torch-1.13 style: reversed (complex-format)
                       patterns with reverse_sequential_wrapper2 / reverse2 / reverse3 fusers;
                       four backends over the same helpers (academic, native, openvino, tensorrt)
    spconv_like        torch's tensorrt config + configs built from *sets* of classes, a
                       byte-identical copy of _sequential_wrapper2, complex add patterns with
                       module-level getters, helper called once per batch-norm class
    tutorial_like      the PyTorch BackendConfig tutorial: 3 configs, a module-level fuser
"""

import operator
from collections import namedtuple

import torch
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.intrinsic.qat as nniqat
import torch.ao.nn.qat as nnqat
import torch.ao.nn.quantized.reference as nnqr
import torch.ao.quantization.backend_config.utils  # noqa: F401
import torch.nn as nn
import torch.nn.functional as F
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
    ObservationType,
    get_tensorrt_backend_config,
)
from torch.ao.quantization.backend_config import _common_operator_config_utils as cu
from torch.ao.quantization.fuser_method_mappings import (
    fuse_conv_bn,
    fuse_conv_bn_relu,
    fuse_convtranspose_bn,
    fuse_linear_bn,
)
from torch.ao.quantization.utils import MatchAllNode

DIFF = ObservationType.OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT
SHARE = ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT


def _dc(i, o, w=None, b=None, dyn=None):
    return DTypeConfig(input_dtype=i, output_dtype=o, weight_dtype=w, bias_dtype=b, is_dynamic=dyn)


# ---------------------------------------------------------------- migraphx-like
def get_migraphx_like_backend_config():
    w8 = _dc(torch.quint8, torch.quint8, torch.qint8, torch.float)
    nw = _dc(torch.qint8, torch.qint8)
    bc = BackendConfig("migraphx")
    for helper, ds in [
        (cu._get_conv_configs, [w8]),
        (cu._get_linear_configs, [w8]),
        (cu._get_binary_op_configs, [w8]),
        (cu._get_share_qparams_op_configs, [nw]),
        (cu._get_tensor_info_op_configs, [nw]),
    ]:
        bc.set_backend_pattern_configs(helper(ds))
    return bc  # 57 + 12 + 17 + 59 + 2 = 147 configs


# ------------------------------------------------------------------- qattn-like
def get_qattn_like_backend_config():
    wq = _dc(torch.qint8, torch.qint8, torch.qint8, torch.float)
    dq = _dc(torch.qint8, torch.float, torch.qint8, torch.qint8, True)  # note: qint8 bias
    nq = _dc(torch.qint8, torch.qint8)
    sdpa = BackendPatternConfig(F.scaled_dot_product_attention).set_observation_type(DIFF)
    sdpa.add_dtype_config(nq)
    return (
        BackendConfig("qattn")
        .set_backend_pattern_config(sdpa)
        .set_backend_pattern_configs(cu._get_linear_configs([wq, dq]))
        .set_backend_pattern_configs(cu._get_binary_op_configs([wq]))
        .set_backend_pattern_configs(cu._get_share_qparams_op_configs([nq]))
        .set_backend_pattern_configs(cu._get_tensor_info_op_configs([nq]))
    )  # 91 configs


# ----------------------------------------------------------------- mmrazor-like
# torch 1.13's fuser wrappers, as projects copied them: closures over a class or function.
def reverse_sequential_wrapper2(sequential):
    def fuser_method(is_qat, m1, m2):
        return sequential(m2, m1)

    return fuser_method


def reverse2(f):
    def reversed(is_qat, x, y):
        return f(is_qat, y, x)

    return reversed


def reverse3(f):
    def reversed(is_qat, x, w):
        y, z = w
        return f(is_qat, z, y, x)

    return reversed


def _rc(pattern):
    """A torch-1.13-style config: the pattern in reversed nested-tuple (complex) form."""
    return BackendPatternConfig()._set_pattern_complex_format(pattern)


_Dims = namedtuple(
    "_Dims",
    "root transpose bn ref tref relu_fused bn_fused bn_relu_fused "
    "qat relu_qat bn_qat bn_relu_qat func",
)
_DIMS = [
    _Dims(
        *(
            getattr(mod, name.format(n))
            for mod, name in [
                (nn, "Conv{}d"),
                (nn, "ConvTranspose{}d"),
                (nn, "BatchNorm{}d"),
                (nnqr, "Conv{}d"),
                (nnqr, "ConvTranspose{}d"),
                (nni, "ConvReLU{}d"),
                (nni, "ConvBn{}d"),
                (nni, "ConvBnReLU{}d"),
                (nnqat, "Conv{}d"),
                (nniqat, "ConvReLU{}d"),
                (nniqat, "ConvBn{}d"),
                (nniqat, "ConvBnReLU{}d"),
                (F, "conv{}d"),
            ]
        )
    )
    for n in (1, 2, 3)
]


def _mm_conv(ds):  # 20 raw / 18 distinct per dim (no F.conv_transpose in 1.13)
    out = []
    for c in _DIMS:
        out += [
            _rc(c.root)
            .set_observation_type(DIFF)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref)
            .set_qat_module(c.qat),
            _rc(c.qat)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref),
            _rc(c.func).set_dtype_configs(ds)._set_input_type_to_index({"weight": 1, "bias": 2}),
        ]
        for relu in (nn.ReLU, F.relu):
            out.append(
                _rc((relu, c.root))
                .set_dtype_configs(ds)
                .set_fuser_method(reverse_sequential_wrapper2(c.relu_fused))
                .set_fused_module(c.relu_fused)
            )
        out += [
            _rc(c.relu_fused)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref)
            .set_qat_module(c.relu_qat),
            _rc(c.relu_qat)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref),
        ]
        out += [_rc((relu, c.func)).set_dtype_configs(ds) for relu in (nn.ReLU, F.relu)]
        out += [
            _rc(c.relu_fused).set_dtype_configs(ds).set_qat_module(c.relu_qat),  # overrides
            _rc(c.relu_qat)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref),
        ]
        out.append(
            _rc((c.bn, c.root))
            .set_dtype_configs(ds)
            .set_fuser_method(reverse2(fuse_conv_bn))
            .set_fused_module(c.bn_fused)
        )
        out.append(
            _rc((nn.ReLU, (c.bn, c.root)))
            .set_dtype_configs(ds)
            .set_fuser_method(reverse3(fuse_conv_bn_relu))
            .set_fused_module(c.bn_relu_fused)
        )
        out.append(
            _rc((F.relu, (c.bn, c.root)))
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_fuser_method(reverse3(fuse_conv_bn_relu))
            .set_fused_module(c.bn_relu_fused)
        )
        out += [
            _rc(c.bn_fused).set_dtype_configs(ds).set_qat_module(c.bn_qat),
            _rc(c.bn_relu_fused).set_dtype_configs(ds).set_qat_module(c.bn_relu_qat),
        ]
        out += [
            _rc(q)
            .set_dtype_configs(ds)
            .set_root_module(c.root)
            .set_reference_quantized_module(c.ref)
            for q in (c.bn_qat, c.bn_relu_qat)
        ]
        out += [
            _rc(c.transpose)
            .set_dtype_configs(ds)
            .set_root_module(c.transpose)
            .set_reference_quantized_module(c.tref),
            _rc((c.bn, c.transpose))
            .set_dtype_configs(ds)
            .set_fuser_method(reverse2(fuse_convtranspose_bn))
            .set_root_module(c.transpose)
            .set_reference_quantized_module(c.tref),
        ]
    return out


def _mm_linear(ds):  # 12
    L = nn.Linear
    out = [
        _rc(L)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear)
        .set_qat_module(nnqat.Linear),
        _rc(nnqat.Linear)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear),
        _rc(F.linear).set_dtype_configs(ds)._set_input_type_to_index({"weight": 1, "bias": 2}),
    ]
    out += [
        _rc((relu, L))
        .set_dtype_configs(ds)
        .set_fuser_method(reverse_sequential_wrapper2(nni.LinearReLU))
        .set_fused_module(nni.LinearReLU)
        for relu in (nn.ReLU, F.relu)
    ]
    out += [
        _rc(nni.LinearReLU)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear)
        .set_qat_module(nniqat.LinearReLU),
        _rc(nniqat.LinearReLU)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear),
    ]
    out += [_rc((relu, F.linear)).set_dtype_configs(ds) for relu in (nn.ReLU, F.relu)]
    out += [
        _rc((nn.BatchNorm1d, L))
        .set_dtype_configs(ds)
        .set_fuser_method(reverse2(fuse_linear_bn))
        .set_fused_module(nni.LinearBn1d),
        _rc(nni.LinearBn1d)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear)
        .set_qat_module(nniqat.LinearBn1d),
        _rc(nniqat.LinearBn1d)
        .set_dtype_configs(ds)
        .set_root_module(L)
        .set_reference_quantized_module(nnqr.Linear),
    ]
    return out


_NT = {0: DIFF, 1: SHARE, 2: DIFF}


def _mm_binary(ds):  # 17, relu first (reversed)
    out = [
        _rc(p).set_dtype_configs(ds)._set_num_tensor_args_to_observation_type(_NT)
        for op in (operator.add, torch.add, operator.mul, torch.mul)
        for p in ((nn.ReLU, op), (F.relu, op), (torch.relu, op), op)
    ]
    return out + [_rc(torch.matmul).set_dtype_configs(ds)]


_MM_SHARE = (
    [
        nn.AdaptiveAvgPool1d,
        nn.AdaptiveAvgPool2d,
        nn.AdaptiveAvgPool3d,
        nn.AvgPool1d,
        nn.AvgPool2d,
        nn.AvgPool3d,
        nn.Hardtanh,
        nn.Identity,
        nn.MaxPool1d,
        nn.MaxPool2d,
        nn.MaxPool3d,
        nn.ReLU,
        torch.adaptive_avg_pool1d,
        F.adaptive_avg_pool2d,
        F.adaptive_avg_pool3d,
        F.hardtanh,
        F.hardtanh_,
        F.interpolate,
        F.max_pool1d,
        F.max_pool2d,
        F.max_pool3d,
        F.relu,
        F.relu6,
        torch.avg_pool1d,
        torch._C._nn.avg_pool2d,
        torch._C._nn.avg_pool3d,
        torch.clamp,
        torch.flatten,
        torch.mean,
        torch.repeat_interleave,
        torch.transpose,
        torch.squeeze,
        torch.stack,
        torch.unsqueeze,
        operator.floordiv,
    ]
    + "contiguous clamp detach detach_ mean permute repeat repeat_interleave reshape resize_ relu relu_ shape size squeeze squeeze_ transpose unsqueeze unsqueeze_ view".split()
)  # 55: torch 1.13's list


def _mm_misc(ds_default, ds_ln, ds_rnn, ds_emb):
    cat = [_rc(torch.cat).set_observation_type(SHARE).set_dtype_configs(ds_default)]
    default = [
        _rc(op).set_dtype_configs(ds_default)
        for op in (
            nn.ELU,
            nn.LeakyReLU,
            nn.Hardswish,
            nn.InstanceNorm1d,
            nn.InstanceNorm2d,
            nn.InstanceNorm3d,
            nn.Dropout,
            nn.PReLU,
            F.elu,
            F.hardswish,
            F.leaky_relu,
            F.dropout,
        )
    ]
    default += [
        _rc(F.group_norm)
        .set_dtype_configs(ds_default)
        ._set_input_type_to_index({"weight": 2, "bias": 3}),
        _rc(F.instance_norm)
        .set_dtype_configs(ds_default)
        ._set_input_type_to_index({"weight": 3, "bias": 4}),
    ]
    share = [_rc(op).set_observation_type(SHARE).set_dtype_configs(ds_default) for op in _MM_SHARE]
    bn = []
    for b, fused in ((nn.BatchNorm2d, nni.BNReLU2d), (nn.BatchNorm3d, nni.BNReLU3d)):
        bn += [
            _rc((relu, b))
            .set_dtype_configs(ds_default)
            .set_fuser_method(reverse_sequential_wrapper2(fused))
            .set_fused_module(fused)
            for relu in (nn.ReLU, F.relu)
        ]
        bn.append(_rc(b).set_dtype_configs(ds_default))
    bn += [_rc(f).set_dtype_configs(ds_default) for f in (nni.BNReLU2d, nni.BNReLU3d)]
    ln = [
        _rc(nn.LayerNorm).set_dtype_configs(ds_ln),
        _rc(F.layer_norm)
        .set_dtype_configs(ds_ln)
        ._set_input_type_to_index({"weight": 2, "bias": 3}),
    ]
    rnn = [
        _rc(m).set_dtype_configs(ds_rnn).set_root_module(m).set_reference_quantized_module(r)
        for m, r in (
            (nn.GRUCell, nnqr.GRUCell),
            (nn.LSTMCell, nnqr.LSTMCell),
            (nn.RNNCell, nnqr.RNNCell),
            (nn.LSTM, nnqr.LSTM),
        )
    ]  # no GRU in 1.13
    emb = []
    for m, q, r in (
        (nn.Embedding, nnqat.Embedding, nnqr.Embedding),
        (nn.EmbeddingBag, nnqat.EmbeddingBag, nnqr.EmbeddingBag),
    ):
        emb += [
            _rc(m)
            .set_dtype_configs(ds_emb)
            .set_qat_module(q)
            .set_root_module(m)
            .set_reference_quantized_module(r),
            _rc(q).set_dtype_configs(ds_emb).set_root_module(m).set_reference_quantized_module(r),
        ]
    return cat, default, share, bn, ln, rnn, emb


_U8W8 = _dc(torch.quint8, torch.quint8, torch.qint8, torch.float)
_U8 = _dc(torch.quint8, torch.quint8)


def _addmm(ds):
    return (
        _rc(torch.addmm)
        .set_dtype_configs(ds)
        ._set_input_type_to_index({"bias": 0, "input": 1, "weight": 2})
    )


def get_mmrazor_like_academic_backend_config():
    return (
        BackendConfig("academic")
        .set_backend_pattern_configs(_mm_conv([_U8W8]))
        .set_backend_pattern_configs(_mm_linear([_U8W8]))
    )


def get_mmrazor_like_native_backend_config():
    dyn8 = _dc(torch.quint8, torch.float, torch.qint8, torch.float, True)
    dyn16 = _dc(torch.float16, torch.float, torch.float16, torch.float, True)
    io8 = _dc(torch.quint8, torch.quint8, torch.float, torch.float)
    wo8, wo4 = _dc(torch.float, torch.float, torch.quint8), _dc(
        torch.float, torch.float, torch.quint4x2
    )
    cat, default, share, bn, ln, rnn, emb = _mm_misc([_U8], [io8], [dyn8, dyn16], [wo8, wo4])
    bc = BackendConfig("native")
    for part in (
        _mm_conv([_U8W8]),
        _mm_linear([_U8W8, dyn8, dyn16]),
        _mm_binary([_U8W8]),
        cat,
        default,
        share,
        bn,
        ln,
        rnn,
        emb,
    ):  # (fixed-qparams configs need 1.13-only API: left out)
        bc.set_backend_pattern_configs(part)
    return bc


def get_mmrazor_like_tensorrt_backend_config():
    w = _dc(torch.qint8, torch.qint8, torch.qint8, torch.float)
    return (
        BackendConfig("tensorrt")
        .set_backend_pattern_configs(_mm_conv([w]))
        .set_backend_pattern_config(_addmm([w]))
        .set_backend_pattern_configs(_mm_linear([w]))
    )


def get_mmrazor_like_openvino_backend_config():
    cat, _, share, *_ = _mm_misc([_U8], [_U8], [_U8], [_U8])
    return (
        BackendConfig("openvino")
        .set_backend_pattern_configs(_mm_conv([_U8W8]))
        .set_backend_pattern_config(_addmm([_U8W8]))
        .set_backend_pattern_configs(cat)
        .set_backend_pattern_configs(_mm_linear([_U8W8]))
        .set_backend_pattern_configs(_mm_binary([_U8W8]))
        .set_backend_pattern_configs(share)
    )


# ------------------------------------------------------------------ spconv-like
class SparseConvolution(nn.Module):
    pass


class SubMConv2d(SparseConvolution):
    pass


class SubMConv3d(SparseConvolution):
    pass


class SparseConv2d(SparseConvolution):
    pass


class SparseConv3d(SparseConvolution):
    pass


class SparseBatchNorm(nn.BatchNorm1d):
    pass


class SparseSyncBatchNorm(nn.BatchNorm1d):
    pass


class SparseReLU(nn.ReLU):
    pass


class ToDense(nn.Module):
    pass


class SparseIdentity(nn.Identity):
    pass


class SparseMaxPool2d(nn.Module):
    pass


class SparseAvgPool2d(nn.Module):
    pass


class SpConvRef(nn.Module):
    pass


class SpconvReLUNd(nn.Sequential):
    pass


class SpconvBnNd(nn.Sequential):
    pass


class SpconvBnReLUNd(nn.Sequential):
    pass


class SpconvAddReLUNd(nn.Sequential):
    pass


class QatSparseConv(nn.Module):
    pass


class QatSparseConvReLU(nn.Module):
    pass


class QatSparseConvBn(nn.Module):
    pass


class QatSparseConvAddReLU(nn.Module):
    pass


SPARSE_CONV_TYPES = {SubMConv2d, SubMConv3d, SparseConv2d, SparseConv3d}  # a set: order by hash
POOL_LAYERS = {SparseMaxPool2d, SparseAvgPool2d}


def _sequential_wrapper2(sequential):  # byte-identical to torch's, but not torch's object
    def fuser_method(is_qat, m1, m2):
        return sequential(m1, m2)

    return fuser_method


def sp_fuse_conv_bn(is_qat, conv, bn, is_add_fuse=False):  # real logic: not provable
    assert conv.training == bn.training
    if is_qat:
        return (SpconvAddReLUNd if is_add_fuse else SpconvBnNd)(conv, bn)
    return nn.utils.fusion.fuse_conv_bn_eval(conv, bn)


def sp_fuse_conv_bn_relu(is_qat, conv, bn, relu, is_add_fuse=False):  # real logic
    assert conv.training == bn.training == relu.training
    fused = nn.utils.fusion.fuse_conv_bn_eval(conv, bn) if not is_qat else conv
    return (SpconvAddReLUNd if is_add_fuse else SpconvBnReLUNd)(fused, relu)


def sp_fuse_conv_bn_add_relu(is_qat, relu, add_pattern):  # takes the reversed nested form
    _, bn_pattern, _ = add_pattern
    bn, conv = bn_pattern
    return sp_fuse_conv_bn_relu(is_qat, conv, bn, relu, True)


def conv_res_relu_root(pattern):  # module-level getters that only pick
    relu, (add, conv, extra) = pattern
    return conv


def conv_res_relu_extra(pattern):
    relu, (add, conv, extra) = pattern
    return [extra]


def conv_bn_res_relu_root(pattern):
    relu, (add, (bn, conv), extra) = pattern
    return conv


def conv_bn_res_relu_extra(pattern):
    relu, (add, (bn, conv), extra) = pattern
    return [extra]


_SP_CONVS = list(SPARSE_CONV_TYPES) + [SparseConvolution]


def _sp_bn_configs(bn_cls, ds):  # called once per batch-norm class
    out = []
    for conv in _SP_CONVS:
        out.append(
            BackendPatternConfig((conv, bn_cls))
            .set_dtype_configs(ds)
            .set_fuser_method(sp_fuse_conv_bn)
            .set_fused_module(SpconvBnNd)
        )
        out += [
            BackendPatternConfig((conv, bn_cls, relu))
            .set_dtype_configs(ds)
            .set_fuser_method(sp_fuse_conv_bn_relu)
            .set_fused_module(SpconvBnReLUNd)
            for relu in (nn.ReLU, F.relu, SparseReLU)
        ]
        out += [
            BackendPatternConfig()
            ._set_pattern_complex_format((SparseReLU, (add, (bn_cls, conv), MatchAllNode)))
            .set_dtype_configs(ds)
            .set_fuser_method(sp_fuse_conv_bn_add_relu)
            ._set_root_node_getter(conv_bn_res_relu_root)
            ._set_extra_inputs_getter(conv_bn_res_relu_extra)
            .set_fused_module(SpconvAddReLUNd)
            for add in (torch.add, operator.add)
        ]
    return out


def _sp_conv_configs(ds):
    out = (
        _sp_bn_configs(SparseBatchNorm, ds)
        + _sp_bn_configs(nn.BatchNorm1d, ds)
        + _sp_bn_configs(SparseSyncBatchNorm, ds)
    )
    for conv in _SP_CONVS:
        out += [
            BackendPatternConfig(conv)
            .set_observation_type(DIFF)
            .set_dtype_configs(ds)
            .set_root_module(conv)
            .set_reference_quantized_module(SpConvRef)
            .set_qat_module(QatSparseConv),
            BackendPatternConfig(QatSparseConv)
            .set_dtype_configs(ds)
            .set_root_module(conv)
            .set_reference_quantized_module(SpConvRef),
        ]
        out += [
            BackendPatternConfig((conv, relu))
            .set_dtype_configs(ds)
            .set_fuser_method(_sequential_wrapper2(SpconvReLUNd))
            .set_fused_module(SpconvReLUNd)
            for relu in (nn.ReLU, F.relu, SparseReLU)
        ]
        out += [
            BackendPatternConfig(SpconvReLUNd)
            .set_dtype_configs(ds)
            .set_root_module(conv)
            .set_reference_quantized_module(SpConvRef)
            .set_qat_module(QatSparseConvReLU),
            BackendPatternConfig(SpconvReLUNd)
            .set_dtype_configs(ds)
            .set_qat_module(QatSparseConvReLU),
        ]
        out += [
            BackendPatternConfig()
            ._set_pattern_complex_format((SparseReLU, (add, conv, MatchAllNode)))
            .set_dtype_configs(ds)
            .set_fuser_method(_sequential_wrapper2(SpconvAddReLUNd))
            ._set_root_node_getter(conv_res_relu_root)
            ._set_extra_inputs_getter(conv_res_relu_extra)
            .set_fused_module(SpconvAddReLUNd)
            for add in (torch.add, operator.add)
        ]
        out += [
            BackendPatternConfig(q)
            .set_dtype_configs(ds)
            .set_root_module(conv)
            .set_reference_quantized_module(SpConvRef)
            for q in (QatSparseConvReLU, QatSparseConvBn, QatSparseConvAddReLU)
        ]
    return out


_SP_W = _dc(torch.qint8, torch.qint8, torch.qint8, torch.float)
_SP_NW = _dc(torch.qint8, torch.qint8)


def _sp_share(ds):
    return [
        BackendPatternConfig(m).set_observation_type(SHARE).set_dtype_configs(ds)
        for m in [ToDense, SparseIdentity, *POOL_LAYERS]
    ]


def get_spconv_like_backend_config(additional_bns=None):
    bc = get_tensorrt_backend_config().set_backend_pattern_configs(
        _sp_conv_configs([_SP_W]) + _sp_share([_SP_NW])
    )
    for bn in additional_bns or ():
        bc.set_backend_pattern_configs(_sp_bn_configs(bn, [_SP_W]))
    return bc


# ---------------------------------------------------------------- tutorial-like
def fuse_conv2d_relu(is_qat, conv, relu):
    return nni.ConvReLU2d(conv, relu)


def get_tutorial_like_backend_config():
    u8 = DTypeWithConstraints(
        dtype=torch.quint8,
        quant_min_lower_bound=0,
        quant_max_upper_bound=255,
        scale_min_lower_bound=2**-12,
    )
    w8 = DTypeConfig(
        input_dtype=u8, output_dtype=u8, weight_dtype=torch.qint8, bias_dtype=torch.float
    )
    linear = (
        BackendPatternConfig()
        .set_pattern(nn.Linear)
        .set_observation_type(DIFF)
        .add_dtype_config(w8)
        .set_root_module(nn.Linear)
        .set_qat_module(nnqat.Linear)
        .set_reference_quantized_module(nnqr.Linear)
    )
    conv_relu = (
        BackendPatternConfig()
        .set_pattern((nn.Conv2d, nn.ReLU))
        .set_fused_module(nni.ConvReLU2d)
        .set_fuser_method(fuse_conv2d_relu)
    )
    fused = (
        BackendPatternConfig()
        .set_pattern(nni.ConvReLU2d)
        .set_observation_type(DIFF)
        .add_dtype_config(w8)
        .set_root_module(nn.Conv2d)
        .set_qat_module(nniqat.ConvReLU2d)
        .set_reference_quantized_module(nnqr.Conv2d)
    )
    return (
        BackendConfig("my_backend")
        .set_backend_pattern_config(linear)
        .set_backend_pattern_config(conv_relu)
        .set_backend_pattern_config(fused)
    )
