"""``bcfg lsp`` survives any one bad document, and answers every request.

A document whose URI names no file (``%00``, ``untitled:``), a spec that is a
loop of symbolic links, a spec outside the workspace, imports of such files:
each gets a diagnostic of its own while every other document is checked,
hovered and formatted as before. A request whose params do not fit its method,
or that comes after ``shutdown``, gets an error response. Hovers escape what
specs and paths put in them (no image, no HTML); formatting a spec of
thousands of lines returns edits that make ``bcfg fmt``'s text (its speed is
measured by ``benchmarks/run.py --lsp``, not asserted here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from generator.escape import visible
from generator.lang.fmt import checked_format
from generator.lang.vocabulary import quote
from generator.tools.lsp import features
from generator.tools.lsp.features import format_edits, line_edits
from generator.tools.lsp.workspace import Snapshot, Workspace
from tests.hostile import HOSTILE, MARKDOWN_TAGS, Cells, gfm, links_show_their_address
from tests.support import REPO
from tests.tools.lsp_client import (
    CACHE,
    apply_edits,
    initialize,
    open_doc,
    published,
    replace_all,
    server_config,
)

GOOD = "backend good {\n    pattern nn.ReLU { dtypes: {input: quint8, output: quint8} }\n}\n"


@pytest_lsp.fixture(scope="module", config=server_config())
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


def raw_open(client, uri: str, text: str) -> None:
    item = lsp.TextDocumentItem(uri=uri, language_id="bcfg", version=1, text=text)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))


async def hover_at(client, uri: str, line: int, col: int):
    params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri=uri), lsp.Position(line, col))
    return await client.text_document_hover_async(params)


@pytest.mark.asyncio(loop_scope="module")
async def test_one_bad_document_never_stops_the_others(client, tmp_path):
    root = tmp_path / "ws"
    (root / "specs").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.bcfg]\n")
    specs = root / "specs"
    (specs / "loop1.bcfg").symlink_to("loop2.bcfg")
    (specs / "loop2.bcfg").symlink_to("loop1.bcfg")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    imports_bad = 'import "loop1.bcfg"\nimport "a\\u0000b.bcfg"\n' + GOOD.replace("good", "imp")
    bad = {
        "loop": (specs / "loop1.bcfg").as_uri(),
        "nul": specs.as_uri() + "/a%00b.bcfg",
        "untitled": "untitled:Untitled-1",
        "outside": (elsewhere / "far.bcfg").as_uri(),
        "imports": (specs / "imp.bcfg").as_uri(),
    }
    for name, uri in bad.items():
        text = imports_bad if name == "imports" else "backend bad { pattern nn.Nope {} }\n"
        raw_open(client, uri, text)
        got = await published(client, uri, version=1)
        assert got.diagnostics, name  # each bad document hears why
        assert not any("internal error" in d.message for d in got.diagnostics), got
    messages = {
        name: " ".join(d.message for d in (await published(client, uri)).diagnostics)
        for name, uri in bad.items()
    }
    assert "NUL" in messages["nul"] and "no file" in messages["untitled"]
    assert "Too many levels of symbolic links" in messages["loop"]
    assert "unknown symbol" in messages["outside"] or "Nope" in messages["outside"]
    # Every other document: diagnostics on each edit, hover, formatting.
    good = specs / "good.bcfg"
    good.write_text(GOOD)
    uri = open_doc(client, good, GOOD)
    assert not (await published(client, uri, version=1)).diagnostics
    since = len(client.published)
    replace_all(client, uri, 2, GOOD.replace("quint8}", "quint9}"))
    got = await published(client, uri, version=2, since=since)
    assert any("quint9" in d.message for d in got.diagnostics)
    replace_all(client, uri, 3, GOOD.replace("    pattern", "pattern"))
    assert not (await published(client, uri, version=3, since=since)).diagnostics
    h = await hover_at(client, uri, 1, 12)
    assert h is not None and "ReLU" in h.contents.value
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(
            lsp.TextDocumentIdentifier(uri=uri), lsp.FormattingOptions(4, True)
        )
    )
    assert apply_edits(GOOD.replace("    pattern", "pattern"), edits) == GOOD
    # And the bad ones answer requests without failing them.
    for uri in bad.values():
        await hover_at(client, uri, 0, 9)


# ------------------------------------------------------------------ the protocol


class Raw:
    """A client that writes JSON-RPC by hand: what pytest-lsp's typed client would not send."""

    def __init__(self, cwd: Path):
        env = {**os.environ, "PYTHONPATH": str(REPO), "BCFG_CACHE_DIR": CACHE}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "generator", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0

    def send(self, method: str, params: object = None, request: bool = True) -> int | None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        self.write(json.dumps(message).encode())
        return self.next_id if request else None

    def write(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict:
        assert self.proc.stdout is not None
        length = 0
        while (line := self.proc.stdout.readline().strip()) != b"":
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def answer(self, msg_id: int | None) -> dict:
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                return message


def test_bad_params_and_requests_after_shutdown_get_error_responses(tmp_path):
    (tmp_path / "a.bcfg").write_text(GOOD)
    uri = (tmp_path / "a.bcfg").as_uri()
    raw = Raw(tmp_path)
    try:
        raw.answer(raw.send("initialize", {"processId": None, "rootUri": None, "capabilities": {}}))
        raw.send("initialized", {}, request=False)
        item = {"uri": uri, "languageId": "bcfg", "version": 1, "text": GOOD}
        raw.send("textDocument/didOpen", {"textDocument": item}, request=False)
        for params in ({"textDocument": {"uri": uri}}, None, [1, 2], {"position": "x"}):
            got = raw.answer(raw.send("textDocument/hover", params))
            assert got["error"]["code"] == -32602, got  # InvalidParams
        ok = raw.answer(
            raw.send(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 16}},
            )
        )
        assert "ReLU" in ok["result"]["contents"]["value"]
        assert raw.answer(raw.send("shutdown"))["result"] is None
        for method in ("textDocument/hover", "textDocument/formatting", "shutdown"):
            params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
            got = raw.answer(raw.send(method, params))
            assert got["error"]["code"] == -32600, got  # InvalidRequest
        raw.send("exit", request=False)
        assert raw.proc.wait(timeout=30) == 0
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
            raw.proc.wait()


# ------------------------------------------------------------------ hovers


@settings(max_examples=25, deadline=None)
@given(HOSTILE, HOSTILE.filter(lambda s: "/" not in s and "\0" not in s))
def test_hovers_escape_what_specs_and_paths_hold(tmp_path_factory, name, folder):
    folder = visible(folder).replace("/", "")[:40] or "f"
    root = tmp_path_factory.mktemp("hover") / folder
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.bcfg]\n")
    lib = root / "lib.bcfg"
    lib.write_text("dtypes d = {input: quint8, output: quint8}\n")
    spec = (root / "b.bcfg").resolve()
    text = (
        f'import "lib.bcfg"\nbackend b {quote(name)} {{\n    pattern nn.ReLU {{ dtypes: d }}\n}}\n'
    )
    snap = Snapshot({spec: text})
    ws = Workspace()
    shown = visible(name) + visible(str(root))
    hovered = 0
    for word, into in (("backend b", 8), ("dtypes: d", 8), ("lib.bcfg", 1), ("nn.ReLU", 4)):
        h = features.hover(ws, snap, spec, text.index(word) + into)
        if h is None:
            continue
        hovered += 1
        cells = Cells(gfm(h.markdown))
        assert cells.names() <= MARKDOWN_TAGS, (h.markdown, cells.tags)
        assert "img" not in cells.names()
        assert links_show_their_address(cells.tags, shown)
    surrogate = any("\ud800" <= c <= "\udfff" for c in name)  # an error: its backend is blanked
    assert hovered == (3 if surrogate else 4)


# ------------------------------------------------------------------ formatting


def test_formatting_a_6000_line_spec_gives_fmts_text(tmp_path):
    """Thousands of equal lines (``}``, blank lines, the same pattern) made difflib quadratic."""
    body = "".join("  pattern nn.Conv2d {\n   dtypes: int8\n      root: nn.Conv2d\n  }\n\n" * 1200)
    text = "dtypes int8 = {input: quint8, output: quint8}\nbackend b {\n" + body + "}\n"
    assert text.count("\n") >= 6000
    edits = format_edits(text, "big.bcfg")
    assert edits
    out, pos = [], 0
    for start, end, new in edits:
        assert start >= pos
        out += [text[pos:start], new]
        pos = end
    assert "".join(out) + text[pos:] == checked_format(text, "big.bcfg")


LINES = st.lists(st.sampled_from(["}\n", "\n", "a\n", "b\n", "c\n", "pattern x {\n"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES)
def test_line_edits_turn_one_text_into_the_other(old, new):
    edits = line_edits(old, new)
    out, pos = [], 0
    for i1, i2, j1, j2 in edits:
        assert i1 >= pos and (i1, j1) != (i2, j2)
        out += old[pos:i1] + new[j1:j2]
        pos = i2
    assert out + old[pos:] == new
