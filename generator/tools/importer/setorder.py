"""Configs whose order comes from a ``set``: written in an order that does not change between runs.

A set of classes iterates in hash order, and a class's hash is its address, so
a backend built by looping over a set (spconv's sparse convolutions) lists its
configs in a different order in every process, and would import as a
different spec each time. Sets are found among the module-level values of the
modules the target loaded; where their members appear in the configs, the
members are renamed so that they come in sorted order (the configs built for
the first member in this run become those for the first member by name, and so
on). If that renaming only reorders the configs (true whenever the code treats
the set's members alike), the reordered configs are what the spec says: the
same configs in the order the function would give if the set iterated in
sorted order. Otherwise the order of this run is kept. Either way the import
warns.
"""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from typing import Any

from ...live.names import PublicNames
from .builder import config_paths
from .reader import Config, FuseCall, FuseDef, Sym


def module_sets(modules: list[types.ModuleType]) -> list[tuple[str, frozenset]]:
    """(dotted name, members) of the sets among these modules' module-level values."""
    out = []
    for mod in modules:
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for attr, value in items:
            if isinstance(value, (set, frozenset)) and len(value) >= 2:
                out.append((f"{mod.__name__}.{attr}", frozenset(value)))
    return out


def loaded_modules(target_module: str, before: set[str]) -> list[types.ModuleType]:
    """The target's module and every module its import loaded, but torch's own."""
    names = [target_module] + sorted(set(sys.modules) - before)
    out = []
    for n in dict.fromkeys(names):
        mod = sys.modules.get(n)
        if isinstance(mod, types.ModuleType) and (n == target_module or not n.startswith("torch")):
            out.append(mod)
    return out


def _rename(c: Config, to: dict[str, str]) -> Config:
    def sym(s: Sym) -> Sym:
        return Sym(to.get(s.path, s.path))

    def pat(p: Any) -> Any:
        if isinstance(p, tuple):
            return tuple(pat(x) for x in p)
        return sym(p) if isinstance(p, Sym) else p

    def body(e: Any) -> Any:
        return (
            FuseCall(sym(e.target), tuple(body(a) for a in e.args))
            if isinstance(e, FuseCall)
            else e
        )

    fuser = c.fuser
    if fuser is not None:
        kind, value = fuser
        if kind == "fuse":
            assert isinstance(value, FuseDef)
            fuser = (kind, replace(value, body=body(value.body)))
        else:
            fuser = (kind, sym(value))
    return replace(
        c,
        pattern=pat(c.pattern),
        modules={k: sym(v) for k, v in c.modules.items()},
        fuser=fuser,
    )


def stabilise(
    configs: list[Config], sets: list[tuple[str, frozenset]], table: PublicNames
) -> tuple[list[int] | None, str | None]:
    """The order to write ``configs`` in (a permutation of their indexes), and why; (None, None) if unaffected."""
    first_seen: dict[str, int] = {}
    for c in configs:
        for p in config_paths([c]):
            first_seen.setdefault(p, len(first_seen))
    renames: dict[str, str] = {}
    named_sets = []
    for set_name, members in sets:
        paths = []
        for obj in members:
            try:
                name = table.name(obj)
            except Exception:  # noqa: BLE001  (a member whose attributes raise)
                name = None
            if name is not None and name.path in first_seen:
                paths.append(name.path)
        if len(paths) < 2:
            continue
        named_sets.append(set_name)
        this_run = sorted(paths, key=first_seen.__getitem__)
        renames.update({a: b for a, b in zip(this_run, sorted(paths)) if a != b})
    if not named_sets:
        return None, None
    shown = ", ".join(named_sets[:3]) + (" and more" if len(named_sets) > 3 else "")
    why = (
        f"the configs come from iterating the set{'s' if len(named_sets) > 1 else ''} {shown}, "
        "whose order changes from run to run"
    )
    if not renames:
        return list(range(len(configs))), (
            f"{why}; this run already lists the members in sorted order, which the spec keeps"
        )
    renamed = [_rename(c, renames).key() for c in configs]
    where: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        where.setdefault(c.key(), []).append(i)
    order = []
    for k in renamed:
        slot = where.get(k)
        if not slot:
            return (
                None,
                f"{why}; they could not be put in a stable order, so the spec follows this run",
            )
        order.append(slot.pop(0))
    return order, (
        f"{why}; the spec lists them as the function would if the set iterated in sorted order "
        "(the same configs, reordered, and so is the generated BackendConfig)"
    )
