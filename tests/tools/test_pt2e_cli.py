"""bcfg generate and check with a quantizer declaration: the files it adds, checks and removes."""

from __future__ import annotations

from tests.support import REPO

from .test_cli import bcfg


def test_a_spec_generates_its_quantizer_and_the_runtime_and_check_covers_them(project_copy):
    out = bcfg(project_copy, "generate", "specs/xnnpack.bcfg", "--out", "elsewhere")
    assert out.returncode == 0, out.stderr
    written = sorted(p.name for p in (project_copy / "elsewhere").iterdir())
    assert written == ["_bcfg_pt2e.py", "xnnpack.py", "xnnpack_quantizer.py"]
    for name in written:
        assert (project_copy / "elsewhere" / name).read_bytes() == (
            REPO / "generated" / name
        ).read_bytes()

    quantizer = project_copy / "generated" / "xnnpack_quantizer.py"
    quantizer.write_text(quantizer.read_text().replace("weight=1,", "weight=0,", 1))
    out = bcfg(project_copy, "check")
    assert out.returncode == 1 and "generated/xnnpack_quantizer.py" in out.stdout


def test_removing_the_quantizer_removes_its_modules(project_copy):
    spec = project_copy / "specs" / "xnnpack.bcfg"
    text = spec.read_text()
    start = text.index("quantizer xnnpack {")
    end = text.index("}\n", start) + 1
    block = "\n".join("#" for _ in text[start:end].split("\n"))  # same lines: same origins
    spec.write_text(text[:start] + block + text[end:])
    out = bcfg(project_copy, "generate")
    assert out.returncode == 0, out.stderr
    assert "removed generated/xnnpack_quantizer.py" in out.stderr
    assert "removed generated/_bcfg_pt2e.py" in out.stderr

    def body(path):  # after the header, whose input hash follows the spec's bytes
        return path.read_text().split("\n", 2)[2]

    assert body(project_copy / "generated" / "xnnpack.py") == body(
        REPO / "generated" / "xnnpack.py"
    )
