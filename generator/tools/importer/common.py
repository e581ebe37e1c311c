"""What every step of the import shares."""

from __future__ import annotations

import math
import re
import unicodedata

from ...lang import syntax as m

SPAN = m.Span("<import>", 1, 1, 1, 1)
MAX_BLOCK = 32  # longest block of patterns a loop may repeat
MAX_VARS = 2  # loop variables per loop


def path_expr(text: str) -> m.DottedName:
    return m.DottedName(tuple(text.split(".")), SPAN)


def int_expr(v: int) -> m.Expr:
    return m.Int(v, SPAN) if v >= 0 else m.Neg(m.Int(-v, SPAN), SPAN)


def number_expr(v: int | float) -> m.Expr:
    """A number as the spec writes it; exact negative powers of two as ``2 ** -k``."""
    if isinstance(v, int):
        return int_expr(v)
    if v < 0:
        return m.Neg(number_expr(-v), SPAN)
    mant, exp = math.frexp(v)
    if mant == 0.5 and exp - 1 <= -4:
        return m.BinOp("**", m.Int(2, SPAN), m.Neg(m.Int(1 - exp, SPAN), SPAN), SPAN)
    return m.Float(v, SPAN)


def getter_expr(path: tuple[int, ...]) -> m.Expr:
    e: m.Expr = m.PatternRef(SPAN)
    for i in path:
        e = m.Index(e, m.Int(i, SPAN), SPAN)
    return e


def field_of(name: str, value: m.Expr) -> m.Field:
    return m.Field(name, value, SPAN)


def spec_name(text: str) -> str:
    """``text`` as a name the language can write (its names are ASCII): letters without their
    accents, every other run of characters an underscore (``café—x`` -> ``cafe_x_``).

    Empty when nothing of ``text`` can be written (``日本``); callers supply a name then.
    """
    words = re.sub(r"\W+", "_", text)
    plain = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9_]+", "_", plain)


def is_spec_word(text: str) -> bool:
    """Whether the language can write ``text`` as a name as it is (an ASCII identifier)."""
    return text.isascii() and text.isidentifier()
