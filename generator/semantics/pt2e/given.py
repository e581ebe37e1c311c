"""``given: {param: value}`` on a pattern: it is in an instance's support table only when
the class was constructed with those values (ExecuTorch's Cortex-M ``use_explicit_layout``
picks a second support table). Checked once the quantizer's ``classes:`` are resolved: each
parameter is one of every class, and not ``fixed``."""

from __future__ import annotations

from .. import model as m
from ..context import Ctx
from .keys import fail_key

_WORDS = {True: "true", False: "false", None: "none"}


def check(ctx: Ctx, backend: m.Backend, classes: tuple[m.QuantClass, ...]) -> bool:
    """Report each pattern whose ``given`` names what no class can be given; False if one did."""
    ok = True
    for c in backend.configs:
        given = () if c.pt2e is None else c.pt2e.given
        for name, value in given:
            problem = _problem(ctx, name, value, classes)
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
    return None
