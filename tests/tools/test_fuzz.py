"""Property-based fuzzing: mutated real specs never crash bcfg.

Hypothesis mutates the specs in specs/ (delete, duplicate or swap tokens and
lines, truncate, insert bytes) and runs parse + resolve in-process on a scratch
copy of the project. Whatever the input, the result is either resolved
backends that render to valid Python, or a ``SpecError`` whose every error has a ``file:line:column`` inside
the file; never another exception. A few mutants also go through the real CLI
in a subprocess, which must exit 0 or 2 without a traceback and, on 2, leave
``generated/`` byte for byte as it was.

``BCFG_FUZZ_EXAMPLES`` sets the number of mutants (default 1000).
"""

from __future__ import annotations

import ast
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from generator.diagnostics import SpecError
from generator.emit.backend_config import render_backend
from generator.lang.parse import parse_text
from generator.semantics.driver import resolve_specs
from tests.support import REPO

SPEC_NAMES = sorted(p.name for p in (REPO / "specs").glob("*.bcfg"))
ORIGINAL = {name: (REPO / "specs" / name).read_bytes() for name in SPEC_NAMES}
# A library file is resolved with the backends that use most of it.
IMPORTERS = {"common.bcfg": ["fbgemm.bcfg", "onednn.bcfg"]}
EXAMPLES = int(os.environ.get("BCFG_FUZZ_EXAMPLES", "1000"))

_TOKEN = re.compile(rb'"[^"\n]*"|[A-Za-z0-9_.${}]+|\S')
# Bytes worth inserting: structure, quotes, the odd keyword, invalid UTF-8, NUL, BOM, CR.
_INSERTS = [
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b",",
    b":",
    b"=",
    b'"',
    b"${",
    b"$",
    b"#",
    b"-",
    b"**",
    b"\\",
    b"pattern",
    b"override ",
    b"use ",
    b"for ",
    b"backend x {",
    b'import "common.bcfg"',
    b"\xff",
    b"\xc3",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\r",
    b"\r\n",
    b"\t",
    b"99999999999999999999",
    b"1e999",
    b"0",
    b"-1",
    b"nn.Conv2dd",
    b"os.system",
    b"MatchAllNode",
    b"pattern[7]",
]


def _tokens(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(data)]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutants(draw) -> tuple[str, bytes]:
    """A real spec with one to three mutations."""
    name = draw(st.sampled_from(SPEC_NAMES))
    data = ORIGINAL[name]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(
            st.sampled_from(
                [
                    "del_tok",
                    "dup_tok",
                    "swap_tok",
                    "del_line",
                    "dup_line",
                    "swap_line",
                    "truncate",
                    "insert",
                ]
            )
        )
        toks = _tokens(data)
        lines = _lines(data)
        if op.endswith("_tok") and toks:
            i = draw(st.integers(0, len(toks) - 1))
            a, b = toks[i]
            if op == "del_tok":
                data = data[:a] + data[b:]
            elif op == "dup_tok":
                data = data[:b] + b" " + data[a:b] + data[b:]
            else:
                j = draw(st.integers(0, len(toks) - 1))
                (a, b), (c, d) = sorted([toks[i], toks[j]])
                if b <= c:
                    data = data[:a] + data[c:d] + data[b:c] + data[a:b] + data[d:]
        elif op.endswith("_line"):
            i = draw(st.integers(0, len(lines) - 1))
            if op == "del_line":
                del lines[i]
            elif op == "dup_line":
                lines.insert(i, lines[i])
            else:
                j = draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif op == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif op == "insert":
            at = draw(st.integers(0, len(data)))
            what = draw(st.one_of(st.sampled_from(_INSERTS), st.binary(min_size=1, max_size=4)))
            data = data[:at] + what + data[at:]
    return name, data


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A copy of the project (pyproject, specs, generated) that mutants are written into."""
    root = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copytree(REPO / "generated", root / "generated")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _check_outcome(root: Path, name: str, data: bytes) -> None:
    """Resolve the mutant; only success or a well-located SpecError is acceptable."""
    specs = root / "specs"
    (specs / name).write_bytes(data)
    try:
        paths = [specs / name] + [specs / n for n in IMPORTERS.get(name, [])]
        try:
            result = resolve_specs(root, paths)
            diagnostics = result.warnings
            event("resolved")
            for backend in result.backends:  # what resolves must also render to valid Python
                ast.parse(render_backend(backend))
        except SpecError as exc:
            diagnostics = exc.diagnostics
            event("spec error")
            assert any(
                d.severity == "error" for d in diagnostics
            ), "a SpecError carries at least one error"
    finally:
        (specs / name).write_bytes(ORIGINAL[name])
    texts = {
        f"specs/{n}": (data if n == name else ORIGINAL[n]).decode("utf-8", "replace")
        for n in SPEC_NAMES
    }
    for d in diagnostics:
        if d.severity == "note":
            continue
        note(d.format())
        assert d.span is not None, f"no file:line:column for: {d.message}"
        assert d.span.file in texts, d.span.file
        text = texts[d.span.file]
        assert 1 <= d.span.line <= text.count("\n") + 1, d.span
        assert d.span.column >= 1, d.span
        first = d.format().split("\n", 1)[0]
        assert first.startswith(
            f"{d.span.file}:{d.span.line}:{d.span.column}: {d.severity}: "
        ), first


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(mutant=mutants())
def test_mutated_specs_never_crash(scratch, mutant):
    name, data = mutant
    _check_outcome(scratch, name, data)


@settings(max_examples=300, deadline=None, database=None)
@given(
    text=st.one_of(
        st.text(max_size=200), st.text(alphabet='{}()[],:=."$#-*/ \nabpqr0159_', max_size=200)
    )
)
def test_arbitrary_text_parses_or_fails_cleanly(text):
    """The parser alone, on any text: a Spec or one located SpecError."""
    try:
        parse_text(text, "t.bcfg")
    except SpecError as exc:
        for d in exc.diagnostics:
            assert d.span is not None and d.span.line >= 1 and d.span.column >= 1
            d.format()


def test_generated_is_untouched_by_in_process_fuzzing(scratch):
    assert _snapshot(scratch / "generated") == _snapshot(REPO / "generated")


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cli_on_mutants_writes_nothing_on_error(scratch, seed):
    """The real command on a few mutants (fixed seeds): exit 0 or 2, no traceback, nothing written on 2."""
    rng = random.Random(seed)
    for _ in range(50):  # find a mutant that is an error, so that "nothing written" is tested
        name = rng.choice(SPEC_NAMES)
        data = bytearray(ORIGINAL[name])
        toks = _tokens(bytes(data))
        a, b = toks[rng.randrange(len(toks))]
        del data[a:b]
        (scratch / "specs" / name).write_bytes(bytes(data))
        try:
            resolve_specs(
                scratch,
                [scratch / "specs" / name]
                + [scratch / "specs" / n for n in IMPORTERS.get(name, [])],
            )
        except SpecError:
            break
        finally:
            (scratch / "specs" / name).write_bytes(ORIGINAL[name])
    before = _snapshot(scratch / "generated")
    (scratch / "specs" / name).write_bytes(bytes(data))
    try:
        out = _cli(scratch, "generate")
    finally:
        (scratch / "specs" / name).write_bytes(ORIGINAL[name])
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    assert out.returncode == 2, out.stderr
    assert re.search(
        r"^specs/[a-z_0-9]+\.bcfg:\d+:\d+: error: ", out.stderr, re.MULTILINE
    ), out.stderr
    assert "nothing was written" in out.stderr
    assert _snapshot(scratch / "generated") == before
