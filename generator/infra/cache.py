"""Cache: what bcfg keeps between runs, and everything it is keyed by.

Entries live under ``$XDG_CACHE_HOME/bcfg`` (``~/.cache/bcfg`` by default;
``BCFG_CACHE_DIR`` overrides it, ``BCFG_NO_CACHE=1`` turns caching off). Every
entry is named by a hash of all that can change what it holds: the spec texts,
the generator's own code, templates and grammar (``fingerprint``), and the
versions of torch, black, lark, jinja2, pygments and Python. An entry is only ever a
shortcut to a result bcfg would compute anyway, so the folder is safe to delete
at any time; a missing, stale or unreadable entry is a miss, never an error.

This module is imported on ``bcfg check``'s fast path, which must not import
torch, lark, jinja2 or black: it uses only the standard library, and reads
package versions from the ``*.dist-info`` folder names, not importlib.metadata.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..resources import resource_path
from .write import atomic_write

# Bump when the layout of cache entries changes: old entries are then ignored.
CACHE_FORMAT = 1
# Packages whose version can change generated output.
OUTPUT_PACKAGES = ("torch", "black", "lark", "jinja2", "pygments")
# Entries kept per kind; older ones are removed when a new one is written.
MAX_ENTRIES = 512


def cache_dir() -> Path | None:
    """The folder bcfg caches in, or None if caching is off."""
    if os.environ.get("BCFG_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("BCFG_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bcfg"


def _normalize(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


@functools.cache
def _dist_infos(folder: str) -> dict[str, str]:
    """Installed distributions in one ``sys.path`` folder: normalized name -> version."""
    out: dict[str, str] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for entry in names:
        if entry.endswith(".dist-info"):
            name, _, version = entry[: -len(".dist-info")].partition("-")
            out.setdefault(_normalize(name), version)
    return out


def dist_version(name: str) -> str | None:
    """The installed version of a distribution, as Python's import system would find it."""
    want = _normalize(name)
    for folder in sys.path:
        version = _dist_infos(folder or ".").get(want)
        if version is not None:
            return version
    return None


def environment() -> dict[str, str | None]:
    """The versions that can change what bcfg generates."""
    env: dict[str, str | None] = {p: dist_version(p) for p in OUTPUT_PACKAGES}
    env["python"] = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return env


def fingerprint_files() -> list[tuple[str, Path]]:
    """Every file of the generator that can change what it outputs, by a stable label.

    Every module of the package, sub-packages included, every template (at any
    depth), the grammar and the shipped spec libraries (``bcfg:torch``).
    """
    here = Path(__file__).resolve().parent.parent
    folders = [
        ("generator", here, "**/*.py"),
        ("templates", resource_path("templates", "backend.py.jinja").parent, "**/*"),
        ("grammar", resource_path("grammar", "bcfg.lark").parent, "*"),
        ("library", here / "library", "*.bcfg"),
    ]
    out = []
    for label, folder, glob in folders:
        for path in sorted(folder.glob(glob)):
            if path.is_file() and "__pycache__" not in path.parts:
                out.append((f"{label}/{path.relative_to(folder).as_posix()}", path))
    return out


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of the generator itself: its code, templates and grammar, and its version."""
    h = hashlib.sha256(f"bcfg {__version__} cache {CACHE_FORMAT}\n".encode())
    for label, path in fingerprint_files():
        h.update(f"{label}\0".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def key(*parts: Any) -> str:
    """A cache key: a hash of ``parts`` (JSON-encodable) and of the generator's fingerprint."""
    payload = json.dumps(
        [fingerprint(), environment(), *parts], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _entry_path(kind: str, k: str) -> Path | None:
    base = cache_dir()
    return None if base is None else base / kind / f"{k}.json"


def load(kind: str, k: str) -> Any:
    """The entry ``kind/k``, or None if there is none or it is unreadable."""
    path = _entry_path(kind, k)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != k:
        return None
    return data.get("value")


def store(kind: str, k: str, value: Any) -> None:
    """Write the entry ``kind/k`` atomically; a cache that cannot be written is skipped."""
    path = _entry_path(kind, k)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"key": k, "value": value}, separators=(",", ":")), False)
        _prune(path.parent)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    """Keep the newest MAX_ENTRIES entries of a kind."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
        for e in entries[MAX_ENTRIES:]:
            os.unlink(e.path)
    except OSError:
        pass


def file_path(kind: str, name: str) -> Path | None:
    """A path under the cache folder for a cache another tool writes (lark's), or None."""
    base = cache_dir()
    if base is None:
        return None
    try:
        (base / kind).mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return base / kind / name
