"""A ``torch.library`` op of a user's package, as an accelerator team writes one: the op
``bcfg_npukit::fancy_act`` (its namespace is the package's, not ``aten``), the function that
calls it, and a module that calls that. Importing this module registers the op."""

from __future__ import annotations

import torch


@torch.library.custom_op("bcfg_npukit::fancy_act", mutates_args=())
def fancy_act(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(0, 6) * 0.5


@fancy_act.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class FancyAct(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fancy_act(x)


class LinearFancy(torch.nn.Module):
    """A linear, then the custom op."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.act = FancyAct()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(x))
