"""What each ExecuTorch delegate runs, and the check of a quantizer's dtype configs against it.

A quantizer that says ``delegate: xnnpack`` will be lowered by ExecuTorch's
``XnnpackPartitioner``. A dtype config that delegate cannot run does not fail
where the spec is written, but two steps later, far from it: at
``to_executorch()`` or when ExecuTorch's runtime loads the program. So the
dtype configs of the patterns the quantizer quantizes are checked here, at
generate time, and each one the delegate refuses is a warning at the
``input:``/``output:``/``weight:`` key that says it, naming what fails and
where.

What XNNPACK takes, as ExecuTorch 1.5.1 lowers it (read in
``executorch/backends/xnnpack/partition/config/xnnpack_config.py`` and
``utils/quant_utils.py``, and lowered in ``tests/live/test_delegates.py``):

- activations quantized to int8 only (any zero point, any range inside
  -128..127): the partitioner takes quantize/dequantize nodes whose tensors
  are float32, float16, int8 or qint8/quint8/qint32 objects, and a PT2E
  quint8 activation is a ``torch.uint8`` tensor; the op stays outside the
  delegate, with its quantize/dequantize nodes, which have no ExecuTorch
  kernel: ``to_executorch()`` fails with ``Missing out variants:
  {'quantized_decomposed::quantize_per_tensor', ...}``;
- weights quantized to int8, symmetric (zero point 0): a uint8 weight is
  delegated, and the runtime then refuses to load the program (``XNNCompiler:
  Failed to define tensor ... xnn_status_invalid_parameter``); so does an
  asymmetric int8 weight of a linear, and per channel, asymmetric weights run
  with wrong results. Whether a config's weights are symmetric is the
  config's (its ``qscheme``); a spec says it only by fixing the zero point.

Pure over the resolved model: no torch, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Severity
from ..sources import Span
from . import model as m
from .checks import Finding, pattern_text
from .spelling import dtype_record as spell_record
from .spelling import dtype_word


@dataclass(frozen=True)
class Delegate:
    """What one delegate runs: the spec dtypes its quantized activations and weights may have,
    and what happens, as said to the user, to what it does not run."""

    name: str  # as a quantizer's ``delegate:`` names it
    title: str  # as messages name it
    activations: frozenset[str]  # canonical spec dtype names; float activations always run
    weights: frozenset[str]
    weight_zero_point: int | None  # the one zero point weights may have; None: any
    # By role ("activation", "weight"): what it runs, what fails otherwise, what to do.
    runs: dict[str, str]
    failure: dict[str, str]
    hint: dict[str, str]


_NOT_XNNPACK = "or remove delegate: xnnpack if this backend is not lowered to XNNPACK"

XNNPACK = Delegate(
    name="xnnpack",
    title="ExecuTorch's XNNPACK delegate",
    activations=frozenset({"qint8", "int8"}),
    weights=frozenset({"qint8", "int8"}),
    weight_zero_point=0,
    runs={
        "activation": "int8 activations only",
        "weight": "int8 weights with zero point 0 (symmetric) only",
    },
    failure={
        "activation": "ExecuTorch 1.5.1's XnnpackPartitioner leaves these ops outside the "
        "delegate, and to_executorch() fails with 'Missing out variants: "
        "quantized_decomposed::quantize_per_tensor'",
        "weight": "the program lowers, but ExecuTorch 1.5.1's runtime refuses to load it "
        "(XNNCompiler: xnn_status_invalid_parameter)",
    },
    hint={
        "activation": "quantize activations to qint8 (any zero point and any range inside "
        f"-128..127; ExecuTorch's get_symmetric_quantization_config gives -128..127), {_NOT_XNNPACK}",
        "weight": "quantize weights to qint8 symmetrically (zero point 0: per_channel_symmetric "
        f"or per_tensor_symmetric, as ExecuTorch's get_symmetric_quantization_config), {_NOT_XNNPACK}",
    },
)

DELEGATES: dict[str, Delegate] = {d.name: d for d in (XNNPACK,)}

_FLOATS = frozenset({"float32", "float16", "bfloat16", "float64"})


def check(
    delegate: Delegate, quantizer: str, backend: m.Backend, rules: tuple[m.Rule, ...]
) -> list[Finding]:
    """A warning for each dtype the quantized patterns use that ``delegate`` refuses.

    The patterns are those the quantizer's ``rules`` come from (a pattern left out of
    the quantizer is not lowered). Each refused dtype, as activation or as weight, is
    one warning however many dtype configs and patterns use it, at the constraint
    that defines it (else at the first dtype config key that says it), naming the
    dtype configs and patterns it reaches.
    """
    anchors = {o.anchor for r in rules for o in r.origins}
    found: dict[tuple[str, m.DType], _Refused] = {}
    for c in backend.configs:
        if c.origin is None or c.origin.anchor not in anchors:
            continue
        refs = [*c.origin.definitions, *(r for step in c.origin.chain for r in step.definitions)]
        for d in c.dtype_configs:
            for key, role, dtype, problem in _problems(delegate, d):
                span = _defined_at(dtype, refs) or d.span(key) or c.field_span("dtypes") or c.span
                if span is None:
                    continue
                refused = found.setdefault((role, dtype), _Refused(span, problem))
                refused.configs.append(d.name or spell_record(d))
                refused.patterns.append(pattern_text(c.pattern))
    out = []
    for (role, dtype), r in found.items():
        named = [f"constraint {dtype.name}"] if dtype.name else []
        named += [f"dtype config{_listed(r.configs)}", f"pattern{_listed(r.patterns)}"]
        message = (
            f"{r.problem} ({'; '.join(named)}): "
            f"{delegate.title} runs {delegate.runs[role]} (quantizer {quantizer} says "
            f"delegate: {delegate.name}); {delegate.failure[role]}"
        )
        out.append(Finding(Severity.WARNING, r.span, message, delegate.hint[role]))
    return sorted(out, key=lambda f: (f.span.file, f.span.line, f.span.column))


@dataclass
class _Refused:
    span: Span
    problem: str
    configs: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)


def _listed(names: list[str], shown: int = 3) -> str:
    """``s a, b, c and 2 more`` (``" a"`` for one): each name once."""
    unique = list(dict.fromkeys(names))
    head = ", ".join(unique[:shown]) + (
        f" and {len(unique) - shown} more" if len(unique) > shown else ""
    )
    return f"{'s' if len(unique) != 1 else ''} {head}"


def _defined_at(dtype: m.DType, refs: list[m.DefinitionRef]) -> Span | None:
    """Where the constraint ``dtype`` came from is defined, if it is named and known."""
    if dtype.name is None:
        return None
    return next((r.span for r in refs if r.kind == "constraint" and r.name == dtype.name), None)


def _problems(delegate: Delegate, d: m.DTypeConfig) -> list[tuple[str, str, m.DType, str]]:
    """The parts of dtype config ``d`` the delegate refuses: (key, role, dtype, what it is)."""
    out = []
    for key, value in (("input", d.input), ("output", d.output)):
        if value is None or value.dtype in _FLOATS:
            continue
        if d.is_dynamic and key == "output":
            continue  # a dynamic config's output is float whatever it says
        if value.dtype not in delegate.activations:
            what = f"activations in {_shown(value)}"
            out.append((key, "activation", value, what))
    w = d.weight
    if w is not None and w.dtype not in _FLOATS:
        if w.dtype not in delegate.weights:
            out.append(("weight", "weight", w, f"weights in {_shown(w)}"))
        elif (
            delegate.weight_zero_point is not None
            and w.zero_point_exact_match is not None
            and w.zero_point_exact_match != delegate.weight_zero_point
        ):
            what = f"weights in {_shown(w)}, zero point {w.zero_point_exact_match}"
            out.append(("weight", "weight", w, what))
    return out


def _shown(d: m.DType) -> str:
    return dtype_word(d.dtype)
