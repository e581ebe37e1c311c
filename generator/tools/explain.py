"""``bcfg explain BACKEND [PATTERN]``: where every value of a pattern config comes from.

For one config: each field with its value (in spec words) and the spec
``file:line:column`` that sets it; the chain that placed the pattern (each
``use`` with the arguments bound to the group's parameters and where the group
is defined, each ``for`` with its element and where the loop is written); the
dtype sets, constraints and fusers it used, and how each was reached; the
config an ``override pattern`` replaced. Without PATTERN: the backend's
configs in order, each with where it is written and the chain that placed it.

PATTERN is written as the spec writes it (``nn.Conv2d``, ``(nn.Conv2d,
nn.ReLU)``, ``"relu_"``, ``complex (...)``); full dotted paths, any spacing and
either quote also match, a method name may go unquoted, and ``#N`` names the
N-th config. A name that matches nothing is a usage error (exit 2) with the
closest names and the other backends that have the pattern.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import Any

from ..cli import ExitCode, Report, UsageError
from ..config import find_project
from ..emit import words
from ..escape import deep, json_text, terminal
from ..pipeline import analyze_project, paused_gc
from ..semantics import model as m
from ..sources import Span


def run(args: argparse.Namespace, report: Report) -> ExitCode:
    project = find_project()
    with paused_gc():
        analysis = analyze_project(project)
    # PT2E-only targets (fx: false) are explained as FX backends are: their patterns are specs.
    backends = analysis.backends + analysis.pt2e_only
    only = {b.module for b in analysis.pt2e_only}
    backend = find_backend(backends, args.backend)
    query = " ".join(args.pattern).strip()
    if query:
        index = find_pattern(backends, backend, query)
        data = explain_config(backend, index, backend.module in only)
        render = config_text
    else:
        data = explain_backend(backend, backend.module in only)
        render = backend_text
    # Names, values and file names come from specs and paths: escaped for where they land.
    if args.format == "json":
        text = json_text(data)
    else:
        text = render(deep(data, terminal))
    report.result(text)
    return ExitCode.OK


# ------------------------------------------------------------------ finding


def find_backend(
    backends: list[m.Backend], name: str, pt2e_only: Sequence[m.Backend] = (), fx_only: str = ""
) -> m.Backend:
    """The backend called ``name``; a UsageError with the closest names if there is none.

    ``pt2e_only`` are PT2E-only targets a command cannot take (it needs a BackendConfig):
    naming one is a UsageError that says so, and ``fx_only`` what to do instead.
    """
    for b in backends:
        if b.module == name:
            return b
    for b in pt2e_only:
        if b.module == name:
            raise UsageError(
                f"backend '{name}' is PT2E-only ({b.spec_file} says `quantizer {name} "
                f"{{ fx: false }}`): it has no BackendConfig{'; ' + fx_only if fx_only else ''}"
            )
    names = sorted(b.module for b in [*backends, *pt2e_only])
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise UsageError(f"no backend '{name}': {hint}backends are {', '.join(names) or 'none'}")


def _norm(text: str) -> str:
    """A pattern's text with the differences a command line may add removed: spaces and quotes."""
    return re.sub(r"\s+", "", text).replace("'", '"')


def _forms(c: m.PatternConfig) -> set[str]:
    """Every way of writing ``c``'s pattern that ``find_pattern`` accepts, normalised."""
    short, full = words.pattern(c.pattern), words.full_pattern(c.pattern)
    forms = {short, full}
    if c.complex:
        forms |= {f"complex {short}", f"complex {full}"}
    return {_norm(f) for f in forms}


def _matches(backend: m.Backend, query: str) -> list[int]:
    """Indexes of the configs whose pattern is written ``query`` (a method name may be unquoted)."""
    wanted = {_norm(query)}
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", query):
        wanted.add(f'"{query}"')
    return [i for i, c in enumerate(backend.configs) if _forms(c) & wanted]


def find_pattern(backends: list[m.Backend], backend: m.Backend, query: str) -> int:
    """The index of the config ``query`` names in ``backend``; a UsageError saying what is close."""
    number = re.fullmatch(r"#([0-9]+)", query)  # ASCII digits: '#١' is no config number
    if number:
        n = int(number.group(1))
        if 1 <= n <= len(backend.configs):
            return n - 1
        raise UsageError(
            f"{backend.module} has {len(backend.configs)} pattern configs; #{n} is not one of them"
        )
    found = _matches(backend, query)
    if len(found) == 1:
        return found[0]
    if found:
        both = " and ".join(f"#{i + 1} {words.config_pattern(backend.configs[i])}" for i in found)
        raise UsageError(
            f"'{query}' matches {both} in {backend.module} (a pattern written once per value "
            "of given: is several configs); write one of them, or its number"
        )
    shown = {_norm(words.config_pattern(c)): words.config_pattern(c) for c in backend.configs}
    close = difflib.get_close_matches(_norm(query), list(shown), n=3, cutoff=0.6)
    names = [shown[c] for c in close]
    hint = f"; did you mean {_alternatives(names)}?" if names else ""
    others = [b.module for b in backends if b is not backend and _matches(b, query)]
    where = (
        f" ({_alternatives(others, 'and')} {'has' if len(others) == 1 else 'have'} it)"
        if others
        else ""
    )
    raise UsageError(f"backend '{backend.module}' has no pattern {query}{where}{hint}")


def _alternatives(items: list[str], word: str = "or") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


# ------------------------------------------------------------------ the explanation


def _at(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    return {"file": span.file, "line": span.line, "column": span.column}


def _step(s: m.Step) -> dict[str, Any]:
    written = f"use {s.anchor}" if s.kind == m.StepKind.USE else s.anchor
    return {
        "kind": str(s.kind),
        "text": written,
        "at": _at(s.span),
        "defined_at": _at(s.definition),
        "definitions": [f"{d.kind} {d.name}" for d in s.definitions],
    }


def _via(s: m.Step) -> str:
    """A step, briefly: ``use conv at specs/x86.bcfg:5``, ``for op = nn.ReLU``."""
    if s.kind == m.StepKind.USE:
        return f"use {s.anchor.split('(')[0]} at {s.span.file}:{s.span.line}"
    return s.anchor


def _definitions(origin: m.Origin) -> list[dict[str, Any]]:
    """Every named definition the config used, once, with how it was reached."""
    seen: dict[tuple[str, str, Span], dict[str, Any]] = {}
    sources = [("a field", origin.definitions)] + [(_via(s), s.definitions) for s in origin.chain]
    for via, refs in sources:
        for d in refs:
            key = (d.kind, d.name, d.span)
            if key not in seen:
                seen[key] = {"kind": d.kind, "name": d.name, "at": _at(d.span), "via": via}
    return list(seen.values())


def _fields(c: m.PatternConfig, origin: m.Origin | None) -> list[dict[str, Any]]:
    out = []
    for spec in words.SPEC_ORDER:
        value = words.field(c, spec)
        entry: dict[str, Any] = {
            "field": spec.word,
            "value": value,
            "default": words.is_default(c, spec),
            "at": _at(origin.field(spec.word)) if origin else None,
        }
        if spec.word == "dtypes":
            entry["dtype_configs"] = [
                {"text": words.dtype_config(d), "name": d.name} for d in c.dtype_configs
            ]
        out.append(entry)
    return out


def _origin(origin: m.Origin | None) -> dict[str, Any]:
    if origin is None:
        return {"written_at": None, "chain": []}
    return {"written_at": _at(origin.item), "chain": [_step(s) for s in origin.chain]}


def _target(backend: m.Backend, pt2e_only: bool) -> dict[str, Any]:
    """Whether the backend is a PT2E-only target, and then its quantizer's getter."""
    return {
        "pt2e_only": pt2e_only,
        "quantizer": f"get_{backend.module}_quantizer()" if pt2e_only else None,
    }


def explain_config(backend: m.Backend, index: int, pt2e_only: bool = False) -> dict[str, Any]:
    """Everything ``bcfg explain BACKEND PATTERN`` says about config ``index`` (0-based), as data.

    ``pt2e_only``: the backend is a PT2E-only target (fx: false), no BackendConfig."""
    c = backend.configs[index]
    origin = c.origin
    return {
        "backend": backend.module,
        "backend_name": backend.name,
        **_target(backend, pt2e_only),
        "index": index + 1,
        "count": len(backend.configs),
        "pattern": words.config_pattern(c),
        "full_pattern": ("complex " if c.complex else "") + words.full_pattern(c.pattern),
        "kind": words.kind(c),
        **_origin(origin),
        "fields": _fields(c, origin),
        "definitions": _definitions(origin) if origin else [],
        "replaced": _origin(origin.replaced) if origin and origin.replaced else None,
    }


def explain_backend(backend: m.Backend, pt2e_only: bool = False) -> dict[str, Any]:
    """What ``bcfg explain BACKEND`` lists: every config in order, with its origin."""
    return {
        "backend": backend.module,
        "backend_name": backend.name,
        **_target(backend, pt2e_only),
        "spec_file": backend.spec_file,
        "patterns": [
            {
                "index": i,
                "pattern": words.config_pattern(c),
                "kind": words.kind(c),
                **_origin(c.origin),
                "replaces": (
                    _origin(c.origin.replaced)["written_at"]
                    if c.origin and c.origin.replaced
                    else None
                ),
            }
            for i, c in enumerate(backend.configs, 1)
        ],
    }


# ------------------------------------------------------------------ text


def _where(at: dict[str, Any] | None, full: bool = True) -> str:
    if at is None:
        return ""
    return f"{at['file']}:{at['line']}" + (f":{at['column']}" if full else "")


def _table(rows: Sequence[Sequence[str]], indent: str = "  ", cap: int = 48) -> list[str]:
    """Rows of cells in aligned columns; a cell longer than ``cap`` widens its own row only."""
    if not rows:
        return []
    widths = [min(max(len(r[i]) for r in rows), cap) for i in range(len(rows[0]) - 1)]
    return [
        (indent + "".join(c.ljust(w) + "  " for c, w in zip(r, widths)) + r[-1]).rstrip()
        for r in rows
    ]


def _chain_lines(chain: list[dict[str, Any]]) -> list[str]:
    rows = []
    for s in chain:
        what = "group" if s["kind"] == "use" else "loop"
        defined = f"({what} at {_where(s['defined_at'], False)})"
        rows.append((_where(s["at"]), f"{s['text']}  {defined}"))
    return _table(rows, "    ")


def _field_lines(fields: list[dict[str, Any]], pt2e_only: bool = False) -> list[str]:
    """The fields set, aligned, then those not set (not for a PT2E-only target: the
    BackendConfig's fields are never set there)."""
    rows: list[tuple[str, str, str]] = []
    unset = []
    for f in fields:
        if f["value"] is None:
            if f["field"] != "pt2e":  # only PT2E quantizers read it: said where a spec sets it
                unset.append(f["field"])
            continue
        values = [
            x["text"] + (f"  ({x['name']})" if x["name"] else "")
            for x in f.get("dtype_configs", [])
        ] or [f["value"]]
        where = "(default)" if f["default"] else _where(f["at"])
        rows.append((f["field"], where, values[0]))
        rows += [("", "", v) for v in values[1:]]
    lines = _table(rows)
    if unset and not pt2e_only:
        lines.append(f"  not set: {', '.join(unset)}")
    return lines


def config_text(d: dict[str, Any]) -> str:
    """The text of ``bcfg explain BACKEND PATTERN``."""
    lines = [
        f"{d['backend']}: pattern {d['pattern']} ({d['kind']}), config {d['index']} of {d['count']}",
        *_pt2e_only_line(d),
        f"  written at {_where(d['written_at'])}",
    ]
    if d["chain"]:
        lines += ["  placed by"] + _chain_lines(d["chain"])
    if d["replaced"]:
        r = d["replaced"]
        lines.append(f"  replaces the config written at {_where(r['written_at'])}")
        lines += _chain_lines(r["chain"])
    lines += ["", "fields"] + _field_lines(d["fields"], bool(d.get("pt2e_only")))
    if d["definitions"]:
        rows = [
            (f"{x['kind']} {x['name']}", _where(x["at"], False), f"via {x['via']}")
            for x in d["definitions"]
        ]
        lines += ["", "definitions used"] + _table(rows)
    return "\n".join(lines) + "\n"


def _pt2e_only_line(d: dict[str, Any]) -> list[str]:
    if not d.get("pt2e_only"):
        return []
    return [f"  PT2E only: {d['quantizer']} quantizes with these patterns; no BackendConfig"]


def backend_text(d: dict[str, Any]) -> str:
    """The text of ``bcfg explain BACKEND``: one line per config, in order."""
    n = len(d["patterns"])
    lines = [
        f"{d['backend']} ({d['spec_file']}): {n} pattern config{'s' if n != 1 else ''}, in order",
        *_pt2e_only_line(d),
    ]
    rows = []
    for p in d["patterns"]:
        via = " › ".join(s["text"] for s in p["chain"])
        if p["replaces"]:
            via += ("; " if via else "") + f"replaces {_where(p['replaces'])}"
        rows.append(
            (str(p["index"]).rjust(len(str(n))), p["pattern"], _where(p["written_at"]), via)
        )
    return "\n".join(lines + _table(rows)) + "\n"
