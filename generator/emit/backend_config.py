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

import keyword
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..infra.header import stamp
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

# Module aliases used in generated code, as torch's own backend code does.
GEN_ALIASES = MODULE_ALIASES
# ObservationType members, held in locals named as in the spec language: an
# enum member lookup costs several times a local one, once per pattern.
_OBSERVATION_LOCALS = OBSERVATION_WORDS  # getters name their ObservationType locals as specs do
_BACKEND_CONFIG = "torch.ao.quantization.backend_config"
_FUSER_METHODS = "torch.ao.quantization.fuser_method_mappings"
# What a generated module may bind at module level besides the allow-listed
# modules a spec names: torch, the aliases, the names imported from torch.
_MODULE_NAMES = frozenset(
    {
        "torch",
        "operator",
        "__all__",
        *GEN_ALIASES.values(),
        "BackendConfig",
        "BackendPatternConfig",
        "DTypeConfig",
        "DTypeWithConstraints",
        "ObservationType",
        "_sequential_wrapper2",
    }
)
# Locals every getter or fuser may have, whatever the spec says.
_FIXED_LOCALS = frozenset({"configs", "is_qat", *_OBSERVATION_LOCALS.values()})
_DTYPE_FIELDS = tuple(field for field, _ in CONSTRAINT_FIELDS)


def getter_name(backend: str) -> str:
    return f"get_{backend}_backend_config"


# ---------------------------------------------------------------- backends


def _local_base(name: str | None, default: str) -> str:
    """A getter local named after a spec name; never ``_``-prefixed (module-level helpers are)."""
    base = (name or "").lstrip("_")
    return base if base.isidentifier() else default


@dataclass
class _Names:
    """Imports, module-level helper functions and getter locals one generated module needs.

    Each distinct dtype (with its constraints) becomes one DTypeWithConstraints
    that the call's DTypeConfigs share, and each distinct list of DTypeConfigs,
    or map of argument counts to observation types, one that the call's
    patterns share, as torch's own backends share them. Torch shares them
    across calls, too; a generated getter builds new ones every call. Fewer
    objects and lookups per call make it faster than torch's own getters.

    ``bindings`` maps each module to import to the name it is bound to; it is
    fixed before any local is named (``for_backend``), so ``module_names``, the
    names a getter or fuser must not shadow, is complete from the start.
    Module-level helpers all start with ``_`` and getter locals never do.
    """

    bindings: dict[str, str]  # module -> the name code uses for it
    module_names: frozenset[str]
    getter: Scope
    imports: set[str] = field(default_factory=set)
    from_imports: dict[str, set[str]] = field(default_factory=dict)
    functions: dict[str, dict] = field(default_factory=dict)  # python name -> template context
    fusers: dict[m.DefinedFuser, str] = field(default_factory=dict)
    observations: dict[str, str] = field(default_factory=dict)  # ObservationType member -> local
    dtypes: dict[m.DType, tuple[str, str]] = field(default_factory=dict)  # -> (local, expression)
    dtype_lists: dict[tuple[str, ...], str] = field(
        default_factory=dict
    )  # DTypeConfig locals -> list local
    shared_dicts: dict[str, str] = field(default_factory=dict)  # dict display -> local

    @classmethod
    def for_backend(cls, backend: m.Backend) -> _Names:
        """The names of ``backend``'s module: every module it imports bound, locals still free."""
        getter = getter_name(backend.module)
        bindings: dict[str, str] = {}
        tops = {sym_module(s).partition(".")[0] for s in _symbols(backend)}
        fixed = _MODULE_NAMES | _FIXED_LOCALS | {getter}
        scope = Scope(fixed | tops)
        for module in sorted({sym_module(s) for s in _symbols(backend)}):
            top = module.partition(".")[0]
            if module in GEN_ALIASES:
                bindings[module] = GEN_ALIASES[module]
            elif top in ("torch", "operator"):
                bindings[module] = module
            elif top in fixed or top.startswith("_") or keyword.iskeyword(top):
                # An allowed module named like something the module binds: import it under an alias.
                bindings[module] = scope.fresh(module.replace(".", "_").lstrip("_") + "_module")
            else:
                bindings[module] = module
        bound = {b.partition(".")[0] for b in bindings.values()}
        module_names = frozenset(_MODULE_NAMES | bound | {getter})
        # "dtype_config" is reserved so that unnamed configs count from dtype_config_1.
        return cls(bindings, module_names, Scope(module_names | _FIXED_LOCALS | {"dtype_config"}))

    def local(self, base: str) -> str:
        """A fresh local name of the getter, ``base`` if it is free."""
        return self.getter.fresh(base)

    def need(self, module: str, name: str) -> str:
        self.from_imports.setdefault(module, set()).add(name)
        return name


def sym_module(sym: m.Symbol) -> str:
    """The module a generated module imports for ``sym``."""
    module = sym.module or sym.path.split(".")[0]
    return "torch" if module == "torch.ops" else module


def _symbols(backend: m.Backend) -> Iterator[m.Symbol]:
    """Every symbol the configs of ``backend`` name, in patterns, module fields and fusers."""
    for c in backend.configs:
        yield from _pattern_symbols(c.pattern)
        for spec in FIELDS:
            value = getattr(c, spec.attr)
            if isinstance(value, m.Symbol):
                yield value
            elif isinstance(value, m.SequentialFuser):
                yield value.fused
            elif isinstance(value, m.SymbolFuser):
                yield value.function
            elif isinstance(value, m.DefinedFuser):
                yield from _fuse_symbols(value.body)


def _pattern_symbols(p: m.PatternValue) -> Iterator[m.Symbol]:
    if isinstance(p, tuple):
        for x in p:
            yield from _pattern_symbols(x)
    elif isinstance(p, m.Symbol):
        yield p


def _fuse_symbols(e: m.FuseExpr) -> Iterator[m.Symbol]:
    if isinstance(e, m.FuseCall):
        yield e.function
        for a in e.args:
            yield from _fuse_symbols(a)


def _sym(sym: m.Symbol, names: _Names) -> str:
    module = sym_module(sym)
    bound = names.bindings[module]
    names.imports.add(f"import {module}" if bound == module else f"import {module} as {bound}")
    if not sym.path.startswith(module) and sym.path.startswith("torch.ops."):
        # a torch.library op: its module is imported to register it, and torch names it
        names.imports.add("import torch")
    return bound + sym.path[len(module) :] if sym.path.startswith(module) else sym.path


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
        names.need(_BACKEND_CONFIG, "DTypeWithConstraints")
        args = [f"dtype=torch.{d.dtype}"] + [
            f"{f}={getattr(d, f)!r}" for f in _DTYPE_FIELDS if getattr(d, f) is not None
        ]
        base = d.dtype if d.dtype.isidentifier() else "dtype"
        if d.constrained:
            base = _local_base(d.name, f"{base}_constrained")
        entry = (names.local(base), f"DTypeWithConstraints({', '.join(args)})")
        names.dtypes[d] = entry
    return entry[0]


def _dtype_config(c: m.DTypeConfig, names: _Names) -> str:
    names.need(_BACKEND_CONFIG, "DTypeConfig")
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
        fn = names.need(_FUSER_METHODS, "_sequential_wrapper2")
        return f"{fn}({_sym(f.fused, names)})"
    if isinstance(f, m.SymbolFuser):
        return _sym(f.function, names)
    fname = names.fusers.get(f)
    if fname is None:
        # Two fusers of one name (from two files) get two functions.
        taken = set(names.functions)
        fname = Scope(taken).fresh("_fuse_" + f.name)
        names.fusers[f] = fname
        names.functions[fname] = _fuse_function(f, fname, names)
    return fname


@dataclass
class _FuseParams:
    """A ``fuse`` definition's parameters in Python: renamed where they would shadow, unpacked."""

    params: list[str]  # the def's parameters after is_qat
    unpack: list[str]  # statements that destructure tuple parameters, outermost first
    local: dict[str, str]  # spec parameter name -> Python name
    leaves: list[str]  # spec names of the matched modules, in order


def _fuse_params(f: m.DefinedFuser, names: _Names) -> _FuseParams:
    """Name the parameters of ``f``: spec names first, then ``_0``, ``_1`` and tuple names."""
    scope = Scope(names.module_names | {"is_qat"})

    def leaves(p: m.Param) -> Iterator[str]:
        if p.name is not None and p.name != "_":
            yield p.name
        for q in p.items:
            yield from leaves(q)

    spec_leaves = [n for p in f.params for n in leaves(p)]
    local = {n: scope.fresh(n) for n in spec_leaves}
    unpack: list[str] = []
    counter = iter(range(1 << 30))
    placeholders: set[str] = set()

    def placeholder() -> str:
        """``_0``, ``_1``, ...: a name for what the spec ignores, skipping any already bound."""
        name = f"_{next(counter)}"
        while scope._bound(name):
            name = f"_{next(counter)}"
        scope.taken.add(name)
        placeholders.add(name)
        return name

    def param(p: m.Param) -> str:
        if p.name is not None:
            return local[p.name] if p.name != "_" else placeholder()
        parts = [param(q) for q in p.items]
        named = [x for x in parts if x not in placeholders]
        joined = scope.fresh("_".join(named)) if named else placeholder()
        unpack.append(f"{', '.join(parts)} = {joined}")
        return joined

    params = [param(p) for p in f.params]
    return _FuseParams(params, list(reversed(unpack)), local, spec_leaves)


def _fuse_function(f: m.DefinedFuser, fname: str, names: _Names) -> dict:
    """The template context of the function a ``fuse`` definition becomes.

    Parameters keep their spec names unless one would shadow a name the body
    uses (a module, ``is_qat``, a builtin): then it is renamed, and so are the
    placeholders for ``_`` and the names of destructured tuples.
    """
    fp = _fuse_params(f, names)
    body = list(fp.unpack)
    py_leaves = [fp.local[n] for n in fp.leaves]
    if f.same_mode and len(fp.leaves) > 1:
        listed = ", ".join(fp.leaves[:-1]) + " and " + fp.leaves[-1]
        body.append(f"if not ({' == '.join(n + '.training' for n in py_leaves)}):")
        body.append(
            f"    raise AssertionError({layout.string(listed + ' must all be in the same mode (train or eval)')})"
        )
    if f.eval_only:
        body.append("if is_qat:")
        shown = ", ".join(py_leaves) + ("," if len(py_leaves) == 1 else "")
        body.append(f'    raise NotImplementedError(f"Cannot fuse train modules: {{({shown})}}")')

    def expr(e: m.FuseExpr) -> str:
        if isinstance(e, m.FuseArg):
            return fp.local[e.name]
        if isinstance(e, m.FuseQat):
            return "is_qat"
        if isinstance(e, m.FuseConst):
            return repr(e.value)
        return f"{_sym(e.function, names)}({', '.join(expr(a) for a in e.args)})"

    body.append(f"return {expr(f.body)}")
    return {
        "name": fname,
        "params": ", ".join(["is_qat", *fp.params]),
        "doc": safe_text(f"Fuser '{f.name}', defined in {f.span.file}."),
        "body": body,
    }


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
    names.need(_BACKEND_CONFIG, "BackendPatternConfig")
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


def _dtype_locals(backend: m.Backend, names: _Names) -> dict[m.DTypeConfig, str]:
    """One local variable per distinct DTypeConfig, named after its spec definition."""
    out: dict[m.DTypeConfig, str] = {}
    for c in backend.configs:
        for d in c.dtype_configs:
            if d in out:
                continue
            base = _local_base(d.name, "dtype_config")
            if names.getter._bound(base):
                base += "_"
            out[d] = names.getter.fresh(base, 1)
    return out


def render_backend(backend: m.Backend, fast: bool | None = None) -> str:
    """The complete text of ``generated/<backend.module>.py``.

    ``fast`` (default: if the installed black is the one ``layout`` models)
    lays statements out without black; False formats every fragment with black.
    """
    frag = Fragments(layout_matches_black() if fast is None else fast)
    names = _Names.for_backend(backend)
    names.need(_BACKEND_CONFIG, "BackendConfig")
    dtype_names = _dtype_locals(backend, names)
    dtype_exprs = [(n, _dtype_config(d, names)) for d, n in dtype_names.items()]
    configs = []
    for c in backend.configs:
        origin = c.origin.anchor if c.origin is not None else backend.spec_file
        chain = "".join(_config_lines(c, dtype_names, names))
        configs.append({"origin": comment_text(origin), "lines": frag.item(f"({chain})", 2)})
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
    return stamp(spec_file, body)


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
    return stamp(label + "/", body)
