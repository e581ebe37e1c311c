"""The parser builds the syntax model as it reduces, and keeps no state between parses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.diagnostics import SpecError
from generator.lang.parse import parse_text
from generator.lang.vocabulary import quote
from tests.hostile import HOSTILE
from tests.support import REPO


def test_parser_builds_the_model_lark_trees_describe():
    """``parse`` builds model nodes as it reduces; Lark's own trees must agree, spans included.

    The reference parses with Lark's tree builder (its own position tracking,
    child filtering and inlining) and converts each tree node with the same
    builders, so the reduction callbacks' filtering, splicing and span logic
    is checked against Lark's.
    """
    from lark import Lark, Transformer, v_args

    from generator.lang import parse
    from generator.lang import syntax as m
    from generator.resources import resource_path

    plain = Lark(
        resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
    )

    @v_args(meta=True)
    class Reference(Transformer):
        def __init__(self, file: str):
            super().__init__()
            self.file = file

        def __default__(self, data, children, meta):
            span = (
                m.Span(self.file, 1, 1, 1, 1)
                if meta.empty
                else m.Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)
            )
            return parse._BUILDERS[data](span, *children)

    texts = [
        (p.name, p.read_text(encoding="utf-8")) for p in sorted((REPO / "specs").glob("*.bcfg"))
    ]
    texts.append(("edge.bcfg", "fuse f((a, (b, c)), _) eval_only = X(a, Y(b))\n"))
    for name, text in texts:
        actual = parse.parse_text(text, name).decls
        token = parse._current.set(parse._State(name))  # the file the builders name in spans
        try:
            expected = Reference(name).transform(plain.parse(text))
        finally:
            parse._current.reset(token)
        assert list(actual) == list(expected), name


# Names that merely start with a keyword are names. The keyword terminals
# `dtypes`, `fuser` and `pattern` once had a higher priority than NAME, so the
# lexer split `pattern_ds` into `pattern` + `_ds` wherever both could follow.
def test_names_that_start_with_a_keyword_are_names():
    from generator.lang import syntax as m
    from generator.lang.parse import parse_text

    def names(text: str) -> set[str]:
        return {n.text for n in m.walk(parse_text(text, "k.bcfg")) if isinstance(n, m.DottedName)}

    used = (
        "dtypes pattern_ds = {input: quint8}\nbackend b { pattern nn.ReLU { dtypes: pattern_ds } }"
    )
    assert "pattern_ds" in names(used)
    (decl,) = parse_text("dtypes d = {dtypes_x: quint8, fuser_y: qint8}", "k.bcfg").decls
    assert isinstance(decl, m.DTypesDecl) and isinstance(decl.value, m.Record)
    assert [e.key for e in decl.value.entries] == ["dtypes_x", "fuser_y"]
    loop_text = "backend b { for patterns in [nn.ReLU] { pattern patterns { dtypes: d } } }"
    (backend,) = parse_text(loop_text, "k.bcfg").decls
    assert isinstance(backend, m.BackendDecl)
    (loop,) = backend.body
    assert isinstance(loop, m.ForItem) and loop.targets == ("patterns",)
    (item,) = loop.body
    assert isinstance(item, m.PatternItem) and isinstance(item.head, m.DottedName)
    assert item.head.text == "patterns"
    assert {"fuser_x", "dtypes_all", "patterns_of"} <= names(
        "backend b { pattern fuser_x { dtypes: dtypes_all  fuser: patterns_of } }"
    )


def test_keywords_stay_keywords_where_a_name_could_follow():
    from generator.lang import syntax as m
    from generator.lang.parse import parse_text

    text = "backend b { pattern nn.ReLU { dtypes: d  fuser: f  root_node: pattern[1] } }"
    (backend,) = parse_text(text, "k.bcfg").decls
    assert isinstance(backend, m.BackendDecl)
    (item,) = backend.body
    assert isinstance(item, m.PatternItem)
    assert [f.name for f in item.fields] == ["dtypes", "fuser", "root_node"]
    getter = item.fields[2].value
    assert isinstance(getter, m.Index) and isinstance(getter.target, m.PatternRef)


def test_the_keyword_fix_changes_no_valid_parse():
    """Every spec and error-corpus input that parsed with the old keyword priorities parses to
    the same tokens and trees with the new grammar."""
    from lark import Lark

    from generator.resources import resource_path

    new_text = resource_path("grammar", "bcfg.lark").read_text(encoding="utf-8")
    old_text = new_text
    for kw in ("DTYPES_KW", "FUSER_KW", "PATTERN_KW"):
        assert f"{kw}: " in new_text
        old_text = old_text.replace(f"{kw}: ", f"{kw}.2: ")
    old = Lark(old_text, parser="lalr", maybe_placeholders=False)
    new = Lark(new_text, parser="lalr", maybe_placeholders=False)
    files = sorted((REPO / "specs").glob("*.bcfg")) + sorted(
        (REPO / "tests" / "errors").rglob("*.bcfg")
    )
    compared = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError:
            continue
        try:
            before = old.parse(text)
        except Exception:
            continue
        after = new.parse(text)
        assert before == after, path
        assert [(t.type, str(t)) for t in before.scan_values(lambda _: True)] == [
            (t.type, str(t)) for t in after.scan_values(lambda _: True)
        ], path
        compared += 1
    assert compared >= 50


# ------------------------------------------------------------------ strings


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=12) | HOSTILE)
def test_any_string_round_trips_or_is_an_error_at_its_escape(text):
    """What ``quote`` writes parses back to the same text; half of a surrogate pair, which no
    text can hold, is an error located at its escape, never an internal error."""
    source = f"backend b {quote(text)} {{\n}}\n"
    surrogate = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    try:
        spec = parse_text(source, "s.bcfg")
    except SpecError as exc:
        (d,) = exc.diagnostics
        assert surrogate is not None, d.message
        escape = repr(surrogate)[1:-1]
        assert d.message == f"'{escape}' is half of a UTF-16 surrogate pair, not a character"
        assert source[d.span.column - 1 : d.span.end_column - 1] == escape
        return
    assert surrogate is None and spec.decls[0].backend_name == text


def _mutants(text: str, n: int, seed: int) -> list[str]:
    """``n`` texts with one character deleted, doubled or replaced, at random places."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        i = rng.randrange(len(text))
        how = rng.choice(("delete", "double", "replace"))
        if how == "delete":
            out.append(text[:i] + text[i + 1 :])
        elif how == "double":
            out.append(text[: i + 1] + text[i:])
        else:
            out.append(text[:i] + rng.choice('{}()[],:.="#x1 \n') + text[i + 1 :])
    return out


def test_the_lexer_is_larks_own_token_for_token():
    """``parse_text`` lexes with its own loop over Lark's per-state lexers; Lark's contextual
    lexer must give the same model, spans, comments and errors, on every spec and on
    hundreds of broken variants of them."""
    from generator.diagnostics import SpecError
    from generator.lang import parse

    reference = parse.make_lark(saved=False)
    parse._install_callbacks(reference)  # Lark's own lexer: no _install_lexer
    assert type(parse._parser().parser.lexer) is parse._FastLexer

    def outcome(parser, text):
        try:
            return parse.parse_with(parser, text, "t.bcfg")
        except SpecError as exc:
            return [(str(d.span), d.message, d.hint) for d in exc.diagnostics]

    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "specs").glob("*.bcfg"))]
    errors = 0
    for seed, text in enumerate(texts):
        for variant in [text, *_mutants(text, 40, seed)]:
            ours = outcome(parse._parser(), variant)
            assert ours == outcome(reference, variant)
            errors += isinstance(ours, list)
    assert errors > 100  # the variants reached the error paths


def test_the_shipped_analysis_is_what_lark_makes_now(tmp_path):
    """grammar/bcfg.lark.analysis: ``python -m generator.lang.analysis`` after a grammar edit."""
    from generator.lang import parse
    from generator.resources import resource_path

    grammar = resource_path("grammar", "bcfg.lark")
    key = parse.analysis_key(grammar.read_bytes())
    fresh = tmp_path / "analysis"
    parse.save_analysis(parse.make_lark(saved=False), fresh, key)
    shipped = grammar.parent / parse.SHIPPED_ANALYSIS
    assert shipped.read_bytes() == fresh.read_bytes(), "python -m generator.lang.analysis"


def test_a_saved_analysis_that_does_not_fit_is_made_again(tmp_path, monkeypatch):
    from generator.lang import parse

    monkeypatch.setenv("BCFG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(parse, "_shipped_analysis", lambda: None)
    parse.make_lark()
    (saved,) = (tmp_path / "lark").glob("*.lark")
    saved.write_bytes(b"another key\n" + saved.read_bytes().split(b"\n", 1)[1])
    made = []
    real = parse.save_analysis
    monkeypatch.setattr(parse, "save_analysis", lambda *a: made.append(a) or real(*a))
    parser = parse.make_lark()
    assert made and saved.read_bytes().split(b"\n", 1)[0] == parse.analysis_key(
        (REPO / "grammar" / "bcfg.lark").read_bytes()
    )
    assert parser.parse("backend b {}")


def test_brackets_nested_too_deep_are_the_error_whatever_comes_first():
    """The lexer counts brackets as it goes; a text that fails earlier for another reason (a
    syntax error, a bad string) still reports the nesting, as a scan before parsing did."""
    from generator.diagnostics import SpecError
    from generator.lang import parse

    deep = "dtypes d = " + "(" * 40 + "1" + ")" * 40 + "\n"
    for before in ("", "backend b {\n  pattern 1 +\n}\n", 'import "\\q"\n'):
        text = before + deep
        with pytest.raises(SpecError) as exc:
            parse.parse_text(text, "t.bcfg")
        (d,) = exc.value.diagnostics
        assert d.message == f"brackets are nested more than {parse.MAX_NESTING} deep here"
        assert (d.span.line, d.span.column) == (text.count("\n"), 12 + parse.MAX_NESTING)
