"""``semantics.compare``: the semantic difference of resolved backends, in spec terms."""

from __future__ import annotations

import textwrap

from generator.semantics import model as m
from generator.semantics.compare import Action, Change, Severity, compare
from generator.semantics.driver import analyze
from generator.semantics.facts import TorchFacts
from generator.sources import MemorySources

FACTS = TorchFacts()

COMMON = """
dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
dtypes fp16 = {input: float16, output: float, weight: float16, bias: float, dynamic: true}
constraint act = qint8 {scale_min: 2 ** -12, quant_min: -127, quant_max: 127}
dtypes sym = {input: act, output: act, weight: qint8, bias: float}
group linear(ds) {
    pattern nn.Linear { dtypes: ds  root: nn.Linear  reference: nnqr.Linear  qat: nnqat.Linear }
    for relu in [nn.ReLU, F.relu] {
        pattern (nn.Linear, relu) { dtypes: ds  fuser: sequential(nni.LinearReLU)  fused: nni.LinearReLU }
    }
}
"""
A = """
import "common.bcfg"
backend a {
    use linear([w8, fp16])
    pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }
    pattern torch.cat { observation: shared_observer  dtypes: w8 }
}
"""
B = """
import "common.bcfg"
backend b {
    use linear(fp16)
    pattern F.avg_pool2d { dtypes: sym }
}
"""


def resolve(**texts: str) -> list[m.Backend]:
    files = {"common.bcfg": COMMON, "a.bcfg": A, "b.bcfg": B}
    files.update({f"{k}.bcfg": textwrap.dedent(v) for k, v in texts.items()})
    names = sorted(n for n in files if n != "common.bcfg")
    return analyze(MemorySources(files), names, facts=FACTS).backends


def diff(**texts: str) -> list[Change]:
    return compare(resolve(), resolve(**texts), lambda p: FACTS.lookup(p).identity)


def rows(changes: list[Change]) -> list[tuple]:
    return [
        (c.backend, c.pattern, c.action.value, c.field, c.before, c.after, c.severity.value)
        for c in changes
    ]


def test_nothing_changed_is_an_empty_difference():
    assert diff() == []


def test_refactors_that_build_the_same_configs_are_no_change():
    refactored = """
    # A rename, a different layout, the configs written out instead of through a group.
    dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
    dtypes half = {input: float16, output: float, weight: float16, bias: float, dynamic: true}
    backend a {
        pattern nn.Linear {
            dtypes: [w8, half]
            root: torch.nn.Linear
            reference: nnqr.Linear
            qat: nnqat.Linear
        }
        pattern (nn.Linear, nn.ReLU) { dtypes: [w8, half]  fuser: sequential(nni.LinearReLU)  fused: nni.LinearReLU }
        pattern (nn.Linear, F.relu) { dtypes: [w8, half]  fuser: sequential(nni.LinearReLU)  fused: nni.LinearReLU }
        pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }
        pattern torch.cat { observation: shared_observer  dtypes: w8 }
    }
    """
    assert diff(a=refactored) == []


def test_two_paths_to_one_object_are_one_pattern():
    assert diff(b=B.replace("F.avg_pool2d", "torch._C._nn.avg_pool2d")) == []


def test_a_dtype_config_added_to_one_pattern():
    head = A + "\n"
    head = head.replace("pattern nn.Conv2d { dtypes: w8 ", "pattern nn.Conv2d { dtypes: [w8, sym] ")
    assert rows(diff(a=head)) == [
        ("a", "nn.Conv2d", "changed", "dtypes", None, "sym", "widening"),
    ]
    (change,) = diff(a=head)
    assert change.where is not None and change.where.file == "a.bcfg" and change.where.line == 5
    assert change.origin == "a.bcfg: pattern nn.Conv2d"


def test_a_shared_definition_change_lists_every_pattern_of_every_backend():
    common = COMMON.replace("weight: float16, bias: float,", "weight: float16, bias: float16,")
    changes = diff(common=common)
    assert {(c.backend, c.pattern) for c in changes} == {
        ("a", "nn.Linear"),
        ("a", "(nn.Linear, nn.ReLU)"),
        ("a", "(nn.Linear, F.relu)"),
        ("b", "nn.Linear"),
        ("b", "(nn.Linear, nn.ReLU)"),
        ("b", "(nn.Linear, F.relu)"),
    }
    assert {(c.field, c.before, c.after, c.severity) for c in changes} == {
        ("dtypes[fp16].bias", "float", "float16", Severity.NARROWING)
    }
    # Pointed at the definition that changed, not at the patterns.
    assert {(c.where.file, c.where.line) for c in changes if c.where} == {("common.bcfg", 3)}


def test_patterns_added_removed_and_moved():
    head = """
    import "common.bcfg"
    backend a {
        pattern torch.cat { observation: shared_observer  dtypes: w8 }
        use linear([w8, fp16])
        pattern F.relu { dtypes: w8 }
    }
    """
    removed = next(c for c in diff(a=head) if c.action == Action.REMOVED)
    assert removed.was is not None and (removed.was.file, removed.was.line) == ("a.bcfg", 5)
    assert removed.where is not None and removed.where.line == 3  # the backend, in the newer spec
    # Only the pattern that moved is reported, not the three it moved past.
    assert rows(diff(a=head)) == [
        ("a", "torch.cat", "moved", "position", "after nn.Conv2d", "first", "neutral"),
        ("a", "nn.Conv2d", "removed", None, None, None, "narrowing"),
        ("a", "F.relu", "added", None, None, None, "widening"),
    ]


def test_constraint_changes_are_classified():
    def change(new: str) -> list[tuple]:
        """Every part of every change (a change of one dtype config is one, with its parts)."""
        common = COMMON.replace("{scale_min: 2 ** -12, quant_min: -127, quant_max: 127}", new)
        return sorted(
            {
                (f"{c.field}.{p.field}", p.before, p.after, p.severity.value)
                for c in diff(common=common)
                for p in c.parts
            }
            | {
                (c.field, c.before, c.after, c.severity.value)
                for c in diff(common=common)
                if not c.parts
            }
        )

    narrower = change("{scale_min: 2 ** -10, quant_min: -127, quant_max: 100}")
    assert narrower == [
        ("dtypes[sym].input.quant_max", "127", "100", "narrowing"),
        ("dtypes[sym].input.scale_min", "2 ** -12", "2 ** -10", "narrowing"),
        ("dtypes[sym].output.quant_max", "127", "100", "narrowing"),
        ("dtypes[sym].output.scale_min", "2 ** -12", "2 ** -10", "narrowing"),
    ]
    wider = change("{quant_min: -128, quant_max: 127}")
    assert ("dtypes[sym].input.quant_min", "-127", "-128", "widening") in wider
    assert ("dtypes[sym].input.scale_min", "2 ** -12", None, "widening") in wider
    exact = change("{scale_min: 2 ** -12, quant_min: -127, quant_max: 127, zero_point: 0}")
    assert exact == [
        ("dtypes[sym].input.zero_point", None, "0", "narrowing"),
        ("dtypes[sym].output.zero_point", None, "0", "narrowing"),
    ]
    # One dtype config's change is one row per pattern, with its parts.
    grouped = diff(common=COMMON.replace("quant_max: 127}", "quant_max: 100, zero_point: 0}"))
    assert {(c.pattern, c.field, c.before, c.after, c.severity.value) for c in grouped} == {
        (
            "F.avg_pool2d",
            "dtypes[sym]",
            "input, output {quant_max: 127, zero_point: —}",
            "input, output {quant_max: 100, zero_point: 0}",
            "narrowing",
        )
    }
    assert [p.field for p in grouped[0].parts] == [
        "input.quant_max",
        "input.zero_point",
        "output.quant_max",
        "output.zero_point",
    ]
    # A part that widens and one that narrows: the row is narrowing, each part says its own.
    mixed = diff(
        common=COMMON.replace(
            "quant_min: -127, quant_max: 127}", "quant_min: -128, quant_max: 100}"
        )
    )
    assert [c.severity.value for c in mixed] == ["narrowing"]
    assert [(p.field, p.severity.value) for p in mixed[0].parts][:2] == [
        ("input.quant_min", "widening"),
        ("input.quant_max", "narrowing"),
    ]
    # All added: the row says what was added, as `+`.
    added = diff(
        common=COMMON.replace(
            "{scale_min: 2 ** -12, quant_min: -127, quant_max: 127}",
            "{scale_min: 2 ** -12, quant_min: -127, quant_max: 127, scale_max: 1.0, zero_point: 0}",
        )
    )
    assert [(c.before, c.after) for c in added] == [
        (None, "input, output {scale_max: 1.0, zero_point: 0}")
    ]
    changes = diff(common=COMMON.replace("quant_max: 127}", "quant_max: 100}"))
    # A constraint change points at the constraint.
    assert {(c.where.file, c.where.line) for c in changes if c.where} == {("common.bcfg", 4)}


def test_dtypes_removed_or_retyped_narrow():
    got = rows(diff(a=A.replace("use linear([w8, fp16])", "use linear(w8)")))
    assert ("a", "nn.Linear", "changed", "dtypes", "fp16", None, "narrowing") in got
    assert len(got) == 3
    c, *_ = diff(a=A.replace("use linear([w8, fp16])", "use linear(w8)"))
    assert c.where is not None and (c.where.file, c.where.line) == ("a.bcfg", 4)  # the use
    retyped = COMMON.replace(
        "dtypes w8 = {input: quint8, output: quint8, weight: qint8,",
        "dtypes w8 = {input: quint8, output: quint8, weight: quint8,",
    )
    assert (
        "a",
        "nn.Conv2d",
        "changed",
        "dtypes[w8].weight",
        "qint8",
        "quint8",
        "narrowing",
    ) in rows(diff(common=retyped))
    reordered = rows(diff(a=A.replace("use linear([w8, fp16])", "use linear([fp16, w8])")))
    assert (
        "a",
        "nn.Linear",
        "changed",
        "dtypes",
        "[w8, fp16]",
        "[fp16, w8]",
        "neutral",
    ) in reordered


def test_fields_set_unset_and_changed():
    head = A.replace(
        "pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }",
        "pattern nn.Conv2d { dtypes: w8  reference: nnqr.Conv2d  qat: nnqat.Conv2d }",
    ).replace("observation: shared_observer", "observation: not_observed")
    got = rows(diff(a=head))
    assert got == [
        ("a", "nn.Conv2d", "changed", "root", "nn.Conv2d", None, "narrowing"),
        ("a", "nn.Conv2d", "changed", "qat", None, "nnqat.Conv2d", "widening"),
        ("a", "torch.cat", "changed", "observation", "shared_observer", "not_observed", "neutral"),
    ]


def test_backends_added_removed_and_renamed():
    base = resolve()
    head = [b for b in resolve(b=B.replace("backend b {", 'backend b "b-2" {')) if b.module == "b"]
    c = resolve(c="backend c { pattern nn.ReLU {} }")
    got = rows(compare(base, head + [x for x in c if x.module == "c"]))
    assert got == [
        ("a", None, "removed", None, "5 pattern configs", None, "narrowing"),
        ("b", None, "changed", "name", "b", "b-2", "neutral"),
        ("c", None, "added", None, None, "1 pattern config", "widening"),
    ]


def test_fuse_definitions_compare_by_what_they_do():
    spec = """
    fuse {name}({p}, relu) = nni.LinearReLU({p}, relu)
    backend f {{
        pattern (nn.Linear, nn.ReLU) {{ fuser: {name}  fused: nni.LinearReLU }}
    }}
    """
    base = resolve(f=spec.format(name="lr", p="linear"))
    renamed = resolve(f=spec.format(name="fuse_it", p="lin"))
    assert compare(base, renamed) == []
    other = resolve(
        f=spec.replace("nni.LinearReLU({p}, relu)", "nni.LinearReLU(relu, {p})").format(
            name="lr", p="linear"
        )
    )
    (c,) = compare(base, other)
    assert c.field == "fuser" and c.severity == Severity.NEUTRAL
    assert c.before == "fuse lr(linear, relu) = nni.LinearReLU(linear, relu)"
    assert c.after == "fuse lr(linear, relu) = nni.LinearReLU(relu, linear)"


def test_many_moves_are_found_in_order():
    names = [
        f"nn.{n}" for n in ("ReLU", "ReLU6", "ELU", "GELU", "SiLU", "Tanh", "Sigmoid", "Hardtanh")
    ]

    def spec(order: list[str]) -> str:
        return "backend m {\n" + "".join(f"    pattern {n} {{}}\n" for n in order) + "}\n"

    order = names[:]
    order.insert(6, order.pop(1))  # ReLU6 moves down past five others
    changes = compare(resolve(m=spec(names)), resolve(m=spec(order)))
    assert [(c.pattern, c.action, c.before, c.after) for c in changes if c.backend == "m"] == [
        ("nn.ReLU6", Action.MOVED, "after nn.ReLU", "after nn.Sigmoid")
    ]


# ---------------------------------------------------------------- PT2E


def quantized(text: str) -> tuple[list[m.Backend], list[m.Quantizer]]:
    analysis = analyze(MemorySources({"q.bcfg": textwrap.dedent(text)}), ["q.bcfg"], facts=FACTS)
    return analysis.backends + analysis.pt2e_only, analysis.quantizers  # as bcfg diff compares


Q = """
dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
quantizer q { transform: scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor) }
backend q {
    pattern nn.Linear { dtypes: w8 }
    pattern nn.ReLU { observation: shared_observer  dtypes: w8  pt2e: {aten: aten.relu.default} }
    pattern torch.cat { observation: shared_observer  dtypes: w8  pt2e: {match: source, eager: true} }
}
"""


def pt2e_diff(after: str, before: str = Q) -> list[tuple]:
    (a, qa), (b, qb) = quantized(before), quantized(after)
    return rows(compare(a, b, lambda p: FACTS.lookup(p).identity, (qa, qb)))


def test_pt2e_field_changes_are_said_in_spec_words():
    after = Q.replace("{aten: aten.relu.default}", "{aten: []}").replace(
        "{match: source, eager: true}", "{eager: true}"
    )
    assert pt2e_diff(after) == [
        ("q", "nn.ReLU", "changed", "pt2e", "{aten: aten.relu.default}", "{aten: []}", "narrowing"),
        (
            "q",
            "torch.cat",
            "changed",
            "pt2e",
            "{match: source, eager: true}",
            "{eager: true}",
            "neutral",
        ),
    ]
    # and back: a pattern the quantizer left out comes back
    assert pt2e_diff(Q, before=after)[0][-1] == "widening"


def test_pt2e_field_written_as_its_defaults_is_no_change():
    assert (
        pt2e_diff(
            Q.replace(
                "pattern nn.Linear { dtypes: w8 }", "pattern nn.Linear { dtypes: w8  pt2e: {} }"
            )
        )
        == []
    )


def test_quantizer_transforms_asked_for_and_dropped():
    fewer = Q.replace("aten.add.Tensor, aten.mul.Tensor", "aten.add.Tensor")
    assert pt2e_diff(fewer) == [
        (
            "q",
            None,
            "changed",
            "PT2E quantizer transform",
            "scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor)",
            "scalars_to_tensors(aten.add.Tensor)",
            "neutral",
        )
    ]
    dropped = Q.replace(
        "quantizer q { transform: scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor) }", ""
    )
    assert pt2e_diff(dropped) == [
        ("q", None, "changed", "PT2E quantizer", "3 rules", None, "narrowing")
    ]
    assert pt2e_diff(Q, before=dropped) == [
        ("q", None, "changed", "PT2E quantizer", None, "3 rules", "widening")
    ]


def test_a_fusion_whose_fused_module_loses_its_config_is_narrowed():
    """FX still fuses conv + relu, then finds no config for ConvReLU2d: the fusion pattern says so."""
    base = """
    dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
    backend f {
        pattern (nn.Conv2d, nn.ReLU) { dtypes: w8  fuser: sequential(nni.ConvReLU2d)  fused: nni.ConvReLU2d }
        pattern nni.ConvReLU2d { dtypes: w8  root: nn.Conv2d }
    }
    """
    head = base.replace("        pattern nni.ConvReLU2d { dtypes: w8  root: nn.Conv2d }\n", "")
    (a, _), (b, _) = quantized(base), quantized(head)
    changes = compare(a, b, lambda p: FACTS.lookup(p).identity)
    assert rows(changes) == [
        (
            "f",
            "(nn.Conv2d, nn.ReLU)",
            "changed",
            "fused",
            "nni.ConvReLU2d",
            "nni.ConvReLU2d, no pattern config left: never quantized",
            "narrowing",
        ),
        ("f", "nni.ConvReLU2d", "removed", None, None, None, "narrowing"),
    ]
    assert changes[0].where is not None and changes[0].where.line == 4


def test_quantizer_outputs_changed():
    consumers = Q.replace("aten.mul.Tensor) }", "aten.mul.Tensor)  outputs: consumers }")
    assert pt2e_diff(consumers) == [
        ("q", None, "changed", "PT2E quantizer outputs", "patterns", "consumers", "narrowing")
    ]
    assert pt2e_diff(Q, before=consumers)[0][-1] == "widening"
    # written as the default, it is no change
    assert pt2e_diff(consumers.replace("consumers", "patterns")) == []


def test_reused_weight_changes_are_shown():
    """On a pattern (and the PT2E settings bcfg diff spells: weight_axis, any_float too), and on
    the quantizer, where decline quantizes less."""
    linear = "pattern nn.Linear { dtypes: w8 }"
    declined = Q.replace(linear, "pattern nn.Linear { dtypes: w8  pt2e: {reused_weight: decline} }")
    assert pt2e_diff(declined) == [
        ("q", "nn.Linear", "changed", "pt2e", None, "{reused_weight: decline}", "narrowing")
    ]
    assert pt2e_diff(Q, before=declined)[0][-1] == "widening"
    both = Q.replace(
        linear, "pattern nn.Linear { dtypes: w8  pt2e: {weight_axis: 1, any_float: true} }"
    )
    assert pt2e_diff(both) == [
        ("q", "nn.Linear", "changed", "pt2e", None, "{weight_axis: 1, any_float: true}", "widening")
    ]
    quantizer = Q.replace("aten.mul.Tensor) }", "aten.mul.Tensor)  reused_weight: decline }")
    assert pt2e_diff(quantizer) == [
        ("q", None, "changed", "PT2E quantizer reused_weight", "match", "decline", "narrowing")
    ]
    assert pt2e_diff(Q, before=quantizer)[0][-1] == "widening"


# The order a PT2E quantizer tries its rules (quantizers.tried_order): chains longest first,
# an eager shared op (or an annotate hook) in its place, chains sorted only between them.
ORDERED = """
dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
quantizer o {}
backend o {
    pattern (nn.Conv2d, nn.ReLU) { dtypes: w8  fuser: sequential(nni.ConvReLU2d)  fused: nni.ConvReLU2d }
    pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }
    pattern nn.MaxPool2d { observation: shared_observer  dtypes: w8  pt2e: {eager: true} }
    pattern nni.ConvReLU2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }
    pattern nn.Linear { dtypes: w8  root: nn.Linear  reference: nnqr.Linear }
}
"""
FUSION = "    pattern (nn.Conv2d, nn.ReLU) { dtypes: w8  fuser: sequential(nni.ConvReLU2d)  fused: nni.ConvReLU2d }\n"
CONV = "    pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }\n"
POOL = (
    "    pattern nn.MaxPool2d { observation: shared_observer  dtypes: w8  pt2e: {eager: true} }\n"
)
LINEAR = "    pattern nn.Linear { dtypes: w8  root: nn.Linear  reference: nnqr.Linear }\n"


def test_a_move_that_leaves_the_tried_order_as_it_was_is_neutral():
    """nn.Conv2d before its fusion: the quantizer still tries the longer chain first (as FX does)."""
    moved = ORDERED.replace(FUSION + CONV, CONV + FUSION)
    assert pt2e_diff(moved, before=ORDERED) == [
        ("o", "(nn.Conv2d, nn.ReLU)", "moved", "position", "first", "after nn.Conv2d", "neutral")
    ]
    # A chain that shares no op with those it passes, across the eager op: nothing competes.
    moved = ORDERED.replace(POOL, "").replace(LINEAR, LINEAR + POOL)
    assert [r[-1] for r in pt2e_diff(moved, before=ORDERED)] == ["neutral"]


def test_a_move_that_changes_which_rule_claims_a_node_is_narrowing():
    """The fusion moved past the eager max pool: nn.Conv2d, now tried before it, claims every conv,
    so conv + relu is never fused; and back, fused again: both change what models get."""
    moved = ORDERED.replace(FUSION, "").replace(POOL, POOL + FUSION)
    order = ("tried before nn.Conv2d", "tried after nn.Conv2d")
    assert pt2e_diff(moved, before=ORDERED) == [
        (
            "o",
            "(nn.Conv2d, nn.ReLU)",
            "moved",
            "position",
            "first",
            "after nn.MaxPool2d",
            "narrowing",
        ),
        ("o", "(nn.Conv2d, nn.ReLU)", "changed", "PT2E order", *order, "narrowing"),
    ]
    back = pt2e_diff(ORDERED, before=moved)
    assert back[-1] == (
        "o",
        "(nn.Conv2d, nn.ReLU)",
        "changed",
        "PT2E order",
        *order[::-1],
        "narrowing",
    )
    assert {r[-1] for r in back} == {"narrowing"}
    # FX alone sorts its patterns itself: without a quantizer the same move is neutral.
    no_quantizer = [s.replace("quantizer o {}\n", "") for s in (ORDERED, moved)]
    assert [r[-1] for r in pt2e_diff(no_quantizer[1], before=no_quantizer[0])] == ["neutral"]


def test_executorch_settings_changes_are_shown():
    """operator_types, qat_config and scope on a pattern; operator_type on the quantizer."""
    linear = "pattern nn.Linear { dtypes: w8 }"
    quantizer = Q.replace("aten.mul.Tensor) }", "aten.mul.Tensor)  operator_type: patterns }")
    assert pt2e_diff(quantizer) == [
        ("q", None, "changed", "PT2E quantizer operator_type", "nodes", "patterns", "narrowing")
    ]
    keys = "pt2e: {operator_types: [aten.mm.default], qat_config: required, scope: first_op}"
    changed = quantizer.replace(linear, "pattern nn.Linear { dtypes: w8  " + keys + " }")
    assert pt2e_diff(changed, before=quantizer) == [
        (
            "q",
            "nn.Linear",
            "changed",
            "pt2e",
            None,
            "{operator_types: [aten.mm.default], qat_config: required, scope: first_op}",
            "narrowing",
        )
    ]


def test_pt2e_keys_that_quantize_fewer_nodes_are_narrowing():
    """Issue 35, class 9: each key change that makes fewer nodes quantized grades narrowing
    (from the key table's grade column), the reverse widening, and JSON counts it."""
    import json

    from generator.tools.diff_report import Labels, as_json

    linear = "pattern nn.Linear { dtypes: w8 }"
    cases = {
        "pt2e: {skip: large_scalar}": linear,
        "pt2e: {qat_config: required}": linear,
        "pt2e: {qat_config: required_if_dynamic}": linear,
        "pt2e: {reused_weight: decline}": linear,
        "pt2e: {weight_qscheme: per_channel}": linear,
        "pt2e: {activation_qscheme: symmetric}": linear,
    }
    for keys, pattern in cases.items():
        after = Q.replace(pattern, pattern.replace("}", f" {keys} }}"))
        assert pt2e_diff(after)[0][-1] == "narrowing", keys
        assert pt2e_diff(Q, before=after)[0][-1] == "widening", keys
    eager = Q.replace("{match: source, eager: true}", "{eager: true}")
    dropped = Q.replace("  pt2e: {match: source, eager: true}", "")
    assert pt2e_diff(dropped, before=eager)[-1][-1] == "narrowing"  # cat: no longer in order
    after = Q.replace(linear, "pattern nn.Linear { dtypes: w8  pt2e: {skip: large_scalar} }")
    (a, qa), (b, qb) = quantized(Q), quantized(after)
    changes = compare(a, b, lambda p: FACTS.lookup(p).identity, (qa, qb))
    data = json.loads(as_json(changes, Labels("base", "head")))
    assert data["summary"]["narrowing"] == 1
    # optional -> required narrows; required -> required_if_dynamic widens back part way
    required = Q.replace(linear, "pattern nn.Linear { dtypes: w8  pt2e: {qat_config: required} }")
    partly = required.replace("qat_config: required", "qat_config: required_if_dynamic")
    assert pt2e_diff(partly, before=required)[0][-1] == "widening"


def test_the_fx_side_dropped_or_given_back_is_a_change():
    """fx: false leaves the backend without a BackendConfig (no generated/<backend>.py for FX
    users to import): narrowing. Giving it back widens."""
    pt2e_only = Q.replace("quantizer q { transform:", "quantizer q { fx: false  transform:")
    fx_dropped = ("q", None, "changed", "FX BackendConfig", "3 pattern configs", "none (fx: false)")
    assert pt2e_diff(pt2e_only) == [(*fx_dropped, "narrowing")]
    fx_back = ("q", None, "changed", "FX BackendConfig", "none (fx: false)", "3 pattern configs")
    assert pt2e_diff(Q, before=pt2e_only) == [(*fx_back, "widening")]
    # A PT2E-only quantizer given to an FX-only backend: a PT2E side gained, the FX side lost.
    fx_only = Q.replace(
        "quantizer q { transform: scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor) }", ""
    )
    assert pt2e_diff(pt2e_only, before=fx_only) == [
        (*fx_dropped, "narrowing"),
        ("q", None, "changed", "PT2E quantizer", None, "3 rules", "widening"),
    ]
    # and the quantizer dropped: the backend is FX's again
    assert pt2e_diff(fx_only, before=pt2e_only) == [
        (*fx_back, "widening"),
        ("q", None, "changed", "PT2E quantizer", "3 rules", None, "narrowing"),
    ]
    (a, qa), (b, qb) = quantized(Q), quantized(pt2e_only)
    changes = compare(a, b, None, (qa, qb))
    assert changes[0].where is not None and changes[0].where.line == 3  # the quantizer


def test_a_backend_added_with_a_quantizer_names_its_classes():
    """Issue 53.10: "backend added" said its patterns only; with a PT2E quantizer it names
    the classes a user imports (the generated one and those of classes:), and PT2E only."""
    spec = """
    dtypes w8 = {input: qint8, output: qint8, weight: qint8, bias: float}
    quantizer n {
        fx: false  scopes: composable
        classes: [{name: NpuQuantizer, params: {config: none}, stages: [{config: config}]}]
    }
    backend n { pattern aten.linear.default { dtypes: w8 } }
    """
    empty = ([], [])
    b, qb = quantized(spec)
    added = rows(compare(empty[0], b, lambda p: FACTS.lookup(p).identity, (empty[1], qb)))
    assert added == [
        (
            "n",
            None,
            "added",
            None,
            None,
            "1 pattern config; PT2E quantizer NQuantizer, NpuQuantizer (PT2E only)",
            "widening",
        )
    ]
    removed = rows(compare(b, empty[0], lambda p: FACTS.lookup(p).identity, (qb, empty[1])))
    assert removed[0][4] == "1 pattern config; PT2E quantizer NQuantizer, NpuQuantizer (PT2E only)"


def test_shared_observer_to_different_observer_narrows_under_pt2e():
    """Issue 53.10: under PT2E, shared_observer -> different_observer gives the op's output
    the config's own spec instead of its input's (numerics change; one without dtypes is no
    longer quantized): narrowing, where it was graded neutral. A backend without a PT2E
    quantizer keeps neutral (FX observes the output either way)."""
    relu = "pattern nn.ReLU { observation: shared_observer  dtypes: w8  pt2e: {aten: aten.relu.default} }"
    own = relu.replace("shared_observer", "different_observer")
    assert pt2e_diff(Q.replace(relu, own)) == [
        (
            "q",
            "nn.ReLU",
            "changed",
            "observation",
            "shared_observer",
            "different_observer",
            "narrowing",
        )
    ]
    fx_only = Q.replace(
        "quantizer q { transform: scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor) }", ""
    )
    assert [r[-1] for r in pt2e_diff(fx_only.replace(relu, own), before=fx_only)] == ["neutral"]
