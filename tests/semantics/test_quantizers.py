"""PT2E quantizers: patterns resolved into rules, through the ATen mapping table."""

from __future__ import annotations

import textwrap

import pytest

from generator.diagnostics import SpecError
from generator.lang.pt2e_keys import QUANTIZER_TABLE, Key, Kind, Scopes
from generator.semantics import model as m
from generator.semantics.driver import resolve_specs
from generator.semantics.pt2e.keys import unread
from tests.support import REPO

A = "torch.ops.aten."


def quantizer(tmp_path, text: str) -> m.Quantizer:
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(text))
    (q,) = resolve_specs(tmp_path, [spec]).quantizers
    return q


def chain(rule: m.Rule) -> list[list[str]]:
    return [[op.path.removeprefix(A) for op in ops] for ops in rule.chain]


HEAD = """
    constraint act = qint8 {scale_min: 2 ** -12}
    dtypes s = {input: act, output: act, weight: qint8, bias: float}
    dtypes dyn = {input: act, output: float, weight: qint8, bias: float, dynamic: true}
    dtypes io = {input: act, output: act}
    quantizer b {}
"""


def test_patterns_become_rules_in_order_through_the_table(tmp_path):
    q = quantizer(
        tmp_path,
        HEAD + """
        backend b {
            for relu in [nn.ReLU, F.relu] { pattern (nn.Conv2d, relu) { dtypes: s } }
            pattern nni.ConvReLU2d { dtypes: s  root: nn.Conv2d  reference: nnqr.Conv2d }
            pattern nniqat.ConvReLU2d { dtypes: s  root: nn.Conv2d  reference: nnqr.Conv2d }
            pattern nn.Linear { dtypes: [s, dyn] }
            pattern F.linear { dtypes: s }
            pattern torch.cat { observation: shared_observer  dtypes: io  pt2e: {match: source, eager: true} }
            pattern "view" { observation: shared_observer  dtypes: io }
            pattern nn.Sigmoid { observation: not_observed }
            pattern torch.add { dtypes: s  pt2e: {skip: large_scalar} }
            pattern nn.GRU { dtypes: s  pt2e: {aten: []} }
        }
        """,
    )
    assert [(r.name, r.kind.value, chain(r)) for r in q.rules] == [
        (
            "(nn.Conv2d, nn.ReLU)",
            "chain",
            [["conv2d.default", "conv2d.padding"], ["relu.default", "relu_.default"]],
        ),
        ("nn.Linear", "chain", [["linear.default"]]),
        ("torch.cat", "shared", [["cat.default"]]),
        ("'view'", "propagate", [["view.default"]]),
        ("torch.add", "chain", [["add.Tensor"]]),
    ]
    conv, linear, cat, view, add = q.rules
    # F.relu, the fused module and F.linear map to rules already there: merged, not repeated.
    assert len(conv.origins) == 3 and len(linear.origins) == 2
    assert (conv.weight, conv.bias, linear.weight, linear.bias) == (1, 2, 1, 2)
    assert [a.dynamic for a in linear.allows] == [None, True]
    assert [s.path for s in cat.sources] == ["torch.cat"]
    assert view.allows == () and add.skip == (m.Hook("large_scalar"),)
    assert not any(r.qat for r in q.rules)


def test_allows_are_the_dtype_configs_in_pt2e_dtypes(tmp_path):
    q = quantizer(
        tmp_path,
        HEAD + """
        constraint fixed = quint8 {quant_min: 0, quant_max: 255, scale: 1.0 / 256.0, zero_point: 0}
        backend b {
            pattern nn.Linear { dtypes: [s, dyn] }
            pattern nn.Sigmoid { dtypes: {input: fixed, output: fixed} }
        }
        """,
    )
    static, dynamic = q.rules[0].allows
    assert static == m.Allows(
        input=m.Quant("int8", scale_min=2**-12),
        output=m.Quant("int8", scale_min=2**-12),
        weight=m.Quant("int8"),
        bias=m.Quant(None),
    )
    assert static.name == "s" and static.input.name == "act"
    assert dynamic.output == m.Quant(None) and dynamic.dynamic is True
    (sigmoid,) = q.rules[1].allows
    assert sigmoid.output == m.Quant("uint8", 0, 255, None, 1.0 / 256.0, 0)


def test_aten_input_index_and_batch_norm_chains(tmp_path):
    q = quantizer(
        tmp_path,
        HEAD + """
        backend b {
            pattern (nn.Conv2d, nn.BatchNorm2d, nn.ReLU) {
                dtypes: s
                pt2e: {aten: (aten.conv2d.default, aten.batch_norm.default, [aten.relu.default, aten.relu_.default])}
            }
            pattern nn.BatchNorm2d { dtypes: s }
            pattern aten.addmm.default { dtypes: s  input_index: {weight: 2, bias: 0} }
            pattern nn.Embedding { dtypes: s }
            pattern aten.relu { observation: shared_observer  dtypes: io }
        }
        """,
    )
    bn_chain, bn, addmm, embedding, relu = q.rules
    assert chain(bn_chain) == [
        ["conv2d.default"],
        ["batch_norm.default"],
        ["relu.default", "relu_.default"],
    ]
    assert bn_chain.qat and not bn.qat  # batch norm after the first op: folded in PTQ, so QAT only
    assert (addmm.weight, addmm.bias) == (2, 0)
    assert (embedding.weight, embedding.bias) == (0, None)
    assert relu.chain[0][0].path == A + "relu"  # a packet stands for all its overloads


def test_hooks_name_bcfg_runtime_or_a_function(tmp_path):
    q = quantizer(
        tmp_path,
        """
        dtypes s = {input: qint8, output: qint8}
        quantizer b {
            transform: [scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor), torch.fx.passes.tools_common.legalize_graph]
        }
        backend b {
            pattern nn.GRU {
                dtypes: s
                pt2e: {annotate: torch.fx.passes.utils.source_matcher_utils.get_source_partitions}
            }
        }
        """,
    )
    builtin, user = q.transforms
    assert builtin.name == "scalars_to_tensors" and [o.path for o in builtin.ops] == [
        A + "add.Tensor",
        A + "mul.Tensor",
    ]
    assert user.function is not None and user.function.path.endswith("legalize_graph")
    (gru,) = q.rules
    assert gru.kind is m.RuleKind.HOOK and gru.chain == ()
    assert (
        gru.annotate.function.path
        == "torch.fx.passes.utils.source_matcher_utils.get_source_partitions"
    )


def test_outputs_says_who_observes_a_pattern_output(tmp_path):
    backend = "backend b { pattern nn.ReLU { dtypes: {input: qint8, output: qint8} } }"
    assert quantizer(tmp_path, f"quantizer b {{}}\n{backend}").outputs == "patterns"
    q = quantizer(tmp_path, f"quantizer b {{ outputs: consumers }}\n{backend}")
    assert q.outputs == "consumers"
    spec = tmp_path / "t.bcfg"
    spec.write_text(f"quantizer b {{ outputs: consumer }}\n{backend}\n")
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    (d,) = exc.value.diagnostics
    assert (d.span.line, d.span.column) == (1, 24)
    assert d.message == "outputs must be patterns or consumers, got the name 'consumer'"
    assert d.hint and d.hint.startswith("did you mean 'consumers'? (patterns: ")


def _written(k: Key) -> str:
    """A value of quantizer field ``k`` other than its default, as a spec writes it."""
    if k.kind is Kind.LEVELS:
        return "[node_name, default]"
    if k.kind is Kind.PATH:
        return "my.configs.QuantizationConfig"
    assert k.words is not None, k.word
    return next(w.value for w in k.words if w != k.default)


UNREAD = [(k, s) for k in QUANTIZER_TABLE for s in Scopes if s not in k.bases]


@pytest.mark.parametrize("key, scopes", UNREAD, ids=[f"{k.word}-{s}" for k, s in UNREAD])
def test_a_quantizer_field_no_part_of_its_composition_reads_is_an_error_at_it(
    tmp_path, key, scopes
):
    """Every quantizer field, under every ``scopes:`` outside its row's ``bases``, is an
    error at the field by the pt2e keys' rule (``keys.unread``): no field is left to a check
    of its own, and none is silently accepted (``outputs:`` under ``scopes: composable``
    was)."""
    value = _written(key)
    spec = tmp_path / "t.bcfg"
    spec.write_text(
        f"quantizer b {{\n    scopes: {scopes}\n    fx: false\n    {key.word}: {value}\n}}\n"
        "backend b {\n    pattern aten.relu.default { dtypes: {input: qint8, output: qint8} }\n}\n"
    )
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    at = [(d.span.line, d.span.column, d.message, d.hint) for d in exc.value.diagnostics]
    unread_ = unread(key, value, scopes)
    assert unread_ is not None
    assert [a for a in at if a[0] == 4] == [(4, 5, *unread_)]


def test_reused_weight_comes_from_the_pattern_else_the_quantizer(tmp_path):
    backend = """
        backend b {
            pattern nn.Conv2d { dtypes: s }
            pattern nn.Linear { dtypes: s  pt2e: {reused_weight: match} }
            pattern (nn.Linear, nn.ReLU) { dtypes: s  pt2e: {reused_weight: decline} }
            pattern torch.add { dtypes: s }
        }
    """
    q = quantizer(tmp_path, HEAD + backend)
    assert q.reused_weight == "match"
    assert {r.name: r.reused_weight for r in q.rules} == {
        "(nn.Linear, nn.ReLU)": "decline",
        "nn.Conv2d": "match",
        "nn.Linear": "match",
        "torch.add": "match",
    }
    q = quantizer(
        tmp_path, HEAD.replace("quantizer b {}", "quantizer b { reused_weight: decline }") + backend
    )
    assert q.reused_weight == "decline"
    # the quantizer's applies to patterns with a weight that do not say; an add has none
    assert {r.name: r.reused_weight for r in q.rules} == {
        "(nn.Linear, nn.ReLU)": "decline",
        "nn.Conv2d": "decline",
        "nn.Linear": "match",
        "torch.add": "match",
    }
    from generator.emit.pt2e import render_quantizer

    text = render_quantizer(q)
    assert text.count('reused_weight="decline"') == 2 and 'reused_weight="match"' not in text


def test_shipped_xnnpack_specs_decline_reused_weights_but_on_linear():
    for name, linear in (("xnnpack", "nn.Linear"), ("xnnpack_executorch", "F.linear")):
        (q,) = [
            q
            for q in resolve_specs(REPO, [REPO / "specs" / f"{name}.bcfg"]).quantizers
            if q.module == name
        ]
        weighted = {r.name: r.reused_weight for r in q.rules if r.weight is not None}
        assert q.reused_weight == "decline" and weighted.pop(linear) == "match", name
        assert set(weighted.values()) == {"decline"} and len(weighted) >= 16, (name, weighted)
    for name in ("x86_inductor", "arm_inductor"):
        (q,) = resolve_specs(REPO, [REPO / "specs" / f"{name}.bcfg"]).quantizers
        assert {r.reused_weight for r in q.rules} == {"match"}


def test_a_backend_without_quantizer_has_none_and_no_pt2e_errors(tmp_path):
    spec = tmp_path / "t.bcfg"
    spec.write_text("backend b { pattern nn.GRU { dtypes: {input: quint4x2} } }\n")
    result = resolve_specs(tmp_path, [spec])
    assert result.quantizers == [] and len(result.backends) == 1


def test_the_xnnpack_spec(tmp_path):
    """specs/xnnpack.bcfg: XNNPACK's annotators; longer chains first, eager shared ops in place."""
    result = resolve_specs(REPO, [REPO / "specs" / "xnnpack.bcfg"])
    (q,) = result.quantizers
    assert result.warnings == []
    kinds = [r.kind.value for r in q.rules]
    assert kinds[:8] == ["chain"] * 8 and all(r.qat for r in q.rules[:8])
    names = [r.name for r in q.rules if r.kind is not m.RuleKind.PROPAGATE]
    assert [len(r.chain) for r in q.rules[:8]] == [3, 3, 3, 3, 2, 2, 2, 2]
    assert names[8:] == [
        "(nn.Linear, nn.ReLU)",
        "(nn.Conv1d, nn.ReLU)",
        "(nn.Conv2d, nn.ReLU)",
        "(nn.Conv3d, nn.ReLU)",
        "(nn.ConvTranspose1d, nn.ReLU)",
        "(nn.ConvTranspose2d, nn.ReLU)",
        "(nn.ConvTranspose3d, nn.ReLU)",
        "nn.Linear",
        "nn.Conv1d",
        "nn.Conv2d",
        "nn.AdaptiveAvgPool2d",  # eager: keeps its place, and the chains around it their side
        "(operator.add, nn.ReLU)",
        "(operator.iadd, nn.ReLU)",
        "(operator.mul, nn.ReLU)",
        "(operator.imul, nn.ReLU)",
        "operator.add",
        "operator.iadd",
        "operator.mul",
        "operator.imul",
        "torch.cat",
    ]
    dynamic = [r.name for r in q.rules if any(a.dynamic for a in r.allows)]
    assert dynamic == ["nn.Linear"]
    shared = {
        op.path.removeprefix(A) for r in q.rules if r.kind.value == "propagate" for op in r.chain[0]
    }
    assert shared == {
        "relu.default",
        "hardtanh.default",
        "hardtanh_.default",
        "max_pool2d.default",
        "mean.default",
        "mean.dim",
        "permute.default",
        "squeeze.dim",
        "view.default",
        "flatten.using_ints",
    }


def test_rules_are_tried_longest_chain_first_as_fx_orders_patterns(tmp_path):
    """A spec in torch's usual order (single ops before their fusions) fuses, without a warning."""
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(HEAD + """
        backend b {
            pattern nn.Conv2d { dtypes: s }
            pattern nn.Linear { dtypes: [s, dyn] }
            pattern "view" { observation: shared_observer  dtypes: io }
            pattern (nn.Conv2d, nn.ReLU) { dtypes: s }
            pattern (nn.Conv2d, nn.BatchNorm2d, nn.ReLU) { dtypes: s }
            pattern (nn.Linear, nn.ReLU) { dtypes: s }
        }
        """))
    result = resolve_specs(tmp_path, [spec])
    assert result.warnings == []
    (q,) = result.quantizers
    assert [r.name for r in q.rules] == [
        "(nn.Conv2d, nn.BatchNorm2d, nn.ReLU)",
        "(nn.Conv2d, nn.ReLU)",
        "'view'",  # propagated after every rule: its place does not matter, and it keeps it
        "(nn.Linear, nn.ReLU)",
        "nn.Conv2d",
        "nn.Linear",
    ]


def test_a_custom_fused_module_is_fx_only_where_its_chain_covers_pt2e(tmp_path, monkeypatch):
    """``acme_ops.ConvReLU6_2d``, the ``fused:`` of (nn.Conv2d, nn.ReLU6): no rule, no error, no
    invented ATen name; the chain's rule quantizes what the module fuses."""
    (tmp_path / "acme_ops.py").write_text(
        "import torch.nn as nn\n\nclass ConvReLU6_2d(nn.Sequential):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(HEAD + """
        backend b {
            pattern nn.Conv2d { dtypes: [s, dyn] }
            pattern (nn.Conv2d, nn.ReLU6) {
                dtypes: s
                fuser: sequential(acme_ops.ConvReLU6_2d)
                fused: acme_ops.ConvReLU6_2d
            }
            pattern acme_ops.ConvReLU6_2d { dtypes: s  root: nn.Conv2d  reference: nnqr.Conv2d }
            pattern "view" { observation: shared_observer  dtypes: io }
        }
        """))
    result = resolve_specs(tmp_path, [spec], ("torch", "operator", "acme_ops"))
    assert result.warnings == []
    (q,) = result.quantizers
    assert [r.name for r in q.rules] == ["(nn.Conv2d, nn.ReLU6)", "nn.Conv2d", "'view'"]

    # Its chain left out of the quantizer: nothing covers the fused module, and the error says so.
    spec.write_text(
        spec.read_text().replace("fused: acme_ops", "pt2e: {aten: []}\n fused: acme_ops")
    )
    with pytest.raises(SpecError) as err:
        resolve_specs(tmp_path, [spec], ("torch", "operator", "acme_ops"))
    (d,) = err.value.diagnostics
    assert d.message.startswith("acme_ops.ConvReLU6_2d is FX's fused module of pattern ")
    assert "conv_re_lu6" not in d.message + (d.hint or "")

    # No pattern fuses into it: a fused module (its root is another module), FX's only.
    text = spec.read_text()
    start = text.index("    pattern (nn.Conv2d, nn.ReLU6)")
    spec.write_text(text[:start] + text[text.index("    pattern acme_ops.") :])
    with pytest.raises(SpecError) as err:
        resolve_specs(tmp_path, [spec], ("torch", "operator", "acme_ops"))
    (d,) = err.value.diagnostics
    assert d.message.startswith(
        "acme_ops.ConvReLU6_2d is a fused module (its root is nn.Conv2d): torch.export records "
        "the modules it holds, unfused, so no ATen op stands for it"
    )
    assert "conv_re_lu6" not in d.message + (d.hint or "")
    assert "fused: acme_ops.ConvReLU6_2d" in (d.hint or "")


def test_a_fusion_without_dtypes_allows_what_its_fused_module_allows(tmp_path, monkeypatch):
    """FX quantizes a fusion by its fused module's config: the PT2E rule of a fusion without
    dtypes takes the fused module pattern's dtype configs, not any config."""
    (tmp_path / "acme_ops.py").write_text(
        "import torch.nn as nn\n\nclass ConvReLU6_2d(nn.Sequential):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(HEAD + """
        backend b {
            pattern nn.Conv2d { dtypes: [s, dyn] }
            pattern (nn.Conv2d, nn.ReLU6) {
                fuser: sequential(acme_ops.ConvReLU6_2d)
                fused: acme_ops.ConvReLU6_2d
            }
            pattern acme_ops.ConvReLU6_2d { dtypes: s  root: nn.Conv2d  reference: nnqr.Conv2d }
            pattern "view" { observation: shared_observer  dtypes: io }
        }
        """))
    result = resolve_specs(tmp_path, [spec], ("torch", "operator", "acme_ops"))
    assert result.warnings == []
    (q,) = result.quantizers
    fusion, conv, _ = q.rules
    assert fusion.name == "(nn.Conv2d, nn.ReLU6)"
    assert [a.name for a in fusion.allows] == ["s"]
    assert [a.name for a in conv.allows] == ["s", "dyn"]


def test_tried_order_keeps_hooks_and_eager_shared_ops_in_place():
    from generator.semantics.pt2e.order import tried_order

    def rule(name: str, n: int, kind: m.RuleKind = m.RuleKind.CHAIN) -> m.Rule:
        op = m.Symbol(A + "relu.default", m.SymbolKind.OP, "torch")
        return m.Rule(name, kind, tuple((op,) for _ in range(n)))

    rules = [
        rule("a1", 1),
        rule("b2", 2),
        rule("pool", 1, m.RuleKind.SHARED),
        rule("c1", 1),
        rule("d3", 3),
        rule("e2", 2),
        rule("hook", 2, m.RuleKind.HOOK),
        rule("f1", 1),
        rule("g1", 1),
    ]
    assert [r.name for r in tried_order(rules)] == [
        "b2",
        "a1",
        "pool",
        "d3",
        "e2",
        "c1",
        "hook",
        "f1",
        "g1",
    ]
    assert tried_order(tried_order(rules)) == tried_order(rules)


def test_errors_name_the_pattern_line(tmp_path):
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent("""
            quantizer b {}
            backend b {
                pattern nn.ReLU { dtypes: {input: qint8, output: qint8} }
                pattern nn.LSTM { dtypes: {input: qint8, output: qint8} }
                pattern nn.Linear { dtypes: {input: qint8, output: qint8, weight: quint2x4} }
            }
            """))
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    found = [(d.span.line, d.message.split(":")[0]) for d in exc.value.diagnostics]
    assert found == [
        (5, "nn.LSTM has no ATen mapping"),
        (6, "dtype quint2x4 has no PT2E equivalent"),
    ]


def test_operator_types_qat_config_and_scope(tmp_path):
    backend = """
        backend b {
            pattern (nn.Conv2d, nn.BatchNorm2d) { dtypes: s }
            pattern (nn.Conv1d, nn.BatchNorm1d) {
                dtypes: [s, dyn]
                pt2e: {qat_config: required_if_dynamic, scope: first_op}
            }
            pattern nn.Linear { dtypes: s  pt2e: {qat_config: optional} }
            pattern nn.Conv2d { dtypes: s  pt2e: {operator_types: [aten.conv1d.default]} }
            pattern torch.cat {
                observation: shared_observer  dtypes: io  pt2e: {eager: true, scope: none}
            }
        }
    """
    text = HEAD.replace("quantizer b {}", "quantizer b { operator_type: patterns }") + backend
    q = quantizer(tmp_path, text)
    assert q.operator_type == "patterns"
    rules = {r.name: r for r in q.rules}
    # qat: inferred through batch norm, else as the pattern says
    qat = {n: (r.qat, r.qat_if_dynamic) for n, r in rules.items()}
    assert qat["(nn.Conv2d, nn.BatchNorm2d)"] == (True, False)
    assert qat["(nn.Conv1d, nn.BatchNorm1d)"] == (False, True)
    assert qat["nn.Linear"] == (False, False)
    assert [op.path for op in rules["nn.Conv2d"].operator_types] == [A + "conv1d.default"]
    assert rules["nn.Linear"].operator_types is None
    assert {n: r.scope for n, r in rules.items() if r.scope != "all_ops"} == {
        "(nn.Conv1d, nn.BatchNorm1d)": "first_op",
        "torch.cat": "none",
    }
    from generator.emit.pt2e import render_quantizer

    out = render_quantizer(q)
    assert 'operator_type = "patterns"' in out and "qat_if_dynamic=True" in out
    assert 'scope="none"' in out and "operator_types=[aten.conv1d.default]" in out


# ---------------------------------------------------------------- the Inductor-era settings

INDUCTOR_HEAD = """\
constraint act = quint8 {scale_min: 2 ** -12}
dtypes s = {input: act, output: act, weight: qint8, bias: float}
dtypes io = {input: act, output: act}
"""


def resolve(tmp_path, text: str):
    spec = tmp_path / "t.bcfg"
    spec.write_text(INDUCTOR_HEAD + textwrap.dedent(text))
    return resolve_specs(tmp_path, [spec])


def rendered(q: m.Quantizer) -> str:
    from generator.emit.pt2e import render_quantizer

    return render_quantizer(q, fast=True)


def located_error(tmp_path, text: str, at: str) -> tuple[str, str | None]:
    """The one error of a spec, which must point at the first ``at`` of its text (line and
    column): its message and hint."""
    full = INDUCTOR_HEAD + textwrap.dedent(text)
    with pytest.raises(SpecError) as exc:
        resolve(tmp_path, text)
    (d,) = exc.value.diagnostics
    before = full[: full.index(at)]
    assert (d.span.line, d.span.column) == (before.count("\n") + 1, len(before.split("\n")[-1]) + 1)
    return d.message, d.hint


def rule(q: m.Quantizer, name: str) -> m.Rule:
    return next(r for r in q.rules if r.name == name)


def test_scopes_operators_selects_torchaos_inductor_configuration_scheme(tmp_path):
    backend = "backend b { pattern nn.Conv2d { dtypes: s } }\n"
    (q,) = resolve(tmp_path, "quantizer b {}\n" + backend).quantizers
    assert q.scopes == "modules"
    assert "(SpecQuantizer):" in rendered(q) and "OperatorScopedQuantizer" not in rendered(q)
    (q,) = resolve(tmp_path, "quantizer b { scopes: operators }\n" + backend).quantizers
    assert q.scopes == "operators"
    text = rendered(q)
    assert "from ._bcfg_pt2e.operators import OperatorScopedQuantizer" in text
    assert "class BQuantizer(OperatorScopedQuantizer):" in text
    message, hint = located_error(
        tmp_path, "quantizer b { scopes: operator }\n" + backend, "operator }"
    )
    assert (
        message
        == "scopes must be modules, operators, composable, pairs or registry, got the name 'operator'"
    )
    assert hint == "did you mean 'operators'?"


def test_fx_false_makes_a_pt2e_only_target(tmp_path):
    backend = (
        "backend b { pattern (nn.Conv2d, nn.BatchNorm2d, operator.add, nn.ReLU) { dtypes: s } }\n"
    )
    result = resolve(tmp_path, "quantizer b { fx: false }\n" + backend)
    (q,) = result.quantizers
    assert q.fx is False
    # No BackendConfig: out of the FX backends, in the PT2E-only targets, with its 4 ops.
    assert result.backends == [] and [b.module for b in result.pt2e_only] == ["b"]
    assert len(result.pt2e_only[0].configs[0].pattern) == 4
    assert rule(q, "(nn.Conv2d, nn.BatchNorm2d, operator.add, nn.ReLU)").qat  # through batch norm
    # With a BackendConfig (fx: true, the default), FX cannot take 4 ops in sequence.
    message, hint = located_error(tmp_path, "quantizer b {}\n" + backend, "pattern (nn.Conv2d")
    assert message == (
        "a sequential pattern has 2 or 3 elements in a BackendConfig, this one has 4"
    )
    assert hint == (
        "write it as a 'complex' pattern, or make the backend PT2E-only with "
        "quantizer b { fx: false }"
    )
    conv = "backend b { pattern nn.Conv2d { dtypes: s } }\n"
    message, hint = located_error(tmp_path, "quantizer b { fx: no }\n" + conv, "no }")
    assert message == "fx must be true or false, got the name 'no'"
    assert hint and hint.startswith("true (the default) or false")
    # Without fx: the backend stays FX's.
    result = resolve(tmp_path, "quantizer b {}\nbackend b { pattern nn.Conv2d { dtypes: s } }\n")
    assert [b.module for b in result.backends] == ["b"] and result.pt2e_only == []


def test_match_source_finds_chains_by_source_partitions(tmp_path):
    (q,) = resolve(
        tmp_path,
        """\
        quantizer b { fx: false  scopes: operators }
        backend b {
            pattern (nn.Conv2d, nn.ReLU) { dtypes: s  pt2e: {match: source} }
            for conv in [nn.Conv2d, F.conv2d] {
                pattern conv { dtypes: s  pt2e: {aten: aten.conv2d.default, match: source} }
            }
            pattern nn.Linear { dtypes: s }
        }
        """,
    ).quantizers
    conv_relu, conv, linear = q.rules
    assert [[s.path for s in p] for p in conv_relu.partitions] == [
        ["torch.nn.Conv2d", "torch.nn.ReLU"]
    ]
    assert [s.path for s in conv.sources] == ["torch.nn.Conv2d", "torch.nn.functional.conv2d"]
    assert (linear.partitions, linear.sources) == ((), ())  # match: chain, the default
    text = rendered(q)
    assert "partitions=[[nn.Conv2d, nn.ReLU]]," in text
    assert "sources=[nn.Conv2d, F.conv2d]," in text
    spec = "quantizer b {}\nbackend b { pattern nn.Conv2d { dtypes: s  pt2e: {match: sauce} } }\n"
    message, hint = located_error(tmp_path, spec, "sauce")
    assert (message, hint) == (
        "match must be chain or source, got the name 'sauce'",
        "did you mean 'source'?",
    )
    spec = (
        'quantizer b { scopes: operators }\nbackend b { pattern (nn.Conv2d, "relu_") '
        "{ dtypes: s  pt2e: {match: source} } }\n"
    )
    message, hint = located_error(tmp_path, spec, "match:")
    assert message.startswith("match: source finds a chain by the module classes and functions")
    assert "'relu_' in pattern (nn.Conv2d, 'relu_') is not one" in message


def test_other_says_what_a_binary_ops_other_input_gets(tmp_path):
    (q,) = resolve(
        tmp_path,
        """\
        quantizer b { fx: false  scopes: operators }
        backend b {
            pattern (nn.Conv2d, operator.add) { dtypes: s  pt2e: {match: source, other: quantized} }
            pattern (nn.Linear, operator.add) { dtypes: s  pt2e: {match: source, other: float} }
            pattern (nn.Conv2d, nn.ReLU) { dtypes: s  pt2e: {match: source} }
        }
        """,
    ).quantizers
    assert [(r.name, r.other) for r in q.rules] == [
        ("(nn.Conv2d, operator.add)", "quantized"),
        ("(nn.Linear, operator.add)", "float"),
        ("(nn.Conv2d, nn.ReLU)", None),
    ]
    text = rendered(q)
    assert text.count('other="quantized",') == 1 and text.count('other="float",') == 1
    base = (
        "quantizer b { scopes: operators }\n"
        "backend b { pattern (nn.Conv2d, %s) { dtypes: s  pt2e: {other: %s} } }\n"
    )
    message, hint = located_error(tmp_path, base % ("operator.add", "quantised"), "quantised")
    assert message == "other must be quantized or float, got the name 'quantised'"
    assert hint == "did you mean 'quantized'?"
    message, hint = located_error(tmp_path, base % ("nn.ReLU", "float"), "other:")
    assert message == (
        "other: float applies to a chain with a binary op (aten.add, aten.sub, aten.mul) after "
        "its first op; pattern (nn.Conv2d, nn.ReLU) has none"
    )
    assert hint == "remove other:, or name the binary op in the pattern"


def test_when_conditions_and_opt_in(tmp_path):
    (q,) = resolve(
        tmp_path,
        """\
        quantizer b { scopes: operators  fx: false }
        backend b {
            pattern nn.Conv2d { dtypes: s }
            pattern torch.matmul { dtypes: io  pt2e: {aten: aten.matmul.default, opt_in: true} }
            pattern torch.mul { dtypes: io  pt2e: {aten: aten.mul.Tensor, when: same_shape} }
            pattern torch.cat {
                observation: shared_observer
                dtypes: io
                pt2e: {aten: aten.cat.default, when: inputs_quantized}
            }
            pattern torch.flatten {
                observation: shared_observer
                dtypes: io
                pt2e: {aten: aten.flatten.using_ints, when: [user_quantizable, input_quantized]}
            }
        }
        """,
    ).quantizers
    got = {r.name: ([h.name for h in r.when], r.opt_in, r.kind.value) for r in q.rules}
    assert got == {
        "nn.Conv2d": ([], False, "chain"),
        "torch.matmul": ([], True, "chain"),
        "torch.mul": (["same_shape"], False, "chain"),
        "torch.cat": (["inputs_quantized"], False, "propagate"),
        "torch.flatten": (["user_quantizable", "input_quantized"], False, "propagate"),
    }
    text = rendered(q)
    assert text.count("opt_in=True,") == 1
    assert "when=[same_shape]," in text and "when=[inputs_quantized]," in text
    assert "when=[user_quantizable, input_quantized]," in text
    base = "quantizer b {}\nbackend b { pattern torch.mul { dtypes: io  pt2e: {%s} } }\n"
    message, hint = located_error(tmp_path, base % "when: same_shapes", "same_shapes")
    assert (message, hint) == ("unknown condition 'same_shapes'", "did you mean 'same_shape'?")
    message, hint = located_error(tmp_path, base % "when: [same_shape, 3]", "3]")
    assert message == "expected a condition, got the number 3"
    assert hint == (
        "a condition is input_quantized, inputs_quantized, user_quantizable, same_shape or a "
        "function named by its dotted path"
    )
    message, hint = located_error(tmp_path, base % "opt_in: yes", "yes")
    assert (message, hint) == ("opt_in must be true or false, got the name 'yes'", None)
    message, hint = located_error(tmp_path, base % "opt_inn: true", "opt_inn")
    assert (message, hint) == ("unknown pt2e key 'opt_inn'", "did you mean 'opt_in'?")


def test_a_composable_chain_through_batch_norm_is_not_qat_only(tmp_path):
    """The composable base (ExecuTorch's Arm, Cortex-M, Cadence) tries conv + batch norm with
    any config its dtypes allow: no QAT default, as under scopes: modules."""
    body = """
        dtypes s = {input: qint8, output: qint8, weight: qint8}
        quantizer b { scopes: SCOPES  fx: false }
        backend b {
            pattern (aten.conv2d.default, aten.batch_norm.default, aten.relu.default) {
                dtypes: s
            }
        }
    """
    (modules,) = quantizer(tmp_path, body.replace("SCOPES", "modules")).rules
    (composable,) = quantizer(tmp_path, body.replace("SCOPES", "composable")).rules
    assert modules.qat and not composable.qat


def test_the_source_types_torchao_counts_as_one_are_torchaos():
    """``SAME_SOURCE``, by which a chain found by source partitions may name each type once
    (tests/errors/pt2e_operators_chain_repeats), is the installed torchao's table of
    equivalent types (its method names aside, which no chain element is)."""
    import importlib

    graph_utils = pytest.importorskip("torchao.quantization.pt2e.graph_utils")
    from generator.semantics.pt2e.rules import SAME_SOURCE

    def resolved(path: str) -> object:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)

    ours = [{resolved(p) for p in group} for group in SAME_SOURCE]
    theirs = [
        {t for t in group if not isinstance(t, str)} for group in graph_utils._EQUIVALENT_TYPES
    ]
    assert ours == theirs


def test_a_source_chain_that_repeats_a_type_is_refused_where_torchao_would_raise(tmp_path):
    """torchao's find_sequential_partitions raises "Each type in the sequence must be unique"
    at annotate time for (nn.Conv2d, nn.ReLU, nn.ReLU); the compiler refuses it at match."""
    graph_utils = pytest.importorskip("torchao.quantization.pt2e.graph_utils")
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="must be unique"):
        graph_utils.find_sequential_partitions(
            torch.fx.symbolic_trace(torch.nn.ReLU()),
            [torch.nn.Conv2d, torch.nn.ReLU, torch.nn.ReLU],
        )
    text = """
        dtypes d = {input: quint8, output: quint8, weight: qint8}
        quantizer b { scopes: operators }
        backend b {
            pattern (nn.Conv2d, F.relu, nn.ReLU) { dtypes: d  pt2e: {match: source} }
        }
    """
    with pytest.raises(SpecError, match="nn.ReLU are one type to torchao"):
        quantizer(tmp_path, text)
    ok = quantizer(tmp_path, text.replace("F.relu, nn.ReLU", "nn.ReLU"))
    assert [len(p) for r in ok.rules for p in r.partitions] == [2]
