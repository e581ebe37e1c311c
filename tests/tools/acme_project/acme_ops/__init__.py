"""ACME NPU's own modules: the fused modules its kernels run, and how to fuse them."""

from .fused import LinearGELU
from .fusers import fuse_linear_gelu

__all__ = ["LinearGELU", "fuse_linear_gelu"]
