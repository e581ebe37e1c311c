"""Odd file systems: nothing hangs, nothing is read without bound, output is never lost.

Each case runs the real command in-process on a scratch project and expects a
located error (exit 2) or success, never an internal error, a hang or a
removed module: FIFOs and devices among the specs or imported, symbolic link
loops, an unreadable spec folder, CR-only line ends, deep chains of
definitions, imports and aliases.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.semantics.definitions import MAX_DEFINITION_DEPTH
from generator.semantics.evaluate import MAX_ALIAS_CHAIN
from generator.semantics.load import MAX_IMPORT_DEPTH
from tests.support import run_cli

SPEC = "backend {name} {{\n    pattern nn.ReLU {{}}\n}}\n"


def run(root: Path, *args: str) -> tuple[int, str]:
    code, _, err = run_cli(root, *args)
    return code, err


def _chain(first: str, link: str, n: int, use: str) -> str:
    """A spec whose definition ``n - 1`` is defined through every one before it."""
    return first + "".join(link.format(i=i, j=i - 1) for i in range(1, n)) + use


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nspecs = "specs"\nout = "generated"\n')
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.bcfg").write_text(SPEC.format(name="a"))
    assert run(tmp_path, "generate")[0] == 0
    return tmp_path


def _generated(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "generated").glob("*.py"))}


def test_a_fifo_among_the_specs_is_an_error_not_a_hang(project):
    os.mkfifo(project / "specs" / "f.bcfg")
    before = _generated(project)
    for command in ("generate", "check", "fmt"):
        code, err = run(project, command)
        assert code == 2, err
        assert "specs/f.bcfg" in err and "it is not a regular file" in err, err
    assert _generated(project) == before


def test_a_spec_linked_to_dev_zero_and_an_import_of_it(project):
    (project / "specs" / "z.bcfg").symlink_to("/dev/zero")
    code, err = run(project, "generate")
    assert code == 2 and "cannot read /dev/zero: it is not a regular file" in err, err
    (project / "specs" / "z.bcfg").unlink()
    (project / "specs" / "zero.bcfg").symlink_to("/dev/zero")
    (project / "specs" / "b.bcfg").write_text('import "zero.bcfg"\n' + SPEC.format(name="b"))
    (project / "specs" / "zero.bcfg").rename(project / "lib_zero")
    (project / "specs" / "b.bcfg").write_text('import "../lib_zero"\n' + SPEC.format(name="b"))
    code, err = run(project, "generate")
    assert code == 2 and "only .bcfg specs can be imported" in err, err
    (project / "specs" / "b.bcfg").write_text('import "../zero.bcfg"\n' + SPEC.format(name="b"))
    (project / "zero.bcfg").symlink_to("/dev/zero")
    code, err = run(project, "generate")
    assert code == 2, err
    assert "specs/b.bcfg:1:1: error: cannot read /dev/zero: it is not a regular file" in err, err


def test_symbolic_link_loops(project):
    (project / "specs" / "loop.bcfg").symlink_to("loop.bcfg")
    code, err = run(project, "generate")
    assert code == 2 and "specs/loop.bcfg:1:1: error: cannot read specs/loop.bcfg: " in err, err
    (project / "specs" / "loop.bcfg").unlink()
    (project / "specs" / "b.bcfg").write_text('import "loop2.bcfg"\n' + SPEC.format(name="b"))
    (project / "specs" / "loop2.bcfg").symlink_to("loop3.bcfg")
    (project / "specs" / "loop3.bcfg").symlink_to("loop2.bcfg")
    code, err = run(project, "generate")
    assert code == 2 and "specs/b.bcfg:1:1: error: cannot read specs/loop2.bcfg: " in err, err
    assert "internal error" not in err


def test_an_unreadable_spec_folder_never_removes_output(project, monkeypatch):
    before = _generated(project)
    real = os.scandir

    def unreadable(path="."):
        if Path(path).name == "specs":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", unreadable)  # root can read any folder: simulated
    for command in ("generate", "check"):
        code, err = run(project, command)
        assert code == 2, err
        assert "error: cannot read the spec folder specs/: Permission denied" in err
    assert _generated(project) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder; the simulated case runs")
def test_an_unreadable_spec_folder_for_real(project):
    before = _generated(project)
    (project / "specs").chmod(0)
    try:
        code, err = run(project, "generate")
    finally:
        (project / "specs").chmod(0o755)
    assert code == 2 and "cannot read the spec folder specs/" in err
    assert _generated(project) == before


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_cr_crlf_and_lf_all_work(project, newline):
    text = "# a leading comment\n" + SPEC.format(name="a")
    (project / "specs" / "a.bcfg").write_text(text)
    assert run(project, "generate")[0] == 0
    (project / "specs" / "a.bcfg").write_bytes(text.replace("\n", newline).encode())
    code, err = run(project, "check")
    assert code == 0, err  # the same module as from the LF spec: nothing is lost to the comment
    code, err = run(project, "fmt", "--check")
    assert code == (0 if newline == "\n" else 1), err


# A chain of 2,000 definitions or aliases, each defined through the one before.
N_CHAIN = 2000
CHAINS = {
    "definitions": (
        ("dtypes d0 = {input: quint8}\n", "dtypes d{i} = d{j}\n"),
        f"backend c {{\n    pattern nn.ReLU {{ dtypes: d{N_CHAIN - 1} }}\n}}\n",
        f"definitions nest more than {MAX_DEFINITION_DEPTH} deep",
    ),
    "aliases": (
        ("alias a0 = torch.nn\n", "alias a{i} = a{j}\n"),
        f"backend c {{\n    pattern a{N_CHAIN - 1}.ReLU {{}}\n}}\n",
        f"aliases name aliases more than {MAX_ALIAS_CHAIN} deep",
    ),
}


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_long_chains_of_definitions_and_aliases(project, kind):
    (first, link), use, message = CHAINS[kind]
    (project / "specs" / "c.bcfg").write_text(_chain(first, link, N_CHAIN, use))
    code, err = run(project, "generate", "specs/c.bcfg")
    assert code == 2 and message in err, err


def test_long_chains_of_imports(project):
    specs = project / "specs"
    (specs / "i.bcfg").write_text('import "lib/i0.bcfg"\n' + SPEC.format(name="i"))
    (specs / "lib").mkdir()
    for i in range(N_CHAIN):
        last = i == N_CHAIN - 1
        (specs / "lib" / f"i{i}.bcfg").write_text("" if last else f'import "i{i + 1}.bcfg"\n')
    code, err = run(project, "generate", "specs/i.bcfg")
    assert code == 2 and f"imports nest more than {MAX_IMPORT_DEPTH} deep" in err, err


def test_short_alias_chains_work(project):
    """An alias may name an alias, the built-in ones included."""
    (project / "specs" / "al.bcfg").write_text(
        "alias q = nnq\nalias qd = q.dynamic\nbackend al {\n    pattern qd.Linear {}\n}\n"
    )
    code, err = run(project, "generate", "specs/al.bcfg")
    assert code == 0, err
    assert "import torch.ao.nn.quantized.dynamic" in (project / "generated" / "al.py").read_text()
