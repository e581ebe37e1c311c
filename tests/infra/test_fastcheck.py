"""The fast paths: ``bcfg check`` without torch, the caches, and layout's black-identical output.

Each speed-up is only a shortcut to a result the slow path computes: these
tests pin that the shortcut is never taken when something changed (a spec, an
imported spec, a hand edit, the torch version, the generator) and that the
caches may vanish or rot at any time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.cli import main
from generator.config import find_project
from generator.infra import cache, fastcheck
from generator.infra.header import HEADER_MARK
from generator.infra.write import DOCS
from tests.support import REPO, scratch_project, tree

# The files a full generate writes: one module per backend and quantizer, the PT2E runtime,
# __init__.py, and the docs (a page per backend, the matrix and its HTML page).
GENERATED = (
    len(list((REPO / "generated").glob("*.py")))
    + len(list((REPO / "generated" / "_bcfg_pt2e").glob("*.py")))
    + len(DOCS.files(REPO / "docs"))
)


def _files(folder: Path) -> dict[str, bytes]:
    """Every generated file under ``folder`` by its relative path (caches left out)."""
    return {name: p.read_bytes() for name, p in tree(folder).items()}


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache folder (XDG_CACHE_HOME) that one full generate of a scratch project filled."""
    folder = tmp_path_factory.mktemp("warm")
    with pytest.MonkeyPatch.context() as monkeypatch:
        scratch_project(folder, monkeypatch)
        assert main(["generate"]) == 0
    return folder / "xdg"


@pytest.fixture
def project(tmp_path, monkeypatch, warm_cache):
    """A scratch project (pyproject, specs) with its own cache folder, as the working directory;
    the folder starts as a copy of ``warm_cache`` (its tree record is for another folder, so the
    project starts unverified), so that each test's first generate takes its modules from the
    cache instead of rendering them again: about half the time of this file."""
    root = scratch_project(tmp_path, monkeypatch)
    shutil.copytree(warm_cache, tmp_path / "xdg")
    return root


@pytest.fixture
def cold_project(tmp_path, monkeypatch):
    """``project`` with an empty cache folder, for the tests of what a generate puts in it."""
    return scratch_project(tmp_path, monkeypatch)


def _python(root: Path, code: str, *argv: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter in ``root``, with this repository's bcfg."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def verified(root: Path):
    p = find_project(root)
    return fastcheck.verified(p, p.spec_files(), p.out)


def generated_and_recorded(root: Path) -> None:
    assert main(["generate"]) == 0
    assert verified(root) is not None


def test_generate_records_the_tree_and_check_then_takes_the_fast_path(project, capsys):
    assert verified(project) is None
    generated_and_recorded(project)
    capsys.readouterr()
    assert main(["check"]) == 0
    assert f"{GENERATED} generated file(s) up to date" in capsys.readouterr().err


def test_fast_check_imports_neither_torch_nor_lark_jinja2_black(project):
    generated_and_recorded(project)
    code = (
        "import sys\n"
        "from generator.cli import main\n"
        "code = main(['check'])\n"
        "print(code, [m for m in ('torch', 'lark', 'jinja2', 'black') if m in sys.modules])\n"
    )
    out = _python(project, code)
    assert out.stdout.strip() == "0 []", out.stdout + out.stderr
    assert f"{GENERATED} generated file(s) up to date" in out.stderr


@pytest.mark.parametrize(
    ("name", "where"),
    [("x86.py", "body"), ("x86.py", "header"), ("_bcfg_pt2e/matcher.py", "body")],
)
def test_a_hand_edit_of_a_generated_file_is_caught(project, capsys, name, where):
    generated_and_recorded(project)
    target = project / "generated" / name
    text = target.read_text()
    if where == "body":
        target.write_text(text.replace("nn.Conv1d", "nn.Conv2d", 1).replace("!= 1", "!= 2", 1))
    else:
        target.write_text(text.replace("body=", "body=0", 1))
    assert verified(project) is None
    capsys.readouterr()
    assert main(["check"]) == 1
    out, err = capsys.readouterr()
    assert f"generated/{name}" in out
    assert f"generated/{name} was edited by hand" in err


@pytest.mark.parametrize("name", ["README.md", "index.html", "backends/onednn.md"])
def test_a_hand_edit_or_removal_of_a_docs_file_is_caught(project, capsys, name):
    generated_and_recorded(project)
    target = project / "docs" / name
    text = target.read_text()
    target.write_text(text.replace("quint8", "quint4x2", 1))
    assert verified(project) is None
    capsys.readouterr()
    assert main(["check"]) == 1
    assert f"docs/{name}" in capsys.readouterr().out
    target.unlink()
    assert verified(project) is None
    assert main(["check"]) == 1
    assert f"missing file: docs/{name}" in capsys.readouterr().out


def test_edits_of_a_spec_or_an_imported_spec_are_caught(project, capsys):
    generated_and_recorded(project)
    common = project / "specs" / "common.bcfg"
    original = common.read_text()
    common.write_text(original + "\n# a comment changes the input hashes\n")
    assert verified(project) is None
    # The full path finds the tree still up to date (a comment changes no
    # generated line) and records the new inputs.
    assert main(["check"]) == 0
    assert verified(project) is not None
    common.write_text(original.replace("bias: float}", "bias: float16}", 1))
    assert verified(project) is None
    assert main(["check"]) == 1
    common.write_text(original)
    assert main(["check"]) == 0
    assert verified(project) is not None


_USER_SPEC = """\
backend mine {
    pattern (nn.Linear, nn.ReLU) {
        dtypes: {input: quint8, output: quint8, weight: qint8, bias: float}
        fuser: my_kernels.fuse_linear_relu
        fused: nni.LinearReLU
    }
}
"""
_FUSER = "def fuse_linear_relu(is_qat, linear, relu):\n    return (linear, relu)\n"
# A run in a fresh process that can import the user's modules from the project folder; it
# says whether it parsed (a full run imports lark; the fast path imports nothing of bcfg's
# dependencies; with torch's facts shipped, neither imports torch for this spec).
_RUN = (
    "import sys\n"
    "from generator.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(code, 'lark' in sys.modules)\n"
)


def _run(root: Path, *argv: str) -> tuple[str, str]:
    out = _python(root, _RUN, *argv)
    return out.stdout.strip(), out.stderr


@pytest.mark.parametrize("where", ["module", "helper"])
def test_a_user_module_that_drops_a_function_is_not_up_to_date(tmp_path, monkeypatch, where):
    """Issue 17: the fast path re-verifies the allow-listed user modules a run resolved against."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["my_kernels"]\n')
    (root / "specs" / "mine.bcfg").write_text(_USER_SPEC)
    if where == "module":
        (root / "my_kernels.py").write_text(_FUSER)
        edited, dropped = root / "my_kernels.py", "def something_else():\n    pass\n"
    else:  # a local helper module decides what the allowed module defines
        flag = "import kernel_helpers\nif kernel_helpers.ENABLED:\n"
        (root / "my_kernels.py").write_text(flag + textwrap.indent(_FUSER, "    "))
        (root / "kernel_helpers.py").write_text("ENABLED = True\n")
        edited, dropped = root / "kernel_helpers.py", "ENABLED = False\n"
    message = "unknown symbol 'my_kernels.fuse_linear_relu'"
    assert _run(root, "generate")[0] == "0 True"
    assert _run(root, "check")[0] == "0 False"  # the fast path
    edited.write_text(dropped)
    for command in ("check", "generate"):
        out, err = _run(root, command)
        assert out.startswith("2 "), err
        assert "specs/mine.bcfg:4:16: error: " + message in err


@pytest.mark.parametrize("link", ["package", "module", "submodule"])
def test_a_symlink_pointed_at_another_version_is_not_up_to_date(tmp_path, monkeypatch, link):
    """The allowed package reached through a symlink (the package's folder, its module file,
    a submodule's file) that is then pointed at another version, which lacks the fuser: the
    fast check must not say "up to date" where the full check rejects the tree."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["my_kernels"]\n')
    (root / "specs" / "mine.bcfg").write_text(_USER_SPEC)
    versions = {}
    for version, text in (("v1", _FUSER), ("v2", "def something_else():\n    pass\n")):
        folder = tmp_path / "versions" / version
        if link == "module":
            folder.mkdir(parents=True)
            (folder / "my_kernels.py").write_text(text)
            versions[version] = folder / "my_kernels.py"
        elif link == "package":
            (folder / "my_kernels").mkdir(parents=True)
            (folder / "my_kernels" / "__init__.py").write_text(text)
            versions[version] = folder / "my_kernels"
        else:
            folder.mkdir(parents=True)
            (folder / "impl.py").write_text(text)
            versions[version] = folder / "impl.py"
    if link == "module":
        target = root / "my_kernels.py"
    elif link == "package":
        target = root / "my_kernels"
    else:
        (root / "my_kernels").mkdir()
        (root / "my_kernels" / "__init__.py").write_text("from .impl import *  # noqa\n")
        target = root / "my_kernels" / "impl.py"
    target.symlink_to(versions["v1"])
    assert _run(root, "generate")[0] == "0 True"
    assert _run(root, "check")[0] == "0 False"  # the fast path
    target.unlink()
    target.symlink_to(versions["v2"])
    out, err = _run(root, "check")
    assert out == "2 True", err  # the full path, which rejects the tree
    assert "unknown symbol 'my_kernels.fuse_linear_relu'" in err


def test_imports_outside_the_spec_folder_are_inputs(project):
    lib = project / "lib"
    lib.mkdir()
    (lib / "extra.bcfg").write_text("dtypes extra_set = {input: quint8, output: quint8}\n")
    spec = project / "specs" / "x86.bcfg"
    spec.write_text('import # the file after a comment\n  "../lib/extra.bcfg"\n' + spec.read_text())
    closure = [p.name for p in fastcheck.import_closure([spec])]
    assert "extra.bcfg" in closure and "common.bcfg" in closure
    generated_and_recorded(project)
    (lib / "extra.bcfg").write_text("dtypes extra_set = {input: qint8, output: qint8}\n")
    assert verified(project) is None


@pytest.mark.parametrize("name", ["old.py", "_bcfg_pt2e/old.py"])
def test_new_and_stale_files_are_caught(project, capsys, name):
    generated_and_recorded(project)
    stale = project / "generated" / name
    stale.write_text(HEADER_MARK + "specs/old.bcfg. DO NOT EDIT.\n")
    assert verified(project) is None
    assert main(["check"]) == 1
    stale.unlink()
    assert verified(project) is not None
    (project / "specs" / "new.bcfg").write_text(
        (project / "specs" / "my_backend.bcfg").read_text().replace("my_backend", "new_backend")
    )
    assert verified(project) is None


def test_a_torch_version_change_is_a_changed_input(project, monkeypatch):
    generated_and_recorded(project)
    real = cache.dist_version
    monkeypatch.setattr(
        cache, "dist_version", lambda name: "9.9.9" if name == "torch" else real(name)
    )
    assert verified(project) is None


def test_a_generator_change_is_a_changed_input(project, monkeypatch):
    generated_and_recorded(project)
    monkeypatch.setattr(cache, "fingerprint", lambda: "another generator")
    assert verified(project) is None


def test_the_cache_is_safe_to_delete_or_corrupt(project, tmp_path, capsys):
    generated_and_recorded(project)
    expected = _files(project / "generated")
    shutil.rmtree(tmp_path / "xdg")
    assert verified(project) is None
    assert main(["check"]) == 0  # the full path, which records again
    assert verified(project) is not None
    for entry in (tmp_path / "xdg" / "bcfg").rglob("*"):
        if entry.is_file():
            entry.write_bytes(
                b"\x00garbage" if entry.suffix != ".json" else b'{"key": "x", "value": ['
            )
    assert verified(project) is None
    shutil.rmtree(project / "generated")
    assert main(["generate"]) == 0
    assert _files(project / "generated") == expected
    os.environ["BCFG_NO_CACHE"] = "1"
    try:
        assert cache.cache_dir() is None and verified(project) is None
        assert main(["check"]) == 0
    finally:
        del os.environ["BCFG_NO_CACHE"]


def test_the_cache_lives_under_xdg_cache_home(cold_project, tmp_path):
    from generator.lang import parse

    parse._parser.cache_clear()  # built by an earlier test, with another cache folder
    generated_and_recorded(cold_project)
    kinds = {p.name for p in (tmp_path / "xdg" / "bcfg").iterdir()}
    assert {"tree", "module", "lark"} <= kinds


def test_cached_modules_are_byte_identical(cold_project, tmp_path):
    assert main(["generate"]) == 0
    first = _files(cold_project / "generated")
    modules = list((tmp_path / "xdg" / "bcfg" / "module").glob("*.json"))
    assert modules and all(
        json.loads(p.read_text())["value"] in {t.decode() for t in first.values()} for p in modules
    )
    shutil.rmtree(cold_project / "generated")
    assert main(["generate"]) == 0  # every module from the cache
    assert _files(cold_project / "generated") == first


def test_warnings_are_replayed_by_the_fast_path(project, capsys):
    spec = project / "specs" / "my_backend.bcfg"
    spec.write_text(spec.read_text() + "\ndtypes never_used = {input: quint8, output: quint8}\n")
    assert main(["generate"]) == 0
    full = capsys.readouterr().err
    assert "never_used" in full
    assert main(["check"]) == 0
    fast = capsys.readouterr().err
    assert verified(project) is not None
    assert [ln for ln in fast.splitlines() if "never_used" in ln] == [
        ln for ln in full.splitlines() if "never_used" in ln
    ]


def test_the_fingerprint_covers_every_module_and_template():
    """An edit anywhere in the package (sub-packages too) or its templates invalidates the cache."""
    covered = {path.resolve() for _, path in cache.fingerprint_files()}
    modules = set((REPO / "generator").rglob("*.py"))
    assert {p.resolve() for p in modules} <= covered
    assert any(p.parent.name == "semantics" for p in covered)  # a sub-package, not just the top
    assert (REPO / "templates" / "backend.py.jinja").resolve() in covered
    assert (REPO / "grammar" / "bcfg.lark").resolve() in covered
