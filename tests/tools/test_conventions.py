"""Habits of good tools: the conventions of black, ruff and buf, and an environment that is told.

--version; -q and -v; --output-format full|concise|github; ``bcfg fmt -`` and
``--diff``; the project root found from the files named, not the working
directory; unknown ``[tool.bcfg]`` keys; an unsupported torch; output bytes
that do not depend on the locale; a closed pipe.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli
from generator.config import TORCH_VERIFIED, torch_problem
from tests.support import REPO
from tests.support import run_cli as run

# Warning-free (a pattern without dtypes is warned about): outputs stay what each test expects.
SPEC = (
    "backend {name} {{\n    pattern nn.ReLU {{ dtypes: {{input: quint8, output: quint8}} }}\n}}\n"
)


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None):
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})},
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.bcfg]\nspecs = "specs"\nout = "generated"\n')
    (root / "specs" / "a.bcfg").write_text(SPEC.format(name="a"))
    return root


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("bcfg 0.") and "torch 2." in out and "Python 3." in out


def test_quiet_and_verbose_before_or_after_the_command(project):
    code, _, err = run(project, "-q", "generate")
    assert code == 0 and err == ""
    (project / "specs" / "a.bcfg").write_text(SPEC.format(name="a") + "dtypes unused = {}\n")
    code, _, err = run(project, "generate", "--quiet")
    assert code == 0 and err == "", "warnings and progress are quiet too"
    code, _, err = run(project, "check", "-v")
    assert code == 0
    assert f"bcfg: project {project.resolve()}: specs in specs/, output in generated/" in err
    (project / "specs" / "a.bcfg").write_text("backend a {\n")
    code, _, err = run(project, "-q", "check")
    assert code == 2 and "specs/a.bcfg:1:12: error: " in err, "errors are never quiet"


def test_output_formats(project):
    (project / "specs" / "a.bcfg").write_text("backend a {\n    pattern nn.Relu {}\n}\n")
    code, _, err = run(project, "check", "--output-format", "github")
    assert code == 2
    assert err.splitlines()[0] == (
        "::error file=specs/a.bcfg,line=2,col=13,endLine=2,endColumn=20,title=bcfg::"
        "unknown symbol 'torch.nn.Relu'%0Ahint: did you mean 'nn.ReLU'?"
    )
    code, _, err = run(project, "--output-format", "concise", "check")
    assert err.splitlines()[0] == (
        "specs/a.bcfg:2:13: error: unknown symbol 'torch.nn.Relu' (hint: did you mean 'nn.ReLU'?)"
    )
    (project / "specs" / "a.bcfg").write_text(SPEC.format(name="a"))
    assert run(project, "generate")[0] == 0
    (project / "specs" / "a.bcfg").write_text(SPEC.format(name="a").replace("ReLU", "ReLU6"))
    code, out, _ = run(project, "check", "--output-format", "github")
    assert code == 1
    assert (
        "::error file=generated/a.py,title=bcfg::generated/a.py is out of date; run bcfg generate"
        in out
    )


def test_fmt_stdin_to_stdout_and_diff(project):
    messy = "backend   a {pattern nn.ReLU {dtypes:{input:quint8,output:quint8}}}\n"
    code, out, err = run(project, "fmt", "-", stdin=messy)
    assert (code, out, err) == (0, SPEC.format(name="a"), "")
    code, out, _ = run(project, "fmt", "--check", "-", stdin=messy)
    assert (code, out) == (1, "")
    code, out, _ = run(
        project, "fmt", "--diff", "-", "--stdin-filename", "specs/x.bcfg", stdin=messy
    )
    assert code == 1 and out.startswith("--- specs/x.bcfg (original)\n+++ specs/x.bcfg\n")
    code, out, err = run(
        project, "fmt", "-", "--stdin-filename", "specs/x.bcfg", stdin="backend a {"
    )
    assert code == 2 and out == ""
    assert err.startswith(
        "specs/x.bcfg:1:12: error: expected '}' to close the backend opened at 1:1"
    )
    (project / "specs" / "a.bcfg").write_text(messy)
    code, out, _ = run(project, "fmt", "--diff")
    assert code == 1 and "would reformat specs/a.bcfg\n--- specs/a.bcfg (original)" in out
    assert (project / "specs" / "a.bcfg").read_text() == messy, "--diff writes nothing"


@pytest.mark.parametrize("size, said", [(3 << 20, "3.0 MB"), ((1 << 20) + 1, "1.0 MB")])
def test_fmt_stdin_says_the_real_size_of_an_input_too_large(project, size, said):
    done = _cli(project, "fmt", "-", stdin=b"#" * size)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().startswith(
        f"<stdin>:1:1: error: the file is {said}; bcfg reads specs of at most 1 MB"
    )


def test_fmt_stdin_bytes_are_the_file_bytes(project):
    """Editors get exactly what `bcfg fmt` would write, whatever the locale."""
    messy = 'backend a "naïve ✓" {pattern nn.ReLU {}}\n'.encode()
    done = _cli(project, "fmt", "-", env={"LC_ALL": "C", "PYTHONUTF8": "0"}, stdin=messy)
    assert done.returncode == 0, done.stderr
    (project / "specs" / "a.bcfg").write_bytes(messy)
    assert run(project, "fmt")[0] == 0
    assert done.stdout == (project / "specs" / "a.bcfg").read_bytes()


def test_the_project_root_comes_from_the_files_named(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run(elsewhere, "generate", str(project / "specs" / "a.bcfg"))
    assert code == 0, err
    assert (project / "generated" / "a.py").is_file()
    assert not (elsewhere / "generated").exists()
    other = tmp_path / "other"
    (other / "specs").mkdir(parents=True)
    (other / "pyproject.toml").write_text("[tool.bcfg]\n")
    (other / "specs" / "b.bcfg").write_text(SPEC.format(name="b"))
    code, _, err = run(
        elsewhere, "generate", str(project / "specs" / "a.bcfg"), str(other / "specs" / "b.bcfg")
    )
    assert code == 2 and "belong to two projects" in err


def test_unknown_tool_bcfg_keys_are_errors_with_did_you_mean(project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.bcfg]\nspec = "specs"\nout = 3\nallow = ["os.path"]\n'
    )
    code, _, err = run(project, "check")
    assert code == 2
    assert err.splitlines()[:4] == [
        "pyproject.toml:5:1: error: unknown key 'spec' in [tool.bcfg]",
        '    5 | spec = "specs"',
        "      | ^^^^",
        "hint: did you mean 'specs'?",
    ]
    assert "pyproject.toml:6:7: error: [tool.bcfg] out must be a folder name (a string)" in err
    assert (
        "pyproject.toml:7:9: error: [tool.bcfg] allow must be a list of top-level module names"
        in err
    )
    (project / "pyproject.toml").write_text("[tool.bcfg]\nspecs = \n")
    code, _, err = run(project, "check")
    assert code == 2 and err.startswith(
        "pyproject.toml:2:9: error: pyproject.toml is not valid TOML"
    )


def test_examples_set_a_backend_apart_and_a_bad_one_is_located(project):
    """[tool.bcfg] examples: the docs show those backends apart; a value of the wrong type is
    an error at the key's value in pyproject.toml, a name no spec defines a warning there."""
    (project / "specs" / "b.bcfg").write_text(SPEC.format(name="b"))
    toml = '[tool.bcfg]\nspecs = "specs"\nexamples = ["b"]\n'
    (project / "pyproject.toml").write_text(toml)
    code, _, err = run(project, "generate")
    assert code == 0, err
    readme = (project / "docs" / "README.md").read_text()
    assert "### Examples" in readme and "| a (FX) | b (example, FX) |" in readme
    (project / "pyproject.toml").write_text(toml.replace('["b"]', '"b"'))
    code, _, err = run(project, "check")
    assert code == 2
    assert err.startswith(
        "pyproject.toml:3:12: error: [tool.bcfg] examples must be a list of backend names"
    )
    # A name no spec defines (a spec removed, its name left behind): a warning at the list.
    (project / "pyproject.toml").write_text(toml)
    (project / "specs" / "b.bcfg").unlink()
    code, _, err = run(project, "generate")
    assert code == 0, err
    assert (
        "pyproject.toml:3:12: warning: [tool.bcfg] examples names 'b', which no spec defines; "
        "the backends are a"
    ) in err
    assert not (project / "docs" / "backends" / "b.md").exists()


@pytest.mark.parametrize(
    "version, ok",
    [
        ("2.13.0", True),
        ("2.13.0+cpu", True),
        ("2.14.1", True),
        ("2.12.1", False),
        ("2.15.0", False),
        (None, False),
    ],
)
def test_supported_torch_versions(version, ok):
    problem = torch_problem(version)
    assert (problem is None) == ok, problem
    if not ok:
        assert f"verified: {', '.join(TORCH_VERIFIED)}" in problem
        assert "pip install torch==2.13.0" in problem


def test_an_unsupported_torch_is_a_clear_error(project, monkeypatch):
    from generator.infra import cache

    monkeypatch.setattr(cache, "dist_version", lambda name: "2.12.0" if name == "torch" else None)
    code, _, err = run(project, "generate")
    assert code == 2
    assert err.startswith(
        "bcfg: this environment has torch 2.12.0; bcfg supports torch >=2.13,<2.15"
    )


def test_output_bytes_do_not_depend_on_the_locale(tmp_path):
    """A non-ASCII spec file name under a POSIX locale without UTF-8 mode: the same bytes."""
    trees = {}
    for label, env in {
        "utf8": {"LC_ALL": "C.UTF-8"},
        "posix": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
    }.items():
        root = tmp_path / label
        (root / "specs").mkdir(parents=True)
        (root / "pyproject.toml").write_text("[tool.bcfg]\n")
        (root / "specs" / "spéc_ü.bcfg").write_text(SPEC.format(name="y"))
        done = _cli(root, "generate", env=env)
        assert done.returncode == 0, done.stderr
        assert b"internal error" not in done.stderr
        trees[label] = {p.name: p.read_bytes() for p in (root / "generated").iterdir()}
        done = _cli(root, "check", env=env)
        assert done.returncode == 0, done.stderr
    assert trees["utf8"] == trees["posix"]
    assert trees["utf8"]["y.py"].startswith("# @generated by bcfg from specs/spéc_ü.bcfg.".encode())


def test_a_spec_name_that_is_not_utf8_is_an_error(tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    (tmp_path / "specs" / os.fsdecode(b"lat\xe9.bcfg")).write_text(SPEC.format(name="z"))
    done = _cli(tmp_path, "generate")
    assert done.returncode == 2
    assert b"its file name is not valid UTF-8" in done.stderr


def test_a_closed_pipe_is_not_an_internal_error(project):
    (project / "specs" / "a.bcfg").write_text(SPEC.format(name="a"))
    assert run(project, "generate")[0] == 0
    (project / "specs" / "a.bcfg").write_text(SPEC.format(name="a") * 1 + "\n" * 3)
    (project / "specs" / "b.bcfg").write_text(
        "".join(SPEC.format(name=f"b{i}") for i in range(300))
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "check"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=300)
    assert b"internal error" not in err and b"Traceback" not in err
