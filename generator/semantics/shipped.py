"""The torch facts bcfg ships: what resolving a spec asks about torch, per torch build.

For each torch release bcfg is verified on (``config.TORCH_VERIFIED``) the
package carries a table in ``generator/torch_facts/``, made by
``python -m generator.live.facts_table`` from that torch (docs/getting-started/install.md,
"Torch facts, shipped"). It holds what ``semantics.facts`` would otherwise learn by importing
torch: the facts of every torch name the project's specs, the ``bcfg:torch``
library and the ATen table (``semantics.aten_ops``) use, and of every member
of the modules those names walk through (kind, module, identity, dtype,
signature); the exact error of each such name this torch lacks; and a listing
of each of those namespaces, so that any other name under them is known
missing, with the did-you-mean torch's own ``dir()`` gives, without torch.

A table belongs to one build, never to a version alone. It is named and keyed
by the sha256 of the lines of torch's installed ``RECORD`` that describe the
``torch/`` package (each file with its hash and size, as the wheel has them;
what the installer adds is left out: scripts carry the local interpreter's
path, byte code has no hash). The install must also be unedited where the
facts come from: each file of the modules the table was read from must have
the size ``RECORD`` gives and be no newer than ``RECORD`` (installers write it
last); a file that is newer is hashed against ``RECORD`` instead (an install
copied without its times), and that check is cached per state of the files.
Anything else (a dev build or editable install, an edited file, another
version or Python) has no table: every fact is found live, importing torch.

This module reads files only: it never imports torch. ``installed_build`` finds
the torch ``import torch`` would load with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..infra import cache
from .closest import suggest

# Bump when the layout of a table changes; tables of another format are not read.
FORMAT = 2
# Where the tables are: package data.
FOLDER = Path(__file__).resolve().parent.parent / "torch_facts"
# Set to 0 to use no shipped table (every torch fact found live, as for a build without one).
ENV_SWITCH = "BCFG_SHIPPED_FACTS"


@dataclass(frozen=True)
class Build:
    """An installed torch, from its dist-info: where it is, its version, its RECORD."""

    site: Path  # the folder holding torch/ and torch-<version>.dist-info/
    version: str  # as the dist-info folder names it: 2.13.0+cpu
    record: Path


def python_tag() -> str:
    """The Python a table applies to (the torch wheel's own ABI pins the minor version)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def table_name(version: str, digest: str) -> str:
    """The file name of the table of torch ``version`` with RECORD digest ``digest``."""
    return f"torch-{version}-{digest[:16]}.json"


def installed_build() -> Build | None:
    """The torch ``import torch`` loads (or has loaded), as installed from a wheel; else None."""
    module = sys.modules.get("torch")
    origin = getattr(module, "__file__", None) if module is not None else _find_torch()
    if not isinstance(origin, str) or os.path.basename(origin) != "__init__.py":
        return None
    package = Path(origin).parent
    if package.name != "torch":
        return None
    site = package.parent
    try:
        infos = [e.name for e in os.scandir(site) if _is_torch_dist_info(e.name)]
    except OSError:
        return None
    if len(infos) != 1:  # none (a source tree), or two installs in one folder: no build to trust
        return None
    version = infos[0][len("torch-") : -len(".dist-info")]
    return Build(site, version, site / infos[0] / "RECORD")


def _find_torch() -> str | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def _is_torch_dist_info(name: str) -> bool:
    stem = name.removesuffix(".dist-info")
    return name.startswith("torch-") and stem != name and stem.count("-") == 1


def record_digest(record: bytes) -> tuple[str, dict[str, tuple[str, int]]]:
    """The build's digest: sha256 of RECORD's hashed ``torch/`` lines, sorted; and those
    lines by path (hash, size)."""
    lines = sorted(
        line.rstrip(b"\r")
        for line in record.splitlines()
        if line.startswith(b"torch/") and b",sha256=" in line
    )
    entries: dict[str, tuple[str, int]] = {}
    for line in lines:
        path, digest, size = line.decode("utf-8", "replace").rsplit(",", 2)
        if size.isdigit():
            entries[path] = (digest, int(size))
    return hashlib.sha256(b"\n".join(lines)).hexdigest(), entries


def _digest_of(build: Build, record: os.stat_result) -> str | None:
    """``record_digest`` of the build's RECORD, cached per state of the file (it is 1.5 MB)."""
    state = [str(build.record), record.st_size, record.st_mtime_ns, record.st_ino]
    k = cache.key("torch-record", state)
    found = cache.load("torch-record", k)
    if isinstance(found, str):
        return found
    try:
        digest, _ = record_digest(build.record.read_bytes())
    except OSError:
        return None
    cache.store("torch-record", k, digest)
    return digest


def load(build: Build | None = None) -> Shipped | None:
    """The table of the installed torch build, checked against the install; None if there is none.

    A table's first line is its header (what it applies to, and the files to
    check); the facts after it are read on first use (``Shipped``).
    """
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    build = build or installed_build()
    if build is None:
        return None
    prefix = f"torch-{build.version}-"
    try:
        names = [n for n in os.listdir(FOLDER) if n.startswith(prefix) and n.endswith(".json")]
    except OSError:
        return None
    if not names:
        return None  # not a version bcfg ships facts for: do not even read RECORD
    try:
        record = build.record.stat()
    except OSError:
        return None
    digest = _digest_of(build, record)
    name = table_name(build.version, digest or "")
    if digest is None or name not in names:
        return None
    try:
        with open(FOLDER / name, "rb") as fh:
            header = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    if header.get("record") != digest or header.get("python") != python_tag():
        return None
    files = header.get("files")
    if not isinstance(files, list) or not _unedited(build, files, record.st_mtime_ns, digest):
        return None
    return Shipped(FOLDER / name, f"{digest}:{header.get('body')}", str(header.get("torch")))


def _unedited(build: Build, files: list[Any], record_mtime: int, digest: str) -> bool:
    """True if every file the facts were read from is as RECORD has it (see the module doc).

    The table holds each file's size as RECORD gives it (the digest says RECORD
    is the one the table was made from).
    """
    newer: list[tuple[str, os.stat_result]] = []
    for entry in files:
        try:
            rel, size = entry
            st = os.stat(build.site / rel)
        except (OSError, TypeError, ValueError):
            return False
        if st.st_size != size:
            return False
        if st.st_mtime_ns > record_mtime:
            newer.append((rel, st))
    if not newer:
        return True
    # Written after RECORD: an install copied without its times, or an edit. Hash them.
    state = [[rel, st.st_size, st.st_mtime_ns, st.st_ino] for rel, st in newer]
    k = cache.key("torch-files", digest, str(build.site), state)
    if cache.load("torch-files", k) is True:
        return True
    try:
        _, entries = record_digest(build.record.read_bytes())
    except OSError:
        return False
    for rel, _ in newer:
        if rel not in entries or not _same_content(build.site / rel, entries[rel][0]):
            return False
    cache.store("torch-files", k, True)
    return True


def _same_content(path: Path, recorded: str) -> bool:
    """True if the file's sha256 is RECORD's (urlsafe base64, no padding)."""
    import base64

    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return False
    ours = base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
    return recorded == f"sha256={ours}"


class Shipped:
    """One build's table, read-only: facts, signatures, missing names, namespace listings.

    The facts are read from the file on first use (a run whose names the cache
    knows never reads them); the raw JSON values are kept, and ``TorchFacts``
    makes its objects from them.
    """

    def __init__(self, path: Path | None, digest: str, version: str, body: Any = None):
        self.path = path
        # The build's RECORD digest and the table's own (what the cache of used facts is
        # keyed on: a table made again with more names may name an object differently).
        self.digest = digest
        self.version = version
        self._body: dict[str, Any] | None = body
        self._attrs: dict[str, frozenset[str]] = {}

    @classmethod
    def of(cls, data: dict[str, Any]) -> Shipped:
        """A table from its JSON value (header and body in one dict), not from a file."""
        return cls(None, str(data.get("record", "")), str(data.get("torch")), data)

    def _read(self) -> dict[str, Any]:
        if self._body is None:
            assert self.path is not None
            with open(self.path, "rb") as fh:
                fh.readline()  # the header, read by ``load``
                self._body = json.loads(fh.read())
        return self._body

    @property
    def facts(self) -> dict[str, list[Any]]:
        return self._read()["facts"]

    @property
    def sigs(self) -> dict[str, Any]:
        return self._read()["sigs"]

    @property
    def unknown(self) -> dict[str, list[Any]]:
        return self._read()["unknown"]

    @property
    def spaces(self) -> dict[str, dict[str, Any]]:
        return self._read()["spaces"]

    def missing(self, path: str) -> tuple[str, str | None] | None:
        """The error of a path this torch does not have, as live resolution gives it; None if
        the table cannot tell (the name may exist, or its parent is not listed)."""
        exact = self.unknown.get(path)
        if exact is not None:
            return exact[0], exact[1]
        facts = self.facts
        parts = path.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix not in facts:
                return None
            if ".".join(parts[: i + 1]) in facts:
                continue
            space = self.spaces.get(prefix)
            if space is None:
                return None
            part = parts[i]
            if part.startswith("__"):
                if space.get("module"):
                    return None  # resolving it would try to import it
            elif part in self._names(prefix, space):
                return None  # it exists, or may: only live resolution can say
            return f"unknown symbol '{path}'", suggest(space["dir"], parts[:i], part)
        return None

    def _names(self, prefix: str, space: dict[str, Any]) -> frozenset[str]:
        names = self._attrs.get(prefix)
        if names is None:
            names = frozenset(space["dir"]) | frozenset(space["more"]) | frozenset(space["subs"])
            self._attrs[prefix] = names
        return names
