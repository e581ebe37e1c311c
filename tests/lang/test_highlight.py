"""Highlighting: one rule table from the vocabulary, a Pygments lexer, a TextMate grammar.

The words every highlighter knows are the vocabulary's and the Lark grammar's
keywords are among them; the checked-in TextMate grammar is the generated one;
the Pygments lexer (found through its entry point) covers every spec in the
repository and every error-corpus input that parses without an error token, and
gives every token the class the compiler's own lexer says it has.
"""

from __future__ import annotations

import json
import re

import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, Token, string_to_tokentype

from generator.lang import highlight as hl
from generator.lang import vocabulary as v
from generator.resources import resource_path
from tests.lang import highlight_oracle as oracle
from tests.support import REPO

GRAMMAR_FILE = REPO / "editors" / "vscode" / "syntaxes" / "bcfg.tmLanguage.json"
CORPUS = oracle.corpus()


def _lark_keywords() -> set[str]:
    """The words the Lark grammar spells as literals: its keywords."""
    grammar = resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8")
    code = "\n".join(line.split("//", 1)[0] for line in grammar.splitlines())
    return {w for w in re.findall(r'"([^"\\]*)"', code) if re.fullmatch(r"[A-Za-z_]\w*", w)}


def test_the_lark_grammars_keywords_are_the_vocabularys():
    grammar = _lark_keywords()
    assert set(v.KEYWORDS) <= grammar, set(v.KEYWORDS) - grammar
    # The grammar also lexes two field words as keywords, so that they can be keys.
    assert grammar - set(v.KEYWORDS) <= set(v.FIELD_WORDS), grammar - set(v.KEYWORDS)


def _scope_words(patterns: list[dict], scope: str) -> set[str]:
    """The words of the alternations in the grammar's rules for ``scope``."""
    found: set[str] = set()
    for rule in patterns:
        names = [rule.get("name")] + [c["name"] for c in rule.get("captures", {}).values()]
        if f"{scope}.bcfg" not in names or "match" not in rule:
            continue
        for alternation in re.findall(r"\(\?:([^()]*)\)", rule["match"]):
            found |= {w.replace("\\", "") for w in alternation.split("|")}
        for group in re.findall(r"\(([A-Za-z_|]+)\)", rule["match"]):
            found |= set(group.split("|"))
    return found


@pytest.mark.parametrize(
    "scope, expected",
    [
        ("keyword.declaration", set(v.DECLARATION_KEYWORDS)),
        ("keyword.control", set(v.ITEM_KEYWORDS + v.OTHER_KEYWORDS)),
        ("support.type.dtype", set(v.DTYPE_NAMES)),
        ("support.constant.observation", set(v.OBSERVATIONS)),
        ("support.function.builtin", set(v.BUILTIN_FUNCTIONS)),
        ("storage.modifier", set(v.FUSE_FLAGS)),
        ("constant.language.boolean", set(v.BOOLEANS)),
        ("support.module", set(v.BUILTIN_ALIASES)),
    ],
)
def test_the_grammars_words_are_the_vocabularys(scope, expected):
    """Read back from the checked-in TextMate grammar, so a hand edit of it shows too."""
    patterns = json.loads(GRAMMAR_FILE.read_text(encoding="utf-8"))["patterns"]
    assert _scope_words(patterns, scope) == expected
    listed = set().union(*(r.words for r in hl.RULES if scope in r.scopes))
    assert listed == expected  # the rules the Pygments lexer is built from


def test_the_checked_in_textmate_grammar_is_generated():
    assert GRAMMAR_FILE.read_text(encoding="utf-8") == hl.textmate_json(), (
        "editors/vscode/syntaxes/bcfg.tmLanguage.json is out of date: run "
        "python -m generator.lang.highlight > editors/vscode/syntaxes/bcfg.tmLanguage.json"
    )


def test_every_scope_has_a_pygments_token():
    scopes = {s for r in hl.RULES for s in r.scopes if s}
    scopes |= {hl.COMMENT_SCOPE, hl.STRING_SCOPE, hl.ESCAPE_SCOPE}
    for scope in [*scopes, None]:  # each a standard type, with its CSS class (no made-up types)
        assert string_to_tokentype(hl.pygments_token(scope)) in STANDARD_TYPES, scope


# ------------------------------------------------------------------ Pygments


def _lexer():
    return get_lexer_by_name("bcfg", stripnl=False, ensurenl=False)


def test_the_lexer_is_found_through_its_entry_point():
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="pygments.lexers") if e.name == "bcfg"]
    assert ep.value == "generator.lang.pygments_lexer:BcfgLexer"
    assert type(_lexer()).__name__ == "BcfgLexer"
    assert type(get_lexer_for_filename("specs/x86.bcfg")).__name__ == "BcfgLexer"


@pytest.mark.parametrize("name, text", CORPUS, ids=[n for n, _ in CORPUS])
def test_no_error_token_and_every_character_covered(name, text):
    tokens = list(_lexer().get_tokens_unprocessed(text))
    assert [(i, s) for i, t, s in tokens if t in Token.Error] == []
    assert "".join(s for _, _, s in tokens) == text


def test_the_corpus_is_the_specs_and_the_error_cases_that_parse():
    names = [n for n, _ in CORPUS]
    assert {f"specs/{p.name}" for p in oracle.spec_paths()} <= set(names)
    assert sum(n.startswith("tests/errors/") for n in names) >= 30


def test_an_illegal_character_is_an_error_token():
    tokens = list(_lexer().get_tokens_unprocessed("dtypes d = {input: quint8 @}\n"))
    assert [s for _, t, s in tokens if t in Token.Error] == ["@"]


def test_html_of_a_spec_has_no_error_spans():
    html = highlight((REPO / "specs" / "common.bcfg").read_text(), _lexer(), HtmlFormatter())
    assert 'class="err"' not in html
    assert '<span class="kd">dtypes</span>' in html  # Keyword.Declaration


@pytest.mark.parametrize("name, text", CORPUS, ids=[n for n, _ in CORPUS])
def test_the_lexer_classifies_as_the_compilers_lexer_does(name, text):
    """Every token Lark reads gets the Pygments type of the oracle's scope, over exactly its text."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    by_offset = {i: (t, s) for i, t, s in _lexer().get_tokens_unprocessed(text)}
    checked = 0
    for tok in oracle.tokens(text):
        scope = oracle.expected_scope(tok)
        if scope is None:
            continue
        at = starts[tok.line - 1] + tok.column - 1
        assert at in by_offset, (tok, "no Pygments token starts here")
        ttype, value = by_offset[at]
        if tok.type == "STRING":  # the lexer splits strings at escapes
            assert ttype in Token.Literal.String, tok
            continue
        assert value == tok.text, tok
        assert ttype == string_to_tokentype(hl.pygments_token(scope)), (tok, scope, ttype)
        checked += 1
    assert checked > 0 or not text.strip()
