"""Values: what an expression evaluates to before the field it appears in gives it a type.

``Evaluator.eval`` turns syntax into these; ``coerce`` then makes a pattern, a
dtype set, a module or a fuser of them, with a message in the language's own
terms when it cannot ("expected a dtype set, got a function 'torch.add'").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang import syntax as syn
from ..lang.vocabulary import quote, spell
from ..sources import Span
from . import model as m
from . import spelling


# Values the resolver computes from expressions before they are given a type by
# the field they appear in.
@dataclass(frozen=True)
class Word:
    text: str
    span: Span


@dataclass(frozen=True)
class Sym:
    symbol: m.Symbol
    span: Span


@dataclass(frozen=True)
class Num:
    value: int | float
    span: Span


@dataclass(frozen=True)
class Text:
    value: str
    span: Span


@dataclass(frozen=True)
class Seq:
    items: tuple[Value, ...]
    is_tuple: bool
    span: Span


@dataclass(frozen=True)
class Rec:
    entries: tuple[tuple[str | int, Value, Span], ...]
    span: Span


@dataclass(frozen=True)
class DTypeSet:
    configs: tuple[m.DTypeConfig, ...]
    span: Span


@dataclass(frozen=True)
class DTypeValue:
    dtype: m.DType
    span: Span


@dataclass(frozen=True)
class FuserValue:
    fuser: m.Fuser
    span: Span


@dataclass(frozen=True)
class Getter:
    path: tuple[int, ...]
    span: Span


Value = Word | Sym | Num | Text | Seq | Rec | DTypeSet | DTypeValue | FuserValue | Getter

KIND_WORDS = {
    "module": "a module class",
    "class": "a class",
    "function": "a function",
    "op": "an operator",
    "dtype": "a dtype",
    "namespace": "a module",
}


def describe(v: Value) -> str:
    """What a value is, for messages: "a function 'torch.nn.functional.relu'"."""
    if isinstance(v, Sym):
        return f"{KIND_WORDS.get(v.symbol.kind, 'a value')} '{v.symbol.path}'"
    if isinstance(v, Word):
        return f"the name '{v.text}'"
    if isinstance(v, Text):
        return f"the string {v.value!r}"
    if isinstance(v, Num):
        return f"the number {v.value!r}"
    if isinstance(v, DTypeValue):
        return f"the dtype {v.dtype.dtype}" + (" with constraints" if v.dtype.constrained else "")
    return {
        Rec: "a record",
        DTypeSet: "a dtype set",
        FuserValue: "a fuser",
        Getter: "a pattern element",
    }.get(type(v), "a list" if isinstance(v, Seq) and not v.is_tuple else "a tuple")


def value_text(v: Value) -> str:
    """A value as a spec would write it, for origins: ``F.relu``, ``2``, ``(nn.LSTM, nnqr.LSTM)``."""
    if isinstance(v, Sym):
        return spell(v.symbol.path)
    if isinstance(v, Word):
        return v.text
    if isinstance(v, Text):
        return quote(v.value)
    if isinstance(v, Num):
        return repr(v.value)
    if isinstance(v, DTypeValue):
        return spelling.dtype(v.dtype)
    if isinstance(v, DTypeSet):
        return spelling.dtype_set(v.configs)
    if isinstance(v, Seq):
        inner = ", ".join(value_text(x) for x in v.items)
        if v.is_tuple:
            return f"({inner}{',' if len(v.items) == 1 else ''})"
        return f"[{inner}]"
    if isinstance(v, Getter):
        return "pattern" + "".join(f"[{i}]" for i in v.path)
    return describe(v)


def plain_name(name: str) -> bool:
    """A name with no ``${...}`` holes that Python accepts as an identifier."""
    return name.isidentifier() and "${" not in name


def source_text(e: syn.Expr) -> str:
    """A short rendering of an argument expression, for notes."""
    if isinstance(e, syn.DottedName):
        return e.text
    if isinstance(e, syn.Str):
        return quote(e.value)
    if isinstance(e, (syn.Int, syn.Float)):
        return str(e.value)
    if isinstance(e, syn.ListExpr):
        return "[" + ", ".join(source_text(x) for x in e.items) + "]"
    if isinstance(e, syn.TupleExpr):
        return (
            "("
            + ", ".join(source_text(x) for x in e.items)
            + ("," if len(e.items) == 1 else "")
            + ")"
        )
    return "..."
