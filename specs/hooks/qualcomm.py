"""What specs/qualcomm.bcfg says in Python: Qualcomm's kinds of annotation, its configs and the
order its QnnQuantizer annotates in, as ExecuTorch 1.5.1 has them.

- The kinds (``general`` ... ``unbind``): each an op's ``annotate_node`` (``fn(node,
  config)``), annotating the node as the op's entry of Qualcomm's HTP registry does
  (``annotators/htp_rules.py``: 182 keys, 33 annotations).
- ``QuantDtype``, ``QUANT_CONFIGS`` and ``ModuleQConfig``: Qualcomm's eight schemes, the
  configs of each (PTQ and QAT, per tensor, per channel, per block: the functions of
  Qualcomm's ``qconfig.py``, whose specs carry Qualcomm's observers) and a submodule's config.
- ``Qnn``, the generated ``QnnQuantizer``'s mixin: its constructor methods, which fill the
  levels of the spec's ``select:`` (the runtime chooses each node's config by them: block
  size by node name, then submodule predicates, then per-channel op sets, then the
  default), ``annotate`` (QAT's conv-bn partitions, then the runtime's node by node, then
  the custom annotations, infinities replaced by the quantized range), Qualcomm's pass
  pipeline for ``transform_for_annotation`` and its SDK's op constraints for ``validate``.

torch, torchao and ExecuTorch are imported when called, so that bcfg resolves this module
without them."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, unique
from typing import Any

KEY = "quantization_annotation"
QC = "executorch.backends.qualcomm"


@functools.cache
def _t() -> Any:
    """torch and torchao's quantizer module (imported when first called)."""
    import torch
    import torchao.quantization.pt2e.quantizer as q

    return torch, q


def _qconfig() -> Any:
    import executorch.backends.qualcomm.quantizer.qconfig as qconfig

    return qconfig


def _ann(node: Any) -> bool:
    a = node.meta.get(KEY)
    return a is not None and a._annotated


def _float(node: Any) -> bool:
    torch = _t()[0]
    val = getattr(node, "meta", {}).get("val") if isinstance(node, torch.fx.Node) else None
    return type(val).__name__ == "FakeTensor" and val.dtype in (torch.bfloat16, torch.float32)


def _set(node: Any, inputs: Any = None, output: Any = None) -> None:
    node.meta[KEY] = _t()[1].QuantizationAnnotation(input_qspec_map=inputs or {}, output_qspec=output, _annotated=True)  # fmt: skip


def _shared(of: Any) -> Any:
    return _t()[1].SharedQuantizationSpec(of)


def _mark(nodes: list) -> None:
    for node in nodes:
        node.meta.setdefault(KEY, _t()[1].QuantizationAnnotation())._annotated = True


def _io(node: Any, q: Any, args: Any) -> None:
    """Qualcomm's single_in_single_out and binary: the float ``args`` the input spec, a float
    output the output spec."""
    if _ann(node):
        return
    i = q.input_activation
    inputs = {a: i for a in args if _float(a) and i is not None}
    out = q.output_activation if _float(node) else None
    if inputs or out is not None:
        _set(node, inputs, out)


def general(node: Any, q: Any = None) -> None:
    _io(node, q, node.args[:1])


def binary(node: Any, q: Any = None) -> None:
    _io(node, q, node.args[:2])


def div(node: Any, q: Any = None) -> None:
    """Binary (Qualcomm's constant-divisor branch is reached by no node with a tensor input)."""
    if not any(isinstance(a, _t()[0].fx.Node) for a in node.args):
        raise NotImplementedError(f"No quant annotation is implemented for {node}.")
    binary(node, q)


def single_in(node: Any, q: Any = None) -> None:
    if not _ann(node) and q.input_activation is not None:
        _set(node, {node.args[0]: q.input_activation})


def share(node: Any, q: Any = None) -> None:
    """The input's output spec shared if it has one (and is float), else the input spec in and
    the output sharing it."""
    if _ann(node):
        return
    x = node.args[0]
    a = x.meta.get(KEY)
    if a is not None and a._annotated and a.output_qspec is not None and _float(x):
        return _set(node, {x: _shared(x)}, _shared(x))
    i = q.input_activation
    inputs = {x: i} if _float(x) and i is not None else {}
    out = _shared((x, node)) if _float(node) and i is not None else None
    if inputs or out is not None:
        _set(node, inputs, out)


def constant(node: Any, q: Any = None) -> None:
    if not _ann(node) and _float(node):
        _set(node, {}, q.output_activation)


def getitem(node: Any, q: Any = None) -> None:
    """A float item: the output spec, or its topk's or sort's output shared."""
    aten = _t()[0].ops.aten
    if not _ann(node) and _float(node):
        shared = node.args[0].target in (aten.topk.default, aten.sort.default)
        _set(node, None, _shared(node.args[0]) if shared else q.output_activation)


def _items(node: Any, q: Any, out: bool = False, htp: bool = True) -> None:
    """The input spec in; each item (and with ``out`` the node) sharing it."""
    x, i = node.args[0], q.input_activation
    shared = _shared((x, node)) if i is not None or not htp else None
    _set(node, {x: i} if i is not None or not htp else {}, shared if out else None)
    for user in node.users:
        _set(user, None, shared)


def unbind(node: Any, q: Any = None) -> None:
    if not _ann(node) and _float(node.args[0]):
        _items(node, q, out=True)


def split(node: Any, q: Any = None, htp: bool = True) -> None:
    if not _ann(node):
        _items(node, q, htp=htp)


def conv(node: Any, q: Any = None, htp: bool = True) -> None:
    """Input, weight and bias (a callable bias: called with the node); a block size given to
    the weight's observer."""
    if _ann(node):
        return
    if q.block_size is not None:
        q.weight.observer_or_fake_quant_ctr.p.keywords.update({"block_size": q.block_size})
    i = q.input_activation
    inputs = {node.args[0]: i} if i is not None or not htp else {}
    inputs[node.args[1]] = q.weight
    if len(node.args) > 2 and isinstance(node.args[2], _t()[0].fx.Node):
        inputs[node.args[2]] = q.bias(node) if callable(q.bias) else q.bias
    _set(node, inputs, q.output_activation)


def linear(node: Any, q: Any = None, htp: bool = True) -> None:
    if not _ann(node):
        conv(node, q, htp)
        node.meta["source_fn_stack"] = [(node, _t()[0].nn.Linear)]


def scatter(node: Any, q: Any = None) -> None:
    x = node.args[0]
    if _ann(node) or not _float(x):
        return
    inputs = {x: q.input_activation}
    if len(node.args) > 3 and _float(node.args[3]):
        inputs[node.args[3]] = _shared((x, node))
    _set(node, inputs, _shared((x, node)) if _float(node) else None)


def where(node: Any, q: Any = None, htp: bool = True) -> None:
    """where, masked_fill: every float argument the input spec (each must be a node)."""
    if _ann(node):
        return
    i, inputs, out = q.input_activation, {}, None
    if i is not None or not htp:
        for a in node.args:
            assert isinstance(a, _t()[0].fx.Node)
            inputs.update({a: i} if _float(a) else {})
        out = q.output_activation if _float(node) else None
    _set(node, inputs, out)


def _w16(i: Any) -> Any:
    """A second operand's or norm weight's spec: 16a16w's weight for 16-bit activations."""
    return _qconfig().get_16a16w_qnn_ptq_config().weight if i.dtype == _t()[0].int32 else i


def matmul(node: Any, q: Any = None, htp: bool = True) -> None:
    if _ann(node):
        return
    i, (a, b) = q.input_activation, node.args[:2]
    Node, spec = _t()[0].fx.Node, i is not None or not htp
    inputs = {a: i} if isinstance(a, Node) and spec else {}
    inputs.update({b: _w16(i)} if isinstance(b, Node) and spec else {})
    _set(node, inputs, q.output_activation)


def _norm(node: Any, q: Any, specs: list, marked: list) -> None:
    """The arguments' specs merged in, the output spec, ``marked`` marked annotated."""
    q_ = _t()[1]
    for arg, spec in specs:
        q_.annotate_input_qspec_map(node, arg, spec)
    q_.annotate_output_qspec(node, q.output_activation)
    _mark([node, *marked])


def batch_norm(node: Any, q: Any = None, htp: bool = True) -> None:
    """LPAI's (``htp`` false): the weight the input spec at every width."""
    act, weight, bias = node.args[0:3]
    if _ann(node):
        return
    i = q.input_activation
    w = (q.weight if htp and i.dtype == _t()[0].int32 else i) if weight is not None else None
    parts = [(a, s) for a, s in ((weight, w), (bias, q.bias)) if a is not None]
    _norm(node, q, [(act, i), *parts], [act, *(a for a, _ in parts)])


def group_norm(node: Any, q: Any = None) -> None:
    if _ann(node):
        return
    parts = [(a, s) for a, s in ((node.args[2], q.weight), (node.args[3], q.bias)) if a]
    _norm(node, q, [(node.args[0], q.input_activation), *parts], [a for a, _ in parts])


def layer_norm(node: Any, q: Any = None) -> None:
    weight = node.args[2]
    bias = node.args[3] if len(node.args) > 2 else None
    if _ann(node):
        return
    i = q.input_activation
    parts = [(a, s) for a, s in ((weight, weight and _w16(i)), (bias, q.bias)) if a]
    _norm(node, q, [(node.args[0], i), *parts], [a for a, _ in parts])


def rms_norm(node: Any, q: Any = None) -> None:
    if _ann(node):
        return
    i = q.input_activation
    weight = [(node.args[2], i)] if len(node.args) > 2 and node.args[2] is not None else []
    _norm(node, q, [(node.args[0], i), *weight], [])


def _fixed(o: Any, scale: float, zero_point: int, qmin: int, qmax: int, fake: bool) -> Any:
    """An output spec of fixed qparams (an observer's, or a fake quantize's in QAT)."""
    import torchao.quantization.pt2e as ao

    torch, q = _t()
    kw = dict(scale=scale, zero_point=zero_point, dtype=o.dtype, qscheme=torch.per_tensor_affine, quant_max=qmax, quant_min=qmin)  # fmt: skip
    ctr = observer = ao.FixedQParamsObserver.with_args(**kw)
    if fake:
        ctr = ao.FixedQParamsFakeQuantize.with_args(observer=observer, **kw)
    return q.QuantizationSpec(dtype=o.dtype, quant_max=qmax, quant_min=qmin, observer_or_fake_quant_ctr=ctr, qscheme=torch.per_tensor_affine)  # fmt: skip


def _fixed_io(node: Any, q: Any, out: Callable, htp: bool = True) -> None:
    if _ann(node):
        return
    inputs, spec = {}, None
    if q.input_activation is not None or not htp:
        inputs, spec = {node.args[0]: q.input_activation}, out(q.output_activation)
    if _float(node):
        _set(node, inputs, spec)


def fixed(node: Any, q: Any = None, htp: bool = True) -> None:
    """sigmoid, hardsigmoid: scale 1 / 2^bits, zero point 0 (fake quantized in Qualcomm's two
    QAT configs)."""

    def out(o: Any) -> Any:
        iinfo, c = _t()[0].iinfo(o.dtype), _qconfig()
        qmax = iinfo.max if o.quant_max is None else o.quant_max
        qmin = iinfo.min if o.quant_min is None else o.quant_min
        fake = q in (c.get_8a8w_qnn_qat_config(), c.get_16a4w_qnn_qat_config())
        return _fixed(o, 1 / (qmax - qmin + 1), 0, qmin, qmax, fake)

    _fixed_io(node, q, out, htp)


def tanh(node: Any, q: Any = None, htp: bool = True) -> None:
    """16-bit: scale 1 / 32768, zero point 32768; else the output spec."""
    torch = _t()[0]

    def out(o: Any) -> Any:
        if o.dtype != torch.int32:
            return o
        fake = isinstance(o.observer_or_fake_quant_ctr, torch.ao.quantization.fake_quantize.FakeQuantizeBase)  # fmt: skip
        return _fixed(o, 1 / 32768.0, 32768, o.quant_min, o.quant_max, fake)

    _fixed_io(node, q, out, htp)


def shared_out(node: Any, q: Any = None) -> None:
    """sort, topk: a float input the input spec, the output sharing it."""
    if _ann(node):
        return
    x, inputs, out = node.args[0], {}, None
    if q.input_activation is not None and _float(x):
        inputs, out = {x: q.input_activation}, _shared((x, node))
    _set(node, inputs, out)


def index_copy(
    node: Any, q: Any = None, at: int = 3, check: bool = False, htp: bool = True
) -> None:
    """The value (argument ``at``) the input spec, the output sharing it (index_put: a float
    value, and only then annotated)."""
    value, i = node.args[at], q.input_activation
    if (i is not None or not htp) and (_float(value) or not check):
        _set(node, {value: i}, _shared((value, node)))
    elif not check:
        _set(node)


def index_put(node: Any, q: Any = None) -> None:
    index_copy(node, q, 2, check=True)


def embedding(node: Any, q: Any = None) -> None:
    w = node.args[0]
    if _ann(node) or not _float(w):
        return
    pcq, i = q.per_channel_embedding, q.input_activation
    _set(node, {w: q.weight if pcq else i}, i if pcq else _shared((w, node)))


def cat(node: Any, q: Any = None, htp: bool = True) -> None:
    """Each input the input spec (an input whose output spec is shared: shared), the output
    observed by Qualcomm's ConcatObserver bound to the node."""
    from executorch.backends.qualcomm.quantizer.observers.concat_observer import ConcatObserver

    if _ann(node) or not _float(node):
        return
    inputs, spec, o = {}, None, q.output_activation
    if q.input_activation is not None or not htp:
        for x in node.args[0]:
            shared = isinstance(getattr(x.meta.get(KEY), "output_qspec", None), _t()[1].SharedQuantizationSpec)  # fmt: skip
            inputs[x] = _shared(x) if shared else q.input_activation
        ctr = ConcatObserver.with_args(node_name=node.name, graph=node.graph)
        spec = _t()[1].QuantizationSpec(dtype=o.dtype, qscheme=o.qscheme, quant_max=o.quant_max, quant_min=o.quant_min, observer_or_fake_quant_ctr=ctr)  # fmt: skip
    _set(node, inputs, spec)


def stack(node: Any, q: Any = None) -> None:
    if _ann(node) or not _float(node):
        return
    xs, inputs, shared = node.args[0], {}, None
    if q.input_activation is not None:
        shared = _shared((xs[0], node))
        inputs = {xs[0]: q.input_activation, **{x: shared for x in xs[1:] if x is not xs[0]}}
    _set(node, inputs, shared)


def slice_scatter(node: Any, q: Any = None, htp: bool = True) -> None:
    if _ann(node):
        return
    (x, value), inputs, out = node.args[:2], {}, None
    if q.input_activation is not None or not htp:
        out = _shared((x, node))
        inputs = {x: q.input_activation, value: out}
    _set(node, inputs, out)


# LPAI's kinds (annotators/lpai_rules.py): HTP's but that they take the config's activation
# spec as it is, with none of HTP's checks for a float activation (fp16a8w's None lands in the
# annotation, or raises where Qualcomm's does), and the norms' own reading of their arguments.
def _lpai(kind: Callable) -> Callable:
    def annotate(node: Any, q: Any = None) -> None:
        kind(node, q, htp=False)

    annotate.__name__ = annotate.__qualname__ = f"{kind.__name__}_lpai"
    return annotate


split_lpai, linear_lpai, where_lpai, matmul_lpai = map(_lpai, (split, linear, where, matmul))
batch_norm_lpai, fixed_lpai, tanh_lpai, cat_lpai = map(_lpai, (batch_norm, fixed, tanh, cat))
index_copy_lpai, slice_scatter_lpai = map(_lpai, (index_copy, slice_scatter))


def layer_norm_lpai(node: Any, q: Any = None) -> None:
    """A weight or bias that is a node (an absent one is none)."""
    Node, (weight, bias) = _t()[0].fx.Node, (*node.args[2:4], None, None)[:2]
    if _ann(node):
        return
    i = q.input_activation
    parts = [(weight, _w16(i))] if isinstance(weight, Node) else []
    parts += [(bias, q.bias)] if isinstance(bias, Node) else []
    _norm(node, q, [(node.args[0], i), *parts], [a for a, _ in parts])


def rms_norm_lpai(node: Any, q: Any = None) -> None:
    """The weight (argument 2, which must be given) the input spec."""
    if not _ann(node):
        i = q.input_activation
        _norm(node, q, [(node.args[0], i), (node.args[2], i)], [])


def _conv_bn(gm: Any, conv: Any, q: Any) -> bool:
    """Qualcomm's conv-bn partition: the conv's inputs (a bias-less conv given a zero bias to
    derive a quantized bias on), the output spec at the batch norm's output."""
    torch = _t()[0]
    bn = next(iter(conv.users))
    out = bn if bn.target == torch.ops.aten.batch_norm.default else next((u for u in bn.users if u.target is operator.getitem and u.args[1] == 0), None)  # fmt: skip
    partition = [conv, bn] + ([out] if out is not bn else [])
    if out is None or any(_ann(n) for n in partition) or q is None:
        return False
    inputs = {conv.args[0]: q.input_activation} if q.input_activation is not None else {}
    inputs[conv.args[1]] = q.weight
    args = list(conv.args) + [None] * (3 - len(conv.args))
    if not isinstance(args[2], torch.fx.Node) and (val := conv.meta.get("val")) is not None:
        zeros = torch.zeros(val.shape[1], dtype=val.dtype, device=val.device)
        gm.register_parameter(f"{conv.name}_zero_bias", torch.nn.Parameter(zeros, requires_grad=False))  # fmt: skip
        with gm.graph.inserting_before(conv):
            args[2] = gm.graph.get_attr(f"{conv.name}_zero_bias")
        args[2].meta["val"] = val.fake_mode.from_tensor(zeros, static_shapes=True)
        conv.args = tuple(args)
    if isinstance(args[2], torch.fx.Node) and q.bias is not None:
        inputs[args[2]] = q.bias(conv) if callable(q.bias) else q.bias
    _set(conv, inputs)
    _mark(partition)
    _set(out, None, q.output_activation)
    return True


@unique
class QuantDtype(IntEnum):
    """bits of activation and bits of weight"""

    use_16a16w = 0
    use_16a8w = 1
    use_16a4w = 2
    use_16a4w_block = 3
    use_8a8w = 4
    use_8a4w = 5
    use_fp16a8w = 6
    use_16a2w = 7


# (scheme, QAT) -> (the config, the per-channel config or the activation's and weight's dtypes
# of Qualcomm's per-channel one, whether it has a per-block one): qconfig.py's functions.
_16 = ("uint16", "int16")
QUANT_CONFIGS: dict = {
    (QuantDtype.use_16a16w, False): ("16a16w_qnn_ptq", _16, False),
    (QuantDtype.use_16a8w, False): ("16a8w_qnn_ptq", ("uint16", "int8"), False),
    (QuantDtype.use_16a4w, False): ("16a4w_qnn_ptq", ("uint16", "int4"), False),
    (QuantDtype.use_16a2w, False): ("16a2w_qnn_ptq", ("uint16", "int2"), False),
    (QuantDtype.use_16a4w_block, False): ("16a4w_qnn_ptq", ("uint16", "int4"), True),
    (QuantDtype.use_8a8w, False): ("8a8w_qnn_ptq", (), False),
    (QuantDtype.use_8a4w, False): ("8a4w_qnn_ptq", ("uint8", "int4"), False),
    (QuantDtype.use_fp16a8w, False): ("fp16a8w_qnn_ptq", "fp16a8w_per_channel", False),
    (QuantDtype.use_fp16a8w, True): ("fp16a8w_qnn_qat", "fp16a8w_qat_per_channel", False),
    (QuantDtype.use_16a4w, True): ("16a4w_qnn_qat", ("uint16", "int4"), False),
    (QuantDtype.use_16a4w_block, True): ("16a4w_qnn_qat", ("uint16", "int4"), True),
    (QuantDtype.use_8a8w, True): ("8a8w_qnn_qat", (), False),
    (QuantDtype.use_16a8w, True): ("16a8w_qnn_qat", ("uint16", "int8"), False),
}


def config_functions(quant_dtype: Any, is_qat: bool) -> tuple:
    """(config, per-channel config, per-block config or None): Qualcomm's functions."""
    torch, c = _t()[0], _qconfig()
    name, per_channel, block = QUANT_CONFIGS[(quant_dtype, is_qat)]
    mode = "qat" if is_qat else "ptq"
    dtypes = {} if isinstance(per_channel, str) else dict(zip(("act_dtype", "weight_dtype"), (getattr(torch, d) for d in per_channel)))  # fmt: skip
    if isinstance(per_channel, str):
        channel = getattr(c, f"get_{per_channel}_quant_config")
    else:
        channel = functools.partial(getattr(c, f"get_{mode}_per_channel_quant_config"), **dtypes)
    blocks = functools.partial(getattr(c, f"get_{mode}_per_block_quant_config"), **dtypes) if block else None  # fmt: skip
    return getattr(c, f"get_{name}_config"), channel, blocks


AXES = {  # op -> the axis of its per-channel weight; the ops of each per-channel switch
    "conv1d.default": 0, "conv2d.default": 0, "conv3d.default": 0,
    "conv_transpose2d.input": 1, "conv_transpose3d.input": 1, "linear.default": 0,
    "embedding.default": 0,
}  # fmt: skip
SWITCHES = {"conv": list(AXES)[:5], "linear": ["linear.default"], "embedding": ["embedding.default"]}  # fmt: skip


@dataclass
class ModuleQConfig:
    quant_dtype: QuantDtype = QuantDtype.use_8a8w
    is_qat: bool = False
    is_conv_per_channel: bool = False
    is_linear_per_channel: bool = False
    is_embedding_per_channel: bool = False
    act_observer: Any = None
    act_symmetric: bool = False
    eps: Any = None

    def __post_init__(self) -> None:
        if (self.quant_dtype, self.is_qat) not in QUANT_CONFIGS:
            raise RuntimeError(
                f"the quant config, (quant_dtype: {self.quant_dtype}, is_qat: {self.is_qat}) is not support"
            )
        config, channel, block = config_functions(self.quant_dtype, self.is_qat)
        kw = dict(act_symmetric=self.act_symmetric, **({"act_observer": self.act_observer} if self.act_observer else {}))  # fmt: skip
        self.quant_config = config(**kw, eps=self.eps)
        self.per_channel_quant_config_list = [channel(**kw, ch_axis=i, eps=self.eps) for i in range(2)]  # fmt: skip
        aten = _t()[0].ops.aten
        self.op_axis_dict = {functools.reduce(getattr, k.split("."), aten): v for k, v in AXES.items()}  # fmt: skip
        self.use_per_channel_weight_quant_ops = {}
        for switch, ops in SWITCHES.items():
            if getattr(self, f"is_{switch}_per_channel"):
                self.use_per_channel_weight_quant_ops.update({functools.reduce(getattr, k.split("."), aten): AXES[k] for k in ops})  # fmt: skip
        if self.is_embedding_per_channel:
            for pcq_config in self.per_channel_quant_config_list:
                pcq_config.per_channel_embedding = True
        if block:
            self.per_block_quant_config_list = [block(**kw, ch_axis=i) for i in range(2)]


# QAT: a conv whose only user is one of these batch norms, annotated as one partition.
CONV_BN = (
    ("conv1d.default", "conv2d.default", "conv_transpose1d.default", "conv_transpose2d.input"),
    ("batch_norm.default", "_native_batch_norm_legit.default", "_native_batch_norm_legit_functional.default", "_native_batch_norm_legit_no_training.default", "cudnn_batch_norm.default"),
)  # fmt: skip


def _aten(name: str) -> Any:
    return functools.reduce(getattr, name.split("."), _t()[0].ops.aten)


def init(self: Any, backend: Any, soc_model: Any = None, strict: bool = True) -> None:
    """QnnQuantizer(backend=HTP, soc_model=SM8750, strict=True): the backend (its registry:
    the spec's patterns given it, chosen by the constructor after this), the default config."""
    from executorch.backends.qualcomm.quantizer.backend_opinfo_adapter import get_backend_opinfo
    from executorch.backends.qualcomm.serialization import qc_schema as s
    from executorch.backends.qualcomm.utils.qnn_sdk_setup import disable_mkldnn_on_amd

    if str(backend) not in BACKENDS:  # as Qualcomm's import of {backend}_rules fails
        name = f"executorch.backends.qualcomm.quantizer.annotators.{backend}_rules"
        raise ModuleNotFoundError(f"No module named '{name}'", name=name)
    self.backend = backend
    soc_model = s.QcomChipset.SM8750 if soc_model is None else soc_model
    self.strict, self.soc_info = strict, s._soc_info_table[soc_model]
    self.conv_bn = {(_aten(a), _aten(b)) for a in CONV_BN[0] for b in CONV_BN[1]}
    disable_mkldnn_on_amd()
    self.backend_opinfo = get_backend_opinfo(str(self.backend), soc_model)
    self.default_quant_config = ModuleQConfig()
    self.submodule_qconfig_list, self.block_size_map = [], {}
    self.custom_quant_annotations, self._recipe = [], None
    self._select()


# backend -> the keys Qualcomm registers beside the spec's ops (op packets, getitem, its
# custom op), by the name of their kind.
BACKENDS = {
    "htp": {"add": "binary", "sub": "binary", "mul": "binary", "div": "div", "sigmoid": "fixed",
            "getitem": "getitem", "qnn_custom.hadamard_transform.default": "general"},
    "lpai": {"add": "binary", "sub": "binary", "mul": "binary", "div": "div",
             "sigmoid": "fixed_lpai", "getitem": "getitem"},
}  # fmt: skip


class Qnn:
    """The mixin of the generated QnnQuantizer: Qualcomm's configs, order and passes."""

    def select(self, **params: Any) -> Any:
        """The runtime's registry for the backend (the spec's patterns it selects), and the
        keys Qualcomm registers beside them; its supported and quant ops."""
        import executorch.backends.qualcomm.builders.custom_ops  # noqa: F401 (qnn_custom ops)

        super().select(**params)  # type: ignore[misc]
        torch = _t()[0]
        for name, kind in BACKENDS[str(params["backend"])].items() if params else ():
            op = operator.getitem if name == "getitem" else functools.reduce(getattr, name.split("."), torch.ops if "." in name else torch.ops.aten)  # fmt: skip
            self.registry[op] = self.api.Entry(globals()[kind])
        self.supported_ops = set(self.registry)
        self.quant_ops = self.supported_ops.copy()
        return self

    @property
    def recipe(self) -> Any:
        return self._recipe

    def set_recipe(self, recipe: Any) -> None:
        self._recipe = recipe
        self._recipe.initialize_default_strategy_ops(self.supported_ops)

    @property
    def _rules_map(self) -> dict:
        """Qualcomm's registry (op -> an entry with ``annotate_fn``): the runtime's."""
        return self.registry

    def set_default_quant_config(
        self, quant_dtype: Any, is_qat: bool = False, is_conv_per_channel: bool = False,
        is_linear_per_channel: bool = False, is_embedding_per_channel: bool = False,
        act_observer: Any = None, act_symmetric: bool = False, eps: Any = None,
    ) -> None:  # fmt: skip
        self.default_quant_config = ModuleQConfig(
            quant_dtype, is_qat, is_conv_per_channel, is_linear_per_channel,
            is_embedding_per_channel, act_observer, act_symmetric, eps,
        )  # fmt: skip
        self._select()

    def set_submodule_qconfig_list(self, submodule_qconfig_list: list) -> None:
        self.submodule_qconfig_list = submodule_qconfig_list
        self._select()

    def set_block_size_map(self, block_size_map: dict) -> None:
        self.block_size_map = block_size_map
        self._select()

    def add_custom_quant_annotations(self, custom_quant_annotations: Any) -> None:
        self.custom_quant_annotations = custom_quant_annotations

    def add_discard_nodes(self, nodes: Any) -> None:
        self.discard_nodes = set(nodes)

    def add_discard_ops(self, ops: Any) -> None:
        for op in ops:
            self.quant_ops.remove(op)

    def get_supported_ops(self) -> set:
        return self.supported_ops

    def _select(self) -> None:
        """The spec's select: levels from Qualcomm's settings: a block size by node name, a
        submodule's ModuleQConfig, the default's per-channel ops, the default."""
        default, member = self.default_quant_config, self._member
        self.selection.set("node_name", {n: functools.partial(member, None, b) for n, b in self.block_size_map.items() if b})  # fmt: skip
        self.selection.set("submodule", [(f, functools.partial(member, c, None)) for f, c in self.submodule_qconfig_list])  # fmt: skip
        self.selection.set("op_set", [(tuple(default.use_per_channel_weight_quant_ops), functools.partial(member, default, None))])  # fmt: skip
        self.selection.set("default", [(None, functools.partial(member, default, None))])

    def _member(self, config: Any, block_size: Any, node: Any) -> Any:
        """The config of a ModuleQConfig (None: the node's submodule's, else the default) for
        the node: per block with a block size, per channel for its per-channel ops, else
        whole for a quant op."""
        op = node.target
        config = config or next((c for f, c in self.submodule_qconfig_list if f(node)), self.default_quant_config)  # fmt: skip
        if block_size:
            kind, ch_axis = "block", config.op_axis_dict.get(op, 0)
        elif op in config.use_per_channel_weight_quant_ops:
            kind, ch_axis = "channel", config.use_per_channel_weight_quant_ops[op]
        elif op in self.quant_ops:
            return config.quant_config
        else:
            return print(f"No quant config is implemented for op, {op}")
        configs = getattr(config, f"per_{kind}_quant_config_list")
        assert len(configs) > ch_axis, f"Unsupported per {kind} quantization axis: {ch_axis}, please increase the range of per_{kind}_quant_config_list"  # fmt: skip
        if block_size:
            configs[ch_axis].block_size = block_size
        return configs[ch_axis]

    def annotate(self, model: Any) -> Any:
        if self._recipe:
            self._recipe.annotate(model, self._rules_map)
        else:
            if self.default_quant_config.is_qat:  # conv-bn partitions first
                count = 0
                for conv in list(model.graph.nodes):
                    users = list(conv.users)
                    if conv.op == "call_function" and len(users) == 1 and (conv.target, users[0].target) in self.conv_bn and conv.name not in self.discard_nodes:  # fmt: skip
                        count += _conv_bn(model, conv, self.selection.choose(conv).config)
                if count:
                    model.recompile()
            super().annotate(model)
            for annotation in self.custom_quant_annotations:
                annotation(model)
        self._replace_inf(model)
        return model

    def _quant_range(self, node: Any) -> Any:
        """The width of the node's output range (through shared specs), or None."""
        torch, q = _t()
        if not (info := node.meta.get(KEY)):
            return None
        try:
            spec = info.output_qspec
            while isinstance(spec, q.SharedQuantizationSpec):
                at = spec.edge_or_node
                spec = at[1].meta[KEY].input_qspec_map[at[0]] if isinstance(at, tuple) else at.meta[KEY].output_qspec  # fmt: skip
            iinfo = torch.iinfo(spec.dtype)
        except Exception:
            import logging

            logging.warning(f"Could not resolve quant range for node: {node.name}")
            return None
        return (iinfo.max if spec.quant_max is None else spec.quant_max) - (iinfo.min if spec.quant_min is None else spec.quant_min)  # fmt: skip

    def _replace_inf(self, gm: Any) -> None:
        """Infinite (beyond float16) scalars of binary ops, masked_fill and scalar_tensor, and
        of float constants, replaced by the quantized range. The module is recompiled when a
        scalar was (or a custom annotation, a user's function, ran), where Qualcomm's always
        recompiles: its code is then the graph's as before (prepare_pt2e compiles the graph
        into a module of its own after annotate, either way)."""
        import itertools
        from operator import attrgetter

        import torch
        from torch.fx.passes.utils.source_matcher_utils import get_source_partitions

        sources = [operator.add, operator.sub, operator.mul, operator.truediv, torch.add, torch.sub, torch.mul, torch.div, "add", "sub", "mul", "truediv"]  # fmt: skip
        partitions = itertools.chain(*get_source_partitions(gm.graph, sources).values())
        aten = torch.ops.aten
        candidates = {p.nodes[0].target for p in partitions} | {aten.masked_fill.Scalar, aten.masked_fill.Tensor, aten.scalar_tensor.default}  # fmt: skip
        lo, hi = torch.finfo(torch.float16).min, torch.finfo(torch.float16).max
        changed = bool(self.custom_quant_annotations)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in candidates and (r := self._quant_range(node)):  # fmt: skip
                big = lambda a: isinstance(a, (int, float)) and (a >= hi or a <= lo)  # noqa: E731
                changed = changed or any(big(a) for a in node.args)
                node.args = tuple((r if a >= hi else -r) if big(a) else a for a in node.args)
            elif node.op == "get_attr":
                t = attrgetter(node.target)(gm)
                if torch.is_tensor(t) and t.is_floating_point():
                    ranges = [r for u in node.users if (r := self._quant_range(u))]
                    if ranges:
                        with torch.no_grad():
                            t[t <= lo], t[t >= hi] = -max(ranges), max(ranges)
        if changed:
            gm.recompile()

    def transform_for_annotation(self, model: Any) -> Any:
        """Qualcomm's pass pipeline (it rewrites leaky_relu to prelu, among others)."""
        from executorch.backends.qualcomm._passes.qnn_pass_manager import get_qnn_pass_manager_cls

        return get_qnn_pass_manager_cls(self.backend)().transform_for_annotation_pipeline(model)

    def validate(self, model: Any) -> None:
        """Qualcomm's validation against its SDK's op constraints (its registry's checks:
        without the SDK, there are none, as in Qualcomm's)."""
        from executorch.backends.qualcomm.quantizer.backend_opinfo_adapter import constraints_loader  # fmt: skip
        from executorch.backends.qualcomm.quantizer.registry_loader import (
            load_backend_rules_and_constraints,  # fmt: skip
        )

        supported = self.backend_opinfo.get_all_supported_ops()
        rules, cache = load_backend_rules_and_constraints(str(self.backend))
        for node in model.graph.nodes:
            rule = rules.get(node.target) if not isinstance(node.target, str) else None
            if node.name in self.discard_nodes or node.target not in self.quant_ops or rule is None or rule.qnn_op not in supported:  # fmt: skip
                continue
            if (constraints := cache.get(rule.qnn_op)) is None:
                cache.put(rule.qnn_op, constraints := constraints_loader(self.backend_opinfo, rule.qnn_op))  # fmt: skip
            if not rule.validate_fn(node, constraints, self.soc_info) and self.strict:
                raise ValueError(f"Validation failed for node {node.name} with target {node.target}")  # fmt: skip
