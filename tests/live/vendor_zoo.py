"""ExecuTorch's small vendor quantizers against their generated namesakes, on zoos of models.

    python -m tests.live.vendor_zoo VENDOR [MODEL ...]

``VENDOR`` names a zoo of the target registry (``vulkan``, ``mediatek``, ``samsung``,
``qualcomm``, ``coreml``): the row of ``tests/targets.py`` whose ``zoo`` is ``VENDOR_zoo``
names ExecuTorch's class (and what its import needs first) and the generated one. Each
vendor's zoo is a plain list in ``tests/live/<vendor>_zoo.py``: ``ZOO``
(``(name, model factory, inputs)``), and ``SETUPS`` (``name -> fn(quantizer) ->
quantizer``: the configurations each model is quantized under). Each model is exported
strictly and not, each setup run on a copy with both classes through torchao's
``prepare_pt2e``, seeded calibration and ``convert_pt2e``
(``tests/live/pt2e_support.run``); the annotations are compared node by node right
after ``annotate`` (``pt2e_support.differences``), then the converted outputs and ops.
It prints one JSON object, per model, setup and export mode: the differences, whether
the outputs and converted graphs are equal, and how many nodes each class annotated;
the exit status is 1 if anything differs.

MediaTek's package ``executorch.backends.mediatek`` imports its partitioner in its
``__init__``, which needs ``mtk_converter`` and ``mtk_neuron`` (not on the package
index): ``import_past_init`` loads the quantizer module with its package's
``__init__`` left unexecuted (an empty package module of the same name and path), as the
registry row's ``before`` asks.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

from tests.targets import TARGETS, Target


def target(vendor: str) -> Target:
    """The registry's row (tests/targets.py) whose zoo is ``tests/live/<vendor>_zoo.py``: it
    names ExecuTorch's class, the generated one and what imports need first (``before``)."""
    rows = [t for t in TARGETS if t.zoo == f"{vendor}_zoo"]
    if len(rows) != 1:
        zoos = sorted({t.zoo.removesuffix("_zoo") for t in TARGETS if t.zoo})
        raise KeyError(f"{vendor!r}: no registry row has its zoo; the zoos are {zoos}")
    return rows[0]


def import_past_init(module: str, packages: tuple[str, ...]) -> Any:
    """``module``, with each of ``packages`` made a bare package (its ``__init__`` not run)
    where it is not imported yet: the rest of the path imports as usual."""
    for name in packages:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations is not None, name
        package = types.ModuleType(name)
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules[name] = package
    return importlib.import_module(module)


def classes(vendor: str) -> tuple[type, type]:
    """(ExecuTorch's class, the generated class) of ``vendor``, as its registry row says."""
    row = target(vendor)
    return row.reference_class(), row.generated_class()


def zoo(vendor: str) -> Any:
    target(vendor)
    return importlib.import_module(f"tests.live.{vendor}_zoo")


def flat(o: Any) -> list:
    if isinstance(o, (tuple, list)):
        return [y for x in o for y in flat(x)]
    return [o]


def run(gm: torch.fx.GraphModule, args: tuple, quantizer: Any) -> tuple:
    """``pt2e_support.run``'s steps (prepare, seeded calibration, convert), keeping the
    annotations ``annotate`` made even when a later step fails (ExecuTorch's Samsung
    quantizer gives some models specs their observers cannot calibrate): (dump, outputs,
    converted ops), or a failure's name for the last two."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from tests.live.pt2e_support import recording

    rec = recording(quantizer)
    try:
        prepared = prepare_pt2e(gm, rec)
        torch.manual_seed(1)
        for _ in range(2):
            prepared(*[torch.randn_like(a) if a.is_floating_point() else a for a in args])
        converted = convert_pt2e(prepared)
        with torch.no_grad():
            out = converted(*args)
    except Exception as exc:  # the same failure on both sides is the same behaviour
        return rec.dump, type(exc).__name__, type(exc).__name__
    return rec.dump, out, [(n.op, str(n.target)) for n in converted.graph.nodes]


def compare_one(
    gm: torch.fx.GraphModule, args: tuple, setup: Callable[[Any], Any], vendor: str,
    generated: type | None = None,
) -> dict[str, Any]:  # fmt: skip
    """ExecuTorch's class and the generated one (or ``generated``) on one exported model,
    each configured by ``setup``."""
    from tests.live.pt2e_support import differences

    original, ours = classes(vendor)
    # A zoo whose setups construct the quantizer (CONSTRUCTS: CoreML's takes its config).
    make = setup if getattr(zoo(vendor), "CONSTRUCTS", False) else lambda cls: setup(cls())
    a = run(copy.deepcopy(gm), args, make(original))
    b = run(copy.deepcopy(gm), args, make(generated or ours))
    if isinstance(a[1], str) or isinstance(b[1], str):  # a failure after annotating
        outputs_equal = a[1] == b[1]
    else:
        outputs_equal = all(torch.equal(x, y) for x, y in zip(flat(a[1]), flat(b[1])))
    return {
        "differ": differences(a[0] or [], b[0] or []),
        "outputs_equal": outputs_equal,
        "graphs_equal": a[2] == b[2],
        "annotated": [len(a[0] or []), len(b[0] or [])],
        **({"failed": [a[1], b[1]]} if isinstance(a[1], str) or isinstance(b[1], str) else {}),
    }


def compare(
    vendor: str, names: list[str] | None = None, setups: list[str] | None = None,
    modes: tuple[bool, ...] = (True, False),
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Every model of ``vendor``'s zoo (or ``names``), under each setup (or ``setups``) and
    export mode (strict, non-strict): ``"model setup strict|nonstrict" -> result``."""
    z = zoo(vendor)
    getattr(z, "prepare", lambda: None)()  # the zoo's own preparation of the reference
    report: dict[str, dict[str, Any]] = {}
    for name, factory, args in z.ZOO:
        if names and name not in names:
            continue
        for strict in modes:
            torch.manual_seed(0)
            model = factory().train(name in getattr(z, "TRAIN", ()))
            gm = torch.export.export(model, args, strict=strict).module()
            for label, setup in z.SETUPS.items():
                if setups and label not in setups:
                    continue
                key = f"{name} {label} {'strict' if strict else 'nonstrict'}"
                report[key] = compare_one(gm, args, setup, vendor)
    return report


def clean(result: dict[str, Any]) -> bool:
    return not result["differ"] and result["outputs_equal"] and result["graphs_equal"]


def main(argv: list[str]) -> int:
    vendor, names = argv[0], argv[1:]
    report = compare(vendor, names)
    print(json.dumps(report, indent=1, default=str))
    bad = [k for k, v in report.items() if not clean(v)]
    nodes = sum(v["annotated"][0] for v in report.values() if isinstance(v["annotated"][0], int))
    print(
        f"{vendor}: {len(report)} runs, {nodes} annotated nodes, {len(bad)} differ", file=sys.stderr
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
