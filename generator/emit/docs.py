"""The docs emitter: resolved backends to a support matrix people read.

``render_docs`` returns the docs folder's files: ``README.md`` (the backends
and the cross-backend matrix, pattern × backend), ``backends/<module>.md``
(every field of every pattern config, in the backend's order) and
``index.html`` (the same matrix with search, filters and a detail view per
pattern; one self-contained file that loads nothing from anywhere).

PT2E-only targets (``quantizer NAME { fx: false }``: no BackendConfig) get
columns too, after the FX backends and marked ``PT2E only``: their cells are
the dtype configs the quantizer accepts for the pattern, with what the
quantizer adds in words (``QAT only``, ``opt-in``, ``other input quantized``,
``when: input_quantized``), read from the quantizer's rules. The project's
examples (``[tool.bcfg] examples``: toy backends, not real targets) come last,
in a table and columns of their own, marked ``example``.

Python decides everything here (rows, order, words, ids); the templates in
``templates/docs/`` only print. The docs say what backends support, never
where a spec wrote it: no line numbers and no hashes of the spec texts, so a
comment-only edit of a spec leaves them byte for byte the same, and a change
of meaning shows up in review as a changed line of the matrix.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..escape import deep, html_comment, md_code, md_text, visible
from ..infra.header import DOCS_MARK
from ..lang.vocabulary import PT2E_TABLE, QUANTIZER_TABLE, FieldKind, FieldSpec, Scopes
from ..semantics import model as m
from . import words
from .pysource import jinja_env

README = "README.md"
HTML = "index.html"
BACKEND_DIR = "backends"
# Fields the per-backend Markdown tables fold into their last column.
_RARE = ("root_node", "extra_inputs", "num_tensor_args", "input_index", "pt2e")


@dataclass(frozen=True)
class Cell:
    """What one backend supports for one pattern: its dtype configs in spec words."""

    backend: str
    configs: tuple[str, ...]  # empty: the backend does not support the pattern
    parts: tuple[tuple[str, ...], ...]  # each config in the parts the HTML wraps between
    dtypes: str  # the dtypes they use, space-separated (the HTML's dtype filter)
    notes: tuple[str, ...] = ()  # a PT2E-only target's conditions: "QAT only", "opt-in", ...


@dataclass(frozen=True)
class Group:
    """Backends whose configs for one pattern are equal, and that config's fields."""

    label: str  # the backends, comma-separated
    fields: tuple[tuple[str, tuple[str, ...]], ...]  # (field word, value lines; () if unset)


@dataclass(frozen=True)
class Row:
    """One pattern across every backend."""

    id: str
    pattern: str
    code: Any  # the pattern as HTML (``code_html``)
    full: str
    kind: str
    cells: tuple[Cell, ...]  # one per backend
    groups: tuple[Group, ...]
    missing: str  # the backends without the pattern, comma-separated
    search: str  # what the HTML's search box matches, lower case


@dataclass(frozen=True)
class BackendInfo:
    module: str
    name: str
    spec_file: str
    count: int
    page: str  # its Markdown page, relative to the docs folder
    quantizer: str = ""  # its PT2E quantizer's getter call, if it has one
    pt2e_only: bool = False  # no BackendConfig: a PT2E-only target (fx: false)
    example: bool = False  # on [tool.bcfg] examples: a toy, set apart from the real targets


PT2E_ONLY = "PT2E only"  # how the docs mark a PT2E-only target's column
EXAMPLE = "example"  # how the docs mark an example's column


def render_docs(
    backends: list[m.Backend],
    spec_dir: str,
    pt2e_only: Sequence[m.Backend] = (),
    quantizers: Sequence[m.Quantizer] = (),
    examples: Sequence[str] = (),
) -> dict[str, str]:
    """The docs folder's files by relative path: README.md, index.html, backends/<module>.md.

    ``pt2e_only`` are the backends of ``fx: false`` quantizers: columns after the FX
    backends'; ``quantizers`` says which backends have a PT2E quantizer, and what a
    PT2E-only target's cells add to their dtype configs. ``examples`` (module names) are
    set apart: their columns come last, and their rows in a table of their own.
    """
    by_module = {q.module: q for q in quantizers}
    everything, infos = _infos(backends, pt2e_only, by_module, frozenset(examples))
    notes = {b.module: _pt2e_notes(b, by_module.get(b.module)) for b in pt2e_only}
    rows = _rows(everything, notes, frozenset(examples))
    from markupsafe import Markup

    label = f"{spec_dir.rstrip('/')}/"
    env = jinja_env()
    style, script = _asset("docs/page.css", "</style"), _asset("docs/page.js", "</script")
    # What the page prints comes from specs and paths: shown with its hidden characters
    # escaped (``escape.visible``), then HTML-escaped by the template (``escape.html_text``).
    html_rows, html_infos = deep(rows, visible), deep(infos, visible)
    files = {
        README: env.get_template("docs/README.md.jinja").render(
            mark=_mark(label),
            spec_dir=md_code(label),
            backends=[_md_backend(i) for i in infos if not i.example],
            examples=[_md_backend(i) for i in infos if i.example],
            matrix=_md_matrix(infos, rows),
            kinds=words.KINDS,
        ),
        HTML: env.get_template("docs/index.html.jinja").render(
            mark=Markup(_mark(label)),
            spec_dir=visible(label),
            backends=html_infos,
            rows=html_rows,
            kinds=words.KINDS,
            classes={i.module: _classes(i) for i in html_infos},
            flows={i.module: column_label(i) for i in html_infos},
            dtypes=sorted({d for r in html_rows for c in r.cells for d in c.dtypes.split()}),
            summary=_summary(infos, rows),
            style=style,
            script=script,
            csp=Markup(f"default-src 'none'; style-src {_hash(style)}; script-src {_hash(script)}"),
        ),
    }
    for b, info in zip(everything, infos):
        files[info.page] = _render_backend_page(b, info, notes.get(b.module))
    return files


def _infos(
    backends: Sequence[m.Backend],
    pt2e_only: Sequence[m.Backend],
    quantizers: dict[str, m.Quantizer],
    examples: frozenset[str],
) -> tuple[list[m.Backend], list[BackendInfo]]:
    """Every backend in column order (the real FX backends, the real PT2E-only targets, then
    the examples, each by name), with what the docs say of it."""
    only = {b.module for b in pt2e_only}
    ordered = sorted(
        [*backends, *pt2e_only], key=lambda b: (b.module in examples, b.module in only, b.module)
    )
    return ordered, [
        BackendInfo(
            b.module,
            b.name,
            b.spec_file,
            len(b.configs),
            f"{BACKEND_DIR}/{b.module}.md",
            f"get_{b.module}_quantizer()" if b.module in quantizers else "",
            b.module in only,
            b.module in examples,
        )
        for b in ordered
    ]


def _summary(infos: list[BackendInfo], rows: list[Row]) -> str:
    """The page's counts: backends, PT2E-only targets and examples, patterns, pattern configs."""
    return ", ".join(
        _count(n, what)
        for n, what in (
            (sum(not i.pt2e_only and not i.example for i in infos), "backend"),
            (sum(i.pt2e_only and not i.example for i in infos), "PT2E-only target"),
            (sum(i.example for i in infos), "example"),
            (len(rows), "pattern"),
            (sum(i.count for i in infos), "pattern config"),
        )
    )


def _classes(i: BackendInfo) -> str:
    """The HTML classes of a backend's column, cells and filter: ``pt2e``, ``example``."""
    return " ".join(c for c, on in (("pt2e", i.pt2e_only), (EXAMPLE, i.example)) if on)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _mark(label: str) -> str:
    """The first line of every docs file: an HTML comment (in Markdown too), one line whatever
    the label holds (``escape.html_comment``)."""
    return f"{DOCS_MARK}{html_comment(label)}. DO NOT EDIT. -->"


def _asset(name: str, end: str) -> Any:
    """A stylesheet or script that ``index.html`` carries inline, as written in templates/: the
    whole text of its element, newlines around it included, as the page's CSP hashes it."""
    from markupsafe import Markup

    env = jinja_env()
    source, _, _ = env.loader.get_source(env, name)
    if end in source.lower():
        raise RuntimeError(f"templates/{name} contains '{end}', which would end it early")
    return Markup(f"\n{source.strip()}\n")


def _hash(element_text: str) -> str:
    """A CSP source that allows exactly one inline ``<script>`` or ``<style>`` of this text: the
    page runs its own script from ``file://`` and nothing injected (no ``'unsafe-inline'``)."""
    digest = hashlib.sha256(element_text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


# ------------------------------------------------------------------ the rows


# The cell of a pattern without dtype configs under `configs: accessors` (arm_tosa).
ACCESSORS = "any config: its accessors say each op's specs (configs: accessors)"
# A shared_observer rule with no dtype configs: the runtime shares its input's quantization
# whatever the config (the reference: such a pattern takes any config).
SHARED = "any config: shares its input's quantization (shared_observer)"
# Notes that stand for a cell's dtype configs when it has none.
_STANDING = (ACCESSORS, SHARED)


def _pt2e_notes(b: m.Backend, q: m.Quantizer | None) -> dict[int, tuple[str, ...]]:
    """What a PT2E-only target's quantizer adds to each config's dtype configs, in words, by
    ``id`` of the config: the conditions of the rule the config became."""
    rules = {id(o): r for r in (q.rules if q else ()) for o in r.origins}
    out: dict[int, tuple[str, ...]] = {}
    for c in b.configs:
        r = rules.get(id(c.origin)) if c.origin is not None else None
        if r is None:
            out[id(c)] = ("not in the quantizer",)
            continue
        notes = []
        if q is not None and q.configs is m.Configs.ACCESSORS and not c.dtype_configs:
            notes.append(ACCESSORS)  # the quantizer takes any config: no dtypes to list
        elif not c.dtype_configs and r.kind in (m.RuleKind.PROPAGATE, m.RuleKind.SHARED):
            notes.append(SHARED)
        if r.qat:
            notes.append("QAT only")
        if r.qat_if_dynamic:
            notes.append("dynamic: QAT only")
        if r.scope != "all_ops":
            notes.append("scope: first op" if r.scope == "first_op" else "any scope")
        if r.opt_in:
            notes.append("opt-in")
        if r.other is not None:
            notes.append(f"other input {r.other}")
        if r.when:
            notes.append("when: " + ", ".join(h.name for h in r.when))
        if r.weight_axis is not None:
            notes.append(f"weight axis {r.weight_axis}")
        if r.weight_qscheme != "any":  # a config giving another weight spec is refused
            notes.append(f"{r.weight_qscheme.replace('_', '-')} weights only")
        if r.activation_qscheme != "any":  # a config giving other activation specs is refused
            notes.append(f"{r.activation_qscheme} activations only")
        if r.given:  # in an instance's table only when constructed with these values
            notes.append("given: " + ", ".join(f"{k}={_spec_word(v)}" for k, v in r.given))
        out[id(c)] = tuple(notes)
    return out


def _spec_word(value: Any) -> str:
    """A ``given:`` value as the spec writes it: ``true``, ``none``, ``3``, ``'x'``."""
    if value is None or isinstance(value, bool):
        return str(value).lower()
    return repr(value)


def _rows(
    backends: list[m.Backend],
    notes: dict[str, dict[int, tuple[str, ...]]] | None = None,
    examples: frozenset[str] = frozenset(),
) -> list[Row]:
    """Every pattern of any backend, in ``words.sort_key`` order, with one cell per backend.

    ``notes`` holds, per PT2E-only target, what its quantizer adds to a config (``_pt2e_notes``);
    ``examples`` are named so in the detail view.
    """
    # A backend's configs of one pattern: one, or its variants (Cortex-M's given: layouts).
    by_key: dict[tuple[bool, str], dict[str, list[m.PatternConfig]]] = {}
    first: dict[tuple[bool, str], m.PatternConfig] = {}
    for b in backends:
        for c in b.configs:
            key = (c.complex, words.full_pattern(c.pattern))
            by_key.setdefault(key, {}).setdefault(b.module, []).append(c)
            first.setdefault(key, c)
    keys = sorted(by_key, key=lambda k: (words.sort_key(first[k]), k))
    ids = _ids([words.config_pattern(first[k]) for k in keys])
    notes = notes or {}
    return [_row(rid, first[k], by_key[k], backends, notes, examples) for rid, k in zip(ids, keys)]


def _label(module: str, example: bool, pt2e_only: bool = False) -> str:
    """A backend as the detail view names it: ``x (PT2E only)``, ``my_backend (example)``."""
    marks = [word for word, on in ((PT2E_ONLY, pt2e_only), (EXAMPLE, example)) if on]
    return f"{module} ({', '.join(marks)})" if marks else module


def _row(
    rid: str,
    c: m.PatternConfig,
    configs: dict[str, list[m.PatternConfig]],
    backends: list[m.Backend],
    notes: dict[str, dict[int, tuple[str, ...]]],
    examples: frozenset[str],
) -> Row:
    cells = tuple(
        _cell(b.module, configs.get(b.module, []), notes.get(b.module, {}), b.module not in notes)
        for b in backends
    )
    groups: dict[tuple[m.PatternConfig, bool], list[str]] = {}
    for b in backends:
        for variant in configs.get(b.module, []):
            # A PT2E-only target's config is its own group: its quantizer reads it, not FX.
            only = b.module in notes
            groups.setdefault((variant, only), []).append(
                _label(b.module, b.module in examples, only)
            )
    pattern, full = words.config_pattern(c), words.full_pattern(c.pattern)
    return Row(
        id=rid,
        pattern=pattern,
        code=code_html(pattern),
        full=full,
        kind=words.kind(c),
        cells=cells,
        groups=tuple(
            Group(", ".join(bs), _group_fields(cfg, only)) for (cfg, only), bs in groups.items()
        ),
        missing=", ".join(
            _label(b.module, b.module in examples) for b in backends if b.module not in configs
        ),
        search=" ".join(dict.fromkeys([pattern.lower(), full.lower()])),
    )


def _cell(
    backend: str,
    variants: list[m.PatternConfig],
    notes: dict[int, tuple[str, ...]],
    fx: bool = False,
) -> Cell:
    """A backend's cell: its config of the pattern, or its variants' (each ``given:`` its
    own), their dtype configs once each and each variant's notes, ``or`` between them.
    ``fx``: an FX backend's, whose pattern may name a function FX traces through."""
    if not variants:
        return Cell(backend, (), (), "")
    cells = [_one_cell(backend, c, notes, fx) for c in variants]
    if len(cells) == 1:
        return cells[0]
    said = [", ".join(cell.notes) for cell in cells]
    return Cell(
        backend,
        tuple(dict.fromkeys(x for cell in cells for x in cell.configs)),
        tuple(dict.fromkeys(x for cell in cells for x in cell.parts)),
        " ".join(dict.fromkeys(d for cell in cells for d in cell.dtypes.split())),
        tuple(said[:1] + [f"or {n}" for n in said[1:]]),
    )


def _one_cell(
    backend: str, c: m.PatternConfig, notes: dict[int, tuple[str, ...]], fx: bool = False
) -> Cell:
    extra = notes.get(id(c), ())
    traced = m.traced_functions(c.pattern) if fx else []
    if traced:  # FX records the ops the function calls: this config never matches under FX
        names = ", ".join(words.spell(f.path) for f in traced)
        extra += (f"FX never sees it: FX traces through {names}, a plain Python function",)
    if not c.dtype_configs:
        said = next((n for n in _STANDING if n in extra), None) or _without_dtypes(c)
        extra = tuple(n for n in extra if n not in _STANDING)
        return Cell(backend, (said,), ((said,),), "", extra)
    configs = tuple(words.dtype_config(d) for d in c.dtype_configs)
    parts = tuple(tuple(map(_keep_together, words.dtype_config_parts(d))) for d in c.dtype_configs)
    return Cell(backend, configs, parts, " ".join(words.dtypes_used(c)), extra)


def _without_dtypes(c: m.PatternConfig) -> str:
    """A cell for a config with no dtype configs: a fusion's says what it fuses into (that
    module's own pattern quantizes it), anything else that FX never quantizes it."""
    if c.fused_module is not None:
        return f"fusion only: into {words.spell(c.fused_module.path)}, quantized by its pattern"
    if c.fuser is not None:
        return "fusion only: not quantized as it is"
    return "no dtype configs: never quantized"


def code_html(text: str) -> Any:
    """Spec words as highlighted HTML for the page's ``<code>`` elements (escaped by Pygments).

    bcfg's own Pygments lexer (``lang/pygments_lexer.py``, the rules the VS Code
    grammar is made from) marks each token with Pygments' short class names
    (``nn`` a module alias, ``n`` a name, ``p`` punctuation, ``s2`` a string);
    ``templates/docs/page.css`` colours them. The patterns in the matrix and in
    the detail view go through this function.
    """
    from markupsafe import Markup
    from pygments import highlight

    text = visible(text)
    lexer, formatter = _highlighter()
    html = highlight(text, lexer, formatter)
    return Markup(html if text.endswith("\n") else html.removesuffix("\n"))  # it ends each line


@functools.cache
def _highlighter() -> tuple[Any, Any]:
    """bcfg's Pygments lexer and the HTML formatter, made once (a formatter builds its whole
    style sheet when it is made)."""
    from pygments.formatters import HtmlFormatter

    from ..lang.pygments_lexer import BcfgLexer

    return BcfgLexer(stripnl=False, ensurenl=False), HtmlFormatter(nowrap=True)


def _keep_together(part: str) -> str:
    """A bound stays on one line with its operator (``scale ≥ 2^-12``), an arrow with its dtype."""
    for op in ("≥", "≤"):
        part = part.replace(f" {op} ", f"\u00a0{op}\u00a0")
    return part.replace("→ ", "→\u00a0")


def _group_fields(
    c: m.PatternConfig, pt2e_only: bool = False
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The detail view's fields of a config; of a PT2E-only target's, only those it sets (the
    BackendConfig-only fields, root, fuser and the like, would all be unset)."""
    out = []
    for spec in words.SPEC_ORDER:
        if spec.word == "dtypes":
            lines = tuple(words.dtype_config(d) for d in c.dtype_configs)
        else:
            text = words.field(c, spec)
            lines = () if text is None else (text,)
        if (spec.kind is FieldKind.PT2E or pt2e_only) and not lines:
            continue  # only PT2E quantizers read it: shown where a spec sets it
        out.append((spec.word, lines))
    return tuple(out)


def _ids(patterns: list[str]) -> list[str]:
    """A stable HTML id per pattern, made from its text (so links survive new patterns)."""
    out: list[str] = []
    seen: set[str] = set()
    for text in patterns:
        base = "p-" + (re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-") or "pattern")
        rid, n = base, 2
        while rid in seen:
            rid, n = f"{base}-{n}", n + 1
        seen.add(rid)
        out.append(rid)
    return out


# ------------------------------------------------------------------ Markdown


def _md_backend(i: BackendInfo) -> str:
    """A row of the backends' table: narrow enough for 1,280 pixels beside the navigation
    (the getter without its call, the spec by its file name: the page says where specs are)."""
    name = f"— ({PT2E_ONLY})" if i.pt2e_only else md_code(i.name)
    quantizer = md_code(i.quantizer.removesuffix("()")) if i.quantizer else ""
    spec = i.spec_file.rpartition("/")[2]
    return (
        f"| [{md_text(i.module)}]({i.page}) | {name} | {quantizer} | {i.count} | {md_code(spec)} |"
    )


def flow(i: BackendInfo) -> str:
    """Which flows a backend serves, as its column says: ``FX``, ``FX + PT2E`` or ``PT2E only``
    (so that an FX backend and a PT2E target of similar names are told apart)."""
    if i.pt2e_only:
        return PT2E_ONLY
    return "FX + PT2E" if i.quantizer else "FX"


def column_label(i: BackendInfo) -> str:
    """What a column says under its backend's name: its flows, ``example`` first for an
    example (``example, FX``), so that a toy is not read as a real target."""
    return f"{EXAMPLE}, {flow(i)}" if i.example else flow(i)


def _md_column(i: BackendInfo) -> str:
    return f"{md_text(i.module)} ({column_label(i)})"


def _md_matrix(infos: list[BackendInfo], rows: list[Row]) -> list[str]:
    head = "| pattern | kind | " + " | ".join(_md_column(i) for i in infos) + " |"
    rule = "| --- | --- |" + " --- |" * len(infos)
    lines = [head, rule]
    for r in rows:
        cells = [
            "<br>".join(
                [md_text(x) for x in c.configs]
                + ([f"*{md_text('; '.join(c.notes))}*"] if c.notes else [])
            )
            for c in r.cells
        ]
        lines.append(f"| {md_code(r.pattern)} | {r.kind} | " + " | ".join(cells) + " |")
    return lines


def _fx_table(b: m.Backend) -> list[str]:
    columns = [f for f in words.SPEC_ORDER if f.word not in _RARE]
    head = "| # | pattern | kind | " + " | ".join(f.word for f in columns) + " | other |"
    lines = [head, "| ---: |" + " --- |" * (len(columns) + 3)]
    for n, c in enumerate(b.configs, 1):
        cells = [_md_field(c, f) for f in columns]
        other = [
            md_code(f"{f.word}: {text}")
            for f in words.SPEC_ORDER
            if f.word in _RARE and (text := words.field(c, f)) is not None
        ]
        lines.append(
            f"| {n} | {md_code(words.config_pattern(c))} | {words.kind(c)} | "
            + " | ".join(cells)
            + f" | {'<br>'.join(other)} |"
        )
    return lines


def _pt2e_only_table(b: m.Backend, notes: dict[int, tuple[str, ...]]) -> list[str]:
    """A PT2E-only target's configs: the fields its quantizer reads, and what its rules add."""
    columns = [f for f in words.SPEC_ORDER if f.word in ("observation", "dtypes", "pt2e")]
    head = "| # | pattern | kind | " + " | ".join(f.word for f in columns) + " | quantizer |"
    lines = [head, "| ---: |" + " --- |" * (len(columns) + 3)]
    for n, c in enumerate(b.configs, 1):
        cells = [_md_field(c, f) for f in columns]
        lines.append(
            f"| {n} | {md_code(words.config_pattern(c))} | {words.kind(c)} | "
            + " | ".join(cells)
            + f" | {md_text('; '.join(notes.get(id(c), ())))} |"
        )
    return lines


def _render_backend_page(
    b: m.Backend, info: BackendInfo, notes: dict[int, tuple[str, ...]] | None = None
) -> str:
    """A backend's page; a PT2E-only target's (``notes`` given, see ``_pt2e_notes``) shows
    the fields its quantizer reads and what its rules add, not the BackendConfig's fields."""
    lines = _fx_table(b) if notes is None else _pt2e_only_table(b, notes)
    kinds: dict[str, int] = {k: 0 for k in words.KINDS}
    uses: dict[str, int] = {}
    for c in b.configs:
        kinds[words.kind(c)] += 1
        for d in c.dtype_configs:
            text = words.dtype_config(d)
            uses[text] = uses.get(text, 0) + 1
    return (
        jinja_env()
        .get_template("docs/backend.md.jinja")
        .render(
            mark=_mark(b.spec_file),
            backend=info,
            call=(
                f"{md_code(info.quantizer)} ({PT2E_ONLY}: a PT2E quantizer, no BackendConfig)"
                if info.pt2e_only
                else md_code(f"BackendConfig({b.name!r})")
            ),
            spec=md_code(b.spec_file),
            kinds=[(k, n) for k, n in kinds.items() if n],
            dtype_configs=[(md_text(t), n) for t, n in sorted(uses.items(), key=lambda x: -x[1])],
            table=lines,
        )
    )


def _md_field(c: m.PatternConfig, spec: FieldSpec) -> str:
    if spec.word == "dtypes":
        return "<br>".join(md_text(words.dtype_config(d)) for d in c.dtype_configs)
    text = words.field(c, spec)
    if text is None:
        return ""
    return md_text(text) if spec.word in ("observation", "dtypes") else md_code(text)


# ------------------------------------------------------------------ the key reference


def pt2e_key_markdown(table: str = "pattern") -> str:
    """The reference table of the pt2e keys (``pattern``) or the quantizer fields
    (``quantizer``), rendered from the key table (``lang.pt2e_keys``): the docs site's
    ``<!-- bcfg:key-table pattern -->`` marker, so that no page keeps a copy by hand."""
    rows = PT2E_TABLE if table == "pattern" else QUANTIZER_TABLE
    out = [
        "| key | value | honoured under | applies to | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key in rows:
        bases = (
            "every scope"
            if key.bases == frozenset(Scopes)
            else " ".join(f"`scopes: {b.value}`" for b in sorted(key.bases))
        )
        needs = "; ".join(n.value for n in key.needs) or "any pattern"
        if table != "pattern":
            needs = "the quantizer"
        cells = [f"`{key.word}`", key.values, bases, needs, key.note]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"
