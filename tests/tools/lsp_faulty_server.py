"""``bcfg lsp`` with faults planted, for the tests of what a failure does (never used otherwise).

* a hover next to the word ``__crash__`` raises inside the request;
* a check of a buffer holding ``__check_crash__`` raises inside the compiler;
* a change to a buffer holding ``__notify_crash__`` raises in the notification handler.

Run as ``python -m tests.tools.lsp_faulty_server`` from the repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.tools.lsp import features, server, workspace

_hover = features.hover
_check = workspace.Workspace.check
_affected = server.BcfgServer.affected


def hover(ws: Any, snap: workspace.Snapshot, path: Path, offset: int) -> Any:
    if "__crash__" in (snap.read(path) or "")[max(0, offset - 12) : offset + 12]:
        raise RuntimeError("planted fault: hover")
    return _hover(ws, snap, path, offset)


def check(self: workspace.Workspace, path: Path, snap: workspace.Snapshot) -> Any:
    if "__check_crash__" in (snap.read(path) or ""):
        raise RuntimeError("planted fault: check")
    return _check(self, path, snap)


def affected(self: server.BcfgServer, uri: str, include_self: bool = True) -> list[str]:
    doc = self.workspace.text_documents.get(uri)
    if doc is not None and "__notify_crash__" in doc.source:
        raise RuntimeError("planted fault: didChange")
    return _affected(self, uri, include_self)


features.hover = hover  # type: ignore[assignment]
workspace.Workspace.check = check  # type: ignore[method-assign]
server.BcfgServer.affected = affected  # type: ignore[method-assign]

if __name__ == "__main__":
    server.serve()
