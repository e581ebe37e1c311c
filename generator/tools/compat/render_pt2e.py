"""``bcfg compat``'s output for a PT2E quantizer: a text table, markdown, or JSON.

One row per op of the exported graph: the rule that annotated it and the
config's scope, or why it is left float. Text and markdown then explain each
op that is neither quantized nor left float on purpose, once per distinct
explanation, naming the nearest rule and where the spec writes it. JSON is
``{"backend": ..., "skipped": [...], "honored": [...]}`` as for FX, one
object per node with its ``"reason"`` (a code) and ``"detail"`` (in words).
Node and rule names come from the user's model and specs: each format
escapes them for where they land (``escape``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...escape import deep, json_text, md_code, md_text, terminal
from ...live.compat.pt2e import PT2EResult


@dataclass(frozen=True)
class Header:
    backend: str
    spec: str | None
    config: str
    model: str
    qat: bool
    strict: bool
    torch: str
    how: str = ""  # how the config function configured the quantizer, in words

    def line(self) -> str:
        mode = "quantization-aware training" if self.qat else "post-training quantization"
        export = "strict" if self.strict else "non-strict"
        spec = f" ({self.spec})" if self.spec else ""
        how = f"; {self.how}" if self.how else ""
        return (
            f"backend {self.backend}{spec}, PT2E quantizer, config {self.config}, "
            f"model {self.model}; {mode}, {export} export, torch {self.torch}{how}"
        )


@dataclass(frozen=True)
class Row:
    node: str
    op: str
    pattern: str
    config: str
    verdict: str
    reason: str
    detail: str
    where: str | None
    specs: str | None
    quantized: bool
    deliberate: bool
    role: str | None

    @property
    def flagged(self) -> bool:
        return (not self.quantized and not self.deliberate) or self.reason == "disallowed"


def verdict(e: Any) -> str:
    if e.reason == "disallowed":
        return "config not allowed"
    if e.quantized:
        inner = e.role in ("inside", "part")
        return "quantized (inside its pattern)" if inner else "quantized"
    return "left float on purpose" if e.deliberate else "left float"


def rows(result: PT2EResult) -> list[Row]:
    out = []
    for e in result.entries:
        out.append(
            Row(
                node=e.node,
                op=e.op,
                pattern=e.rule or "-",
                config=e.scope or "-",
                verdict=verdict(e),
                reason=e.reason,
                detail=e.detail,
                where=result.where.get(e.rule) if e.rule else None,
                specs=e.specs,
                quantized=e.quantized,
                deliberate=e.deliberate,
                role=e.role,
            )
        )
    return out


def summary(table: list[Row]) -> str:
    quantized = sum(r.quantized and r.reason != "disallowed" for r in table)
    rejected = sum(r.reason == "disallowed" for r in table)
    deliberate = sum(r.deliberate for r in table)
    flagged = sum(not r.quantized and not r.deliberate for r in table)
    parts = [f"{quantized} quantized", f"{flagged} left float"]
    if rejected:
        parts.append(f"{rejected} with a config their pattern does not allow")
    if deliberate:
        parts.append(f"{deliberate} left float on purpose (no config, or no float input)")
    return f"{len(table)} op(s): " + ", ".join(parts)


COLUMNS = (
    ("NODE", "node"),
    ("OP", "op"),
    ("PATTERN", "pattern"),
    ("CONFIG", "config"),
    ("VERDICT", "verdict"),
)


def _groups(table: list[Row]) -> list[list[Row]]:
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in table:
        if r.flagged:
            groups.setdefault((r.verdict, r.pattern, r.where, r.detail), []).append(r)
    return list(groups.values())


def _lines(group: list[Row]) -> list[str]:
    r = group[0]
    out = []
    if r.pattern != "-":
        out.append(f"pattern {r.pattern}" + (f" ({r.where})" if r.where else ""))
    detail = r.detail.removeprefix(f"pattern {r.pattern}: ") if r.pattern != "-" else r.detail
    out.append(f"{detail} [{r.reason}]")
    return out


def _subjects(group: list[Row], limit: int = 6) -> str:
    names = [r.node for r in group[:limit]]
    more = f", and {len(group) - limit} more" if len(group) > limit else ""
    return ", ".join(names) + more


def text(header: Header, result: PT2EResult, table: list[Row]) -> str:
    header, table = deep(header, terminal), deep(table, terminal)
    lines = [header.line(), ""]
    cells = [[getattr(r, a) for _, a in COLUMNS] for r in table]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (h, _) in enumerate(COLUMNS)]

    def line(cs: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cs, widths)).rstrip()

    lines.append(line([h for h, _ in COLUMNS]))
    lines += [line(c) for c in cells]
    for group in _groups(table):
        lines += ["", f"{_subjects(group)}: {group[0].verdict}"]
        lines += ["    " + x for x in _lines(group)]
    if result.rejected_error:
        first, *more = result.rejected_error.split("\n")
        lines += ["", terminal(f"prepare_pt2e raises: {first}")]
        lines += ["    " + terminal(x.strip()) for x in more]
    lines += ["", terminal(summary(table))]
    return "\n".join(lines) + "\n"


def markdown(header: Header, result: PT2EResult, table: list[Row]) -> str:
    lines = [
        f"# bcfg compat: backend {md_code(header.backend)}, PT2E",
        "",
        md_text(header.line()),
        "",
    ]
    lines.append("| " + " | ".join(h.lower() for h, _ in COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for r in table:
        cells = []
        for h, a in COLUMNS:
            value = getattr(r, a)
            if h == "VERDICT":
                cells.append(f"**{value}**" if r.flagged else value)
            else:
                cells.append(value if value == "-" else md_code(value))
        lines.append("| " + " | ".join(cells) + " |")
    groups = _groups(table)
    if groups:
        lines += ["", "## Not quantized"]
    for group in groups:
        lines += ["", f"### {md_text(_subjects(group))}: {group[0].verdict}", ""]
        lines += [f"- {md_text(x)}" for x in _lines(group)]
    if result.rejected_error:
        first, *more = result.rejected_error.split("\n")
        lines += ["", md_text(f"prepare_pt2e raises: {first}")]
        lines += ([""] if more else []) + [f"- {md_text(x.strip())}" for x in more]
    lines += ["", md_text(summary(table))]
    return "\n".join(lines) + "\n"


def as_json(header: Header, result: PT2EResult, table: list[Row]) -> str:
    doc: dict[str, Any] = {
        "backend": header.backend,
        "spec": header.spec,
        "quantizer": "pt2e",
        "quantization_config": header.config,
        "configured": header.how,
        "model": header.model,
        "qat": header.qat,
        "strict_export": header.strict,
        "torch": header.torch,
        "error": result.error,
        "prepare_error": result.rejected_error,
        "summary": summary(table) if result.error is None else None,
        "skipped": [_entry(r) for r in table if r.flagged or not r.quantized],
        "honored": [_entry(r) for r in table if r.quantized and not r.flagged],
    }
    return json_text(doc)


def _entry(r: Row) -> dict[str, Any]:
    return {
        "node": r.node,
        "op": r.op,
        "pattern": None if r.pattern == "-" else r.pattern,
        "where": r.where,
        "config": None if r.config == "-" else r.config,
        "status": r.verdict,
        "deliberate": r.deliberate,
        "reason": r.reason,
        "detail": r.detail,
        "role": r.role,
        "specs": r.specs,
    }
