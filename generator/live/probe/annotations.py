"""A quantizer's annotations on one graph, read back as plain data that compares by value.

``dump(gm)`` turns ``node.meta["quantization_annotation"]`` into plain data:
every annotated node in graph order, its input specs in insertion order (the
order prepare_pt2e creates observers in) and its output spec. A spec becomes
``("qspec", dtype, quant_min, quant_max, qscheme, ch_axis, is_dynamic, ctr)``,
where ``ctr`` is the observer or fake-quant constructor with its ``with_args``
keywords (nested constructors included, floats exact); a shared spec names the
node or edge it shares; fixed-qparams and derived specs likewise, a derived
spec's function by what it computes (``derives``). Spec objects
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
    if isinstance(v, torch.fx.Graph):  # an observer bound to its node (Qualcomm's cat's)
        return "the annotated graph"  # each annotate's copy of the graph: not by its address
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
            derives(spec),
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


def derives(spec: Any, salt: int = 0) -> tuple:
    """A derived spec's ``derive_qparams_fn`` by what it computes, not by where it lives (a
    vendor's function and a generated quantizer's copy of it compute alike from different
    modules): ``("computes", scale, zero point)``, each tensor as its dtype, shape, first
    value and a digest of all its values, or ``("raises", its error's type)``, from the
    observers ``prepare_pt2e`` would give the edges it derives from (their specs, shared ones
    followed), each fed a fixed tensor of the edge's shape (``salt``: another set of values).
    ``("named", its bare name)`` where those observers cannot be made (an edge of no spec or
    shape)."""
    import torch

    fn = spec.derive_qparams_fn
    observers = [_observer(e, i, salt) for i, e in enumerate(spec.derived_from)]
    if any(o is None for o in observers):
        name = getattr(fn, "func", fn)
        return ("named", getattr(name, "__qualname__", type(name).__name__))
    try:
        with torch.no_grad():
            got = fn(observers)
    except Exception as exc:  # noqa: BLE001  (the quantizer's own function: anything)
        return ("raises", type(exc).__name__)
    return ("computes", *(_tensor(t) for t in (got if isinstance(got, (tuple, list)) else [got])))


def _observer(edge_or_node: Any, index: int, salt: int = 0) -> Any:
    """The observer ``prepare_pt2e`` makes for an edge or node from its spec, fed a fixed
    tensor of its shape (values that differ by element, by ``index`` and by ``salt``), or
    None."""
    import torch
    from torchao.quantization.pt2e.prepare import _create_obs_or_fq_from_qspec
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    at, spec = edge_or_node, None
    for _ in range(100):  # a shared spec's chain, followed to a spec of its own
        node = at[0] if isinstance(at, tuple) else at
        qa = (at[1] if isinstance(at, tuple) else at).meta.get(KEY)
        spec = qa and (qa.input_qspec_map.get(at[0]) if isinstance(at, tuple) else qa.output_qspec)
        if not isinstance(spec, SharedQuantizationSpec):
            break
        at = spec.edge_or_node
    val = getattr(node, "meta", {}).get("val")
    if spec is None or not isinstance(val, torch.Tensor):
        return None
    try:
        obs = _create_obs_or_fq_from_qspec(spec, {}, False)
        shape = [s if isinstance(s, int) else 2 for s in val.shape]
        n = max(1, int(torch.Size(shape).numel()))
        data = torch.sin(torch.arange(n, dtype=torch.float32) * (0.7 + 0.29 * salt) + index)
        data = data * (1.0 + 0.37 * index + 2.5 * salt)
        obs(data.reshape(shape))
        return obs
    except Exception:  # noqa: BLE001  (an observer of the quantizer's own: anything)
        return None


def _tensor(t: Any) -> Any:
    """A derive function's scale or zero point as plain data (a digest of its values)."""
    import hashlib

    import torch

    if not isinstance(t, torch.Tensor):
        return repr(t)
    values = t.detach().flatten().tolist()
    text = ",".join(float.hex(float(v)) if t.is_floating_point() else str(v) for v in values)
    first = (
        (float.hex(float(values[0])) if t.is_floating_point() else values[0]) if values else None
    )
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return (str(t.dtype), tuple(t.shape), first, digest)


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
            # an input mapped to None is an input left out: prepare_pt2e observes neither
            "inputs": [
                (i.name, canon_spec(s)) for i, s in qa.input_qspec_map.items() if s is not None
            ],
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
        how = _derives(spec[2])
        return f"derived from {refs}, {how}: {_range(dtype, qmin, qmax, qscheme, axis, dyn)}"
    if kind == "fixed":
        scale, zp, dtype, qmin, qmax, qscheme, dyn = spec[1:8]
        return (
            f"fixed scale={number(float.fromhex(scale))} zero_point={zp}: "
            f"{_range(dtype, qmin, qmax, qscheme, None, dyn)}"
        )
    dtype, qmin, qmax, qscheme, axis, dyn, ctr = spec[1:8]
    return f"{_range(dtype, qmin, qmax, qscheme, axis, dyn)}, {_ctr(ctr)}"


def _derives(how: tuple) -> str:
    """What ``derives`` recorded, in words: the scale and zero point it gave (dtype, shape,
    first value, digest), the error it raised, or its function's name."""
    if how[0] == "named":
        return f"by {how[1]}"
    if how[0] == "raises":
        return f"its function raising {how[1]}"
    parts = []
    for label, t in zip(("scale", "zero point"), how[1:]):
        if isinstance(t, str):
            parts.append(f"{label} {t}")
            continue
        dtype, shape, first, digest = t
        value = _value(first) if isinstance(first, str) else str(first)
        size = "x".join(map(str, shape))
        parts.append(f"{label} {value}{', ...' if shape and size != '1' else ''} "
                     f"({dtype.replace('torch.', '')}[{size}] #{digest[:8]})")  # fmt: skip
    return "giving " + ", ".join(parts)


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
