"""The TextMate grammar, run by vscode-tmgrammar-test: VS Code's own tokenizer and regex engine.

``vscode-tmgrammar-test`` (a dev dependency of ``editors/vscode``, installed by
``.ci/run`` with ``npm ci``) tokenizes test files with vscode-textmate and
vscode-oniguruma, the engine VS Code uses, and checks scope assertions written
under each source line. Two sets of test files are written here:

* hand-written cases, one or more assertions per construct (keys and keywords,
  declared names, holes, dtypes after a dot, escapes, illegal characters);
* every token of every spec in the repository and of every error-corpus input
  that parses, with the scope the compiler's own lexer says it has
  (``highlight_oracle``), and never ``invalid.illegal``.

Without Node.js or the installed tool the tests are skipped with the command
to install it, except in CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.lang.highlight import textmate_grammar
from tests.lang import highlight_oracle as oracle
from tests.support import REPO

EXTENSION = REPO / "editors" / "vscode"
TOOL = EXTENSION / "node_modules" / ".bin" / "vscode-tmgrammar-test"
INVALID = "invalid.illegal.character.bcfg"
INSTALL = "npm ci --prefix editors/vscode"


def _tool() -> Path:
    if shutil.which("node") and TOOL.is_file():
        return TOOL
    reason = f"vscode-tmgrammar-test is not installed: run `{INSTALL}` (needs Node.js and npm)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


# (source line, [(context, scopes)]): ``context`` is a piece of the line with the part to
# check between bars ("torch.|ao|" checks ``ao`` after ``torch.``); without bars, all of it.
CASES: list[tuple[str, list[tuple[str, str]]]] = [
    (
        'import "common.bcfg"',
        [("import", "keyword.declaration"), ('"common.bcfg"', "string.quoted.double")],
    ),
    (
        "alias nnqd = torch.ao.nn.quantized.dynamic",
        [
            ("alias", "keyword.declaration"),
            ("nnqd", "entity.name.type.alias"),
            ("=", "keyword.operator.assignment"),
            ("torch|.|", "punctuation.accessor.dot"),
            (".|nn|", "variable.other - support.module.bcfg"),
        ],
    ),
    (
        "dtypes d = {input: quint8, output: float, bias: float, dynamic: true}  # trailing",
        [
            ("dtypes", "keyword.declaration"),
            ("|d| =", "entity.name.type.dtypes"),
            ("input", "variable.other.property"),
            ("input|:|", "punctuation.separator.key-value"),
            ("quint8", "support.type.dtype"),
            ("true", "constant.language.boolean"),
            ("# trailing", "comment.line.number-sign"),
        ],
    ),
    (
        "constraint c = qint8 {scale_min: 2 ** -12, scale: 1.0 / 256.0}",
        [
            ("constraint", "keyword.declaration"),
            ("qint8", "support.type.dtype"),
            ("|2| **", "constant.numeric.integer"),
            ("**", "keyword.operator.arithmetic"),
            ("|-|12", "keyword.operator.arithmetic"),
            ("1.0", "constant.numeric.float"),
            ("1.0 |/|", "keyword.operator.arithmetic"),
        ],
    ),
    (
        "fuse f(add, (bn, conv), _) eval_only = nni.ConvAdd2d(conv, add)",
        [
            ("fuse", "keyword.declaration"),
            ("|f|(", "entity.name.function.fuse"),
            ("eval_only", "storage.modifier"),
            ("nni", "support.module"),
            ("ConvAdd2d", "variable.other"),
        ],
    ),
    ("group conv(ds, n) {", [("conv", "entity.name.function.group")]),
    (
        "    pattern nn.Conv${n}d { dtypes: ds  root: nn.Conv${n}2d }",
        [
            ("pattern", "keyword.control"),
            ("${", "punctuation.section.interpolation.begin"),
            ("${|n|}", "variable.other.interpolated"),
            ("${n|}|", "punctuation.section.interpolation.end"),
            ("}|d| {", "variable.other"),
            ("}|2d|", "variable.other - constant.numeric.integer.bcfg"),
            ("dtypes", "variable.other.property - keyword.declaration.bcfg"),
        ],
    ),
    (
        "    for relu in [nn.ReLU, F.relu] { pattern (F.conv${n}d, relu) { dtypes: ds } }",
        [("for", "keyword.control"), ("relu |in|", "keyword.control")],
    ),
    ("}", []),
    (
        'backend b "b_name" {',
        [("backend", "keyword.declaration"), ("|b| ", "entity.name.namespace.backend")],
    ),
    ("    use conv(d)", [("use", "keyword.control"), ("conv", "entity.name.function.group")]),
    (
        "    override pattern complex (operator.add, nn.Conv2d, MatchAllNode) {",
        [
            ("override", "keyword.control"),
            ("complex", "keyword.control"),
            ("MatchAllNode", "support.class"),
            ("operator", "variable.other"),
        ],
    ),
    (
        "        observation: shared_observer",
        [
            ("observation", "variable.other.property"),
            ("shared_observer", "support.constant.observation"),
        ],
    ),
    ("        dtypes: constrain(d, c)", [("constrain", "support.function.builtin")]),
    ("        fuser: sequential(nni.ConvReLU2d)", [("sequential", "support.function.builtin")]),
    (
        "        root_node: pattern[1][0]",
        [
            ("pattern", "variable.language.pattern - keyword.control.bcfg"),
            ("[|1|]", "constant.numeric.integer"),
        ],
    ),
    ("    }", []),
    (
        '    pattern "relu_" { dtypes: torch.float32 }',
        [
            ('|"|relu', "punctuation.definition.string.begin"),
            ("float32", "variable.other - support.type.dtype.bcfg"),
        ],
    ),
    ("}", []),
    (
        "dtypes pattern_ds = {dtypes_x: quint8} for patterns",
        [
            ("pattern_ds", "entity.name.type.dtypes"),
            ("dtypes_x", "variable.other.property"),
            ("patterns", "variable.other"),
        ],
    ),
    ("dtypes bad = {input: quint8 @}", [("@", "invalid.illegal.character")]),
    (
        'dtypes s = {input: "esc \\" still string"}',
        [
            ('\\"', "string.quoted.double.bcfg constant.character.escape"),
            ("still", "string.quoted.double"),
        ],
    ),
    ('dtypes u = {input: "unterminated', [("unterminated", "string.quoted.double")]),
    ("dtypes v = {input: quint8}", [("quint8", "support.type.dtype - string.quoted.double.bcfg")]),
]


def _caret(col: int, width: int, scopes: str) -> str:
    """An assertion line: carets under columns col..col+width (``#<--`` at column 0)."""
    if col == 0:
        return "#<" + "-" * width + " " + scopes
    return "#" + " " * (col - 1) + "^" * width + " " + scopes


def _scopes(text: str) -> str:
    """``a.b - c.d.bcfg`` with the suffix added to the first scope (exclusions carry their own)."""
    head, _, rest = text.partition(" - ")
    words = head.split()
    words[-1] = words[-1] + ".bcfg"
    return " ".join(words) + (f" - {rest}" if rest else "")


def hand_written() -> str:
    out = ['# SYNTAX TEST "source.bcfg" "hand-written: one assertion per construct"']
    for src, marks in CASES:
        out.append(src)
        for context, scopes in marks:
            plain = context.replace("|", "")
            at = src.index(plain)
            if "|" in context:
                left, mid, _ = context.split("|")
                at, width = at + len(left), len(mid)
            else:
                width = len(plain)
            out.append(_caret(at, width, _scopes(scopes)))
    return "\n".join(out) + "\n"


def every_token(name: str, text: str) -> tuple[str, int]:
    """A test file asserting the oracle's scope for every token of ``text``; and how many."""
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        if re.match(r"#\s*(\^|<~*-)", line):
            raise AssertionError(f"{name}:{i}: a comment that would read as an assertion line")
    marks: dict[int, list[str]] = {}
    count = 0
    for tok in oracle.tokens(text):
        scope = oracle.expected_scope(tok)
        scopes = f"{scope}.bcfg - {INVALID}" if scope else f"- {INVALID}"
        width = len(tok.text.rstrip("\r"))
        marks.setdefault(tok.line, []).append(_caret(tok.column - 1, width, scopes))
        count += 1
    out = [f'# SYNTAX TEST "source.bcfg" "{name}, every token"']
    for i, line in enumerate(lines, start=1):
        out.append(line.rstrip("\r"))
        out.extend(marks.get(i, []))
    return "\n".join(out) + "\n", count


def _run(tool: Path, package: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tool), "--config", str(package), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def test_files(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("tmgrammar")
    files = [folder / "hand_written.bcfg"]
    files[0].write_text(hand_written(), encoding="utf-8")
    total = 0
    for name, text in oracle.corpus():
        body, n = every_token(name, text)
        total += n
        path = folder / (name.replace("/", "__"))
        path.write_text(body, encoding="utf-8")
        files.append(path)
    assert total > 3000  # every token of every spec, not a sample
    return files


def test_the_grammar_passes_every_assertion(test_files):
    tool = _tool()
    run = _run(tool, EXTENSION / "package.json", test_files)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    assert len(test_files) > 40


@pytest.mark.parametrize(
    "scope", ["support.type.dtype", "variable.other.property", "keyword.control"]
)
def test_a_grammar_without_one_rule_fails(tmp_path, test_files, scope):
    """The check can fail: drop the rules of one scope and the tool must report it."""
    tool = _tool()
    grammar = textmate_grammar()
    patterns = grammar["patterns"]
    assert isinstance(patterns, list)
    kept = [p for p in patterns if p.get("name") != f"{scope}.bcfg"]
    assert len(kept) < len(patterns)
    grammar["patterns"] = kept
    (tmp_path / "g.json").write_text(json.dumps(grammar), encoding="utf-8")
    package = {
        "contributes": {
            "languages": [{"id": "bcfg", "extensions": [".bcfg"]}],
            "grammars": [{"language": "bcfg", "scopeName": "source.bcfg", "path": "./g.json"}],
        }
    }
    (tmp_path / "package.json").write_text(json.dumps(package), encoding="utf-8")
    run = _run(tool, tmp_path / "package.json", test_files)
    assert run.returncode != 0
    assert scope in run.stdout


def test_the_extension_is_complete():
    """package.json names files that exist; the client script is valid JavaScript."""
    package = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    (grammar,) = package["contributes"]["grammars"]
    assert (EXTENSION / grammar["path"]).is_file() and grammar["scopeName"] == "source.bcfg"
    (language,) = package["contributes"]["languages"]
    assert language["extensions"] == [".bcfg"]
    config = json.loads((EXTENSION / language["configuration"]).read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"
    assert (EXTENSION / package["main"]).is_file()
    assert package["contributes"]["configuration"]["properties"]["bcfg.command"]["default"] == [
        "bcfg",
        "lsp",
    ]
    if shutil.which("node"):
        check = subprocess.run(
            ["node", "--check", str(EXTENSION / package["main"])], capture_output=True, text=True
        )
        assert check.returncode == 0, check.stderr
