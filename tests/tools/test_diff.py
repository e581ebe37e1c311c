"""``bcfg diff``: revisions of a git repository, live getters, formats, exit codes and bad input."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli import main
from tests.support import REPO

CONV2D_SYMMETRIC = """    override pattern nn.Conv2d {
        dtypes: [weighted_int8, weighted_qint8_symmetric]
        root: nn.Conv2d
        reference: nnqr.Conv2d
        qat: nnqat.Conv2d
    }
}
"""


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_COMMITTER_EMAIL": "t@t"}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
    out = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


@pytest.fixture
def repo(project_copy, monkeypatch):
    """A git repository holding a copy of the project, one commit, as the working directory."""
    git(project_copy, "init", "-q")
    commit(project_copy, "project")
    monkeypatch.chdir(project_copy)
    monkeypatch.setenv("NO_COLOR", "1")
    return project_copy


def edit(path: Path, change) -> None:
    path.write_text(change(path.read_text()))


def add_conv2d_symmetric(root: Path) -> None:
    edit(root / "specs" / "x86.bcfg", lambda t: t.rstrip()[:-1] + CONV2D_SYMMETRIC)


def bcfg(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_comments_layout_and_renames_are_no_semantic_change(repo, capsys):
    def refactor(text: str) -> str:
        text = "# a new first comment\n\n" + text.replace("weighted_int8", "w8_weighted")
        return text.replace("    ", "\t")

    for spec in (repo / "specs").glob("*.bcfg"):
        edit(spec, refactor)
    code, out, err = bcfg(capsys, "--exit-code")
    assert (code, err) == (0, "")
    assert re.fullmatch(
        r"bcfg diff: HEAD \([0-9a-f]{7}\) → the working tree: no semantic change\n", out
    )
    code, out, _ = bcfg(capsys, "--format", "json", "--exit-code")
    assert code == 0 and json.loads(out)["changes"] == []


def test_the_x86_conv2d_change_in_every_format(repo, capsys):
    add_conv2d_symmetric(repo)
    code, out, _ = bcfg(capsys, "--exit-code")
    assert code == 1
    assert "x86\n  ~ dtypes: + weighted_qint8_symmetric  widening\n      in nn.Conv2d\n" in out
    # written in the backend itself: where it is says it all (json keeps the origin)
    assert "      at specs/x86.bcfg:18\n\n1 backend changed" in out
    assert out.rstrip().endswith(
        "1 backend changed: 0 patterns added, 0 removed, 1 changed, 0 moved; no narrowing"
    )

    code, out, _ = bcfg(capsys, "--format", "json")
    assert code == 0  # without --exit-code a difference is a success
    assert json.loads(out)["changes"] == [
        {
            "backend": "x86",
            "pattern": "nn.Conv2d",
            "change": "changed",
            "field": "dtypes",
            "before": None,
            "after": "weighted_qint8_symmetric",
            "severity": "widening",
            "where": "specs/x86.bcfg:18:9",
            "was": None,
            "origin": "specs/x86.bcfg: override pattern nn.Conv2d",
            "parts": [],
        }
    ]

    _, out, _ = bcfg(capsys, "--format", "markdown")
    assert out.startswith("<!-- bcfg-diff -->\n### bcfg diff: HEAD (")
    assert "**1 backend changed: 0 patterns added, 0 removed, 1 changed, 0 moved**" in out
    assert (
        "#### x86" in out
        and "| change | patterns | field | before | after | severity | spec |" in out
    )
    assert (
        "| ✏️ changed | `nn.Conv2d` | `dtypes` | — | + `weighted_qint8_symmetric` | widening | specs/x86.bcfg:18 |"
        in out
    )
    # written in the backend itself: the spec column says where, no details to fold
    assert "<details>" not in out

    _, out, _ = bcfg(capsys, "--format", "github")
    assert out.splitlines()[0] == (
        "::notice file=specs/x86.bcfg,line=18,title=bcfg diff%3A widening::"
        "x86 nn.Conv2d: dtypes: + weighted_qint8_symmetric"
    )


def test_a_shared_definition_change_and_a_removal_across_revisions(repo, capsys):
    edit(
        repo / "specs" / "common.bcfg",
        lambda t: t.replace(
            "input: float16, output: float, weight: float16, bias: float, dynamic: true",
            "input: float16, output: float, weight: float16, bias: float16, dynamic: true",
        ),
    )
    edit(repo / "specs" / "fbgemm.bcfg", lambda t: t.replace("    use cat(default_quint8)\n", ""))
    commit(repo, "narrow")
    code, out, _ = bcfg(capsys, "HEAD~1", "HEAD", "--format", "json", "--exit-code")
    assert code == 1
    data = json.loads(out)
    changes = data["changes"]
    fp16 = {
        (c["backend"], c["pattern"]) for c in changes if c["field"] == "dtypes[dynamic_fp16].bias"
    }
    # Every pattern of every backend that uses the definition, and only those.
    assert {b for b, _ in fp16} == {"native", "fbgemm", "qnnpack", "x86", "executorch"}
    assert len([p for b, p in fp16 if b == "x86"]) == 17
    assert all(c["severity"] == "narrowing" for c in changes)
    assert {"backend": "fbgemm", "pattern": "torch.cat", "change": "removed"}.items() <= next(
        c for c in changes if c["change"] == "removed"
    ).items()
    assert data["summary"]["removed"] == 1 and data["base"].startswith("HEAD~1 (")

    _, md, _ = bcfg(capsys, "HEAD~1", "HEAD", "--format", "markdown")
    narrowed = len({(c["backend"], c["pattern"]) for c in changes})
    assert narrowed == data["summary"]["narrowing"] == 4 * 17 + 3 + 1
    assert md.count("#### ") == 5 and f"· ⚠️ **narrows {narrowed} patterns**" in md
    assert "all listed below" in md  # 17 patterns: the table names 4, the details all
    assert "| ➖ removed | `torch.cat` | — | — | — | ⚠️ narrowing | was specs/common.bcfg:" in md
    assert len(md) < 65536
    _, gh, _ = bcfg(capsys, "HEAD~1", "HEAD", "--format", "github")
    first = gh.splitlines()[0]
    assert first.startswith(
        "::warning file=specs/common.bcfg,line=13,title=bcfg diff%3A narrowing::"
    )
    assert "x86 (17)" in first


def test_pt2e_quantizers_changes_are_said_too(repo, capsys):
    """The xnnpack spec's quantizer: its transforms, a pattern's pt2e field, and the quantizer itself."""
    spec = repo / "specs" / "xnnpack.bcfg"
    edit(
        spec,
        lambda t: t.replace(
            "scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor)",
            "scalars_to_tensors(aten.add.Tensor)",
        ),
    )
    edit(spec, lambda t: t.replace("pt2e: {aten: aten.relu.default}", "pt2e: {aten: []}"))
    code, out, _ = bcfg(capsys, "--exit-code")
    assert code == 1
    assert (
        "  ~ PT2E quantizer transform: scalars_to_tensors(aten.add.Tensor, aten.mul.Tensor)"
        " → scalars_to_tensors(aten.add.Tensor)  neutral"
    ) in out
    assert (
        "  ~ pt2e: {aten: aten.relu.default} → {aten: []}  narrowing\n      in 2 patterns: nn.ReLU, F.relu"
        in out
    )
    assert out.rstrip().endswith("narrows 2 patterns (user models may stop being quantized)")

    git(repo, "checkout", "-q", "specs")
    edit(spec, lambda t: re.sub(r"quantizer xnnpack \{.*?\n\}\n", "", t, flags=re.S))
    code, out, _ = bcfg(capsys, "--format", "markdown")
    assert (
        "| ✏️ changed | *(the backend)* | `PT2E quantizer` | − `36 rules` | — | ⚠️ narrowing |"
        in out
    )
    assert "· ⚠️ **narrows 1 backend setting**" in out
    code, out, _ = bcfg(capsys, "--format", "json")
    assert json.loads(out)["summary"]["narrowing_settings"] == 1


def test_the_text_format_names_the_spec_line_of_every_change(repo, capsys):
    """Added, removed and moved patterns, a field, a backend added and one removed, a PT2E
    quantizer dropped: each says where it is (or was) in the specs, as markdown and json do."""
    tensorrt = repo / "specs" / "tensorrt.bcfg"
    addmm = (
        "    pattern torch.addmm {\n        dtypes: weighted_qint8\n"
        "        input_index: {bias: 0, input: 1, weight: 2}\n    }\n"
    )
    hardswish = "    pattern nn.Hardswish { dtypes: non_weighted_qint8 }\n"
    # torch.addmm moved first, nn.Hardswish added before it, the cat group removed.
    edit(tensorrt, lambda t: t.replace(addmm + "    use cat(non_weighted_qint8)\n", ""))
    edit(
        tensorrt,
        lambda t: t.replace("backend tensorrt {\n", "backend tensorrt {\n" + hardswish + addmm),
    )
    add_conv2d_symmetric(repo)
    (repo / "specs" / "executorch.bcfg").unlink()
    (repo / "specs" / "npu.bcfg").write_text(
        "backend npu {\n    pattern nn.ReLU { dtypes: {input: quint8, output: quint8} }\n}\n"
    )
    xnnpack = repo / "specs" / "xnnpack.bcfg"
    edit(xnnpack, lambda t: re.sub(r"quantizer xnnpack \{.*?\n\}\n", "", t, flags=re.S))
    code, out, _ = bcfg(capsys)
    assert code == 0
    blocks = re.split(r"\n(?=  [-+~>] )", out.split("\n\n", 1)[1].rsplit("\n\n", 1)[0])
    changes = [b for b in blocks if b.startswith("  ")]
    unplaced = [b for b in changes if not re.search(r"\n      (at|was) specs/\S+\.bcfg:\d+", b)]
    assert len(changes) >= 7 and unplaced == []
    assert "  + nn.Hardswish  widening\n      at specs/tensorrt.bcfg:8\n" in out
    assert (
        "  > position: after F.conv_transpose3d → after nn.Hardswish  neutral\n"
        "      in torch.addmm\n      at specs/tensorrt.bcfg:9\n" in out
    )
    assert "  + backend added (1 pattern config)  widening\n      at specs/npu.bcfg:1\n" in out
    assert "  - backend removed (" in out and "      was specs/executorch.bcfg:13\n" in out
    assert re.search(
        r"  ~ PT2E quantizer: - \d+ rules  narrowing\n      was specs/xnnpack.bcfg:\d+\n", out
    )
    removed = re.search(r"  - torch\.cat  narrowing\n      was specs/common\.bcfg:\d+\n", out)
    assert removed is not None
    # Placed through use/for steps: the chain that placed it too.
    assert (
        "      was specs/common.bcfg: use cat(ds=non_weighted_qint8) > pattern torch.cat\n" in out
    )


def test_a_change_of_the_exported_classes_is_said_one_row_each(repo, capsys):
    """A parameter's default and a stage taken out: each its own row, at the class
    (issue 53, point 4: not one opaque line)."""
    spec = repo / "specs" / "cortex_m.bcfg"
    default = "                use_explicit_layout: false,\n"  # the parameter's, not a given's
    edit(spec, lambda t: t.replace(default, default.replace("false", "true")))
    edit(spec, lambda t: t.replace("{config: per_tensor_config},", ""))
    code, out, _ = bcfg(capsys, "--exit-code")
    assert code == 1
    assert (
        "  ~ PT2E class CortexMQuantizer parameter use_explicit_layout: False → True  neutral\n"
        "      at specs/cortex_m.bcfg:36\n"
    ) in out
    assert (
        "  ~ PT2E class CortexMQuantizer stage 2: - per_tensor_config on every op  narrowing\n"
        in out
    )
    _, js, _ = bcfg(capsys, "--format", "json")
    assert '"PT2E class CortexMQuantizer stage 2"' in js


def narrowed(capsys, spec: Path, taken_out: str) -> str:
    """The diff once ``taken_out`` is taken out of ``spec``: --fail-on narrowing fails it."""
    edit(spec, lambda t: t.replace(taken_out, "", 1))
    code, out, _ = bcfg(capsys, "--fail-on", "narrowing")
    assert code == 1
    return out


def test_a_stage_that_sees_fewer_ops_is_narrowing_and_names_them(repo, capsys):
    """Issue 52, class 8: a change of which ops a stage sees was the same text before and after,
    and passed --fail-on narrowing."""
    out = narrowed(capsys, repo / "specs" / "cortex_m.bcfg", " " * 24 + "aten.conv1d.default,\n")
    assert (
        "  ~ PT2E class CortexMQuantizer stage 1 chains of: - aten.conv1d.default  narrowing\n"
    ) in out


def test_a_renamed_parameter_breaks_keyword_callers_an_added_one_widens(repo, capsys):
    spec = repo / "specs" / "cortex_m.bcfg"
    edit(spec, lambda t: t.replace("per_tensor_config", "tensor_config"))
    edit(
        spec,
        lambda t: t.replace(
            "use_explicit_layout: false,\n            },",
            "use_explicit_layout: false, spare: 1,\n            },",
            1,
        ),
    )
    code, out, _ = bcfg(capsys, "--fail-on", "narrowing")
    assert code == 1
    assert (
        "  ~ PT2E class CortexMQuantizer parameter renamed (keyword callers break): "
        "per_tensor_config=executorch.backends.cortex_m.quantizer.quantization_configs."
        "INT8_PER_TENSOR_CONFIG → tensor_config=executorch."
    ) in out
    assert "  ~ PT2E class CortexMQuantizer parameter: + spare=1  widening\n" in out
    assert (
        "  ~ PT2E class CortexMQuantizer stage 2 config: per_tensor_config → tensor_config" in out
    )
    assert "1 ops" not in out


def test_a_dropped_pair_is_narrowing_and_named(repo, capsys):
    """Issue 52, class 8: a pair taken out was invisible (the classes' text had no pairs)."""
    out = narrowed(capsys, repo / "specs" / "cadence.bcfg", " p.ReluPattern0,")
    assert (
        "  ~ PT2E class get_cadence_default_quantizers pair: - executorch.backends.cadence.aot."
        "quantizer.patterns.ReluPattern0 with executorch."
    ) in out


def test_swapped_given_values_name_the_variants(repo, capsys):
    """Issue 52, class 8: two variants' given values swapped; each changed row names the
    variant it is about by its given."""
    spec = repo / "specs" / "cortex_m.bcfg"
    a = "{when: hooks.channels_last, given: {use_explicit_layout: false}}"
    b = "{when: hooks.rank4, given: {use_explicit_layout: true}}"
    edit(spec, lambda t: t.replace(a, "@A").replace(b, a.replace("false", "true")))
    edit(spec, lambda t: t.replace("@A", b.replace("true", "false")))
    _, out, _ = bcfg(capsys)
    assert "in 9 patterns: aten.conv2d.default given use_explicit_layout=false,\n" in out
    assert "in 9 patterns: aten.conv2d.default given use_explicit_layout=true,\n" in out


def test_a_reorder_that_changes_what_the_pt2e_quantizer_fuses_is_narrowing(repo, capsys):
    """Moving the fusion past an eager shared op, behind nn.Conv2d: generate warns that it never
    fuses, and diff calls the move narrowing with the rules now tried the other way round.
    Moving nn.Conv2d before its fusion instead changes nothing the quantizer tries."""
    fusion = (
        "    pattern (nn.Conv2d, nn.ReLU) {\n        dtypes: w8\n"
        "        fuser: sequential(nni.ConvReLU2d)\n        fused: nni.ConvReLU2d\n    }\n"
    )
    conv = "    pattern nn.Conv2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }\n"
    pool = "    pattern nn.MaxPool2d { observation: shared_observer  dtypes: w8  pt2e: {eager: true} }\n"
    spec = repo / "specs" / "npu.bcfg"
    spec.write_text(
        "dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}\n"
        "quantizer npu {}\nbackend npu {\n"
        + fusion
        + conv
        + pool
        + "    pattern nni.ConvReLU2d { dtypes: w8  root: nn.Conv2d  reference: nnqr.Conv2d }\n}\n"
    )
    commit(repo, "npu")
    edit(spec, lambda t: t.replace(fusion + conv, conv + fusion))
    code, out, _ = bcfg(capsys, "--exit-code")
    assert code == 1 and "  neutral\n" in out and out.rstrip().endswith("1 moved; no narrowing")
    git(repo, "checkout", "-q", "specs")
    edit(spec, lambda t: t.replace(fusion, "").replace(pool, pool + fusion))
    code, out, _ = bcfg(capsys)
    assert code == 0
    assert (
        "npu\n  > position: first → after nn.MaxPool2d  narrowing\n      in (nn.Conv2d, nn.ReLU)\n"
        "      at specs/npu.bcfg:6\n"
        "  ~ PT2E order: tried before nn.Conv2d → tried after nn.Conv2d  narrowing\n"
        "      in (nn.Conv2d, nn.ReLU)\n      at specs/npu.bcfg:6\n"
    ) in out
    assert out.rstrip().endswith("narrows 1 pattern (user models may stop being quantized)")


def test_colour_only_on_a_terminal_and_never_with_no_color(repo, monkeypatch):
    add_conv2d_symmetric(repo)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for no_color, coloured in (("", True), ("1", False)):
        monkeypatch.setenv("NO_COLOR", no_color)
        out = Terminal()
        monkeypatch.setattr(sys, "stdout", out)
        assert main(["diff"]) == 0
        assert ("\033[" in out.getvalue()) is coloured


def test_bad_revisions_and_specs_that_do_not_resolve(repo, capsys, tmp_path_factory, monkeypatch):
    code, out, err = bcfg(capsys, "no-such-rev")
    assert (code, out, err) == (2, "", "bcfg diff: unknown revision 'no-such-rev'\n")

    (repo / "specs" / "broken.bcfg").write_text("backend broken { pattern nn.Conv2dd {} }\n")
    commit(repo, "broken")
    code, out, err = bcfg(capsys, "HEAD~1", "HEAD")
    assert code == 2 and out == ""
    assert "specs/broken.bcfg:1:26: error: unknown symbol 'torch.nn.Conv2dd'" in err
    assert re.search(r"note: at revision HEAD \([0-9a-f]{7}\)", err)
    assert re.search(
        r"bcfg diff: the specs at HEAD \([0-9a-f]{7}\) do not resolve \(1 error\)", err
    )
    assert "Traceback" not in err

    git(repo, "rm", "-rq", "specs")
    commit(repo, "no specs")
    code, out, err = bcfg(capsys, "HEAD~2", "HEAD")
    assert code == 2
    assert re.fullmatch(
        r"bcfg diff: HEAD \([0-9a-f]{7}\) has no specs: no \*\.bcfg files in specs/\n", err
    )

    monkeypatch.chdir(tmp_path_factory.mktemp("not-a-repo"))
    code, _, err = bcfg(capsys)
    assert code == 2 and "not a git repository" in err

    fresh = tmp_path_factory.mktemp("no-commits")
    git(fresh, "init", "-q")
    monkeypatch.chdir(fresh)
    code, _, err = bcfg(capsys)
    assert (code, err) == (
        2,
        "bcfg diff: this repository has no commits yet: commit the specs, then bcfg diff "
        "compares the working tree with them\n",
    )


def test_at_a_broken_revision_the_errors_come_first_and_its_warnings_only_with_v(repo, capsys):
    """What a reviewer needs: why nothing was compared. The revision's warnings (here a fusion
    into a module no config names, found before the error) are counted, and shown with -v."""
    (repo / "specs" / "a_broken.bcfg").write_text(
        "dtypes q = {input: quint8, output: quint8}\n"
        "backend a_broken {\n"
        "    pattern (nn.Conv2d, nn.ReLU) { dtypes: q  fuser: sequential(nni.ConvReLU2d)"
        "  fused: nni.ConvReLU2d }\n"
        "    pattern (nn.Linear, nn.ReLU) { dtypes: q  fuser: sequential(nni.LinearReLU)"
        "  fused: nni.LinearReLU }\n"
        "}\n"
        "backend b_broken { pattern nn.Conv2dd { dtypes: q } }\n"
    )
    commit(repo, "broken")
    code, out, err = bcfg(capsys, "HEAD~1", "HEAD")
    assert (code, out) == (2, "")
    assert err.startswith("specs/a_broken.bcfg:6:28: error: unknown symbol 'torch.nn.Conv2dd'\n")
    assert ": warning:" not in err
    assert err.endswith(
        "do not resolve (1 error); nothing compared (2 warnings there not shown; -v shows them)\n"
    )
    code, _, err = bcfg(capsys, "-v", "HEAD~1", "HEAD")
    assert code == 2 and err.startswith("specs/a_broken.bcfg:6:28: error: ")
    assert err.count(": warning: pattern (nn.") == 2 and err.index("warning") > err.index("error")
    assert err.rstrip().endswith("do not resolve (1 error); nothing compared")


def test_a_warm_diff_does_not_import_torch(repo):
    add_conv2d_symmetric(repo)
    commit(repo, "conv2d")
    script = (
        "import sys\n"
        "from generator.cli import main\n"
        "code = main(['diff', 'HEAD~1', 'HEAD', '--exit-code'])\n"
        "print(code, 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(repo.parent / "xdg")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for _ in range(2)
    ]
    assert runs[1].stdout.splitlines()[-1] == "1 False", runs[1].stderr
    assert runs[0].stdout.splitlines()[:-1] == runs[1].stdout.splitlines()[:-1]


TORCH = "torch.ao.quantization.backend_config"


@pytest.mark.parametrize("name", ["native", "onednn"])
def test_configs_built_in_against_generated_is_no_change(capsys, monkeypatch, name):
    # This repository's generated/, whatever package called `generated` earlier tests imported.
    monkeypatch.chdir(REPO)
    for module in [m for m in sys.modules if m == "generated" or m.startswith("generated.")]:
        monkeypatch.delitem(sys.modules, module)
    code, out, err = bcfg(
        capsys,
        "--configs",
        f"{TORCH}:get_{name}_backend_config",
        f"generated.{name}:get_{name}_backend_config",
        "--exit-code",
    )
    assert (code, err) == (0, ""), out
    assert out.endswith(": no semantic change\n")


def test_configs_two_getters_that_differ(capsys):
    code, out, _ = bcfg(
        capsys,
        "--configs",
        f"{TORCH}:get_native_backend_config",
        f"{TORCH}:get_fbgemm_backend_config",
        "--format",
        "json",
        "--exit-code",
    )
    assert code == 1
    got = [
        (c["pattern"], c["change"], c["field"], c["severity"]) for c in json.loads(out)["changes"]
    ]
    assert got == [
        (None, "changed", "name", "neutral"),
        ("nn.LayerNorm", "removed", None, "narrowing"),
        ("F.layer_norm", "removed", None, "narrowing"),
    ]


def test_configs_bad_targets_and_bad_combinations(capsys):
    code, _, err = bcfg(
        capsys, "--configs", "no_such_module:f", f"{TORCH}:get_native_backend_config"
    )
    assert (code, err) == (2, "bcfg diff: no module named 'no_such_module'\n")
    code, _, err = bcfg(capsys, "HEAD", "--configs", "a:b", "c:d")
    assert code == 2 and "not both" in err


def test_the_ci_recipe_runs_real_commands():
    import shlex

    import yaml

    from generator.cli import _parser
    from generator.tools.diff_report import MARKER

    text = (REPO / "examples" / "github-workflow-bcfg-diff.yml").read_text()
    steps = yaml.safe_load(text)["jobs"]["bcfg-diff"]["steps"]
    lines = [ln.strip() for s in steps if "run" in s for ln in s["run"].splitlines()]
    commands = [ln for ln in lines if ln.startswith("bcfg ")]
    assert [c.split()[:2] for c in commands] == [
        ["bcfg", "check"],
        ["bcfg", "diff"],
        ["bcfg", "diff"],
        ["bcfg", "diff"],
    ]
    for command in commands:
        argv = shlex.split(command.replace("${{ github.base_ref }}", "main").partition(">")[0])
        _parser().parse_args(argv[1:])  # exits on an argument error
    assert "--format markdown" in commands[2] and "--format github" in commands[1]
    assert commands[3].endswith("--fail-on narrowing")  # last: fails the check on narrowing only
    assert f'startswith("{MARKER}")' in text
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in text


def test_git_sources_read_a_project_in_a_subfolder_with_imports_outside_it(
    tmp_path, capsys, monkeypatch
):
    """Names are the working tree's; imports resolve relative to the importer, at the revision."""
    from generator.sources import GitSources, SourceError

    top = tmp_path / "top"
    (top / "shared").mkdir(parents=True)
    (top / "proj" / "specs").mkdir(parents=True)
    (top / "shared" / "lib.bcfg").write_text("dtypes d = {input: quint8, output: quint8}\n")
    spec = top / "proj" / "specs" / "b.bcfg"
    spec.write_text('import "../../shared/lib.bcfg"\nbackend b { pattern nn.ReLU { dtypes: d } }\n')
    (top / "proj" / "pyproject.toml").write_text("[tool.bcfg]\n")
    git(top, "init", "-q")
    commit(top, "one")
    (top / "shared" / "lib.bcfg").write_text("dtypes d = {input: qint8, output: qint8}\n")
    commit(top, "two")

    at = GitSources(top / "proj", "HEAD~1")
    assert at.prefix == "proj/" and at.spec_names("specs") == ["specs/b.bcfg"]
    # Named as FileSources names the file on disk: absolute, since it is outside the project.
    lib = (top / "shared" / "lib.bcfg").resolve().as_posix()
    assert at.resolve_import("specs/b.bcfg", "../../shared/lib.bcfg") == lib
    assert "quint8" in at.read(lib).text
    assert at.resolve_import("specs/b.bcfg", "../../../outside.bcfg") is None
    with pytest.raises(SourceError, match="no such file"):
        at.read("specs/missing.bcfg")

    monkeypatch.chdir(top / "proj")
    code, out, _ = bcfg(capsys, "HEAD~1", "HEAD", "--format", "json")
    changes = json.loads(out)["changes"]
    # input and output of one dtype config: one change, with its two parts
    assert code == 0 and [c["field"] for c in changes] == ["dtypes[d]"]
    assert [p["field"] for p in changes[0]["parts"]] == ["input", "output"]
    assert {c["where"] for c in changes} == {f"{lib}:1:1"}


def test_a_pt2e_only_targets_patterns_are_compared(repo, capsys):
    """x86_inductor (fx: false) has no BackendConfig, but its patterns are what its quantizer
    quantizes: a narrowed dtype set and a dropped when: condition are changes of the backend
    (and arm_inductor, which uses the same group, narrows too)."""
    spec = repo / "specs" / "x86_inductor.bcfg"
    old = "    pattern torch.matmul {\n        dtypes: [io, io_dynamic]"
    edit(spec, lambda t: t.replace(old, "    pattern torch.matmul {\n        dtypes: [io]"))
    edit(spec, lambda t: t.replace("aten.mul.Tensor, when: same_shape}", "aten.mul.Tensor}"))
    code, out, err = bcfg(capsys, "--format", "json", "--exit-code")
    assert code == 1, err
    got = sorted(
        (c["backend"], c["pattern"], c["field"], c["severity"]) for c in json.loads(out)["changes"]
    )
    assert got == [
        ("arm_inductor", "torch.matmul", "dtypes", "narrowing"),
        ("x86_inductor", "torch.matmul", "dtypes", "narrowing"),
        ("x86_inductor", "torch.mul", "pt2e", "widening"),  # a condition dropped
    ]
    _, text, _ = bcfg(capsys)
    assert "{aten: aten.mul.Tensor, when: same_shape} → {aten: aten.mul.Tensor}" in text
    # opt_in: true added to matmul narrows it; a condition added to mul back narrows too.
    edit(spec, lambda t: t.replace("aten.mul.Tensor}", "aten.mul.Tensor, when: same_shape}"))
    edit(spec, lambda t: t.replace("aten.matmul.default, opt_in: true}", "aten.matmul.default}"))
    commit(repo, "matmul without opt_in")
    edit(spec, lambda t: t.replace("aten.matmul.default}", "aten.matmul.default, opt_in: true}"))
    code, out, err = bcfg(capsys, "HEAD", "--format", "json", "--exit-code")
    got = sorted(
        (c["backend"], c["pattern"], c["field"], c["severity"]) for c in json.loads(out)["changes"]
    )
    assert got == [
        ("arm_inductor", "torch.matmul", "pt2e", "narrowing"),
        ("x86_inductor", "torch.matmul", "pt2e", "narrowing"),
    ], got


def test_configs_names_a_pt2e_quantizer_as_such(capsys, monkeypatch):
    """--configs compares BackendConfigs: a getter of a PT2E quantizer (a PT2E-only target's)
    is a usage error that says what it returned and how to compare it instead."""
    pytest.importorskip("torchao", reason="the generated PT2E quantizers import torchao")
    monkeypatch.chdir(REPO)
    for module in [m for m in sys.modules if m == "generated" or m.startswith("generated.")]:
        monkeypatch.delitem(sys.modules, module)
    target = "generated.x86_inductor_quantizer:get_x86_inductor_quantizer"
    code, out, err = bcfg(capsys, "--configs", target, f"{TORCH}:get_x86_backend_config")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"bcfg diff: {target}() returned X86InductorQuantizer, a PT2E quantizer, not a "
        "BackendConfig (FX's): --configs compares BackendConfigs; compare a quantizer bcfg "
        "generates (a PT2E-only target's too, x86_inductor's) as its spec, with "
        "`bcfg diff BASE HEAD`"
    )


def test_fx_false_is_the_fx_side_dropped(repo, capsys):
    """fx: false removes generated/xnnpack.py, the getter every FX user imports: a narrowing
    change of the backend, which --exit-code and --fail-on narrowing fail on; taking it out
    again gives the FX side back, widening."""
    spec = repo / "specs" / "xnnpack.bcfg"
    edit(
        spec,
        lambda t: t.replace(
            "    reused_weight: decline\n", "    reused_weight: decline\n    fx: false\n"
        ),
    )
    code, out, _ = bcfg(capsys, "--exit-code")
    assert code == 1
    assert (
        "xnnpack\n  ~ FX BackendConfig: 103 pattern configs → none (fx: false)  narrowing\n" in out
    )
    assert "      at specs/xnnpack.bcfg:19\n" in out  # the quantizer that says fx: false
    assert "narrows 1 backend setting" in out
    code, _, err = bcfg(capsys, "--fail-on", "narrowing")
    assert (code, err) == (
        1,
        "bcfg diff: narrowing changes in 1 backend setting (--fail-on narrowing)\n",
    )
    assert bcfg(capsys, "--fail-on", "widening")[0] == 0
    commit(repo, "xnnpack is PT2E-only")
    edit(spec, lambda t: t.replace("    fx: false\n", ""))
    code, out, _ = bcfg(capsys, "--format", "json", "--fail-on", "widening")
    assert code == 1
    assert [
        (c["field"], c["before"], c["after"], c["severity"]) for c in json.loads(out)["changes"]
    ] == [("FX BackendConfig", "none (fx: false)", "103 pattern configs", "widening")]


ACT8 = "constraint act8 = quint8 {quant_min: 0, quant_max: 127, scale_min: 2 ** -12}\n"


def test_one_constraint_added_is_one_row_per_dtype_config(repo, capsys):
    """The constraint on input and output of my_backend's one dtype config (six parts), in
    three patterns: one row in every format, its parts kept in json."""
    edit(
        repo / "specs" / "my_backend.bcfg",
        lambda t: t.replace(
            "dtypes weighted_int8 = {input: quint8, output: quint8",
            ACT8 + "dtypes weighted_int8 = {input: act8, output: act8",
        ),
    )
    row = (
        "dtypes[weighted_int8]: + input, output {quant_min: 0, quant_max: 127, scale_min: 2 ** -12}"
    )
    _, out, _ = bcfg(capsys)
    changes = [ln for ln in out.splitlines() if ln.startswith("  ~ ")]
    assert changes == [f"  ~ {row}  narrowing"]
    assert "      in 3 patterns: nn.Linear, (nn.Conv2d, nn.ReLU), nni.ConvReLU2d\n" in out
    _, out, _ = bcfg(capsys, "--format", "markdown")
    rows = [ln for ln in out.splitlines() if ln.startswith("| ✏️")]
    assert rows == [
        "| ✏️ changed | `nn.Linear`, `(nn.Conv2d, nn.ReLU)`, `nni.ConvReLU2d` | `dtypes[weighted_int8]` "
        "| — | + `input, output {quant_min: 0, quant_max: 127, scale_min: 2 ** -12}` | ⚠️ narrowing "
        "| specs/my_backend.bcfg:4 |"
    ]
    _, out, _ = bcfg(capsys, "--format", "github")
    assert out.splitlines()[:-1] == [
        "::warning file=specs/my_backend.bcfg,line=4,title=bcfg diff%3A narrowing::my_backend (3): "
        + row
    ]
    _, out, _ = bcfg(capsys, "--format", "json")
    changes = json.loads(out)["changes"]
    assert [c["pattern"] for c in changes] == [
        "nn.Linear",
        "(nn.Conv2d, nn.ReLU)",
        "nni.ConvReLU2d",
    ]
    assert changes[0]["parts"] == [
        {"field": f"{slot}.{short}", "before": None, "after": value, "severity": "narrowing"}
        for slot in ("input", "output")
        for short, value in (("quant_min", "0"), ("quant_max", "127"), ("scale_min", "2 ** -12"))
    ]


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "github"])
def test_fail_on_fails_on_the_severities_asked_for_in_every_format(repo, capsys, fmt):
    """A narrowing change (a constraint added) and a widening one (a dtype config added):
    --fail-on names which fail the run, whatever the format; --exit-code fails on either."""
    edit(
        repo / "specs" / "my_backend.bcfg",
        lambda t: t.replace(
            "dtypes weighted_int8 = {input: quint8, output: quint8",
            ACT8 + "dtypes weighted_int8 = {input: act8, output: act8",
        ),
    )
    commit(repo, "act8")
    code, _, err = bcfg(capsys, "HEAD~1", "HEAD", "--format", fmt, "--fail-on", "narrowing")
    assert (code, err) == (1, "bcfg diff: narrowing changes in 3 patterns (--fail-on narrowing)\n")
    code, _, err = bcfg(capsys, "HEAD~1", "HEAD", "--format", fmt, "--fail-on", "widening")
    assert (code, err) == (0, "")
    add_conv2d_symmetric(repo)  # widening only
    assert bcfg(capsys, "--format", fmt, "--fail-on", "narrowing")[:3:2] == (0, "")
    code, _, err = bcfg(capsys, "--format", fmt, "--fail-on", "widening", "--fail-on", "narrowing")
    assert (code, err) == (
        1,
        "bcfg diff: widening changes in 1 pattern (--fail-on narrowing --fail-on widening)\n",
    )
    code, _, err = bcfg(capsys, "--format", fmt, "--fail-on", "any")
    assert (code, err) == (1, "bcfg diff: changes in 1 pattern (--fail-on any)\n")
    assert bcfg(capsys, "--format", fmt, "--exit-code")[0] == 1
    git(repo, "checkout", "-q", "specs")
    assert bcfg(capsys, "--format", fmt, "--fail-on", "any")[0] == 0  # nothing changed


def test_a_grouped_change_lists_its_parts_in_text_when_their_severities_differ():
    from dataclasses import replace

    from generator.semantics.compare import Action, Change, Part, Severity
    from generator.tools.diff_report import Labels, text

    parts = (
        Part("input.quant_min", "0", "1", Severity.NARROWING),
        Part("input.quant_max", "200", "250", Severity.WIDENING),
    )
    before, after = "input {quant_min: 0, quant_max: 200}", "input {quant_min: 1, quant_max: 250}"
    c = Change("b", "nn.Linear", Action.CHANGED, "dtypes[d]", before, after, Severity.NARROWING)
    out = text([replace(c, parts=parts)], Labels("a", "b"))
    assert (
        f"  ~ dtypes[d]: {before} → {after}  narrowing\n"
        "      input.quant_min: 0 → 1  narrowing\n"
        "      input.quant_max: 200 → 250  widening\n"
        "      in nn.Linear\n"
    ) in out
    alike = tuple(replace(p, severity=Severity.NARROWING) for p in parts)
    assert "input.quant_min" not in text([replace(c, parts=alike)], Labels("a", "b"))
