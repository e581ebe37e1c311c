"""How ``bcfg diff`` shows its changes: text, markdown, json and GitHub annotations.

Every format starts from the same list of ``compare.Change`` and the same
summary: what changed per backend, and how many changes are narrowing (user
models may silently stop being quantized). ``text`` is for a terminal (one
block per pattern, coloured when asked), ``markdown`` for a pull-request
comment (a summary line, a table per backend with the patterns a change
affects listed together, the spec locations collapsed), ``json`` for tools,
and ``github`` for workflow annotations at the spec line.

Names, values, origins and file names come from specs and paths: each format
escapes them for where they land (``escape``): ``text`` for the terminal,
``markdown`` as Markdown text, code spans and HTML, ``json`` as valid Unicode,
``github`` as workflow command data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..diagnostics import github_command
from ..escape import deep, html_text, json_text, md_code, md_text, terminal
from ..semantics.compare import Action, Change, Severity

# A marker a CI job can look for to update its own comment instead of adding one.
MARKER = "<!-- bcfg-diff -->"
DETAILS_PER_BACKEND = 40  # origins listed per backend
COMMENT_LIMIT = 60_000


@dataclass(frozen=True)
class Labels:
    """What was compared: ``base`` and ``head`` as the user should read them."""

    base: str
    head: str


@dataclass(frozen=True)
class Summary:
    backends: tuple[str, ...]  # backends with any change
    backends_added: int
    backends_removed: int
    added: int  # patterns
    removed: int
    changed: int
    moved: int
    narrowing: int  # patterns with a narrowing change
    narrowing_settings: int = 0  # backend-wide settings narrowed (a PT2E quantizer dropped)

    @classmethod
    def of(cls, changes: list[Change]) -> Summary:
        def count(action: Action, backend_level: bool = False) -> int:
            return len(
                {
                    (c.backend, c.pattern)
                    for c in changes
                    if c.action == action and (c.pattern is None) == backend_level
                }
            )

        narrowed = {(c.backend, c.pattern) for c in changes if c.severity == Severity.NARROWING}
        settings = {
            (c.backend, c.field)
            for c in changes
            if c.severity == Severity.NARROWING and c.pattern is None and c.action == Action.CHANGED
        }
        return cls(
            tuple(dict.fromkeys(c.backend for c in changes)),
            count(Action.ADDED, True),
            count(Action.REMOVED, True),
            count(Action.ADDED),
            count(Action.REMOVED),
            count(Action.CHANGED),
            count(Action.MOVED),
            len({k for k in narrowed if k[1] is not None}),
            len(settings),
        )

    def counts(self) -> str:
        """``2 backends changed (1 added): 3 patterns added, 1 removed, 4 changed, 0 moved``."""
        n = len(self.backends)
        whole = [
            f"{k} {what}"
            for k, what in ((self.backends_added, "added"), (self.backends_removed, "removed"))
            if k
        ]
        return (
            f"{n} backend{_s(n)} changed{' (' + ', '.join(whole) + ')' if whole else ''}: "
            f"{self.added} pattern{_s(self.added)} added, {self.removed} removed, "
            f"{self.changed} changed, {self.moved} moved"
        )

    @property
    def narrowed(self) -> bool:
        return bool(self.narrowing or self.narrowing_settings)

    def narrows(self) -> str:
        """``narrows 3 patterns`` (user models may stop being quantized), or ``no narrowing``."""
        parts = [f"{self.narrowing} pattern{_s(self.narrowing)}"] if self.narrowing else []
        if self.narrowing_settings:
            n = self.narrowing_settings
            parts.append(f"{n} backend setting{_s(n)}")
        return "narrows " + " and ".join(parts) if parts else "no narrowing"

    def line(self) -> str:
        tail = " (user models may stop being quantized)" if self.narrowed else ""
        return f"{self.counts()}; {self.narrows()}{tail}"


def _s(n: int) -> str:
    return "s" if n != 1 else ""


def _by_backend(changes: list[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in changes:
        out.setdefault(c.backend, []).append(c)
    return out


def _field_text(c: Change, arrow: str = "→", none: str = "—") -> str:
    """``dtypes: + sym``, ``root: - nn.Linear``, ``observation: a → b``."""
    if c.before is None and c.after is not None:
        return f"{c.field}: + {c.after}"
    if c.after is None and c.before is not None:
        return f"{c.field}: - {c.before}"
    return f"{c.field}: {c.before if c.before is not None else none} {arrow} {c.after if c.after is not None else none}"


def _place(c: Change) -> str | None:
    """Where a reviewer should look: in the newer specs, or where what was removed was."""
    removed = c.action == Action.REMOVED or c.where is None
    if removed and c.was is not None and c.was.line >= 1:
        return f"was {c.was.file}:{c.was.line}"
    return _where(c)


def _through_steps(origin: str | None) -> bool:
    """The origin names the ``use``/``for`` steps that placed the pattern (``Origin.anchor`` joins
    them with ``>``): worth showing. A pattern written in the backend itself is said by its place.
    """
    return origin is not None and " > " in origin


def _where(c: Change) -> str | None:
    if c.where is None or c.where.line < 1:
        return None
    return f"{c.where.file}:{c.where.line}"


# ---------------------------------------------------------------- text

_SIGNS = {Action.ADDED: "+", Action.REMOVED: "-", Action.CHANGED: "~", Action.MOVED: ">"}
_SIGN_COLORS = {Action.ADDED: "32", Action.REMOVED: "31", Action.CHANGED: "33", Action.MOVED: "36"}
_SEVERITY_COLORS = {Severity.NARROWING: "1;31", Severity.WIDENING: "32", Severity.NEUTRAL: "2"}


def _painter(color: bool) -> Callable[[str, str], str]:
    return (lambda code, s: f"\033[{code}m{s}\033[0m") if color else (lambda code, s: s)


def text(changes: list[Change], labels: Labels, color: bool = False) -> str:
    """Per backend, each change once with every pattern it affects; then the summary line."""
    changes, labels = deep(changes, terminal), deep(labels, terminal)
    paint = _painter(color)
    head = f"bcfg diff: {labels.base} → {labels.head}"
    if not changes:
        return f"{head}: no semantic change\n"
    lines = [paint("1", head)]
    for backend, group in _by_backend(changes).items():
        lines += ["", paint("1", backend)]
        for (action, field, _, _, severity), rows in _grouped(group).items():
            sign = paint(_SIGN_COLORS[action], _SIGNS[action])
            tag = paint(_SEVERITY_COLORS[severity], severity.value)
            first = rows[0]
            if first.pattern is None:  # the backend itself
                what = (
                    _field_text(first)
                    if field
                    else f"backend {action.value} ({first.after or first.before})"
                )
                lines.append(f"  {sign} {what}  {tag}")
                lines += _places_lines(rows)
            elif field is None:  # patterns added or removed
                for c in rows:
                    lines.append(f"  {sign} {c.pattern}  {tag}")
                    lines += _places_lines([c])
                    if _through_steps(c.origin):
                        lines.append(
                            f"      {'was ' if action == Action.REMOVED else ''}{c.origin}"
                        )
            else:
                lines.append(f"  {sign} {_field_text(first)}  {tag}")
                lines += _parts_lines(first, paint)
                lines += _patterns_lines([c.pattern for c in rows if c.pattern is not None])
                lines += _places_lines(rows)
                if len(rows) == 1 and _through_steps(first.origin):
                    lines.append(f"      {first.origin}")
    lines += ["", Summary.of(changes).line()]
    return "\n".join(lines) + "\n"


def _parts_lines(c: Change, paint: Callable[[str, str], str]) -> list[str]:
    """The parts of a grouped change, each with its severity, when they are not all alike
    (a bound tightened and another loosened): the row's severity is the gravest."""
    if len({p.severity for p in c.parts}) < 2:
        return []
    out = []
    for p in c.parts:
        part = Change(c.backend, c.pattern, c.action, p.field, p.before, p.after, p.severity)
        out.append(
            f"      {_field_text(part)}  {paint(_SEVERITY_COLORS[p.severity], p.severity.value)}"
        )
    return out


def _places_lines(rows: list[Change]) -> list[str]:
    """Where each change is in the specs: ``at file:line`` (``was file:line`` for what was
    removed), every place named."""
    places = list(dict.fromkeys(p for p in map(_place, rows) if p))
    now = [p for p in places if not p.startswith("was ")]
    was = [p.removeprefix("was ") for p in places if p.startswith("was ")]
    return _listed("at", now) + _listed("was", was)


def _patterns_lines(patterns: list[str]) -> list[str]:
    """``in 3 patterns: a, b, c`` wrapped, every pattern named."""
    return _listed("in", patterns, "patterns")


def _listed(head: str, items: list[str], plural: str = "", width: int = 100) -> list[str]:
    """``head a, b, c`` wrapped (``head 3 plural: a, b, c`` with a plural), each item once."""
    names = list(dict.fromkeys(items))
    if not names:
        return []
    counted = plural and len(names) > 1
    words = (f"{head} {len(names)} {plural}:" if counted else head).split(" ")
    words += [n + ("," if i < len(names) - 1 else "") for i, n in enumerate(names)]
    lines, line = [], "     "
    for w in words:
        if len(line) + 1 + len(w) > width and line.strip():
            lines.append(line)
            line = "       "
        line += " " + w
    return lines + [line]


# ---------------------------------------------------------------- markdown

_ICONS = {
    Action.ADDED: "➕ added",
    Action.REMOVED: "➖ removed",
    Action.CHANGED: "✏️ changed",
    Action.MOVED: "↕️ moved",
}


def _cell(value: str | None) -> str:
    return "—" if value is None else md_code(value)


def _grouped(changes: Iterable[Change]) -> dict[tuple, list[Change]]:
    """Changes alike but for their pattern, together: a shared definition's change is one row."""
    rows: dict[tuple, list[Change]] = {}
    for c in changes:
        rows.setdefault((c.action, c.field, c.before, c.after, c.severity), []).append(c)
    return rows


def _patterns_cell(group: list[Change], limit: int = 4) -> str:
    names = list(dict.fromkeys(c.pattern for c in group if c.pattern is not None))
    if not names:
        return "*(the backend)*"
    shown = ", ".join(_cell(n) for n in names[:limit])
    if len(names) > limit:
        return f"{shown} and {len(names) - limit} more ({len(names)}, all listed below)"
    return shown


def markdown(changes: list[Change], labels: Labels) -> str:
    """A pull-request comment: summary line, a table per backend, the details collapsed.

    GitHub takes comments of up to 65,536 characters: past ``COMMENT_LIMIT``
    the origins are left out of the details, and then the details.
    """
    for origins in (DETAILS_PER_BACKEND, 0, -1):
        out = _markdown(changes, labels, origins)
        if len(out) <= COMMENT_LIMIT:
            break
    return out


def _markdown(changes: list[Change], labels: Labels, origins: int) -> str:
    out = [MARKER, f"### bcfg diff: {md_text(labels.base)} → {md_text(labels.head)}", ""]
    if not changes:
        out.append("**No semantic change**: both build the same BackendConfigs.")
        return "\n".join(out) + "\n"
    summary = Summary.of(changes)
    warn = f" · ⚠️ **{summary.narrows()}**" if summary.narrowed else ""
    out.append(f"**{summary.counts()}**{warn}")
    if summary.narrowed or summary.backends_removed:
        out += [
            "",
            "> ⚠️ Narrowing changes remove support (a pattern, a dtype config, a range): "
            "models that were quantized may silently stop being quantized.",
        ]
    for backend, group in _by_backend(changes).items():
        rows = _grouped(group)
        out += ["", f"#### {md_text(backend)}", ""]
        out.append("| change | patterns | field | before | after | severity | spec |")
        out.append("|---|---|---|---|---|---|---|")
        for (action, field, before, after, severity), items in rows.items():
            mark = "⚠️ narrowing" if severity == Severity.NARROWING else severity.value
            places = list(dict.fromkeys(w for w in map(_place, items) if w))
            where = md_text(places[0]) if len(places) == 1 else ("several" if places else "—")
            # A value added to or taken from a field (a dtype config) says so: `+ x`, `- x`.
            gained = field is not None and before is None and after is not None
            lost = field is not None and after is None and before is not None
            cells = [_ICONS[action], _patterns_cell(items), _cell(field)]
            cells += ["− " + _cell(before) if lost else _cell(before)]
            cells += ["+ " + _cell(after) if gained else _cell(after), mark, where]
            out.append("| " + " | ".join(cells) + " |")
        out += _details(backend, rows, origins) if origins >= 0 else []
    if origins < DETAILS_PER_BACKEND:
        out += ["", "*Details left out to fit a comment: `bcfg diff --format json` has them all.*"]
    return "\n".join(out) + "\n"


def _details(backend: str, rows: dict[tuple, list[Change]], limit: int) -> list[str]:
    """Collapsed: every pattern of each long row, and where each changed pattern comes from."""
    lines: list[str] = []
    for (action, *_), items in rows.items():
        names = list(dict.fromkeys(c.pattern for c in items if c.pattern is not None))
        if len(names) > 4:
            head = _field_text(items[0]) if items[0].field else f"{action.value}"
            lines.append(f"- {_cell(head)}, {len(names)} patterns: " + ", ".join(map(_cell, names)))
    origins: dict[str, str] = {}
    for c in (c for items in rows.values() for c in items):
        if not _through_steps(c.origin):
            continue  # written in the backend itself: the spec column says where
        if c.pattern is not None and c.pattern not in origins:
            was = "was " if c.action == Action.REMOVED else ""
            origins[c.pattern] = f"- {_cell(c.pattern)}: {was}{_cell(c.origin)}"
    more = len(origins) - limit
    lines += list(origins.values())[:limit]
    lines += [f"- … and {more} more: `bcfg diff --format json` has them all"] if more > 0 else []
    if not lines:
        return []
    summary = f"<details><summary>Details: {html_text(backend)}</summary>"
    return ["", summary, "", *lines, "", "</details>"]


# ---------------------------------------------------------------- json


def as_json(changes: list[Change], labels: Labels) -> str:
    """``{"base", "head", "summary", "changes": [{"backend", "pattern", "change", "field", ...}]}``."""
    summary = Summary.of(changes)
    data = {
        "base": labels.base,
        "head": labels.head,
        "summary": {
            "backends": list(summary.backends),
            "backends_added": summary.backends_added,
            "backends_removed": summary.backends_removed,
            "added": summary.added,
            "removed": summary.removed,
            "changed": summary.changed,
            "moved": summary.moved,
            "narrowing": summary.narrowing,
            "narrowing_settings": summary.narrowing_settings,
        },
        "changes": [
            {
                "backend": c.backend,
                "pattern": c.pattern,
                "change": c.action.value,
                "field": c.field,
                "before": c.before,
                "after": c.after,
                "severity": c.severity.value,
                "where": str(c.where) if c.where is not None and c.where.line >= 1 else None,
                # Where it was in the base's specs (the text says it for what was removed).
                "was": str(c.was) if c.was is not None and c.was.line >= 1 else None,
                "origin": c.origin,
                "parts": [
                    {
                        "field": p.field,
                        "before": p.before,
                        "after": p.after,
                        "severity": p.severity.value,
                    }
                    for p in c.parts
                ],
            }
            for c in changes
        ],
    }
    return json_text(data)


# ---------------------------------------------------------------- github


def github(changes: list[Change], labels: Labels) -> str:
    """Workflow annotations at the spec line of each change; changes alike are one annotation."""
    title = {"title": "bcfg diff"}
    if not changes:
        what = f"{labels.base} → {labels.head}: no semantic change"
        return github_command("notice", what, title) + "\n"
    groups: dict[tuple, list[Change]] = {}
    for c in changes:
        key = (_where(c), c.action, c.field, c.before, c.after, c.severity)
        groups.setdefault(key, []).append(c)
    lines = []
    for (where, action, _, _, _, severity), group in groups.items():
        first = group[0]
        what = _field_text(first) if first.field else f"pattern {action.value}"
        counts: dict[str, int] = {}
        for c in group:
            counts[c.backend] = counts.get(c.backend, 0) + 1
        if len(group) == 1 and first.pattern is not None:
            scope = f"{first.backend} {first.pattern}"
        else:
            scope = ", ".join(f"{b} ({n})" for b, n in counts.items())
        level = "warning" if severity == Severity.NARROWING else "notice"
        props = {"title": f"bcfg diff: {severity.value}"}
        if where is not None:
            file, _, line = where.rpartition(":")
            props = {"file": file, "line": line, **props}
        lines.append(github_command(level, f"{scope}: {what}", props))
    lines.append(github_command("notice", Summary.of(changes).line(), title))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- --fail-on

FAIL_ON = ("narrowing", "widening", "any")


def failing(changes: list[Change], fail_on: Iterable[str]) -> str | None:
    """Why ``--fail-on`` fails the run (``narrowing in 3 patterns and 1 backend setting``), or
    None if no change is of a severity asked for (``any``: any change)."""
    asked = set(fail_on)
    hits = [c for c in changes if "any" in asked or c.severity.value in asked]
    if not hits:
        return None
    patterns = {(c.backend, c.pattern) for c in hits if c.pattern is not None}
    settings = {(c.backend, c.field) for c in hits if c.pattern is None}
    parts = [f"{len(patterns)} pattern{_s(len(patterns))}"] if patterns else []
    parts += [f"{len(settings)} backend setting{_s(len(settings))}"] if settings else []
    kinds = sorted({c.severity.value for c in hits}, key=[s.value for s in Severity].index)
    what = "changes" if "any" in asked else " and ".join(kinds) + " changes"
    flags = " ".join(f"--fail-on {f}" for f in FAIL_ON if f in asked)
    return f"{what} in {' and '.join(parts)} ({flags})"


FORMATS: dict[str, Callable[[list[Change], Labels], str]] = {
    "markdown": markdown,
    "json": as_json,
    "github": github,
}
