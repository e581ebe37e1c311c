"""The language server's scenarios: ``bcfg lsp`` under pygls' own client, edits to
diagnostics, formatting, and a first session on an empty cache."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from .workspace import PY, REPO, Workspace, run

# ------------------------------------------------------------------ language server

LSP_TARGET_MS = 150.0


class LspSession:
    """``bcfg lsp`` run by pygls' own client over stdio, every spec of a workspace open.

    A publishDiagnostics is tied to an edit by its (uri, version) and by when it
    was read: ``arrival`` waits for the first one at or after a given time.
    """

    def __init__(self, ws: Workspace) -> None:
        import asyncio

        from lsprotocol import types as lsp
        from pygls.lsp.client import LanguageClient
        from pygls.uris import from_fs_path

        self.ws, self.lsp = ws, lsp
        self.client = LanguageClient("bcfg-benchmark", "1")
        self.arrivals: dict[tuple[str, int | None], list[tuple[float, int]]] = {}
        self.event = asyncio.Event()
        self.texts = {
            p: p.read_text(encoding="utf-8") for p in sorted((ws.dir / "specs").glob("*.bcfg"))
        }
        self.uris = {p: from_fs_path(str(p)) or p.as_uri() for p in self.texts}
        self.versions = dict.fromkeys(self.uris.values(), 1)

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.arrivals.setdefault(key, []).append((time.perf_counter(), len(params.diagnostics)))
            self.event.set()

    async def start(self, opened: list[Path] | None = None) -> None:
        """Start the server, open the specs (every one by default) and wait for each one's
        first diagnostics."""
        await self.launch()
        await self.open(list(self.texts) if opened is None else opened)

    async def launch(self) -> None:
        """Start the server and initialize it."""
        import asyncio

        lsp = self.lsp
        verbose = ["--verbose"] if os.environ.get("BCFG_BENCH_SERVER_LOG") == "1" else []
        await self.client.start_io(
            PY, "-m", "generator", "lsp", *verbose, env=self.ws.env(), cwd=str(self.ws.dir)
        )
        self.drain = asyncio.ensure_future(_drain(self.client._server.stderr))  # type: ignore[union-attr]
        await self.client.initialize_async(
            lsp.InitializeParams(capabilities=lsp.ClientCapabilities())
        )
        self.client.initialized(lsp.InitializedParams())

    async def open(self, paths: list[Path], texts: dict[Path, str] | None = None) -> None:
        """Open ``paths`` (with ``texts`` instead of what is on disk) and wait for their first
        diagnostics."""
        lsp = self.lsp
        for p in paths:
            text = (texts or {}).get(p, self.texts[p])
            item = lsp.TextDocumentItem(uri=self.uris[p], language_id="bcfg", version=1, text=text)
            self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
        for p in paths:
            await self.arrival(self.uris[p], 0.0)

    async def arrival(self, uri: str, since: float) -> tuple[float, int]:
        """The first publish for ``uri``'s current version read at or after ``since``."""
        import asyncio

        while True:
            found = [a for a in self.arrivals.get((uri, self.versions[uri]), []) if a[0] >= since]
            if found:
                return found[0]
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), 120)

    async def quiet(self, seconds: float) -> None:
        """Wait until no diagnostics have been published for ``seconds`` (the server is idle:
        the checks that opening every spec started are done)."""
        import asyncio

        while True:
            last = max((a[0] for found in self.arrivals.values() for a in found), default=0.0)
            left = last + seconds - time.perf_counter()
            if left <= 0:
                return
            await asyncio.sleep(left)

    def send(self, path: Path, text: str) -> float:
        """Replace the buffer of ``path`` by ``text``; the time the change was written."""
        lsp, uri = self.lsp, self.uris[path]
        self.versions[uri] += 1
        change = lsp.TextDocumentContentChangeWholeDocument(text=text)
        ident = lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        t0 = time.perf_counter()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(ident, [change]))
        return t0

    async def open_text(self, path: Path, text: str) -> str:
        """Open ``path`` (outside specs/) with ``text``; its URI, once its diagnostics arrived."""
        from pygls.uris import from_fs_path

        lsp = self.lsp
        uri = from_fs_path(str(path)) or path.as_uri()
        self.texts[path], self.uris[path], self.versions[uri] = text, uri, 1
        item = lsp.TextDocumentItem(uri=uri, language_id="bcfg", version=1, text=text)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
        await self.arrival(uri, 0.0)
        return uri

    async def format(self, path: Path) -> tuple[float, int]:
        """Ask for the edits that format ``path``: (seconds to the answer, number of edits)."""
        lsp = self.lsp
        ident = lsp.TextDocumentIdentifier(uri=self.uris[path])
        params = lsp.DocumentFormattingParams(ident, lsp.FormattingOptions(4, True))
        t0 = time.perf_counter()
        edits = await self.client.text_document_formatting_async(params)
        return time.perf_counter() - t0, len(edits or [])

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        self.drain.cancel()


async def _time_common_edits(ws: Workspace, edits: int) -> dict[str, list[float]]:
    """Time edits of specs/common.bcfg through a real LSP client over stdio.

    Every spec is open, so each edit also re-checks the 8 backends that import
    common.bcfg. The clock starts right before the didChange is written and
    stops when the publishDiagnostics for that (uri, version) has been read.
    Every timed edit makes a text never seen before, half of them an error; the
    undo after each is awaited, not timed.
    """
    session = LspSession(ws)
    await session.start()
    common = ws.dir / "specs" / "common.bcfg"
    importers = [
        u
        for p, u in session.uris.items()
        if p != common and 'import "common.bcfg"' in session.texts[p]
    ]

    async def settle(since: float) -> float:
        """When the last importer's diagnostics after ``since`` arrived."""
        return max([(await session.arrival(u, since))[0] for u in importers] + [since])

    original = session.texts[common]
    times: dict[str, list[float]] = {"own": [], "importers": [], "errors": []}
    for i in range(edits + 3):  # the first 3 warm up
        if i % 2:  # an error: an unknown dtype in a dtype set
            edited = original.replace("output: quint8}", f"output: quint9_{i}}}", 1)
        else:  # a comment: the spec stays valid
            edited = original.replace("# Definitions shared", f"# Definitions ({i}) shared", 1)
        t0 = session.send(common, edited)
        t1, found = await session.arrival(session.uris[common], t0)
        last = await settle(t0)
        assert (found > 0) == bool(i % 2), f"edit {i}: {found} diagnostics"
        if i >= 3:
            times["own"].append((t1 - t0) * 1e3)
            times["importers"].append((last - t0) * 1e3)
            if i % 2:
                times["errors"].append((t1 - t0) * 1e3)
        t0 = session.send(common, original)  # the undo
        await session.arrival(session.uris[common], t0)
        await settle(t0)
    times["format"] = await _time_formatting(session, max(3, edits // 8))
    await session.stop()
    return times


FORMAT_PATTERNS = 1200  # five lines each: a spec of 6,000 lines


def unformatted_spec(n: int = FORMAT_PATTERNS, variant: int = 0) -> str:
    """A spec of ``5 n`` lines that ``bcfg fmt`` re-indents throughout: the same pattern again
    and again, its lines, braces and blank lines repeated ``n`` times (what made difflib's
    line matching quadratic)."""
    block = "  pattern nn.Conv2d {\n   dtypes: int8\n      root: nn.Conv2d\n  }\n\n"
    head = f"# variant {variant}\ndtypes int8 = {{input: quint8, output: quint8}}\nbackend b {{\n"
    return head + block * n + "}\n"


async def _time_formatting(session: LspSession, rounds: int) -> list[float]:
    """Seconds from a formatting request for a 6,000-line spec to its edits, one new text per
    round (its diagnostics awaited first: the request does not wait behind the check)."""
    path = session.ws.dir / "big" / "unformatted.bcfg"
    path.parent.mkdir(exist_ok=True)
    await session.open_text(path, unformatted_spec())
    times = []
    for i in range(rounds + 1):  # the first warms up
        t0 = session.send(path, unformatted_spec(variant=i + 1))
        await session.arrival(session.uris[path], t0)
        took, edits = await session.format(path)
        assert edits > 0, "the spec was formatted already"
        if i:
            times.append(took)
    return times


def difflib_formatting_seconds(limit: float = 240.0) -> float | None:
    """What the edits of the same spec took before: difflib (autojunk=False) on its lines, in a
    process of its own; None past ``limit`` seconds."""
    code = (
        "import difflib, sys, time\n"
        "from benchmarks.perf.lsp import unformatted_spec\n"
        "from generator.lang.fmt import checked_format\n"
        "text = unformatted_spec()\n"
        "t0 = time.perf_counter()\n"
        "result = checked_format(text, 'unformatted.bcfg')\n"
        "old, new = text.splitlines(True), result.splitlines(True)\n"
        "difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()\n"
        "print(time.perf_counter() - t0)\n"
    )
    try:
        out = subprocess.run(
            [PY, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=limit, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    return float(out.stdout.strip())


async def _drain(stream) -> None:  # type: ignore[no-untyped-def]
    """Read the server's stderr: pygls' client pipes it and never reads it (a full pipe blocks).
    ``BCFG_BENCH_SERVER_LOG=1`` shows it, with the duration of each check."""
    show = os.environ.get("BCFG_BENCH_SERVER_LOG") == "1"
    while line := await stream.readline():
        if show:
            sys.stderr.write(f"[bcfg lsp] {line.decode(errors='replace')}")


# The first typo of a session: an unknown module name in a pattern, and an unknown bare
# word where a dtype goes (its did-you-mean looks the word up in every built-in alias).
TYPO_PATTERN = "    pattern (nn.Softmax, nn.Conv1e) {{ dtypes: default_quint8 }}  # {n}\n}}\n"


async def _time_first_diagnostics(
    root: Path, rounds: int, codes: list[tuple[str, Path]]
) -> dict[str, list[float]]:
    """The first symbol diagnostics of sessions on an empty cache (a new user's first session),
    for each checkout of ``codes`` (tag, code) in turn, and ``import torch`` in the same rounds.

    ``start``: from launching ``bcfg lsp`` to the diagnostics of x86.bcfg, opened
    with a misspelled module name (nothing else open). ``typo``: every spec open
    and checked (the server idle), then the first edit of the session, a
    misspelled dtype in common.bcfg, to its diagnostics.
    """
    times: dict[str, list[float]] = defaultdict(list)
    for r in range(rounds):
        print(f"  language server, first diagnostics: round {r + 1}/{rounds}", file=sys.stderr)
        ws = Workspace(root, f"lsp-first-{r}")
        times["torch"].append(run([PY, "-c", "import torch"], ws.dir, ws.env())[0])
        for tag, code in codes if r % 2 == 0 else codes[::-1]:
            ws.code = code
            ws.clear_cache()
            x86 = ws.dir / "specs" / "x86.bcfg"
            session = LspSession(ws)
            typo = session.texts[x86].rstrip().removesuffix("}") + TYPO_PATTERN.format(n=r)
            t0 = time.perf_counter()
            await session.launch()
            await session.open([x86], {x86: typo})
            t1, found = session.arrivals[(session.uris[x86], 1)][0]
            assert found > 0, "the misspelled name was not reported"
            times[f"{tag}start"].append(t1 - t0)
            await session.stop()

            ws.clear_cache()
            session = LspSession(ws)
            await session.start()
            await session.quiet(1.0)
            common = ws.dir / "specs" / "common.bcfg"
            edited = session.texts[common].replace("output: quint8}", f"output: quint9_{r}}}", 1)
            t0 = session.send(common, edited)
            t1, found = await session.arrival(session.uris[common], t0)
            assert found > 0, "the misspelled dtype was not reported"
            times[f"{tag}typo"].append(t1 - t0)
            await session.stop()
    return times


def measure_lsp_first(
    root: Path, rounds: int, codes: list[tuple[str, Path]]
) -> dict[str, list[float]] | str:
    """First symbol diagnostics of ``bcfg lsp`` sessions (seconds), or why not measured."""
    import asyncio

    try:
        import pygls  # noqa: F401
    except ImportError:
        return "not measured: install bcfg[lsp] (pygls)"
    return asyncio.run(_time_first_diagnostics(root, rounds, codes))


def measure_lsp(root: Path, rounds: int) -> dict[str, list[float]] | str:
    """Edit -> diagnostics latencies of ``bcfg lsp`` (ms), or why they could not be measured."""
    import asyncio

    try:
        import pygls  # noqa: F401
    except ImportError:
        return "not measured: install bcfg[lsp] (pygls)"
    ws = Workspace(root, "lsp")
    ws.bcfg("generate")  # the symbol-fact table a user's first generate leaves in the cache
    return asyncio.run(_time_common_edits(ws, max(40, 8 * rounds)))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
