"""What the PT2E tests share: a zoo of models, a canonical dump of annotations, a comparison.

``dump(gm)`` turns ``node.meta["quantization_annotation"]`` into plain data
that compares by value: every annotated node in graph order, its input specs
in insertion order (the order prepare_pt2e creates observers in) and its
output spec. A spec becomes ``("qspec", dtype, quant_min, quant_max,
qscheme, ch_axis, is_dynamic, ctr)``, where ``ctr`` is the observer or
fake-quant constructor with its ``with_args`` keywords (nested constructors
included, floats exact); a shared spec names the node or edge it shares;
fixed-qparams and derived specs likewise. Spec objects are never compared by
identity: torchao's config getter is cached, a generated quantizer's is not.

``compare(...)`` exports a model (strict or not), runs torchao's
XNNPACKQuantizer and another quantizer through the real prepare_pt2e (or
prepare_qat_pt2e), snapshots the annotations right after ``annotate``,
calibrates both on the same seeded data, converts, and returns every
difference: of annotations node by node, of converted outputs and of the
converted graphs' ops.
"""

from __future__ import annotations

import copy
import importlib
import sys
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from generator.emit.pt2e import render_quantizer, render_runtime

# The pattern cache (pattern_cache and its parts) is the probe run's too: generator's.
from generator.live.probe.traces import (  # noqa: F401
    _TRACER_USERS,
    _TRACES,
    cached,
    pattern_cache,
    pattern_key,
)
from generator.semantics.driver import resolve_specs
from generator.semantics.model import quantizer_module

from .pt2e_dump import KEY, canon_ctr, canon_spec, differences, dump  # noqa: F401

warnings.filterwarnings("ignore", message=".*deprecated.*")

# get_symmetric_quantization_config(...) forms.
CONFIGS: dict[str, dict[str, bool]] = {
    "per_channel": {"is_per_channel": True},
    "per_tensor": {"is_per_channel": False},
    "dynamic": {"is_per_channel": True, "is_dynamic": True},
    "qat": {"is_per_channel": True, "is_qat": True},
    "qat_per_tensor": {"is_per_channel": False, "is_qat": True},
}


def symmetric_config(name: str) -> Any:
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    return get_symmetric_quantization_config(**CONFIGS[name])


# ---------------------------------------------------------------------- zoo


class ConvBnReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class ConvBn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=False)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(self.conv(x))


class ResidualAddReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = F.relu(self.conv1(x))
        return self.relu(self.conv2(y) + x)


class LinearStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 32, bias=False)
        self.fc3 = nn.Linear(32, 8)

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class CatPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 1)
        self.conv2 = nn.Conv2d(3, 4, 1)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        y = torch.cat([self.conv1(x), self.conv2(x)], dim=1)
        z = F.max_pool2d(self.pool(y), 2)
        a = self.gap(z)
        b = F.adaptive_avg_pool2d(z, (1, 1))
        return torch.flatten(a + b, 1), F.avg_pool2d(y, 2)


class Mul(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 1)
        self.conv2 = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        y = F.relu(self.conv1(x) * self.conv2(x))  # mul + relu
        z = y * 0.5  # a scalar operand becomes a tensor constant
        return z * y, z + 1e20  # the large constant rules the add out


class HardtanhReLU6(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.act1 = nn.Hardtanh(-1.0, 1.0)
        self.conv2 = nn.Conv2d(4, 4, 3)
        self.act2 = nn.ReLU6()
        self.conv3 = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = self.act1(self.conv1(x))
        x = self.act2(self.conv2(x))
        x = F.relu6(self.conv3(x))
        return F.hardtanh(x, 0.0, 6.0, inplace=True)


class Depthwise(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dw = nn.Conv2d(8, 8, 3, groups=8, padding=1)
        self.pw = nn.Conv2d(8, 16, 1)
        self.relu = nn.ReLU()
        self.c1 = nn.Conv1d(16, 16, 3, groups=16)

    def forward(self, x):
        x = self.pw(self.relu(self.dw(x)))
        return self.c1(x.flatten(2))


class ViewChain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x).view(2, 32).reshape(2, 4, 8).permute(0, 2, 1).transpose(1, 2)
        y = torch.squeeze(y.contiguous().view(8, 8).unsqueeze(0), 0)[1:5]
        return self.fc2(y.mean(dim=0, keepdim=True))


class ViewFirst(nn.Module):
    """linear -> view -> permute -> flatten -> view -> squeeze -> linear: shared ops in a row."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x).view(2, 2, 4).permute(0, 2, 1).flatten(1)
        return self.fc2(torch.squeeze(y.view(1, 2, 8), 0))


class DynLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Nested(nn.Module):
    """For the module_name / module_type / operator_type scopes."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU())
        self.sub = LinearStack()
        self.fc = nn.Linear(27, 16)

    def forward(self, x):
        y = self.fc(self.block(x).flatten(1))
        return self.sub(y) + 1.0


# name: (model class, example inputs, train mode)
ZOO: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...], bool]] = {
    "conv_bn_relu": (ConvBnReLU, (torch.randn(2, 3, 8, 8),), False),
    "residual_add_relu": (ResidualAddReLU, (torch.randn(2, 4, 8, 8),), False),
    "linear_stack": (LinearStack, (torch.randn(2, 16),), False),
    "cat_pool": (CatPool, (torch.randn(2, 3, 16, 16),), False),
    "mul": (Mul, (torch.randn(2, 3, 4, 4),), False),
    "hardtanh_relu6": (HardtanhReLU6, (torch.randn(2, 3, 12, 12),), False),
    "depthwise": (Depthwise, (torch.randn(2, 8, 6, 6),), False),
    "view_chain": (ViewChain, (torch.randn(2, 4, 8),), False),
    "view_first": (ViewFirst, (torch.randn(2, 8),), False),
    "dyn_linear": (DynLinear, (torch.randn(2, 16),), False),
    "nested": (Nested, (torch.randn(2, 3, 3, 3),), False),
    "qat_conv_bn_relu": (ConvBnReLU, (torch.randn(2, 3, 8, 8),), True),
    "qat_conv_bn": (ConvBn, (torch.randn(2, 3, 8, 8),), True),
}


def export(name: str, strict: bool) -> tuple[torch.fx.GraphModule, tuple[torch.Tensor, ...]]:
    """The zoo model ``name`` (seeded), exported with ``strict``, as a GraphModule."""
    factory, args, train = ZOO[name]
    torch.manual_seed(0)
    model = factory()
    model.train(train)
    return torch.export.export(model, args, strict=strict).module(), args


class Fn(nn.Module):
    """A module whose forward is ``fn(self, *inputs)``; keyword modules become submodules."""

    def __init__(self, fn: Callable[..., Any], **modules: nn.Module):
        super().__init__()
        for name, mod in modules.items():
            setattr(self, name, mod)
        self.fn = fn

    def forward(self, *inputs):
        return self.fn(self, *inputs)


_x4, _x3, _x2 = (torch.randn(1, 4, 8, 8),), (torch.randn(2, 4, 8),), (torch.randn(2, 8),)


def _lin() -> nn.Linear:
    return nn.Linear(8, 8)


def _conv(**kw: Any) -> nn.Conv2d:
    return nn.Conv2d(4, 4, kw.pop("k", 1), **kw)


# Matching edge cases (eval mode, per-channel config): name -> (model factory, inputs).
EDGES: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...]]] = {
    "conv used by relu and by add": (
        lambda: Fn(lambda s, x: (lambda y: F.relu(y) + y)(s.c(x)), c=_conv()),
        _x4,
    ),
    "conv2d.padding alone": (lambda: Fn(lambda s, x: s.c(x), c=_conv(k=3, padding="same")), _x4),
    "conv2d.padding + relu": (
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=_conv(k=3, padding="same")),
        _x4,
    ),
    "conv3d alone": (
        lambda: Fn(lambda s, x: s.c(x), c=nn.Conv3d(4, 4, 1)),
        (torch.randn(1, 4, 2, 2, 2),),
    ),
    "conv3d + relu": (
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv3d(4, 4, 1)),
        (torch.randn(1, 4, 2, 2, 2),),
    ),
    "conv_transpose2d alone": (lambda: Fn(lambda s, x: s.c(x), c=nn.ConvTranspose2d(4, 4, 3)), _x4),
    "conv_transpose2d + relu": (
        lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.ConvTranspose2d(4, 4, 3)),
        _x4,
    ),
    "conv + hardtanh_": (
        lambda: Fn(lambda s, x: s.a(s.c(x)), c=_conv(), a=nn.ReLU6(inplace=True)),
        _x4,
    ),
    "linear + relu_": (lambda: Fn(lambda s, x: F.relu(s.l(x), inplace=True), l=_lin()), _x2),
    "relu_ after maxpool": (
        lambda: Fn(lambda s, x: F.relu(F.max_pool2d(s.c(x), 2), inplace=True), c=_conv()),
        _x4,
    ),
    "relu after maxpool": (
        lambda: Fn(lambda s, x: F.relu(F.max_pool2d(s.c(x), 2)), c=_conv()),
        _x4,
    ),
    "x + x": (lambda: Fn(lambda s, x: (lambda y: y + y)(s.l(x)), l=_lin()), _x2),
    "add of int tensors": (lambda: Fn(lambda s, x: x.argmax(1) + x.argmax(1)), _x2),
    "add of an int scalar": (lambda: Fn(lambda s, x: s.l(x) + 2, l=_lin()), _x2),
    "add_ of a scalar": (lambda: Fn(lambda s, x: s.l(x).add_(2.0), l=_lin()), _x2),
    "add with alpha": (lambda: Fn(lambda s, x: torch.add(s.l(x), x, alpha=2), l=_lin()), _x2),
    "add of a large scalar": (lambda: Fn(lambda s, x: s.l(x) + 1e20, l=_lin()), _x2),
    "mul_ by a tensor": (lambda: Fn(lambda s, x: s.l(x).mul_(x), l=_lin()), _x2),
    "cat([a, a, b])": (
        lambda: Fn(lambda s, x: (lambda a: torch.cat([a, a, x], 1))(s.l(x)), l=_lin()),
        _x2,
    ),
    "cat of a placeholder first": (
        lambda: Fn(lambda s, x: torch.cat([x, s.l(x)], 1), l=_lin()),
        _x2,
    ),
    "torch.concat": (lambda: Fn(lambda s, x: torch.concat([x, s.l(x)], 1), l=_lin()), _x2),
    "view of a placeholder": (lambda: Fn(lambda s, x: s.l(x.view(2, 8)), l=_lin()), _x2),
    "linear -> reshape -> view": (
        lambda: Fn(lambda s, x: s.l(x).reshape(4, 4).view(16), l=_lin()),
        _x2,
    ),
    "mean.dim after conv": (lambda: Fn(lambda s, x: s.c(x).mean((2, 3)), c=_conv()), _x4),
    "conv -> adaptive_avg_pool2d": (
        lambda: Fn(lambda s, x: s.g(F.relu(s.c(x))), c=_conv(), g=nn.AdaptiveAvgPool2d(1)),
        _x4,
    ),
    "matmul": (lambda: Fn(lambda s, x: (lambda y: torch.matmul(y, y.t()))(s.l(x)), l=_lin()), _x2),
    "F.linear of a placeholder weight": (
        lambda: Fn(lambda s, x, w: F.linear(x, w)),
        (torch.randn(2, 8), torch.randn(4, 8)),
    ),
    "linear + batchnorm1d": (
        lambda: Fn(lambda s, x: s.bn(s.l(x)), l=_lin(), bn=nn.BatchNorm1d(8)),
        _x2,
    ),
}
# Where torchao itself is not deterministic (one module called twice under
# strict=False merges two source partitions and picks an output node from a set).
NONDETERMINISTIC = {("same AdaptiveAvgPool2d module twice", False)}
EDGES["same AdaptiveAvgPool2d module twice"] = (
    lambda: Fn(lambda s, x: s.g(x) + s.g(x * 2), g=nn.AdaptiveAvgPool2d(1)),
    _x4,
)


def _tied() -> nn.Module:
    """Two Linear modules sharing one weight Parameter, one after the other."""
    a, b = _lin(), _lin()
    b.weight = a.weight
    return Fn(lambda s, x: s.b(s.a(x)), a=a, b=b)


# Reused modules: XNNPACK quantizes a linear at every call (its check is the node
# alone) but declines a linear + relu or a conv whose weight an earlier match took.
EDGES.update(
    {
        "same Linear module twice": (lambda: Fn(lambda s, x: s.l(s.l(x)), l=_lin()), _x2),
        "same Linear module twice + relu": (
            lambda: Fn(lambda s, x: F.relu(s.l(F.relu(s.l(x)))), l=_lin()),
            _x2,
        ),
        "same Conv2d module twice": (lambda: Fn(lambda s, x: s.c(s.c(x)), c=_conv()), _x4),
        "same Conv2d module twice + relu": (
            lambda: Fn(lambda s, x: F.relu(s.c(F.relu(s.c(x)))), c=_conv()),
            _x4,
        ),
        "tied Linear weights": (_tied, _x2),
    }
)

# QAT and train-mode cases: (model factory, inputs, config form).
QAT_EDGES: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...], str]] = {
    "linear + relu": (lambda: nn.Sequential(_lin(), nn.ReLU()), _x2, "qat"),
    "conv1d + bn1d + relu_": (
        lambda: nn.Sequential(nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4), nn.ReLU(inplace=True)),
        _x3,
        "qat",
    ),
    "conv_transpose2d + bn": (
        lambda: nn.Sequential(nn.ConvTranspose2d(4, 4, 3), nn.BatchNorm2d(4)),
        _x4,
        "qat_per_tensor",
    ),
    "conv + bn + hardtanh": (
        lambda: nn.Sequential(_conv(k=3), nn.BatchNorm2d(4), nn.Hardtanh()),
        _x4,
        "qat_per_tensor",
    ),
    "dynamic linear": (lambda: nn.Sequential(_lin()), _x2, "qat_dynamic"),
    "same Conv2d twice, each + its BatchNorm2d": (
        lambda: Fn(
            lambda s, x: s.b2(s.c(s.b1(s.c(x)))),
            c=_conv(k=3, padding=1),
            b1=nn.BatchNorm2d(4),
            b2=nn.BatchNorm2d(4),
        ),
        _x4,
        "qat",
    ),
    "PTQ of a train-mode conv + bn": (
        lambda: nn.Sequential(_conv(k=3), nn.BatchNorm2d(4)),
        _x4,
        "per_channel",
    ),
}
CONFIGS["qat_dynamic"] = {"is_per_channel": True, "is_qat": True, "is_dynamic": True}


def export_edge(name: str, strict: bool) -> tuple[torch.fx.GraphModule, tuple, Any]:
    """An edge case exported: (graph module, inputs, config form)."""
    torch.manual_seed(0)
    if name in EDGES:
        factory, args = EDGES[name]
        model, config = factory().eval(), "per_channel"
    else:
        factory, args, config = QAT_EDGES[name]
        model = factory().train()
    return torch.export.export(model, args, strict=strict).module(), args, config


# ------------------------------------------------- generated from a test spec


def _entries(report: Any) -> list[dict[str, Any]]:
    return [e.__dict__ for e in report.entries]


def report_read_early_and_late(
    quantizer: Callable[[], Any],
    graph: Callable[[], Any],
    read: Callable[[Any], Any] = _entries,
    lazy: bool = True,
) -> tuple[Any, Any]:
    """A report read in ``validate`` (after annotate, before prepare_pt2e puts observers
    between the ops) and one read after prepare_pt2e, two quantizers made alike annotating two
    graphs made alike (``read``: what is read of a report; default its entries as dicts);
    ``lazy``: the report explains nothing before its first read (the composable and pairs
    bases'), else its float ops are explained as annotate ends, its matches kept for their
    entries (``report.Explained``: the modules and operators bases'): asserted."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    early, later = quantizer(), quantizer()
    got = []

    def validate(model: torch.fx.GraphModule) -> None:
        assert (type(early.last_report._later).__name__ != "Explained") == lazy
        got.append(read(early.last_report))
        type(early).validate(early, model)

    early.validate = validate
    prepare_pt2e(graph(), early)
    prepare_pt2e(graph(), later)
    return got[0], read(later.last_report)


def generate(tmp_path: Any, text: str, allow: tuple[str, ...] = ("torch", "operator", "tests")):
    """Generate the quantizer of the spec ``text`` into a package under tmp_path; its getter."""
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(text))
    (q,) = resolve_specs(tmp_path, [spec], allow).quantizers
    pkg = tmp_path / "gen_pt2e"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in render_runtime().items():
        (pkg / name).parent.mkdir(exist_ok=True)
        (pkg / name).write_text(text)
    (pkg / f"{quantizer_module(q.module)}.py").write_text(render_quantizer(q))
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module(f"gen_pt2e.{quantizer_module(q.module)}")
    finally:
        sys.path.remove(str(tmp_path))
    getter = getattr(module, f"get_{q.module}_quantizer")
    for name in [m for m in sys.modules if m.startswith("gen_pt2e")]:
        del sys.modules[name]
    return getter


# --------------------------------------------------------------- comparison


def recording(inner: Any) -> Any:
    """A quantizer that delegates to ``inner`` and keeps a dump of the annotations ``annotate`` made."""
    from torchao.quantization.pt2e.quantizer import Quantizer

    class Recording(Quantizer):
        def __init__(self) -> None:
            super().__init__()
            self.dump: list | None = None

        def transform_for_annotation(self, model):
            return inner.transform_for_annotation(model)

        def annotate(self, model):
            model = inner.annotate(model)
            self.dump = dump(model)
            return model

        def validate(self, model):
            return inner.validate(model)

    return Recording()


def run(gm: torch.fx.GraphModule, args: tuple, quantizer: Any, qat: bool) -> tuple:
    """prepare (QAT or not), calibrate on seeded data, convert: (dump, output, converted ops)."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

    rec = recording(quantizer)
    try:
        prepared = (prepare_qat_pt2e if qat else prepare_pt2e)(gm, rec)
    except Exception as exc:  # the same failure on both sides is the same behaviour
        return ("error", type(exc).__name__), None, None
    torch.manual_seed(1)
    for _ in range(2):
        prepared(*[torch.randn_like(a) if a.is_floating_point() else a for a in args])
    converted = convert_pt2e(prepared)
    with torch.no_grad():
        out = converted(*args)
    return rec.dump, out, [(n.op, str(n.target)) for n in converted.graph.nodes]


def flat(o: Any) -> list:
    return list(o) if isinstance(o, (tuple, list)) else [o]


def compare(
    gm: torch.fx.GraphModule,
    args: tuple,
    setup: Callable[[Any], Any],
    candidate: Callable[[], Any],
    qat: bool,
) -> list[str]:
    """torchao's XNNPACKQuantizer against ``candidate()``, each configured by ``setup``."""
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = run(copy.deepcopy(gm), args, setup(XNNPACKQuantizer()), qat)
    new = run(copy.deepcopy(gm), args, setup(candidate()), qat)
    if isinstance(ref[0], tuple) or isinstance(new[0], tuple):
        return [] if ref[0] == new[0] else [f"failures differ: {ref[0]} vs {new[0]}"]
    problems = differences(ref[0], new[0])
    if not all(torch.equal(x, y) for x, y in zip(flat(ref[1]), flat(new[1]))):
        problems.append("converted outputs differ")
    if ref[2] != new[2]:
        problems.append("converted graphs differ")
    return problems


def compare_zoo(name: str, config: str, strict: bool, candidate: Callable[[], Any]) -> list[str]:
    """One zoo model, one config form, one export mode: every difference."""
    cfg = symmetric_config(config)
    gm, args = export(name, strict)
    return compare(gm, args, lambda q: q.set_global(cfg), candidate, cfg.is_qat)
