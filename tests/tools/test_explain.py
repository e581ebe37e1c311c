"""``bcfg explain``: every value of a pattern config with where it came from; errors say what is close."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from generator.cli import main
from generator.lang.vocabulary import FMT_FIELD_ORDER
from tests.support import REPO


@pytest.fixture
def repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("NO_COLOR", "1")


def explain(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["explain", *args])
    out, err = capsys.readouterr()
    return code, out, err


def line_of(file: str, line: int) -> str:
    return (REPO / file).read_text(encoding="utf-8").splitlines()[line - 1]


def where(text: str, label: str) -> tuple[str, int]:
    """The ``file:line`` on the output line that starts with ``label``."""
    row = next(r for r in text.splitlines() if r.strip().startswith(label))
    file, line = re.search(r"(specs/\w+\.bcfg):(\d+)", row).groups()
    return file, int(line)


def test_a_pattern_config_field_by_field_with_its_chain_and_definitions(repo, capsys):
    code, out, _ = explain(capsys, "onednn", "(nn.Linear, nn.LeakyReLU)")
    assert code == 0
    assert out.startswith("onednn: pattern (nn.Linear, nn.LeakyReLU) (fused), config 88 of 221\n")
    assert "pattern (nn.Linear, post)" in line_of(*where(out, "written at"))
    use = next(r for r in out.splitlines() if "use linear_eltwise(" in r)
    assert "use linear_eltwise(ds=onednn_linear, post_module=nn.LeakyReLU" in use
    file, line = re.search(r"(specs/\w+\.bcfg):(\d+):\d+", use).groups()
    assert "use linear_eltwise(onednn_linear, nn.LeakyReLU" in line_of(file, int(line))
    group = re.search(r"\(group at (specs/\w+\.bcfg):(\d+)\)", use).groups()
    assert line_of(group[0], int(group[1])).startswith("group linear_eltwise(")
    assert "for post = nn.LeakyReLU" in out
    assert "dtypes: ds" in line_of(*where(out, "dtypes"))
    assert "fuser: sequential(fused)" in line_of(*where(out, "fuser"))
    assert re.search(r"observation +\(default\) +different_observer", out)
    assert "quint8 → quint8, w qint8, b float  (weighted_int8)" in out
    assert "dynamic quint8 → float, w qint8, b float  (dynamic_int8)" in out
    assert (
        "not set: root, reference, qat, root_node, extra_inputs, num_tensor_args, input_index"
        in out
    )
    for name, decl in [
        ("dtypes onednn_linear", "dtypes onednn_linear ="),
        ("dtypes weighted_int8", "dtypes weighted_int8 ="),
        ("dtypes dynamic_int8", "dtypes dynamic_int8 ="),
    ]:
        assert line_of(*where(out, name)).startswith(decl)
        assert "via use linear_eltwise at specs/onednn.bcfg:" in next(
            r for r in out.splitlines() if r.strip().startswith(name)
        )


def test_json_has_every_field_and_locations(repo, capsys):
    code, out, _ = explain(capsys, "native", "nn.Sigmoid", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["backend"], data["pattern"], data["kind"]) == ("native", "nn.Sigmoid", "module")
    # every pattern field, as specs order them (pt2e, which only PT2E quantizers read, is None here)
    assert [f["field"] for f in data["fields"]] == list(FMT_FIELD_ORDER)
    assert next(f for f in data["fields"] if f["field"] == "pt2e")["value"] is None
    dtypes = next(f for f in data["fields"] if f["field"] == "dtypes")
    assert dtypes["dtype_configs"] == [
        {
            "text": "quint8[0..255, scale 1/256, zp 0] → quint8[0..255, scale 1/256, zp 0]",
            "name": "default_quint8_range_0_to_1",
        }
    ]
    assert "constrain(ds, range_0_to_1)" in line_of(dtypes["at"]["file"], dtypes["at"]["line"])
    assert {(d["kind"], d["name"]) for d in data["definitions"]} == {
        ("constraint", "range_0_to_1"),
        ("dtypes", "default_quint8"),
    }
    assert [s["kind"] for s in data["chain"]] == ["use", "for"]
    assert data["replaced"] is None


def test_the_pt2e_field_is_explained_where_a_spec_sets_it(repo, capsys):
    code, out, _ = explain(capsys, "xnnpack", "nn.ReLU")
    assert code == 0
    row = next(line for line in out.splitlines() if line.lstrip().startswith("pt2e"))
    assert row.split()[2:] == ["{aten:", "aten.relu.default}"]
    file, line = row.split()[1].rsplit(":", 2)[:2]
    assert "pt2e: {aten: aten.relu.default}" in line_of(file, int(line))
    # not said as "not set" where no spec sets it: only quantizers read it
    code, out, _ = explain(capsys, "native", "nn.Sigmoid")
    assert "pt2e" not in out


def test_without_a_pattern_every_config_in_order(repo, capsys):
    code, out, _ = explain(capsys, "x86")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "x86 (specs/x86.bcfg): 192 pattern configs, in order"
    assert len(lines) == 193
    assert re.match(
        r"\s+1  nn\.Conv1d +specs/common\.bcfg:\d+:5 +use conv\(ds=weighted_int8\) › for n = 1 › ",
        lines[1],
    )
    data = json.loads(explain(capsys, "x86", "--format", "json")[1])
    assert [p["index"] for p in data["patterns"]] == list(range(1, 193))


@pytest.mark.parametrize(
    "query",
    ["(nn.Conv2d, nn.ReLU)", "(nn.Conv2d,nn.ReLU)", "(torch.nn.Conv2d, torch.nn.ReLU)", "#23"],
)
def test_ways_of_writing_a_pattern(repo, capsys, query):
    code, out, _ = explain(capsys, "x86", query)
    assert code == 0 and out.startswith("x86: pattern (nn.Conv2d, nn.ReLU) (fused), config 23 of")


def test_methods_and_complex_patterns(repo, capsys):
    for query in ('"relu_"', "'relu_'", "relu_"):
        assert explain(capsys, "x86", query)[1].startswith('x86: pattern "relu_" (method)')
    full = "complex (operator.add, nn.Conv2d, MatchAllNode)"
    for query in (full, full.removeprefix("complex ")):
        code, out, _ = explain(capsys, "onednn", query)
        assert code == 0 and out.startswith(f"onednn: pattern {full} (fused)")
    assert "root_node" in out and "pattern[1]" in out and "fuse conv_add_left" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["onedn"],
            "no backend 'onedn': did you mean 'onednn'? backends are arm_inductor, arm_tosa, cadence,",
        ),
        (
            ["x86", "(nn.Linear, nn.LeakyReLU)"],
            "backend 'x86' has no pattern (nn.Linear, nn.LeakyReLU) (onednn, arm_inductor and "
            "x86_inductor have it); did you mean (nn.Linear, nn.ReLU)",
        ),
        (
            ["qnnpack_pt2e", "nn.Conv2d"],
            "(executorch, fbgemm, native, onednn, qnnpack, tensorrt, x86, xnnpack, arm_inductor, "
            "x86_inductor and xnnpack_executorch have it)",
        ),
        (["x86", "nn.Conv2dd"], "backend 'x86' has no pattern nn.Conv2dd; did you mean nn.Conv2d"),
        (["x86", "#0"], "x86 has 192 pattern configs; #0 is not one of them"),
        # Digits of other scripts are no config number: '#١' (Arabic-Indic one) is not '#1'.
        (["x86", "#\u0661"], "backend 'x86' has no pattern #\u0661"),
        (["x86", "#\uff11"], "backend 'x86' has no pattern #\uff11"),
    ],
)
def test_unknown_names_exit_2_with_suggestions(repo, capsys, args, message):
    code, out, err = explain(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("bcfg explain: ") and message in err
    assert len(err.splitlines()) == 1


def test_an_override_says_what_it_replaced(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent("""\
            dtypes d = {input: quint8, output: quint8}
            group g(ds) { pattern nn.ReLU { dtypes: ds } }
            backend b {
                use g(d)
                override pattern nn.ReLU {
                    observation: shared_observer
                    dtypes: d
                }
            }
            """))
    monkeypatch.chdir(tmp_path)
    code, out, _ = explain(capsys, "b", "nn.ReLU")
    assert code == 0
    assert "written at specs/b.bcfg:5:5" in out
    assert "replaces the config written at specs/b.bcfg:2:15" in out
    assert re.search(r"specs/b\.bcfg:4:5 +use g\(ds=d\)  \(group at specs/b\.bcfg:2\)", out)
    assert re.search(r"observation +specs/b\.bcfg:6:9 +shared_observer", out)
    assert re.search(r"dtypes d +specs/b\.bcfg:1 +via a field", out)
    listing = explain(capsys, "b")[1]
    assert "replaces specs/b.bcfg:2:15" in listing


def test_a_pt2e_only_target_is_explained_and_said_to_be_one(repo, capsys, every_backend):
    """x86_inductor (fx: false) has no BackendConfig; explain lists and explains its patterns
    as it does FX's, says it is PT2E only, and shows its pt2e options as the spec writes them."""
    x86 = every_backend["x86_inductor"]
    code, out, _ = explain(capsys, "x86_inductor")
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [
        f"x86_inductor (specs/x86_inductor.bcfg): {len(x86.configs)} pattern configs, in order",
        "  PT2E only: get_x86_inductor_quantizer() quantizes with these patterns; no BackendConfig",
    ]
    assert len(lines) == 2 + len(x86.configs)
    code, out, _ = explain(capsys, "x86_inductor", "torch.flatten")
    assert code == 0 and out.splitlines()[1].startswith("  PT2E only: get_x86_inductor_quantizer()")
    row = next(line for line in out.splitlines() if line.lstrip().startswith("pt2e"))
    assert row.endswith(
        "{aten: aten.flatten.using_ints, when: [user_quantizable, input_quantized]}"
    )
    file, line = row.split()[1].rsplit(":", 2)[:2]
    assert "when: [user_quantizable, input_quantized]" in line_of(file, int(line))
    # other:, opt_in: too, each where the spec writes it
    out = explain(capsys, "x86_inductor", "(nn.Linear, operator.add)")[1]
    assert "{match: source, other: float}" in out
    out = explain(capsys, "x86_inductor", "torch.matmul")[1]
    assert "{aten: aten.matmul.default, opt_in: true}" in out
    data = json.loads(explain(capsys, "arm_inductor", "nn.Conv2d", "--format", "json")[1])
    assert (data["pt2e_only"], data["quantizer"]) == (True, "get_arm_inductor_quantizer()")
    data = json.loads(explain(capsys, "x86", "--format", "json")[1])
    assert (data["pt2e_only"], data["quantizer"]) == (False, None)
    # A misspelt name suggests it, and the list of backends has the PT2E-only targets.
    code, _, err = explain(capsys, "x86_indutor")
    assert code == 2 and "did you mean 'x86_inductor'?" in err
    assert "arm_inductor," in err and "xnnpack_executorch" in err


@pytest.mark.parametrize(
    ("target", "pattern", "pt2e"),
    [
        ("cadence", "aten.add.Tensor", "{when: specs.hooks.cadence.tensor_add, inputs: [0, 1]}"),
        (
            "cortex_m",
            "aten.add.Tensor",
            "{when: specs.hooks.cortex_m.same_shape_or_channel_broadcast}",
        ),
        ("arm_tosa", "aten.to.dtype", "{when: specs.hooks.arm.supported_cast}"),
    ],
)
def test_the_composable_targets_are_explained_with_their_pt2e_keys(
    repo, capsys, every_backend, target, pattern, pt2e
):
    """arm_tosa, cortex_m and cadence (scopes: composable and pairs): listed, and a pattern's pt2e
    field explained where the spec sets it (cortex_m: the group field its options fill)."""
    code, out, _ = explain(capsys, target)
    assert code == 0
    assert out.startswith(
        f"{target} (specs/{target}.bcfg): {len(every_backend[target].configs)} pattern configs"
    )
    code, out, _ = explain(capsys, target, pattern, "--format", "json")
    assert code == 0
    fields = {f["field"]: f for f in json.loads(out)["fields"]}
    assert fields["pt2e"]["value"] == pt2e
    file, line = fields["pt2e"]["at"]["file"], fields["pt2e"]["at"]["line"]
    assert file == f"specs/{target}.bcfg" and "pt2e:" in line_of(file, line)


def test_a_pattern_written_per_given_value_is_chosen_by_number(repo, capsys):
    """cortex_m's conv2d is two configs (given: {use_explicit_layout: false} and true): the
    name matches both and explain says their numbers; a number explains one."""
    code, _, err = explain(capsys, "cortex_m", "aten.conv2d.default")
    found = re.findall(r"#([0-9]+) aten\.conv2d\.default", err)
    assert code == 2 and len(found) == 2 and "or its number" in err, err
    code, out, _ = explain(capsys, "cortex_m", f"#{found[1]}", "--format", "json")
    fields = {f["field"]: f for f in json.loads(out)["fields"]}
    assert code == 0 and "given: {use_explicit_layout: true}" in fields["pt2e"]["value"]
