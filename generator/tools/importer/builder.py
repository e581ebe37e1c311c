"""Syntax for read configs: symbols, dtype records and sets, constraints, fuse declarations, items.

One ``Builder`` serves every file of one import, so a name means the same in
all of them. Equal expressions are built once (interned), which is what makes
folding fast: the folder compares them by identity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ...lang import syntax as m
from ...lang.vocabulary import (
    BUILTIN_ALIASES,
    FIELD_BY_WORD,
    FMT_FIELD_ORDER,
    FieldKind,
    FieldSpec,
    spell,
)
from .common import SPAN, field_of, getter_expr, number_expr, path_expr
from .naming import Names, constraint_name, dtype_word
from .reader import DC, DT, QAT, Config, FuseCall, FuseDef, Sym


class Builder:
    """Turns read configs into declarations and items."""

    def __init__(self, names: Names, allow: tuple[str, ...]):
        self.allow = allow
        self.names = names
        self.aliases: dict[str, str] = dict(BUILTIN_ALIASES)
        self.constraints: dict[tuple, str] = {}
        self.dtype_names: dict[tuple, str] = {}
        self.list_names: dict[tuple, str] = {}
        self.fuse_names: dict[FuseDef, str] = {}
        self._interned: dict[Any, Any] = {}

    def intern(self, node: Any) -> Any:
        """The one object for an expression equal to ``node``."""
        return self._interned.setdefault(node, node)

    # ---------------------------------------------------------- symbols

    def make_aliases(self, paths: Iterable[str]) -> list[m.AliasDecl]:
        """``alias x = long.module.path`` for module paths that would be spelled out twice or more."""
        counts: dict[str, int] = {}
        for path in paths:
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
        return self.intern(path_expr(spell(s.path, self.aliases)))

    def pattern(self, p: Any) -> m.Expr:
        if isinstance(p, tuple):
            return self.intern(m.TupleExpr(tuple(self.pattern(x) for x in p), SPAN))
        if isinstance(p, str):
            return self.intern(m.Str(p, SPAN))
        if isinstance(p, int):
            return self.intern(m.Int(p, SPAN))
        return self.sym(p)

    # ----------------------------------------------------------- dtypes

    def dtype_expr(self, dt: DT) -> m.Expr:
        if not dt.bounds:
            return self.intern(path_expr(dtype_word(dt.dtype)))
        return self.intern(m.DottedName((self.constraints[dt.key()],), SPAN))

    def constraint_decls(self, dcs: Iterable[DC]) -> list[m.Decl]:
        """A ``constraint`` for each constrained dtype not declared yet."""
        out: list[m.Decl] = []
        for dc in dcs:
            for dt in (dc.input, dc.output, dc.weight):
                if dt is not None and dt.bounds and dt.key() not in self.constraints:
                    name = self.names.fresh(constraint_name(dt))
                    self.constraints[dt.key()] = name
                    entries = tuple(m.Entry(k, number_expr(v), SPAN) for k, v in dt.bounds)
                    out.append(
                        m.ConstraintDecl(name, path_expr(dtype_word(dt.dtype)), entries, SPAN)
                    )
        return out

    def dtype_decl(self, dc: DC) -> m.DTypesDecl:
        name = self.names.fresh(self.dtype_config_name(dc))
        self.dtype_names[dc.key()] = name
        return m.DTypesDecl(name, self.record(dc), SPAN)

    def list_decl(self, dcs: tuple[DC, ...], stem: str) -> m.DTypesDecl:
        name = self.names.fresh(stem)
        self.list_names[tuple(d.key() for d in dcs)] = name
        return m.DTypesDecl(name, self.dtypes_value(dcs, named_list=False), SPAN)

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

    def record(self, dc: DC) -> m.Record:
        entries = []
        for key, dt in (("input", dc.input), ("output", dc.output), ("weight", dc.weight)):
            if dt is not None:
                entries.append(m.Entry(key, self.dtype_expr(dt), SPAN))
        if dc.bias is not None:
            entries.append(m.Entry("bias", path_expr(dtype_word(dc.bias)), SPAN))
        if dc.dynamic is not None:
            entries.append(m.Entry("dynamic", path_expr("true" if dc.dynamic else "false"), SPAN))
        return self.intern(m.Record(tuple(entries), SPAN))

    def dtype_config_expr(self, dc: DC) -> m.Expr:
        name = self.dtype_names.get(dc.key())
        return self.intern(m.DottedName((name,), SPAN)) if name else self.record(dc)

    def dtypes_value(self, dcs: tuple[DC, ...], named_list: bool = True) -> m.Expr:
        if named_list and len(dcs) >= 2:
            name = self.list_names.get(tuple(d.key() for d in dcs))
            if name:
                return self.intern(m.DottedName((name,), SPAN))
        if len(dcs) == 1:
            return self.dtype_config_expr(dcs[0])
        return self.intern(m.ListExpr(tuple(self.dtype_config_expr(d) for d in dcs), SPAN))

    # ---------------------------------------------------------- fusers

    def fuse_decl(self, fd: FuseDef) -> m.FuseDecl | None:
        """The ``fuse`` declaration of a proven fuser; None if one was made already."""
        if fd in self.fuse_names:
            return None
        leaves = [n for n in _leaves(fd.params) if n != "_"]
        self.fuse_names[fd] = name = self.names.fresh("fuse_" + "_".join(leaves[:3]))

        def param(p: Any) -> m.Param:
            if isinstance(p, tuple):
                return m.Param(None, tuple(param(x) for x in p), SPAN)
            return m.Param(p, (), SPAN)

        flags = tuple(
            f for f, on in (("eval_only", fd.eval_only), ("same_mode", fd.same_mode)) if on
        )
        params = tuple(param(p) for p in fd.params)
        return m.FuseDecl(name, params, flags, self._fuse_expr(fd.body), SPAN)

    def _fuse_expr(self, e: Any) -> m.Expr:
        if isinstance(e, FuseCall):
            return m.Call(self.sym(e.target), tuple(self._fuse_expr(a) for a in e.args), SPAN)
        if e == QAT and isinstance(e, str):
            return path_expr("is_qat")
        if isinstance(e, bool):
            return path_expr("true" if e else "false")
        if isinstance(e, (int, float)):
            return number_expr(e)
        return m.DottedName((e,), SPAN)

    # ------------------------------------------------------------ items

    def item(self, c: Config, dtypes: m.Expr | None = None) -> m.PatternItem:
        """The pattern item of one config: its fields in fmt's canonical order.

        ``dtypes``, if given, is written for the dtype set (a group's parameter).
        """
        flds: list[m.Field] = []
        for word in FMT_FIELD_ORDER:
            spec = FIELD_BY_WORD[word]
            if spec.kind is FieldKind.DTYPES and dtypes is not None and c.dtypes:
                value: m.Expr | None = dtypes
            else:
                value = self._field_value(spec, c)
            if value is not None:
                flds.append(self.intern(field_of(word, value)))
        return m.PatternItem(
            self.pattern(c.pattern), c.complex, False, self.intern(tuple(flds)), SPAN
        )

    def _field_value(self, spec: FieldSpec, c: Config) -> m.Expr | None:
        """The expression of field ``spec`` for ``c``, or None if the config does not set it."""
        if spec.kind is FieldKind.PT2E:
            return None  # not a BackendConfig field: nothing to import
        if spec.kind is FieldKind.OBSERVATION:
            if c.observation == "different_observer":
                return None
            return self.intern(path_expr(c.observation))
        if spec.kind is FieldKind.DTYPES:
            return self.dtypes_value(c.dtypes) if c.dtypes else None
        if spec.kind is FieldKind.MODULE:
            return self.sym(c.modules[spec.word]) if spec.word in c.modules else None
        if spec.kind is FieldKind.FUSER:
            return self._fuser_value(c)
        if spec.kind is FieldKind.NODE_GETTER:
            return self.intern(getter_expr(c.root_node)) if c.root_node is not None else None
        if spec.kind is FieldKind.INPUTS_GETTER:
            if c.extra_inputs is None:
                return None
            return self.intern(m.ListExpr(tuple(getter_expr(p) for p in c.extra_inputs), SPAN))
        if spec.kind is FieldKind.NUM_TENSOR_ARGS:
            entries = tuple(m.Entry(k, path_expr(v), SPAN) for k, v in c.num_tensor_args)
            return self.intern(m.Record(entries, SPAN)) if entries else None
        assert spec.kind is FieldKind.INPUT_INDEX
        entries = tuple(m.Entry(k, m.Int(v, SPAN), SPAN) for k, v in c.input_index)
        return self.intern(m.Record(entries, SPAN)) if entries else None

    def _fuser_value(self, c: Config) -> m.Expr | None:
        if c.fuser is None:
            return None
        kind, value = c.fuser
        if kind == "sequential":
            return self.intern(m.Call(path_expr("sequential"), (self.sym(value),), SPAN))
        if kind == "fuse":
            return self.intern(m.DottedName((self.fuse_names[value],), SPAN))
        return self.sym(value)


def _leaves(p: Any) -> list[str]:
    return [n for x in p for n in _leaves(x)] if isinstance(p, tuple) else [p]


def config_paths(configs: Iterable[Config]) -> list[str]:
    """Every dotted path the configs name (patterns, modules, fusers), in order."""
    out: list[str] = []

    def pat(p: Any) -> None:
        if isinstance(p, tuple):
            for x in p:
                pat(x)
        elif isinstance(p, Sym):
            out.append(p.path)

    def fuse(e: Any) -> None:
        if isinstance(e, FuseCall):
            out.append(e.target.path)
            for a in e.args:
                fuse(a)

    for c in configs:
        pat(c.pattern)
        out.extend(s.path for s in c.modules.values())
        if c.fuser is not None:
            kind, value = c.fuser
            if kind == "fuse":
                fuse(value.body)
            else:
                out.append(value.path)
    return out
