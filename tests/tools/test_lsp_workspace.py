"""The language server's compiler side, in process: what it does with an odd project."""

from __future__ import annotations

from pathlib import Path

from generator.diagnostics import Severity
from generator.tools.lsp import features
from generator.tools.lsp.workspace import Snapshot, Workspace


def test_a_bad_pyproject_is_a_diagnostic_not_a_crash(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\nspecz = 'specs'\n")
    spec = tmp_path / "a.bcfg"
    text = "dtypes d = {input: quint8, output: quint8}\n"
    spec.write_text(text)
    reports = Workspace().check(spec.resolve(), Snapshot({spec.resolve(): text}))
    (d,) = reports[spec.resolve()].diagnostics
    assert d.severity == Severity.ERROR and d.span is None
    assert "pyproject.toml:2:1" in d.message and "specz" in d.message
    h = features.hover(
        Workspace(), Snapshot({spec.resolve(): text}), spec.resolve(), text.index("quint8")
    )
    assert h is not None and h.markdown.startswith("**dtype** `torch.quint8`")


def test_a_spec_outside_any_project(tmp_path: Path):
    spec = (tmp_path / "lone.bcfg").resolve()
    text = "backend lone {\n    pattern nn.ReLU { dtypes: {input: quint9} }\n}\n"
    reports = Workspace().check(spec, Snapshot({spec: text}))
    (d,) = reports[spec].diagnostics
    assert d.span is not None and (d.span.file, d.span.line) == ("lone.bcfg", 2)
    assert "quint9" in d.message
