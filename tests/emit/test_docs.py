"""The docs emitter: spec words, the matrix's rows, determinism, and what does (not) change the docs."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from generator.emit import words
from generator.emit.docs import md_code, md_text, render_docs
from generator.infra.header import DOCS_MARK
from generator.semantics import model as m
from generator.semantics.driver import resolve_specs
from tests.support import REPO


def render(specs: Path) -> dict[str, str]:
    from generator.config import find_project

    paths = sorted(specs.glob("*.bcfg"))
    project = find_project(REPO)
    a = resolve_specs(specs.parent, paths, project.allow)
    return render_docs(a.backends, "specs", a.pt2e_only, a.quantizers, project.examples)


EXAMPLES = ("my_backend",)  # pyproject.toml's [tool.bcfg] examples (checked below)
FX_FALSE = re.compile(r"^\s*fx: false\b", re.M)  # a PT2E-only spec's quantizer says it


@pytest.fixture(scope="module")
def docs(resolved, analysis) -> dict[str, str]:
    return render_docs(
        list(resolved.values()), "specs", analysis.pt2e_only, analysis.quantizers, EXAMPLES
    )


def test_dtype_configs_in_spec_words_with_constraints_as_ranges():
    q8, s8 = m.DType("quint8"), m.DType("qint8")
    assert words.dtype_config(m.DTypeConfig(q8, q8, s8, "float32")) == (
        "quint8 → quint8, w qint8, b float"
    )
    dyn = m.DTypeConfig(q8, m.DType("float32"), s8, "float32", True)
    assert words.dtype_config(dyn) == "dynamic quint8 → float, w qint8, b float"
    act = m.DType("qint8", scale_min_lower_bound=2**-12)
    weight = m.DType("qint8", -127, 127, 2**-12)
    assert words.dtype_config(m.DTypeConfig(act, act, weight, "float32")) == (
        "qint8[scale ≥ 2^-12] → qint8[scale ≥ 2^-12], w qint8[-127..127, scale ≥ 2^-12], b float"
    )
    fixed = m.DType("quint8", 0, 255, scale_exact_match=1 / 256, zero_point_exact_match=0)
    assert words.dtype(fixed) == "quint8[0..255, scale 1/256, zp 0]"
    assert words.dtype(m.DType("quint8", quant_max_upper_bound=15)) == "quint8[..15]"
    assert words.dtype(m.DType("qint8", scale_min_lower_bound=0.5, scale_max_upper_bound=2.0)) == (
        "qint8[0.5 ≤ scale ≤ 2]"
    )
    assert words.dtype_config(m.DTypeConfig(weight=s8)) == "— → —, w qint8"


def test_patterns_and_kinds_in_spec_words(resolved):
    onednn = {words.config_pattern(c): words.kind(c) for c in resolved["onednn"].configs}
    assert onednn["nn.Conv2d"] == "module"
    assert onednn["F.conv2d"] == "functional"
    assert onednn["(nn.Conv2d, nn.ReLU)"] == "fused"
    assert onednn['"relu_"'] == "method"
    assert onednn["complex (operator.add, nn.Conv2d, MatchAllNode)"] == "fused"
    pt2e = {words.config_pattern(c) for c in resolved["qnnpack_pt2e"].configs}
    assert "aten.addmm.default" in pt2e


def test_the_matrix_has_one_row_per_pattern_and_a_column_per_backend(
    docs, resolved, analysis, pt2e_only
):
    lines = docs["README.md"].splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| pattern | kind |"))
    # Each column says its flows: FX, FX + PT2E (a quantizer too), PT2E only.
    flows = {
        b: "FX + PT2E" if (REPO / "generated" / f"{b}_quantizer.py").is_file() else "FX"
        for b in resolved
    }
    assert flows["xnnpack"] == "FX + PT2E" and flows["executorch"] == "FX"
    real = [b for b in sorted(resolved) if b not in EXAMPLES]
    columns = [*real, *pt2e_only, *EXAMPLES]
    assert lines[head].removesuffix(" |").split(" | ")[2:] == [
        f"{b} ({flows[b]})" for b in real
    ] + [f"{b} (PT2E only)" for b in pt2e_only] + [f"{b} (example, FX)" for b in EXAMPLES]
    rows = [line for line in lines[head + 2 :] if line.startswith("| `")]
    fx = {words.config_pattern(c) for b in resolved.values() for c in b.configs}
    patterns = fx | {words.config_pattern(c) for b in analysis.pt2e_only for c in b.configs}
    # 255 in torch's eight backends, 23 more in xnnpack (a new PT2E-only target adds rows:
    # the matrix's count, below, is what its specs say)
    assert len(fx) == 278 and len(rows) == len(patterns) > len(fx)
    assert f"{len(patterns)} patterns," in docs["index.html"]
    conv = next(r for r in rows if r.startswith("| `nn.Conv2d` |"))
    by_backend = dict(zip(columns, conv.removesuffix(" |").split(" | ")[2:]))
    assert by_backend["x86"] == "quint8 → quint8, w qint8, b float"
    assert by_backend["qnnpack_pt2e"] == ""
    assert by_backend["executorch"].count("<br>") == 1


def test_each_backend_page_lists_every_config_in_order(docs, resolved):
    for name, backend in resolved.items():
        page = docs[f"backends/{name}.md"]
        rows = re.findall(r"^\| (\d+) \| (`+)(.*?)\2 \|", page, re.M)
        assert [int(n) for n, _, _ in rows] == list(range(1, len(backend.configs) + 1))
        assert [p for _, _, p in rows] == [words.config_pattern(c) for c in backend.configs]
    onednn = docs["backends/onednn.md"]
    assert "| `sequential(nni.LinearLeakyReLU)` |" in onednn
    assert "`input_index: {weight: 1, bias: 2}`" in onednn
    assert "`root_node: pattern[1][1]`<br>`extra_inputs: [pattern[2]]`" in onednn


def test_every_docs_file_starts_with_the_mark_and_html_is_self_contained(docs, pt2e_only):
    assert sorted(docs) == sorted(
        ["README.md", "index.html"]
        + [
            f"backends/{b}.md"
            for b in (
                "executorch",
                "fbgemm",
                "my_backend",
                "native",
                "onednn",
                "qnnpack",
                "qnnpack_pt2e",
                "xnnpack",
                "tensorrt",
                "x86",
                *pt2e_only,
            )
        ]
    )
    for text in docs.values():
        assert text.startswith(DOCS_MARK) and "DO NOT EDIT" in text.splitlines()[0]
    html = docs["index.html"]
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert re.findall(r"<script\b", html) == ["<script"]  # one inline script, no src


def test_docs_are_deterministic_and_in_sync_with_the_repository(docs, resolved, analysis):
    again = render_docs(
        list(reversed(resolved.values())),
        "specs",
        list(reversed(analysis.pt2e_only)),
        list(reversed(analysis.quantizers)),
        EXAMPLES,
    )
    assert again == docs
    for name, text in docs.items():
        assert (REPO / "docs" / name).read_text(encoding="utf-8") == text, name


def test_comment_and_layout_edits_leave_the_docs_unchanged(tmp_path, docs):
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    common = specs / "common.bcfg"
    # Comments and blank lines everywhere: every line number after them moves.
    text = common.read_text()
    text = "# a new comment\n\n\n" + text.replace("\ngroup ", "\n# about this group\n\ngroup ")
    common.write_text(text)
    onednn = specs / "onednn.bcfg"
    onednn.write_text(onednn.read_text().replace("\n    use ", "\n    # why\n    use "))
    assert render(specs) == docs


def test_a_change_of_meaning_is_a_changed_line_of_the_matrix(tmp_path, docs):
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    spec = specs / "tensorrt.bcfg"
    extra = "\n    pattern nn.Softmax { dtypes: default_quint8 }\n}"
    spec.write_text(spec.read_text().replace("\n}", extra, 1))
    changed = render(specs)
    old, new = docs["README.md"].splitlines(), changed["README.md"].splitlines()
    added = [line for line in new if line not in old]
    removed = [line for line in old if line not in new]
    # tensorrt's count, and the Softmax row: tensorrt's cell was empty and is not.
    assert [line.split(" | ")[0] for line in removed] == [
        "| [tensorrt](backends/tensorrt.md)",
        "| `nn.Softmax`",
    ]
    assert [line.split(" | ")[0] for line in added] == [x.split(" | ")[0] for x in removed]
    tensorrt = sorted(
        p.name.removesuffix(".bcfg")
        for p in specs.glob("*.bcfg")
        if p.name != "common.bcfg"
        and not FX_FALSE.search(p.read_text())  # PT2E only: no column
        and p.stem not in EXAMPLES  # an example's column comes last
    ).index("tensorrt")
    cell = lambda line: line.removesuffix(" |").split(" | ")[2 + tensorrt]  # noqa: E731
    assert (cell(removed[1]), cell(added[1])) == ("", "quint8 → quint8")
    assert changed["backends/x86.md"] == docs["backends/x86.md"]


def test_names_are_escaped_in_html_and_markdown(tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent("""\
            backend odd "<script>alert('x')</script> | --> `" {
                pattern "relu_" { dtypes: {input: quint8, output: quint8} }
            }
            """))
    out = render(tmp_path / "specs")
    html = out["index.html"]
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert html.count("-->") == 1  # only the mark's own end
    call = next(line for line in out["backends/odd.md"].splitlines() if "BackendConfig(" in line)
    assert call.startswith("``BackendConfig(") and "\\|" in call  # a code span: shown, not run
    assert md_text("a|b<c>&") == "a\\|b&lt;c&gt;&amp;"
    assert md_code("x`y|z") == "``x`y\\|z``"


def test_patterns_are_highlighted_by_bcfgs_lexer():
    """The page's patterns go through bcfg's Pygments lexer: the classes page.css colours."""
    from generator.emit.docs import code_html

    html = str(code_html('complex (nn.ReLU, "relu_", 0)'))
    assert html == (
        '<span class="k">complex</span><span class="w"> </span><span class="p">(</span>'
        '<span class="nn">nn</span><span class="p">.</span><span class="n">ReLU</span>'
        '<span class="p">,</span><span class="w"> </span><span class="s2">"relu_"</span>'
        '<span class="p">,</span><span class="w"> </span><span class="mi">0</span>'
        '<span class="p">)</span>'
    )
    assert "<script>" not in str(code_html("<script>"))  # escaped, as before
    css = (REPO / "templates" / "docs" / "page.css").read_text()
    for cls in ("nn", "s2", "k", "mi", "nb"):
        assert f"code .{cls}" in css


def _column(docs: dict[str, str], pattern: str, backend: str) -> str:
    """The README matrix's cell of ``pattern`` (as the spec writes it) in ``backend``'s column."""
    lines = docs["README.md"].splitlines()
    head = next(line for line in lines if line.startswith("| pattern | kind |"))
    columns = head.removesuffix(" |").split(" | ")
    row = next(line for line in lines if line.startswith(f"| `{pattern}` |"))
    return row.removesuffix(" |").split(" | ")[columns.index(backend)]


def test_pt2e_only_targets_are_columns_with_their_quantizers_conditions(docs, analysis):
    """x86_inductor, arm_inductor, xnnpack_executorch (fx: false): columns after the FX
    backends, marked PT2E only, each cell the spec's dtype configs and, in italics, what the
    quantizer's rule adds (QAT only, opt-in, other input, when:)."""
    only = {b.module: b for b in analysis.pt2e_only}
    said = [
        p.stem for p in sorted((REPO / "specs").glob("*.bcfg")) if FX_FALSE.search(p.read_text())
    ]
    assert sorted(only) == said and said  # the specs that say fx: false, and no FX backend
    assert not set(only) & {b.module for b in analysis.backends}
    # Each is a row of the target registry (tests/targets.py), which every other count of
    # targets reads; the registry's other rows are FX backends with a quantizer (xnnpack).
    from tests.targets import TARGETS

    fx = {b.module for b in analysis.backends}
    assert {t.name for t in TARGETS if t.name not in fx} == set(only)
    x86 = only["x86_inductor"]

    def configs(backend, pattern: str) -> str:
        c = next(c for c in backend.configs if words.config_pattern(c) == pattern)
        return "<br>".join(md_text(words.dtype_config(d)) for d in c.dtype_configs)

    column = "x86_inductor (PT2E only)"
    qat_add = "(nn.Conv2d, nn.BatchNorm2d, operator.add)"
    # static and dynamic (specs/x86_inductor.bcfg's group inductor), then the rule's words
    assert configs(x86, qat_add).count("<br>") == 1
    assert configs(x86, qat_add).split("<br>")[1].startswith("dynamic quint8")
    assert _column(docs, qat_add, column) == (
        configs(x86, qat_add) + "<br>*QAT only; other input quantized*"
    )
    assert _column(docs, "(nn.Linear, operator.add)", column).endswith("*other input float*")
    assert _column(docs, "torch.matmul", column).endswith("<br>*opt-in*")
    assert _column(docs, "torch.mul", column).endswith("<br>*when: same_shape*")
    assert _column(docs, "torch.flatten", column).endswith(
        "*when: user_quantizable, input_quantized*"
    )
    linear = _column(docs, "nn.Linear", column)  # static, dynamic, and fp16 weights
    assert linear == configs(x86, "nn.Linear") and "w float16" in linear
    # Arm: the shared patterns with its own dtypes (int8 activations), no X86-only fusions.
    arm = _column(docs, "nn.Conv2d", "arm_inductor (PT2E only)")
    assert arm == configs(only["arm_inductor"], "nn.Conv2d") and arm.startswith("qint8")
    assert _column(docs, "(nn.Conv2d, nn.ReLU)", "arm_inductor (PT2E only)") == ""
    # ExecuTorch's XNNPACK: a transposed conv's weight on axis 1.
    assert "weight axis 1" in _column(docs, "nn.ConvTranspose2d", "xnnpack_executorch (PT2E only)")
    # The backends table: no BackendConfig name, the quantizer's getter.
    assert (
        "| [x86_inductor](backends/x86_inductor.md) | — (PT2E only) "
        f"| `get_x86_inductor_quantizer` | {len(x86.configs)} | `x86_inductor.bcfg` |"
    ) in docs["README.md"]
    assert "| [xnnpack](backends/xnnpack.md) | `xnnpack` | `get_xnnpack_quantizer` |" in (
        docs["README.md"]
    )
    page = docs["backends/x86_inductor.md"]
    assert "`get_x86_inductor_quantizer()` (PT2E only: a PT2E quantizer, no BackendConfig)" in page
    assert "BackendConfig('x86_inductor')" not in page
    # Its table: the fields its quantizer reads and what each rule adds, no FX-only columns.
    assert "| # | pattern | kind | observation | dtypes | pt2e | quantizer |" in page
    assert "| fuser |" not in page and "| root |" not in page
    rows = re.findall(r"^\| (\d+) \| `(.*?)` \|.*\| (.*) \|$", page, re.M)
    assert [p for _, p, _ in rows] == [words.config_pattern(c) for c in x86.configs]
    by_pattern = {p: quantizer for _, p, quantizer in rows}
    assert by_pattern["torch.matmul"] == "opt-in"
    assert by_pattern[qat_add] == "QAT only; other input quantized"
    assert by_pattern["nn.Conv2d"] == ""
    assert "`{aten: aten.matmul.default, opt_in: true}`" in page


def test_a_patterns_given_variants_share_its_cell_each_with_its_given(docs, analysis):
    """Cortex-M's conv2d is in an instance's table by use_explicit_layout (given:): one row of
    the matrix, the cell both variants' notes, each with its given; one row each on its page."""
    column = "cortex_m (PT2E only)"
    assert _column(docs, "aten.conv2d.default", column) == (
        "qint8 → qint8, w qint8<br>*when: channels_last, given: use_explicit_layout=false; "
        "or when: rank4, given: use_explicit_layout=true*"
    )
    # conv1d only with use_explicit_layout=True; linear in every table (no given)
    assert _column(docs, "aten.conv1d.default", column).endswith(
        "*when: rank3; given: use_explicit_layout=true*"
    )
    assert "given" not in _column(docs, "aten.linear.default", column)
    page = docs["backends/cortex_m.md"]
    notes = re.findall(r"^\| \d+ \| `aten\.conv2d\.default` \|.*\| (.*) \|$", page, re.M)
    assert notes == [
        "when: channels_last; given: use_explicit_layout=false",
        "when: rank4; given: use_explicit_layout=true",
    ]
    # The detail view: a section per variant, each with its pt2e field.
    (detail,) = re.findall(
        r'<template id="d-p-aten.conv2d.default">.*?</template>', docs["index.html"]
    )
    assert detail.count("<h3>cortex_m (PT2E only)</h3>") == 2
    assert "given: {use_explicit_layout: false}" in detail
    assert "given: {use_explicit_layout: true}" in detail


def test_the_html_marks_pt2e_only_columns_and_shows_the_conditions(docs, pt2e_only):
    html = docs["index.html"]
    heads = re.findall(r'<th scope="col" data-b="([a-z0-9_]+)"( class="pt2e")?', html)
    assert [b for b, pt2e in heads if pt2e] == pt2e_only
    assert [b for b, _ in heads][-len(pt2e_only) - 1 : -1] == pt2e_only  # after every real FX one
    assert 'data-b="x86_inductor" class="pt2e" title="PT2E only (get_x86_inductor_quantizer()' in (
        html
    )
    row = re.search(r'<tr id="p-torch.matmul".*?</tr>', html).group(0)
    cell = re.search(r'<td data-b="x86_inductor"[^>]*class="pt2e">(.*?)</td>', row).group(1)
    assert cell.endswith('<div class="note">opt-in</div>')
    assert '<td data-b="my_backend" class="none example"></td>' in row  # FX, an example
    detail = re.search(r'<template id="d-p-torch.matmul">.*?</template>', html).group(0)
    assert "<h3>x86_inductor (PT2E only)</h3>" in detail


def test_a_fusion_without_dtype_configs_says_what_it_fuses_into(tmp_path):
    """Not "no dtype configs", which reads as unsupported: a fusion is quantized by the pattern
    of the module it fuses into; only a config that is neither says it is never quantized."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent("""\
            dtypes int8 = {input: quint8, output: quint8, weight: qint8, bias: float}
            backend b {
                pattern (nn.Conv2d, nn.ReLU) {
                    fuser: sequential(nni.ConvReLU2d)
                    fused: nni.ConvReLU2d
                }
                pattern nni.ConvReLU2d { dtypes: int8  root: nn.Conv2d }
                pattern nn.ReLU {}
            }
            """))
    out = render(tmp_path / "specs")
    assert _column(out, "(nn.Conv2d, nn.ReLU)", "b (FX)") == (
        "fusion only: into nni.ConvReLU2d, quantized by its pattern"
    )
    assert _column(out, "nn.ReLU", "b (FX)") == "no dtype configs: never quantized"
    assert "fusion only: into nni.ConvReLU2d, quantized by its pattern" in out["index.html"]
    assert "fusion only: into M, quantized by its pattern" in out["README.md"]  # explained


def test_a_pattern_a_config_s_accessors_annotate_is_not_said_never_quantized(tmp_path):
    """Under configs: accessors (arm_tosa) a pattern has no dtype configs: the config's own
    accessors say each op's specs, and any config quantizes it; under configs: spec, none does.
    A chain through batch norm is no QAT-only one there (the composable base tries it with any
    config)."""
    (tmp_path / "specs").mkdir()
    spec = """\
        quantizer b {
            scopes: composable
            fx: false
            configs: accessors
        }
        backend b {
            pattern aten.relu.default {}
            pattern (aten.conv2d.default, aten.batch_norm.default) {}
        }
        """
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent(spec))
    out = render(tmp_path / "specs")
    accessors = "any config: its accessors say each op's specs (configs: accessors)"
    assert _column(out, "aten.relu.default", "b (PT2E only)") == accessors
    assert _column(out, "(aten.conv2d.default, aten.batch_norm.default)", "b (PT2E only)") == (
        accessors
    )
    (tmp_path / "specs" / "b.bcfg").write_text(
        textwrap.dedent(spec).replace("configs: accessors", "")
    )
    out = render(tmp_path / "specs")
    assert _column(out, "aten.relu.default", "b (PT2E only)") == "no dtype configs: never quantized"


def test_the_examples_are_set_apart_from_the_real_targets(docs, resolved, analysis):
    """[tool.bcfg] examples (the toy my_backend here): a table of their own in the README, the
    last columns, marked, and named so in the detail view; without it, among the others."""
    from generator.config import find_project

    assert find_project(REPO).examples == EXAMPLES
    readme = docs["README.md"]
    real, examples = readme.split("### Examples", 1)
    assert "[my_backend]" not in real.split("## Patterns")[0] and "[fbgemm]" in real
    assert "| [my_backend](backends/my_backend.md) |" in examples.split("## Patterns")[0]
    head = next(line for line in readme.splitlines() if line.startswith("| pattern |"))
    assert head.endswith("| xnnpack_executorch (PT2E only) | my_backend (example, FX) |")
    html = docs["index.html"]
    heads = re.findall(r'<th scope="col" data-b="([a-z0-9_]+)"(?: class="([a-z0-9 ]+)")?', html)
    assert heads[-1] == ("my_backend", "example")
    assert [b for b, cls in heads if "example" in cls] == ["my_backend"]
    assert "<small>example, FX · 3</small>" in html
    assert f"{len(analysis.pt2e_only)} PT2E-only targets, 1 example," in html
    detail = re.search(r'<template id="d-p-nn.Linear">.*?</template>', html).group(0)
    assert "my_backend (example)" in detail
    plain = render_docs(list(resolved.values()), "specs", analysis.pt2e_only, analysis.quantizers)
    assert "### Examples" not in plain["README.md"] and "example, FX" not in plain["index.html"]


def test_a_pt2e_only_targets_cell_says_what_its_quantizer_does(tmp_path):
    """A shared_observer op without dtype configs shares its input's quantization under any
    config (the runtime and compat quantize it: the cell said "never quantized", issue 53.5);
    weight_qscheme and activation_qscheme say which weights and activations a config must
    give (issue 53.3)."""
    (tmp_path / "specs").mkdir()
    spec = """\
        dtypes s = {input: qint8, output: qint8, weight: qint8, bias: float}
        quantizer b { scopes: composable  fx: false }
        backend b {
            pattern aten.linear.default { dtypes: s  pt2e: {weight_qscheme: per_channel} }
            pattern aten.conv2d.default { dtypes: s  pt2e: {activation_qscheme: symmetric} }
            pattern aten.view.default { observation: shared_observer }
        }
        """
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent(spec))
    out = render(tmp_path / "specs")
    shared = "any config: shares its input's quantization (shared_observer)"
    assert _column(out, "aten.view.default", "b (PT2E only)") == shared
    assert "per-channel weights only" in _column(out, "aten.linear.default", "b (PT2E only)")
    assert "symmetric activations only" in _column(out, "aten.conv2d.default", "b (PT2E only)")


def test_an_aten_op_sorts_by_its_name_beside_the_functions_of_that_name(tmp_path):
    """``aten.add.Tensor`` sorted by its overload's name ("Tensor"), far from ``torch.add``
    (issue 53.11); it sorts by the op's name, beside it."""
    (tmp_path / "specs").mkdir()
    spec = """\
        dtypes io = {input: quint8, output: quint8}
        backend b {
            pattern torch.add { dtypes: io }
            pattern aten.add.Tensor { dtypes: io }
            pattern torch.sigmoid { dtypes: io }
            pattern aten.relu.default { dtypes: io }
            pattern torch.tanh { dtypes: io }
        }
        """
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent(spec))
    rows = [
        line.split(" | ")[0].removeprefix("| ")
        for line in render(tmp_path / "specs")["README.md"].splitlines()
        if line.startswith("| `")
    ]
    assert rows == [
        "`aten.add.Tensor`",
        "`torch.add`",
        "`aten.relu.default`",
        "`torch.sigmoid`",
        "`torch.tanh`",
    ], rows


def test_a_function_fx_traces_through_is_a_warning_and_a_cell_that_says_so(tmp_path, monkeypatch):
    """A pattern naming a plain Python function (not a torch.library op): FX's trace goes
    through it and records the ops it calls, so its FX config never matches. generate warns
    at the pattern, and the matrix's FX cell says FX never sees it (issue 53.2: the matrix
    listed it as supported in FX + PT2E); a function torch.fx.wrap made a leaf, which FX
    records as a call, is neither."""
    from generator.config import DEFAULT_ALLOW

    (tmp_path / "npu_fns.py").write_text(textwrap.dedent("""\
            import torch

            def act(x):
                return torch.relu(x) * 2

            def leaf(x):
                return torch.relu(x) * 2

            torch.fx.wrap("leaf")
            """))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "specs").mkdir()
    spec = """\
        dtypes s = {input: quint8, output: quint8}
        backend b {
            pattern npu_fns.act { dtypes: s  pt2e: {aten: aten.relu.default} }
            pattern npu_fns.leaf { dtypes: s  pt2e: {aten: aten.relu.default} }
        }
        """
    (tmp_path / "specs" / "b.bcfg").write_text(textwrap.dedent(spec))
    a = resolve_specs(tmp_path, [tmp_path / "specs" / "b.bcfg"], (*DEFAULT_ALLOW, "npu_fns"))
    said = [w.message for w in a.warnings]
    assert [s for s in said if "FX traces through" in s] == [
        "FX traces through npu_fns.act, a plain Python function: prepare_fx records the torch "
        "ops it calls, never the function, so this pattern's FX config never matches"
    ]
    out = render_docs(a.backends, "specs", a.pt2e_only, a.quantizers)
    assert "FX never sees it: FX traces through npu_fns.act" in _column(
        out, "npu_fns.act", "b (FX)"
    )
    assert "FX never sees it" not in _column(out, "npu_fns.leaf", "b (FX)")
