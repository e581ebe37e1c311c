"""Modules the NPU runs as one kernel."""

from torch import nn


class LinearGELU(nn.Sequential):
    """Linear then GELU, one kernel on the NPU."""

    def __init__(self, linear: nn.Linear, gelu: nn.GELU):
        super().__init__(linear, gelu)
