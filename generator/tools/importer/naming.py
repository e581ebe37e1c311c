"""Step 2: names for what is shared: constraints and dtype configs named by content."""

from __future__ import annotations

import keyword
import re

from ...lang.vocabulary import (
    BOOLEANS,
    BUILTIN_ALIASES,
    BUILTIN_FUNCTIONS,
    DTYPE_NAMES,
    OBSERVATION_WORDS,
)
from ...lang.vocabulary import KEYWORDS as KEYWORDS_
from .common import spec_name
from .reader import DT

# Words a generated name must not be.
KEYWORDS = {
    *KEYWORDS_, "fuser", *BUILTIN_FUNCTIONS, *BOOLEANS,
    *OBSERVATION_WORDS.values(), *OBSERVATION_WORDS,
}  # fmt: skip


SPEC_DTYPES = {str(n): n for n in DTYPE_NAMES}


def dtype_word(name: str) -> str:
    """How a spec writes a dtype: ``float32`` -> ``float``; unknown ones by path."""
    if name == "float32":
        return "float"
    if name in SPEC_DTYPES:
        return name
    return f"torch.{name}"


def _num_word(v: int | float) -> str:
    text = repr(v).replace("-", "m").replace(".", "p").replace("+", "")
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _signed_word(x: float) -> str:
    return f"minus_{int(-x)}" if x < 0 else str(int(x))


def constraint_name(dt: DT) -> str:
    """A name by content: ``qint8_min_scale``, ``quint8_fixed_0_to_1``."""
    base = re.sub(r"\W", "_", dt.dtype)
    b = dict(dt.bounds)
    qmin, qmax, scale, zp = (
        b.get("quant_min"),
        b.get("quant_max"),
        b.get("scale"),
        b.get("zero_point"),
    )
    if None not in (qmin, qmax, scale, zp) and set(b) <= {
        "quant_min",
        "quant_max",
        "scale",
        "zero_point",
    }:
        assert qmin is not None and qmax is not None and scale is not None and zp is not None
        lo, hi = (qmin - zp) * scale, (qmax + 1 - zp) * scale
        if float(lo).is_integer() and float(hi).is_integer():
            return f"{base}_fixed_{_signed_word(lo)}_to_{_signed_word(hi)}"
    tags = []
    if qmin is not None or qmax is not None:
        tags.append(
            f"range_{_num_word(qmin) if qmin is not None else 'any'}_{_num_word(qmax) if qmax is not None else 'any'}"
        )
    for key, tag in (
        ("scale_min", "min_scale"),
        ("scale_max", "max_scale"),
        ("scale", "scale"),
        ("zero_point", "zero_point"),
    ):
        if key in b:
            tags.append(tag)
    return "_".join([base, *tags])


class Names:
    """Unique names for definitions and loop variables, clear of everything a spec knows."""

    def __init__(self) -> None:
        self.taken: set[str] = (
            set(KEYWORDS) | set(BUILTIN_ALIASES) | set(DTYPE_NAMES) | set(keyword.kwlist)
        )

    def fresh(self, base: str) -> str:
        base = spec_name(base) or "x"
        if base[0].isdigit():
            base = "_" + base
        name, n = base, 2
        while name in self.taken:
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name
