"""Assembling the spec: declarations, items, and the check that ``bcfg generate`` accepts it."""

from __future__ import annotations

import keyword
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...config import DEFAULT_ALLOW
from ...diagnostics import Diagnostic, Severity, SpecError
from ...lang import syntax as m
from ...lang.fmt import Printer, format_text, render
from ...lang.vocabulary import (
    BUILTIN_ALIASES,
    FIELD_BY_WORD,
    FMT_FIELD_ORDER,
    FieldKind,
    FieldSpec,
    spell,
)
from ...live.names import public_names
from ...live.targets import load_backend_config
from .common import SPAN, field_of, getter_expr, number_expr, path_expr
from .fold import Folder
from .naming import Names, constraint_name, dtype_word
from .reader import DC, DT, Config, Reader, Sym


@dataclass
class Imported:
    """The spec text of an imported backend and what the user should know about it."""

    text: str
    module: str
    notes: list[str]
    configs: int
    not_allowed: list[str] = field(
        default_factory=list
    )  # top-level modules to add to the allow-list
    findings: list[Diagnostic] = field(default_factory=list)  # what generate would report

    @property
    def errors(self) -> int:
        return sum(f.severity == Severity.ERROR for f in self.findings)


def check_spec(text: str, module: str, allow: tuple[str, ...]) -> list[Diagnostic]:
    """What ``bcfg generate`` would report about an imported spec, located in ``<module>.bcfg``.

    torch accepts configs that bcfg's checks reject (``fused`` without a fuser, a
    ``sequential`` fuser on three modules, ...); the spec is still written, so
    the user can fix them where the messages point. The text is resolved in
    memory: nothing is written to check it.
    """
    from ...semantics.driver import analyze
    from ...sources import MemorySources

    name = f"{module}.bcfg"
    try:
        return analyze(MemorySources({name: text}), [name], allow).warnings
    except SpecError as exc:
        return exc.diagnostics


def module_name_for(function: str, backend_name: str) -> str:
    """The backend's module name: ``get_x_backend_config`` -> ``x``."""
    for pat in (r"get_(\w+?)_backend_config\Z", r"get_(\w+?)_config\Z", r"get_(\w+)\Z"):
        mt = re.match(pat, function)
        if mt:
            cand = mt.group(1)
            break
    else:
        cand = re.sub(r"\W+", "_", backend_name).strip("_") or function
    cand = re.sub(r"\W", "_", cand)
    if not cand.isidentifier() or keyword.iskeyword(cand):
        cand = "imported_" + cand.lstrip("_0123456789")
    return cand


class Builder:
    """Turns read configs into declarations."""

    def __init__(self, configs: list[Config], allow: tuple[str, ...]):
        self.configs = configs
        self.allow = allow
        self.names = Names()
        self.aliases: dict[str, str] = dict(BUILTIN_ALIASES)
        self.decls: list[m.Decl] = []
        self.constraints: dict[tuple, str] = {}
        self.dtype_names: dict[tuple, str] = {}
        self.list_names: dict[tuple, str] = {}

    # ---------------------------------------------------------- symbols

    def all_paths(self) -> list[str]:
        out: list[str] = []

        def pat(p: Any) -> None:
            if isinstance(p, tuple):
                for x in p:
                    pat(x)
            elif isinstance(p, Sym):
                out.append(p.path)

        for c in self.configs:
            pat(c.pattern)
            out.extend(s.path for s in c.modules.values())
            if c.fuser is not None:
                out.append(c.fuser[1].path)
        return out

    def make_aliases(self) -> list[m.AliasDecl]:
        """``alias x = long.module.path`` for module paths that would be spelled out twice or more."""
        counts: dict[str, int] = {}
        for path in self.all_paths():
            if spell(path, self.aliases) != path:
                continue
            module = path.rsplit(".", 1)[0]
            if module.count(".") >= 2:
                counts[module] = counts.get(module, 0) + 1
        decls = []
        for module, count in sorted(counts.items()):
            if count >= 2:
                name = self.names.fresh(module.rsplit(".", 1)[-1])
                self.aliases[name] = module
                decls.append(m.AliasDecl(name, path_expr(module), SPAN))
        return decls

    def sym(self, s: Sym) -> m.DottedName:
        return path_expr(spell(s.path, self.aliases))

    def pattern(self, p: Any) -> m.Expr:
        if isinstance(p, tuple):
            return m.TupleExpr(tuple(self.pattern(x) for x in p), SPAN)
        if isinstance(p, str):
            return m.Str(p, SPAN)
        if isinstance(p, int):
            return m.Int(p, SPAN)
        return self.sym(p)

    # ----------------------------------------------------------- dtypes

    def dtype_expr(self, dt: DT) -> m.Expr:
        if not dt.bounds:
            return path_expr(dtype_word(dt.dtype))
        return m.DottedName((self.constraints[dt.key()],), SPAN)

    def make_dtypes(self) -> list[m.Decl]:
        """Constraint decls, and dtypes decls for dtype configs and lists used more than once."""
        out: list[m.Decl] = []
        for c in self.configs:
            for dc in c.dtypes:
                for dt in (dc.input, dc.output, dc.weight):
                    if dt is not None and dt.bounds and dt.key() not in self.constraints:
                        name = self.names.fresh(constraint_name(dt))
                        self.constraints[dt.key()] = name
                        entries = tuple(m.Entry(k, number_expr(v), SPAN) for k, v in dt.bounds)
                        out.append(
                            m.ConstraintDecl(name, path_expr(dtype_word(dt.dtype)), entries, SPAN)
                        )
        uses: dict[tuple, int] = {}
        first: dict[tuple, DC] = {}
        for c in self.configs:
            for dc in c.dtypes:
                uses[dc.key()] = uses.get(dc.key(), 0) + 1
                first.setdefault(dc.key(), dc)
        for key, dc in first.items():
            if uses[key] >= 2:
                name = self.names.fresh(self.dtype_config_name(dc))
                self.dtype_names[key] = name
                out.append(m.DTypesDecl(name, self.record(dc), SPAN))
        list_uses: dict[tuple, list[Config]] = {}
        for c in self.configs:
            if len(c.dtypes) >= 2:
                list_uses.setdefault(tuple(d.key() for d in c.dtypes), []).append(c)
        for key, users in list_uses.items():
            if len(users) >= 2:
                name = self.names.fresh(self.list_name(users[0]))
                self.list_names[key] = name
                out.append(
                    m.DTypesDecl(name, self.dtypes_value(users[0].dtypes, named_list=False), SPAN)
                )
        return out

    def dtype_config_name(self, dc: DC) -> str:
        """By content: ``quint8_quint8_qint8_float``, ``dynamic_...``; constrained ones get the
        constraint's tag (``qint8_qint8_min_scale``, ``quint8_quint8_fixed_0_to_1``)."""
        slots = (dc.input, dc.output, dc.weight)
        tokens = [dtype_word(dt.dtype).removeprefix("torch.") if dt else "none" for dt in slots]
        tokens.append(dtype_word(dc.bias).removeprefix("torch.") if dc.bias else "none")
        while tokens and tokens[-1] == "none":
            tokens.pop()
        name = "_".join(tokens) or "empty"
        constrained = [dt for dt in slots if dt is not None and dt.bounds]
        if constrained:
            tag = self.constraints[constrained[0].key()]
            name += "_" + tag.removeprefix(re.sub(r"\W", "_", constrained[0].dtype) + "_")
        if dc.dynamic:
            name = "dynamic_" + name
        elif dc.dynamic is False:
            name += "_static"
        return re.sub(r"\W", "_", name)

    def list_name(self, c: Config) -> str:
        def words(p: Any) -> list[str]:
            if isinstance(p, tuple):
                return [w for x in p for w in words(x)]
            if isinstance(p, Sym):
                parts = p.path.split(".")
                return [
                    parts[-2] if p.path.startswith("torch.ops.") and len(parts) > 3 else parts[-1]
                ]
            return [str(p)]

        stem = "_".join(w.lower().strip("_") for w in words(c.pattern)[:3])
        return re.sub(r"\W", "_", stem) + "_dtypes"

    def record(self, dc: DC) -> m.Record:
        entries = []
        for key, dt in (("input", dc.input), ("output", dc.output), ("weight", dc.weight)):
            if dt is not None:
                entries.append(m.Entry(key, self.dtype_expr(dt), SPAN))
        if dc.bias is not None:
            entries.append(m.Entry("bias", path_expr(dtype_word(dc.bias)), SPAN))
        if dc.dynamic is not None:
            entries.append(m.Entry("dynamic", path_expr("true" if dc.dynamic else "false"), SPAN))
        return m.Record(tuple(entries), SPAN)

    def dtype_config_expr(self, dc: DC) -> m.Expr:
        name = self.dtype_names.get(dc.key())
        return m.DottedName((name,), SPAN) if name else self.record(dc)

    def dtypes_value(self, dcs: tuple[DC, ...], named_list: bool = True) -> m.Expr:
        if named_list and len(dcs) >= 2:
            name = self.list_names.get(tuple(d.key() for d in dcs))
            if name:
                return m.DottedName((name,), SPAN)
        if len(dcs) == 1:
            return self.dtype_config_expr(dcs[0])
        return m.ListExpr(tuple(self.dtype_config_expr(d) for d in dcs), SPAN)

    # ------------------------------------------------------------ items

    def item(self, c: Config) -> m.PatternItem:
        """The pattern item of one config: its fields in fmt's canonical order."""
        flds: list[m.Field] = []
        for word in FMT_FIELD_ORDER:
            value = self._field_value(FIELD_BY_WORD[word], c)
            if value is not None:
                flds.append(field_of(word, value))
        return m.PatternItem(self.pattern(c.pattern), c.complex, False, tuple(flds), SPAN)

    def _field_value(self, spec: FieldSpec, c: Config) -> m.Expr | None:
        """The expression of field ``spec`` for ``c``, or None if the config does not set it."""
        if spec.kind is FieldKind.OBSERVATION:
            return path_expr(c.observation) if c.observation != "different_observer" else None
        if spec.kind is FieldKind.DTYPES:
            return self.dtypes_value(c.dtypes) if c.dtypes else None
        if spec.kind is FieldKind.MODULE:
            return self.sym(c.modules[spec.word]) if spec.word in c.modules else None
        if spec.kind is FieldKind.FUSER:
            if c.fuser is None:
                return None
            kind, s = c.fuser
            if kind == "sequential":
                return m.Call(path_expr("sequential"), (self.sym(s),), SPAN)
            return self.sym(s)
        if spec.kind is FieldKind.NODE_GETTER:
            return getter_expr(c.root_node) if c.root_node is not None else None
        if spec.kind is FieldKind.INPUTS_GETTER:
            if c.extra_inputs is None:
                return None
            return m.ListExpr(tuple(getter_expr(p) for p in c.extra_inputs), SPAN)
        if spec.kind is FieldKind.NUM_TENSOR_ARGS:
            entries = tuple(m.Entry(k, path_expr(v), SPAN) for k, v in c.num_tensor_args)
            return m.Record(entries, SPAN) if entries else None
        assert spec.kind is FieldKind.INPUT_INDEX
        entries = tuple(m.Entry(k, m.Int(v, SPAN), SPAN) for k, v in c.input_index)
        return m.Record(entries, SPAN) if entries else None

    def not_allowed(self) -> list[str]:
        tops = sorted({p.split(".")[0] for p in self.all_paths()} - set(self.allow))
        return tops


def _item_lines(printer: Printer) -> Callable[[m.Item], int]:
    def measure(it: m.Item) -> int:
        return render(printer.item(it)).count("\n") + 1

    return measure


def _expr_text(printer: Printer) -> Callable[[m.Expr], str]:
    def text(e: m.Expr) -> str:
        return render(["    for x in ", printer.expr(e), " {"])

    return text


def build_spec(
    config: Any,
    function: str,
    source: str,
    allow: tuple[str, ...] = DEFAULT_ALLOW,
    fold: bool = True,
) -> Imported:
    """Spec text for a live ``BackendConfig``; ``source`` is named in the header comment."""
    import torch

    reader = Reader(public_names())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        configs = [reader.read(i, pc) for i, pc in enumerate(config.configs)]
    builder = Builder(configs, allow)
    module = module_name_for(function, config.name)
    aliases = builder.make_aliases()
    dtypes = builder.make_dtypes()
    items: list[m.Item] = [builder.item(c) for c in configs]
    printer = Printer()
    if fold:
        folder = Folder(builder.names, _item_lines(printer), _expr_text(printer))
        items = folder.fold(items)
    name = config.name if config.name != module else None
    backend = m.BackendDecl(module, name, tuple(items), SPAN)
    spec = m.Spec("<import>", (*aliases, *dtypes, backend))
    notes = []
    header = [f"# Imported by `bcfg import {source}` (torch {torch.__version__.split('+')[0]})."]
    for top in builder.not_allowed():
        note = f"'{top}' is not on the allow-list: add it to [tool.bcfg] allow in pyproject.toml"
        notes.append(note)
        header.append(f"# Note: {note}.")
    text = "\n".join(header) + "\n\n" + Printer().spec(spec)
    return Imported(
        format_text(text, "<import>"), module, notes, len(configs), builder.not_allowed()
    )


def import_target(
    target: str, allow: tuple[str, ...] = DEFAULT_ALLOW, check: bool = True
) -> Imported:
    """``bcfg import``: the spec text for the BackendConfig ``MODULE:FUNCTION`` returns.

    With ``check``, the spec is also resolved, and what ``bcfg generate`` would
    report about it is in ``findings``.
    """
    config, function = load_backend_config(target)
    result = build_spec(config, function, target, allow)
    if check:
        needed = tuple(dict.fromkeys([*allow, *result.not_allowed]))
        result.findings = check_spec(result.text, result.module, needed)
    return result
