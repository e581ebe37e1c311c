"""The probe zoo: small graphs that show what a PT2E quantizer annotates, and under which conditions.

A probe is a named model and its example inputs, built on demand (nothing is
exported at import). Families:

* ``op``: each op of bcfg's ATen table (``semantics/aten_ops.py``) alone on a
  graph input, and after a conv or linear (whose output a quantizer may have
  quantized: shared-observer ops propagate only then);
* ``chain``: the fused chains the specs write (conv / linear / add / mul / matmul
  then an activation; conv + batch norm (+ relu) in train mode for QAT);
* ``sweep``: what production quantizers' checks read: rank, channels-last
  strides, groups, dilation, padding, bias present or absent, broadcast and
  scalar operands, int and float operands, dynamic batch, fan-out, cat of a
  node twice, the model's input and output;
* ``context``: shared-observer ops in a row, cat of quantized and unquantized
  inputs, residual blocks.

``export_probe(probe, strict)`` exports a probe (seeded) and strips torch's
``_guards_fn`` node (torch >= 2.12), which transforms of real quantizers choke on.
``random_models(n, seed)`` composes probes' units into larger graphs for proofs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Build = Callable[[], tuple[Any, tuple[Any, ...]]]


@dataclass(frozen=True)
class Probe:
    """One probe: ``build()`` returns ``(model, example_inputs)``; ``train``: exported in train
    mode (QAT graphs keep batch norm); ``dynamic``: the batch dimension is exported dynamic."""

    name: str
    family: str
    build: Build
    train: bool = False
    dynamic: bool = False


# ------------------------------------------------------------------ pieces


def _fn(forward: Callable[..., Any], **modules: Any) -> Any:
    """A module whose forward is ``forward(self, *inputs)``; keyword modules become submodules."""
    import torch.nn as nn

    class Fn(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for name, mod in modules.items():
                setattr(self, name, mod)

        def forward(self, *inputs: Any) -> Any:
            return forward(self, *inputs)

    return Fn()


def _x(*shape: int, channels_last: bool = False) -> Any:
    import torch

    x = torch.randn(*shape)
    return x.to(memory_format=torch.channels_last) if channels_last else x


# An op applied to a tensor of a given rank: (rank, function of (self, x), modules factory).
Unary = tuple[int, Callable[..., Any], Callable[[], dict[str, Any]]]


def _unaries() -> dict[str, Unary]:
    """Ops of one activation input, by name: the ATen table's activations, pools, views,
    norms and weighted ops."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    none: Callable[[], dict[str, Any]] = dict
    return {
        "conv1d": (3, lambda s, x: s.m(x), lambda: {"m": nn.Conv1d(4, 4, 3, padding=1)}),
        "conv2d": (4, lambda s, x: s.m(x), lambda: {"m": nn.Conv2d(4, 4, 3, padding=1)}),
        "conv3d": (5, lambda s, x: s.m(x), lambda: {"m": nn.Conv3d(4, 4, 1)}),
        "conv_transpose1d": (3, lambda s, x: s.m(x), lambda: {"m": nn.ConvTranspose1d(4, 4, 1)}),
        "conv_transpose2d": (4, lambda s, x: s.m(x), lambda: {"m": nn.ConvTranspose2d(4, 4, 1)}),
        "linear": (2, lambda s, x: s.m(x), lambda: {"m": nn.Linear(4, 4)}),
        "layer_norm": (3, lambda s, x: s.m(x), lambda: {"m": nn.LayerNorm(8)}),
        "group_norm": (4, lambda s, x: s.m(x), lambda: {"m": nn.GroupNorm(2, 4)}),
        "batch_norm": (4, lambda s, x: s.m(x), lambda: {"m": nn.BatchNorm2d(4)}),
        "relu": (4, lambda s, x: F.relu(x), none),
        "relu_": (4, lambda s, x: torch.relu_(x.clone()), none),
        "hardtanh": (4, lambda s, x: F.hardtanh(x, -1.0, 1.0), none),
        "relu6": (4, lambda s, x: nn.functional.relu6(x), none),
        "hardswish": (4, lambda s, x: F.hardswish(x), none),
        "hardsigmoid": (4, lambda s, x: F.hardsigmoid(x), none),
        "sigmoid": (4, lambda s, x: torch.sigmoid(x), none),
        "tanh": (4, lambda s, x: torch.tanh(x), none),
        "silu": (4, lambda s, x: F.silu(x), none),
        "gelu": (4, lambda s, x: F.gelu(x), none),
        "leaky_relu": (4, lambda s, x: F.leaky_relu(x, 0.1), none),
        "elu": (4, lambda s, x: F.elu(x), none),
        "softmax": (4, lambda s, x: F.softmax(x, -1), none),
        "prelu": (4, lambda s, x: s.m(x), lambda: {"m": nn.PReLU(4)}),
        "clamp": (4, lambda s, x: torch.clamp(x, -2.0, 2.0), none),
        "max_pool2d": (4, lambda s, x: F.max_pool2d(x, 2), none),
        "avg_pool2d": (4, lambda s, x: F.avg_pool2d(x, 2), none),
        "adaptive_avg_pool2d": (4, lambda s, x: F.adaptive_avg_pool2d(x, 1), none),
        "mean": (4, lambda s, x: x.mean((2, 3), keepdim=True), none),
        "flatten": (4, lambda s, x: torch.flatten(x, 1), none),
        "view": (4, lambda s, x: x.view(x.shape[0], -1), none),
        "reshape": (4, lambda s, x: x.reshape(x.shape[0], 4, -1), none),
        "permute": (4, lambda s, x: x.permute(0, 2, 3, 1), none),
        "transpose": (4, lambda s, x: x.transpose(1, 2), none),
        "squeeze": (4, lambda s, x: x[:, :1].squeeze(1), none),
        "unsqueeze": (4, lambda s, x: x.unsqueeze(1), none),
        "chunk": (4, lambda s, x: torch.chunk(x, 2, 1)[0], none),
        "slice": (4, lambda s, x: x[:, 1:3], none),
        "dropout": (4, lambda s, x: F.dropout(x, 0.5, False), none),
        "upsample_nearest2d": (4, lambda s, x: F.interpolate(x, scale_factor=2.0), none),
        "pad": (4, lambda s, x: F.pad(x, (1, 1)), none),
    }


_SHAPES = {2: (2, 4), 3: (2, 4, 8), 4: (1, 4, 8, 8), 5: (1, 4, 4, 4, 4)}

# Producers a unit is put after: an op whose output a quantizer may have quantized.
_PRODUCER = {2: "linear", 3: "conv1d", 4: "conv2d", 5: "conv3d"}


def _unary_probe(name: str, family: str, op: str, after: str | None) -> Probe:
    rank, forward, modules = _unaries()[op]
    if after is not None:
        rank = _unaries()[after][0]  # the producer keeps its input's rank

    def build() -> tuple[Any, tuple[Any, ...]]:
        mods = modules()
        if after is None:
            return _fn(forward, **mods), (_x(*_SHAPES[rank]),)
        _, first, first_mods = _unaries()[after]
        fm = first_mods()
        return (
            _fn(lambda s, x: forward(s, first(_Sub(s.p), x)), p=_fn(lambda s, x: x, **fm), **mods),
            (_x(*_SHAPES[rank]),),
        )

    return Probe(name, family, build)


class _Sub:
    """The producer's modules seen as ``s.m`` (its own namespace), not the unit's."""

    def __init__(self, holder: Any) -> None:
        self.m = getattr(holder, "m", None)


def _binary(
    name: str, family: str, forward: Callable[..., Any], shapes: tuple, after: bool
) -> Probe:
    """An op of two inputs (or one and a constant), on graph inputs or after two convs."""
    import torch.nn as nn

    def build() -> tuple[Any, tuple[Any, ...]]:
        inputs = tuple(_x(*s) for s in shapes)
        if not after:
            return _fn(forward), inputs
        return (
            _fn(
                lambda s, *xs: forward(s, *[c(x) for c, x in zip((s.a, s.b), xs)]),
                a=nn.Conv2d(4, 4, 1) if len(shapes[0]) == 4 else nn.Linear(4, 4),
                b=nn.Conv2d(4, 4, 1) if len(shapes[-1]) == 4 else nn.Linear(4, 4),
            ),
            inputs,
        )

    return Probe(name, family, build)


def _binaries() -> dict[str, tuple[Callable[..., Any], tuple]]:
    import torch

    s4, s2 = (1, 4, 8, 8), (2, 4)
    return {
        "add": (lambda s, a, b: a + b, (s4, s4)),
        "add_broadcast_channel": (lambda s, a, b: a + b[:, :, :1, :1], (s4, s4)),
        "add_": (lambda s, a, b: a.clone().add_(b), (s4, s4)),
        "sub": (lambda s, a, b: a - b, (s4, s4)),
        "mul": (lambda s, a, b: a * b, (s4, s4)),
        "mul_broadcast": (lambda s, a, b: a * b.mean(1, keepdim=True), (s4, s4)),
        "div": (lambda s, a, b: a / (b.abs() + 1), (s4, s4)),
        "matmul": (lambda s, a, b: torch.matmul(a, b.transpose(-1, -2)), (s4, s4)),
        "bmm": (lambda s, a, b: torch.bmm(a[0], b[0]), (s4, s4)),
        "cat": (lambda s, a, b: torch.cat([a, b], 1), (s4, s4)),
        "cat3": (lambda s, a, b: torch.cat([a, b, a], 1), (s4, s4)),
        "stack": (lambda s, a, b: torch.stack([a, b], 1), (s4, s4)),
        "add_linear": (lambda s, a, b: a + b, (s2, s2)),
    }


def _scalars() -> dict[str, tuple[Callable[..., Any], tuple]]:
    s4 = (1, 4, 8, 8)
    return {
        "add_scalar": (lambda s, a: a + 0.5, (s4,)),
        "add_int_scalar": (lambda s, a: a + 2, (s4,)),
        "add_large_scalar": (lambda s, a: a + 1e20, (s4,)),
        "mul_scalar": (lambda s, a: a * 0.5, (s4,)),
        "sub_scalar": (lambda s, a: a - 1.0, (s4,)),
        "div_scalar": (lambda s, a: a / 3.0, (s4,)),
        "rsub_scalar": (lambda s, a: 1.0 - a, (s4,)),
    }


_HEADS = ("conv1d", "conv2d", "linear", "conv_transpose2d")
_ACTS = (
    "relu", "relu_", "hardtanh", "relu6", "hardswish", "hardsigmoid", "sigmoid", "tanh",
    "clamp", "silu", "gelu", "leaky_relu",
)  # fmt: skip


def _sweeps() -> dict[str, Build]:
    """Shapes and arguments production checks read."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def mod(factory: Callable[[], Any], *shape: int, cl: bool = False) -> Build:
        return lambda: (factory(), (_x(*shape, channels_last=cl),))

    w = torch.randn(4, 4, 3, 3)
    return {
        "conv2d_channels_last": mod(lambda: nn.Conv2d(4, 4, 3), 1, 4, 8, 8, cl=True),
        "conv2d_no_bias": mod(lambda: nn.Conv2d(4, 4, 3, bias=False), 1, 4, 8, 8),
        "conv2d_depthwise": mod(lambda: nn.Conv2d(4, 4, 3, groups=4), 1, 4, 8, 8),
        "conv2d_grouped": mod(lambda: nn.Conv2d(4, 8, 3, groups=2), 1, 4, 8, 8),
        "conv2d_dilated": mod(lambda: nn.Conv2d(4, 4, 3, dilation=2), 1, 4, 8, 8),
        "conv2d_strided": mod(lambda: nn.Conv2d(4, 4, 3, stride=2), 1, 4, 8, 8),
        "conv2d_padding_same": mod(lambda: nn.Conv2d(4, 4, 3, padding="same"), 1, 4, 8, 8),
        "conv2d_batch2": mod(lambda: nn.Conv2d(4, 4, 3), 2, 4, 8, 8),
        "conv2d_functional_weight_input": lambda: (
            _fn(lambda s, x, w: F.conv2d(x, w)),
            (_x(1, 4, 8, 8), w.clone()),
        ),
        "conv1d_no_bias": mod(lambda: nn.Conv1d(4, 4, 3, bias=False), 2, 4, 8),
        "conv_transpose2d_no_bias": mod(
            lambda: nn.ConvTranspose2d(4, 4, 3, bias=False), 1, 4, 8, 8
        ),
        "conv_transpose2d_channels_last": mod(
            lambda: nn.ConvTranspose2d(4, 4, 3), 1, 4, 8, 8, cl=True
        ),
        "linear_no_bias": mod(lambda: nn.Linear(4, 4, bias=False), 2, 4),
        "linear_rank3": mod(lambda: nn.Linear(8, 4), 2, 4, 8),
        "linear_rank4": mod(lambda: nn.Linear(8, 4), 1, 2, 4, 8),
        "linear_weight_input": lambda: (
            _fn(lambda s, x, w: F.linear(x, w)),
            (_x(2, 4), _x(4, 4)),
        ),
        "embedding": lambda: (nn.Embedding(10, 4), (torch.tensor([[1, 2, 3]]),)),
        "int_add": lambda: (_fn(lambda s, x: x.argmax(1) + x.argmax(1)), (_x(2, 4),)),
        **_contexts(),
    }


def _contexts() -> dict[str, Build]:
    """Ops in the contexts production checks read: fan-out, a module called twice, shared
    ops between quantized ones, cat, residual adds, fixed-qparams outputs."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    return {
        "fan_out": lambda: (
            _fn(lambda s, x: (lambda y: (F.relu(y), y + 1.0))(s.c(x)), c=nn.Conv2d(4, 4, 1)),
            (_x(1, 4, 8, 8),),
        ),
        "same_module_twice": lambda: (
            _fn(lambda s, x: s.l(s.l(x)), l=nn.Linear(4, 4)),
            (_x(2, 4),),
        ),
        "view_chain": lambda: (
            _fn(
                lambda s, x: s.b(s.a(x).view(2, 2, 2).permute(0, 2, 1).reshape(2, 4)),
                a=nn.Linear(4, 4),
                b=nn.Linear(4, 4),
            ),
            (_x(2, 4),),
        ),
        "cat_of_input_and_conv": lambda: (
            _fn(lambda s, x: torch.cat([x, s.c(x)], 1), c=nn.Conv2d(4, 4, 1)),
            (_x(1, 4, 8, 8),),
        ),
        "cat_then_conv": lambda: (
            _fn(lambda s, x: s.d(torch.cat([s.a(x), s.b(x)], 1)), a=nn.Conv2d(4, 4, 1),
                b=nn.Conv2d(4, 4, 1), d=nn.Conv2d(8, 4, 1)),
            (_x(1, 4, 8, 8),),
        ),  # fmt: skip
        "residual": lambda: (
            _fn(lambda s, x: F.relu(s.b(F.relu(s.a(x))) + x), a=nn.Conv2d(4, 4, 3, padding=1),
                b=nn.Conv2d(4, 4, 3, padding=1)),
            (_x(1, 4, 8, 8),),
        ),  # fmt: skip
        "conv_add_relu": lambda: (
            _fn(lambda s, x, y: F.relu(s.c(x) + y), c=nn.Conv2d(4, 4, 1)),
            (_x(1, 4, 8, 8), _x(1, 4, 8, 8)),
        ),
        "softmax_after_linear": lambda: (
            _fn(lambda s, x: F.softmax(s.l(x), -1), l=nn.Linear(4, 4)),
            (_x(2, 4),),
        ),
        "sigmoid_mul": lambda: (
            _fn(lambda s, x: (lambda y: y * torch.sigmoid(y))(s.c(x)), c=nn.Conv2d(4, 4, 1)),
            (_x(1, 4, 8, 8),),
        ),
    }


def _train() -> dict[str, Build]:
    import torch.nn as nn

    def seq(*mods: Any) -> Any:
        return nn.Sequential(*mods)

    return {
        "qat_conv2d_bn": lambda: (seq(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4)), (_x(2, 4, 8, 8),)),
        "qat_conv2d_bn_relu": lambda: (
            seq(nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4), nn.ReLU()),
            (_x(2, 4, 8, 8),),
        ),
        "qat_conv1d_bn_relu": lambda: (
            seq(nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4), nn.ReLU()),
            (_x(2, 4, 8),),
        ),
    }


def _dynamic() -> dict[str, Build]:
    import torch.nn as nn

    return {
        "dynamic_batch_linear": lambda: (nn.Sequential(nn.Linear(4, 4), nn.ReLU()), (_x(2, 4),)),
        "dynamic_batch_conv2d": lambda: (
            nn.Sequential(nn.Conv2d(4, 4, 1), nn.ReLU()),
            (_x(2, 4, 8, 8),),
        ),
    }


def all_probes() -> list[Probe]:
    """Every probe, in a fixed order (names are unique)."""
    out: list[Probe] = []
    unaries = _unaries()
    for op, (rank, _, _) in unaries.items():
        out.append(_unary_probe(f"{op}", "op", op, None))
        if op not in _HEADS and not op.startswith("conv"):
            out.append(_unary_probe(f"{_PRODUCER[rank]}->{op}", "op", op, _PRODUCER[rank]))
    seen = {p.name for p in out}
    for head in _HEADS:
        for act in _ACTS:
            if f"{head}->{act}" not in seen:
                out.append(_unary_probe(f"{head}->{act}", "chain", act, head))
    for name, (forward, shapes) in _binaries().items():
        out.append(_binary(name, "op", forward, shapes, after=False))
        out.append(_binary(f"conv->{name}", "op", forward, shapes, after=True))
        out.append(_chain_act(f"conv->{name}->relu", forward, shapes))
    for name, (forward, shapes) in _scalars().items():
        out.append(_binary(name, "sweep", forward, shapes, after=False))
        out.append(_binary(f"conv->{name}", "sweep", forward, shapes, after=True))
    for name, build in _sweeps().items():
        out.append(Probe(name, "sweep", build))
    for name, build in _train().items():
        out.append(Probe(name, "chain", build, train=True))
    for name, build in _dynamic().items():
        out.append(Probe(name, "sweep", build, dynamic=True))
    names = [p.name for p in out]
    assert len(names) == len(set(names)), "probe names must be unique"
    return out


def _chain_act(name: str, forward: Callable[..., Any], shapes: tuple) -> Probe:
    import torch.nn.functional as F

    inner = _binary(name, "chain", forward, shapes, after=True)

    def build() -> tuple[Any, tuple[Any, ...]]:
        model, inputs = inner.build()
        return _fn(lambda s, *xs: F.relu(s.m(*xs)), m=model), inputs

    return Probe(name, "chain", build)


def select(names: list[str] | None = None, families: list[str] | None = None) -> list[Probe]:
    """The probes named (all when None), of the families given (all when None)."""
    probes = all_probes()
    if names is not None:
        known = {p.name for p in probes}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise KeyError(f"no probe named {', '.join(unknown)}")
        probes = [p for p in probes if p.name in names]
    if families is not None:
        probes = [p for p in probes if p.family in families]
    return probes


# ------------------------------------------------------------------ export


def strip_guards(gm: Any) -> Any:
    """Remove torch's ``_guards_fn`` call (torch >= 2.12 adds it to exported modules' graphs):
    transforms of real quantizers (Cortex-M's) raise on it; it computes nothing they read."""
    changed = False
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and node.target == "_guards_fn" and not node.users:
            gm.graph.erase_node(node)
            changed = True
    if changed:
        if hasattr(gm, "_guards_fn"):
            delattr(gm, "_guards_fn")
        gm.recompile()
    return gm


def export_model(model: Any, inputs: tuple[Any, ...], strict: bool, dynamic: bool = False) -> Any:
    """``torch.export.export(model, inputs, strict=strict).module()``, guards stripped."""
    import torch

    shapes = None
    if dynamic:
        batch = torch.export.Dim("batch", min=2, max=64)
        shapes = tuple({0: batch} if i == 0 else None for i in range(len(inputs)))
    return strip_guards(
        torch.export.export(model, inputs, strict=strict, dynamic_shapes=shapes).module()
    )


def export_probe(probe: Probe, strict: bool) -> tuple[Any, tuple[Any, ...]]:
    """A probe built (seed 0) and exported: (graph module, example inputs)."""
    import torch

    torch.manual_seed(0)
    model, inputs = probe.build()
    model.train(probe.train)
    return export_model(model, inputs, strict, probe.dynamic), inputs


# ------------------------------------------------------------------ random models


def random_models(count: int, seed: int = 0, length: int = 5) -> Iterator[tuple[str, Build]]:
    """``count`` random chains of the zoo's one-input ops (rank 4, after a conv), each
    ``length`` ops long with a residual add and a cat somewhere: seeded, so the same each run."""
    rng = random.Random(seed)
    rank4 = sorted(op for op, (rank, _, _) in _unaries().items() if rank == 4)
    keep_shape = [
        op for op in rank4
        if op not in {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "mean", "flatten",
                      "view", "reshape", "permute", "transpose", "squeeze", "unsqueeze",
                      "chunk", "slice", "upsample_nearest2d", "pad", "group_norm"}
    ]  # fmt: skip
    for i in range(count):
        ops = [rng.choice(keep_shape) for _ in range(length)]
        add_at, cat_at = rng.randrange(length), rng.randrange(length)
        yield f"random_{seed}_{i}:{'-'.join(ops)}", _random_build(ops, add_at, cat_at)


def _random_build(ops: list[str], add_at: int, cat_at: int) -> Build:
    def build() -> tuple[Any, tuple[Any, ...]]:
        import torch
        import torch.nn as nn

        table = _unaries()
        mods = {f"u{i}": _fn(lambda s, x: x, **table[op][2]()) for i, op in enumerate(ops)}
        mods["head"] = nn.Conv2d(4, 4, 1)
        mods["squash"] = nn.Conv2d(8, 4, 1)

        def forward(s: Any, x: Any) -> Any:
            y = s.head(x)
            for i, op in enumerate(ops):
                z = table[op][1](_Sub(getattr(s, f"u{i}")), y)
                if i == add_at:
                    z = z + y
                if i == cat_at:
                    z = s.squash(torch.cat([z, y], 1))
                y = z
            return y

        return _fn(forward, **mods), (_x(1, 4, 8, 8),)

    return build
