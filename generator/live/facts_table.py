"""Make the torch facts table bcfg ships for the installed torch build (``semantics.shipped``).

    python -m generator.live.facts_table           # write generator/torch_facts/torch-<v>-<digest>.json
    python -m generator.live.facts_table --check   # exit 1 if the shipped table is not what torch says

Run it from a checkout, in an environment with the torch build to ship facts
for (docs/getting-started/install.md, "Torch facts, shipped"). The names come from what the resolver asks, not
from a list: every spec of the repository's projects (``specs/`` and each
``examples/*/``) is resolved with a table that records each name looked up,
which covers the ``bcfg:torch`` library they import and the ATen table the
quantizers look up (``semantics.aten_ops``: every dotted name in it is added
too, so that its entries resolve whatever the specs use), the bare dtype names
and the built-in aliases. Each of those names is resolved live; the
namespaces they walk through are listed (``dir()``, and what ``getattr`` can
find besides) and their members resolved as well.

A namespace whose attributes a ``__getattr__`` hook makes up can be listed only
if that hook's code was read and its answers are known: ``REVIEWED_HOOKS``
holds the sha256 of each such hook's source with how to enumerate what it
answers. A hook not there (a new torch) leaves its namespace unlisted, and
names missing in it are found live; the command says which.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import re
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..config import DEFAULT_ALLOW, Project, find_project
from ..lang.vocabulary import BUILTIN_ALIASES, DTYPE_NAMES
from ..semantics import aten_ops, facts, shipped
from ..semantics.driver import resolve_specs
from ..semantics.model import SymbolKind

REPO = Path(__file__).resolve().parent.parent.parent
TOPS = ("torch",)


class Recorder(facts.TorchFacts):
    """A live table that remembers every path the resolver asks about, in order."""

    def __init__(self, allow: tuple[str, ...]):
        super().__init__(allow)
        self.asked: dict[str, None] = {}

    def lookup(self, path: str) -> facts.Facts:
        self.asked[path] = None
        return super().lookup(path)

    def signature(self, path: str) -> facts.CallSignature | None:
        self.asked[path] = None
        return super().signature(path)


def projects(repo: Path = REPO) -> list[Project]:
    """The repository's bcfg projects: the root's and each example's."""
    out = [find_project(repo)]
    for pp in sorted((repo / "examples").glob("*/pyproject.toml")):
        out.append(find_project(pp.parent))
    return out


def asked_names(repo: Path = REPO) -> list[str]:
    """Every name resolving the repository's specs asks about, and the ATen table's names."""
    names: dict[str, None] = {}
    for project in projects(repo):
        project.make_importable()
        recorder = Recorder(project.allow)
        resolve_specs(project.root, project.spec_files(), project.allow, recorder)
        names.update(recorder.asked)
    for value in vars(aten_ops).values():
        names.update(dict.fromkeys(_dotted(value)))
    names.update(dict.fromkeys(f"torch.{n}" for n in DTYPE_NAMES))
    names.update(dict.fromkeys(BUILTIN_ALIASES.values()))
    return [n for n in names if n.partition(".")[0] in TOPS]


def _dotted(value: Any) -> Iterable[str]:
    """The dotted names (``torch.nn.Conv2d``) anywhere in a value of the ATen table."""
    if isinstance(value, str):
        parts = value.split(".")
        if len(parts) > 1 and all(p.isidentifier() for p in parts):
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _dotted(k)
            yield from _dotted(v)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            yield from _dotted(v)


# ------------------------------------------------------------------ hooks


def _string_constants(code: types.CodeType) -> set[str]:
    out = set()
    for c in code.co_consts:
        if isinstance(c, str):
            out.add(c)
        elif isinstance(c, types.CodeType):
            out |= _string_constants(c)
    return out


def _names_rule(owner: Any, hook: Callable[..., Any]) -> set[str]:
    """A hook that answers only names among its string constants and the strings held by the
    module-level containers it refers to (``if name in __all__``, ``_deprecated_attrs.get``)."""
    code = hook.__code__
    out = _string_constants(code)
    for name in code.co_names:
        value = hook.__globals__.get(name)
        if isinstance(value, (dict, set, frozenset, list, tuple)):
            out |= {x for x in value if isinstance(x, str)}
    return out


def _ops_rule(owner: Any, hook: Callable[..., Any]) -> set[str]:
    """``torch.ops.<namespace>``: answers the operators registered in that namespace."""
    import torch

    prefix = f"{owner.name}::"
    return {
        s.name[len(prefix) :] for s in torch._C._jit_get_all_schemas() if s.name.startswith(prefix)
    }


# sha256 of a hook's source -> how to enumerate the names it can answer. Each was
# read: it returns for those names only and raises AttributeError for any other.
# None: it answers any name, so its namespace has no listing.
REVIEWED_HOOKS: dict[str, Callable[[Any, Callable[..., Any]], set[str]] | None] = {
    # torch._ops._Ops.__getattr__ (2.13): torch.ops.<anything> is a namespace.
    "cb2750a7f57cb71f7dd21a198c3cd6aa9fc9f4f5887cf5b007032dc4230f5c0f": None,
    # torch.__getattr__ (2.13): the deprecated attributes, the lazy modules, "set_vital".
    "4a3e2668a8a0dc92ee8723890f41314222dc64d054cbc2c06e2ed7ad1b661f4a": _names_rule,
    # torch.__getattr__ (2.14): the same, annotated -> _Any.
    "32c9e9e4c507d59f0a399394302b9d439717e94f0ecda311473230fe781ec55f": _names_rule,
    # torch.ao.__getattr__, torch.ao.nn.__getattr__ (2.13, 2.14): the submodules in __all__.
    "4c4d23768b5d9aeb0a1a5ad13f9eefc2f851ce06ce0f09c75ba7bca2f7730942": _names_rule,
    # torch.ao.nn.intrinsic.__getattr__ (2.13, 2.14): the same, annotated types.ModuleType.
    "8dafcc62c08ff58b1c75e0c1b3973b2854957c477d1d21ff12776b64651456c5": _names_rule,
    # torch._ops._OpNamespace.__getattr__ (2.13): the operators the JIT registry has, as
    # torch._C._jit_get_operation finds them ("__origin__" and "__self__" never).
    "67b2708a0671a4d47e2174cbee41bbaf9ac79ac69b97bd5d9935d73d6600b787": _ops_rule,
}


def hook_digest(hook: Callable[..., Any]) -> str:
    return hashlib.sha256(inspect.getsource(hook).encode()).hexdigest()


# ------------------------------------------------------------------ the table


class Builder:
    """Resolve names live and gather the table; ``unreviewed`` lists hooks that kept a
    namespace unlisted."""

    def __init__(self) -> None:
        import torch  # noqa: F401  (the table describes torch as imported)

        self.allow = DEFAULT_ALLOW
        self.positive: dict[str, facts.Resolved] = {}
        self.negative: dict[str, facts.UnknownSymbol] = {}
        self.unreviewed: list[str] = []

    def resolve(self, path: str) -> None:
        if path in self.positive or path in self.negative:
            return
        try:
            found = facts.resolve(path, (path.partition(".")[0], *self.allow))
        except facts.UnknownSymbol as exc:
            if exc.at is not None and exc.contained:
                self.negative[path] = exc
            return
        if found.contained:
            self.positive[path] = found

    def namespace(self, path: str) -> dict[str, Any] | None:
        """The listing of the namespace at ``path``, or None if its attributes are made up."""
        obj = self.positive[path].obj
        cls = type(obj)
        first = next(k for k in cls.__mro__ if "__getattribute__" in vars(k))
        if first not in (object, type, types.ModuleType):
            return None
        hooks = [vars(k)["__getattr__"] for k in cls.__mro__ if "__getattr__" in vars(k)]
        if isinstance(obj, types.ModuleType) and "__getattr__" in vars(obj):
            hooks.append(vars(obj)["__getattr__"])
        made_up: set[str] = set()
        for hook in hooks:
            digest = _digest_or(hook)
            if digest not in REVIEWED_HOOKS:
                self.unreviewed.append(f"{path}: {_hook_name(hook)} {digest}")
                return None
            rule = REVIEWED_HOOKS[digest]
            if rule is None:
                return None
            made_up |= rule(obj, hook)
        attrs = set(vars(obj)) if hasattr(obj, "__dict__") else set()
        for k in cls.__mro__:
            attrs |= set(vars(k))
        if isinstance(obj, type):
            for k in obj.__mro__:
                attrs |= set(vars(k))
        listed = facts.listing(obj)
        more = (attrs | made_up) - set(listed)
        subs: set[str] = set()
        if isinstance(obj, types.ModuleType):
            for folder in _path_of(obj):
                try:
                    subs |= {p.name.partition(".")[0] for p in folder.iterdir()}
                except OSError:
                    pass
            subs |= {m[len(path) + 1 :].partition(".")[0] for m in _modules_under(path)}
        return {
            "module": isinstance(obj, types.ModuleType),
            "dir": listed,
            "more": sorted(n for n in more if not n.startswith("__")),
            "subs": sorted(n for n in subs - set(listed) - more if not n.startswith("__")),
            "ops": any(REVIEWED_HOOKS.get(_digest_or(h)) is _ops_rule for h in hooks),
        }

    def table(self, names: list[str]) -> dict[str, Any]:
        for name in names:
            self.resolve(name)
        for name in list(self.positive):  # every namespace on the walk
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.resolve(".".join(parts[:i]))
        listed = sorted(
            p
            for p, r in self.positive.items()
            if (
                facts.kind_of(r.obj) == SymbolKind.NAMESPACE
                and any(n.startswith(p + ".") for n in names)
            )
            or p in BUILTIN_ALIASES.values()
        )
        spaces: dict[str, dict[str, Any]] = {}
        for p in listed:
            space = self.namespace(p)
            if space is None:
                continue
            spaces[p] = space
            if space["module"] and not space["ops"]:
                for member in space["dir"]:
                    self.resolve(f"{p}.{member}")
        for space in spaces.values():
            del space["ops"]
        return self._assemble(spaces)

    def _assemble(self, spaces: dict[str, dict[str, Any]]) -> dict[str, Any]:
        first: dict[int, str] = {}
        table_facts: dict[str, list[Any]] = {}
        sigs: dict[str, Any] = {}
        for path in sorted(self.positive):
            found = self.positive[path]
            kind = facts.kind_of(found.obj)
            identity = first.setdefault(id(found.obj), path)
            dtype = str(found.obj).removeprefix("torch.") if kind == SymbolKind.DTYPE else None
            table_facts[path] = [str(kind), found.module, identity, dtype]
            if kind in (SymbolKind.MODULE, SymbolKind.CLASS, SymbolKind.FUNCTION):
                sig = facts.CallSignature.of(found.obj)
                if sig is None:
                    sigs[path] = None
                elif portable(sig.text):
                    sigs[path] = [sig.text, [list(x) for x in sig.params]]
        data = {"facts": table_facts, "sigs": sigs, "unknown": {}, "spaces": spaces}
        check = shipped.Shipped.of(data)
        unknown: dict[str, list[Any]] = {}
        for path in sorted(self.negative):
            exc = self.negative[path]
            live = [exc.message, exc.suggestion]
            derived = check.missing(path)
            if derived is None:
                unknown[path] = live
            elif list(derived) != live:
                raise AssertionError(f"{path}: the listing says {derived}, torch says {live}")
        data["unknown"] = unknown
        return data


_QUALIFIED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.[A-Za-z_]")


def portable(text: str) -> bool:
    """True if a signature prints the same in every install of this build: no module repr
    (it holds a path) and no annotation from a package other than torch and the standard
    library (its version could print it otherwise). Others are left to live resolution."""
    if "<module " in text:
        return False
    tops = set(_QUALIFIED.findall(text))
    return all(t == "torch" or t in sys.stdlib_module_names for t in tops)


def _hook_name(hook: Any) -> str:
    return f"{getattr(hook, '__module__', '?')}.{getattr(hook, '__qualname__', '?')}"


def _digest_or(hook: Callable[..., Any]) -> str:
    try:
        return hook_digest(hook)
    except (OSError, TypeError):
        return "(no source)"


def _path_of(module: types.ModuleType) -> list[Path]:
    found = getattr(module, "__path__", None)
    try:
        return [Path(p) for p in found or () if isinstance(p, str)]
    except TypeError:
        return []


def _modules_under(prefix: str) -> list[str]:
    return [m for m in list(sys.modules) if m.startswith(prefix + ".")]


def loaded_files(build: shipped.Build) -> list[list[Any]]:
    """The files of torch's modules loaded now, and its native libraries, relative to ``site``,
    each with its size as RECORD gives it."""
    _, entries = shipped.record_digest(build.record.read_bytes())
    out = set()
    root = (build.site / "torch").resolve()
    for name, module in list(sys.modules.items()):
        if name != "torch" and not name.startswith("torch."):
            continue
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        path = Path(file).resolve()
        if root not in path.parents:
            continue
        out.add(path.relative_to(build.site.resolve()).as_posix())
    out |= {p for p in entries if p.startswith("torch/lib/") and ".so" in p}
    missing = sorted(p for p in out if p not in entries)
    if missing:
        raise SystemExit(f"files loaded from torch that its RECORD does not list: {missing[:5]}")
    return [[p, entries[p][1]] for p in sorted(out)]


def make(repo: Path = REPO) -> tuple[str, dict[str, Any], list[str]]:
    """The table of the installed torch build: (file name, table, unreviewed hooks)."""
    build = shipped.installed_build()
    if build is None:
        raise SystemExit("torch is not installed from a wheel here: no build to make facts for")
    names = asked_names(repo)
    builder = Builder()
    body = builder.table(names)
    digest, _ = shipped.record_digest(build.record.read_bytes())
    data = {
        "format": shipped.FORMAT,
        "torch": build.version,
        "python": shipped.python_tag(),
        "record": digest,
        "files": loaded_files(build),
        **body,
    }
    return shipped.table_name(build.version, digest), data, builder.unreviewed


HEADER = ("format", "torch", "python", "record", "files")


def dumps(data: dict[str, Any]) -> str:
    """The table as ``shipped.load`` reads it: the header on the first line (what it applies
    to, and the sha256 of what follows), then the facts, one fact, signature, name or
    namespace a line (reviewable diffs)."""
    body = _body(data)
    header = {k: data[k] for k in HEADER}
    header["body"] = hashlib.sha256(body.encode()).hexdigest()
    return json.dumps(header, separators=(",", ":")) + "\n" + body


def _body(data: dict[str, Any]) -> str:
    out = ["{"]
    items = [(k, v) for k, v in data.items() if k not in HEADER]
    for i, (key, value) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(value, dict) and value:
            out.append(f"{json.dumps(key)}: {{")
            rows = list(value.items())
            for j, (k, v) in enumerate(rows):
                sep = "," if j < len(rows) - 1 else ""
                out.append(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}{sep}")
            out.append("}" + end)
        else:
            out.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}{end}")
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.live.facts_table", description=__doc__)
    ap.add_argument("--check", action="store_true", help="compare with the shipped table only")
    args = ap.parse_args(argv)
    name, data, unreviewed = make()
    text = dumps(data)
    target = shipped.FOLDER / name
    for hook in unreviewed:
        print(f"unreviewed __getattr__ hook, namespace left unlisted: {hook}", file=sys.stderr)
    if args.check:
        ok = target.is_file() and target.read_text(encoding="utf-8") == text
        print(f"{target.name}: {'up to date' if ok else 'differs from what torch says'}")
        return 0 if ok else 1
    shipped.FOLDER.mkdir(exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(
        f"wrote {target.relative_to(REPO) if REPO in target.parents else target}: "
        f"{len(data['facts'])} facts, {len(data['unknown'])} missing names, "
        f"{len(data['spaces'])} namespaces listed, {len(data['files'])} files checked"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
