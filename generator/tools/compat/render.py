"""``bcfg compat``'s output: a text table, markdown, or JSON.

Text and markdown list every verdict in a table, then explain each skip that
is neither honoured nor deliberate, once per distinct explanation (a
QConfig that misses a constraint usually misses it on dozens of patterns).
JSON is ``{"backend": ..., "skipped": [...], "honored": [...]}`` with one
object per pattern (``"pattern"``) or node (``"node"``), each with its
``"reason"``. Names (of nodes, modules, patterns, files) come from the user's
model and specs: each format escapes them for where they land (``escape``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...escape import deep, json_text, md_code, md_text, terminal
from ...live.compat.verdict import CompatResult, Status, Verdict
from ...semantics import model as m


@dataclass(frozen=True)
class Header:
    """What was checked: for the first lines of the output and the JSON's top level."""

    backend: str
    spec: str | None
    mapping: str
    model: str | None
    qat: bool
    torch: str

    @property
    def mode(self) -> str:
        return "quantization-aware training" if self.qat else "post-training quantization"


@dataclass(frozen=True)
class Row:
    """A verdict with what the spec says about its pattern config."""

    verdict: Verdict
    where: str | None  # the spec location of the pattern config
    closest_name: str | None  # the spec's name of the closest dtype config, if it has one
    fits_name: str | None


def rows(result: CompatResult, backend: m.Backend | None) -> list[Row]:
    """The verdicts with spec locations and dtype config names (when the backend is a spec's)."""
    out = []
    for v in result.verdicts:
        config = backend.configs[v.config] if backend is not None and v.config is not None else None
        where = str(config.span) if config is not None and config.span is not None else None

        def name(k: int | None, config: m.PatternConfig | None = config) -> str | None:
            if config is None or k is None or k >= len(config.dtype_configs):
                return None
            return config.dtype_configs[k].name

        out.append(Row(v, where, name(v.closest.index if v.closest else None), name(v.fits)))
    return out


def summary(result: CompatResult) -> str:
    """``12 honoured, 25 fused, 3 not honoured, 1 skipped on purpose``."""
    count = {status: sum(v.status is status for v in result.verdicts) for status in Status}
    parts = [f"{count[Status.HONOURED]} honoured"]
    if count[Status.FUSED]:
        parts.append(f"{count[Status.FUSED]} fused (their fused module's config decides)")
    if count[Status.SWAPPED]:
        parts.append(f"{count[Status.SWAPPED]} swapped for QAT")
    parts.append(f"{len(result.not_honoured)} not honoured")
    deliberate = sum(v.deliberate for v in result.verdicts)
    if deliberate:
        parts.append(f"{deliberate} skipped on purpose (QConfig None, or no Tensor inputs)")
    what = "node(s)" if result.model else "pattern config(s)"
    return f"{len(result.verdicts)} {what}: " + ", ".join(parts)


# ------------------------------------------------------------------- text


def text(header: Header, result: CompatResult, table: list[Row]) -> str:
    header, table = deep(header, terminal), deep(table, terminal)
    lines = [_title(header), ""]
    columns = _columns(result.model)
    cells = [[get(r) for _, get in columns] for r in table]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (h, _) in enumerate(columns)]
    lines.append(_line([h for h, _ in columns], widths))
    lines += [_line(c, widths) for c in cells]
    for group in _groups(table):
        lines += ["", *_text_details(group, result.model)]
    lines += ["", terminal(summary(result))]
    return "\n".join(lines) + "\n"


def _title(header: Header) -> str:
    spec = f" ({header.spec})" if header.spec else ""
    model = f", model {header.model}" if header.model else ""
    return (
        f"backend {header.backend}{spec}, QConfigMapping {header.mapping}{model}; "
        f"{header.mode}, torch {header.torch}"
    )


def _line(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def _columns(model: bool) -> list[tuple[str, Callable[[Row], str]]]:
    def verdict(r: Row) -> str:
        return str(r.verdict.status)

    def source(r: Row) -> str:
        return r.verdict.source or "-"

    if model:
        return [
            ("NODE", lambda r: r.verdict.node or ""),
            ("OP", lambda r: r.verdict.op or ""),
            ("PATTERN", lambda r: r.verdict.pattern or "-"),
            ("QCONFIG FROM", source),
            ("VERDICT", verdict),
        ]
    return [
        ("WHERE", lambda r: r.where or "-"),
        ("PATTERN", lambda r: r.verdict.pattern or ""),
        ("QCONFIG FROM", source),
        ("VERDICT", verdict),
    ]


def _groups(table: list[Row]) -> list[list[Row]]:
    """Rows to explain (not honoured, not deliberate), grouped by identical explanations."""
    groups: dict[Any, list[Row]] = {}
    for r in table:
        v = r.verdict
        if v.honoured or v.deliberate:
            continue
        key: tuple[Any, ...] = (v.status, v.reason, v.source, v.qconfig, v.closest)
        key += (r.closest_name, v.suggestion, v.overrides, v.notes)
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def _subject(r: Row, model: bool) -> str:
    if model:
        return r.verdict.node or ""
    return f"{r.verdict.pattern} ({r.where})" if r.where else r.verdict.pattern or ""


def _subjects(group: list[Row], model: bool, limit: int = 6) -> str:
    names = [_subject(r, model) for r in group[:limit]]
    more = f", and {len(group) - limit} more" if len(group) > limit else ""
    return ", ".join(names) + more


# A line of an explanation: its depth, its words, and the code it shows (a QConfig, a dtype config).
Line = tuple[int, str, str]


def _explanation(group: list[Row], model: bool) -> list[Line]:
    """The lines explaining the verdicts of a group (the same but for their patterns)."""
    r = group[0]
    v = r.verdict
    out: list[Line] = []
    patterns = {(g.verdict.pattern, g.where): None for g in group if g.verdict.pattern}
    if model and patterns:
        shown = [p + (f" ({where})" if where else "") for p, where in patterns]
        out.append((0, f"pattern{'s' if len(shown) > 1 else ''} {', '.join(shown)}", ""))
    if v.status is not Status.REJECTED:
        out.append((0, v.reason, ""))
    if v.source is not None and v.qconfig is not None:
        out.append((0, f"QConfig from {v.source}: ", v.qconfig))
    if v.closest is not None:
        c = v.closest
        named = f" ({r.closest_name})" if r.closest_name else ""
        out.append((0, f"closest dtype config, {c.index + 1} of {c.count}{named}: ", c.text))
        out += [(1, str(f), "") for f in c.failures]
    if v.status is Status.REJECTED:
        fits = (0, "would fit: ", v.suggestion) if v.suggestion else None
        out.append(fits or (0, "no edit of this QConfig fits", ""))
    out += [(0, note, "") for note in v.notes]
    if v.overrides:
        out.append((0, "single nodes may get another QConfig from: " + ", ".join(v.overrides), ""))
    return out


def _text_details(group: list[Row], model: bool) -> list[str]:
    first = group[0]
    head = f"{_subjects(group, model)}: {first.verdict.status}"
    return [head] + ["    " * (d + 1) + t + code for d, t, code in _explanation(group, model)]


# --------------------------------------------------------------- markdown


def markdown(header: Header, result: CompatResult, table: list[Row]) -> str:
    spec = f" ({md_code(header.spec)})" if header.spec else ""
    model = f", model {md_code(header.model)}" if header.model else ""
    backend = md_code(header.backend)
    title = f"backend {backend}{spec}, QConfigMapping {md_code(header.mapping)}{model}"
    lines = [
        f"# bcfg compat: backend {backend}",
        "",
        title + f"; {header.mode}, torch {md_text(header.torch)}",
        "",
    ]
    columns = _columns(result.model)
    lines.append("| " + " | ".join(h.lower() for h, _ in columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for r in table:
        cells = [_md_cell(get(r), r) for (h, get) in columns]
        lines.append("| " + " | ".join(cells) + " |")
    groups = _groups(table)
    if groups:
        lines += ["", "## Not honoured"]
    for group in groups:
        lines += [
            "",
            f"### {md_text(_subjects(group, result.model))}: {group[0].verdict.status}",
            "",
        ]
        lines += [
            "  " * d + f"- {md_text(t)}" + (md_code(code) if code else "")
            for d, t, code in _explanation(group, result.model)
        ]
    lines += ["", md_text(summary(result))]
    return "\n".join(lines) + "\n"


def _md_cell(value: str, r: Row) -> str:
    if value in ("", "-"):
        return value
    if value == str(r.verdict.status):
        return value if r.verdict.honoured or r.verdict.deliberate else f"**{value}**"
    return md_code(value)


# ------------------------------------------------------------------- json


def as_json(header: Header, result: CompatResult, table: list[Row]) -> str:
    doc: dict[str, Any] = {
        "backend": header.backend,
        "spec": header.spec,
        "qconfig_mapping": header.mapping,
        "model": header.model,
        "qat": header.qat,
        "torch": header.torch,
        "error": result.error,
        "summary": summary(result) if result.error is None else None,
        "skipped": [_entry(r) for r in table if not r.verdict.honoured],
        "honored": [_entry(r) for r in table if r.verdict.honoured],
    }
    return json_text(doc)


def _entry(r: Row) -> dict[str, Any]:
    v = r.verdict
    out: dict[str, Any] = {"node": v.node, "op": v.op} if v.node is not None else {}
    out |= {
        "pattern": v.pattern,
        "where": r.where,
        "status": str(v.status),
        "deliberate": v.deliberate,
        "reason": v.reason,
        "qconfig_from": v.source,
        "qconfig": v.qconfig,
    }
    if v.fits is not None:
        out["dtype_config"] = {"index": v.fits, "name": r.fits_name}
    if v.closest is not None:
        c = v.closest
        out["closest"] = {
            "index": c.index,
            "of": c.count,
            "name": r.closest_name,
            "dtype_config": c.text,
            "failures": [{"field": f.field, "message": f.message} for f in c.failures],
        }
        out["suggested_qconfig"] = v.suggestion
    if v.overrides:
        out["may_be_overridden_by"] = list(v.overrides)
    if v.notes:
        out["notes"] = list(v.notes)
    return out
