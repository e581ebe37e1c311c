"""Assembling the import: one spec per backend, plus the file they share, as a person would write them.

Declarations are named once for all files (one ``Builder``). A definition used
by two files or more, every alias and every discovered group go to the shared
file, which each backend file imports; what one backend alone uses stays in
its file. With one output file everything is in it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...lang import syntax as m
from ...lang.fmt import Printer, render
from ...sources import LIBRARY_SCHEME
from .builder import Builder, config_paths
from .common import SPAN
from .fold import Folder
from .groups import Found, Seq, Use
from .naming import Names
from .reader import DC, Config


@dataclass
class ReadBackend:
    """One target's BackendConfig, read."""

    target: str
    module: str  # the spec's backend name (module of the generated file)
    name: str  # the BackendConfig's name
    configs: list[Config]


@dataclass
class Layout:
    """Where each backend's spec goes (display names), and the shared file, if any."""

    files: list[str]  # one per backend, in order (may all be the same file)
    shared: str | None  # the shared file; None to keep everything in the backends' files


@dataclass
class Assembled:
    files: dict[str, str]  # display name -> text
    not_allowed: list[str]
    notes: list[str] = field(default_factory=list)


def assemble(
    backends: list[ReadBackend],
    seqs: list[Seq],
    found: list[Found],
    layout: Layout,
    names: Names,
    allow: tuple[str, ...],
    header: str,
    fold: bool = True,
) -> Assembled:
    builder = Builder(names, allow)
    written = [c for seq in seqs for c in seq if isinstance(c, Config)]
    written += [c for g in found for c in g.configs]
    uses = [u for seq in seqs for u in seq if isinstance(u, Use)]
    paths = config_paths(written)
    decls: list[tuple[m.Decl, str | None]] = []  # (decl, the one file it belongs to or None)
    decls += [(d, None) for d in builder.make_aliases(paths)]
    all_ds = [c.dtypes for c in written] + [u.ds for u in uses]
    decls += [(d, None) for d in builder.constraint_decls(dc for ds in all_ds for dc in ds)]
    decls += [(d, None) for d in _dtype_decls(builder, written, uses)]
    for c in written:
        if c.fuser is not None and c.fuser[0] == "fuse":
            decl = builder.fuse_decl(c.fuser[1])
            if decl is not None:
                decls.append((decl, None))
    printer = Printer()
    folder = Folder(names, _item_lines(printer), _width(printer), _header_lines(printer))
    group_decls = []
    for g in found:
        items: list[m.Item] = [
            builder.item(c, dtypes=builder.intern(m.DottedName(("ds",), SPAN))) for c in g.configs
        ]
        group_decls.append(m.GroupDecl(g.name, ("ds",), tuple(folder.fold(items)), SPAN))
    bodies: list[list[m.Item]] = []
    for seq in seqs:
        body: list[m.Item] = [
            builder.item(x) if isinstance(x, Config) else _use_item(builder, x) for x in seq
        ]
        bodies.append(folder.fold(body) if fold else body)
    files = _place(backends, bodies, decls, group_decls, layout, seqs)
    out: dict[str, str] = {}
    for name, (file_decls, imports) in files.items():
        spec = m.Spec(name, (*[m.ImportDecl(i, SPAN) for i in imports], *file_decls))
        text = header + "\n\n" + printer.spec(spec)
        # The printer writes fmt's canonical layout (the tests check that `bcfg
        # fmt` leaves imported specs unchanged): no need to parse it again here.
        out[name] = text
    not_allowed = sorted({p.split(".")[0] for p in paths} - set(allow))
    return Assembled(out, not_allowed)


def _dtype_decls(builder: Builder, written: list[Config], uses: list[Use]) -> list[m.Decl]:
    """``dtypes`` declarations for dtype configs and dtype sets used more than once."""
    counts: dict[tuple, int] = {}
    first: dict[tuple, DC] = {}
    all_ds: list[tuple[DC, ...]] = [c.dtypes for c in written] + [u.ds for u in uses]
    for ds in all_ds:
        for dc in ds:
            counts[dc.key()] = counts.get(dc.key(), 0) + 1
            first.setdefault(dc.key(), dc)
    out: list[m.Decl] = [builder.dtype_decl(first[k]) for k, n in counts.items() if n >= 2]
    sets: dict[tuple, list[Any]] = {}
    users_of: list[Config | Use] = [*written, *uses]
    for user in users_of:
        ds = user.dtypes if isinstance(user, Config) else user.ds
        if len(ds) >= 2:
            sets.setdefault(tuple(d.key() for d in ds), []).append(user)
    for users in sets.values():
        if len(users) >= 2:
            u = users[0]
            stem = _list_stem(u.pattern) if isinstance(u, Config) else f"{u.group}_dtypes"
            ds = u.dtypes if isinstance(u, Config) else u.ds
            out.append(builder.list_decl(ds, stem))
    return out


def _list_stem(pattern: Any) -> str:
    def words(p: Any) -> list[str]:
        if isinstance(p, tuple):
            return [w for x in p for w in words(x)]
        if hasattr(p, "path"):
            parts = p.path.split(".")
            return [parts[-2] if p.path.startswith("torch.ops.") and len(parts) > 3 else parts[-1]]
        return [str(p)]

    stem = "_".join(w.lower().strip("_") for w in words(pattern)[:3])
    return re.sub(r"\W", "_", stem) + "_dtypes"


def _use_item(builder: Builder, u: Use) -> m.UseItem:
    extra = dict(u.extra)
    args = tuple(builder.dtypes_value(u.ds) if p == u.ds_param else extra[p] for p in u.params)
    return m.UseItem(u.group, args, SPAN)


def _refs(node: Any) -> set[str]:
    """The one-word names a node mentions (definitions it needs)."""
    out: set[str] = set()
    for n in m.walk(node):
        if isinstance(n, m.DottedName):
            out.add(n.parts[0])
        elif isinstance(n, m.UseItem):
            out.add(n.group)
    return out


def _place(
    backends: list[ReadBackend],
    bodies: list[list[m.Item]],
    decls: list[tuple[Any, str | None]],
    groups: list[m.GroupDecl],
    layout: Layout,
    seqs: list[Seq],
) -> dict[str, tuple[list[m.Decl], list[str]]]:
    """Each file's declarations and imports."""
    files: dict[str, tuple[list[m.Decl], list[str]]] = {}
    backend_decls: dict[str, list[m.Decl]] = {}
    needs: dict[str, set[str]] = {}
    for b, body, fname in zip(backends, bodies, layout.files):
        decl = m.BackendDecl(b.module, b.name if b.name != b.module else None, tuple(body), SPAN)
        backend_decls.setdefault(fname, []).append(decl)
        needs.setdefault(fname, set()).update(_refs(decl))
    shared = layout.shared
    if shared is not None:
        needs[shared] = set().union(*(_refs(g) for g in groups)) if groups else set()
    home: dict[str, str] = {}
    # Users first: a definition goes where it is needed, the shared file if in two files or more.
    for d, _ in reversed(decls):
        users = {f for f, refs in needs.items() if d.name in refs}
        if shared is not None and (len(users) != 1 or isinstance(d, m.AliasDecl)):
            where = shared
        else:
            where = next(iter(users)) if users else (shared or layout.files[0])
        home[d.name] = where
        needs.setdefault(where, set()).update(_refs(d) - {d.name})
    for fname in dict.fromkeys(layout.files + ([shared] if shared else [])):
        own = [d for d, _ in decls if home.get(d.name) == fname]
        imports: list[str] = []
        if shared is not None and fname != shared:
            imports.append(posixpath.relpath(shared, posixpath.dirname(fname) or "."))
        imports += _group_imports(fname, seqs, layout)
        extra_groups = groups if fname == (shared or layout.files[0]) else []
        files[fname] = (own + list(extra_groups) + backend_decls.get(fname, []), imports)
    return files


def _group_imports(fname: str, seqs: list[Seq], layout: Layout) -> list[str]:
    """The files declaring the known groups this file uses."""
    out: list[str] = []
    for seq, f in zip(seqs, layout.files):
        if f != fname:
            continue
        for u in seq:
            if isinstance(u, Use) and u.file is not None:
                target = (
                    u.file
                    if u.file.startswith(LIBRARY_SCHEME)
                    else posixpath.relpath(u.file, posixpath.dirname(fname) or ".")
                )
                if target not in out:
                    out.append(target)
    return out


def _item_lines(printer: Printer) -> Callable[[m.Item], int]:
    def measure(it: m.Item) -> int:
        return render(printer.item(it)).count("\n") + 1

    return measure


def _width(printer: Printer) -> Callable[[Any], int | None]:
    memo: dict[int, tuple[Any, int | None]] = {}

    def width(v: Any) -> int | None:
        hit = memo.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        text = render(printer.expr(v if not isinstance(v, str) else m.Str(v, SPAN)))
        w = None if "\n" in text else len(text)
        memo[id(v)] = (v, w)
        return w

    return width


def _header_lines(printer: Printer) -> Callable[[m.ListExpr], int]:
    def lines(e: m.ListExpr) -> int:
        return render(["    for x in ", printer.expr(e), " {"]).count("\n") + 1

    return lines
