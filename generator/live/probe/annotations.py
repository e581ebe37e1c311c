"""A quantizer's annotations on one graph, read back as plain data that compares by value.

``dump(gm)`` turns ``node.meta["quantization_annotation"]`` into plain data:
every annotated node in graph order, its input specs in insertion order (the
order prepare_pt2e creates observers in) and its output spec. A spec becomes
``("qspec", dtype, quant_min, quant_max, qscheme, ch_axis, is_dynamic, ctr)``,
where ``ctr`` is the observer or fake-quant constructor with its ``with_args``
keywords (nested constructors included, floats exact); a shared spec names the
node or edge it shares; fixed-qparams and derived specs likewise. Spec objects
are never compared by identity: torchao's config getter is cached, a generated
quantizer's is not. (The PT2E tests' ``tests/live/pt2e_support.py`` has the
same canonical form.)

``annotate(quantizer, gm)`` runs a quantizer as ``prepare_pt2e`` does up to its
observers (``transform_for_annotation``, ``annotate``, ``validate``) on a copy
of ``gm`` and returns the dump and each annotated node's op.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Any

KEY = "quantization_annotation"

Dump = list[tuple[str, dict[str, Any]]]


def _qual(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"


def canon_ctr(ctr: Any) -> Any:
    """An observer or fake-quant constructor: its class and its with_args keywords, sorted."""
    if ctr is None or isinstance(ctr, type):
        return None if ctr is None else _qual(ctr)
    kwargs: dict[str, Any] = {}
    f = getattr(ctr, "p", ctr)
    while isinstance(f, functools.partial):
        for k, v in f.keywords.items():
            kwargs.setdefault(k, v)  # the outer call wins, as functools.partial does
        f = getattr(f.func, "p", f.func)
    items = tuple(sorted((k, _canon_value(v)) for k, v in kwargs.items()))
    extra = tuple(
        sorted((k, _canon_value(v)) for k, v in getattr(ctr, "callable_args", {}).items())
    )
    return (_qual(f), items) + ((("callable_args", extra),) if extra else ())


def _canon_value(v: Any) -> Any:
    import torch

    if isinstance(v, type) or getattr(v, "p", None) is not None or isinstance(v, functools.partial):
        return canon_ctr(v)
    if isinstance(v, (torch.dtype, torch.qscheme)):
        return str(v)
    if isinstance(v, float):
        return float.hex(v)
    return repr(v)


def _ref(edge_or_node: Any) -> tuple:
    from torch.fx import Node

    if isinstance(edge_or_node, Node):
        return ("node", edge_or_node.name)
    a, b = edge_or_node
    return ("edge", a.name, b.name)


def canon_spec(spec: Any) -> Any:
    """A quantization spec as plain data (see the module's docstring)."""
    from torchao.quantization.pt2e.quantizer import (
        DerivedQuantizationSpec,
        FixedQParamsQuantizationSpec,
        QuantizationSpec,
        SharedQuantizationSpec,
    )

    if spec is None:
        return None
    if isinstance(spec, SharedQuantizationSpec):
        return ("shared", _ref(spec.edge_or_node))
    common = (str(spec.dtype), spec.quant_min, spec.quant_max, str(spec.qscheme))
    if isinstance(spec, DerivedQuantizationSpec):
        refs = [_ref(e) for e in spec.derived_from]
        return (
            "derived",
            refs,
            _qual(spec.derive_qparams_fn),
            *common,
            spec.ch_axis,
            spec.is_dynamic,
        )
    if isinstance(spec, FixedQParamsQuantizationSpec):
        return ("fixed", float.hex(float(spec.scale)), spec.zero_point, *common, spec.is_dynamic)
    if isinstance(spec, QuantizationSpec):
        return (
            "qspec",
            *common,
            spec.ch_axis,
            spec.is_dynamic,
            canon_ctr(spec.observer_or_fake_quant_ctr),
        )
    return ("unknown", type(spec).__name__)


def dump(gm: Any) -> Dump:
    """Every annotated node, in graph order, with its annotation as plain data."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    base = {f.name for f in dataclasses.fields(QuantizationAnnotation)}
    out = []
    for n in gm.graph.nodes:
        qa = n.meta.get(KEY)
        if qa is None:
            continue
        record = {
            "annotated": qa._annotated,
            "implicit_sharing": qa.allow_implicit_sharing,
            "inputs": [(i.name, canon_spec(s)) for i, s in qa.input_qspec_map.items()],
            "output": canon_spec(qa.output_qspec),
        }
        if dataclasses.is_dataclass(qa):
            # a subclass's own fields (X86's _is_output_of_quantized_pattern), by value; its
            # name is left out: torchao's and a generated quantizer's classes differ in name
            extra = {
                f.name: repr(getattr(qa, f.name))
                for f in dataclasses.fields(qa)
                if f.name not in base
            }
            if extra:
                record["extra"] = tuple(sorted(extra.items()))
        out.append((n.name, record))
    return out


def differences(a: Dump, b: Dump) -> list[str]:
    """Node by node, how two dumps differ (empty: equal)."""
    da, db = dict(a), dict(b)
    out = []
    if [n for n, _ in a] != [n for n, _ in b]:
        out.append(
            f"annotated nodes differ: only the first's: {sorted(set(da) - set(db))}, "
            f"only the second's: {sorted(set(db) - set(da))}"
        )
    out.extend(f"{n}: {da[n]} != {db[n]}" for n in da if n in db and da[n] != db[n])
    return out


def op_name(node: Any) -> str:
    """A node's op as reports name it: ``aten.conv2d.default``, or its op and target."""
    target = node.target
    if node.op == "call_function":
        name = getattr(target, "__name__", str(target))
        overload = getattr(target, "_overloadname", None)
        ns = getattr(getattr(target, "namespace", None), "__str__", lambda: "")()
        if overload is not None:
            return f"{ns or 'aten'}.{getattr(target, '_opname', name)}.{overload}"
        return f"{getattr(target, '__module__', '') or ''}.{name}".lstrip(".")
    return node.op


@dataclasses.dataclass
class Annotated:
    """What a quantizer annotated on one graph: the dump, each annotated node's op, and
    each node's op by name (``ops``: every node of the graph the quantizer annotated)."""

    dump: Dump
    ops: dict[str, str]


def annotate(quantizer: Any, gm: Any) -> Annotated:
    """Run ``transform_for_annotation``, ``annotate`` and ``validate`` of ``quantizer`` on a
    copy of ``gm``; read back what it annotated."""
    model = copy.deepcopy(gm)
    model = quantizer.transform_for_annotation(model)
    model = quantizer.annotate(model)
    quantizer.validate(model)
    ops = {n.name: op_name(n) for n in model.graph.nodes}
    return Annotated(dump(model), ops)


# -------------------------------------------------------------- for people


def describe(spec: Any) -> str:
    """A canonical spec (``canon_spec``) in one line for a report."""
    if spec is None:
        return "none"
    kind = spec[0]
    if kind == "shared":
        ref = spec[1]
        return f"shared with {ref[1]}" if ref[0] == "node" else f"shared with {ref[1]}->{ref[2]}"
    if kind == "unknown":
        return f"a {spec[1]}"
    if kind == "derived":
        refs = ", ".join(r[1] if r[0] == "node" else f"{r[1]}->{r[2]}" for r in spec[1])
        dtype, qmin, qmax, qscheme, axis, dyn = spec[3:9]
        name = spec[2].rsplit(".", 1)[-1]
        return f"derived from {refs} by {name}: {_range(dtype, qmin, qmax, qscheme, axis, dyn)}"
    if kind == "fixed":
        scale, zp, dtype, qmin, qmax, qscheme, dyn = spec[1:8]
        return (
            f"fixed scale={number(float.fromhex(scale))} zero_point={zp}: "
            f"{_range(dtype, qmin, qmax, qscheme, None, dyn)}"
        )
    dtype, qmin, qmax, qscheme, axis, dyn, ctr = spec[1:8]
    return f"{_range(dtype, qmin, qmax, qscheme, axis, dyn)}, {_ctr(ctr)}"


def _range(dtype: str, qmin: Any, qmax: Any, qscheme: str, axis: Any, dyn: Any) -> str:
    text = f"{dtype.replace('torch.', '')} [{qmin}, {qmax}] {qscheme.replace('torch.', '')}"
    if axis is not None and "channel" in qscheme:
        text += f" axis {axis}"
    return text + (" dynamic" if dyn else "")


def _ctr(ctr: Any) -> str:
    if ctr is None:
        return "no observer"
    if isinstance(ctr, str):
        return ctr.rsplit(".", 1)[-1]
    name = ctr[0].rsplit(".", 1)[-1]
    args = ", ".join(f"{k}={_value(v)}" for k, v in ctr[1])
    return f"{name}({args})"


def _value(v: Any) -> str:
    if isinstance(v, str) and v.startswith(("0x", "-0x")):
        try:
            return number(float.fromhex(v))
        except ValueError:
            return v
    if isinstance(v, tuple):
        return _ctr(v)
    return str(v)


def number(v: float) -> str:
    """A float as a report writes it: exact negative powers of two as ``2**-k``."""
    import math

    mant, exp = math.frexp(v)
    if v > 0 and mant == 0.5 and exp - 1 <= -4:
        return f"2**{exp - 1}"
    return f"{v:g}"


def describe_record(record: dict[str, Any] | None) -> list[str]:
    """An annotation record of ``dump`` as lines: one per input, one for the output."""
    if record is None:
        return ["not annotated"]
    lines = [f"input {name}: {describe(spec)}" for name, spec in record["inputs"]]
    lines.append(f"output: {describe(record['output'])}")
    if not record["annotated"]:
        lines.append("(_annotated is False)")
    if "extra" in record:
        lines.extend(f"{k}: {v}" for k, v in record["extra"])
    return lines
