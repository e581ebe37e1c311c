"""The PT2E emitter: plain, black-formatted, deterministic modules that need no bcfg at run time."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from generator.emit import pysource
from generator.emit.pt2e import class_name, render_quantizer, render_runtime
from generator.semantics.driver import resolve_specs
from tests.support import REPO


@pytest.fixture(scope="module")
def xnnpack():
    (q,) = resolve_specs(REPO, [REPO / "specs" / "xnnpack.bcfg"]).quantizers
    return q


def test_render_is_deterministic_and_black(xnnpack):
    text = render_quantizer(xnnpack)
    assert render_quantizer(xnnpack) == text
    assert render_quantizer(xnnpack, fast=False) == text  # layout's statements are black's
    body = text.split("\n", 2)[2]
    assert pysource.black_format(body) == body
    runtime = render_runtime().split("\n", 2)[2]
    assert pysource.black_format(runtime) == runtime


def test_checked_in_modules_are_what_render_gives(xnnpack):
    generated = REPO / "generated"
    assert (generated / "xnnpack_quantizer.py").read_text() == render_quantizer(xnnpack)
    assert (generated / "_bcfg_pt2e.py").read_text() == render_runtime()


def test_one_rule_per_line_of_the_table_with_its_origins(xnnpack):
    text = render_quantizer(xnnpack)
    assert text.count("\n    Rule(") == len(xnnpack.rules)
    # every rule is preceded by one comment per distinct place its patterns come from
    blocks = text.split("\nRULES = (\n", 1)[1].split("\n    Rule(")[:-1]
    for block, rule in zip(blocks, xnnpack.rules):
        comments = [
            line for line in block.splitlines() if line.startswith("    # specs/xnnpack.bcfg: ")
        ]
        assert len(comments) == len({o.anchor for o in rule.origins}) >= 1, rule.name
    assert "class XnnpackQuantizer(SpecQuantizer):" in text
    assert "def get_xnnpack_quantizer() -> XnnpackQuantizer:" in text


def test_outputs_is_written_only_when_not_the_default(tmp_path, xnnpack):
    assert "outputs =" not in render_quantizer(xnnpack)
    spec = tmp_path / "t.bcfg"
    spec.write_text(
        "quantizer b { outputs: consumers }\n"
        "backend b { pattern nn.ReLU { dtypes: {input: qint8, output: qint8} } }\n"
    )
    (q,) = resolve_specs(tmp_path, [spec]).quantizers
    assert '\n    outputs = "consumers"\n' in render_quantizer(q)


def test_local_names_never_shadow_what_the_module_uses(tmp_path):
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent("""
            constraint torch = qint8 {scale_min: 2 ** -12}
            constraint RULES = qint8 {quant_min: -127, quant_max: 127}
            dtypes aten = {input: torch, output: torch, weight: RULES, bias: float}
            dtypes Rule = {input: torch, output: torch}
            quantizer my_backend {}
            backend my_backend {
                pattern nn.Linear { dtypes: aten }
                pattern F.adaptive_avg_pool2d { observation: shared_observer  dtypes: Rule  pt2e: {eager: true} }
            }
            """))
    (q,) = resolve_specs(tmp_path, [spec]).quantizers
    text = render_quantizer(q)
    assert "torch_2 = Quant(torch.int8" in text and "RULES_2 = Quant(" in text
    assert 'aten_2 = Allows("aten", input=torch_2' in text and 'Rule_2 = Allows("Rule"' in text
    compile(text, "t_quantizer.py", "exec")
    assert class_name("my_backend") == "MyBackendQuantizer"
    assert "class MyBackendQuantizer(SpecQuantizer):" in text


def test_generated_package_imports_without_bcfg():
    """The generated quantizer needs torch and torchao only: bcfg may be absent at run time."""
    pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")
    code = (
        "import sys\n"
        "sys.modules['generator'] = None  # any import of bcfg fails\n"
        "from generated.xnnpack_quantizer import XnnpackQuantizer, get_xnnpack_quantizer\n"
        "from torchao.quantization.pt2e.quantizer import Quantizer\n"
        "a, b = get_xnnpack_quantizer(), get_xnnpack_quantizer()\n"
        "assert isinstance(a, Quantizer) and isinstance(a, XnnpackQuantizer) and a is not b\n"
        "a.set_module_name('x', None)\n"
        "assert b.module_name_config == {}, 'instances share state'\n"
        "assert not any(m.startswith('generator') for m in sys.modules if sys.modules[m])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
