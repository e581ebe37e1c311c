"""The PT2E emitter: resolved quantizers to ``<backend>_quantizer.py``, plus their runtime.

A generated quantizer module is data over the runtime (the package
``generator/runtime``, copied module for module as ``_bcfg_pt2e/``): the
quantization dtypes and dtype configs of the spec as ``Quant`` and ``Allows``
values, one ``Rule`` per rule in order, a subclass of its ``scopes``' runtime base
that holds them (its body one loop over the key table's quantizer fields), and the
classes of ``classes:``.
As in the BackendConfig emitter, Python decides every name and literal, the
templates only print, each statement is laid out as black would, and the
result is compiled before it is stamped with the header.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..infra.header import stamp
from ..lang.pt2e_keys import BASES, QUANTIZER_TABLE, Key, Written
from ..lang.vocabulary import MODULE_ALIASES
from ..semantics import model as m
from ..semantics.model import GENERATED_NAMES, RUNTIME_MODULE, RUNTIME_NAMES
from ..semantics.model import quantizer_class as class_name
from . import layout
from .pt2e_pairs import config_source, pairs_constructor, pairs_source, refusals, signature
from .pysource import (
    Fragments,
    Scope,
    black_format,
    check_source,
    comment_text,
    jinja_env,
    layout_matches_black,
    safe_text,
)

# The runtime's sources: Python modules of this package, read as text, never imported here.
RUNTIME_SOURCE = Path(__file__).resolve().parent.parent / "runtime"
_ATEN = "torch.ops.aten."
# Module-level names of a quantizer module (builtins and keywords: Scope knows them); a
# class or parameter of ``classes:`` may take none of them (semantics/pt2e/names.py).
_RESERVED = GENERATED_NAMES


# The configuration method of each level of a registry quantizer's select: (runtime registry).
SETTERS = {
    "node_name": "set_node_name",
    "module_name": "set_module_name",
    "module_type": "set_module_type",
    "submodule": "add_submodule",
    "op_set": "set_op_set",
    "default": "set_default",
}


def getter_name(module: str) -> str:
    return f"get_{module}_quantizer"


@dataclass
class _Names:
    """The imports and module-level names one generated quantizer module needs."""

    imports: set[str] = field(default_factory=set)
    runtime: set[str] = field(default_factory=set)
    scope: Scope = field(default_factory=lambda: Scope(_RESERVED))
    quants: dict[m.Quant, str] = field(default_factory=dict)
    allows: dict[m.Allows, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # definitions, in order of first use
    functions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pairs functions' params

    def local(self, base: str) -> str:
        return self.scope.fresh(base if base.isidentifier() else "value")

    def need(self, name: str) -> str:
        self.runtime.add(name)
        return name

    def sym(self, s: m.Symbol) -> str:
        return _sym(s, self)


def _sym(sym: m.Symbol, names: _Names) -> str:
    """A symbol as generated code names it: aten ops through ``aten``, modules by alias."""
    if sym.path.startswith(_ATEN):
        names.imports.add("import torch")
        return "aten." + sym.path[len(_ATEN) :]
    module = sym.module or sym.path.split(".")[0]
    alias = MODULE_ALIASES.get(module)
    if alias is not None:
        names.imports.add(f"import {module} as {alias}")
        return alias + sym.path[len(module) :]
    names.imports.add(f"import {module}")
    return sym.path


def _quant(q: m.Quant | None, names: _Names) -> str:
    assert q is not None
    if q.dtype is None and q == m.Quant(None):
        return names.need("FLOAT")
    local = names.quants.get(q)
    if local is None:
        names.imports.add("import torch")
        args = ["None" if q.dtype is None else f"torch.{q.dtype}"]
        for key in ("quant_min", "quant_max", "scale_min", "scale", "zero_point"):
            value = getattr(q, key)
            if value is not None:
                args.append(f"{key}={value!r}")
        local = names.local(q.name or q.dtype or "float32")
        names.quants[q] = local
        names.lines.append(f"{local} = {names.need('Quant')}({', '.join(args)})")
    return local


def _allows(a: m.Allows, names: _Names) -> str:
    local = names.allows.get(a)
    if local is None:
        args = [layout.string(a.name or "dtype config")]
        for key in ("input", "output", "weight", "bias"):
            q = getattr(a, key)
            if q is not None:
                args.append(f"{key}={_quant(q, names)}")
        if a.dynamic is not None:
            args.append(f"dynamic={a.dynamic!r}")
        local = names.local(a.name or "dtype_config")
        names.allows[a] = local
        names.lines.append(f"{local} = {names.need('Allows')}({', '.join(args)})")
    return local


def _hook(h: m.Hook, names: _Names) -> str:
    if h.function is not None:
        return _sym(h.function, names)
    if h.ops:
        return f"{names.need(h.name)}({', '.join(_sym(op, names) for op in h.ops)})"
    return names.need(h.name)


def _seq(items: list[str]) -> str:
    """A sequence of the generated table: a list (black's layout of lists is the one modelled)."""
    return f"[{', '.join(items)}]"


def _rule(r: m.Rule, names: _Names, roots: bool) -> str:
    """A ``Rule(...)`` of the table: its name, then each field not at its default, in the
    order of the fields (the runtime's ``Rule`` has the same, with the same defaults)."""
    args = [layout.string(r.name)]
    for f in fields(r):
        value = getattr(r, f.name)
        if f.name in ("name", "origins") or value == f.default:
            continue
        if f.name == "roots" and not roots:
            continue  # only an operator-scoped quantizer configures by module type
        args.append(f"{f.name}={_value(value, names)}")
    return f"{names.need('Rule')}({', '.join(args)})"


def _value(v: Any, names: _Names) -> str:
    """A Rule field's value as the generated table writes it."""
    if isinstance(v, StrEnum):
        return layout.string(v.value)
    if v is None or isinstance(v, (bool, int, float)):
        return repr(v)
    if isinstance(v, str):
        return layout.string(v)
    if isinstance(v, m.Hook):
        return _hook(v, names)
    if isinstance(v, m.Symbol):
        return _sym(v, names)
    if isinstance(v, m.Allows):
        return _allows(v, names)
    assert isinstance(v, tuple), v
    return _seq([_value(x, names) for x in v])


def _reserve_imports(q: m.Quantizer, names: _Names) -> None:
    """Import what the module names first, so that no local takes an imported module's name."""
    names.imports.add("import torch")
    hooks = [
        h
        for r in q.rules
        for h in (*r.skip, *r.when, r.annotate, *r.weights_only_when, r.weights, r.annotate_node)
        if h is not None
    ]
    for h in [*hooks, *q.transforms]:
        if h.function is not None:
            _sym(h.function, names)
    for r in q.rules:
        roots = r.roots if q.scopes == "operators" else ()
        for s in (*r.sources, *roots, *(s for p in r.partitions for s in p)):
            _sym(s, names)
    names.scope.taken.update(i.split()[1].split(".")[0] for i in names.imports if " as " not in i)


def _origins(r: m.Rule, spec_file: str) -> list[str]:
    """Where the rule's patterns come from, one stable anchor each (no line numbers)."""
    anchors = dict.fromkeys(comment_text(o.anchor) for o in r.origins)
    return list(anchors) or [comment_text(spec_file)]


def render_quantizer(q: m.Quantizer, fast: bool | None = None) -> str:
    """The complete text of ``generated/<backend>_quantizer.py``."""
    frag = Fragments(layout_matches_black() if fast is None else fast)
    cls, getter = class_name(q.module), getter_name(q.module)
    exported = [c.name for c in q.classes if c.name != cls]
    names = _Names(scope=Scope(_RESERVED | {cls, getter, *exported}))
    _reserve_imports(q, names)
    rules = [
        {
            "origins": _origins(r, q.spec_file),
            "lines": frag.item(_rule(r, names, q.scopes == "operators"), 1),
        }
        for r in q.rules
    ]
    body = class_body(q, names)
    base = names.need(BASES[q.scopes].runtime)
    api = [names.need("ComposableAPI")] if q.api == "composable" else []
    spec_file = safe_text(q.spec_file)
    own = next((c for c in q.classes if c.name == cls), None)
    init, others = _class_sources(q, own, cls, base, names)
    init = frag.block(init)
    others = ["\n".join(frag.block(c.split("\n"))) for c in others]
    mixins = [] if own is None else [_sym(s, names) for s in own.mixins]
    exports = ", ".join(layout.string(n) for n in [cls, *exported, getter])
    source = (
        jinja_env()
        .get_template("pt2e/quantizer.py.jinja")
        .render(
            backend=q.module,
            spec_file=spec_file,
            runtime=RUNTIME_MODULE,
            cls=cls,
            base=base,
            bases=", ".join([*mixins, *api, base]),
            composable_api=bool(api),
            staged=own is not None and bool(own.stages),
            getter=getter,
            imports=sorted(names.imports),
            runtime_import=_runtime_imports(names.runtime),
            exports=frag.statement(f"__all__ = [{exports}]", 0),
            definitions=[line for text in names.lines for line in frag.statement(text, 0)],
            rules=rules,
            body=[line for text in body for line in frag.statement(text, 1)],
            init=init,
            classes=others,
            count=len(q.rules),
            select=" > ".join(q.levels),
            setters=", ".join(SETTERS[w] for w in q.levels),
        )
    )
    whole = not frag.fast or not _plain(spec_file)
    text = check_source(black_format(source) if whole else source, f"quantizer {q.module}")
    return stamp(spec_file, text)


def class_body(
    q: m.Quantizer, names: _Names, table: tuple[Key, ...] = QUANTIZER_TABLE
) -> list[str]:
    """The generated class's attributes: what it is, then, in the key table's order, each
    quantizer field that lands on a class attribute and is not at its default, written as
    its row says."""
    body = [
        f"backend = {layout.string(q.module)}",
        f"spec = {layout.string(q.spec_file)}",
        "rules = RULES",
    ]
    for key in table:
        if not key.attribute:
            continue
        (land,) = key.lands
        value = getattr(q, land)
        if value != key.default:
            body.append(_attribute(key, value, names))
    return body


def _attribute(key: Key, value: Any, names: _Names) -> str:
    """``attribute = value`` of a quantizer field, as its row's ``written`` says."""
    match key.written:
        case Written.STRING:
            return f"{key.attribute} = {layout.string(value)}"
        case Written.LITERAL:
            return f"{key.attribute} = {value!r}"
        case Written.STRINGS:
            return f"{key.attribute} = {_seq([layout.string(w) for w in value])}"
        case Written.HOOKS:
            return f"{key.attribute} = {_seq([_hook(h, names) for h in value])}"
        case Written.FLAG:
            return f"{key.attribute}_{value} = True"


def _class_sources(
    q: m.Quantizer, own: m.QuantClass | None, cls: str, base: str, names: _Names
) -> tuple[list[str], list[str]]:
    """The generated class's constructor and the other classes of ``classes:``."""
    if q.scopes == "pairs":  # ExecuTorch's Cadence scheme: pair classes, pairs appended
        return _pairs_classes(q, own, cls, names)
    chosen = tuple(dict.fromkeys(name for r in q.rules for name, _ in r.given))  # given:
    spec = q.spec_file
    init = [] if own is None else _constructor(own, "super().__init__()", spec, names, chosen)
    others = [
        _class_source(c, cls, base, spec, names, chosen, own is None)
        for c in q.classes
        if c is not own
    ]
    return init, others


def _pairs_classes(
    q: m.Quantizer, own: m.QuantClass | None, cls: str, names: _Names
) -> tuple[list[str], list[str]]:
    """The generated class's constructor and the other classes of a ``scopes: pairs`` list."""
    names.functions = {c.name: tuple(p.name for p in c.params) for c in q.classes if c.function}
    pair = next((c.name for c in q.classes if c.pair), "")
    spec = q.spec_file
    init = [] if own is None else pairs_constructor(own, "super().__init__(", spec, names, pair)
    return init, [pairs_source(c, cls, spec, names, pair) for c in q.classes if c is not own]


def _class_source(
    c: m.QuantClass,
    cls: str,
    base: str,
    spec: str,
    names: _Names,
    chosen: tuple[str, ...] = (),
    plain: bool = False,
) -> str:
    """An exported class of ``classes:`` other than the generated one: its bases, its
    constructor (black formats the module after). Derived from the generated class without
    a constructor of its own (``plain``), it constructs through ``super()``, so that its
    mixins' constructors run (specs/enn.bcfg generated under another module name); derived
    from a class with one (which takes other parameters and adds its own stages), it
    constructs the runtime base alone."""
    bases = [_sym(s, names) for s in c.mixins] + [c.parent or cls]
    doc = f'"""{c.name}, exported under the target\'s own name, from {safe_text(spec)}."""'
    lines = [f"class {c.name}({', '.join(bases)}):", f"    {doc}", ""]
    first = "super().__init__()" if plain and c.parent is None else f"{base}.__init__(self)"
    lines += _constructor(c, first, spec, names, chosen)
    return "\n".join(lines)


def _constructor(
    c: m.QuantClass, first: str, spec: str, names: _Names, chosen: tuple[str, ...] = ()
) -> list[str]:
    """``__init__`` of an exported class, indented for its class body: the base constructed,
    fixed parameters checked, object defaults imported, the init hook, the rules ``chosen``
    parameters select (``given:``), the stages."""
    sig = ", ".join(["self", *signature(c)])
    lines = [f"def __init__({sig}) -> None:", f"    {first}", *refusals(c, spec, names)]
    for p in c.params:
        if p.path is not None:
            lines.append(f"    if {p.name} is None:")
            lines.append(f"        {p.name} = {names.need('load_object')}({layout.string(p.path)})")
    if c.init is not None:
        call = ", ".join(["self", *(p.name for p in c.params)])
        lines.append(f"    {_sym(c.init, names)}({call})")
    if chosen:
        lines.append(f"    self.select({', '.join(f'{p}={p}' for p in chosen)})")
    for st in c.stages:
        config = config_source(st, names)
        if st.firsts:  # chains: the instance's rules say the ops
            ops = ", ".join(_sym(op, names) for op in st.firsts)
            lines.append(f"    self.add_stage({config}, self.chain_ops({ops}))")
        elif st.targets is None:
            lines.append(f"    self.add_stage({config})")
        else:
            ops = ", ".join(_sym(op, names) for op in st.targets)
            lines.append(f"    self.add_stage({config}, [{ops}])")
    return ["    " + line if line else line for line in lines]


def _by_type(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _plain(label: str) -> bool:
    """Text black leaves alone inside a docstring."""
    return label.isascii() and "\\" not in label and label == label.strip()


def _runtime_imports(used: set[str]) -> list[str]:
    """One ``from ._bcfg_pt2e.<module> import ...`` per runtime module the quantizer uses."""
    by_module: dict[str, list[str]] = {}
    for name in used:
        by_module.setdefault(RUNTIME_NAMES[name], []).append(name)
    return [
        line
        for module in sorted(by_module)
        for line in layout.from_import(
            f".{RUNTIME_MODULE}.{module}", sorted(by_module[module], key=_by_type)
        )
    ]


def runtime_modules() -> list[str]:
    """The runtime's modules, by file name (``__init__.py``, ``values.py``, ...), sorted."""
    return sorted(p.name for p in RUNTIME_SOURCE.glob("*.py"))


def render_runtime() -> dict[str, str]:
    """The runtime package beside generated quantizers: each module of ``generator/runtime``,
    verbatim under the header, by its path in the output folder (``_bcfg_pt2e/values.py``)."""
    files = {}
    for name in runtime_modules():
        path = RUNTIME_SOURCE / name
        body = check_source(path.read_text(encoding="utf-8"), f"the PT2E runtime's {name}")
        files[f"{RUNTIME_MODULE}/{name}"] = stamp(f"generator/runtime/{name}", body)
    return files
