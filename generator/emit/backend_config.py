"""The BackendConfig emitter: resolved backends to formatted Python modules.

Python decides everything here (local names, imports, literals, order); the
Jinja templates in ``templates/`` only print what they are handed. Each
statement is laid out as black would lay it out (``layout``; a fragment of a
shape it does not model is formatted by black itself), the whole is checked
with ``compile`` (a template bug is reported as such), and stamped with a
header that review tools recognise. Running black over every generated line
would cost seconds; the output is the same byte for byte.
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..lang.vocabulary import (
    CONSTRAINT_FIELDS,
    DEFAULT_OBSERVATION,
    FIELDS,
    MODULE_ALIASES,
    OBSERVATION_WORDS,
    FieldKind,
)
from ..semantics import model as m
from . import layout
from .header import inputs_hash, stamp
from .pysource import (
    Fragments,
    black_format,
    check_source,
    jinja_env,
    layout_matches_black,
    safe_text,
)

# Module aliases used in generated code, as torch's own backend code does.
GEN_ALIASES = MODULE_ALIASES
# ObservationType members, held in locals named as in the spec language: an
# enum member lookup costs several times a local one, once per pattern.
_OBSERVATION_LOCALS = OBSERVATION_WORDS  # getters name their ObservationType locals as specs do
_BUILTINS = frozenset(dir(builtins))
_RESERVED = (
    set(GEN_ALIASES.values())
    | set(_OBSERVATION_LOCALS.values())
    | {
        "torch",
        "operator",
        "configs",
        "BackendConfig",
        "BackendPatternConfig",
        "DTypeConfig",
        "DTypeWithConstraints",
        "ObservationType",
    }
)
_DTYPE_FIELDS = tuple(field for field, _ in CONSTRAINT_FIELDS)


def getter_name(backend: str) -> str:
    return f"get_{backend}_backend_config"


# ---------------------------------------------------------------- backends


@dataclass
class _Names:
    """Imports, module-level helper functions and getter locals one generated module needs.

    Each distinct dtype (with its constraints) becomes one DTypeWithConstraints
    that the call's DTypeConfigs share, and each distinct list of DTypeConfigs,
    or map of argument counts to observation types, one that the call's
    patterns share, as torch's own backends share them. Torch shares them
    across calls, too; a generated getter builds new ones every call. Fewer
    objects and lookups per call make it faster than torch's own getters.
    """

    imports: set[str]
    from_imports: dict[str, set[str]]
    functions: dict[str, dict]  # python name -> template context
    observations: dict[str, str] = field(default_factory=dict)  # ObservationType member -> local
    dtypes: dict[m.DType, tuple[str, str]] = field(default_factory=dict)  # -> (local, expression)
    dtype_lists: dict[tuple[str, ...], str] = field(
        default_factory=dict
    )  # DTypeConfig locals -> list local
    shared_dicts: dict[str, str] = field(default_factory=dict)  # dict display -> local
    taken: set[str] = field(default_factory=set)  # local names of the getter

    def local(self, base: str) -> str:
        """A fresh local name of the getter, ``base`` if it is free."""
        name, n = base, 2
        while name in self.taken or keyword.iskeyword(name) or name in _BUILTINS:
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name

    def need(self, module: str, name: str) -> str:
        self.from_imports.setdefault(module, set()).add(name)
        return name


def _sym(sym: m.Symbol, names: _Names) -> str:
    module = sym.module or sym.path.split(".")[0]
    alias = GEN_ALIASES.get(module)
    if alias is not None:
        names.imports.add(f"import {module} as {alias}")
        return alias + sym.path[len(module) :]
    if module == "torch.ops" or module == "torch":
        names.imports.add("import torch")
    else:
        names.imports.add(f"import {module}")
    return sym.path


def _pattern(p: m.PatternValue, names: _Names) -> str:
    if isinstance(p, tuple):
        return "(" + ", ".join(_pattern(x, names) for x in p) + ")"
    if isinstance(p, m.Symbol):
        return _sym(p, names)
    return layout.string(p) if isinstance(p, str) else repr(p)


def _dtype(d: m.DType, names: _Names) -> str:
    """The local holding ``d`` as a DTypeWithConstraints, defined on first use."""
    entry = names.dtypes.get(d)
    if entry is None:
        names.imports.add("import torch")
        names.need("torch.ao.quantization.backend_config", "DTypeWithConstraints")
        args = [f"dtype=torch.{d.dtype}"] + [
            f"{f}={getattr(d, f)!r}" for f in _DTYPE_FIELDS if getattr(d, f) is not None
        ]
        base = d.dtype if d.dtype.isidentifier() else "dtype"
        if d.constrained:
            base = d.name if d.name and d.name.isidentifier() else f"{base}_constrained"
        entry = (names.local(base), f"DTypeWithConstraints({', '.join(args)})")
        names.dtypes[d] = entry
    return entry[0]


def _dtype_config(c: m.DTypeConfig, names: _Names) -> str:
    names.need("torch.ao.quantization.backend_config", "DTypeConfig")
    args = []
    for key, val in (
        ("input_dtype", c.input),
        ("output_dtype", c.output),
        ("weight_dtype", c.weight),
    ):
        if val is not None:
            args.append(f"{key}={_dtype(val, names)}")
    if c.bias is not None:
        names.imports.add("import torch")
        args.append(f"bias_dtype=torch.{c.bias}")
    if c.is_dynamic is not None:
        args.append(f"is_dynamic={c.is_dynamic!r}")
    return f"DTypeConfig({', '.join(args)})"


def _obs(name: str, names: _Names) -> str:
    member = f"{names.need('torch.ao.quantization.backend_config', 'ObservationType')}.{name}"
    local = _OBSERVATION_LOCALS.get(name)
    if local is None:
        return member
    names.observations[name] = local
    return local


def _getter_fn(kind: str, paths: tuple[tuple[int, ...], ...], names: _Names) -> str:
    def index(path):
        return "pattern" + "".join(f"[{i}]" for i in path)

    if kind == "root":
        fname = "_root_node" + "".join(f"_{i}" for i in paths[0])
        ret = index(paths[0])
        doc = f"Return the root node of the matched pattern: {ret}."
    else:
        fname = "_extra_inputs" + "__".join("_" + "_".join(map(str, p)) for p in paths)
        ret = "[" + ", ".join(index(p) for p in paths) + "]"
        doc = f"Return the extra inputs of the matched pattern: {ret}."
    names.functions.setdefault(
        fname, {"name": fname, "params": "pattern", "doc": doc, "body": [f"return {ret}"]}
    )
    return fname


def _fuser(f: m.Fuser, names: _Names) -> str:
    if isinstance(f, m.SequentialFuser):
        fn = names.need("torch.ao.quantization.fuser_method_mappings", "_sequential_wrapper2")
        return f"{fn}({_sym(f.fused, names)})"
    if isinstance(f, m.SymbolFuser):
        return _sym(f.function, names)
    fname = "_fuse_" + f.name  # one-to-one with spec names, so two fusers never collide
    if fname in names.functions:
        return fname
    counter = iter(range(1000))
    unpack: list[str] = []
    leaves: list[str] = []

    def param(p: m.Param) -> str:
        if p.name is not None:
            if p.name == "_":
                return f"_{next(counter)}"
            leaves.append(p.name)
            return p.name
        parts = [param(q) for q in p.items]
        joined = "_".join(x for x in parts if not x.startswith("_")) or f"_{next(counter)}"
        unpack.append(f"{', '.join(parts)} = {joined}")
        return joined

    params = ["is_qat"] + [param(p) for p in f.params]
    body = list(reversed(unpack))
    if f.same_mode and len(leaves) > 1:
        listed = ", ".join(leaves[:-1]) + " and " + leaves[-1]
        body.append(f"if not ({' == '.join(n + '.training' for n in leaves)}):")
        body.append(
            f"    raise AssertionError({layout.string(listed + ' must all be in the same mode (train or eval)')})"
        )
    if f.eval_only:
        body.append("if is_qat:")
        shown = ", ".join(leaves) + ("," if len(leaves) == 1 else "")
        body.append(f'    raise NotImplementedError(f"Cannot fuse train modules: {{({shown})}}")')

    def expr(e: m.FuseExpr) -> str:
        if isinstance(e, m.FuseArg):
            return e.name
        return f"{_sym(e.function, names)}({', '.join(expr(a) for a in e.args)})"

    body.append(f"return {expr(f.body)}")
    names.functions[fname] = {
        "name": fname,
        "params": ", ".join(params),
        "doc": safe_text(f"Fuser '{f.name}' defined at {f.span.file}:{f.span.line}."),
        "body": body,
    }
    return fname


def _list_name(members: tuple[str, ...]) -> str:
    """A reviewable name for a shared list of DTypeConfigs: what it holds."""
    name = "dtypes_" + "__".join(members)
    if len(name) > 48 and len(members) > 1:
        name = f"dtypes_{members[0]}_and_{len(members) - 1}_more"
    return name


def _config_lines(
    c: m.PatternConfig, dtype_names: dict[m.DTypeConfig, str], names: _Names
) -> list[str]:
    """The chained calls that build ``c``: the constructor, then one setter per field set, in table order."""
    names.need("torch.ao.quantization.backend_config", "BackendPatternConfig")
    if c.complex:
        lines = [
            "BackendPatternConfig()",
            f"._set_pattern_complex_format({_pattern(c.pattern, names)})",
        ]
    else:
        lines = [f"BackendPatternConfig({_pattern(c.pattern, names)})"]
    for spec in FIELDS:
        value = getattr(c, spec.attr)
        if value is None or value == () or value == DEFAULT_OBSERVATION:
            continue
        lines.append(f".{spec.setter}({_FIELD_ARGUMENTS[spec.kind](value, dtype_names, names)})")
    return lines


def _dtypes_argument(
    configs: tuple[m.DTypeConfig, ...], dtype_names: dict[m.DTypeConfig, str], names: _Names
) -> str:
    members = tuple(dtype_names[d] for d in configs)
    if members not in names.dtype_lists:
        names.dtype_lists[members] = names.local(_list_name(members))
    return names.dtype_lists[members]


def _num_tensor_args_argument(value: tuple[tuple[int, str], ...], _: object, names: _Names) -> str:
    items = "{" + ", ".join(f"{k}: {_obs(v, names)}" for k, v in value) + "}"
    if items not in names.shared_dicts:
        names.shared_dicts[items] = names.local(f"num_tensor_args_{len(names.shared_dicts) + 1}")
    return names.shared_dicts[items]


def _input_index_argument(value: tuple[tuple[str, int], ...], _: object, names: _Names) -> str:
    return "{" + ", ".join(f"{layout.string(k)}: {v}" for k, v in value) + "}"


# How each kind of field is written as the argument of its setter.
_FIELD_ARGUMENTS: dict[FieldKind, Callable[[Any, dict[m.DTypeConfig, str], _Names], str]] = {
    FieldKind.OBSERVATION: lambda v, _, names: _obs(v, names),
    FieldKind.DTYPES: _dtypes_argument,
    FieldKind.MODULE: lambda v, _, names: _sym(v, names),
    FieldKind.FUSER: lambda v, _, names: _fuser(v, names),
    FieldKind.NODE_GETTER: lambda v, _, names: _getter_fn("root", (v.path,), names),
    FieldKind.INPUTS_GETTER: lambda v, _, names: _getter_fn("extra", v.paths, names),
    FieldKind.NUM_TENSOR_ARGS: _num_tensor_args_argument,
    FieldKind.INPUT_INDEX: _input_index_argument,
}


def _dtype_locals(backend: m.Backend) -> dict[m.DTypeConfig, str]:
    """One local variable per distinct DTypeConfig, named after its spec definition."""
    out: dict[m.DTypeConfig, str] = {}
    taken: set[str] = set()
    for c in backend.configs:
        for d in c.dtype_configs:
            if d in out:
                continue
            base = d.name if d.name and d.name.isidentifier() else "dtype_config"
            if base in _RESERVED or keyword.iskeyword(base):
                base += "_"
            name, n = base, 1
            while name in taken or (name == "dtype_config"):
                name = f"{base}_{n}"
                n += 1
            taken.add(name)
            out[d] = name
    return out


def render_backend(backend: m.Backend, fast: bool | None = None) -> str:
    """The complete text of ``generated/<backend.module>.py``.

    ``fast`` (default: if the installed black is the one ``layout`` models)
    lays statements out without black; False formats every fragment with black.
    """
    frag = Fragments(layout_matches_black() if fast is None else fast)
    names = _Names(set(), {}, {})
    names.need("torch.ao.quantization.backend_config", "BackendConfig")
    dtype_names = _dtype_locals(backend)
    names.taken.update(_RESERVED, dtype_names.values())
    dtype_exprs = [(n, _dtype_config(d, names)) for d, n in dtype_names.items()]
    configs = []
    for c in backend.configs:
        origin = f"{c.span.file}:{c.span.line}" if c.span else backend.spec_file
        chain = "".join(_config_lines(c, dtype_names, names))
        configs.append({"origin": safe_text(origin), "lines": frag.item(f"({chain})", 2)})
    dtype_lines = [
        line for text in _local_lines(names, dtype_exprs) for line in frag.statement(text, 1)
    ]
    getter = getter_name(backend.module)
    spec_file = safe_text(backend.spec_file)
    doc, whole = _getter_doc(backend, len(configs), frag.fast)
    source = (
        jinja_env()
        .get_template("backend.py.jinja")
        .render(
            spec_file=spec_file,
            backend_label=backend.module,
            getter=getter,
            doc=doc,
            imports=_import_block(names),
            exports=frag.statement(f"__all__ = [{layout.string(getter)}]", 0),
            functions=[frag.function(names.functions[k]) for k in sorted(names.functions)],
            dtype_locals=dtype_lines,
            configs=configs,
            ret=frag.statement(
                f"return BackendConfig({layout.string(backend.name)}).set_backend_pattern_configs(configs)",
                1,
            ),
        )
    )
    body = check_source(black_format(source) if whole else source, f"backend {backend.module}")
    return stamp(spec_file, inputs_hash(backend.inputs), body)


def _local_lines(names: _Names, dtype_exprs: list[tuple[str, str]]) -> list[str]:
    """The getter's shared locals, each defined before its first use."""
    return (
        [
            f"{local} = ObservationType.{member}"
            for member, local in sorted(names.observations.items(), key=lambda x: x[1])
        ]
        + [f"{local} = {expr}" for local, expr in names.dtypes.values()]
        + [f"{n} = {expr}" for n, expr in dtype_exprs]
        + [f"{local} = [{', '.join(members)}]" for members, local in names.dtype_lists.items()]
        + [f"{local} = {items}" for items, local in names.shared_dicts.items()]
    )


def _getter_doc(backend: m.Backend, n: int, fast: bool) -> tuple[str, bool]:
    """The getter's docstring line, and whether black must format the whole module."""
    text = f"Return the {backend.module} BackendConfig ({n} pattern configs)."
    try:
        doc = layout.docstring(text, 1)
    except layout.Unsupported:
        return f'    """{text}"""', True
    getter_line = f"def {getter_name(backend.module)}() -> BackendConfig:"
    whole = (
        not fast
        or not _plain(safe_text(backend.spec_file))
        or len(getter_line) > layout.LINE_LENGTH
    )
    return doc, whole


def _plain(label: str) -> bool:
    """Text that black leaves alone inside a docstring."""
    return label.isascii() and "\\" not in label and label == label.strip()


def _import_block(names: _Names) -> list[str]:
    names.imports.add("import torch.ao.quantization.backend_config.utils  # noqa: F401")
    stdlib = sorted(i for i in names.imports if i.split()[1].split(".")[0] not in ("torch",))
    third = sorted(i for i in names.imports if i not in stdlib)
    froms = [
        line
        for mod, ns in sorted(names.from_imports.items())
        for line in layout.from_import(mod, sorted(ns))
    ]
    block = stdlib + ([""] if stdlib else []) + third + froms
    return block


def render_init(backends: list[m.Backend], spec_dir: str, fast: bool | None = None) -> str:
    """The text of ``generated/__init__.py``: every backend getter, by name."""
    fast = layout_matches_black() if fast is None else fast
    entries = sorted((b.module, getter_name(b.module)) for b in backends)
    label = safe_text(spec_dir)
    source = (
        jinja_env()
        .get_template("init.py.jinja")
        .render(
            imports=[
                line for mod, getter in entries for line in layout.from_import(f".{mod}", [getter])
            ],
            getters=[layout.string(getter) for _, getter in entries],
            spec_dir=label,
        )
    )
    whole = not fast or not entries or not _plain(label)
    body = check_source(black_format(source) if whole else source, "generated/__init__.py")
    ins = tuple(sorted(x for b in backends for x in b.inputs))
    return stamp(label + "/", inputs_hash(tuple(dict.fromkeys(ins))), body)
