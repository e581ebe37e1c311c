"""Facts about torch's names: public dotted paths of the installed torch, resolved to objects.

A spec names Python objects by dotted path (``torch.nn.Conv2d``,
``F.max_pool2d``, ``torch.ops.aten.add.Tensor``, ``operator.add``). This module
turns such a path into the object by importing modules and walking attributes,
never by ``__qualname__`` (``F.max_pool2d`` is a ``boolean_dispatch`` closure,
``torch.add`` reports ``_VariableFunctionsClass.add``). Only top-level modules
on the allow-list are ever imported, so a spec cannot make the generator import
``os`` or run anything else. The walk never leaves the allowed packages either:
every module, class and callable it passes through must be defined in one of
them (``home``), so ``torch.os.system`` (``os``, which torch happens to
import) or ``torch.hub.urlopen`` (``urllib.request``) are errors, not paths
around the allow-list.

The resolver does not need the objects themselves, only facts about them
(``Facts``: kind, module to import, which paths name the same object, a dtype's
canonical name; ``CallSignature``: what a callable takes). ``TorchFacts``
serves those facts, from a table cached per torch version (see ``cache``) when
it has them and by resolving the path live, importing torch, when it does not.
Only facts about paths that exist are kept: an unknown path is always resolved
live, so its error and did-you-mean suggestion are the live ones.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DEFAULT_ALLOW
from ..infra import cache
from . import shipped
from .closest import suggest
from .model import SymbolKind


@dataclass(frozen=True)
class Resolved:
    """An object found at ``path``; ``module`` is the module to import for it.

    ``contained``: every module, class and callable on the walk, and the object
    itself (by its type, if it is data), is defined in the path's own top-level
    package (``torch`` or ``torch._C``; ``operator`` or ``_operator``). Only
    such facts are cached or shipped: an object a contained ``torch`` path
    names exists only once torch is imported (see ``TorchFacts._learn``).
    """

    path: str
    obj: Any
    module: str
    contained: bool = False


class UnknownSymbol(LookupError):
    """``path`` names nothing.

    ``at`` is how many segments did resolve when the next one is missing (None
    for any other reason: the allow-list, a module outside it on the walk, an
    import that fails); ``contained`` says whether those segments were all
    defined in the path's top-level package (see ``Resolved``).
    """

    def __init__(
        self,
        path: str,
        message: str,
        suggestion: str | None = None,
        at: int | None = None,
        contained: bool = False,
    ):
        super().__init__(message)
        self.path = path
        self.message = message
        self.suggestion = suggestion
        self.at = at
        self.contained = contained


def _is_importable_module(obj: Any, name: str) -> bool:
    """True if ``import name`` works and gives ``obj`` (torch.ops.aten is no such module)."""
    return isinstance(obj, types.ModuleType) and sys.modules.get(name) is obj


def resolve(path: str, allow: tuple[str, ...] = DEFAULT_ALLOW) -> Resolved:
    """Resolve a full dotted path (no aliases) to the object it names."""
    allow = tuple(allow)
    found = _found.get((path, allow))
    if found is None:
        found = _resolve(path, allow)
        _found[(path, allow)] = found
    return found


# Paths resolved so far: a spec names the same few hundred objects thousands of times.
_found: dict[tuple[str, tuple[str, ...]], Resolved] = {}


def forget(tops: set[str]) -> None:
    """Forget the objects found under the top-level modules ``tops``: they are being imported
    afresh (a long-running process whose user modules changed; see ``infra.usermodules``)."""
    for key in [k for k in _found if k[0].partition(".")[0] in tops]:
        del _found[key]


def check_allowed(path: str, allow: tuple[str, ...]) -> None:
    """Raise UnknownSymbol unless the top-level module of ``path`` is on the allow-list."""
    top = path.split(".")[0]
    if top not in allow:
        hint = difflib.get_close_matches(top, allow, n=1)
        raise UnknownSymbol(
            path,
            f"'{top}' is not an allowed module (allowed: {', '.join(allow)})",
            f"did you mean '{hint[0]}'?" if hint else "extend [tool.bcfg] allow in pyproject.toml",
        )


def _resolve(path: str, allow: tuple[str, ...]) -> Resolved:
    parts = path.split(".")
    check_allowed(path, allow)
    obj: Any = _import(path, parts[0])
    if obj is _MISSING:
        raise UnknownSymbol(
            path,
            f"cannot import module '{parts[0]}'",
            "bcfg imports the project's modules from its root and [tool.bcfg] pythonpath, "
            "and installed packages from the environment bcfg runs in",
        )
    module = parts[0]
    contained = True
    for i, part in enumerate(parts[1:], start=1):
        prefix = ".".join(parts[: i + 1])
        nxt = getattr(obj, part, _MISSING) if not part.startswith("__") else _MISSING
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            nxt = _import(path, prefix)
        if nxt is _MISSING and i == 3 and parts[:2] == ["torch", "ops"]:
            nxt = _registered_op(path, obj, part, allow)
        if nxt is _MISSING:
            raise UnknownSymbol(
                path,
                f"unknown symbol '{path}'",
                _did_you_mean(obj, parts[:i], part)
                or _op_elsewhere(parts, i, exact=True)
                or _op_elsewhere(parts, i, exact=False)
                or _register_hint(parts, allow),
                at=i,
                contained=contained,
            )
        _check_home(path, prefix, nxt, allow)
        contained = contained and _defined_in(nxt, parts[0])
        obj = nxt
        if module == ".".join(parts[:i]) and _is_importable_module(obj, prefix):
            module = prefix
    return Resolved(path, obj, module, contained)


def _user_packages(allow: tuple[str, ...]) -> list[str]:
    """The allowed top-level modules that are the project's or a package's, not bcfg's defaults."""
    return [a for a in allow if a not in DEFAULT_ALLOW]


def _registered_op(path: str, namespace: Any, name: str, allow: tuple[str, ...]) -> Any:
    """The op ``name`` of the ``torch.ops`` namespace ``namespace``, once the allowed packages
    are imported; ``_MISSING`` if none of them registers it.

    An op that ``torch.library`` registers exists only once the module registering it is
    imported. Whether an earlier name of the run imported it must not decide whether a spec
    resolves, nor must the cache (which never keeps such an op: ``_python_op``): so a missing
    op is looked for again after importing every allowed package, the same way every run.
    """
    for top in _user_packages(allow):
        _import(path, top)
    return getattr(namespace, name, _MISSING)


def _register_hint(parts: list[str], allow: tuple[str, ...]) -> str | None:
    """How to make the ``torch.library`` op at ``torch.ops.NS.NAME`` known to bcfg."""
    if len(parts) < 4 or parts[:2] != ["torch", "ops"] or parts[2] == "aten":
        return None
    qualified = f"{parts[2]}::{parts[3]}"
    function = f"pattern yourpkg.ops.{parts[3]} {{ ... }}"
    packages = _user_packages(allow)
    if not packages:
        return (
            f"an op registered with torch.library ({qualified}) exists once the module that "
            "registers it is imported: add your package to [tool.bcfg] allow in pyproject.toml "
            "and import that module from the package's __init__.py, or name the op's function "
            f"in the spec ({function})"
        )
    return (
        f"no allowed package registers {qualified} when imported "
        f"({', '.join(packages)}): import the module that registers it from the package's "
        "__init__.py, or name the op's function in the spec, which imports its module "
        f"({function})"
    )


def _python_op(obj: Any) -> bool:
    """True for a ``torch.ops`` op (or packet) that ``torch.library`` defined from Python.

    Such an op exists only once the module defining it is imported (a user's package, or a
    part of torch that a fresh ``import torch`` does not load): its facts are never cached,
    so that a cold and a warm cache give a spec the same answer.
    """
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(obj, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return False
    qualified = getattr(obj, "_qualified_op_name", None)
    if qualified is None:
        qualified = getattr(getattr(obj, "_schema", None), "name", None)
    if not isinstance(qualified, str):
        return False
    library = sys.modules.get("torch.library")
    custom = sys.modules.get("torch._library.custom_ops")
    defined = getattr(library, "_defs", ()) if library is not None else ()
    opdefs = getattr(custom, "OPDEFS", {}) if custom is not None else {}
    return qualified in defined or qualified in opdefs


def _defined_in(obj: Any, top: str) -> bool:
    """True if ``obj`` (data: its type) is defined in the package ``top`` (or ``_top``)."""
    where = home(obj)
    if where is None:
        where = getattr(type(obj), "__module__", None)
        if not isinstance(where, str):
            return False
    first = where.partition(".")[0]
    return first in (top, f"_{top}")


_MISSING = object()


def _import(path: str, name: str) -> Any:
    """The module ``name`` (on the walk to ``path``), or ``_MISSING`` if there is none.

    Importing runs the module's code: an allowed user module that raises (or
    fails to import one of its own imports, or exits) is an error about the
    spec's name, saying what failed and where, never bcfg's crash. What the
    module prints goes to standard error, never into a command's output.
    """
    import contextlib

    try:
        with contextlib.redirect_stdout(sys.stderr):
            return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (any failure of the module's code)
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        if missing is not None and (name == missing or name.startswith(missing + ".")):
            return _MISSING
        raise UnknownSymbol(
            path,
            f"importing '{name}' failed: {_failure(exc)}",
            "fix the module: bcfg imports it to resolve the names the spec uses",
        ) from None


def _failure(exc: BaseException) -> str:
    """One line: the exception, and the file and line of the module's code that raised it."""
    import os
    import traceback

    if isinstance(exc, SystemExit):
        what = f"it called sys.exit({exc.code!r})"
    else:
        try:
            lines = str(exc).strip().splitlines()
        except Exception:  # noqa: BLE001  (an exception whose __str__ raises)
            lines = []
        what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        file, line = exc.filename, exc.lineno
        what = f"{type(exc).__name__}: {exc.msg}"
    else:
        tb = traceback.extract_tb(exc.__traceback__)
        frames = [f for f in tb if not f.filename.startswith("<frozen ")]
        if not frames:
            return what
        file, line = frames[-1].filename, frames[-1].lineno or 0
    shown = (
        os.path.relpath(file) if os.path.abspath(file).startswith(os.getcwd() + os.sep) else file
    )
    return f"{what} ({shown}:{line})"


def home(obj: Any) -> str | None:
    """The module that defines ``obj``: a module's own name, else ``__module__``; None for data.

    A method descriptor has no ``__module__`` and is judged by the class that
    holds it; a callable or class whose home cannot be told has home ``"?"``.
    """
    if isinstance(obj, types.ModuleType):
        return str(getattr(obj, "__name__", "?"))
    if not (isinstance(obj, type) or callable(obj)):
        return None  # numbers, strings, dtypes, enum members: data, never run
    found = getattr(obj, "__module__", None)
    if not isinstance(found, str):
        owner = getattr(obj, "__objclass__", None) or getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            owner = owner if isinstance(owner, type) else type(owner)
            found = getattr(owner, "__module__", None)
    return found if isinstance(found, str) else "?"


def _allowed_home(module: str, allow: tuple[str, ...]) -> bool:
    """True if ``module`` belongs to an allowed package (``_operator`` is ``operator``'s C half)."""
    top = module.partition(".")[0]
    return top in allow or (top.startswith("_") and top[1:] in allow)


def _check_home(path: str, prefix: str, obj: Any, allow: tuple[str, ...]) -> None:
    """Refuse an object on the walk whose defining module is outside the allowed packages."""
    where = home(obj)
    if where is None or _allowed_home(where, allow):
        return
    what = "the module" if isinstance(obj, types.ModuleType) else "defined in"
    shown = f"{what} '{where}'" if where != "?" else "of unknown origin"
    raise UnknownSymbol(
        path,
        f"'{prefix}' is {shown}, outside the allowed modules (allowed: {', '.join(allow)})",
        "a spec may name only what torch or an allowed module defines; "
        "name it by the module that defines it and add that module to [tool.bcfg] allow",
    )


def _did_you_mean(parent: Any, parent_parts: list[str], part: str) -> str | None:
    try:
        names = listing(parent)
    except Exception:  # an exotic object whose dir() fails: no suggestion
        return None
    return suggest(names, parent_parts, part)


def _op_elsewhere(parts: list[str], i: int, exact: bool) -> str | None:
    """Did you mean, for ``torch.ops.NS.NAME[.OVERLOAD]`` where namespace NS has no op NAME:
    the op of that name (``exact``), else the closest, in another namespace.

    A ``torch.library`` op of the user's package lives in the package's namespace
    (``npukit::fancy_act`` is ``torch.ops.npukit.fancy_act``), not in ``aten``. The ops are
    those registered by now: torch's, and those of the modules the spec has imported. The
    overload asked for is kept where that op has it, else the op's ``default`` (or first).
    """
    torch = sys.modules.get("torch")
    if i != 3 or parts[:2] != ["torch", "ops"] or torch is None:
        return None
    try:
        registered = torch._C._dispatch_get_all_op_names()
    except Exception:  # noqa: BLE001  (a torch without it: no suggestion)
        return None
    # op name -> namespace -> overloads ("ns::name" is the default overload)
    ops: dict[str, dict[str, set[str]]] = {}
    for qualified in registered:
        ns, _, rest = str(qualified).partition("::")
        if ns != parts[2]:
            name, _, overload = rest.partition(".")
            ops.setdefault(name, {}).setdefault(ns, set()).add(overload or "default")
    name = parts[3]
    if exact:
        close = [name] if name in ops else []
    else:
        close = difflib.get_close_matches(name, sorted(ops), n=1, cutoff=0.75)
    if not close:
        return None
    found = ops[close[0]]
    asked = parts[4] if len(parts) > 4 else None
    ns = min(found, key=lambda n: (asked not in found[n], n))
    tail = parts[4:]
    if asked is not None and asked not in found[ns]:
        tail = ["default" if "default" in found[ns] else min(found[ns])]
    return f"did you mean '{'.'.join(['torch', 'ops', ns, close[0], *tail])}'?"


def _names_an_op(path: str) -> bool:
    """``path`` names an op by its namespace: ``torch.ops.NS.NAME[.OVERLOAD]``."""
    parts = path.split(".")
    return len(parts) >= 4 and parts[:2] == ["torch", "ops"]


def exported_op(path: str, allow: tuple[str, ...]) -> str | None:
    """The op ``torch.export`` records for the ``torch.library`` op at ``path``, by its own
    namespace (``npukit.fancy_act``, a ``custom_op`` of namespace ``npukit``:
    ``torch.ops.npukit.fancy_act.default``); None for anything else (or a path that does not
    resolve)."""
    try:
        obj = resolve(path, allow).obj
    except UnknownSymbol:
        return None
    qualified = getattr(obj, "_qualname", None) or getattr(obj, "_qualified_op_name", None)
    if not isinstance(qualified, str) or "::" not in qualified:
        return None
    ns, _, name = qualified.partition("::")
    return f"torch.ops.{ns}.{name}.default"


def traced_through(path: str, allow: tuple[str, ...]) -> bool:
    """Whether FX's symbolic trace goes through the function at ``path`` (a plain Python
    ``def``: it records the torch ops the function calls, never the function), rather than
    recording the call: false for an op, a builtin, a class, and a function ``torch.fx.wrap``
    made a leaf in its module."""
    import inspect

    try:
        obj = resolve(path, allow).obj
    except UnknownSymbol:
        return False
    if not inspect.isfunction(obj):
        return False
    fx = sys.modules.get("torch.fx._symbolic_trace")
    wrapped = getattr(fx, "_wrapped_fns_to_patch", {})
    return (id(obj.__globals__), obj.__name__) not in wrapped


def op_in_other_namespace(name: str) -> str | None:
    """``torch.ops.NS.name.default`` for an op called ``name`` registered in a namespace other
    than torch's ``aten`` (a ``torch.library`` op of the modules imported by now: a user's
    module class whose ``forward`` calls its package's op); None if there is none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        registered = torch._C._dispatch_get_all_op_names()
    except Exception:  # noqa: BLE001  (a torch without it: no suggestion)
        return None
    found = sorted(
        ns
        for ns, _, rest in (str(q).partition("::") for q in registered)
        if rest.partition(".")[0] == name and ns not in ("aten", "prims")
    )
    return f"torch.ops.{found[0]}.{name}.default" if found else None


def listing(parent: Any) -> list[str]:
    """The names a did-you-mean chooses from: ``dir(parent)`` but the dunders."""
    return [n for n in dir(parent) if not n.startswith("__")]


def kind_of(obj: Any) -> SymbolKind:
    """Classify an object for the resolver's checks.

    An object can be a torch dtype, module class or operator only once torch is
    imported, so this never imports torch itself.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.dtype):
        return SymbolKind.DTYPE
    if isinstance(obj, type):
        if torch is not None and issubclass(obj, torch.nn.Module):
            return SymbolKind.MODULE
        return SymbolKind.CLASS
    if torch is not None and isinstance(obj, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return SymbolKind.OP
    if isinstance(obj, types.ModuleType):
        return SymbolKind.NAMESPACE
    if callable(obj):
        return SymbolKind.FUNCTION
    return SymbolKind.VALUE


# ------------------------------------------------------------------ facts

# Top-level modules whose facts are cached: the cache key holds their versions
# (torch's, and Python's for the standard library). Facts about other allowed
# modules, whose versions the key does not hold, are always found live.
CACHED_TOPS = ("torch", "operator")


@dataclass(frozen=True)
class Facts:
    """What the resolver knows about the object a dotted path names, without the object.

    Two paths have the same ``identity`` exactly when they name the same object
    (``F.avg_pool2d`` and ``torch._C._nn.avg_pool2d``): it is the first path of
    the table that reached the object. ``dtype`` is a dtype's canonical name
    (``torch.float`` is ``float32``), None for anything else.
    """

    path: str
    kind: SymbolKind
    module: str
    identity: str
    dtype: str | None = None


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


@dataclass(frozen=True)
class CallSignature:
    """What a callable takes: each parameter's name, kind and whether it has a default."""

    params: tuple[tuple[str, str, bool], ...]
    text: str  # the signature as inspect prints it: "(conv, add)"

    @classmethod
    def of(cls, obj: Any) -> CallSignature | None:
        """The signature of ``obj``, or None if inspect cannot tell it."""
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
        params = tuple(
            (p.name, p.kind.name, p.default is not p.empty) for p in sig.parameters.values()
        )
        # Defaults print as their repr; an address in one would change from run to run.
        return cls(params, _ADDRESS.sub(">", str(sig)))

    def bind_error(self, n: int) -> str | None:
        """inspect's reason why ``n`` positional arguments do not bind; None if they do."""
        empty = inspect.Parameter.empty
        try:
            sig = inspect.Signature(
                [
                    inspect.Parameter(
                        name, getattr(inspect.Parameter, kind), default=None if d else empty
                    )
                    for name, kind, d in self.params
                ]
            )
        except (TypeError, ValueError):  # parameters inspect itself would not accept
            return None
        try:
            sig.bind(*([None] * n))
        except TypeError as exc:
            return str(exc)
        return None


class TorchFacts:
    """Facts about dotted paths: cached, shipped or found live.

    ``cached`` starts from the table cached for this torch build, generator and
    allow-list, over the table bcfg ships for the installed torch build
    (``semantics.shipped``; none for a build it has no table for): the cached
    one holds what the project's runs used, so that a warm run does not read
    the shipped one at all. ``save`` writes back what a run used or learned.
    A table made directly knows nothing: every fact is found live (and
    remembered for the table's life).
    """

    def __init__(
        self,
        allow: tuple[str, ...] = DEFAULT_ALLOW,
        key: str | None = None,
        base: shipped.Shipped | None = None,
    ):
        self.allow = tuple(allow)
        self._key = key
        self._base = base
        self._facts: dict[str, Facts] = {}  # cached, taken from the base, or learned
        self._sigs: dict[str, CallSignature | None] = {}
        self._kept: set[str] = set()  # what ``save`` writes: facts cached, taken or learned
        self._sigs_kept: set[str] = set()  # and the signatures of those
        # Objects found live: id -> (object, identity). Before a path is learned,
        # the known identities of its kind whose top-level module is imported
        # are resolved live and added (``_link``), so that a path to an object
        # already known gets that object's identity.
        self._live: dict[int, tuple[Any, str]] = {}
        self._linked: set[tuple[str, str]] = set()
        self._dirty = False

    @classmethod
    def cached(cls, allow: tuple[str, ...] = DEFAULT_ALLOW) -> TorchFacts:
        """The cached and shipped tables of this torch build (empty on a miss)."""
        base = shipped.load()
        k = cache.key("symbols", list(allow), base.digest if base is not None else None)
        table = cls(allow, k, base)
        table._load(cache.load("symbols", k))
        return table

    @property
    def shipped(self) -> bool:
        """True if the facts bcfg ships for the installed torch build are in use."""
        return self._base is not None

    def __contains__(self, path: str) -> bool:
        """True if the facts of ``path`` are known without resolving it."""
        return path in self._facts or (self._base is not None and path in self._base.facts)

    def known(self) -> list[str]:
        """Every dotted path whose facts are known without resolving it (for completion)."""
        if self._base is None:
            return list(self._facts)
        return list(dict.fromkeys([*self._base.facts, *self._facts]))

    def lookup(self, path: str) -> Facts:
        """The facts of the full dotted ``path``; raises UnknownSymbol, as ``resolve`` does."""
        found = self._facts.get(path)
        if found is not None:
            return found
        if path.partition(".")[0] not in self.allow:
            resolve(path, self.allow)  # raises the allow-list error, importing nothing
        if self._base is not None:
            raw = self._base.facts.get(path)
            if raw is not None:
                return self._take(path, raw)
            # A missing name, as a fresh process that imports torch would find it.
            # Once torch is imported here (a user module may have added to it), live.
            missing = None if torch_imported() else self._base.missing(path)
            # A missing op may be another namespace's, or one an allowed package registers:
            # live resolution, which imports torch (an error's cost), looks there
            # (_op_elsewhere, _registered_op), the same whatever the cache holds.
            if missing is not None and not _names_an_op(path):
                raise UnknownSymbol(path, missing[0], missing[1])
        return self._learn(path)

    def _take(self, path: str, raw: list[Any]) -> Facts:
        """The base's facts of ``path``, kept for the cache (with its identity's)."""
        found = self._facts[path] = Facts(path, SymbolKind(raw[0]), raw[1], raw[2], raw[3])
        self._kept.add(path)
        self._dirty = True
        if raw[2] != path and raw[2] not in self._facts:
            self._take(raw[2], self._base.facts[raw[2]])  # type: ignore[union-attr]
        return found

    def identity(self, path: str) -> str:
        """One name for everything ``path`` may name (``nn.ReLU``, ``torch.nn.ReLU``); ``path``
        itself when it names nothing known."""
        try:
            return self.lookup(path).identity
        except UnknownSymbol:
            return path

    def dtype(self, name: str) -> str:
        """The canonical name of the bare dtype name ``name``: ``float`` -> ``float32``."""
        facts = self.lookup(f"torch.{name}")
        assert facts.dtype is not None, f"torch.{name} is not a dtype"
        return facts.dtype

    def signature(self, path: str) -> CallSignature | None:
        """What the callable at ``path`` (already looked up) takes; None if that cannot be told."""
        if path in self._sigs:
            return self._sigs[path]
        if self._base is not None and path in self._base.sigs:
            sig = _signature(self._base.sigs[path])
        else:
            sig = CallSignature.of(self._object(path))
        self._sigs[path] = sig
        if path in self._kept:
            self._sigs_kept.add(path)
            self._dirty = True
        return sig

    def op_arguments(self, path: str) -> tuple[tuple[str, bool], ...] | None:
        """The positional arguments of the ATen op overload at ``path``, each as (name, whether
        it is a tensor: ``Tensor``, ``Tensor?``, ``Tensor[]``), from its schema in the
        installed torch's ``native_functions.yaml`` (torchgen's copy), read as text: torch is
        not imported, and the answer is the same whatever the cache holds. None if the op
        is not there (not ATen's, or no such file)."""
        if not path.startswith("torch.ops.aten."):
            return None
        op, _, overload = path.removeprefix("torch.ops.aten.").rpartition(".")
        return native_schemas().get(op if overload == "default" else f"{op}.{overload}")

    def _object(self, path: str) -> Any:
        return _resolve_allowed(path, self.allow).obj

    def _learn(self, path: str) -> Facts:
        """Resolve ``path`` live (its top-level module is allowed) and remember its facts."""
        found = _resolve_allowed(path, self.allow)
        obj = found.obj
        kind = kind_of(obj)
        self._link(kind)
        identity = self._live.setdefault(id(obj), (obj, path))[1]
        dtype = str(obj).removeprefix("torch.") if kind == "dtype" else None
        facts = Facts(path, kind, found.module, identity, dtype)
        self._facts[path] = facts
        if found.contained and path.partition(".")[0] in CACHED_TOPS and not _python_op(obj):
            self._kept.add(path)
            self._dirty = True
            if identity not in self._facts and self._base is not None:
                raw = self._base.facts.get(identity)
                if raw is not None:
                    self._take(identity, raw)
        return facts

    def _link(self, kind: SymbolKind) -> None:
        """Resolve live the known identities of ``kind`` whose top-level module is imported.

        An object of another kind is another object; and the object of a known
        path (contained: see ``Resolved``) exists only once its top-level module
        is imported, so the others cannot be the object being learned.
        """
        tops = [t for t in CACHED_TOPS if t in sys.modules and (t, kind) not in self._linked]
        if not tops:
            return
        self._linked.update((t, kind) for t in tops)
        base = self._base.facts if self._base is not None else {}
        identities = {raw[2] for raw in base.values() if raw[0] == kind}
        identities |= {f.identity for f in self._facts.values() if f.kind == kind}
        for identity in sorted(identities):
            if identity.partition(".")[0] not in tops:
                continue
            try:
                known = self._object(identity)
            except UnknownSymbol:
                continue
            self._live.setdefault(id(known), (known, identity))

    def _load(self, data: Any) -> None:
        """Take the facts of a cache entry; any entry that is not exactly as ``save`` writes is ignored."""
        try:
            facts = {}
            for path, (kind, module, identity, dtype) in data["facts"].items():
                strings = all(isinstance(x, str) for x in (path, kind, module, identity))
                if not strings or kind not in _KINDS or not isinstance(dtype, (str, type(None))):
                    return
                facts[path] = Facts(path, SymbolKind(kind), module, identity, dtype)
            for f in facts.values():  # each identity is a path of the table, its own identity
                if f.identity not in facts or facts[f.identity].identity != f.identity:
                    return
            sigs: dict[str, CallSignature | None] = {}
            for path, sig in data["sigs"].items():
                if path not in facts or not _valid_signature(sig):
                    return
                sigs[path] = _signature(sig)
        except (KeyError, TypeError, ValueError, AttributeError):
            return
        self._facts, self._sigs, self._kept, self._sigs_kept = facts, sigs, set(facts), set(sigs)

    def save(self) -> None:
        """Write the table back to the cache if anything was used or learned (a cached table
        only)."""
        if self._key is None or not self._dirty:
            return
        kept = {p: self._facts[p] for p in self._kept}
        # An identity that is a path not kept becomes the first kept path naming that object.
        first: dict[str, str] = {}
        for p, f in kept.items():
            if f.identity not in kept:
                first.setdefault(f.identity, p)
        value = {
            "facts": {
                p: [f.kind, f.module, first.get(f.identity, f.identity), f.dtype]
                for p, f in kept.items()
            },
            "sigs": {
                p: None if s is None else [s.text, [list(x) for x in s.params]]
                for p, s in self._sigs.items()
                if p in self._sigs_kept
            },
        }
        cache.store("symbols", self._key, value)
        self._dirty = False


_NATIVE: dict[str, tuple[tuple[str, bool], ...]] = {}


def native_schemas() -> dict[str, tuple[tuple[str, bool], ...]]:
    """Each ATen op overload's positional arguments (``add.Tensor``: self and other, tensors),
    from the schemas of torch's ``native_functions.yaml``, which torchgen ships beside torch.
    Read once, as text; empty if there is none."""
    if _NATIVE:
        return _NATIVE
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    roots = list(spec.submodule_search_locations or ()) if spec is not None else []
    for root in roots:
        path = Path(root) / "packaged" / "ATen" / "native" / "native_functions.yaml"
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("- func: "):
                    name, args = _schema_args(line.removeprefix("- func: "))
                    _NATIVE[name] = args
            break
    return _NATIVE


def _schema_args(schema: str) -> tuple[str, tuple[tuple[str, bool], ...]]:
    """``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``: its name and
    positional arguments (those before ``*``)."""
    name, _, rest = schema.partition("(")
    args: list[tuple[str, bool]] = []
    depth, word = 0, ""
    for ch in rest:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:  # the argument list's own closing parenthesis
                break
        if ch == "," and depth == 0:
            args.append(_schema_arg(word))
            word = ""
            continue
        word += ch
    if word.strip():
        args.append(_schema_arg(word))
    positional = []
    for arg in args:
        if arg[0] == "*":
            break
        positional.append(arg)
    return name.strip(), tuple(positional)


def _schema_arg(text: str) -> tuple[str, bool]:
    """``Tensor? bias=None``: (``bias``, True); ``*``: (``*``, False)."""
    words = text.split("=")[0].split()
    if words == ["*"]:
        return ("*", False)
    return (words[-1] if words else "", bool(words) and words[0].startswith("Tensor"))


def torch_imported() -> bool:
    """True if this process has imported torch (then a missing name is looked for live)."""
    return "torch" in sys.modules


def _valid_signature(sig: Any) -> bool:
    """True if ``sig`` is a signature as tables hold it: None, or [text, [[name, kind, default]]]."""
    if sig is None:
        return True
    text, params = sig
    return isinstance(text, str) and all(
        isinstance(n, str) and k in _PARAM_KINDS and isinstance(d, bool) for n, k, d in params
    )


def _signature(sig: Any) -> CallSignature | None:
    """A signature as tables hold it, as a CallSignature."""
    if sig is None:
        return None
    text, params = sig
    return CallSignature(tuple((n, k, d) for n, k, d in params), text)


def _resolve_allowed(path: str, allow: tuple[str, ...]) -> Resolved:
    """``resolve`` for a path whose top-level module the caller has checked is allowed.

    Only that top-level module is imported; what the walk may pass through is
    judged against all of ``allow``.
    """
    top = path.partition(".")[0]
    return resolve(path, (top, *(a for a in allow if a != top)))


_KINDS = frozenset(SymbolKind)
_PARAM_KINDS = (
    "POSITIONAL_ONLY",
    "POSITIONAL_OR_KEYWORD",
    "VAR_POSITIONAL",
    "KEYWORD_ONLY",
    "VAR_KEYWORD",
)
# A function from a dotted path to what the callable there takes (TorchFacts.signature).
SignatureOf = Callable[[str], CallSignature | None]
