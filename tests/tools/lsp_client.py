"""A real LSP client for the language server's tests: pytest-lsp's, over stdio.

``published`` waits for the publishDiagnostics of a URI (and version): pytest-lsp's
``wait_for_notification`` keeps one future per method, so a second publish in
the same read, or a late one for another file, would be missed or mistaken.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.support import REPO

PUBLISH = lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
TIMEOUT = (
    120.0  # the first unknown name of a session imports torch: seconds, more on a loaded machine
)

# The servers' own cache folder (the session's XDG_CACHE_HOME is set after this module is read).
CACHE = tempfile.mkdtemp(prefix="bcfg-lsp-test-cache-")
atexit.register(shutil.rmtree, CACHE, True)


def make_client() -> LanguageClient:
    """pytest-lsp's client, keeping every publishDiagnostics in order."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]
    client.publish_event = asyncio.Event()  # type: ignore[attr-defined]

    def on_publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)  # type: ignore[attr-defined]
        client.publish_event.set()  # type: ignore[attr-defined]

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, PUBLISH: on_publish})
    return client


async def initialize(client: Any) -> None:
    """Start a session as VS Code would (its capabilities)."""
    from pytest_lsp import client_capabilities

    await client.initialize_session(
        lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    )


def server_config(*command: str) -> ClientServerConfig:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BCFG_CACHE_DIR": CACHE}
    return ClientServerConfig(
        server_command=list(command) or [sys.executable, "-m", "generator", "lsp", "--verbose"],
        client_factory=make_client,
        server_env=env,  # replaces the environment: keep os.environ
    )


async def published(
    client: Any, uri: str, version: int | None = None, since: int = 0, timeout: float = TIMEOUT
) -> lsp.PublishDiagnosticsParams:
    """The first publishDiagnostics for ``uri`` (and ``version``) at or after index ``since``."""
    deadline = time.perf_counter() + timeout
    while True:
        client.publish_event.clear()
        for p in client.published[since:]:
            if p.uri == uri and (version is None or p.version == version):
                return p
        await asyncio.wait_for(client.publish_event.wait(), deadline - time.perf_counter())


async def quiet(client: Any, idle: float = 0.4) -> int:
    """Wait until nothing has been published for ``idle`` seconds; the count so far."""
    while True:
        n = len(client.published)
        await asyncio.sleep(idle)
        if len(client.published) == n:
            return n


def uri_of(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def open_doc(client: Any, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = uri_of(path)
    item = lsp.TextDocumentItem(
        uri=uri,
        language_id="bcfg",
        version=version,
        text=path.read_text() if text is None else text,
    )
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
    return uri


def change(
    client: Any, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
) -> None:
    """An incremental edit: replace start..end ((line, character) in the client's units) by ``text``."""
    rng = lsp.Range(lsp.Position(*start), lsp.Position(*end))
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=text)],
        )
    )


def replace_all(client: Any, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def close_doc(client: Any, uri: str) -> None:
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )


def errors(diags: Any) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


def apply_edits(text: str, edits: Any) -> str:
    """Apply LSP edits (non-overlapping, against the original text, UTF-16 columns) as an editor does."""
    lines = text.splitlines(keepends=True)

    def offset(p: lsp.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        prefix = lines[p.line].encode("utf-16-le")[: 2 * p.character].decode("utf-16-le")
        return sum(len(s) for s in lines[: p.line]) + len(prefix)

    for e in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text
