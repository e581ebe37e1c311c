"""The language server's compiler side never fails on what the fuzzers make of the specs.

The mutants of ``test_fuzz`` (tokens and lines deleted, duplicated, swapped;
truncation; inserted bytes, keywords, invalid UTF-8) are given to the
workspace as unsaved buffers, in process and with one workspace for all, as
the server keeps it: the check must report diagnostics whose spans lie in the
texts they name, and hover, go to definition, completion and formatting at
any offset must answer (or answer nothing) without raising.
``BCFG_LSP_FUZZ_EXAMPLES`` sets the number of mutants (default 150).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from generator.tools.lsp import completion, features
from generator.tools.lsp.text import TextIndex
from generator.tools.lsp.workspace import Snapshot, Workspace
from tests.support import REPO
from tests.tools.test_fuzz import mutants

EXAMPLES = int(os.environ.get("BCFG_LSP_FUZZ_EXAMPLES", "150"))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lsp-fuzz")
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


WORKSPACE = Workspace()  # one for every example, as the server keeps one for the session


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(mutant=mutants(), where=st.lists(st.floats(0, 1), min_size=3, max_size=3))
def test_no_request_fails_on_a_mutant(project, mutant, where):
    name, data = mutant
    path = (project / "specs" / name).resolve()
    text = data.decode("utf-8", "replace")
    note(repr(text[:2000]))
    snap = Snapshot({path: text})
    for file, report in WORKSPACE.check(path, snap).items():
        assert report.text is not None, file
        index = TextIndex(report.text)
        for d in report.diagnostics:
            if d.span is None:
                continue
            assert 1 <= d.span.line <= report.text.count("\n") + 1, (file, d)
            assert 0 <= index.span_offset(d.span.line, d.span.column) <= len(report.text)
    for fraction in where:
        offset = int(fraction * len(text))
        h = features.hover(WORKSPACE, snap, path, offset)
        assert h is None or (0 <= h.start <= h.end <= len(text) and h.markdown)
        loc = features.definition(WORKSPACE, snap, path, offset)
        assert loc is None or loc.start <= loc.end
        completion.complete(WORKSPACE, snap, path, offset)
    edits = features.format_edits(text, f"specs/{name}")
    assert edits is None or all(0 <= a <= b <= len(text) for a, b, _ in edits)
