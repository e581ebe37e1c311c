"""Completion: the words that can come at the cursor, chosen by what is written before it.

The context is read from the text (it is being typed, so it rarely parses):
after ``X.`` the names under ``X`` that the symbol-fact table knows (and, once
torch is imported, everything the object has); after ``use`` the groups;
after a field or key and its colon the values it takes; at the start of a line
the fields, keys or keywords of the block the cursor is in; elsewhere the
definitions the file sees, its loop variables and the language's names.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ...lang import syntax as syn
from ...lang.pt2e_keys import (
    CLASS_RECORD,
    PAIR_RECORD,
    PT2E_KEY,
    QUANTIZER_KEY,
    STAGE_RECORD,
    Kind,
)
from ...lang.vocabulary import (
    BOOLEANS,
    BUILTIN_ALIASES,
    BUILTIN_FUNCTIONS,
    CONSTRAINT_FIELDS,
    DECLARATION_KEYWORDS,
    DTYPE_KEY_WORDS,
    DTYPE_NAMES,
    FIELD_BY_WORD,
    FMT_FIELD_ORDER,
    ITEM_KEYWORDS,
    KEYWORD_DOCS,
    OBSERVATION_WORDS,
    QUANT_RANGES,
)
from ...semantics.facts import resolve
from ...semantics.load import Definition
from . import text as tx
from .workspace import Scope, Snapshot, Workspace

_PATH = re.compile(rf"({tx.NAME}(?:[ \t]*\.[ \t]*{tx.NAME})*)[ \t]*\.[ \t]*[A-Za-z0-9_]*$")
_KEY = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*[A-Za-z0-9_]*$")
_USE = re.compile(r"(?<![A-Za-z0-9_])use[ \t]+[A-Za-z0-9_]*$")
_IN_DTYPES_LIST = re.compile(r"(?<![A-Za-z0-9_])dtypes[ \t]*:[^{}:]*$")
_KINDS = {syn.AliasDecl: "alias", syn.ConstraintDecl: "constraint", syn.DTypesDecl: "dtypes"}
_KINDS |= {syn.FuseDecl: "fuse", syn.GroupDecl: "group"}


@dataclass(frozen=True)
class Item:
    """A completion: ``kind`` is one of field, keyword, dtype, constant, function, module,
    variable, group, alias, constraint, dtypes, fuse, name."""

    label: str
    kind: str
    detail: str | None = None
    insert: str | None = None


# Blocks whose keys are completed after "{" or ",": a pt2e: record, a class record, a stage,
# a pair; the record keys of each (the key table's rows).
_RECORDS = {"class": CLASS_RECORD, "stage": STAGE_RECORD, "pair": PAIR_RECORD}
_KEYED = ("pt2e", *_RECORDS)


def complete(ws: Workspace, snap: Snapshot, path: Path, offset: int) -> list[Item]:
    """What may be written at ``offset``."""
    text = snap.read(path)
    if text is None:
        return []
    start, _ = tx.line_bounds(text, offset)
    before = text[start:offset]
    if any(
        t.kind in ("comment", "string") and t.end >= offset for t in tx.tokens(text, start, offset)
    ):
        return []  # inside a comment or a string
    scope = ws.scope(path, snap)
    defs = scope.file.defs if scope.file is not None else {}
    if mt := _PATH.search(before):
        return dotted(ws, scope, defs, re.sub(r"[ \t]", "", mt.group(1)))
    if _USE.search(before):
        return named(defs, "group")
    if mt := _KEY.search(before):
        values = after_key(mt.group(1), defs, before)
        if values is not None:
            return values
    blocks = tx.open_blocks(text, offset)
    if re.fullmatch(r"[ \t]*[A-Za-z0-9_]*", before):
        return at_line_start(blocks)
    if blocks and blocks[-1] in _KEYED and re.search(r"[{,][ \t]*[A-Za-z0-9_]*$", before):
        return at_line_start(blocks)  # the next key of a pt2e: record, a class record, ..., a pair
    allow = scope.place.project.allow
    return everything(defs, locals_at(scope, text, offset)) + _items(allow, "module")


def _items(
    ws: list[str] | tuple[str, ...], kind: str, detail: dict[str, str] | None = None
) -> list[Item]:
    return [Item(w, kind, (detail or {}).get(w)) for w in ws]


def named(defs: dict[str, tuple[Definition, str]], kind: str) -> list[Item]:
    """The definitions of one kind the file sees, with the file each is in."""
    return [
        Item(n, kind, where) for n, (d, where) in sorted(defs.items()) if _KINDS[type(d)] == kind
    ]


def dtypes() -> list[Item]:
    ranges = {
        w: f"torch.{w}" + (f" [{r[0]}, {r[1]}]" if (r := QUANT_RANGES.get(w)) else "")
        for w in DTYPE_NAMES
    }
    return _items(DTYPE_NAMES, "dtype", ranges)


def after_key(key: str, defs: dict[str, tuple[Definition, str]], before: str) -> list[Item] | None:
    """The values a field or record key takes; None if the key says nothing about them."""
    if key == "observation":
        return _items(tuple(OBSERVATION_WORDS.values()), "constant")
    if key in ("input", "output", "weight"):
        return dtypes() + named(defs, "constraint")
    if key == "bias":
        return dtypes()
    if key == "dynamic":
        return _items(BOOLEANS, "constant")
    if key == "fuser":
        return [Item("sequential", "function", "sequential(M)", "sequential(")] + named(
            defs, "fuse"
        )
    if key == "dtypes" or _IN_DTYPES_LIST.search(before):
        return named(defs, "dtypes") + [
            Item("constrain", "function", "constrain(ds, c)", "constrain(")
        ]
    if key in ("root", "qat", "reference", "fused"):
        return modules(defs) + [Item("torch", "module")]
    setting = QUANTIZER_KEY.get(key) or PT2E_KEY.get(key)  # no field's nor dtype key's word
    if setting is not None and setting.words is not None:
        return [Item(w.value, "constant", setting.doc) for w in setting.words]
    if setting is not None and setting.kind is Kind.FLAG:
        return _items(BOOLEANS, "constant")
    return None


def modules(defs: dict[str, tuple[Definition, str]]) -> list[Item]:
    """Where module classes are found: the aliases, built-in and the file's own."""
    return _items(tuple(BUILTIN_ALIASES), "module", BUILTIN_ALIASES) + named(defs, "alias")


def at_line_start(blocks: list[str]) -> list[Item]:
    """A new statement: the fields, keys or keywords the innermost open block takes."""
    top = blocks[-1] if blocks else None
    if top is None:
        return _items(DECLARATION_KEYWORDS, "keyword", KEYWORD_DOCS)
    if top == "pattern":
        docs = {w: FIELD_BY_WORD[w].doc for w in FMT_FIELD_ORDER}
        return [Item(w, "field", docs[w], f"{w}: ") for w in FMT_FIELD_ORDER]
    if top in ("group", "backend", "for"):
        return _items(ITEM_KEYWORDS, "keyword", KEYWORD_DOCS)
    if top == "constraint":
        return [
            Item(short, "field", f"DTypeWithConstraints.{long}", f"{short}: ")
            for long, short in CONSTRAINT_FIELDS
        ]
    if top == "record":
        return [Item(w, "field", None, f"{w}: ") for w in DTYPE_KEY_WORDS]
    if top in _RECORDS:  # a record of classes: [...], or of its stages: [...] or pairs: [...]
        return [Item(w, "field", doc, f"{w}: ") for w, (doc, _) in _RECORDS[top].items()]
    if top in ("quantizer", "pt2e"):  # a quantizer's settings, a pattern's PT2E keys
        table = QUANTIZER_KEY if top == "quantizer" else PT2E_KEY
        return [Item(w, "field", k.doc, f"{w}: ") for w, k in table.items()]
    return []


def locals_at(scope: Scope, text: str, offset: int) -> list[str]:
    """The loop variables and parameters around ``offset``."""
    if scope.file is None:
        return []
    line, col = tx.TextIndex(text).line_col(offset)
    out: list[str] = []
    for node in syn.path_to(scope.file.spec, line, col):
        if isinstance(node, syn.ForItem):
            out.extend(node.targets)
        elif isinstance(node, syn.GroupDecl):
            out.extend(node.params)
    return out


def everything(defs: dict[str, tuple[Definition, str]], local: list[str]) -> list[Item]:
    """Any name: loop variables, definitions, aliases, dtypes, built-in functions and words."""
    out = _items(local, "variable")
    out += [Item(n, _KINDS[type(d)], where) for n, (d, where) in sorted(defs.items())]
    out += modules({})
    out += dtypes()
    out += [Item(f, "function", None, f"{f}(") for f in BUILTIN_FUNCTIONS]
    out += _items(tuple(OBSERVATION_WORDS.values()), "constant") + _items(BOOLEANS, "constant")
    return out


def dotted(
    ws: Workspace, scope: Scope, defs: dict[str, tuple[Definition, str]], prefix: str
) -> list[Item]:
    """The next segments after ``prefix.``: names the fact table knows, and the object's own
    attributes once its module is imported (completion never imports torch itself)."""
    head, _, rest = prefix.partition(".")
    entry = defs.get(head)
    if entry is not None and isinstance(entry[0], syn.AliasDecl):
        head = entry[0].target.text
    full = ".".join(p for p in (BUILTIN_ALIASES.get(head, head), rest) if p)
    allow = scope.place.project.allow
    names = {
        p[len(full) + 1 :].split(".")[0]
        for p in ws.facts(allow).known()
        if p.startswith(full + ".")
    }
    if entry is not None and isinstance(entry[0], syn.AliasDecl) and not rest:
        names |= hooks_in(scope.place.project.root, entry[0].target.parts)
    if full.split(".")[0] in sys.modules and full.split(".")[0] in allow:
        try:
            names |= {n for n in dir(resolve(full, allow).obj) if not n.startswith("_")}
        except Exception:  # an object that cannot be resolved or listed: the table's names only
            pass
    return [Item(n, "name", f"{full}.{n}") for n in sorted(names)]


_DEF = re.compile(r"^(?:(?:async[ \t]+)?def|class)[ \t]+([A-Za-z][A-Za-z0-9_]*)", re.M)


def hooks_in(root: Path, module: tuple[str, ...]) -> set[str]:
    """The public functions and classes at the top of a project module (a spec's hooks, as
    ``alias hooks = specs.hooks.cadence`` names it), read from its file, never imported."""
    for path in (
        root.joinpath(*module[:-1], f"{module[-1]}.py"),
        root.joinpath(*module, "__init__.py"),
    ):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            continue
        return set(_DEF.findall(text))
    return set()
