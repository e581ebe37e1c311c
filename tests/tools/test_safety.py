"""Safety: specs are data, never code; odd inputs get clear errors; failed runs write nothing.

- a hostile backend name or string cannot inject code into a generated module;
- symbol resolution imports only allow-listed top-level modules;
- huge files, deep nesting, binary garbage, BOM/CRLF: a result or a located error;
- a run with any error writes nothing, and ``bcfg check`` never writes;
- an internal bug is one line and exit 3; colour follows NO_COLOR and the terminal.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.diagnostics import Diagnostic, SpecError, use_color
from generator.emit.backend_config import render_backend
from generator.lang.parse import MAX_SPEC_BYTES, parse_text
from generator.semantics.driver import resolve_specs
from generator.semantics.load import Loader
from generator.sources import Span
from tests import support
from tests.support import REPO, tree


def resolve(tmp_path: Path, text: str, allow=("torch", "operator")):
    spec = tmp_path / "t.bcfg"
    spec.write_text(text, encoding="utf-8")
    return resolve_specs(tmp_path, [spec], allow)


def errors(tmp_path: Path, text: str, allow=("torch", "operator")) -> list[str]:
    with pytest.raises(SpecError) as exc:
        resolve(tmp_path, text, allow)
    return [f"{d.span}: {d.message}" for d in exc.value.diagnostics if d.severity == "error"]


def run_cli(cwd: Path, *args: str) -> tuple[int, str]:
    code, _, err = support.run_cli(cwd, *args)
    return code, err


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for name, p in tree(folder).items()
    }


# ------------------------------------------------------------------ injection

HOSTILE = [
    "'); import os; os.system('touch PWNED') #",
    '"""; import os; os.system("touch PWNED"); """',
    "'''\n__import__('os').system('touch PWNED')\n'''",
    "\\'; raise SystemExit #",
    "{__import__('os').system('touch PWNED')}",
    "x\u2028y\u0000z\r\n# newline in a comment",
]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_hostile_backend_name_cannot_inject_code(tmp_path, i):
    """The backend's display name is emitted with repr: it comes back verbatim and runs nothing."""
    hostile = HOSTILE[i]
    escaped = hostile.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    (backend,) = resolve(
        tmp_path, f'backend evil "{escaped}" {{\n    pattern nn.ReLU {{}}\n}}\n'
    ).backends
    assert backend.name == hostile
    source = render_backend(backend)
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }
    assert not names & {"os", "system", "__import__", "SystemExit"}, names
    assert hostile in {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    imported = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    assert "os" not in imported
    path = tmp_path / "evil.py"
    path.write_text(source, encoding="utf-8")
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        module = _load(path, f"evil_{i}")
        config = module.get_evil_backend_config()
    finally:
        os.chdir(cwd)
    assert config.name == hostile
    assert not (tmp_path / "PWNED").exists()


def test_hostile_strings_elsewhere_are_refused_or_quoted(tmp_path):
    # A method name must be an identifier; an input name too.
    msgs = errors(tmp_path, 'backend b {\n  pattern "relu\\")\\nimport os" {}\n}\n')
    assert msgs == ["t.bcfg:2:11: 'relu\")\\nimport os' is not a method name"]
    msgs = errors(
        tmp_path,
        "backend b {\n  pattern F.linear { input_index: {\"weight': 1}; import os; x = {'\": 1} }\n}\n",
    )
    assert len(msgs) == 1 and "is not an input name" in msgs[0]
    # Names from the language's NAME token that are Python keywords are still safe to render.
    (b,) = resolve(
        tmp_path,
        "fuse class(import_, relu) = nni.ConvReLU2d(import_, relu)\n"
        "dtypes def = {input: quint8, output: quint8}\n"
        "backend b {\n  pattern (nn.Conv2d, nn.ReLU) { dtypes: def  fuser: class  fused: nni.ConvReLU2d }\n}\n",
    ).backends
    ast.parse(render_backend(b))


# ----------------------------------------------------------------- allow-list


def test_symbols_outside_the_allow_list_are_never_imported(tmp_path, monkeypatch):
    marker = tmp_path / "IMPORTED"
    (tmp_path / "bcfg_evil_mod.py").write_text(f"open({str(marker)!r}, 'w').close()\nthing = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    msgs = errors(
        tmp_path, "backend b {\n  pattern bcfg_evil_mod.thing {}\n  pattern os.system {}\n}\n"
    )
    assert msgs == [
        "t.bcfg:2:11: 'bcfg_evil_mod' is not an allowed module (allowed: torch, operator)",
        "t.bcfg:3:11: 'os' is not an allowed module (allowed: torch, operator)",
    ]
    assert not marker.exists() and "bcfg_evil_mod" not in sys.modules


def test_the_allow_list_is_extended_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["math"]\n')
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "m.bcfg").write_text(
        "backend m {\n  pattern math.floor { dtypes: {input: quint8} }\n  pattern os.getcwd {}\n}\n"
    )
    code, err = run_cli(tmp_path, "check")
    assert code == 2
    assert (
        "specs/m.bcfg:3:11: error: 'os' is not an allowed module (allowed: torch, operator, math)"
        in err
    )
    assert "math.floor" not in err


# --------------------------------------------------------------------- inputs


def test_a_10_mb_spec_gets_a_clear_error_fast(tmp_path):
    spec = tmp_path / "big.bcfg"
    spec.write_bytes(b"# padding\n" * (1_000_000))
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    (d,) = exc.value.diagnostics
    assert str(d.span) == "big.bcfg:1:1"
    assert d.message == f"the file is 9.5 MB; bcfg reads specs of at most {MAX_SPEC_BYTES >> 20} MB"


def test_a_spec_just_under_the_limit_works(tmp_path):
    body = "backend b {\n  pattern nn.ReLU {}\n}\n"
    spec = tmp_path / "big.bcfg"
    spec.write_text(body + "# " + "x" * (MAX_SPEC_BYTES - len(body) - 3) + "\n")
    assert spec.stat().st_size == MAX_SPEC_BYTES
    (b,) = resolve_specs(tmp_path, [spec]).backends
    assert len(b.configs) == 1


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_deep_nesting_is_an_error_not_a_recursion_error(depth):
    text = (
        "backend b { pattern complex "
        + "(operator.add, " * depth
        + "nn.ReLU"
        + ", nn.ReLU)" * depth
        + " {} }"
    )
    with pytest.raises(SpecError) as exc:
        parse_text(text, "deep.bcfg")
    assert "nested more than 32 deep" in exc.value.diagnostics[0].message


def test_nesting_up_to_the_limit_works(tmp_path):
    inner = "(operator.add, " * 31 + "nn.ReLU" + ", nn.ReLU)" * 31
    (b,) = resolve(tmp_path, f"backend b {{ pattern complex {inner} {{}} }}\n").backends
    ast.parse(render_backend(b))


@pytest.mark.parametrize(
    "data, where",
    [
        (b"backend b {\n  pattern nn.ReLU {}\n}\n\xff\xfe", "t.bcfg:4:1"),
        (b"backend b {\x00}", "t.bcfg:1:12"),
        (b"\xef\xbb\xbfbackend b {\r\n  pattern nn.ReLU {} @\r\n}\r\n", "t.bcfg:2:22"),
        (bytes(range(256)), "t.bcfg:3:115"),  # \r ends a line, as \n does
        (b"\r\r\rbackend", "t.bcfg:4:8"),
    ],
)
def test_odd_bytes_get_located_errors(tmp_path, data, where):
    spec = tmp_path / "t.bcfg"
    spec.write_bytes(data)
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    d = exc.value.diagnostics[0]
    assert str(d.span) == where, d.format()
    d.format()


def test_bom_crlf_and_empty_files_work(tmp_path):
    (b,) = resolve(tmp_path, "\ufeffbackend b {\r\n  pattern nn.ReLU {}\r\n}\r\n").backends
    assert b.configs[0].span.line == 2
    assert resolve(tmp_path, "").backends == []


# -------------------------------------------------------------- never written


def test_a_run_with_an_error_writes_nothing(project_copy):
    gen = project_copy / "generated"
    # Make every file stale, then break one spec: nothing at all may be written.
    for p in (project_copy / "specs").glob("*.bcfg"):
        p.write_text(p.read_text() + "\n# touched\n")
    spec = project_copy / "specs" / "x86.bcfg"
    spec.write_text(spec.read_text().replace("use bn(", "use bnn("))
    before = snapshot(gen)
    code, err = run_cli(project_copy, "generate")
    assert code == 2
    assert "specs/x86.bcfg:" in err and "unknown group 'bnn'" in err
    assert "bcfg: 1 error; nothing was written" in err
    assert snapshot(gen) == before


@pytest.mark.parametrize("edit", ["error", "stale", "warning"])
def test_check_never_writes(project_copy, edit):
    gen = project_copy / "generated"
    spec = project_copy / "specs" / "my_backend.bcfg"
    text = spec.read_text()
    if edit == "error":
        spec.write_text(text.replace("nn.Linear", "nn.Lineer", 1))
    elif edit == "stale":
        spec.write_text(text.replace("weight: qint8", "weight: quint8"))
    else:
        spec.write_text(text + "\ndtypes never_used = {input: quint8}\n")
    (gen / "x86.py").unlink()
    before = snapshot(gen)
    code, err = run_cli(project_copy, "check")
    assert code == {"error": 2, "stale": 1, "warning": 1}[edit], err
    if edit == "warning":
        assert "warning: dtype set 'never_used' is defined but never used" in err
    assert snapshot(gen) == before
    assert sorted(tree(gen)) == sorted(before)


# ----------------------------------------------------------- internal errors


def test_an_internal_error_is_one_line_and_exit_3(project_copy, monkeypatch):
    def boom(self, *args, **kwargs):
        raise RuntimeError("simulated bug\nwith a second line")

    monkeypatch.setattr(Loader, "load", boom)
    code, err = run_cli(project_copy, "generate")
    assert code == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        "bcfg: internal error: RuntimeError: simulated bug with a second line (test_safety.py:"
    )
    assert "please report it" in lines[0] and "Traceback" not in err


def test_no_traceback_from_the_real_command_on_a_broken_spec(project_copy):
    (project_copy / "specs" / "broken.bcfg").write_bytes(
        b"backend broken {\n  pattern (nn.ReLU, \xff"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "generator", "generate"],
        cwd=project_copy,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "specs/broken.bcfg:2:21: error: the file is not valid UTF-8 (byte 0xff)" in out.stderr


# --------------------------------------------------------------------- colour


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(_Tty()) is True
    assert use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(_Tty()) is False
    monkeypatch.setenv("NO_COLOR", "")  # https://no-color.org: only a non-empty value counts
    assert use_color(_Tty()) is True


def test_colour_wraps_but_does_not_change_the_text():
    d = Diagnostic("error", Span("x.bcfg", 1, 3, 1, 5), "bad", "fix it")
    plain = d.format(source="a bcd\n")
    coloured = d.format(source="a bcd\n", color=True)
    assert "\033[" in coloured and "\033[" not in plain
    import re

    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == plain
    assert plain == "x.bcfg:1:3: error: bad\n    1 | a bcd\n      |   ^^\nhint: fix it"
