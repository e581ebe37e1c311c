"""What specs/cadence.bcfg still says in Python: the checks of ExecuTorch's Cadence patterns
(``patterns.py``'s ``get_anchors`` returning empty anchors; ``when`` and, for W8A32's
weights-only configs, ``weights_only_when``), each taking a match (its first op
``match.node``, its ops ``match.nodes``) and saying whether the pattern annotates it; and GRU's weight anchors
(``weights``), which sit in a list argument."""

from __future__ import annotations

from typing import Any


def tensor_add(match: Any) -> bool:
    """Add of two tensors, without alpha (or other keyword arguments)."""
    from torch.fx import Node

    return all(isinstance(a, Node) for a in match.node.args[:2]) and not match.node.kwargs


def values_only(match: Any) -> bool:
    """A max pool with indices whose only user takes its values (getitem 0)."""
    import operator

    users = list(match.node.users)
    return len(users) == 1 and users[0].target is operator.getitem and users[0].args[1] == 0


def _shape(node: Any) -> Any:
    meta = node.meta.get("tensor_meta") if hasattr(node, "meta") else None
    return None if meta is None else meta.shape


def w8a32_linear(match: Any) -> bool:
    """Input, weight and bias given, no keywords; the input's last dim a multiple of 4 and
    one row."""
    if len(match.node.args) != 3 or match.node.kwargs:
        return False
    shape = match.node.args[0].meta["tensor_meta"].shape
    return shape[-1] % 4 == 0 and not (len(shape) > 0 and shape[-2] != 1)


def w8a32_conv(match: Any) -> bool:
    """Input, weight and bias given; out and in channels multiples of 4, kernel 3, an input of
    length 3."""
    if len(match.node.args) != 3 or match.node.kwargs:
        return False
    weight = _shape(match.node.args[1])
    if weight is None:
        return True
    if weight[0] % 4 or weight[1] % 4 or weight[2] != 3:
        return False
    shape = _shape(match.node.args[0])
    return shape is None or shape[-1] == weight[2]


def w8a32_gru(match: Any) -> bool:
    """No keywords; input and hidden state with a last dim a multiple of 4."""
    if match.node.kwargs:
        return False
    shapes = [_shape(a) for a in match.node.args[:2]]
    return all(s is not None and s[-1] % 4 == 0 for s in shapes)


def never(match: Any) -> bool:
    """rms_norm: ExecuTorch keeps it from decomposition and annotates nothing."""
    return False


def gru_parameters(node: Any, config: Any) -> list:
    """W8A32 GRU: its parameters' list (argument 2) holds input-to-hidden and hidden-to-hidden
    weights, then biases: weights get the weight spec, the first bias the bias spec, the
    second shares the first's."""
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    w_ih, w_hh, b_ih, b_hh = node.args[2][:4]
    shared = SharedQuantizationSpec((b_ih, node))
    return [(node, w_ih, config.weight), (node, w_hh, config.weight),
            (node, b_ih, config.bias), (node, b_hh, shared)]  # fmt: skip
