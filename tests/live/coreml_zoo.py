"""Models for ExecuTorch's CoreMLQuantizer against generated/coreml_quantizer.py's.

    python -m tests.live.vendor_zoo coreml [MODEL ...]

Conv (1d to 3d) and linear alone, with an activation of each kind (the relus affine,
tanh and sigmoid fixed, relu6 as hardtanh(0, 6)), with a batch norm (a training model,
``TRAIN``) and both; add, mul and matmul with and without one, in place too, ``x + x``
and a scalar operand; a producer with a second user (no fusion); an activation before a
conv of the registry's earlier pattern (the registry's order decides its input's spec);
the pools and flatten after a quantized op and before one; a model with named and typed
submodules. Each under coremltools' configs (``SETUPS``: ``fn(cls)`` makes the quantizer):
ExecuTorch's test config, affine per-tensor, weights only, and module name and type
configs (one of them None: its nodes stay float).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tests.live.pt2e_support import Fn

F = nn.functional
r = torch.randn


def _ab(a: Any, b: Any) -> nn.Module:
    return Fn(lambda s, x: b(s.b(a(s.a(x)))), a=nn.Conv2d(3, 4, 3), b=nn.Conv2d(4, 4, 1))


def _typed() -> nn.Module:
    block = Fn(lambda s, x: F.relu(s.l(x)) + x, l=nn.Linear(8, 8))
    return Fn(lambda s, x: s.head(torch.sigmoid(s.blk(s.fc(x))) * x), fc=nn.Linear(8, 8), blk=block, head=nn.Linear(8, 4))  # fmt: skip


# (name, model factory, example inputs): a plain list.
ZOO: list[tuple[str, Any, tuple]] = [
    (
        "conv2d relu",
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv2d(3, 8, 3)),
        (r(1, 3, 8, 8),),
    ),
    ("conv1d relu6", lambda: Fn(lambda s, x: F.relu6(s.c(x)), c=nn.Conv1d(4, 4, 3)), (r(1, 4, 8),)),
    ("conv3d no bias", lambda: Fn(lambda s, x: s.c(x), c=nn.Conv3d(2, 2, 1, bias=False)), (r(1, 2, 3, 3, 3),)),  # fmt: skip
    ("conv bn", lambda: Fn(lambda s, x: s.bn(s.c(x)), c=nn.Conv2d(3, 4, 3), bn=nn.BatchNorm2d(4)), (r(2, 3, 6, 6),)),  # fmt: skip
    ("conv bn hardswish", lambda: Fn(lambda s, x: F.hardswish(s.bn(s.c(x))), c=nn.Conv2d(3, 4, 3), bn=nn.BatchNorm2d(4)), (r(2, 3, 6, 6),)),  # fmt: skip
    ("linear", lambda: Fn(lambda s, x: s.l(x), l=nn.Linear(8, 8)), (r(2, 8),)),
    ("linear hardtanh 0 6", lambda: Fn(lambda s, x: F.hardtanh(s.l(x), 0.0, 6.0), l=nn.Linear(8, 8)), (r(2, 8),)),  # fmt: skip
    ("linear tanh sigmoid", lambda: Fn(lambda s, x: torch.sigmoid(s.m(torch.tanh(s.l(x)))), l=nn.Linear(8, 8), m=nn.Linear(8, 8)), (r(2, 8),)),  # fmt: skip
    ("linear bn gelu", lambda: Fn(lambda s, x: F.gelu(s.bn(s.l(x))), l=nn.Linear(8, 8), bn=nn.BatchNorm1d(8)), (r(4, 8),)),  # fmt: skip
    (  # conv alone is tried before linear + sigmoid: its input spec is not sigmoid's (affine)
        "linear sigmoid conv1d",
        lambda: Fn(
            lambda s, x: s.c(torch.sigmoid(s.l(x))), l=nn.Linear(8, 8), c=nn.Conv1d(4, 4, 1)
        ),
        (r(1, 4, 8),),
    ),
    ("tanh before relu conv", lambda: _ab(torch.tanh, F.relu), (r(1, 3, 8, 8),)),
    ("relu_ leaky elu", lambda: _ab(lambda x: F.relu(x, inplace=True), lambda x: F.elu(F.leaky_relu(x))), (r(1, 3, 8, 8),)),  # fmt: skip
    ("conv with two users", lambda: Fn(lambda s, x: (lambda y: F.relu(y) + y)(s.c(x)), c=nn.Conv2d(3, 3, 1)), (r(1, 3, 4, 4),)),  # fmt: skip
    ("add relu", lambda: Fn(lambda s, x, y: F.relu(x + y)), (r(2, 8), r(2, 8))),
    ("add_ relu_", lambda: Fn(lambda s, x, y: F.relu((x * 1).add_(y), inplace=True)), (r(2, 8), r(2, 8))),  # fmt: skip
    ("mul sigmoid scalar", lambda: Fn(lambda s, x, y: torch.sigmoid(x * y) * 2.0), (r(2, 8), r(2, 8))),  # fmt: skip
    ("x + x", lambda: Fn(lambda s, x: F.silu(x + x) * x), (r(2, 8),)),
    ("matmul gelu", lambda: Fn(lambda s, x, y: F.gelu(torch.matmul(x, y)) @ y), (r(2, 4, 4), r(2, 4, 4))),  # fmt: skip
    ("pools flatten", lambda: Fn(lambda s, x: torch.flatten(s.p(F.avg_pool2d(F.max_pool2d(s.c(x), 2), 1)), 1), c=nn.Conv2d(3, 4, 3), p=nn.AdaptiveAvgPool2d(2)), (r(1, 3, 10, 10),)),  # fmt: skip
    ("mean maxpool1d", lambda: Fn(lambda s, x: s.l(F.max_pool1d(s.c(x), 2).mean(-1)), c=nn.Conv1d(4, 4, 3), l=nn.Linear(4, 2)), (r(1, 4, 9),)),  # fmt: skip
    ("pool first", lambda: Fn(lambda s, x: s.c(s.p(x)), p=nn.MaxPool2d(2), c=nn.Conv2d(3, 3, 1)), (r(1, 3, 8, 8),)),  # fmt: skip
    ("typed and named", _typed, (r(2, 8),)),
]

# Models exported in training mode (their batch norms as torch.export keeps them).
TRAIN = {"conv bn", "conv bn hardswish", "linear bn gelu"}


def _config(**kw: Any) -> Any:
    from coremltools.optimize.torch.quantization.quantization_config import (
        ModuleLinearQuantizerConfig,
    )

    return ModuleLinearQuantizerConfig(**kw)


def _test_config() -> Any:
    """ExecuTorch's test_coreml_quantizer.py's config."""
    from coremltools.optimize.torch.quantization.quantization_config import (
        LinearQuantizerConfig,
    )

    g = {"quantization_scheme": "symmetric", "milestones": [0, 0, 10, 10]}
    g |= {"activation_dtype": torch.quint8, "weight_dtype": torch.qint8, "weight_per_channel": True}  # fmt: skip
    return LinearQuantizerConfig.from_dict({"global_config": g})


def _with(make: Any) -> Any:
    def setup(cls: Any) -> Any:
        from coremltools.optimize.torch.quantization.quantization_config import (
            LinearQuantizerConfig,
        )

        return cls(make(LinearQuantizerConfig))

    return setup


def _scoped(L: Any) -> Any:
    c = L(global_config=_config())
    c.set_module_name("fc", _config(quantization_scheme="affine", weight_per_channel=False))
    c.set_module_name("b", None)
    c.set_module_type(nn.Linear, _config(activation_dtype=torch.float32))
    return c.set_module_type(nn.Conv1d, _config(weight_dtype=torch.float32))


# name -> fn(quantizer class) -> the quantizer configured (its constructor takes the config).
SETUPS: dict[str, Any] = {
    "test config": lambda cls: cls(_test_config()),
    "affine per tensor": _with(lambda L: L(global_config=_config(quantization_scheme="affine", weight_per_channel=False))),  # fmt: skip
    "weights only": _with(lambda L: L(global_config=_config(activation_dtype=torch.float32))),
    "name and type": _with(_scoped),
}
CONSTRUCTS = True


def prepare() -> None:
    """ExecuTorch's pattern graphs traced once per process, for the comparison's speed: the
    graphs its annotate traces at every call, each handed out as a copy (its matcher
    rewrites the graph it is given). The shipped tests and the benchmark run it unpatched."""
    import copy
    import functools

    from executorch.backends.apple.coreml.quantizer import _coreml_quantizer_utils as u

    for name in [n for n in dir(u) if n.startswith("get_") and n.endswith("_pattern")]:
        fn = getattr(u, name)
        if not hasattr(fn, "cache_info"):
            cached = functools.lru_cache(None)(fn)
            setattr(u, name, functools.wraps(fn)(lambda *a, c=cached, **k: copy.deepcopy(c(*a, **k))))  # fmt: skip
            getattr(u, name).cache_info = cached.cache_info
