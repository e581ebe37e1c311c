"""What a fuser closure does, proven by running its code on symbols.

A fuser that has no importable dotted path (a closure made by a factory such as
torch's ``_sequential_wrapper2``, torch 1.13's ``reverse2``/``reverse3``, or a
project's copy of them) can still be written in a spec if bcfg can prove what
it builds. ``trace(fn, shape)`` re-creates ``fn`` from its code object with every
global it names and every closure cell wrapped in a recording stand-in, and
calls it with one symbol per pattern element (in the pattern's nesting), once
with ``is_qat`` false and once true. What comes back is an expression over the
parameters: calls of known objects, ``is_qat`` passed on, constants. Calls of
other closures are traced into (``_reverse2(_sequential_wrapper2(C))`` is
``C(conv, relu)``); raising ``NotImplementedError`` in QAT is ``eval_only``;
comparing the modules' ``.training`` is ``same_mode``; ``type(module)`` is the
pattern element's class, which proves a type-dispatch table on this pattern.
Anything else (reading other attributes, branching on a module, arithmetic,
loops) is ``NotProvable``: the fuser does real work that a spec cannot say.

The traced code runs with no builtins but a handful, calls nothing real but
attribute reads on known objects, and is bounded by the import's timeout.
"""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class NotProvable(Exception):
    """Why a fuser's behaviour cannot be proven."""


@dataclass(frozen=True)
class Call:
    target: Any  # the live object called
    args: tuple[Any, ...]  # Param | Call | Qat | Const


@dataclass(frozen=True)
class Param:
    name: str


@dataclass(frozen=True)
class Qat:
    pass


@dataclass(frozen=True)
class Const:
    value: bool | int | float


@dataclass(frozen=True)
class Tup:
    """Matched modules passed on as they nest (``_sequential_wrapper2`` on a complex pattern)."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class Proof:
    """A fuser as a ``fuse`` declaration: parameters in the pattern's shape, body, flags."""

    params: Any  # a nested tuple of names (``_`` for an unused element)
    body: Call
    eval_only: bool
    same_mode: bool


class _Sym:
    """A module of the matched pattern, as a symbol."""

    __slots__ = ("name", "trace")

    def __init__(self, name: str, trace: _Trace):
        self.name = name
        self.trace = trace

    def __getattr__(self, attr: str) -> Any:
        if attr == "training":
            return _Training(self.name, self.trace)
        raise NotProvable(f"it reads .{attr} of a matched module")

    def __bool__(self) -> bool:
        raise NotProvable("it branches on a matched module")

    def __iter__(self) -> Any:
        raise NotProvable("it iterates over a matched module")

    def __repr__(self) -> str:  # messages may format the modules
        return f"<{self.name}>"

    def __format__(self, spec: str) -> str:
        return repr(self)


class _Training:
    def __init__(self, who: str, trace: _Trace):
        self.who = {who}
        self.trace = trace

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Training):
            raise NotProvable("it compares .training with something else")
        self.trace.same_mode = True
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class _Flag:
    """``is_qat`` while tracing: true or false, and recognisable when passed on."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def __bool__(self) -> bool:
        return self.value


class _Built:
    """What a call of a known object returned: an expression."""

    __slots__ = ("node",)

    def __init__(self, node: Call):
        self.node = node

    def __getattr__(self, attr: str) -> Any:
        raise NotProvable(f"it reads .{attr} of a module it built")

    def __bool__(self) -> bool:
        raise NotProvable("it branches on a module it built")


class _Ref:
    """A known object; calling it records a call, or traces into an unnamed closure."""

    __slots__ = ("obj", "trace")

    def __init__(self, obj: Any, trace: _Trace):
        self.obj = obj
        self.trace = trace

    def __getattr__(self, attr: str) -> Any:
        return _Ref(getattr(self.obj, attr), self.trace)

    def __hash__(self) -> int:
        return hash(self.obj)

    def __eq__(self, other: object) -> bool:
        return self.obj is (other.obj if isinstance(other, _Ref) else other)

    def __getitem__(self, key: Any) -> Any:
        key = key.obj if isinstance(key, _Ref) else key
        if isinstance(self.obj, dict) and isinstance(key, type):
            return _Ref(self.obj[key], self.trace)
        raise NotProvable("it indexes something other than a table of classes")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise NotProvable("it passes keyword arguments")
        if self.obj is NotImplementedError:
            return NotImplementedError(*[a for a in args if isinstance(a, str)])
        if isinstance(self.obj, types.FunctionType) and self.trace.named(self.obj) is None:
            return self.trace.run(self.obj, args)  # an unnamed closure: inline it
        if self.trace.named(self.obj) is None:
            raise NotProvable(f"it calls {_label(self.obj)}, which has no importable name")
        return _Built(Call(self.obj, tuple(self.trace.node(a) for a in args)))


def _label(obj: Any) -> str:
    try:
        return str(getattr(obj, "__qualname__", None) or type(obj).__name__)
    except Exception:  # noqa: BLE001  (a hostile __qualname__)
        return type(obj).__name__


_SAFE_BUILTINS = ("NotImplementedError", "AssertionError", "len", "tuple")
_MAX_DEPTH = 8  # closures traced into, one inside the other


class _Trace:
    """One tracing of one fuser."""

    def __init__(self, named: Callable[[Any], str | None], types_of: dict[str, Any]):
        self.named = named
        self.types_of = types_of  # parameter name -> the pattern element's class
        self.same_mode = False
        self.flag: _Flag | None = None
        self.depth = 0

    def node(self, a: Any) -> Any:
        if isinstance(a, _Built):
            return a.node
        if isinstance(a, _Sym):
            return Param(a.name)
        if isinstance(a, _Flag):
            return Qat()
        if isinstance(a, _Ref) and isinstance(a.obj, (bool, int, float)):
            a = a.obj
        if isinstance(a, (bool, int, float)):
            return Const(a)
        if isinstance(a, tuple):
            return Tup(tuple(self.node(x) for x in a))
        raise NotProvable(f"it passes {type(a).__name__} values on")

    def run(self, fn: types.FunctionType, args: tuple) -> Any:
        if self.depth >= _MAX_DEPTH:
            raise NotProvable("it nests closures too deeply")
        code = fn.__code__
        if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200):  # generators, coroutines
            raise NotProvable("it is a generator or coroutine")
        scope: dict[str, Any] = {
            k: getattr(builtins, k) for k in _SAFE_BUILTINS if k != "NotImplementedError"
        }
        scope["NotImplementedError"] = _Ref(NotImplementedError, self)
        scope["type"] = self._type
        g: dict[str, Any] = {"__builtins__": scope}
        fn_globals = fn.__globals__
        for name in code.co_names:
            if name in fn_globals:
                g[name] = _Ref(fn_globals[name], self)
        cells = tuple(types.CellType(_Ref(c.cell_contents, self)) for c in (fn.__closure__ or ()))
        clone = types.FunctionType(code, g, fn.__name__, fn.__defaults__, cells or None)
        self.depth += 1
        try:
            return clone(*args)
        finally:
            self.depth -= 1

    def _type(self, x: Any) -> Any:
        if isinstance(x, _Sym):
            cls = self.types_of.get(x.name)
            if cls is None:
                raise NotProvable("it asks the type of a pattern element that is not a class")
            return _Ref(cls, self)
        raise NotProvable("it asks the type of something other than a matched module")


def trace(
    fn: Callable[..., Any], shape: Any, named: Callable[[Any], str | None], types_of: dict
) -> Proof:
    """Prove what ``fn`` builds from modules matched in ``shape`` (nested tuples of names)."""
    if not isinstance(fn, types.FunctionType):
        raise NotProvable(f"it is a {type(fn).__name__}, not a Python function")
    results: dict[bool, Any] = {}
    same_mode = False
    for is_qat in (False, True):
        t = _Trace(named, types_of)
        t.flag = _Flag(is_qat)

        def syms(s: Any, t: _Trace = t) -> Any:
            return tuple(syms(x) for x in s) if isinstance(s, tuple) else _Sym(s, t)

        args = syms(shape)
        try:
            out = t.run(fn, (t.flag, *(args if isinstance(args, tuple) else (args,))))
        except NotImplementedError:
            results[is_qat] = "eval_only"
            continue
        except NotProvable:
            raise
        except RecursionError:
            raise NotProvable("it recurses") from None
        except Exception as exc:  # noqa: BLE001  (what the traced code raised)
            raise NotProvable(f"it raises {type(exc).__name__} on symbols") from None
        if not isinstance(out, _Built):
            raise NotProvable("it does not return a module it builds")
        results[is_qat] = out.node
        same_mode = same_mode or t.same_mode
    if results[False] == "eval_only":
        raise NotProvable("it refuses eval-mode modules")
    eval_only = results[True] == "eval_only"
    if not eval_only and results[True] != results[False]:
        raise NotProvable("it builds something else in QAT than passing is_qat on")
    return Proof(_unused(shape, results[False]), results[False], eval_only, same_mode)


def _mentions(node: Any) -> set[str]:
    if isinstance(node, Param):
        return {node.name}
    if isinstance(node, (Call, Tup)):
        parts = node.args if isinstance(node, Call) else node.items
        return set().union(*(_mentions(a) for a in parts)) if parts else set()
    return set()


def _unused(shape: Any, body: Call) -> Any:
    used = _mentions(body)

    def walk(s: Any) -> Any:
        if isinstance(s, tuple):
            inner = tuple(walk(x) for x in s)
            return "_" if all(x == "_" for x in inner) else inner
        return s if s in used else "_"

    return tuple(walk(x) for x in shape) if isinstance(shape, tuple) else walk(shape)


def normalised_code(fn: Any) -> tuple | None:
    """A function's code without where it was written: equal for byte-identical copies."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    return (
        code.co_code,
        code.co_consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_kwonlyargcount,
        code.co_posonlyargcount,
        code.co_flags,
    )
