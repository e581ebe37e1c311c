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


def test_the_first_typo_of_a_session_is_answered_without_torch(tmp_path: Path):
    """A new session on an empty cache: every spec checked, then a misspelled module name and a
    misspelled dtype, each with torch's did-you-mean, and torch never imported (the installed
    build's shipped facts answer; tests/semantics/test_shipped_facts.py)."""
    import os
    import subprocess
    import sys

    from tests.support import REPO, shipped_table

    shipped_table()
    code = f"""
import sys
from pathlib import Path
from generator.tools.lsp.workspace import Snapshot, Workspace
specs = Path({str(REPO / "specs")!r})
ws = Workspace()
texts = {{p.resolve(): p.read_text(encoding="utf-8") for p in sorted(specs.glob("*.bcfg"))}}
for path in texts:
    assert not ws.check(path, Snapshot(texts))[path].diagnostics, path
x86, common = specs.resolve() / "x86.bcfg", specs.resolve() / "common.bcfg"
texts[x86] = texts[x86].rstrip().removesuffix("}}") + "  pattern nn.Conv1e {{}}\\n}}\\n"
texts[common] = texts[common].replace("output: quint8}}", "output: quint9}}", 1)
for path in (x86, common):
    for d in ws.check(path, Snapshot(texts))[path].diagnostics:
        print(d.message, "|", d.hint)
print("torch" in sys.modules)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("BCFG_CACHE_DIR", None)
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "unknown symbol 'torch.nn.Conv1e' | did you mean 'nn.Conv1d'?",
        "unknown dtype 'quint9' | did you mean 'quint8'?",
        "False",
    ], run.stdout
