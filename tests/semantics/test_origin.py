"""Provenance: each config's ``Origin`` names its fields, the use/for chain and the definitions used."""

from __future__ import annotations

import textwrap

from generator.semantics import model as m
from generator.semantics.driver import resolve_specs

SPEC = """\
constraint act = qint8 {scale_min: 2 ** -12}
dtypes sym = {input: act, output: act}
dtypes plain = {input: quint8, output: quint8}
dtypes both = [sym, plain]
group g(ds, ops) {
    for op in ops {
        pattern op { dtypes: ds }
    }
}
backend b {
    use g(both, [nn.ReLU, F.relu])
    for (op, ds) in [(nn.Tanh, plain), (nn.Sigmoid, sym)] {
        pattern op { dtypes: ds }
    }
    pattern nn.Hardtanh {
        dtypes: both
        root: nn.Hardtanh
        reference: nnqr.Linear
    }
    override pattern nn.ReLU { dtypes: plain }
}
"""


def resolve(tmp_path) -> m.Backend:
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(SPEC))
    (backend,) = resolve_specs(tmp_path, [spec]).backends
    return backend


def names(refs: tuple[m.DefinitionRef, ...]) -> list[str]:
    return [f"{r.kind} {r.name}:{r.span.line}" for r in refs]


def test_use_arguments_record_the_definitions_they_name_with_theirs(tmp_path):
    relu_via_g = resolve(tmp_path).configs[1]  # F.relu, placed by use g(...) and its loop
    use, loop = relu_via_g.origin.chain
    assert (use.kind, use.anchor, use.span.line, use.definition.line) == (
        "use",
        "g(ds=both, ops=[nn.ReLU, F.relu])",
        11,
        5,
    )
    # `both` names `sym` and `plain`; `sym` names the constraint `act`.
    assert names(use.definitions) == [
        "dtypes both:4",
        "dtypes sym:2",
        "constraint act:1",
        "dtypes plain:3",
    ]
    assert (loop.kind, loop.anchor, loop.definition.line, loop.definitions) == (
        "for",
        "for op = F.relu",
        6,
        (),
    )
    assert relu_via_g.origin.definitions == ()  # `dtypes: ds` names no definition itself


def test_loop_elements_record_only_their_own_definitions(tmp_path):
    b = resolve(tmp_path)
    tanh, sigmoid = b.configs[2], b.configs[3]
    assert names(tanh.origin.chain[0].definitions) == ["dtypes plain:3"]
    assert names(sigmoid.origin.chain[0].definitions) == ["dtypes sym:2", "constraint act:1"]


def test_fields_record_definitions_transitively_and_overrides_what_they_replaced(tmp_path):
    b = resolve(tmp_path)
    hardtanh = b.configs[4]
    assert names(hardtanh.origin.definitions) == [
        "dtypes both:4",
        "dtypes sym:2",
        "constraint act:1",
        "dtypes plain:3",
    ]
    assert [w for w, _ in hardtanh.origin.fields] == ["dtypes", "root", "reference"]
    assert hardtanh.origin.field("root").line == 17
    relu = b.configs[0]  # replaced in place by the override
    assert relu.origin.item.line == 20 and relu.origin.chain == ()
    assert relu.origin.replaced is not None
    assert relu.origin.replaced.item.line == 7
    assert relu.origin.replaced.chain[0].anchor == "g(ds=both, ops=[nn.ReLU, F.relu])"
