"""The classes of a ``scopes: pairs`` quantizer's ``classes:`` (ExecuTorch's Cadence scheme) as
generated code: a pair class (``PatternPair`` over the module's rules), pairs functions that
return their pairs, and classes whose constructors append their pairs to ``quantizers`` and
compose them (``semantics/pt2e/pair_classes.py`` has the records)."""

from __future__ import annotations

import keyword
from typing import Any

from ..semantics import model as m
from . import layout
from .pysource import safe_text

# The emitter's ``_Names`` (pt2e.py): its imports, runtime names and pairs functions.
_Names = Any
LIST, QAT = m.PAIRS_LIST, m.PAIRS_QAT


def pairs_source(c: m.QuantClass, cls: str, spec: str, names: _Names, pair: str) -> str:
    """A class or function of the list other than the generated class (black formats the
    module after); ``pair`` is the list's pair class."""
    doc = f"{c.name}, exported under the target's own name, from {safe_text(spec)}"
    if c.function:
        sig = ", ".join(signature(c))
        lines = [f"def {c.name}({sig}) -> list:", f'    """{doc}: its pairs."""']
        body = [*_defaults(c, names), *_pairs(c, names, pair), "return quantizers"]
        return "\n".join(lines + ["    " + line for line in body])
    bases = [names.sym(s) for s in c.mixins]
    if c.pair:
        bases.append(c.parent or names.need("PatternPair"))
        lines = [f"class {c.name}({', '.join(bases)}):", f'    """{doc}: one pair."""', ""]
        return "\n".join(lines + ["    rules = RULES", f"    spec = {layout.string(spec)}"])
    bases.append(c.parent or cls)
    lines = [f"class {c.name}({', '.join(bases)}):", f'    """{doc}."""', ""]
    base = names.need("PairsQuantizer")
    return "\n".join(lines + pairs_constructor(c, f"{base}.__init__(self, ", spec, names, pair))


def pairs_constructor(c: m.QuantClass, call: str, spec: str, names: _Names, pair: str) -> list[str]:
    """``__init__`` of a pairs class, indented for its class body: fixed parameters checked,
    defaults made, the pairs appended to ``quantizers``, the base constructed with them
    (``call``: how, up to its first argument after self), the init hook called."""
    lines = [f"def __init__({', '.join(['self', *signature(c)])}) -> None:"]
    lines += refusals(c, spec, names)
    body = [*_defaults(c, names), *_pairs(c, names, pair), f"{call}quantizers)"]
    if c.init is not None:
        body.append(f"{names.sym(c.init)}({', '.join(['self', *(p.name for p in c.params)])})")
    lines += ["    " + line for line in body]
    return ["    " + line for line in lines]


def refusals(c: m.QuantClass, spec: str, names: _Names) -> list[str]:
    """The constructor's checks of its ``fixed`` parameters (another value is refused)."""
    lines = []
    for p in c.params:
        if p.fixed:
            value = layout.string(p.value) if isinstance(p.value, str) else repr(p.value)
            args = [layout.string(c.name), layout.string(p.name), p.name, value]
            args.append(layout.string(spec))
            lines.append(f"    {names.need('refuse')}({', '.join(args)})")
    return lines


def signature(c: m.QuantClass) -> list[str]:
    """The constructor's parameters after self: an object or a list made at construction
    defaults to None."""
    out = []
    for p in c.params:
        value = "None" if p.path is not None or p.calls is not None else repr(p.value)
        out.append(p.name if p.required else f"{p.name}={value}")
    return out


def _defaults(c: m.QuantClass, names: _Names) -> list[str]:
    """The parameters whose None stands for an object or a list made now; a fresh
    ``quantizers`` list if the class has no such parameter."""
    lines = []
    for p in c.params:
        if p.path is not None:
            made = f"{names.need('load_object')}({layout.string(p.path)})"
        elif p.calls is not None:
            made = _call(p.calls, c, names) if p.calls else "[]"
        else:
            continue
        lines += [f"if {p.name} is None:", f"    {p.name} = {made}"]
    if all(p.name != LIST for p in c.params):
        lines.append(f"{LIST}: list = []")
    return lines


def _call(function: str, c: m.QuantClass, names: _Names) -> str:
    """A pairs function called with the caller's parameters of the same names."""
    params = names.functions.get(function, ())
    args = [f"{p.name}={p.name}" for p in c.params if p.name in params]
    return f"{function}({', '.join(args)})"


def config_source(ref: m.ClassStage, names: _Names) -> str:
    """A config: the parameter, or the object by dotted path, loaded."""
    if ref.param is not None:
        return ref.param
    assert ref.path is not None, "a stage's config is a parameter or a path"
    return f"{names.need('load_object')}({layout.string(ref.path)})"


def _pairs(c: m.QuantClass, names: _Names, pair: str) -> list[str]:
    """The pairs appended, each config an object by dotted path (the QAT one if ``is_qat``)
    loaded once into a local named after it."""
    lines: list[str] = []
    local: dict[tuple[m.ClassStage, m.ClassStage | None], str] = {}
    # a local takes no name the constructor reads: the module's, the parameters
    taken = {*names.scope.taken, *(p.name for p in c.params), LIST, *names.functions}
    for p in c.pairs:
        if p.splice is not None:
            lines.append(f"{LIST} = {LIST} + {_call(p.splice, c, names)}")
            continue
        assert p.config is not None and p.pattern is not None
        key = (p.config, p.qat)
        if p.config.param is not None and p.qat is None:
            config = p.config.param
        elif key in local:
            config = local[key]
        else:
            config = (p.config.path or "config").split(".")[-1]
            while config in taken or not config.isidentifier() or keyword.iskeyword(config):
                config += "_"
            taken.add(config)
            local[key] = config
            value = config_source(p.config, names)
            if p.qat is not None:
                value = f"{config_source(p.qat, names)} if {QAT} else {value}"
            lines.append(f"{config} = {value}")
        pattern = f"{names.need('load_object')}({layout.string(p.pattern)})()"
        lines.append(f"{LIST}.append({pair}({pattern}, {config}))")
    return lines
