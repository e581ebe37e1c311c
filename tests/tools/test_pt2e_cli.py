"""bcfg generate and check with a quantizer declaration: the files it adds, checks and removes."""

from __future__ import annotations

from tests.support import REPO

from .test_cli import bcfg


def test_a_spec_generates_its_quantizer_and_the_runtime_and_check_covers_them(project_copy):
    out = bcfg(project_copy, "generate", "specs/xnnpack.bcfg", "--out", "elsewhere")
    assert out.returncode == 0, out.stderr
    out_dir = project_copy / "elsewhere"
    written = sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*.py"))
    runtime = sorted(f"_bcfg_pt2e/{p.name}" for p in (REPO / "generator" / "runtime").glob("*.py"))
    assert written == sorted([*runtime, "xnnpack.py", "xnnpack_quantizer.py"])
    for name in written:
        assert (out_dir / name).read_bytes() == (REPO / "generated" / name).read_bytes()

    # A hand edit of a runtime module is reported as one; generate puts it back.
    matcher = project_copy / "generated" / "_bcfg_pt2e" / "matcher.py"
    matcher.write_text(matcher.read_text().replace("len(prev.users) != 1", "False", 1))
    out = bcfg(project_copy, "check")
    assert out.returncode == 1
    assert "bcfg check: generated/_bcfg_pt2e/matcher.py was edited by hand" in out.stderr
    assert bcfg(project_copy, "generate").returncode == 0
    assert matcher.read_bytes() == (REPO / "generated" / "_bcfg_pt2e" / "matcher.py").read_bytes()

    quantizer = project_copy / "generated" / "xnnpack_quantizer.py"
    quantizer.write_text(quantizer.read_text().replace("weight=1,", "weight=0,", 1))
    out = bcfg(project_copy, "check")
    assert out.returncode == 1 and "generated/xnnpack_quantizer.py" in out.stdout


def test_removing_the_quantizer_removes_its_modules(project_copy, analysis):
    spec = project_copy / "specs" / "xnnpack.bcfg"
    text = spec.read_text()
    start = text.index("quantizer xnnpack {")
    end = text.index("}\n", start) + 1
    block = "\n".join("#" for _ in text[start:end].split("\n"))  # same lines: same origins
    spec.write_text(text[:start] + block + text[end:])
    # the other quantizers, PT2E-only specs
    for target in analysis.pt2e_only:
        (project_copy / target.spec_file).unlink()
    out = bcfg(project_copy, "generate")
    assert out.returncode == 0, out.stderr
    assert "removed generated/xnnpack_quantizer.py" in out.stderr
    assert "removed generated/x86_inductor_quantizer.py" in out.stderr
    assert "removed generated/_bcfg_pt2e/quantizer.py" in out.stderr
    assert not (project_copy / "generated" / "_bcfg_pt2e").exists()  # the emptied package goes

    def body(path):  # after the header, whose input hash follows the spec's bytes
        return path.read_text().split("\n", 2)[2]

    assert body(project_copy / "generated" / "xnnpack.py") == body(
        REPO / "generated" / "xnnpack.py"
    )
