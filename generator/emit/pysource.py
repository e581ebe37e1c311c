"""Python source: the machinery every emitter shares to print plain, black-formatted modules.

A strict Jinja environment over ``templates/`` (templates only print what
Python hands them; ``*.html.jinja`` templates HTML-escape it), ``check_source`` (a template bug is reported as such, not
written), and ``Fragments``, which lays statements out as black would
(``layout``) and hands black only the fragments of a shape layout does not
model. jinja2 and black are imported on first use.
"""

from __future__ import annotations

import builtins
import functools
import keyword
from collections.abc import Callable
from typing import Any, ClassVar

from ..resources import resource_path
from . import layout

_BUILTINS = frozenset(dir(builtins))


@functools.lru_cache(maxsize=1)
def jinja_env() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_path("templates", "backend.py.jinja").parent)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=_escapes,
    )


def _escapes(name: str | None) -> bool:
    """HTML templates escape what they print; Python and Markdown templates print it as given."""
    return name is not None and name.endswith(".html.jinja")


def safe_text(text: str) -> str:
    """Text fit for a comment or docstring: one line, no quotes that could end it."""
    return repr(text)[1:-1].replace('"', '\\"')


def comment_text(text: str) -> str:
    """Text fit for a ``#`` comment: one line, every control character escaped.

    Quotes cannot end a comment, so they stay as written (``for op = "mean"``).
    """
    return repr(text)[1:-1]


def check_source(source: str, what: str) -> str:
    """Return ``source`` if it compiles; a template bug is reported as such."""
    try:
        compile(source, what, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise RuntimeError(
            f"bcfg rendered invalid Python for {what} (line {exc.lineno}): {exc.msg}; this is a bug in bcfg"
        ) from None
    return source


@functools.lru_cache(maxsize=1)
def _black_mode():
    import black

    return black.Mode(target_versions={black.TargetVersion.PY310})


def black_format(source: str) -> str:
    """Format with black, as bcfg's output is defined to be formatted."""
    import black

    return black.format_str(source, mode=_black_mode())


@functools.lru_cache(maxsize=1)
def layout_matches_black() -> bool:
    """True if ``layout`` models the installed black; otherwise black formats everything."""
    from ..infra.cache import dist_version

    return dist_version("black") == layout.BLACK_VERSION


class Fragments:
    """Lays out fragments with ``layout``, or with black where layout declines."""

    # Shared by all modules of a run: torch's backends have many configs in common.
    _memo: ClassVar[dict[tuple[bool, str, str, int], list[str]]] = {}
    MEMO_SIZE = 100_000

    def __init__(self, fast: bool):
        self.fast = fast
        if len(self._memo) > self.MEMO_SIZE:
            self._memo.clear()

    def _lay(
        self,
        kind: str,
        text: str,
        depth: int,
        lay: Callable[[], list[str]],
        wrap: Callable[[], list[str]],
    ) -> list[str]:
        """``lay()`` the fragment, or ``wrap()`` it for black if layout declines it."""
        key = (self.fast, kind, text, depth)
        lines = self._memo.get(key)
        if lines is None:
            try:
                if not self.fast:
                    raise layout.Unsupported("black requested")
                lines = lay()
            except layout.Unsupported:
                lines = wrap()
            self._memo[key] = lines
        return lines

    def item(self, text: str, depth: int) -> list[str]:
        """An element of an exploded list at ``depth``, with its trailing comma."""

        def wrap() -> list[str]:
            return black_format(nest(f"_ = [\n    {text},\n]", depth - 1)).splitlines()[depth:-1]

        return self._lay("item", text, depth, lambda: layout.list_item(text, depth), wrap)

    def statement(self, text: str, depth: int) -> list[str]:
        """A simple statement at ``depth``."""
        return self._lay(
            "stmt", text, depth, lambda: layout.statement(text, depth), _black(text, depth)
        )

    def block(self, lines: list[str]) -> list[str]:
        """Indented source lines (a class, a constructor) laid out line by line: blank lines
        kept, a compound statement's header (``def``, ``class``, ``if``) hugged or exploded
        as black does, every other line a simple statement at its depth."""
        out: list[str] = []
        for line in lines:
            text = line.lstrip(" ")
            depth = (len(line) - len(text)) // 4
            if not text:
                out.append("")
            elif text.endswith(":") and text.split(" ", 1)[0] in _HEADERS:
                out += self.header(text, depth)
            elif text.startswith('"""') and text.endswith('"""') and len(text) > 6:
                out += self.docstring(text, depth)
            else:
                out += self.statement(text, depth)
        return out

    def docstring(self, text: str, depth: int) -> list[str]:
        """A one-line docstring at ``depth``, however long: black never wraps one."""

        def lay() -> list[str]:
            return [layout.docstring(text[3:-3], depth)]

        return self._lay("doc", text, depth, lay, _black(text, depth))

    def header(self, text: str, depth: int) -> list[str]:
        """A compound statement's header at ``depth``."""

        def wrap() -> list[str]:
            return black_format(nest(text + "\n    pass", depth)).splitlines()[depth:-1]

        return self._lay("head", text, depth, lambda: layout.header(text, depth), wrap)

    def function(self, fn: dict) -> list[str]:
        """A module-level function: name, params, one-line doc, body lines."""

        def lay() -> list[str]:
            head = f"def {fn['name']}({fn['params']}):"
            if len(head) > layout.LINE_LENGTH:
                raise layout.Unsupported("long def line")
            out = [head, layout.docstring(fn["doc"], 1)]
            for line in fn["body"]:
                stripped = line.lstrip(" ")
                out.extend(layout.statement(stripped, 1 + (len(line) - len(stripped)) // 4))
            return out

        def wrap() -> list[str]:
            body = "".join(f"    {line}\n" for line in fn["body"])
            return black_format(
                f'def {fn["name"]}({fn["params"]}):\n    """{fn["doc"]}"""\n{body}'
            ).splitlines()

        return self._lay("def", repr(fn), 0, lay, wrap)


_HEADERS = frozenset({"def", "class", "if", "elif", "else:", "for", "while", "with"})


def _black(text: str, depth: int) -> Callable[[], list[str]]:
    """Black's layout of the statement ``text`` at ``depth``, when asked for."""
    return lambda: black_format(nest(text, depth)).splitlines()[depth:]


def nest(text: str, depth: int) -> str:
    """``text`` as a statement ``depth`` function bodies deep, for black to format in place."""
    out = ""
    for d in range(depth):
        out += "    " * d + "def _():\n"
    return out + "".join("    " * depth + line + "\n" for line in text.split("\n"))


class Scope:
    """Names bound in one Python scope: ``fresh`` never returns one already bound or reserved.

    Collision-free by construction: every name a generated module binds at
    module level is reserved before any local is named, so no local, however
    the spec named it, can shadow a module, a helper or another local.
    """

    def __init__(self, reserved: set[str] | frozenset[str]):
        self.taken: set[str] = set(reserved)

    def fresh(self, base: str, first: int = 2) -> str:
        """``base`` if it is free, else ``base_<n>`` for the first free ``n`` from ``first``."""
        name, n = base, first
        while self._bound(name):
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name

    def _bound(self, name: str) -> bool:
        return name in self.taken or keyword.iskeyword(name) or name in _BUILTINS
