"""``given: {param: value}`` on a pattern: it is in an instance's support table only when
the class was constructed with those values (ExecuTorch's Cortex-M ``use_explicit_layout``
picks a second support table). Checked once the quantizer's ``classes:`` are resolved: each
parameter is one of every class, and not ``fixed``."""

from __future__ import annotations

from .. import model as m
from ..context import Ctx
from .keys import fail_key

_WORDS = {True: "true", False: "false", None: "none"}


def check(
    ctx: Ctx, backend: m.Backend, classes: tuple[m.QuantClass, ...], generated: str = ""
) -> bool:
    """Report each pattern whose ``given`` names what no class can be given; False if one did.
    ``generated``: the generated class's name, which the getter returns (and compat checks):
    its table must be selected too."""
    ok = True
    for c in backend.configs:
        given = () if c.pt2e is None else c.pt2e.given
        for name, value in given:
            problem = _problem(ctx, name, value, classes) or _generated(name, classes, generated)
            if problem is not None:
                fail_key(ctx, c, "given", *problem)
                ok = False
                break
    return ok


def _problem(
    ctx: Ctx, name: str, value: object, classes: tuple[m.QuantClass, ...]
) -> tuple[str, str] | None:
    if not classes:
        return (
            f"given: '{name}' selects the pattern by a constructor parameter of the quantizer's "
            "classes; this quantizer has no classes",
            f"add classes: [{{name: ..., params: {{{name}: ...}}}}] to the quantizer, or remove given",
        )
    for cls in classes:
        param = next((p for p in cls.params if p.name == name), None)
        if param is None:
            names = [p.name for p in cls.params]
            return (
                f"given: '{name}' is no parameter of class {cls.name}, whose table the pattern would be in",
                ctx.suggest(name, names)
                or f"its parameters: {', '.join(names) or 'none'}; every class needs the parameter",
            )
        if param.fixed:
            return (
                f"given: '{name}' is a fixed parameter of class {cls.name}: its value is "
                f"always {_WORDS.get(param.value, repr(param.value))}, so it selects nothing",
                f"remove {name} from the class's fixed list, or remove given",
            )
        if isinstance(param.value, bool) and not isinstance(value, bool):
            return (
                f"given: '{name}' is {value!r}; the parameter of class {cls.name} is a flag "
                f"(default {'true' if param.value else 'false'})",
                "write true or false",
            )
        if _kind(param.value) and _kind(value) and _kind(param.value) != _kind(value):
            return (
                f"given: '{name}' is {value!r}, a {_kind(value)}; the "
                f"parameter of class {cls.name} defaults to {param.value!r}, a "
                f"{_kind(param.value)}: the constructor's argument would never equal it",
                f"write a {_kind(param.value)}, like {param.value!r}",
            )
    return None


def _kind(value: object) -> str:
    """What a literal is, for comparing a given value with a default ("" for none)."""
    if isinstance(value, bool):
        return "flag"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else ""


def _generated(
    name: str, classes: tuple[m.QuantClass, ...], generated: str
) -> tuple[str, str] | None:
    """The generated class must be a class of the list: else its constructor selects no
    table, and its instances (the getter's, compat's) have none of the variants."""
    if not generated or not classes or any(c.name == generated for c in classes):
        return None
    return (
        f"given: '{name}' selects the pattern by a constructor parameter, and the generated "
        f"class {generated} (what the getter returns, and compat checks) is not in classes:, "
        "so its instances would have none of the pattern's variants",
        f"add {{name: {generated}, params: {{{name}: ...}}}} to the quantizer's classes",
    )
