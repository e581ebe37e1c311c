"""``bcfg diff``'s resolved sides, kept by content (``infra.cache``'s folder).

A diff resolves every spec at both revisions, and most runs resolve texts an
earlier run resolved already (the base of every diff on a branch; both sides
of a change to one spec of many). What a side resolves to is a function of
the names and texts of the specs and of every file they import, of the user
modules the specs name (imported from the working tree at every revision:
which files an import finds, and their bytes), of the project's allow list,
and of torch's, the other packages' and the generator's own versions
(``cache.key``). A side that resolved is kept under a hash of all of them and
found again in two steps: the named specs' texts lead to the names of every
file that run read (a ``diff-files`` entry), whose texts make the key of the
result (a ``diff-resolved`` entry), which is taken only if the user modules it
recorded are still found where they were, with the same bytes. A side with
errors is never kept, nor one whose inputs changed while it was read. User
module files are recorded relative to the project's import path, so that two
copies of a project share entries; anything else that changed misses.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import pickle
import sys
import zlib
from pathlib import Path
from typing import Any

from ..config import Project
from ..infra import cache
from ..infra.usermodules import found_at, loaded_files, module_digest, user_tops
from ..semantics import model as m
from ..sources import SourceError, SourceSet, is_library

Resolved = tuple[list[m.Backend], list[m.Quantizer]]


def _texts(sources: SourceSet, names: list[str]) -> list[list[str]] | None:
    """Each name with the hash of its text as ``sources`` reads it; None if one cannot be read."""
    out = []
    for name in names:
        try:
            text = sources.read(name).text
        except (SourceError, OSError):
            return None
        out.append([name, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()])
    return out


def _relative(project: Project, path: str | None) -> str | None:
    """``path`` as the folder of the import path it is in and the rest; else as it is."""
    if path is None:
        return None
    for i, folder in enumerate(project.import_path()):
        if path.startswith(folder.rstrip("/") + "/"):
            return f"<{i}>/{path[len(folder.rstrip('/')) + 1:]}"
    return path


def _tops(project: Project) -> list[list[str | None]]:
    """Each allowed user package and the file an import finds it at (where that resolves)."""
    out: list[list[str | None]] = []
    for top in user_tops(project):
        origin = found_at(top)
        resolved = None if origin is None else str(Path(origin).resolve())
        out.append([top, _relative(project, origin), _relative(project, resolved)])
    return out


def _modules(project: Project, before: frozenset[str]) -> list[list[str | None]]:
    """The user modules' files the run loaded (``loaded_files``): path, resolved, hash."""
    files = loaded_files(project, before)
    return [
        [_relative(project, imported), _relative(project, resolved), digest]
        for imported, (resolved, digest) in files.items()
    ]


def _unchanged(project: Project, recorded: list[list[Any]]) -> bool:
    """Each recorded module file is where it was recorded, resolves there, with its bytes."""
    folders = project.import_path()
    for imported, resolved, digest in recorded:
        path = Path(_absolute(folders, imported))
        if _relative(project, str(path.resolve())) != resolved or module_digest(path) != digest:
            return False
    return True


def _absolute(folders: list[str], path: str) -> str:
    if path.startswith("<"):
        index, _, rest = path[1:].partition(">/")
        return f"{folders[int(index)].rstrip('/')}/{rest}"
    return path


def _files_key(project: Project, names: list[str], named: list[list[str]]) -> str:
    return cache.key("diff-files", list(project.allow), names, named)


def _resolved_key(project: Project, names: list[str], read: list[list[str]]) -> str:
    return cache.key("diff-resolved", list(project.allow), names, read)


def lookup(project: Project, sources: SourceSet, names: list[str]) -> Resolved | None:
    """The side ``names`` resolved to when its every input was as it is now; None if unknown."""
    named = _texts(sources, names)
    if named is None:
        return None
    files = cache.load("diff-files", _files_key(project, names, named))
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    read = _texts(sources, files)
    entry = cache.load("diff-resolved", _resolved_key(project, names, read)) if read else None
    if not isinstance(entry, dict):
        return None
    try:
        if entry["tops"] != _tops(project) or not _unchanged(project, entry["modules"]):
            return None
        result = pickle.loads(zlib.decompress(base64.b64decode(entry["result"])))
    except (KeyError, TypeError, ValueError, binascii.Error, zlib.error, pickle.UnpicklingError):
        return None
    except (AttributeError, ImportError, EOFError, IndexError):
        return None
    return result if isinstance(result, tuple) and len(result) == 2 else None


def snapshot() -> frozenset[str]:
    """The modules loaded before a side is resolved (``keep`` records the user ones after)."""
    return frozenset(sys.modules)


def keep(
    project: Project,
    sources: SourceSet,
    names: list[str],
    read: dict[str, str],
    before: frozenset[str],
    result: Resolved,
) -> None:
    """Keep what the side ``names`` resolved to, ``read`` being the texts that run read."""
    files = sorted(n for n in read if not is_library(n))
    texts = _texts(sources, files)
    # What the run read must be what the sources hold now (nothing changed while it ran).
    same = [
        [n, hashlib.sha256(read[n].encode("utf-8", "surrogatepass")).hexdigest()] for n in files
    ]
    named = _texts(sources, names)
    if texts is None or texts != same or named is None:
        return
    try:
        # Compressed: specs/ resolved is about 1 MB pickled, 0.16 MB compressed.
        pickled = zlib.compress(pickle.dumps(result, pickle.HIGHEST_PROTOCOL), 1)
        data = base64.b64encode(pickled).decode("ascii")
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    value = {"tops": _tops(project), "modules": _modules(project, before), "result": data}
    cache.store("diff-resolved", _resolved_key(project, names, texts), value)
    cache.store("diff-files", _files_key(project, names, named), files)
