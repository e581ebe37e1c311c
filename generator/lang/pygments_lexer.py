"""The Pygments lexer for bcfg, so that ```` ```bcfg ```` blocks highlight in docs.

Registered under the ``pygments.lexers`` entry point (pyproject.toml), so
Pygments finds it by name (``bcfg``) or file name (``*.bcfg``) once bcfg is
installed; nothing in bcfg imports this module. Its rules are
``highlight.RULES``, the same table the VS Code grammar is made from.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pygments.lexer import RegexLexer, bygroups, default
from pygments.token import _TokenType, string_to_tokentype

from .highlight import (
    COMMENT,
    COMMENT_SCOPE,
    ESCAPE,
    ESCAPE_SCOPE,
    RULES,
    STRING_SCOPE,
    Rule,
    pygments_token,
)


def _token(scope: str | None) -> _TokenType:
    return string_to_tokentype(pygments_token(scope))


def _rule(rule: Rule) -> tuple[str, Any]:
    if rule.grouped:
        return rule.regex, bygroups(*(_token(s) for s in rule.scopes))
    return rule.regex, _token(rule.scopes[0])


class BcfgLexer(RegexLexer):
    """bcfg: compact specs of PyTorch quantization BackendConfigs."""

    name = "bcfg"
    aliases: ClassVar[list[str]] = ["bcfg"]
    filenames: ClassVar[list[str]] = ["*.bcfg"]
    mimetypes: ClassVar[list[str]] = ["text/x-bcfg"]

    tokens: ClassVar[dict[str, Any]] = {
        "root": [
            (r"\s+", _token(None)),
            (COMMENT, _token(COMMENT_SCOPE)),
            (r'"', _token(STRING_SCOPE), "string"),
            *(_rule(r) for r in RULES),
        ],
        "string": [
            (ESCAPE, _token(ESCAPE_SCOPE)),
            (r"\\", _token(STRING_SCOPE)),  # a backslash at the end of the line
            (r'[^"\\\n]+', _token(STRING_SCOPE)),
            (r'"', _token(STRING_SCOPE), "#pop"),
            default("#pop"),  # a string not closed on its line ends there
        ],
    }
