"""What specs/cortex_m.bcfg still says in Python: the Cortex-M kernels' own checks and its
graph rewrites. Each check takes a match (``match.node``, ``match.nodes``) and says
whether CMSIS-NN supports it. ExecuTorch's layout helpers are
imported when called, so that bcfg resolves this module without ExecuTorch."""

from __future__ import annotations

import operator
from typing import Any


class Shared:
    """Call targets that share the spec of what is around them like the shared_observer
    ops, but that no pattern can name (not ATen ops); torch is imported when they are
    read, so that bcfg resolves this module without it."""

    @property
    def shared_targets(self) -> tuple:
        from torch.ops import higher_order as higher

        return (operator.getitem, higher.while_loop, higher.cond)


def _ex() -> Any:
    from executorch.backends.cortex_m.passes import passes_utils

    return passes_utils


def _val(node: Any) -> Any:
    val = node.meta["val"]
    return val[0] if isinstance(val, (list, tuple)) else val


def _pair(node: Any) -> tuple[Any, Any] | None:
    args = node.all_input_nodes
    return (_val(args[0]), _val(args[1])) if len(args) == 2 else None


def same_shape_or_channel_broadcast(match: Any) -> bool:
    """Add, sub, mul: an integer alpha, and operands of one shape or a channels-last
    broadcast along channels."""
    u = _ex()
    for n in match.nodes:
        if not u.is_foldable_alpha(n.kwargs.get("alpha", 1)):
            return False
        t = _pair(n)
        if t and t[0].shape != t[1].shape:
            if not (u.is_channel_broadcast(*t) and match.layout(t[0], u.is_channels_last)):
                return False
    return True


def same_shape(match: Any) -> bool:
    return all((t := _pair(n)) is None or t[0].shape == t[1].shape for n in match.nodes)


def channels_last(match: Any) -> bool:
    return all(match.layout(_val(n), _ex().is_channels_last) for n in match.nodes)


def softmax_dim(match: Any) -> bool:
    """Softmax over the last dim (contiguous) or over channels (channels-last)."""
    (n,) = match.nodes
    t = _val(n)
    rank, last = len(t.shape), match.layout(t, _ex().is_channels_last)
    dim = n.args[1] % rank if len(n.args) > 1 else -1 % rank
    return dim == ((1 if rank >= 2 else rank - 1) if last else rank - 1)


def rank3(match: Any) -> bool:
    return all(_val(n).dim() == 3 for n in match.nodes)


def rank4(match: Any) -> bool:
    return all(_val(n).dim() == 4 for n in match.nodes)


def transposed_conv(match: Any) -> bool:
    """No output padding, one group, no dilation (the legacy table: channels-last too)."""
    for n in match.nodes:
        a = n.args
        if len(a) > 5 and isinstance(a[5], (list, tuple)) and any(p != 0 for p in a[5]):
            return False
        if len(a) > 6 and isinstance(a[6], int) and a[6] > 1:
            return False
        if len(a) > 7 and isinstance(a[7], (list, tuple)) and any(d != 1 for d in a[7]):
            return False
    return True


def no_divisor_override(match: Any) -> bool:
    return (match.node.args[6] if len(match.node.args) > 6 else None) is None


def batched_matmul(match: Any) -> bool:
    t = _pair(match.node)
    return t is None or (
        t[0].dim() == t[1].dim() == 3
        and t[0].shape[0] == t[1].shape[0]
        and t[0].shape[2] == t[1].shape[1]
    )


def tag_unlowerable_pool(match: Any) -> bool:
    """Accept; tag a pool with dilation or ceil_mode, which the Cortex-M pass leaves alone."""
    n = match.node
    dilation = _ex().coerce_int_pair(n.args[4] if len(n.args) > 4 else (1, 1), (1, 1))
    if dilation != (1, 1) or (len(n.args) > 5 and bool(n.args[5])):
        match.tag(n, "custom", "cortex_m", "skip_quantized_max_pool2d")
    return True


def transform(model: Any) -> Any:
    """ExecuTorch's Cortex-M rewrites before annotation (scalars to tensors, hardswish, mean)."""
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    return CortexMPassManager(None).transform_for_annotation(model)
