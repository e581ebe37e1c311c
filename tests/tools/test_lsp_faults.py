"""What a failure does to ``bcfg lsp``: the request that failed gets an error, the server goes on.

The server here has faults planted (``lsp_faulty_server``). Then the fuzzers'
mutants of the repository's specs go through a real client to the real
server, as unsaved buffers: every one gets its diagnostics, every request an
answer, and the server is still serving at the end.
"""

from __future__ import annotations

import asyncio
import random
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import LanguageClient

from tests.support import REPO
from tests.tools.lsp_client import (
    change,
    close_doc,
    errors,
    initialize,
    open_doc,
    published,
    replace_all,
    server_config,
)
from tests.tools.test_fuzz import seeded_mutants

pytestmark = pytest.mark.asyncio(loop_scope="module")

MUTANTS = 25


@pytest_lsp.fixture(
    scope="module", config=server_config(sys.executable, "-m", "tests.tools.lsp_faulty_server")
)
async def faulty(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(scope="module", config=server_config())
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


def hover(client, uri: str, line: int, col: int):
    params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri=uri), lsp.Position(line, col))
    return client.text_document_hover_async(params)


async def test_a_failing_request_answers_with_an_error_and_the_server_goes_on(faulty, tmp_path):
    text = "dtypes __crash__ = {input: quint8, output: quint8}\n"
    uri = open_doc(faulty, tmp_path / "c.bcfg", text)
    await published(faulty, uri, version=1)
    with pytest.raises(JsonRpcInternalError, match="planted fault: hover"):
        await hover(faulty, uri, 0, 9)
    h = await hover(faulty, uri, 0, text.index("quint8") + 2)  # the next request is answered
    assert h.contents.value.startswith("**dtype** `torch.quint8`")
    close_doc(faulty, uri)


async def test_a_failing_check_is_a_diagnostic_and_the_next_check_runs(faulty, tmp_path):
    text = "dtypes d = {input: quint8, output: quint8}\n"
    uri = open_doc(faulty, tmp_path / "k.bcfg", text)
    await published(faulty, uri, version=1)
    since = len(faulty.published)
    change(faulty, uri, 2, (1, 0), (1, 0), "# __check_crash__\n")
    (err,) = errors((await published(faulty, uri, version=2, since=since)).diagnostics)
    assert err.message == "bcfg: internal error: RuntimeError: planted fault: check"
    since = len(faulty.published)
    change(faulty, uri, 3, (1, 0), (2, 0), "dtypes e = {input: quint9}\n")
    (err,) = errors((await published(faulty, uri, version=3, since=since)).diagnostics)
    assert "quint9" in err.message
    close_doc(faulty, uri)


async def test_a_failing_notification_is_shown_and_the_server_goes_on(faulty, tmp_path):
    text = "dtypes d = {input: quint8, output: quint8}\n"
    uri = open_doc(faulty, tmp_path / "n.bcfg", text)
    await published(faulty, uri, version=1)
    since = len(faulty.messages)
    change(faulty, uri, 2, (1, 0), (1, 0), "# __notify_crash__\n")
    for _ in range(200):
        if len(faulty.messages) > since:
            break
        await asyncio.sleep(0.05)
    (msg,) = faulty.messages[since:]
    assert msg.type == lsp.MessageType.Error and "planted fault: didChange" in msg.message
    h = await hover(faulty, uri, 0, text.index("quint8") + 2)
    assert h.contents.value.startswith("**dtype** `torch.quint8`")
    close_doc(faulty, uri)


async def test_the_fuzzers_mutants_never_stop_the_server(client, tmp_path):
    """Each mutant, as an unsaved buffer: diagnostics for its version, an answer to every request."""
    specs = tmp_path / "specs"
    specs.mkdir()
    for p in (REPO / "specs").glob("*.bcfg"):
        (specs / p.name).write_text(p.read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    uris = {p.name: open_doc(client, specs / p.name) for p in sorted(specs.glob("*.bcfg"))}
    versions = dict.fromkeys(uris, 1)
    rng = random.Random(7)
    requests = 0
    for name, data in seeded_mutants(7, MUTANTS):
        text = data.decode("utf-8", "replace")
        versions[name] += 1
        since = len(client.published)
        replace_all(client, uris[name], versions[name], text)
        await published(client, uris[name], version=versions[name], since=since)
        lines = text.split("\n")
        doc = lsp.TextDocumentIdentifier(uri=uris[name])
        for _ in range(3):
            line = rng.randrange(len(lines))
            col = rng.randrange(len(lines[line]) + 1)
            pos = lsp.Position(line, col)
            await client.text_document_hover_async(lsp.HoverParams(doc, pos))
            await client.text_document_definition_async(lsp.DefinitionParams(doc, pos))
            await client.text_document_completion_async(lsp.CompletionParams(doc, pos))
            requests += 3
        options = lsp.FormattingOptions(tab_size=4, insert_spaces=True)
        await client.text_document_formatting_async(lsp.DocumentFormattingParams(doc, options))
        replace_all(client, uris[name], versions[name] + 1, (specs / name).read_text())
        versions[name] += 1
    assert requests == MUTANTS * 9
    assert not [m for m in client.messages if m.type == lsp.MessageType.Error]
    uri = uris["my_backend.bcfg"]
    text = (specs / "my_backend.bcfg").read_text()
    line = next(i for i, s in enumerate(text.split("\n")) if "quint8" in s)
    h = await hover(client, uri, line, text.split("\n")[line].index("quint8") + 1)
    assert h.contents.value.startswith("**dtype** `torch.quint8`")
    for uri in uris.values():
        close_doc(client, uri)
