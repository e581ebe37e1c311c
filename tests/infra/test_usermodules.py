"""``infra.usermodules``: where the project's own modules are found, and when a long-running
process must import them afresh (``Watch``, the language server's)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from generator.config import Project
from generator.infra import usermodules


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project allowing its package ``wpkg`` (a module and a helper it imports), importable."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    root = tmp_path / "proj"
    (root / "wpkg").mkdir(parents=True)
    (root / "wpkg" / "__init__.py").write_text("from .ops import fuse\n")
    (root / "wpkg" / "ops.py").write_text("import wpkg_helper\n\ndef fuse():\n    pass\n")
    (root / "wpkg_helper.py").write_text("ENABLED = True\n")
    project = Project(root, root / "specs", root / "generated", ("torch", "operator", "wpkg"))
    project.make_importable()
    yield project
    for name in [n for n in sys.modules if n.startswith("wpkg")]:
        del sys.modules[name]


def age(path: Path, seconds: int = 60) -> None:
    """Date the file back, as if it had been written before the process started."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns - seconds * 1_000_000_000))


def test_the_root_comes_first_on_the_path_whatever_was_there(project):
    root = str(project.root.resolve())
    sys.path.insert(3, root)
    sys.path.insert(0, "/nonexistent")
    project.make_importable()
    assert sys.path[0] == root and sys.path.count(root) == 1
    assert usermodules.found_at("wpkg") == str(project.root / "wpkg" / "__init__.py")


def test_a_watch_says_nothing_until_a_loaded_file_changes(project):
    for path in (project.root / "wpkg").iterdir():
        age(path)
    age(project.root / "wpkg_helper.py")
    watch = usermodules.Watch()
    assert watch.stale(project) == []
    importlib.import_module("wpkg")
    watch.note(project)
    assert watch.stale(project) == []
    assert watch.stale(project) == []
    # A helper the package imports, outside the package, is watched too.
    (project.root / "wpkg_helper.py").write_text("ENABLED = False\n")
    assert sorted(watch.stale(project)) == ["wpkg", "wpkg.ops", "wpkg_helper"]


def test_a_file_changed_just_before_it_was_listed_counts_as_changed(project):
    """The module may have been loaded from the text before the change: import it afresh."""
    watch = usermodules.Watch()
    assert watch.stale(project) == []
    importlib.import_module("wpkg")
    (project.root / "wpkg" / "ops.py").write_text("import wpkg_helper\n\ndef fuse2():\n    pass\n")
    watch.note(project)
    assert "wpkg.ops" in watch.stale(project)


def test_a_module_found_elsewhere_now_is_stale(project, tmp_path):
    """Another project's module of the same name, or a file shadowing the package."""
    for path in (project.root / "wpkg").iterdir():
        age(path)
    watch = usermodules.Watch()
    importlib.import_module("wpkg")
    watch.note(project)
    other = Project(tmp_path / "other", tmp_path / "other" / "specs", tmp_path, project.allow)
    (other.root / "wpkg").mkdir(parents=True)
    (other.root / "wpkg" / "__init__.py").write_text("")
    other.make_importable()
    stale = watch.stale(other)
    assert "wpkg" in stale
    usermodules.forget(stale)
    assert "wpkg" not in sys.modules
    assert importlib.import_module("wpkg").__file__ == str(other.root / "wpkg" / "__init__.py")


def test_a_module_imported_through_a_symlink_pointed_elsewhere_is_stale(project, tmp_path):
    """The symlink to a submodule pointed at another version (the same size and time too)."""
    versions = tmp_path / "versions"
    versions.mkdir()
    for version in ("v1", "v2"):
        text = "import wpkg_helper\n\ndef fuse():\n    pass\n"
        (versions / f"{version}.py").write_text(
            text if version == "v1" else text.replace("fuse", "fusd")
        )
        age(versions / f"{version}.py")
    info = (versions / "v1.py").stat()
    os.utime(versions / "v2.py", ns=(info.st_atime_ns, info.st_mtime_ns))
    ops = project.root / "wpkg" / "ops.py"
    ops.unlink()
    ops.symlink_to(versions / "v1.py")
    for path in (project.root / "wpkg_helper.py", project.root / "wpkg" / "__init__.py"):
        age(path)
    watch = usermodules.Watch()
    importlib.import_module("wpkg")
    watch.note(project)
    assert watch.stale(project) == []
    ops.unlink()
    ops.symlink_to(versions / "v2.py")
    assert "wpkg.ops" in watch.stale(project)
