"""Models annotated by ExecuTorch's CortexMQuantizer and by the generated one, node by node.

    python -m tests.live.cortex_m_zoo [--deploy | --deploy-also NAME,...] [NAME ...]

runs in the environment of ``tests/live/envs.py``'s ``ARM`` (ExecuTorch's Cortex-M
quantizer imports only there) and prints one JSON object: for each model,
the nodes whose annotation differs (``{node: [executorch's, ours]}``, empty
when identical) and how many nodes each annotated. An annotation is compared
as text: each input's spec by input name, the output spec, and the marks
ExecuTorch's lowering reads (``_arm_annotation_info``, ``_arm_disallow_tfa``,
the Cortex-M max-pool tag). With ``--deploy`` it runs ExecuTorch's Cortex-M
flow instead (the ``CortexMTester``: quantize, export, edge, the Cortex-M
passes to CMSIS-NN and portable ops, ``to_executorch``) with each quantizer
and says whether the two .pte programs are the same bytes. ``--deploy-also
A,B`` does both in one process (one import of torch and ExecuTorch): the
comparison of the NAMEs and the deployment of A and B, as ``{"compare": ...,
"deploy": ...}``, which is how ``tests/live/test_pt2e_cortex_m.py`` runs them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

CL = torch.channels_last


def _r(*shape: int, cl: bool = False) -> torch.Tensor:
    t = torch.randn(*shape)
    return t.to(memory_format=CL) if cl else t


class Seq(nn.Module):
    def __init__(self, fn: Callable[..., Any], *mods: nn.Module) -> None:
        super().__init__()
        self.mods = nn.ModuleList(mods)
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(self.mods, *xs)


def _convs() -> dict[str, tuple[nn.Module, tuple, str]]:
    conv, tconv = nn.Conv2d(3, 4, 3), nn.ConvTranspose2d(3, 4, 3)
    return {
        "conv_relu_channels_last": (
            Seq(lambda m, x: torch.relu(m[0](x)), conv),
            (_r(1, 3, 8, 8, cl=True),),
            "",
        ),
        "conv_contiguous": (Seq(lambda m, x: m[0](x), conv), (_r(1, 3, 8, 8),), ""),
        "conv_hardtanh_pool": (
            Seq(lambda m, x: nn.functional.max_pool2d(nn.functional.hardtanh(m[0](x)), 2), conv),
            (_r(1, 3, 9, 9, cl=True),),
            "",
        ),
        "transposed_conv": (
            Seq(lambda m, x: torch.clamp(m[0](x), -1, 1), tconv),
            (_r(1, 3, 5, 5, cl=True),),
            "",
        ),
        "linear_hardsigmoid": (
            Seq(lambda m, x: nn.functional.hardsigmoid(m[0](x)), nn.Linear(8, 4)),
            (_r(2, 8),),
            "",
        ),
        "linear_twice": (
            Seq(lambda m, x: m[0](torch.relu(m[0](x))), nn.Linear(8, 8)),
            (_r(2, 8),),
            "",
        ),
    }


def _elementwise() -> dict[str, tuple[nn.Module, tuple, str]]:
    none = nn.Identity()
    return {
        "add_relu_sub": (
            Seq(lambda m, x, y: torch.relu(x + y) - y, none),
            (_r(2, 4), _r(2, 4)),
            "",
        ),
        "add_broadcast": (
            Seq(lambda m, x, y: x + y, none),
            (_r(1, 4, 3, 3, cl=True), _r(1, 4, 1, 1)),
            "",
        ),
        "add_scalar_alpha": (Seq(lambda m, x: torch.add(x, 2.0, alpha=2), none), (_r(2, 4),), ""),
        "mul_hardswish": (
            Seq(lambda m, x, y: nn.functional.hardswish(x * y), none),
            (_r(2, 4), _r(2, 4)),
            "",
        ),
        "div": (Seq(lambda m, x, y: x / y, none), (_r(2, 4), _r(2, 4) + 3), ""),
        "div_int16": (Seq(lambda m, x, y: (x / y) + x, none), (_r(2, 4), _r(2, 4) + 3), "int16"),
        "sigmoid_tanh": (Seq(lambda m, x: torch.tanh(torch.sigmoid(x)), none), (_r(2, 4),), ""),
        "softmax_last": (Seq(lambda m, x: torch.softmax(x, -1), none), (_r(2, 4),), ""),
        "softmax_first": (Seq(lambda m, x: torch.softmax(x, 0), none), (_r(2, 4),), ""),
        "matmul": (Seq(lambda m, x, y: torch.matmul(x, y), none), (_r(2, 3, 4), _r(2, 4, 5)), ""),
        "mean": (Seq(lambda m, x: x.mean(dim=-1, keepdim=True), none), (_r(2, 4),), ""),
        "avg_pool": (
            Seq(lambda m, x: nn.functional.avg_pool2d(x, 2), none),
            (_r(1, 2, 4, 4, cl=True),),
            "",
        ),
        "max_pool_dilated_relu": (
            Seq(lambda m, x: torch.relu(nn.functional.max_pool2d(x, 2, dilation=2)), none),
            (_r(1, 2, 8, 8, cl=True),),
            "",
        ),
    }


def _shared() -> dict[str, tuple[nn.Module, tuple, str]]:
    none = nn.Identity()
    return {
        "clusters": (
            Seq(lambda m, x: torch.transpose(torch.clone(torch.clone(x) + x) + x, 2, 1), none),
            (_r(2, 3, 4),),
            "",
        ),
        "cat_fork": (
            Seq(lambda m, x, y: torch.cat([torch.maximum(x, y), torch.flatten(x, 1)], 1), none),
            (_r(2, 4), _r(2, 4)),
            "",
        ),
        "float_only": (Seq(lambda m, x: torch.clone(x).permute(1, 0), none), (_r(2, 4),), ""),
        "split": (Seq(lambda m, x: torch.split(x + x, 2, 1)[1] + x[:, :2], none), (_r(2, 4),), ""),
    }


def _explicit() -> dict[str, tuple[nn.Module, tuple, str]]:
    """With use_explicit_layout=True: convs by rank in any layout, conv1d, and what the
    explicit checks still refuse (a dilated transposed conv)."""
    conv, conv1, tconv = nn.Conv2d(3, 4, 3), nn.Conv1d(3, 4, 3), nn.ConvTranspose2d(3, 4, 3)
    dilated = nn.ConvTranspose2d(3, 4, 3, dilation=2)
    return {
        "explicit_conv_contiguous_relu": (
            Seq(lambda m, x: torch.relu(m[0](x)), conv),
            (_r(1, 3, 8, 8),),
            "explicit",
        ),
        "explicit_conv_channels_last": (
            Seq(lambda m, x: m[0](x), conv),
            (_r(1, 3, 8, 8, cl=True),),
            "explicit",
        ),
        "explicit_conv1d_hardtanh": (
            Seq(lambda m, x: nn.functional.hardtanh(m[0](x)) + x[:, :1, 1:-1], conv1),
            (_r(2, 3, 10),),
            "explicit",
        ),
        "explicit_transposed_conv_contiguous": (
            Seq(lambda m, x: torch.clamp(m[0](x), -1, 1), tconv),
            (_r(1, 3, 5, 5),),
            "explicit",
        ),
        "explicit_transposed_conv_dilated": (
            Seq(lambda m, x: m[0](x), dilated),
            (_r(1, 3, 5, 5),),
            "explicit",
        ),
        "explicit_linear_softmax": (
            Seq(lambda m, x: torch.softmax(m[0](x), -1), nn.Linear(8, 4)),
            (_r(2, 8),),
            "explicit",
        ),
        "legacy_conv1d": (Seq(lambda m, x: torch.relu(m[0](x)), conv1), (_r(2, 3, 10),), ""),
    }


def models() -> dict[str, tuple[nn.Module, tuple, str]]:
    return {**_convs(), **_elementwise(), **_shared(), **_explicit(), **_io()}


def _io() -> dict[str, tuple[nn.Module, tuple, str]]:
    """A per-tensor config of uint8 activations: the model's inputs and outputs uint8, the
    int8 checks refusing the ops, shared clusters bridging to them (Arm's uint8 I/O rules)."""
    conv = nn.Conv2d(3, 4, 3)
    return {
        "uint8_io_conv_cat": (
            Seq(lambda m, x: torch.cat([m[0](x), m[0](x)], 1).permute(0, 2, 3, 1), conv),
            (_r(1, 3, 8, 8, cl=True),),
            "uint8",
        ),
        "uint8_io_add_cat": (
            Seq(lambda m, x, y: torch.cat([x + y, torch.clone(x)], 1), nn.Identity()),
            (_r(2, 4), _r(2, 4)),
            "uint8",
        ),
    }


def _uint8(configs: Any) -> Any:
    from torchao.quantization.pt2e import HistogramObserver
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    act = QuantizationSpec(torch.uint8, HistogramObserver, qscheme=torch.per_tensor_affine)
    base = configs.INT8_PER_TENSOR_CONFIG
    return configs.CortexMQuantizationConfig(act, act, base.weight, base.bias, "uint8 io")


# The constructor arguments of each variant of the zoo's models.
VARIANTS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "": lambda configs: {},
    "int16": lambda configs: {"per_tensor_config": configs.INT16_PER_TENSOR_CONFIG},
    "explicit": lambda configs: {"use_explicit_layout": True},
    "uint8": lambda configs: {"per_tensor_config": _uint8(configs)},
}


def describe(spec: Any) -> Any:
    """A qspec as comparable text (node names, not nodes)."""
    if spec is None:
        return None
    kind = type(spec).__name__
    if kind == "SharedQuantizationSpec":
        e = spec.edge_or_node
        return f"shared({e[0].name}->{e[1].name})" if isinstance(e, tuple) else f"shared({e.name})"
    if kind == "DerivedQuantizationSpec":
        edges = ",".join(f"{a.name}->{b.name}" for a, b in spec.derived_from)
        return f"derived({edges}; {spec.dtype}, {spec.qscheme}, {spec.ch_axis}, {spec.quant_min}, {spec.quant_max})"
    fields = {k: v for k, v in vars(spec).items() if k != "observer_or_fake_quant_ctr"}
    ctr = getattr(spec, "observer_or_fake_quant_ctr", None)
    fields["observer"] = getattr(ctr, "__name__", repr(ctr))
    return f"{kind}({', '.join(f'{k}={v}' for k, v in sorted(fields.items()))})"


def annotations(model: torch.fx.GraphModule) -> dict[str, Any]:
    out = {}
    for n in model.graph.nodes:
        ann = n.meta.get("quantization_annotation")
        custom = n.meta.get("custom", {})
        marks = [dict(custom["_arm_annotation_info"])] if "_arm_annotation_info" in custom else []
        if "cortex_m" in custom:
            marks.append(custom["cortex_m"])
        if "_arm_disallow_tfa" in n.meta:
            marks.append({"disallow_tfa": n.meta["_arm_disallow_tfa"]})
        if ann is None and not marks:
            continue
        inputs = (
            {} if ann is None else {a.name: describe(s) for a, s in ann.input_qspec_map.items()}
        )
        output = None if ann is None else describe(ann.output_qspec)
        out[n.name] = {"inputs": inputs, "output": output, "marks": marks}
    return out


def annotate(quantizer: Any, module: nn.Module, inputs: tuple) -> dict[str, Any]:
    torch.manual_seed(0)
    gm = torch.export.export(module.eval(), inputs).module()
    gm = quantizer.transform_for_annotation(gm)
    quantizer.annotate(gm)
    return annotations(gm)


def converted(quantizer: Any, module: nn.Module, inputs: tuple) -> tuple[list[str], torch.Tensor]:
    """prepare_pt2e, one calibration run, convert_pt2e: the converted graph's call targets
    in order, and its output on the inputs."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(0)
    gm = torch.export.export(module.eval(), inputs).module()
    prepared = prepare_pt2e(gm, quantizer)
    prepared(*inputs)
    done = convert_pt2e(prepared)
    targets = [str(n.target) for n in done.graph.nodes if n.op == "call_function"]
    return targets, done(*inputs)


def compare(names: list[str]) -> dict[str, Any]:
    from executorch.backends.cortex_m.quantizer import quantization_configs as configs
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer as Theirs

    from generated.cortex_m_quantizer import CortexMQuantizer as Ours

    out = {}
    for name, (module, inputs, variant) in models().items():
        if names and name not in names:
            continue
        args = VARIANTS[variant](configs)
        theirs = annotate(Theirs(**args), module, inputs)
        ours = annotate(Ours(**args), module, inputs)
        differ = {
            k: [theirs.get(k), ours.get(k)]
            for k in sorted(set(theirs) | set(ours))
            if theirs.get(k) != ours.get(k)
        }
        out[name] = {"differ": differ, "annotated": [len(theirs), len(ours)]}
        if variant == "explicit":  # and after convert_pt2e: the same graph, the same output
            (g1, y1), (g2, y2) = (converted(q(**args), module, inputs) for q in (Theirs, Ours))
            out[name]["converted"] = {
                "same_graph": g1 == g2,
                "same_output": bool(torch.equal(y1, y2)),
            }
    return out


def program(quantizer: Any, module: nn.Module, inputs: tuple) -> bytes:
    """The .pte bytes of ExecuTorch's Cortex-M flow (quantize, export, edge, the Cortex-M
    passes, to_executorch) with ``quantizer``."""
    from executorch.backends.cortex_m.test.tester import CortexMTester
    from executorch.backends.test.harness.stages import Quantize

    torch.manual_seed(0)
    tester = CortexMTester(module.eval(), inputs)
    tester.quantize(Quantize(quantizer)).export().to_edge().run_passes().to_executorch()
    return tester.get_artifact().buffer


def deploy(names: list[str]) -> dict[str, Any]:
    """For each model, whether both quantizers give the same program, and its size."""
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer as Theirs

    from generated.cortex_m_quantizer import CortexMQuantizer as Ours

    out = {}
    for name, (module, inputs, variant) in models().items():
        if variant or (names and name not in names):
            continue
        theirs, ours = program(Theirs(), module, inputs), program(Ours(), module, inputs)
        out[name] = {"same": theirs == ours, "bytes": len(theirs)}
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--deploy"]:
        json.dump(deploy(sys.argv[2:]), sys.stdout, indent=1, default=str)
    elif sys.argv[1:2] == ["--deploy-also"]:
        both = {"compare": compare(sys.argv[3:]), "deploy": deploy(sys.argv[2].split(","))}
        json.dump(both, sys.stdout, indent=1, default=str)
    else:
        json.dump(compare(sys.argv[1:]), sys.stdout, indent=1, default=str)
