"""Fuser functions FX calls with the matched modules."""

from torch import nn

from .fused import LinearGELU


def fuse_linear_gelu(is_qat: bool, linear: nn.Linear, gelu: nn.GELU) -> LinearGELU:
    return LinearGELU(linear, gelu)
