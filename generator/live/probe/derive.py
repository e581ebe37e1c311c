"""A derived spec's ``derive_qparams_fn`` named by what it computes, where it has no name.

Hand-written quantizers often derive their bias by a closure (ExecuTorch Arm's
``QuantizationConfig.get_bias_qspec.<locals>._derive_qparams_fn``), which no importable
path reaches, so an import cannot write it as it is. What such a function computes is
what matters (``annotations.derives`` compares a derived spec by it): ``identify`` tries
the forms a spec can say for a derived spec (``FORMS``: the standard bias, the product of
the scales of the edges it derives from, zero point 0, as ``bias_spec: derived`` and
ExecuTorch's and torchao's bias functions compute it) against the function on every
derived spec observed, each fed twice (``annotations.derives``' fixed tensors and a second
set), and gives the form that computes the same scale and zero point (values, dtype and
shape) on all of them; None when none does, or none of them could be fed (an edge of no
spec or shape).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .annotations import derives


@dataclasses.dataclass(frozen=True)
class Form:
    """A derived spec's function as Python source (``name`` defined by ``source``), and the
    function that source defines."""

    name: str
    source: str
    fn: Callable[..., Any]
    says: str  # what it computes, in words


def _form(cast: bool, zero_dtype: str) -> Form:
    name = "derive_scale_product" + ("" if cast else "_uncast") + f"_zero_{zero_dtype}"
    scale = "scale.to(torch.float32)" if cast else "scale"
    source = "\n".join(
        [
            "",
            f"def {name}(observers):",
            '    """The product of the derived-from observers\' scales (broadcast), zero point 0:',
            '    the standard derived bias (input scale times weight scale)."""',
            "    scale = observers[0].calculate_qparams()[0]",
            "    for observer in observers[1:]:",
            "        scale = scale * observer.calculate_qparams()[0]",
            f"    scale = {scale}",
            f"    return scale, torch.zeros_like(scale, dtype=torch.{zero_dtype})",
            "",
        ]
    )
    env: dict[str, Any] = {}
    exec("import torch\n" + source, env)  # noqa: S102  (bcfg's own source, above)
    says = (
        f"the product of the scales it derives from{' as float32' if cast else ''}, "
        f"zero point 0 ({zero_dtype})"
    )
    return Form(name, source, env[name], says)


# The forms a spec can say for a derived spec, the language's own (bias_spec: derived) first.
FORMS: tuple[Form, ...] = tuple(
    _form(cast, zero) for zero in ("int32", "int64") for cast in (True, False)
)

SALTS = (0, 1)  # each derived spec fed twice: derives' fixed tensors and a second set


def identify(specs: Sequence[Any]) -> Form | None:
    """The form of ``FORMS`` whose scale and zero point equal what each derived spec of
    ``specs`` computes with its own function, on every spec that can be fed; None if none
    does or none can be fed."""
    fed = []
    for spec in specs:
        own = [derives(spec, salt) for salt in SALTS]
        if all(o[0] == "computes" for o in own):
            fed.append((spec, own))
    if not fed:
        return None
    for form in FORMS:
        if all(
            derives(dataclasses.replace(spec, derive_qparams_fn=form.fn), salt) == o
            for spec, own in fed
            for salt, o in zip(SALTS, own)
        ):
            return form
    return None
