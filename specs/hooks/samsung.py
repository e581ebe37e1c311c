"""What specs/enn.bcfg says in Python: the annotation of each kind of Samsung's ops.

ExecuTorch's EnnQuantizer gives each op of its registry one of a dozen annotations (its
``annotator.py``): an op's tensor inputs the input spec and its output the output spec
(``two_in``, ``one_in``), or its output sharing its first input's spec (``shared_pair``,
``add``, ``cat``, ``embedding``, ``index_put``), or the spec of the nearest op above it
that has an annotation (``one_in_shared``, ``softmax``, ``index``, ``unbind``; conv and
linear take that op's output as their input spec), norms by argument, sigmoid to fixed
qparams. The spec names each op's kind with ``when:`` (each function here takes the node
and the config and annotates it, as ExecuTorch's annotators do; the config defaults to None
only so that the function fits the one signature bcfg checks a ``when:`` against: ``Enn``
calls it, the runtime never does); ``Enn`` runs them as
ExecuTorch does: conv and linear followed by a relu first, then every node in order, then
the custom annotations, with Samsung's configs and constructor methods. Every annotation
made here is marked annotated and made whole (before the custom annotations nothing else
annotates), so "annotated" is "has an annotation", and an annotation is set, not merged."""

from typing import Any

KEY = "quantization_annotation"
FLOATS, ADDS = ("torch.float32", "torch.float16"), ("aten.add.Tensor", "aten.add_.Tensor")


def _set(node: Any, inputs: Any, output: Any) -> None:
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    node.meta[KEY] = QuantizationAnnotation(input_qspec_map=inputs, output_qspec=output, _annotated=True)  # fmt: skip


def _shared(of: Any) -> Any:
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    return SharedQuantizationSpec(of)


def _float(node: Any) -> bool:
    val = getattr(node, "meta", {}).get("val")
    return type(val).__name__ == "FakeTensor" and str(val.dtype) in FLOATS


def _above(node: Any) -> Any:
    """The nearest node up the first inputs with an annotation, not a model input (ExecuTorch's
    ``_get_quantization_annotation``), or False."""
    if node.op == "placeholder" or KEY in node.meta:
        return node.op != "placeholder" and node
    first = node.args[0] if node.args else None
    first = first[0] if isinstance(first, list) else first
    return hasattr(first, "meta") and _above(first)


def relux(match: Any) -> bool:
    """A relu Samsung folds: hardtanh only from 0 (its check lets any upper bound through)."""
    return "hardtanh" not in str(match.nodes[-1].target) or match.nodes[-1].args[1] == 0.0


def two_in(node: Any, q: Any = None) -> None:
    a, b = node.args[:2]
    if _float(a):
        _set(node, {x: q.input_activation for x in (a, b) if _float(x)}, q.output_activation if _float(node) else None)  # fmt: skip


def shared_pair(node: Any, q: Any = None) -> None:
    a, b = node.args[:2]
    if not (_float(a) and hasattr(b, "meta")):
        return two_in(node, q)
    _set(node, {a: q.input_activation, b: _shared((a, node))}, _shared((a, node)))


def add(node: Any, q: Any = None) -> None:
    a, b = node.args[:2]
    if not _float(a) or (isinstance(b, float) and not _above(a)):
        return
    dropout = (*ADDS, "aten.dropout.default")
    if hasattr(b, "meta") and any(x.op == "call_function" and str(x.target) in dropout for x in (a, b)):  # fmt: skip
        return two_in(node, q)
    return shared_pair(node, q)


def one_in(node: Any, q: Any = None) -> None:
    if _float(node.args[0]):
        _set(node, {node.args[0]: q.input_activation}, q.output_activation)


def one_in_shared(node: Any, q: Any = None) -> None:
    x = node.args[0]
    if _float(x):
        top = _above(x)
        _set(node, {top: _shared(top)} if top else {x: q.input_activation}, _shared((top or x, node)))  # fmt: skip


def softmax(node: Any, q: Any = None) -> None:
    x = node.args[0]
    if _float(x):
        if str(x.target) in ADDS and KEY in x.meta:
            del x.meta[KEY]  # an add's annotation before softmax dropped (annotated: all are)
        top = _above(x)
        _set(node, {top: _shared(top)} if top else {}, q.output_activation)


def index(node: Any, q: Any = None) -> None:
    x = node.args[0]
    if _float(x) and _above(x):
        _set(node, {x: q.input_activation}, _shared((_above(x), node)))


def index_put(node: Any, q: Any = None, at: int = 2) -> None:
    """The value (argument ``at``) takes the input spec; the output shares it."""
    _set(node, {node.args[at]: q.input_activation}, _shared((node.args[at], node)))


def embedding(node: Any, q: Any = None) -> None:
    if _float(node.args[0]):
        index_put(node, q, 0)


def unbind(node: Any, q: Any = None) -> None:
    x = node.args[0]
    if _float(x):
        shared = _shared((_above(x) or x, node))
        for n, inputs in ((node, {x: q.input_activation}), *((u, {}) for u in node.users)):
            _set(n, inputs, shared)


def affine(node: Any, q: Any = None) -> None:
    x, top = node.args[0], _above(node.args[0])
    if _float(node.args[1]):
        _set(node, {x: _shared(top) if top else q.input_activation, **_weights(node, q)}, q.output_activation)  # fmt: skip


def _weights(node: Any, q: Any = None) -> dict:
    """Conv's and linear's weight, and bias if the config has a bias spec."""
    return {node.args[1]: q.weight, **({node.args[2]: q.bias} if len(node.args) > 2 and q.bias is not None else {})}  # fmt: skip


def cat(node: Any, q: Any = None) -> None:
    first = node.args[0][0]
    if _float(first):
        shared = _shared((first, node))
        _set(node, {x: q.input_activation if x == first else shared for x in node.args[0]}, shared)


def norm(node: Any, q: Any = None, at: int = 2, role: str = "input_activation") -> None:
    """rms_norm, layer_norm: the input and the weight (argument 2) take the input spec."""
    _set(node, {node.args[0]: q.input_activation, node.args[at]: getattr(q, role)}, q.output_activation)  # fmt: skip


def group_norm(node: Any, q: Any = None) -> None:
    norm(node, q, 2, "weight")


def batch_norm(node: Any, q: Any = None) -> None:
    norm(node, q, 1)


def sigmoid(node: Any, q: Any = None) -> None:
    """Output to fixed qparams: scale 1 / 2^bits, zero point 0 (an observer's)."""
    import torch
    from torchao.quantization.pt2e import FixedQParamsObserver
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    out = q.output_activation  # Samsung's configs set quant_min and quant_max
    if _float(node.args[0]) and _float(node):
        common = dict(dtype=out.dtype, qscheme=torch.per_tensor_affine, quant_max=out.quant_max, quant_min=out.quant_min)  # fmt: skip
        observer = FixedQParamsObserver.with_args(scale=1 / (out.quant_max - out.quant_min + 1), zero_point=0, **common)  # fmt: skip
        _set(node, {node.args[0]: q.input_activation}, QuantizationSpec(observer_or_fake_quant_ctr=observer, **common))  # fmt: skip


class Enn:
    """ExecuTorch's EnnQuantizer(): A8W8, per channel, not QAT, until set up otherwise."""

    def __init__(self) -> None:
        from executorch.backends.samsung.quantizer import qconfig

        super().__init__()
        self._qconfig, self._precision, self._is_per_channel, self._is_qat = qconfig, qconfig.Precision.A8W8, True, False  # fmt: skip
        self.custom_quant_annotations: Any = []

    def setup_precision(self, quant_dtype: Any) -> None:
        assert quant_dtype in self._qconfig.Precision, f"No support for Precision {quant_dtype}."
        self._precision = quant_dtype

    def setup_quant_params(self, quant_dtype: Any, is_per_channel: bool = True, is_qat: bool = False) -> None:  # fmt: skip
        self.setup_precision(quant_dtype)
        self._is_per_channel, self._is_qat = is_per_channel, is_qat

    def add_custom_quant_annotations(self, custom_quant_annotations: Any) -> None:
        self.custom_quant_annotations = custom_quant_annotations

    def annotate(self, model: Any) -> Any:
        q = self._qconfig.get_quant_config(self._precision, self._is_per_channel, self._is_qat)
        kinds = {op: r.when[0] for r in self.rules if len(r.chain) == 1 for op in r.chain[0]}
        fused = {(a, b): r for r in self.rules if len(r.chain) == 2 for a in r.chain[0] for b in r.chain[1]}  # fmt: skip
        for relu in model.graph.nodes:  # conv or linear and the relu it folds
            prev = relu.args[0] if relu.args else None
            rule = fused.get((getattr(prev, "target", None), relu.target))
            if rule and len(prev.users) == 1 and all(c(self.api.Context([prev, relu])) for c in rule.when):  # fmt: skip
                _set(prev, {prev.args[0]: q.input_activation, **_weights(prev, q)}, None)
                _set(relu, {}, q.output_activation)
        for node in model.graph.nodes:  # (every annotation made here is marked annotated)
            if node.op == "placeholder" and KEY not in node.meta:
                _set(node, {}, q.output_activation if _float(node) else None)
            elif node.target in kinds and KEY not in node.meta:
                kinds[node.target](node, q)
        for annotation in self.custom_quant_annotations:
            annotation(model)
        return model
