"""The table of PT2E keys (``generator/lang/pt2e_keys.py``) agrees with every place a key
lives: ``PT2EOptions`` (a field per key, in order, with its default), the compiler's and
the runtime's ``Rule`` (the same fields, order and defaults), ``Quantizer`` (a field per
quantizer field), and the Rule fields each runtime base declares it honours. Each check
is shown to fail on a mutation of one place."""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING, fields, make_dataclass, replace
from typing import Any

import pytest

from generator.lang import pt2e_keys as t
from generator.semantics import model as m
from generator.sources import Span

torch = pytest.importorskip("torch")
pytest.importorskip("torchao", reason="the runtime's bases import torchao")

from generator.runtime.composable import ComposableAPI, ComposableSpecQuantizer  # noqa: E402
from generator.runtime.operators import OperatorScopedQuantizer  # noqa: E402
from generator.runtime.pairs import PairsQuantizer  # noqa: E402
from generator.runtime.quantizer import SpecQuantizer  # noqa: E402
from generator.runtime.registry import RegistryQuantizer  # noqa: E402
from generator.runtime.values import Rule as RuntimeRule  # noqa: E402

BASES = {
    t.Scopes.MODULES: SpecQuantizer.honours,
    t.Scopes.OPERATORS: OperatorScopedQuantizer.honours,
    t.Scopes.COMPOSABLE: ComposableSpecQuantizer.honours,
    t.Scopes.PAIRS: PairsQuantizer.honours,
    t.Scopes.REGISTRY: RegistryQuantizer.honours,
}


def _defaults(cls: Any, skip: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    out = []
    for f in fields(cls):
        if f.name in skip:
            continue
        default = f.default if f.default is not MISSING else MISSING
        out.append((f.name, default))
    return out


def disagreements(
    table: tuple[t.Key, ...] = t.PT2E_TABLE,
    quantizer_table: tuple[t.Key, ...] = t.QUANTIZER_TABLE,
    options: Any = m.PT2EOptions,
    rule: Any = m.Rule,
    runtime_rule: Any = RuntimeRule,
    bases: dict[t.Scopes, frozenset[str]] = BASES,
) -> list[str]:
    """Every way the places disagree, in words; empty when they agree."""
    out = []
    keys = [(k.word, k.default) for k in table]
    if _defaults(options, ("where",)) != keys:
        out.append(f"PT2EOptions fields {_defaults(options, ('where',))} != table {keys}")
    for k in (*table, *quantizer_table):
        first = k.kind is t.Kind.WORD and k.default is not None
        if k.words is not None and first and k.default != next(iter(k.words)):
            out.append(f"{k.word}: default {k.default!r} is not the first of its words")
        if k.kind is t.Kind.LEVELS and not set(k.default) <= set(k.words or ()):
            out.append(f"{k.word}: default {k.default!r} is not a list of its words")
        if k.words is not None and k.kind not in (t.Kind.WORD, t.Kind.LEVELS):
            out.append(f"{k.word}: words on a {k.kind.name} key")
    compiler = _defaults(rule, ("origins",))
    runtime = _defaults(runtime_rule)
    if [(n, str(d) if isinstance(d, str) else d) for n, d in compiler] != runtime:
        out.append(f"compiler Rule {compiler} != runtime Rule {runtime}")
    names = {n for n, _ in compiler}
    for k in table:
        if not set(k.lands) <= names:
            out.append(f"{k.word} lands in {k.lands}, not all Rule fields")
    quantizer = {f.name for f in fields(m.Quantizer)}
    for k in quantizer_table:
        if not set(k.lands) <= quantizer:
            out.append(f"quantizer field {k.word} lands in {k.lands}, not Quantizer fields")
    for base, honours in bases.items():
        if honours != t.honoured(base):
            out.append(
                f"{base}: the runtime honours {sorted(honours ^ t.honoured(base))} otherwise"
            )
        for k in table:
            if (base in k.bases) != (set(k.lands) <= honours):
                out.append(f"{k.word}: the table and the {base} runtime disagree on honouring it")
    return out


def test_the_table_and_every_place_a_key_lives_agree():
    assert disagreements() == []


def _rule_with(cls: Any, name: str, default: Any) -> Any:
    """``cls`` with field ``name``'s default changed (a place that drifted)."""
    specs = [
        (f.name, f.type, dataclasses.field(default=default if f.name == name else f.default))
        for f in fields(cls)
        if f.default is not MISSING
    ]
    first = [(f.name, f.type) for f in fields(cls) if f.default is MISSING]
    return make_dataclass(cls.__name__, [*first, *specs], frozen=True)


def test_a_disagreement_in_any_place_fails():
    scope = t.PT2E_KEY["scope"]
    other_default = tuple(
        k if k is not scope else replace(k, default=t.Scope.NONE) for k in t.PT2E_TABLE
    )
    assert any("PT2EOptions" in d for d in disagreements(table=other_default))
    assert any("first of its words" in d for d in disagreements(table=other_default))
    dropped = tuple(k for k in t.PT2E_TABLE if k.word != "opt_in")
    assert any("PT2EOptions" in d for d in disagreements(table=dropped))
    moved = tuple(
        k if k is not scope else replace(k, bases=frozenset({t.Scopes.OPERATORS}))
        for k in t.PT2E_TABLE
    )
    assert any(d.startswith("scope: the table") for d in disagreements(table=moved))
    drifted = _rule_with(RuntimeRule, "qparams", "quantized")
    assert any("runtime Rule" in d for d in disagreements(runtime_rule=drifted))
    drifted = _rule_with(m.PT2EOptions, "any_float", True)
    assert any("PT2EOptions" in d for d in disagreements(options=drifted))
    forgot = {**BASES, t.Scopes.OPERATORS: BASES[t.Scopes.OPERATORS] - {"when"}}
    assert any("when" in d for d in disagreements(bases=forgot))
    lost = tuple(
        k if k.word != "fx" else replace(k, lands=("pt2e_only",)) for k in t.QUANTIZER_TABLE
    )
    assert any("fx" in d for d in disagreements(quantizer_table=lost))


CLASSES = {
    t.Scopes.MODULES: SpecQuantizer,
    t.Scopes.OPERATORS: OperatorScopedQuantizer,
    t.Scopes.COMPOSABLE: ComposableSpecQuantizer,
    t.Scopes.PAIRS: PairsQuantizer,
    t.Scopes.REGISTRY: RegistryQuantizer,
}


def base_disagreements(
    table: dict[t.Scopes, t.Base] = t.BASES, classes: dict[t.Scopes, type] = CLASSES
) -> list[str]:
    """The key table's ``BASES`` against the runtime: each ``scopes`` word's class by name,
    and ``reports`` exactly when the class has ``report()`` (bcfg compat reads the column)."""
    out = []
    if set(table) != set(t.Scopes):
        out.append(f"BASES rows {sorted(table)} != scopes words {sorted(t.Scopes)}")
    for scopes, base in table.items():
        cls = classes[scopes]
        if cls.__name__ != base.runtime:
            out.append(f"{scopes}: the table names {base.runtime}, the runtime {cls.__name__}")
        if callable(getattr(cls, "report", None)) != base.reports:
            out.append(f"{scopes}: reports={base.reports}, but {cls.__name__} says otherwise")
    return out


def test_the_bases_column_agrees_with_the_runtime():
    assert base_disagreements() == []


def test_a_bases_disagreement_fails():
    claims = {**t.BASES, t.Scopes.COMPOSABLE: replace(t.BASES[t.Scopes.COMPOSABLE], reports=False)}
    assert any("reports=False" in d for d in base_disagreements(claims))
    renamed = {**t.BASES, t.Scopes.MODULES: t.Base("ModuleQuantizer", reports=True)}
    assert any("ModuleQuantizer" in d for d in base_disagreements(renamed))
    short = {k: v for k, v in t.BASES.items() if k is not t.Scopes.OPERATORS}
    assert any("BASES rows" in d for d in base_disagreements(short))


# The classes a generated quantizer of each scopes derives from: its base, and the mixin a
# quantizer field adds (``api: composable``).
DERIVES = {
    **{b: (c,) for b, c in CLASSES.items()},
    t.Scopes.COMPOSABLE: (ComposableSpecQuantizer, ComposableAPI),
}


def _attribute(classes: tuple[type, ...], name: str) -> bool:
    """Whether one of ``classes`` has a class attribute of data ``name`` (not a method, not
    the hooks API module)."""
    value = next((getattr(c, name) for c in classes if hasattr(c, name)), MISSING)
    return value is None or isinstance(value, (str, bool, int, tuple, list))


def _samples(k: t.Key) -> list[Any]:
    """Values of quantizer field ``k`` other than its default, one per way it is written."""
    if k.written is t.Written.HOOKS:
        return [(m.Hook("add_to_mul"),), (m.Hook("add_to_mul"), m.Hook("scalars_to_tensors"))]
    if k.kind is t.Kind.LEVELS:
        assert k.words is not None
        return [tuple(k.words), tuple(reversed(k.words))]
    if k.words is not None:
        return [w for w in k.words if w != k.default]
    if k.kind is t.Kind.FLAG:
        return [not k.default]
    return ["my.configs.QuantizationConfig"]


def emitted(k: t.Key, value: Any, body: Any) -> list[str]:
    """The class attribute lines ``body`` (the emitter's class_body) writes for a quantizer
    whose field ``k`` is ``value``, all else at its defaults."""
    from generator.emit.pt2e import _Names

    span = Span("b.bcfg", 1, 1, 1, 1)
    q = m.Quantizer("b", (), (), "b.bcfg", (), span)
    (land,) = k.lands
    plain = body(q, _Names())
    return [line for line in body(replace(q, **{land: value}), _Names()) if line not in plain]


def emission_disagreements(
    table: tuple[t.Key, ...] = t.QUANTIZER_TABLE,
    derives: dict[t.Scopes, tuple[type, ...]] = DERIVES,
    body: Any = None,
) -> list[str]:
    """A quantizer field that lands on a class attribute of the runtime is written by the
    emitter's loop over the table (``class_body``), on the attribute its row names and only
    when it is not the default; a row naming an attribute no class of its bases has (no part
    reads it) disagrees, and so does a row whose field is a class attribute it does not name."""
    from generator.emit.pt2e import class_body

    body = body or class_body
    out = []
    for k in table:
        for b in sorted(k.bases):
            classes = derives[b]
            for a in k.attributes:
                if not _attribute(classes, a):
                    out.append(f"{k.word}: no class of scopes: {b} has the attribute {a}")
            for land in k.lands:
                if _attribute(classes, land) and land not in k.attributes:
                    out.append(f"{k.word}: lands on the class attribute {land}, unwritten")
        if not k.attributes:
            continue
        if len(k.lands) != 1:
            out.append(f"{k.word}: a class attribute for {len(k.lands)} fields")
            continue
        if emitted(k, k.default, body):
            out.append(f"{k.word}: its default is written")
        for value in _samples(k):
            try:
                lines = emitted(k, value, body)
            except (TypeError, ValueError) as e:  # as layout.string(True)
                out.append(f"{k.word}: {value!r} cannot be written {k.written.name}: {e}")
                continue
            if len(lines) != 1 or lines[0].split(" = ")[0] not in k.attributes:
                out.append(f"{k.word}: {value!r} is written as {lines}, not on {k.attributes}")
            elif k.kind is t.Kind.FLAG and lines[0].split(" = ")[1] != repr(value):
                out.append(f"{k.word}: {value!r} is written as {lines}, not as a flag")
    return out


def test_the_quantizer_class_body_is_the_tables():
    assert emission_disagreements() == []


def test_a_quantizer_field_the_class_body_does_not_write_fails():
    from generator.emit.pt2e import class_body

    forgot = tuple(
        k if k.word != "validate" else replace(k, attribute="") for k in t.QUANTIZER_TABLE
    )
    assert any("validation, unwritten" in d for d in emission_disagreements(forgot))
    unread = (*t.QUANTIZER_TABLE, replace(t.QUANTIZER_KEY["outputs"], word="o", attribute="o"))
    assert any("has the attribute o" in d for d in emission_disagreements(unread))

    def skipping(q: Any, names: Any) -> list[str]:
        return [line for line in class_body(q, names) if not line.startswith("levels")]

    assert any(d.startswith("select: ") for d in emission_disagreements(body=skipping))
    allways = tuple(
        k if k.word != "outputs" else replace(k, default=t.Outputs.CONSUMERS)
        for k in t.QUANTIZER_TABLE
    )
    assert any("outputs: its default is written" in d for d in emission_disagreements(allways))
    quoted = (replace(t.QUANTIZER_KEY["fx"], attribute="fx"),)  # a flag written as a string

    def flags(q: Any, names: Any) -> list[str]:
        return class_body(q, names, quoted)

    assert any("cannot be written STRING" in d for d in emission_disagreements(quoted, body=flags))
    quoted = (replace(quoted[0], written=t.Written.LITERAL),)
    assert not any("fx: False" in d for d in emission_disagreements(quoted, body=flags))


def test_the_language_servers_class_record_keys_are_the_compilers():
    """The LSP's hover and completion of ``classes:`` records (``CLASS_RECORD``,
    ``STAGE_RECORD``) name the keys the compiler resolves, in its order (the compiler reads
    the same rows), and every row says what the key does and what it takes."""
    from generator.semantics.pt2e.classes import CLASS_KEYS, STAGE_KEYS

    assert tuple(t.CLASS_RECORD) == CLASS_KEYS
    assert tuple(t.STAGE_RECORD) == STAGE_KEYS
    assert all(
        doc and values for doc, values in (*t.CLASS_RECORD.values(), *t.STAGE_RECORD.values())
    )


# Quantizer fields the class body writes whose witness the runtime tests cannot run yet
# (none: configs' witness sets one of its per-word attributes and uses a config with
# ExecuTorch Arm's accessors; config_type's has the api: composable mixin).
UNWITNESSED: set[str] = set()
WRITTEN = [k for k in t.QUANTIZER_TABLE if k.attribute and k.word not in UNWITNESSED]


def test_only_the_known_written_quantizer_fields_have_no_witness():
    assert {k.word for k in t.QUANTIZER_TABLE if k.attribute and k.witness is None} == UNWITNESSED


@pytest.mark.parametrize("key", WRITTEN, ids=[k.word for k in WRITTEN])
def test_a_quantizer_field_the_class_body_writes_changes_what_the_runtime_does(key):
    """Whatever its value's type (tests/runtime/test_key_witnesses.py's own rows are the
    fields whose runtime attribute is a string or a sequence): a field no part reads fails."""
    from tests.runtime.test_key_witnesses import check

    check(key, "quantizer")
