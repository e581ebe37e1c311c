"""The model family: conv nets, transformer blocks and cat-heavy nets, exported at a size.

Each family is a stack of one block; ``exported(family, nodes)`` picks the number
of blocks that gives about ``nodes`` nodes (from two small exports: the graph
grows by the same count per block) and exports it with ``torch.export``
(non-strict), as a user would before ``prepare_pt2e``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    """A ResNet basic block: conv, batch norm, relu, conv, batch norm, residual add, relu."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


class TransformerBlock(nn.Module):
    """Pre-norm attention (one head: matmul, softmax) and a GELU MLP, with residual adds."""

    def __init__(self, d: int = 16) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.scale = d**-0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        att = torch.softmax(torch.matmul(self.q(h), self.k(h).transpose(-2, -1)) * self.scale, -1)
        x = x + self.proj(torch.matmul(att, self.v(h)))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class CatBlock(nn.Module):
    """Three branches concatenated (an inception-like block), then a 1x1 conv and relu."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(c, c // 2, 1), nn.Conv2d(c, c // 2, 3, padding=1)
        self.pool = nn.MaxPool2d(3, 1, padding=1)
        self.mix = nn.Conv2d(c // 2 + c // 2 + c, c, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cat([F.relu(self.a(x)), F.relu(self.b(x)), self.pool(x)], 1)
        return F.relu(self.mix(y))


@dataclass(frozen=True)
class Family:
    name: str
    what: str
    block: Callable[[], nn.Module]
    example: Callable[[], torch.Tensor]
    stem: Callable[[], nn.Module]


FAMILIES = (
    Family(
        "conv",
        "conv net: conv, batch norm, relu, residual add",
        ConvBlock,
        lambda: torch.randn(1, 3, 8, 8),
        lambda: nn.Conv2d(3, 8, 3, padding=1),
    ),
    Family(
        "transformer",
        "transformer: linear, matmul, softmax, layer norm, gelu, residual add",
        TransformerBlock,
        lambda: torch.randn(1, 8, 16),
        nn.Identity,
    ),
    Family(
        "cat",
        "cat-heavy: three branches concatenated, 1x1 conv",
        CatBlock,
        lambda: torch.randn(1, 3, 8, 8),
        lambda: nn.Conv2d(3, 8, 3, padding=1),
    ),
)


def export(family: Family, blocks: int, strict: bool = False) -> torch.fx.GraphModule:
    torch.manual_seed(0)
    net = nn.Sequential(family.stem(), *[family.block() for _ in range(blocks)]).eval()
    return torch.export.export(net, (family.example(),), strict=strict).module()


def blocks_for(family: Family, nodes: int) -> int:
    """The number of blocks whose export has about ``nodes`` nodes."""
    one, two = (len(export(family, b).graph.nodes) for b in (1, 2))
    return max(1, round((nodes - (one - (two - one))) / (two - one)))


def exported(
    family: Family, nodes: int, strict: bool = False
) -> tuple[torch.fx.GraphModule, torch.Tensor]:
    """The family's model of about ``nodes`` nodes (as a non-strict export counts them),
    exported (``strict``: by torch.export's strict tracer), and its example input."""
    return export(family, blocks_for(family, nodes), strict), family.example()
