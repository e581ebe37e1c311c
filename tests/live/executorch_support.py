"""Deploying a PT2E-quantized model to ExecuTorch's XNNPACK delegate, and comparing two quantizers there.

``deploy(model, args, quantizer, strict)`` runs ExecuTorch's own flow:
``torch.export.export`` -> ``prepare_pt2e`` -> calibrate (seeded) ->
``convert_pt2e`` -> ``torch.export.export`` -> ``to_edge_transform_and_lower``
with ``XnnpackPartitioner`` -> ``to_executorch`` -> the .pte bytes -> a
method of ``executorch.runtime``, executed on ``args``. It returns what a
device would see (``Deployed``): the runtime's outputs, the delegated XNNPACK
calls and the ATen ops inside them, the quantize/dequantize nodes of the
converted graph, the ops left outside the delegate, or the stage that failed
and why.

``compare_deploy(...)`` deploys one zoo model with ExecuTorch's
XNNPACKQuantizer and with a candidate quantizer class, each configured by the
same ``get_symmetric_quantization_config(...)`` of ExecuTorch, and returns
every difference. Everything is seeded and runs on one torch thread, so the
.pte files and outputs are the same from run to run.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", message=".*deprecated.*")

# get_symmetric_quantization_config(...) forms.
CONFIGS: dict[str, dict[str, bool]] = {
    "per_channel": {"is_per_channel": True},
    "per_tensor": {"is_per_channel": False},
    "dynamic": {"is_per_channel": True, "is_dynamic": True},
}

QDQ = (
    "quantize_per_tensor",
    "dequantize_per_tensor",
    "quantize_per_channel",
    "dequantize_per_channel",
    "choose_qparams",
)


def et_config(name: str) -> Any:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
    )

    return get_symmetric_quantization_config(**CONFIGS[name])


def et_quantizer() -> Any:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer

    return XNNPACKQuantizer()


@dataclasses.dataclass
class Deployed:
    """What deploying a model gave: outputs on the runtime, delegation, q/dq counts; or a failure."""

    outputs: list[torch.Tensor] | None = None
    delegates: int = 0
    delegated_ops: Counter[str] = dataclasses.field(default_factory=Counter)
    outside_ops: Counter[str] = dataclasses.field(default_factory=Counter)
    qdq: Counter[str] = dataclasses.field(default_factory=Counter)
    pte_size: int = 0
    pte_sha256: str = ""
    # The converted model's outputs in eager mode (before lowering).
    converted: list[torch.Tensor] | None = None
    # Every annotation prepare_pt2e got from the quantizer (pt2e_support.dump).
    annotations: list | None = None
    failed: str = ""  # "stage: exception type: message" when a stage failed


# The stage after lowering: a program ExecuTorch's runtime refuses to load (XNNPACK
# rejects a float conv whose weight a quantized conv shares) fails there with either
# quantizer; everything before it is still compared.
RUNTIME = "runtime"


def _op_name(target: Any) -> str:
    return str(getattr(target, "__name__", target))


def _qdq_counts(gm: torch.fx.GraphModule) -> Counter[str]:
    counts: Counter[str] = Counter()
    for n in gm.graph.nodes:
        if n.op == "call_function":
            name = _op_name(n.target)
            if name.split(".")[0] in QDQ:
                counts[name] += 1
    return counts


def _delegation(edge: Any) -> tuple[int, Counter[str], Counter[str]]:
    """The XNNPACK delegate calls of the lowered program, the ops inside them, the ops outside."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    gm = edge.exported_program().graph_module
    delegates, inside, outside = 0, Counter[str](), Counter[str]()
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        name = _op_name(n.target)
        if name == "executorch_call_delegate":
            delegates += 1
            lowered = getattr(gm, n.args[0].target)
            assert isinstance(lowered, LoweredBackendModule)
            assert lowered.backend_id == "XnnpackBackend", lowered.backend_id
            for m in lowered.original_module.graph.nodes:
                if m.op == "call_function":
                    inside[_op_name(m.target)] += 1
        elif name != "getitem":
            outside[name] += 1
    return delegates, inside, outside


def deploy(
    model: nn.Module, args: tuple, quantizer: Any, strict: bool = True, calibrate: int = 3
) -> Deployed:
    """Quantize ``model`` with ``quantizer`` and run it on ExecuTorch's runtime through XNNPACK."""
    return deploy_module(
        lambda: torch.export.export(model, args, strict=strict).module(),
        args,
        quantizer,
        lower_xnnpack,
        calibrate,
    )


Lower = Callable[[torch.fx.GraphModule, tuple, Deployed], str]


def deploy_module(
    module: Callable[[], torch.fx.GraphModule],
    args: tuple,
    quantizer: Any,
    lower: Lower | None,
    calibrate: int = 3,
) -> Deployed:
    """``deploy`` of the graph module ``module()`` gives (an export of the model, or a recorded
    program loaded: tests/record.py), lowered by ``lower`` (None: stop after ``convert_pt2e``,
    importing nothing of ExecuTorch), each stage's failure the result."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from .pt2e_support import recording

    out = Deployed()
    stage = "export"
    try:
        gm = module()
        stage = "prepare_pt2e"
        rec = recording(quantizer)
        prepared = prepare_pt2e(gm, rec)
        out.annotations = rec.dump
        torch.manual_seed(1)
        for _ in range(calibrate):
            prepared(*[torch.randn_like(a) if a.is_floating_point() else a for a in args])
        prepared(*args)
        stage = "convert_pt2e"
        converted = convert_pt2e(prepared)
        out.qdq = _qdq_counts(converted)
        out.converted = [t.clone() for t in _tensors(converted(*args))]
        if lower is not None:
            stage = lower(converted, args, out)
    except Exception as exc:  # which stage failed, and how, is the result
        error: BaseException = exc
        if isinstance(exc, _Stage) and exc.__cause__ is not None:
            stage, error = str(exc), exc.__cause__
        first = str(error).splitlines()[0] if str(error) else ""
        out.failed = f"{stage}: {type(error).__name__}: {first}"
    return out


def _tensors(value: Any) -> list[torch.Tensor]:
    """A module's outputs as a list of tensors."""
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _tensors(v)]


def lower_xnnpack(converted: torch.fx.GraphModule, args: tuple, out: Deployed) -> str:
    """Lower ``converted`` to XNNPACK and run it in ExecuTorch's runtime, filling ``out``;
    the stage reached (a stage raises out of here)."""
    import hashlib

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    stage = "export (converted)"
    try:
        ep = torch.export.export(converted, args, strict=True)
        stage = "to_edge_transform_and_lower"
        edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        out.delegates, out.delegated_ops, out.outside_ops = _delegation(edge)
        stage = "to_executorch"
        buffer = edge.to_executorch().buffer
        out.pte_size = len(buffer)
        out.pte_sha256 = hashlib.sha256(buffer).hexdigest()
        stage = RUNTIME
        method = Runtime.get().load_program(buffer).load_method("forward")
        out.outputs = [t.clone() for t in method.execute(list(args))]
    except Exception as exc:
        raise _Stage(stage) from exc
    return stage


class _Stage(Exception):
    """A lowering stage failed (its name; the failure is the cause)."""


def differences(ref: Deployed, new: Deployed) -> list[str]:
    """Every way ``new`` differs from ``ref`` on the device (empty: the same program's behaviour).

    Both failing the same way is the same behaviour; what was made before the failure
    (annotations, q/dq nodes, delegation) is still compared."""
    from .pt2e_support import differences as annotation_differences

    problems = []
    if ref.failed != new.failed:
        return [f"deploy failed: {ref.failed or 'ok'} vs {new.failed or 'ok'}"]
    if ref.annotations is not None and new.annotations is not None:
        problems += annotation_differences(ref.annotations, new.annotations)
    if ref.failed:
        if ref.failed.startswith(RUNTIME) and ref.qdq != new.qdq:
            problems.append(f"q/dq nodes {dict(ref.qdq)} != {dict(new.qdq)}")
        return problems
    if ref.delegates != new.delegates:
        problems.append(f"XNNPACK delegate calls {ref.delegates} != {new.delegates}")
    if ref.delegated_ops != new.delegated_ops:
        problems.append(f"delegated ops {dict(ref.delegated_ops)} != {dict(new.delegated_ops)}")
    if ref.outside_ops != new.outside_ops:
        problems.append(
            f"ops outside the delegate {dict(ref.outside_ops)} != {dict(new.outside_ops)}"
        )
    if ref.qdq != new.qdq:
        problems.append(f"q/dq nodes {dict(ref.qdq)} != {dict(new.qdq)}")
    assert ref.outputs is not None and new.outputs is not None
    if len(ref.outputs) != len(new.outputs) or not all(
        a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
        for a, b in zip(ref.outputs, new.outputs)
    ):
        problems.append("runtime outputs differ")
    return problems


# ---------------------------------------------------------------------- zoo


class ConvBnReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Depthwise(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dw = nn.Conv2d(8, 8, 3, groups=8, padding=1)
        self.pw = nn.Conv2d(8, 16, 1)

    def forward(self, x):
        return self.pw(F.relu(self.dw(x)))


class TransposedConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 8, 3, stride=2)

    def forward(self, x):
        return self.up(x)


class PaddingSame(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding="same")
        self.conv2 = nn.Conv2d(8, 8, 3, padding="same")

    def forward(self, x):
        return F.relu(self.conv2(self.conv(x)))


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = F.relu(self.conv1(x))
        return F.relu(self.conv2(y) + x)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Attention(nn.Module):
    """Projections, heads by view/transpose, softmax of q @ k^T, a residual and an output projection."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, 2, 8).transpose(1, 2)
        k = k.view(b, t, 2, 8).transpose(1, 2)
        v = v.view(b, t, 2, 8).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) * 0.35, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y) + x


class CatMeanPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 1)
        self.conv2 = nn.Conv2d(3, 4, 1)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.cat([self.conv1(x), self.conv2(x)], dim=1)
        z = self.pool(y)
        return self.fc(self.gap(z).flatten(1)), z.mean(dim=(2, 3))


class HardtanhReLU6(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.conv2 = nn.Conv2d(4, 4, 3)

    def forward(self, x):
        x = F.hardtanh(self.conv1(x), -1.0, 1.0)
        return F.relu6(self.conv2(x))


class Conv1d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 3)
        self.c2 = nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.c2(F.relu(self.c1(x)))


class ClassToken(nn.Module):
    """cat(float class token, conv -> flatten -> transpose): a ViT's patch embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, 8, 4, stride=4)
        self.token = nn.Parameter(torch.randn(1, 1, 8))
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        p = self.patch(x).flatten(2).transpose(1, 2)
        return self.fc(torch.cat([self.token.expand(x.shape[0], -1, -1), p], dim=1))


class ReusedLinear(nn.Module):
    """One Linear called twice (then with relu), and two Linears sharing one weight."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 16)
        self.b.weight = self.a.weight

    def forward(self, x):
        y = F.relu(self.fc(F.relu(self.fc(x))))
        return self.b(self.a(self.fc(y)))


class ReusedConv(nn.Module):
    """One Conv2d called twice with relu, then once more alone."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return F.relu(self.conv(F.relu(self.conv(x))))


# name: (model class, example inputs)
ZOO: dict[str, tuple[Callable[[], nn.Module], tuple[torch.Tensor, ...]]] = {
    "conv_bn_relu": (
        ConvBnReLU,
        (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)),),
    ),
    "depthwise": (
        Depthwise,
        (torch.randn(1, 8, 6, 6, generator=torch.Generator().manual_seed(0)),),
    ),
    "transposed_conv": (
        TransposedConv,
        (torch.randn(1, 4, 5, 5, generator=torch.Generator().manual_seed(0)),),
    ),
    "padding_same": (
        PaddingSame,
        (torch.randn(1, 4, 6, 6, generator=torch.Generator().manual_seed(0)),),
    ),
    "residual": (Residual, (torch.randn(1, 4, 8, 8, generator=torch.Generator().manual_seed(0)),)),
    "mlp": (MLP, (torch.randn(2, 16, generator=torch.Generator().manual_seed(0)),)),
    "attention": (Attention, (torch.randn(1, 4, 16, generator=torch.Generator().manual_seed(0)),)),
    "cat_mean_pool": (
        CatMeanPool,
        (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)),),
    ),
    "hardtanh_relu6": (
        HardtanhReLU6,
        (torch.randn(1, 3, 10, 10, generator=torch.Generator().manual_seed(0)),),
    ),
    "conv1d": (Conv1d, (torch.randn(1, 4, 12, generator=torch.Generator().manual_seed(0)),)),
    "class_token": (
        ClassToken,
        (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(0)),),
    ),
    "reused_linear": (
        ReusedLinear,
        (torch.randn(2, 16, generator=torch.Generator().manual_seed(0)),),
    ),
    "reused_conv": (
        ReusedConv,
        (torch.randn(1, 4, 6, 6, generator=torch.Generator().manual_seed(0)),),
    ),
}


def zoo_model(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    factory, args = ZOO[name]
    torch.manual_seed(0)
    model = factory().eval()
    return model, args


def deploy_zoo(
    name: str, config: str, quantizer: Callable[[], Any], strict: bool = True
) -> Deployed:
    model, args = zoo_model(name)
    q = quantizer().set_global(et_config(config))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return deploy(copy.deepcopy(model), args, q, strict)
    finally:
        torch.set_num_threads(threads)


def compare_deploy(
    name: str, config: str, candidate: Callable[[], Any], strict: bool = True
) -> list[str]:
    """One zoo model deployed with ExecuTorch's XNNPACKQuantizer and with ``candidate()``: every difference."""
    ref = deploy_zoo(name, config, et_quantizer, strict)
    new = deploy_zoo(name, config, candidate, strict)
    if ref.failed and not ref.failed.startswith(RUNTIME):
        # ExecuTorch's own quantizer must lower every zoo model, or the case proves little.
        return [f"ExecuTorch's quantizer failed to deploy: {ref.failed}"]
    return differences(ref, new)


def candidate_class() -> Any:
    """The generated quantizer class these tests hold against ExecuTorch's."""
    from generated.xnnpack_executorch_quantizer import XnnpackExecutorchQuantizer

    return XnnpackExecutorchQuantizer()


CANDIDATE = candidate_class


def code_lines(text: str, comment: str = "#") -> int:
    """Non-blank lines that are not comments."""
    return sum(
        1 for line in text.splitlines() if line.strip() and not line.strip().startswith(comment)
    )


def spec_size() -> tuple[int, int]:
    """(code lines of specs/xnnpack_executorch.bcfg, of ExecuTorch's quantizer: xnnpack_quantizer.py + _utils.py)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("executorch")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(list(spec.submodule_search_locations)[0]) / "backends" / "xnnpack" / "quantizer"
    ref = sum(
        code_lines((folder / f).read_text())
        for f in ("xnnpack_quantizer.py", "xnnpack_quantizer_utils.py")
    )
    ours = code_lines(
        (Path(__file__).resolve().parents[2] / "specs" / "xnnpack_executorch.bcfg").read_text()
    )
    return ours, ref
