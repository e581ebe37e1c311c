"""Models quantized by ExecuTorch's Arm TOSAQuantizer and by another class, node by node, then deployed.

    python -m tests.live.arm_zoo [--quantizer module:Class] [--tree DIR] [--no-deploy] [NAME ...]

runs in the environment of ``tests/live/envs.py``'s ``ARM`` (ExecuTorch's Arm
quantizer imports only there) and prints one JSON object: for each model, what
differs between ExecuTorch's quantizer and the other class (default
``generated.arm_tosa_quantizer:TOSAQuantizer``; its module's ``EthosUQuantizer``
and ``VgfQuantizer`` for the Ethos-U and VGF cases, when it has them):

- ``differ``: the nodes whose annotation differs after each class's
  ``transform_for_annotation`` and ``annotate`` (``{node: [executorch's,
  other's]}``, compared qspec by qspec as ``tests/live/cortex_m_zoo.py`` does,
  with Arm's ``_arm_annotation_info`` marks), and ``annotated``: how many nodes
  each annotated; ``graph``: whether the transformed graphs are the same code;
- ``converted``: whether ``prepare_pt2e``, one calibration and ``convert_pt2e``
  give the same code, the same constants and the same output, bit for bit;
- ``tosa`` and ``reference`` (TOSA cases but uint8 I/O, unless ``--no-deploy``): the program
  lowered by ``to_edge_transform_and_lower`` with Arm's ``TOSAPartitioner``
  (TOSA-1.0+INT, or +int16 for 16-bit activations) - whether the TOSA
  flatbuffers are the same bytes, and whether the TOSA reference model
  (``tosa_reference_model``, run on CPU through Arm's
  ``TosaReferenceModelDispatch``) gives the same outputs.

A step that raises is recorded (``errors``) and counts as a difference, even
when both classes raise alike. The exit status is 1 when anything differs. ``--quantizer
executorch.backends.arm.quantizer:TOSAQuantizer`` compares ExecuTorch's class
with itself (all the same: the zoo is deterministic), ``--quantizer
tests.live.executorch_swap:AnnotatesNothing`` with a class that annotates
nothing (every model differs). ``--tree DIR`` imports the class from another
checkout of the project (its ``specs/`` and ``generated/``). The whole zoo
takes about 190 CPU seconds (25 minutes on a 2-core machine shared with five
other jobs); ``tests/live/test_pt2e_arm.py`` runs nine of its models.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import operator
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

DEFAULT = "generated.arm_tosa_quantizer:TOSAQuantizer"
INT = "TOSA-1.0+INT"
INT16 = "TOSA-1.0+INT+int16"


@dataclass
class Case:
    module: nn.Module
    inputs: tuple
    # Configures the quantizer with the helpers of executorch.backends.arm.quantizer.
    setup: Callable[[Any, Any], None]
    spec: str = INT
    kind: str = "tosa"  # or "ethos_u", "vgf": which class and compile spec
    # Lowered and run: not for uint8 I/O (Arm's reference-model dispatch runs the program's
    # int8 delegate output into the uint8 dequantize), nor Ethos-U and VGF (no FVP, no runtime).
    deploys: bool = True


def _global(**config: Any) -> Callable[[Any, Any], None]:
    return lambda q, h: q.set_global(h.get_symmetric_quantization_config(**config))


class ConvBnRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) * y


class Pools(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return nn.functional.max_pool2d(y, 2) + nn.functional.avg_pool2d(y, 2)


class Block(nn.Module):
    """A conv, a linear and a softmax: what set_module_type / set_module_name select."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.linear = nn.Linear(6, 6)
        self.softmax = nn.Softmax(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax(self.linear(torch.relu(self.conv(x))))


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., torch.Tensor], *mods: nn.Module) -> None:
        super().__init__()
        self.mods = nn.ModuleList(mods)
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(self.mods, *xs)


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def models() -> dict[str, Case]:
    torch.manual_seed(0)
    io = _global()

    def with_io(q: Any, h: Any) -> None:
        q.set_global(h.get_symmetric_quantization_config()).set_io(
            h.get_uint8_io_quantization_config()
        )

    return {
        "conv_bn_relu": Case(ConvBnRelu(), (_r(1, 3, 8, 8),), _global()),
        "conv_bn_relu_per_tensor": Case(
            ConvBnRelu(), (_r(1, 3, 8, 8),), _global(is_per_channel=False)
        ),
        "linear_relu": Case(Fn(lambda m, x: torch.relu(m[0](x)), nn.Linear(8, 4)), (_r(2, 8),), io),
        "add_mul_residual": Case(Residual(), (_r(1, 4, 6, 6), _r(1, 4, 6, 6)), io),
        "cat": Case(Fn(lambda m, x, y: torch.cat([x, torch.relu(y)], 1)), (_r(2, 3), _r(2, 5)), io),
        "softmax": Case(Fn(lambda m, x: torch.softmax(x * 2, -1)), (_r(2, 8),), io),
        "layer_norm": Case(Fn(lambda m, x: m[0](x), nn.LayerNorm(8)), (_r(2, 3, 8),), io),
        "max_avg_pool": Case(Pools(), (_r(1, 3, 9, 9),), io),
        "a16w8_linear_add": Case(
            Fn(lambda m, x: m[0](x) + x, nn.Linear(8, 8)),
            (_r(2, 8),),
            lambda q, h: q.set_global(h.get_symmetric_a16w8_quantization_config()),
            spec=INT16,
        ),
        "module_type_linear_float": Case(
            Block(),
            (_r(1, 3, 8, 8),),
            lambda q, h: q.set_global(h.get_symmetric_quantization_config()).set_module_type(
                nn.Linear, None
            ),
        ),
        "module_name_conv_per_tensor": Case(
            Block(),
            (_r(1, 3, 8, 8),),
            lambda q, h: q.set_global(h.get_symmetric_quantization_config()).set_module_name(
                "conv", h.get_symmetric_quantization_config(is_per_channel=False)
            ),
        ),
        "set_io_uint8": Case(Residual(), (_r(1, 4, 6, 6), _r(1, 4, 6, 6)), with_io, deploys=False),
        "node_target_add_float": Case(
            Residual(),
            (_r(1, 4, 6, 6), _r(1, 4, 6, 6)),
            lambda q, h: q.set_global(h.get_symmetric_quantization_config()).set_node_target(
                torch.ops.aten.add.Tensor, None
            ),
        ),
        "ethos_u55_conv_add": Case(
            Residual(), (_r(1, 4, 6, 6), _r(1, 4, 6, 6)), io, kind="ethos_u"
        ),
        "vgf_snorm_conv": Case(
            ConvBnRelu(),
            (_r(1, 3, 8, 8),),
            lambda q, h: q.set_global(h.get_vgf_snorm_quantization_config()),
            kind="vgf",
        ),
    }


def quantizer(classes: dict[str, type], case: Case) -> Any:
    """A quantizer of ``classes`` (by kind) for ``case``, configured."""
    from executorch.backends.arm import quantizer as helpers
    from executorch.backends.arm.test import common

    if case.kind == "ethos_u":
        spec: Any = common.get_u55_compile_spec()
    elif case.kind == "vgf":
        spec = common.get_vgf_compile_spec(case.spec)
    else:
        spec = common.get_tosa_compile_spec(case.spec)
    q = classes[case.kind](spec)
    case.setup(q, helpers)
    return q


def _export(case: Case) -> torch.fx.GraphModule:
    return torch.export.export(case.module.eval(), case.inputs, strict=True).module()


def annotate(q: Any, case: Case) -> tuple[str, dict[str, Any]]:
    """The transformed graph's code and each node's annotation."""
    from .cortex_m_zoo import annotations

    gm = q.transform_for_annotation(_export(case))
    q.annotate(gm)
    return gm.code, annotations(gm)


def _digest(t: Any) -> str:
    if isinstance(t, torch.Tensor):
        data = t.detach().contiguous().cpu()
        raw = data.view(torch.uint8) if data.dim() else data.reshape(1).view(torch.uint8)
        return f"{t.dtype}{tuple(t.shape)}:{hashlib.sha256(raw.numpy().tobytes()).hexdigest()}"
    if isinstance(t, (tuple, list)):
        return ",".join(_digest(x) for x in t)
    return repr(t)


def converted(q: Any, case: Case) -> dict[str, Any]:
    """``prepare_pt2e``, one calibration, ``convert_pt2e``: the code, constants and output."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(_export(case), q)
    prepared(*case.inputs)
    gm = convert_pt2e(prepared)
    state = {k: _digest(v) for k, v in sorted(gm.state_dict(keep_vars=True).items())}
    consts = {
        n.target: _digest(operator.attrgetter(n.target)(gm))  # dotted: a float module's
        for n in gm.graph.nodes
        if n.op == "get_attr"
    }
    return {"code": gm.code, "state": state, "consts": consts, "output": _digest(gm(*case.inputs))}


def deploy(q: Any, case: Case) -> tuple[list[bytes], str]:
    """The TOSA flatbuffers of the lowered program and the TOSA reference model's outputs."""
    from executorch.backends.arm.test import common
    from executorch.backends.arm.test.runner_utils import TosaReferenceModelDispatch
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.lowered_backend_module import LoweredBackendModule
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(_export(case), q)
    prepared(*case.inputs)
    program = torch.export.export(convert_pt2e(prepared), case.inputs, strict=True)
    partitioner = TOSAPartitioner(common.get_tosa_compile_spec(case.spec))
    edge = to_edge_transform_and_lower(program, partitioner=[partitioner])
    lowered = edge.exported_program().graph_module
    flatbuffers = [
        m.processed_bytes
        for _, m in lowered.named_children()
        if isinstance(m, LoweredBackendModule)
    ]
    with TosaReferenceModelDispatch():
        outputs = edge.exported_program().module()(*case.inputs)
    return flatbuffers, _digest(outputs)


def classes(spec: str) -> dict[str, type]:
    """The class ``module:Class`` for TOSA, and its module's Ethos-U and VGF classes if any."""
    module_name, _, name = spec.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, name or "TOSAQuantizer")
    return {
        "tosa": cls,
        "ethos_u": getattr(module, "EthosUQuantizer", cls),
        "vgf": getattr(module, "VgfQuantizer", cls),
    }


def attempt(step: Callable[[Any, Case], Any], classes: dict[str, type], case: Case) -> Any:
    """``step`` with a quantizer of ``classes``, or the error it raised (as comparable text)."""
    try:
        return step(quantizer(classes, case), case)
    except Exception as e:  # a class that fails where ExecuTorch's does not differs
        return f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def compare_one(theirs: dict[str, type], ours: dict[str, type], case: Case, deploys: bool) -> dict:
    sides = [attempt(annotate, c, case) for c in (theirs, ours)]
    (code_t, ann_t), (code_o, ann_o) = (s if isinstance(s, tuple) else (s, {}) for s in sides)
    differ = {
        k: [ann_t.get(k), ann_o.get(k)]
        for k in sorted(set(ann_t) | set(ann_o))
        if ann_t.get(k) != ann_o.get(k)
    }
    conv_t, conv_o = (attempt(converted, c, case) for c in (theirs, ours))
    result: dict[str, Any] = {
        "differ": differ,
        "annotated": [len(ann_t), len(ann_o)],
        "graph": code_t == code_o,
        "converted": conv_t == conv_o,
    }
    errors = [x for x in (*sides, conv_t, conv_o) if isinstance(x, str)]
    if deploys and case.deploys and case.kind == "tosa":
        lowered = [attempt(deploy, c, case) for c in (theirs, ours)]
        errors += [x for x in lowered if isinstance(x, str)]
        (fb_t, out_t), (fb_o, out_o) = (x if isinstance(x, tuple) else ([], x) for x in lowered)
        result["tosa"] = fb_t == fb_o and not isinstance(lowered[0], str)
        result["reference"] = out_t == out_o and not isinstance(lowered[0], str)
        result["tosa_bytes"] = [sum(map(len, fb_t)), sum(map(len, fb_o))]
    if errors:
        result["errors"] = errors
    return result


def same(result: dict) -> bool:
    return (
        not result["differ"]
        and "errors" not in result
        and all(result.get(k, True) for k in ("graph", "converted", "tosa", "reference"))
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.live.arm_zoo")
    parser.add_argument("names", nargs="*", help="models (default: all)")
    parser.add_argument("--quantizer", default=DEFAULT, help=f"module:Class (default {DEFAULT})")
    parser.add_argument("--tree", help="another checkout of the project to import it from")
    parser.add_argument("--no-deploy", action="store_true", help="skip the TOSA lowering")
    args = parser.parse_args(argv)
    if args.tree:
        sys.path.insert(0, args.tree)
    zoo = models()
    unknown = sorted(set(args.names) - set(zoo))
    if unknown:
        parser.error(f"no model {', '.join(unknown)} (the zoo has {', '.join(zoo)})")
    # The TOSA reference model prints to file descriptor 1: only the JSON goes to stdout.
    sys.stdout.flush()
    stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    theirs = classes("executorch.backends.arm.quantizer:TOSAQuantizer")
    ours = classes(args.quantizer)
    out = {
        name: compare_one(theirs, ours, case, not args.no_deploy)
        for name, case in zoo.items()
        if not args.names or name in args.names
    }
    json.dump(out, stdout, indent=1, default=str)
    stdout.write("\n")
    stdout.flush()
    return 0 if all(same(r) for r in out.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
