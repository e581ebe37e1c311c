"""The project's own modules: where they are found, which files a run loaded, and when they changed.

Specs may name modules of the project (``[tool.bcfg] allow``); every command
imports them from the folders ``Project.make_importable`` puts first on the
path (the root, then ``[tool.bcfg] pythonpath``). Their versions are in no
cache key, so what depends on them is re-verified by their files:

* the fast check (``fastcheck``) records, after a full run, the file each
  allowed top-level module would be imported from (``found_at``) and the hash
  of every file the run loaded from those packages or from outside the
  standard library and site-packages (``loaded_files``);
* a long-running process (the language server) imports them once, and
  ``Watch`` says when a file it loaded changed, or the import system would now
  find an allowed module elsewhere (a move, a shadowing file, another
  project's module of the same name), so that they are imported afresh, as
  each ``bcfg`` run would.

Standard library only (the fast check imports it).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from ..config import DEFAULT_ALLOW, Project
from ..sources import MAX_SPEC_BYTES, read_regular_file

# Not files a module was loaded from: the program itself (``__main__``, and its alias
# ``__mp_main__`` once multiprocessing is imported).
_PROGRAM = frozenset({"__main__", "__mp_main__"})


def user_tops(project: Project) -> list[str]:
    """The allow-listed top-level modules whose versions no cache key holds (not torch's)."""
    return [top for top in project.allow if top not in DEFAULT_ALLOW]


def found_at(top: str) -> str | None:
    """The file Python's import system would load ``top`` from, imported or not, without
    importing it: the first finder of ``sys.meta_path`` that finds it (as an import asks them,
    editable installs' finders included), ignoring ``sys.modules``."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(top, None)
        except (ImportError, ValueError):
            return None
        if spec is not None:
            return None if spec.origin is None else str(spec.origin)
    return None


def library_dirs() -> tuple[str, ...]:
    """Folders of the standard library, installed packages and bcfg itself."""
    import sysconfig

    paths = sysconfig.get_paths()
    dirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    dirs.add(str(Path(__file__).resolve().parent.parent))
    return tuple(str(Path(d).resolve()) + "/" for d in dirs)


def module_file(name: str, module: object) -> str | None:
    """The file ``module`` was loaded from, resolved; None for the program itself and for modules
    with no file, or a bare name for one (``torch.ops`` says ``_ops.py``)."""
    paths = module_paths(name, module)
    return None if paths is None else paths[1]


def module_paths(name: str, module: object) -> tuple[str, str] | None:
    """The file ``module`` was loaded from as it was imported (through any symlink) and
    resolved; None where ``module_file`` is None."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or name in _PROGRAM or not Path(file).is_absolute():
        return None
    return file, str(Path(file).resolve())


def loaded_files(project: Project, before: frozenset[str]) -> dict[str, list[str | None]]:
    """The files of user modules a run resolved against: every module of an allowed user
    package, and every module loaded since ``before`` from outside the standard library and
    site-packages (a user module's local helpers); each by the path it was imported from
    (a symlink may be on it), with the file that path resolved to and its hash (read through
    the path: what an import would read)."""
    tops = set(user_tops(project))
    library = library_dirs()
    files: dict[str, list[str | None]] = {}
    for name, module in list(sys.modules.items()):
        paths = module_paths(name, module)
        if paths is None:
            continue
        imported, resolved = paths
        allowed = name.partition(".")[0] in tops
        if allowed or (name not in before and not resolved.startswith(library)):
            files[imported] = [resolved, module_digest(Path(imported))]
    return dict(sorted(files.items()))


def module_digest(path: Path) -> str | None:
    """A module file's hash; past the spec size limit (an extension module), its size and mtime."""
    try:
        info = path.stat()
        if info.st_size > MAX_SPEC_BYTES:
            return f"stat:{info.st_size}:{info.st_mtime_ns}"
        return hashlib.sha256(read_regular_file(path, MAX_SPEC_BYTES)).hexdigest()
    except OSError:
        return None


class Watch:
    """For a process that resolves specs again and again: the user modules it imported, and
    whether any changed since (``stale``), so that they can be imported afresh.

    ``stale`` is cheap when nothing changed: a ``find_spec`` per allowed user
    module and a ``stat`` per file they loaded; the files are listed again only
    when ``sys.modules`` grew. A file is stamped when it is first listed, which
    may be after it was loaded: one modified since the previous call (when the
    module may have been loaded from an older text) counts as changed.
    """

    # Modification times are kept by a clock coarser than time.time_ns().
    SLACK_NS = 2_000_000_000
    # The stamp of a file that may have changed after its module was loaded: never a file's.
    RECENT = (-1, -1)

    def __init__(self) -> None:
        import time

        self._stamps: dict[str, tuple[int, int] | None] = {}  # file -> (mtime, size)
        # A file imported through a symlink -> where it led: pointed elsewhere, it is stale.
        self._links: dict[str, str] = {}
        self._seen = 0  # len(sys.modules) when the files were last listed
        self._mark = time.time_ns()  # when the previous call was made

    def stale(self, project: Project) -> list[str]:
        """The loaded modules to import afresh for ``project``: all of its user modules when a
        file any of them was loaded from changed, or an allowed package would now be found in
        another file; else none. Call after ``project.make_importable()``, before resolving."""
        tops = user_tops(project)
        if not tops:
            return []
        self.note(project)
        moved = any(
            top in sys.modules
            and module_file(top, sys.modules[top]) not in (None, _resolved(found_at(top)))
            for top in tops
        )
        if (
            not moved
            and all(_stamp(f) == s for f, s in self._stamps.items())
            and all(_resolved(f) == r for f, r in self._links.items())
        ):
            return []
        self._stamps, self._links, self._seen = {}, {}, 0
        return self._user_modules(project)

    def note(self, project: Project) -> None:
        """After resolving: stamp the files the user modules were loaded from (listed again
        only if modules were loaded since the last time)."""
        import time

        mark, self._mark = self._mark, time.time_ns()
        if len(sys.modules) == self._seen or not user_tops(project):
            return
        for name in self._user_modules(project):
            paths = module_paths(name, sys.modules[name])
            if paths is None or paths[0] in self._stamps:
                continue
            path, resolved = paths  # stamped as imported: through a symlink, its target's
            stamp = _stamp(path)
            recent = stamp is not None and stamp[0] >= mark - self.SLACK_NS
            self._stamps[path] = self.RECENT if recent else stamp
            if resolved != path:
                self._links[path] = resolved
        self._seen = len(sys.modules)

    @staticmethod
    def _user_modules(project: Project) -> list[str]:
        """Loaded modules of an allowed user package, or from a file in the project's import
        path outside the installed packages (a helper a user module imports)."""
        tops = set(user_tops(project))
        folders = tuple(f.rstrip("/") + "/" for f in project.import_path())
        library = library_dirs()
        names = []
        for name, module in list(sys.modules.items()):
            path = module_file(name, module)
            if name.partition(".")[0] in tops or (
                path is not None and path.startswith(folders) and not path.startswith(library)
            ):
                names.append(name)
        return names


def _resolved(path: str | None) -> str | None:
    return None if path is None else str(Path(path).resolve())


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def forget(names: list[str]) -> None:
    """Drop ``names`` from ``sys.modules``: the next import loads them from their files again."""
    import importlib

    for name in names:
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
