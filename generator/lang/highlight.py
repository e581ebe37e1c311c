"""Highlighting: one ordered table of token rules, made from the vocabulary, for every editor.

The TextMate grammar of the VS Code extension (``textmate_grammar``, written
to ``editors/vscode/syntaxes/bcfg.tmLanguage.json`` by ``python -m
generator.lang.highlight``) and the Pygments lexer (``pygments_lexer``) are
both built from ``RULES``, and every word in ``RULES`` comes from
``vocabulary``: a keyword, field, dtype or observation word added there is
highlighted everywhere, and the two highlighters cannot drift apart.

A rule is a regular expression that both Python's ``re`` and Oniguruma (the
engine of VS Code's TextMate) read the same way, and one scope per capture
group (or one for the whole match). Rules are tried in order at each token; the
first that matches wins, so ``key:`` comes before the keywords (``dtypes: ds``)
and a segment after a dot before the dtype names (``torch.float32``). No rule
spans lines: layout is free and strings end at the end of their line, so a
line can be highlighted alone. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from .vocabulary import (
    BOOLEANS,
    BUILTIN_ALIASES,
    BUILTIN_FUNCTIONS,
    DECLARATION_KEYWORDS,
    DTYPE_NAMES,
    FUSE_FLAGS,
    ITEM_KEYWORDS,
    OBSERVATIONS,
    OTHER_KEYWORDS,
)

SCOPE_SUFFIX = ".bcfg"
# A name as the lexer reads it, without ``${}`` holes (holes are highlighted on their own).
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_END = r"(?![A-Za-z0-9_])"  # the end of a word (\b would also end one before a ``$``)
_START = r"(?<![A-Za-z0-9_])"

# The name each declaration keyword introduces, as a scope.
DECLARED_NAME_SCOPES: dict[str, str] = {
    "alias": "entity.name.type.alias",
    "constraint": "entity.name.type.constraint",
    "dtypes": "entity.name.type.dtypes",
    "fuse": "entity.name.function.fuse",
    "group": "entity.name.function.group",
    "backend": "entity.name.namespace.backend",
    "quantizer": "entity.name.namespace.backend",  # a quantizer is named by its backend
}
# Built-in aliases that name a class rather than a module (``MatchAllNode``).
CLASS_ALIASES = tuple(
    a for a, path in BUILTIN_ALIASES.items() if path.rsplit(".", 1)[1][:1].isupper()
)


@dataclass(frozen=True)
class Rule:
    """A token rule: ``regex`` and a scope per capture group; None leaves a group unscoped."""

    regex: str
    scopes: tuple[str | None, ...]
    words: tuple[str, ...] = ()  # the vocabulary words the rule lists (for tests)

    @property
    def grouped(self) -> bool:
        return re.compile(self.regex).groups > 0


def words(ws: Iterable[str]) -> str:
    """An alternation of words, longest first so that no word's prefix wins."""
    return "|".join(re.escape(w) for w in sorted(set(ws), key=lambda w: (-len(w), w)))


def _word_rule(ws: Iterable[str], scope: str, after: str = "") -> Rule:
    listed = tuple(sorted(set(ws)))
    return Rule(rf"{_START}(?:{words(listed)}){_END}{after}", (scope,), listed)


def _rules() -> tuple[Rule, ...]:
    decls = tuple(k for k in DECLARATION_KEYWORDS if k != "import")
    assert set(decls) == set(DECLARED_NAME_SCOPES), "a declaration keyword without a name scope"
    item_words = ITEM_KEYWORDS + OTHER_KEYWORDS
    return (
        # `key:` in pattern bodies and records, before the keywords: `dtypes: ds`, `fuser: f`.
        Rule(rf"{_START}{NAME}(?=[ \t]*:)", ("variable.other.property",)),
        *(
            Rule(
                rf"{_START}({kw})([ \t]+)({NAME})",
                ("keyword.declaration", None, DECLARED_NAME_SCOPES[kw]),
                (kw,),
            )
            for kw in decls
        ),
        Rule(
            rf"{_START}(use)([ \t]+)({NAME})",
            ("keyword.control", None, "entity.name.function.group"),
            ("use",),
        ),
        Rule(rf"{_START}pattern(?=[ \t]*\[)", ("variable.language.pattern",), ("pattern",)),
        _word_rule(DECLARATION_KEYWORDS, "keyword.declaration"),
        _word_rule(item_words, "keyword.control"),
        Rule(
            rf"(\$\{{)({NAME})(\}})",
            (
                "punctuation.section.interpolation.begin",
                "variable.other.interpolated",
                "punctuation.section.interpolation.end",
            ),
        ),
        # A segment after a dot is a plain name, whatever it spells: torch.float32, aten.add.
        Rule(rf"(?<=\.){NAME}", ("variable.other",)),
        _word_rule(FUSE_FLAGS, "storage.modifier"),
        _word_rule(BOOLEANS, "constant.language.boolean"),
        _word_rule(DTYPE_NAMES, "support.type.dtype", r"(?![ \t]*\.)"),
        _word_rule(OBSERVATIONS, "support.constant.observation"),
        _word_rule(BUILTIN_FUNCTIONS, "support.function.builtin", r"(?=[ \t]*\()"),
        _word_rule(CLASS_ALIASES, "support.class"),
        _word_rule(BUILTIN_ALIASES, "support.module", r"(?=[ \t]*\.)"),
        # A name, or the rest of one after a ${hole}: Conv${n}d.
        Rule(rf"{NAME}|(?<=\}})[A-Za-z0-9_]+", ("variable.other",)),
        Rule(
            r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+",
            ("constant.numeric.float",),
        ),
        Rule(r"[0-9]+", ("constant.numeric.integer",)),
        Rule(r"\*\*|[-+*/]", ("keyword.operator.arithmetic",)),
        Rule(r"=", ("keyword.operator.assignment",)),
        Rule(r"\{", ("punctuation.section.braces.begin",)),
        Rule(r"\}", ("punctuation.section.braces.end",)),
        Rule(r"\(", ("punctuation.section.parens.begin",)),
        Rule(r"\)", ("punctuation.section.parens.end",)),
        Rule(r"\[", ("punctuation.section.brackets.begin",)),
        Rule(r"\]", ("punctuation.section.brackets.end",)),
        Rule(r",", ("punctuation.separator.comma",)),
        Rule(r":", ("punctuation.separator.key-value",)),
        Rule(r"\.", ("punctuation.accessor.dot",)),
        Rule(r"\S", ("invalid.illegal.character",)),
    )


RULES: tuple[Rule, ...] = _rules()

# Comments and strings come before every rule (a `#` or `"` starts one anywhere).
COMMENT = r"#.*$"
COMMENT_SCOPE = "comment.line.number-sign"
STRING_SCOPE = "string.quoted.double"
ESCAPE = r"\\."
ESCAPE_SCOPE = "constant.character.escape"

# The Pygments token type of each scope: the longest prefix listed wins.
PYGMENTS_TOKENS: dict[str, str] = {
    "comment": "Comment.Single",
    "string": "String.Double",
    "constant.character.escape": "String.Escape",
    "variable.other.property": "Name.Attribute",
    "keyword.declaration": "Keyword.Declaration",
    "keyword.control": "Keyword",
    "keyword.operator": "Operator",
    "entity.name.type": "Name.Class",
    "entity.name.function": "Name.Function",
    "entity.name.namespace": "Name.Namespace",
    "variable.language.pattern": "Name.Builtin.Pseudo",
    "punctuation.section.interpolation": "String.Interpol",
    "variable.other.interpolated": "Name.Variable",
    "variable.other": "Name",
    "storage.modifier": "Keyword.Pseudo",
    "constant.language.boolean": "Keyword.Constant",
    "support.type.dtype": "Keyword.Type",
    "support.constant.observation": "Name.Constant",
    "support.function.builtin": "Name.Builtin",
    "support.class": "Name.Builtin",
    "support.module": "Name.Namespace",
    "constant.numeric.float": "Number.Float",
    "constant.numeric.integer": "Number.Integer",
    "punctuation": "Punctuation",
    "invalid.illegal": "Error",
}


def pygments_token(scope: str | None) -> str:
    """The Pygments token type name of a scope (whitespace for an unscoped group)."""
    if scope is None:
        return "Text.Whitespace"
    best = max((p for p in PYGMENTS_TOKENS if scope == p or scope.startswith(p + ".")), key=len)
    return PYGMENTS_TOKENS[best]


def _scoped(scope: str) -> str:
    return scope + SCOPE_SUFFIX


def _textmate_rule(rule: Rule) -> dict[str, object]:
    if not rule.grouped:
        (scope,) = rule.scopes
        assert scope is not None
        return {"match": rule.regex, "name": _scoped(scope)}
    return {
        "match": rule.regex,
        "captures": {str(i): {"name": _scoped(s)} for i, s in enumerate(rule.scopes, start=1) if s},
    }


def textmate_grammar() -> dict[str, object]:
    """The TextMate grammar of bcfg (VS Code's ``contributes.grammars``)."""
    return {
        "$schema": "https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json",
        "name": "bcfg",
        "scopeName": "source.bcfg",
        "fileTypes": ["bcfg"],
        "comment": "Generated by `python -m generator.lang.highlight` from generator/lang/vocabulary.py; do not edit.",
        "patterns": [
            {"include": "#comment"},
            {"include": "#string"},
            *(_textmate_rule(r) for r in RULES),
        ],
        "repository": {
            "comment": {
                "match": r"(#).*$",
                "name": _scoped(COMMENT_SCOPE),
                "captures": {"1": {"name": _scoped("punctuation.definition.comment")}},
            },
            "string": {
                "name": _scoped(STRING_SCOPE),
                "begin": '"',
                "beginCaptures": {"0": {"name": _scoped("punctuation.definition.string.begin")}},
                "end": r'"|(?=$)',  # a string cannot span lines
                "endCaptures": {"0": {"name": _scoped("punctuation.definition.string.end")}},
                "patterns": [{"match": ESCAPE, "name": _scoped(ESCAPE_SCOPE)}],
            },
        },
    }


def textmate_json() -> str:
    """The grammar as the checked-in file holds it."""
    return json.dumps(textmate_grammar(), indent=2, ensure_ascii=False) + "\n"


if (
    __name__ == "__main__"
):  # python -m generator.lang.highlight > editors/vscode/syntaxes/bcfg.tmLanguage.json
    sys.stdout.write(textmate_json())
