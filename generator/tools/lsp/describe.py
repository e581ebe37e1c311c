"""The resolved model said in spec words, for hover: dtype sets, constraints, fusers, patterns.

Values are turned back into syntax nodes and printed by fmt's printer, so a
hover shows what a spec would write: ``{input: quint8, output: quint8}``,
``constraint c = qint8 {quant_min: -128, scale_min: 2 ** -12}``,
``pattern (nn.Conv2d, nn.ReLU) { ... }``, every name spelled with the
built-in aliases and every number computed.
"""

from __future__ import annotations

from ...lang import syntax as syn
from ...lang.fmt import Printer, render
from ...lang.vocabulary import (
    CONSTRAINT_FIELDS,
    DTYPE_KEY_WORDS,
    FIELDS,
    OBSERVATION_WORDS,
    FieldKind,
    spell,
)
from ...semantics import model as m
from ..importer.common import SPAN, getter_expr, int_expr, number_expr, path_expr

# The attribute of ``DTypeConfig`` each dtype config key sets.
_CONFIG_ATTRS = {word: "is_dynamic" if word == "dynamic" else word for word in DTYPE_KEY_WORDS}


def text_of(node: syn.Decl | syn.Item | syn.Expr) -> str:
    """A declaration, item or expression in the canonical layout."""
    printer = Printer()
    if isinstance(node, (syn.PatternItem, syn.UseItem, syn.ForItem)):
        return render(printer.item(node))
    if isinstance(
        node,
        (
            syn.ImportDecl,
            syn.AliasDecl,
            syn.ConstraintDecl,
            syn.DTypesDecl,
            syn.FuseDecl,
            syn.GroupDecl,
            syn.BackendDecl,
            syn.QuantizerDecl,
        ),
    ):
        return render(printer.decl(node))
    return render(printer.expr(node))


def symbol_expr(symbol: m.Symbol) -> syn.DottedName:
    return path_expr(spell(symbol.path))


def dtype_word(dtype: str) -> str:
    """A canonical dtype name as specs write it: ``float32`` is ``float``."""
    return "float" if dtype == "float32" else dtype


def dtype_expr(d: m.DType) -> syn.Expr:
    """A dtype by its word, or the constraint it came from by name."""
    return path_expr(d.name if d.constrained and d.name else dtype_word(d.dtype))


def config_expr(c: m.DTypeConfig) -> syn.Record:
    entries = []
    for word, attr in _CONFIG_ATTRS.items():
        value = getattr(c, attr)
        if value is None:
            continue
        if isinstance(value, bool):
            expr: syn.Expr = path_expr("true" if value else "false")
        elif isinstance(value, m.DType):
            expr = dtype_expr(value)
        else:
            expr = path_expr(dtype_word(str(value)))
        entries.append(syn.Entry(word, expr, SPAN))
    return syn.Record(tuple(entries), SPAN)


def configs_expr(configs: tuple[m.DTypeConfig, ...]) -> syn.Expr:
    if len(configs) == 1:
        return config_expr(configs[0])
    return syn.ListExpr(tuple(config_expr(c) for c in configs), SPAN)


def constraints_of(configs: tuple[m.DTypeConfig, ...]) -> list[m.DType]:
    """The constrained dtypes the configs use, each once, in order."""
    out: list[m.DType] = []
    for c in configs:
        for d in (c.input, c.output, c.weight):
            if d is not None and d.constrained and d not in out:
                out.append(d)
    return out


def constraint_text(name: str, d: m.DType) -> str:
    entries = tuple(
        syn.Entry(short, number_expr(getattr(d, attr)), SPAN)
        for attr, short in CONSTRAINT_FIELDS
        if getattr(d, attr) is not None
    )
    return text_of(syn.ConstraintDecl(name, path_expr(dtype_word(d.dtype)), entries, SPAN))


def dtypes_text(name: str, configs: tuple[m.DTypeConfig, ...]) -> str:
    """A dtype set as a declaration, followed by the constraints it uses."""
    lines = [text_of(syn.DTypesDecl(name, configs_expr(configs), SPAN))]
    for d in constraints_of(configs):
        lines.append(constraint_text(d.name or d.dtype, d))
    return "\n".join(lines)


def fuse_expr(e: m.FuseExpr) -> syn.Expr:
    if isinstance(e, m.FuseArg):
        return path_expr(e.name)
    if isinstance(e, m.FuseQat):
        return path_expr("is_qat")
    if isinstance(e, m.FuseConst):
        if isinstance(e.value, bool):
            return path_expr("true" if e.value else "false")
        return syn.Int(e.value, SPAN) if isinstance(e.value, int) else syn.Float(e.value, SPAN)
    return syn.Call(symbol_expr(e.function), tuple(fuse_expr(a) for a in e.args), SPAN)


def fuser_text(f: m.DefinedFuser) -> str:
    flags = tuple(
        flag for flag, on in (("eval_only", f.eval_only), ("same_mode", f.same_mode)) if on
    )
    body = fuse_expr(f.body)
    assert isinstance(body, syn.Call)
    return text_of(syn.FuseDecl(f.name, f.params, flags, body, SPAN))


def pattern_expr(p: m.PatternValue) -> syn.Expr:
    if isinstance(p, tuple):
        return syn.TupleExpr(tuple(pattern_expr(x) for x in p), SPAN)
    if isinstance(p, m.Symbol):
        return symbol_expr(p)
    if isinstance(p, str):
        return syn.Str(p, SPAN)
    return int_expr(p)


def _field_expr(kind: FieldKind, value: object) -> syn.Expr | None:
    """A resolved field value as a spec writes it; None if the config does not set it."""
    if value is None or value == ():
        return None
    if kind is FieldKind.OBSERVATION:
        return path_expr(OBSERVATION_WORDS[str(value)])
    if kind is FieldKind.DTYPES:
        assert isinstance(value, tuple)
        return configs_expr(value)
    if kind is FieldKind.MODULE:
        assert isinstance(value, m.Symbol)
        return symbol_expr(value)
    if kind is FieldKind.FUSER:
        if isinstance(value, m.SequentialFuser):
            return syn.Call(path_expr("sequential"), (symbol_expr(value.fused),), SPAN)
        if isinstance(value, m.SymbolFuser):
            return symbol_expr(value.function)
        assert isinstance(value, m.DefinedFuser)
        return path_expr(value.name)
    if kind is FieldKind.NODE_GETTER:
        assert isinstance(value, m.NodeGetter)
        return getter_expr(value.path)
    if kind is FieldKind.INPUTS_GETTER:
        assert isinstance(value, m.ExtraInputsGetter)
        return syn.ListExpr(tuple(getter_expr(p) for p in value.paths), SPAN)
    assert isinstance(value, tuple)
    if kind is FieldKind.NUM_TENSOR_ARGS:
        pairs = tuple(syn.Entry(n, path_expr(OBSERVATION_WORDS[o]), SPAN) for n, o in value)
    else:
        pairs = tuple(syn.Entry(k, int_expr(i), SPAN) for k, i in value)
    return syn.Record(pairs, SPAN)


def config_text(c: m.PatternConfig) -> str:
    """A resolved pattern config as the pattern item that says exactly it."""
    fields = []
    for spec in sorted(FIELDS, key=lambda f: f.fmt_rank):
        value = getattr(c, spec.attr)
        if spec.kind is FieldKind.OBSERVATION and value == "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT":
            continue  # the default, which a spec leaves out
        expr = _field_expr(spec.kind, value)
        if expr is not None:
            fields.append(syn.Field(spec.word, expr, SPAN))
    item = syn.PatternItem(pattern_expr(c.pattern), c.complex, False, tuple(fields), SPAN)
    return text_of(item)
