"""Example calls of every entry of the ATen mapping table, for ``test_aten_table``.

``EXAMPLES[key]`` lists the ways a model can use the entry: each a module
and its example inputs. Exporting all of them must emit exactly the overloads
the table lists for the entry (each at least once, nothing else).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.ao.nn.intrinsic as nni
import torch.nn as nn
import torch.nn.functional as F

from .pt2e_support import Fn

Example = tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...]]


def _x(*shape: int) -> tuple[torch.Tensor, ...]:
    return (torch.randn(*shape),)


X = {1: _x(1, 4, 8), 2: _x(1, 4, 8, 8), 3: _x(1, 4, 4, 4, 4)}


def mod(factory: Callable[[], nn.Module], inputs: tuple[torch.Tensor, ...]) -> Example:
    return (factory, inputs)


def fn(f: Callable[..., Any], inputs: tuple[torch.Tensor, ...], **mods: nn.Module) -> Example:
    return (lambda: Fn(f, **mods), inputs)


def method(name: str, inputs: tuple[torch.Tensor, ...], *args: Any) -> Example:
    return (lambda: Fn(lambda s, x: getattr(x, name)(*args)), inputs)


def _conv(n: int) -> dict[str, list[Example]]:
    conv = getattr(nn, f"Conv{n}d")
    convt = getattr(nn, f"ConvTranspose{n}d")
    w = torch.randn((4, 4) + (3,) * n)
    return {
        f"torch.nn.Conv{n}d": [
            mod(lambda: conv(4, 4, 3), X[n]),
            mod(lambda: conv(4, 4, 3, padding="same"), X[n]),
        ],
        f"torch.nn.functional.conv{n}d": [
            fn(lambda s, x: getattr(F, f"conv{n}d")(x, w), X[n]),
            fn(lambda s, x: getattr(F, f"conv{n}d")(x, w, padding="same"), X[n]),
        ],
        f"torch.nn.ConvTranspose{n}d": [mod(lambda: convt(4, 4, 3), X[n])],
        f"torch.nn.functional.conv_transpose{n}d": [
            fn(lambda s, x: getattr(F, f"conv_transpose{n}d")(x, w), X[n])
        ],
        f"torch.nn.BatchNorm{n}d": [mod(lambda: getattr(nn, f"BatchNorm{n}d")(4).eval(), X[n])],
        f"torch.nn.MaxPool{n}d": [mod(lambda: getattr(nn, f"MaxPool{n}d")(2), X[n])],
        f"torch.nn.functional.max_pool{n}d": [
            fn(lambda s, x: getattr(F, f"max_pool{n}d")(x, 2), X[n])
        ],
        f"torch.nn.AvgPool{n}d": [mod(lambda: getattr(nn, f"AvgPool{n}d")(2), X[n])],
        f"torch.nn.functional.avg_pool{n}d": [
            fn(lambda s, x: getattr(F, f"avg_pool{n}d")(x, 2), X[n])
        ],
        f"torch.nn.AdaptiveAvgPool{n}d": [
            mod(lambda: getattr(nn, f"AdaptiveAvgPool{n}d")(2), X[n])
        ],
        f"torch.nn.functional.adaptive_avg_pool{n}d": [
            fn(lambda s, x: getattr(F, f"adaptive_avg_pool{n}d")(x, 2), X[n])
        ],
        f"torch.ao.nn.intrinsic.ConvReLU{n}d": [
            mod(lambda: getattr(nni, f"ConvReLU{n}d")(conv(4, 4, 3), nn.ReLU()), X[n]),
            mod(
                lambda: getattr(nni, f"ConvReLU{n}d")(conv(4, 4, 3, padding="same"), nn.ReLU(True)),
                X[n],
            ),
        ],
        f"torch.ao.nn.intrinsic.ConvBn{n}d": [
            mod(
                lambda: getattr(nni, f"ConvBn{n}d")(
                    conv(4, 4, 3), getattr(nn, f"BatchNorm{n}d")(4)
                ).eval(),
                X[n],
            ),
            mod(
                lambda: getattr(nni, f"ConvBn{n}d")(
                    conv(4, 4, 3, padding="same"), getattr(nn, f"BatchNorm{n}d")(4)
                ).eval(),
                X[n],
            ),
        ],
        f"torch.ao.nn.intrinsic.ConvBnReLU{n}d": [
            mod(
                lambda: getattr(nni, f"ConvBnReLU{n}d")(
                    conv(4, 4, 3), getattr(nn, f"BatchNorm{n}d")(4), nn.ReLU()
                ).eval(),
                X[n],
            ),
            mod(
                lambda: getattr(nni, f"ConvBnReLU{n}d")(
                    conv(4, 4, 3, padding="same"), getattr(nn, f"BatchNorm{n}d")(4), nn.ReLU(True)
                ).eval(),
                X[n],
            ),
        ],
    }


x2, x4 = _x(2, 8), X[2]
pair = (torch.randn(2, 8), torch.randn(2, 8))
mm = (torch.randn(2, 8), torch.randn(8, 3))

EXAMPLES: dict[str, list[Example]] = {
    **_conv(1),
    **_conv(2),
    **_conv(3),
    "torch.nn.Linear": [
        mod(lambda: nn.Linear(8, 4), x2),
        mod(lambda: nn.Linear(8, 4, bias=False), x2),
    ],
    "torch.nn.functional.linear": [fn(lambda s, x, w: F.linear(x, w), (x2[0], torch.randn(4, 8)))],
    "torch.nn.functional.batch_norm": [
        fn(lambda s, x, m, v: F.batch_norm(x, m, v), (x4[0], torch.zeros(4), torch.ones(4)))
    ],
    "torch.nn.LayerNorm": [mod(lambda: nn.LayerNorm(8), x2)],
    "torch.nn.functional.layer_norm": [fn(lambda s, x: F.layer_norm(x, (8,)), x2)],
    "torch.nn.GroupNorm": [mod(lambda: nn.GroupNorm(2, 4), x4)],
    "torch.nn.Embedding": [mod(lambda: nn.Embedding(10, 4), (torch.tensor([[1, 2]]),))],
    "torch.nn.functional.embedding": [
        fn(lambda s, i, w: F.embedding(i, w), (torch.tensor([[1, 2]]), torch.randn(10, 4)))
    ],
    "torch.nn.ReLU": [mod(lambda: nn.ReLU(), x2), mod(lambda: nn.ReLU(inplace=True), x2)],
    "torch.nn.functional.relu": [
        fn(lambda s, x: F.relu(x), x2),
        fn(lambda s, x: F.relu(x, inplace=True), x2),
    ],
    "torch.relu": [fn(lambda s, x: torch.relu(x), x2)],
    "torch.nn.functional.relu_": [fn(lambda s, x: F.relu_(x), x2)],
    "torch.relu_": [fn(lambda s, x: torch.relu_(x), x2)],
    "relu": [method("relu", x2)],
    "relu_": [method("relu_", x2)],
    "torch.nn.ReLU6": [mod(lambda: nn.ReLU6(), x2), mod(lambda: nn.ReLU6(inplace=True), x2)],
    "torch.nn.Hardtanh": [
        mod(lambda: nn.Hardtanh(), x2),
        mod(lambda: nn.Hardtanh(inplace=True), x2),
    ],
    "torch.nn.functional.hardtanh": [
        fn(lambda s, x: F.hardtanh(x), x2),
        fn(lambda s, x: F.hardtanh(x, inplace=True), x2),
    ],
    "torch.nn.functional.hardtanh_": [fn(lambda s, x: F.hardtanh_(x), x2)],
    "torch.nn.functional.relu6": [fn(lambda s, x: F.relu6(x), x2)],
    "torch.nn.Hardswish": [mod(lambda: nn.Hardswish(), x2), mod(lambda: nn.Hardswish(True), x2)],
    "torch.nn.functional.hardswish": [
        fn(lambda s, x: F.hardswish(x), x2),
        fn(lambda s, x: F.hardswish(x, inplace=True), x2),
    ],
    "torch.nn.Hardsigmoid": [
        mod(lambda: nn.Hardsigmoid(), x2),
        mod(lambda: nn.Hardsigmoid(True), x2),
    ],
    "torch.nn.functional.hardsigmoid": [
        fn(lambda s, x: F.hardsigmoid(x), x2),
        fn(lambda s, x: F.hardsigmoid(x, inplace=True), x2),
    ],
    "torch.nn.Sigmoid": [mod(lambda: nn.Sigmoid(), x2)],
    "torch.sigmoid": [fn(lambda s, x: torch.sigmoid(x), x2)],
    "torch.nn.functional.sigmoid": [fn(lambda s, x: F.sigmoid(x), x2)],
    "sigmoid": [method("sigmoid", x2)],
    "sigmoid_": [method("sigmoid_", x2)],
    "torch.nn.Tanh": [mod(lambda: nn.Tanh(), x2)],
    "torch.tanh": [fn(lambda s, x: torch.tanh(x), x2)],
    "torch.nn.functional.tanh": [fn(lambda s, x: F.tanh(x), x2)],
    "tanh": [method("tanh", x2)],
    "tanh_": [method("tanh_", x2)],
    "torch.nn.SiLU": [mod(lambda: nn.SiLU(), x2), mod(lambda: nn.SiLU(True), x2)],
    "torch.nn.functional.silu": [
        fn(lambda s, x: F.silu(x), x2),
        fn(lambda s, x: F.silu(x, inplace=True), x2),
    ],
    "torch.nn.GELU": [mod(lambda: nn.GELU(), x2)],
    "torch.nn.functional.gelu": [fn(lambda s, x: F.gelu(x), x2)],
    "torch.nn.LeakyReLU": [
        mod(lambda: nn.LeakyReLU(), x2),
        mod(lambda: nn.LeakyReLU(inplace=True), x2),
    ],
    "torch.nn.functional.leaky_relu": [
        fn(lambda s, x: F.leaky_relu(x), x2),
        fn(lambda s, x: F.leaky_relu(x, inplace=True), x2),
    ],
    "torch.nn.ELU": [mod(lambda: nn.ELU(), x2), mod(lambda: nn.ELU(inplace=True), x2)],
    "torch.nn.functional.elu": [
        fn(lambda s, x: F.elu(x), x2),
        fn(lambda s, x: F.elu(x, inplace=True), x2),
    ],
    "torch.nn.Softmax": [mod(lambda: nn.Softmax(dim=1), x2)],
    "torch.nn.functional.softmax": [fn(lambda s, x: F.softmax(x, dim=1), x2)],
    "torch.nn.PReLU": [mod(lambda: nn.PReLU(), x2)],
    "torch.clamp": [fn(lambda s, x: torch.clamp(x, -1.0, 1.0), x2)],
    "clamp": [method("clamp", x2, -1.0, 1.0)],
    "torch.add": [
        fn(lambda s, x, y: torch.add(x, y), pair),
        fn(lambda s, x: torch.add(x, 1.0), x2),
    ],
    "operator.add": [fn(lambda s, x, y: x + y, pair), fn(lambda s, x: x + 1.0, x2)],
    "operator.iadd": [fn(lambda s, x, y: operator.iadd(x, y), pair)],
    "add": [method("add", pair[:1], pair[1])],
    "add_": [method("add_", pair[:1], pair[1])],
    "torch.mul": [
        fn(lambda s, x, y: torch.mul(x, y), pair),
        fn(lambda s, x: torch.mul(x, 0.5), x2),
    ],
    "operator.mul": [fn(lambda s, x, y: x * y, pair)],
    "operator.imul": [fn(lambda s, x, y: operator.imul(x, y), pair)],
    "mul": [method("mul", pair[:1], pair[1])],
    "mul_": [method("mul_", pair[:1], pair[1])],
    "torch.matmul": [fn(lambda s, x, y: torch.matmul(x, y), mm)],
    "operator.matmul": [fn(lambda s, x, y: x @ y, mm)],
    "matmul": [method("matmul", mm[:1], mm[1])],
    "torch.bmm": [
        fn(lambda s, x, y: torch.bmm(x, y), (torch.randn(2, 3, 4), torch.randn(2, 4, 5)))
    ],
    "torch.cat": [fn(lambda s, x, y: torch.cat([x, y], 1), pair)],
    "torch.concat": [fn(lambda s, x, y: torch.concat([x, y], 1), pair)],
    "torch.stack": [fn(lambda s, x, y: torch.stack([x, y]), pair)],
    "torch.mean": [fn(lambda s, x: torch.mean(x), x2), fn(lambda s, x: torch.mean(x, 1), x2)],
    "mean": [method("mean", x2), method("mean", x2, 1)],
    "torch.flatten": [fn(lambda s, x: torch.flatten(x, 1), x4)],
    "torch.nn.Flatten": [mod(lambda: nn.Flatten(), x4)],
    "flatten": [method("flatten", x4, 2)],
    "view": [method("view", x2, 16)],
    "torch.reshape": [fn(lambda s, x: torch.reshape(x, (16,)), x2)],
    "reshape": [method("reshape", x2, 16)],
    "torch.permute": [fn(lambda s, x: torch.permute(x, (1, 0)), x2)],
    "permute": [method("permute", x2, 1, 0)],
    "torch.transpose": [fn(lambda s, x: torch.transpose(x, 0, 1), x2)],
    "transpose": [method("transpose", x2, 0, 1)],
    "torch.squeeze": [
        fn(lambda s, x: torch.squeeze(x), _x(1, 8)),
        fn(lambda s, x: torch.squeeze(x, 0), _x(1, 8)),
        fn(lambda s, x: torch.squeeze(x, (0, 2)), _x(1, 8, 1)),
    ],
    "squeeze": [
        method("squeeze", _x(1, 8)),
        method("squeeze", _x(1, 8), 0),
        method("squeeze", _x(1, 8, 1), (0, 2)),
    ],
    "torch.unsqueeze": [fn(lambda s, x: torch.unsqueeze(x, 0), x2)],
    "unsqueeze": [method("unsqueeze", x2, 0)],
    "torch.chunk": [fn(lambda s, x: torch.chunk(x, 2, 1)[0], x2)],
    "chunk": [method("chunk", x2, 2, 1)],
    "torch.nn.Dropout": [mod(lambda: nn.Dropout().eval(), x2)],
    "torch.nn.functional.dropout": [fn(lambda s, x: F.dropout(x, training=False), x2)],
    "torch.ao.nn.intrinsic.LinearReLU": [
        mod(lambda: nni.LinearReLU(nn.Linear(8, 8), nn.ReLU()), x2),
        mod(lambda: nni.LinearReLU(nn.Linear(8, 8), nn.ReLU(inplace=True)), x2),
    ],
    "torch.ao.nn.intrinsic.BNReLU2d": [
        mod(lambda: nni.BNReLU2d(nn.BatchNorm2d(4), nn.ReLU()).eval(), x4),
        mod(lambda: nni.BNReLU2d(nn.BatchNorm2d(4), nn.ReLU(True)).eval(), x4),
    ],
    "torch.ao.nn.intrinsic.BNReLU3d": [
        mod(lambda: nni.BNReLU3d(nn.BatchNorm3d(4), nn.ReLU()).eval(), X[3]),
        mod(lambda: nni.BNReLU3d(nn.BatchNorm3d(4), nn.ReLU(True)).eval(), X[3]),
    ],
}
