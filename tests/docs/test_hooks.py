"""The site's markers show the repository's files only: ``<!-- bcfg:include FILE -->`` and
``<!-- bcfg:error NAME -->`` naming a file elsewhere on the building machine (an absolute
path, ``..``, a symlink that leads out) fail the build instead of publishing it.

The hooks are called directly (a full build is tests/docs/test_site.py's)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.conftest import require_mkdocs
from tests.support import REPO


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    require_mkdocs()
    spec = importlib.util.spec_from_file_location("bcfg_docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def secret(tmp_path) -> Path:
    """A Markdown file, an error case and its pinned output outside the repository."""
    (tmp_path / "secret.md").write_text("# Secret\n\nthe machine's secret\n")
    (tmp_path / "leak.bcfg").write_text("the machine's secret\n")
    (tmp_path / "leak.expected").write_text("the machine's secret\n")
    return tmp_path


def _relative(target: Path, start: Path) -> str:
    return "../" * len(start.resolve().parts[1:]) + target.resolve().as_posix().lstrip("/")


def test_an_include_outside_the_repository_fails_the_build(hooks, secret):
    for name in (str(secret / "secret.md"), _relative(secret / "secret.md", REPO)):
        with pytest.raises(hooks.PluginError, match="is outside the repository"):
            hooks.include_markdown(name, "guides/page.md")


def test_an_error_case_outside_the_corpus_fails_the_build(hooks, secret):
    for name in (str(secret / "leak"), _relative(secret / "leak", REPO / "tests" / "errors")):
        with pytest.raises(hooks.PluginError, match="is not the name of a case of tests/errors"):
            hooks.error_markdown(name)


def test_a_symlink_leading_out_fails_the_build(hooks, secret, tmp_path, monkeypatch):
    """Inside a repository (here a copy of its layout), a symlink to a file outside it."""
    repo = tmp_path / "repo"
    errors = repo / "tests" / "errors"
    errors.mkdir(parents=True)
    (repo / "notes.md").symlink_to(secret / "secret.md")
    (errors / "leak.bcfg").symlink_to(secret / "leak.bcfg")
    (errors / "leak.expected").write_text("pinned\n")
    (errors / "folder").mkdir()
    (errors / "folder" / "main.bcfg").symlink_to(secret / "leak.bcfg")
    (errors / "folder.expected").write_text("pinned\n")
    monkeypatch.setattr(hooks, "REPO", repo)
    monkeypatch.setattr(hooks, "ERRORS", errors)
    with pytest.raises(hooks.PluginError, match="is outside the repository"):
        hooks.include_markdown("notes.md", "page.md")
    for name in ("leak", "folder"):
        with pytest.raises(hooks.PluginError, match="is outside tests/errors"):
            hooks.error_markdown(name)


def test_the_repositorys_own_files_are_still_shown(hooks):
    assert "bcfg" in hooks.include_markdown("ARCHITECTURE.md", "reference/architecture.md")
    case = sorted(p.stem for p in (REPO / "tests" / "errors").glob("*.expected"))[0]
    assert f'<a id="error-{case}"></a>' in hooks.error_markdown(case)
