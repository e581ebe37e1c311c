"""What specs/arm_tosa.bcfg still says in Python: the checks of Arm's support table
(quantizer_support.py's PatternChecks). Each takes a match (``match.node``, ``match.nodes``).
Dtypes and targets are compared by name, so that bcfg resolves this module without torch."""

from __future__ import annotations

from typing import Any

INTS = ("torch.int8", "torch.int16", "torch.int32")


def _dtype(node: Any) -> Any:
    val = node.meta.get("val")
    val = val[0] if isinstance(val, (list, tuple)) and val else val
    return getattr(val, "dtype", None)


def relu_fused(match: Any) -> bool:
    """A fused hardtanh clamps at 0 (it is a relu)."""
    last = match.nodes[-1]
    low = float(last.args[1]) if len(last.args) > 1 else -1.0
    return str(last.target) not in ("aten.hardtanh.default", "aten.hardtanh_.default") or low == 0


def float_inputs(match: Any) -> bool:
    """Arithmetic: every input a float tensor."""
    return all(
        (d := _dtype(i)) is not None and d.is_floating_point
        for n in match.nodes
        for i in n.all_input_nodes
    )


def supported_cast(match: Any) -> bool:
    """to.dtype: int to int, int to float, or float to the same float."""
    if not match.node.all_input_nodes:
        return False
    a, b = _dtype(match.node.all_input_nodes[0]), _dtype(match.node)
    if a is None or b is None:
        return False
    a_int, b_int = str(a) in INTS, str(b) in INTS
    return (a_int and (b_int or b.is_floating_point)) or (a.is_floating_point and a == b)
