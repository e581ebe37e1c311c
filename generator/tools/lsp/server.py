"""The language server: pygls over stdio, the compiler on one engine thread.

Diagnostics are pushed: opening, changing, saving or closing a ``.bcfg``
buffer schedules a check of it and of every open spec that imports it (an
edit of ``common.bcfg`` re-checks the backends that use it), and nothing
else. One runner checks the scheduled files in turn on the engine thread, the
edited file first, each time with a snapshot of the open buffers, while the
event loop goes on reading edits; a result that a newer edit made stale is
dropped. A check can report into other files (an error in an imported group),
so what each check found in each file is kept apart and a file's diagnostics
are the union of what the checks of its importers and its own say.

Every compiler call runs on the engine thread: the workspace's caches are not
locked, and the loop stays free. A request that fails answers with an error
and the server goes on; a check that fails says so as a diagnostic. One bad
document (a URI that names no file, a link loop, a path that cannot be read)
gets a diagnostic saying so, and every other document is served as before. A
request whose params do not fit its method, or that comes after ``shutdown``,
gets an error response (``BcfgProtocol``), never silence.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from ... import __version__
from ...diagnostics import Diagnostic, Severity, printable
from ...lang import syntax as syn
from ...sources import Source
from . import completion, features
from . import text as tx
from .workspace import FileReport, Snapshot, Workspace, closure, file_at, place_of

log = logging.getLogger("bcfg.lsp")
T = TypeVar("T")

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
}
_COMPLETION_KINDS = {
    "field": lsp.CompletionItemKind.Field,
    "keyword": lsp.CompletionItemKind.Keyword,
    "dtype": lsp.CompletionItemKind.TypeParameter,
    "constant": lsp.CompletionItemKind.EnumMember,
    "function": lsp.CompletionItemKind.Function,
    "module": lsp.CompletionItemKind.Module,
    "variable": lsp.CompletionItemKind.Variable,
    "group": lsp.CompletionItemKind.Function,
    "fuse": lsp.CompletionItemKind.Function,
    "alias": lsp.CompletionItemKind.Module,
    "constraint": lsp.CompletionItemKind.Constant,
    "dtypes": lsp.CompletionItemKind.Constant,
    "name": lsp.CompletionItemKind.Class,
}


def path_of(uri: str) -> Path | None:
    """The file a ``file:`` URI names (resolved), or None if it names none (``locate`` says why)."""
    found = locate(uri)
    return found if isinstance(found, Path) else None


def locate(uri: str) -> Path | str:
    """The file a ``file:`` URI names, its links followed (a loop of links: as written), or why
    the server cannot check it."""
    try:
        fs = to_fs_path(uri) if uri.startswith("file:") else None
    except Exception:  # noqa: BLE001  (whatever the URI holds: it names no file)
        fs = None
    if not fs:
        return f"bcfg checks specs saved as files; {uri[:80]!r} is no file: URI it can read"
    path = Path(fs)
    if not path.is_absolute():
        return f"the URI {uri[:80]!r} names no absolute path"
    found = file_at(path)
    if found is None:
        return "the file name in this document's URI holds a NUL character, which no file can have"
    return found


class BcfgProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what it would leave unanswered: a request whose params do not
    fit its method gets an InvalidParams error, a request after ``shutdown`` an InvalidRequest
    error (the LSP says so), never silence."""

    def structure_message(self, data: Any) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Refused(data["id"], str(data["method"]), exc)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Refused) and self._shutdown:
            refused = JsonRpcInvalidRequest(f"{message.method}: the server is shut down; send exit")
            self._send_response(message.id, None, refused.to_response_error())  # type: ignore[arg-type]
            return
        if isinstance(message, _Refused):
            error = message.error
            error.message = f"{message.method}: {error.message} (the params do not fit the method)"
            # JSON-RPC answers a request whose id cannot be read with id null.
            self._send_response(message.id, None, error.to_response_error())  # type: ignore[arg-type]
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, lsp.EXIT) and hasattr(message, "id"):
            refused = JsonRpcInvalidRequest(f"{method}: the server is shut down; send exit")
            self._send_response(message.id, None, refused.to_response_error())
            return
        super().handle_message(message)


class _Refused:
    """A request pygls could not read into its method's params: answered with ``error``."""

    jsonrpc = "2.0"

    def __init__(self, msg_id: Any, method: str, error: JsonRpcException):
        self.id = msg_id if isinstance(msg_id, (int, str)) else None
        self.method = method
        self.error = error


class BcfgServer(LanguageServer):
    """The server's state: the workspace (engine thread only), what is scheduled, what was found."""

    def __init__(self, verbose: bool = False) -> None:
        super().__init__(
            "bcfg",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=BcfgProtocol,
        )
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bcfg-engine")
        self.compiler = Workspace()
        self.verbose = verbose
        self.dirty: dict[str, None] = {}  # URIs to check, in order (an ordered set)
        self.runner: asyncio.Task[None] | None = None
        # target URI -> {URI of the check that found them -> (target's version, diagnostics)}
        self.found: dict[str, dict[str, tuple[int | None, list[lsp.Diagnostic]]]] = {}
        self.frozen = False

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the engine thread."""
        return await asyncio.get_running_loop().run_in_executor(self.engine, fn, *args)

    @property
    def encoding(self) -> str:
        """The position encoding agreed with the client: utf-16 (VS Code), utf-8 (Neovim) or utf-32."""
        agreed = self.workspace.position_encoding
        return str(getattr(agreed, "value", agreed) or "utf-16")

    def snapshot(self) -> tuple[Snapshot, dict[Path, str]]:
        """The open ``.bcfg`` buffers now, and the URI each was opened under (taken on the loop)."""
        texts: dict[Path, str] = {}
        uris: dict[Path, str] = {}
        for doc in self.workspace.text_documents.values():
            path = path_of(doc.uri)
            if path is not None and path.suffix == ".bcfg":
                texts[path] = doc.source
                uris[path] = doc.uri
        return Snapshot(texts), uris

    def parse(self, text: str, name: str) -> syn.Spec:
        """``text`` parsed through the workspace's cache (engine thread only)."""
        return self.compiler.parses.parse(Source.of(name, text))

    def document(self, uri: str) -> TextDocument | None:
        """The open document of ``uri`` (pygls keeps them by the URI percent-decoded)."""
        return self.workspace.text_documents.get(unquote(uri))

    def uri_of(self, path: Path, uris: dict[Path, str]) -> str:
        """The URI the client opened ``path`` under (its own spelling), else one made from it."""
        return uris.get(path) or from_fs_path(str(path)) or path.as_uri()

    # ------------------------------------------------------------ checking

    def schedule(self, uris: list[str]) -> None:
        """Check ``uris`` (in this order, after anything already waiting), each with its newest text."""
        for uri in uris:
            self.dirty.pop(uri, None)
            self.dirty[uri] = None
        if self.runner is None or self.runner.done():
            self.runner = asyncio.get_running_loop().create_task(self._drain())

    def affected(self, uri: str, include_self: bool = True) -> list[str]:
        """``uri`` and every open spec whose imports reach it."""
        changed = path_of(uri)
        snap, uris = self.snapshot()
        out = [uri] if include_self else []
        if changed is None:
            return out
        for path, other in uris.items():
            if other != uri and changed in closure(path, snap):
                out.append(other)
        return out

    async def _drain(self) -> None:
        # pygls reports errors of handlers, not of tasks of our own: a failure here must not
        # end the runner silently.
        # Nothing may be awaited between the last look at ``dirty`` and the end of the task:
        # ``schedule`` starts a new runner only once this one is done.
        try:
            while self.dirty or not self.frozen:
                if not self.dirty:  # the first checks are done: freeze what start-up made
                    self.frozen = True
                    await self.run(freeze_heap)
                    continue
                uri = next(iter(self.dirty))
                del self.dirty[uri]
                try:
                    await self._check(uri)
                except Exception as exc:  # a bug on this document: said there; the rest go on
                    log.exception("checking %s failed", printable(uri))
                    self.unlocated(uri, f"bcfg: internal error: {type(exc).__name__}: {exc}")
        except Exception as exc:
            log.exception("the diagnostics runner failed")
            self.report_server_error(exc, FeatureNotificationError)

    async def _check(self, uri: str) -> None:
        if self.document(uri) is None:
            return
        found = locate(uri)
        if not isinstance(found, Path):  # this document only: said where the user looks
            self.unlocated(uri, found)
            return
        path = found
        snap, uris = self.snapshot()
        versions = {doc.uri: doc.version for doc in self.workspace.text_documents.values()}
        version = versions.get(uri)
        t0 = time.perf_counter()
        had_torch = "torch" in sys.modules
        converted = await self.run(self._check_on_engine, path, snap, uris)
        if self.verbose:
            log.warning(
                "checked %s v%s in %.1f ms",
                printable(path.name),
                version,
                (time.perf_counter() - t0) * 1e3,
            )
        if not had_torch and "torch" in sys.modules:
            await self.run(freeze_heap)  # torch's objects stay out of every later collection
        if uri in self.dirty:
            return  # edited (or an import edited) meanwhile: the newer check follows
        self.record(uri, converted, versions)

    def _check_on_engine(
        self, path: Path, snap: Snapshot, uris: dict[Path, str]
    ) -> dict[str, list[lsp.Diagnostic]]:
        try:
            reports = self.compiler.check(path, snap)
        except Exception as exc:  # a bug in bcfg: say so where the user looks, and keep serving
            log.exception("checking %s failed", printable(str(path)))
            message = f"bcfg: internal error: {type(exc).__name__}: {exc}"
            reports = {
                path: FileReport(snap.read(path), [Diagnostic(Severity.ERROR, None, message)])
            }
        return {self.uri_of(p, uris): self.to_lsp(r) for p, r in reports.items()}

    def unlocated(self, uri: str, why: str) -> None:
        """Publish, for a document that names no file the server can read (or whose check failed),
        why it is not checked."""
        doc = self.document(uri)
        said = lsp.Diagnostic(
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            message=f"not checked: {why}",
            severity=lsp.DiagnosticSeverity.Warning,
            source="bcfg",
        )
        version = doc.version if doc is not None else None
        params = lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[said], version=version)
        self.text_document_publish_diagnostics(params)

    def to_lsp(self, report: FileReport) -> list[lsp.Diagnostic]:
        index = tx.TextIndex(report.text or "", self.encoding)
        return [diagnostic(d, index) for d in report.diagnostics]

    def record(
        self, root: str, converted: dict[str, list[lsp.Diagnostic]], versions: dict[str, int | None]
    ) -> None:
        """Keep what the check of ``root`` found in each file (with the version of the file it
        read) and publish every file it changed."""
        for target, by_root in self.found.items():
            if root in by_root and target not in converted:
                converted[target] = []  # no longer reported there: withdrawn
        for target, diags in converted.items():
            self.found.setdefault(target, {})[root] = (versions.get(target), diags)
            self.publish(target)

    def publish(self, target: str) -> None:
        """The union of what every check found in ``target``, counting only the checks that read
        the text it has now: a check of an older text may point at lines that have moved."""
        doc = self.document(target)
        version = doc.version if doc else None
        merged: list[lsp.Diagnostic] = []
        seen: set[tuple[int, int, str]] = set()
        for read, diags in self.found.get(target, {}).values():
            if read != version:
                continue
            for d in diags:
                key = (d.range.start.line, d.range.start.character, d.message)
                if key not in seen:
                    seen.add(key)
                    merged.append(d)
        params = lsp.PublishDiagnosticsParams(uri=target, diagnostics=merged, version=version)
        self.text_document_publish_diagnostics(params)

    def forget(self, uri: str) -> None:
        """A closed buffer: drop what its checks found, everywhere, and clear its own."""
        for target, by_root in list(self.found.items()):
            if by_root.pop(uri, None) is not None and target != uri:
                self.publish(target)
        self.found.pop(uri, None)
        self.publish(uri)


def diagnostic(d: Diagnostic, index: tx.TextIndex) -> lsp.Diagnostic:
    """A bcfg diagnostic as an LSP one: its span's range, its hint and notes in the message."""
    if d.span is None:
        start = end = 0
    else:
        start = index.span_offset(d.span.line, d.span.column)
        end = max(start, index.span_offset(d.span.end_line, d.span.end_column))
    # Each part shown as the terminal shows it: no control or bidi character of a spec's acts.
    message = printable(d.message) + (f"\nhint: {printable(d.hint)}" if d.hint else "")
    message += "".join(f"\nnote: {printable(n)}" for n in d.notes)
    return lsp.Diagnostic(
        range=lsp_range(index, start, end),
        message=message,
        severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Information),
        source="bcfg",
    )


def lsp_range(index: tx.TextIndex, start: int, end: int) -> lsp.Range:
    return lsp.Range(lsp.Position(*index.position(start)), lsp.Position(*index.position(end)))


def freeze_heap() -> None:
    """Move every object alive now (lark's tables, torch's millions) out of the cyclic collector's
    sight, so that a full collection does not walk them in the middle of a check."""
    gc.collect()
    gc.freeze()


def preload_torch() -> None:
    """Import torch on a thread of its own: the first name the torch facts cannot answer (a
    torch build bcfg ships none for, a name outside their namespaces) is then answered at once
    instead of after torch's import."""

    def load() -> None:
        try:
            import torch  # noqa: F401
        except Exception:  # checks will say what is wrong with torch, if it matters
            log.exception("preloading torch failed")

    threading.Thread(target=load, name="bcfg-torch", daemon=True).start()


# -------------------------------------------------------------------- features


def register(server: BcfgServer) -> None:
    """Attach every feature to ``server``."""

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: BcfgServer, params: lsp.InitializedParams) -> None:
        from ...lang.parse import parse_text

        ls.engine.submit(parse_text, "", "<warm-up>")  # the grammar, before the first edit

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: BcfgServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(ls.affected(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BcfgServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(ls.affected(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: BcfgServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule(ls.affected(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: BcfgServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri  # pygls has dropped the buffer: importers now read the disk
        ls.forget(uri)
        ls.schedule(ls.affected(uri, include_self=False))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: BcfgServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:  # a spec changed on disk (git checkout, bcfg fmt)
            ls.schedule(ls.affected(change.uri, include_self=ls.document(change.uri) is not None))

    register_requests(server)


def _where(ls: BcfgServer, uri: str, position: lsp.Position) -> tuple[Path, int, Snapshot] | None:
    """The file, the offset of ``position`` in its buffer, and a snapshot of the buffers."""
    path = path_of(uri)
    doc = ls.document(uri)
    if path is None or doc is None:
        return None
    snap, _ = ls.snapshot()
    offset = tx.TextIndex(doc.source, ls.encoding).offset(position.line, position.character)
    return path, offset, snap


async def _ask(
    ls: BcfgServer, fn: Callable[..., T | None], uri: str, position: lsp.Position
) -> tuple[T, Snapshot, Path] | None:
    """``fn(workspace, snapshot, path, offset)`` on the engine thread; the snapshot it read, the file."""
    at = _where(ls, uri, position)
    if at is None:
        return None
    path, offset, snap = at
    found = await ls.run(fn, ls.compiler, snap, path, offset)
    return None if found is None else (found, snap, path)


async def hover(ls: BcfgServer, params: lsp.HoverParams) -> lsp.Hover | None:
    asked = await _ask(ls, features.hover, params.text_document.uri, params.position)
    if asked is None:
        return None
    found, snap, path = asked
    index = tx.TextIndex(snap.read(path) or "", ls.encoding)
    contents = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found.markdown)
    return lsp.Hover(contents=contents, range=lsp_range(index, found.start, found.end))


async def definition(ls: BcfgServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    asked = await _ask(ls, features.definition, params.text_document.uri, params.position)
    if asked is None:
        return None
    found, snap, _ = asked
    index = tx.TextIndex(snap.read(found.path) or "", ls.encoding)
    uri = ls.uri_of(found.path, ls.snapshot()[1])
    return lsp.Location(uri=uri, range=lsp_range(index, found.start, found.end))


async def formatting(ls: BcfgServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
    path = path_of(params.text_document.uri)
    doc = ls.document(params.text_document.uri)
    if path is None or doc is None:
        return []
    text = doc.source
    edits = await ls.run(features.format_edits, text, place_of(path).project.rel(path), ls.parse)
    if not edits or doc.source != text:  # does not parse, already formatted, or edited meanwhile
        return []
    index = tx.TextIndex(text, ls.encoding)
    return [lsp.TextEdit(range=lsp_range(index, a, b), new_text=new) for a, b, new in edits]


async def complete(ls: BcfgServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    at = _where(ls, params.text_document.uri, params.position)
    found = (
        [] if at is None else await ls.run(completion.complete, ls.compiler, at[2], at[0], at[1])
    )
    items = [
        lsp.CompletionItem(
            label=i.label, kind=_COMPLETION_KINDS.get(i.kind), detail=i.detail, insert_text=i.insert
        )
        for i in found
    ]
    return lsp.CompletionList(is_incomplete=False, items=items)


def register_requests(server: BcfgServer) -> None:
    """Hover, definition, formatting and completion: each answered on the engine thread."""
    server.feature(lsp.TEXT_DOCUMENT_HOVER)(hover)
    server.feature(lsp.TEXT_DOCUMENT_DEFINITION)(definition)
    server.feature(lsp.TEXT_DOCUMENT_FORMATTING)(formatting)
    options = lsp.CompletionOptions(trigger_characters=[".", ":"])
    server.feature(lsp.TEXT_DOCUMENT_COMPLETION, options)(complete)


def serve(verbose: bool = False, preload: bool = False) -> None:
    """Serve over stdin and stdout until the client says exit."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print (bcfg's, torch's) must never reach the JSON-RPC stream
    server = BcfgServer(verbose)
    register(server)
    if preload:
        preload_torch()
    server.start_io(sys.stdin.buffer, stdout)
