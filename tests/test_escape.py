"""``escape``: one function per destination, each proven with the destination's own parser.

Hostile strings (``tests.hostile``) go through each function, then through a
real parser of where the text lands: Python's HTML parser for HTML text,
attributes and comments, GitHub's Markdown renderer for table cells, code
spans and fences. The text must come out exactly as ``visible`` shows it, with
no element, comment, cell or line of its own.
"""

from __future__ import annotations

import html as html_module
import json
import os
import re

from hypothesis import assume, given, settings

from generator.escape import (
    deep,
    html_attr,
    html_comment,
    html_text,
    json_text,
    md_code,
    md_fence,
    md_text,
    terminal,
    unicode_text,
    visible,
)
from tests.hostile import HOSTILE, MARKDOWN_TAGS, Cells, Tree, gfm, hidden, links_show_their_address

EXAMPLES = settings(max_examples=int(os.environ.get("BCFG_ESCAPE_EXAMPLES", "400")), deadline=None)


def test_visible_shows_what_hides_and_keeps_the_rest():
    assert (
        visible("a\nb\x1b[31m\u202e\x85\ud800\udcff") == "a\\nb\\x1b[31m\\u202e\\x85\\ud800\\udcff"
    )
    assert visible("plain 'quoted' \\ é 😀\u00a0") == "plain 'quoted' \\ é 😀\u00a0"
    assert visible(visible("\x07")) == "\\x07"  # escaped once, not again


@EXAMPLES
@given(HOSTILE)
def test_terminal_text_is_one_line_and_runs_nothing(s):
    out = terminal(s)
    assert not hidden(out) and "\n" not in out
    assert out == visible(s)


@EXAMPLES
@given(HOSTILE)
def test_html_text_and_attributes_are_text_only(s):
    page = f'<p title="{html_attr(s)}">{html_text(s)}</p><i></i>'
    tree = Tree(page)
    assert tree.tags == [("p", {"title": visible(s)}), ("i", {})]
    assert "".join(tree.text) == visible(s) and tree.comments == []


@EXAMPLES
@given(HOSTILE, HOSTILE)
def test_an_html_comment_holds_whatever_it_is_given(s, t):
    page = f"<!-- {html_comment(s)}{html_comment(t)} --><p>after</p>"
    tree = Tree(page)
    assert len(tree.comments) == 1 and tree.tags == [("p", {})], page
    assert "--" not in tree.comments[0].strip(" ") and "\n" not in page


@EXAMPLES
@given(HOSTILE, HOSTILE)
def test_markdown_table_cells_hold_their_text(s, t):
    table = (
        "| a | b | c |\n| --- | --- | --- |\n"
        f"| {md_text(s)} | {md_code(t)} | {md_text(t)}<br>{md_code(s)} |\n| x | y | z |\n"
    )
    cells = Cells(gfm(table))
    assert [len(r) for r in cells.rows] == [3, 3, 3], table
    assert cells.rows[1][0] == visible(s).strip() or cells.rows[1][0].strip() == visible(s).strip()
    assert cells.rows[1][1].strip() == visible(t).strip()
    assert cells.rows[2] == ["x", "y", "z"]
    assert cells.names() <= MARKDOWN_TAGS - {"details", "summary"}, cells.tags
    assert "img" not in cells.names()
    assert links_show_their_address(cells.tags, visible(s) + visible(t))


@EXAMPLES
@given(HOSTILE)
def test_markdown_text_starting_a_line_makes_no_block(s):
    assume(visible(s).strip(" "))
    html = gfm(f"{md_text(s)}\n\nend\n")
    tree = Tree(html)
    assert [t for t, _ in tree.tags if t != "a"] == ["p", "p"], html
    shown = "".join(tree.text).replace("\n", "").removesuffix("end")
    assert shown.strip(" ") == visible(s).strip(" ")


@EXAMPLES
@given(HOSTILE)
def test_a_fence_holds_every_line(s):
    text = s.replace("\r", "")
    html = gfm(md_fence(text, "bcfg") + "\nafter\n")
    tree = Tree(html)
    assert [t for t, _ in tree.tags] == ["pre", "code", "p"], html
    code = html_module.unescape(re.search(r"<code[^>]*>(.*?)</code>", html, re.DOTALL)[1])
    assert code == "".join(visible(line) + "\n" for line in text.split("\n"))


@EXAMPLES
@given(HOSTILE)
def test_json_is_valid_utf8_with_no_raw_hidden_character(s):
    out = json_text({"name": s, "list": [s, 1]})
    out.encode("utf-8")  # valid UTF-8, lone surrogates included
    assert not hidden(out.replace("\n", ""))
    assert json.loads(out) == {"name": unicode_text(s), "list": [unicode_text(s), 1]}


def test_unicode_text_only_touches_surrogates():
    assert unicode_text("caf\udce9 é\n") == "caf\\udce9 é\n"
    assert unicode_text("plain") == "plain"


def test_deep_escapes_every_string_of_data_but_keeps_enums_and_subclasses():
    from dataclasses import dataclass
    from enum import StrEnum

    class Kind(StrEnum):
        A = "a\n"

    @dataclass(frozen=True)
    class Item:
        name: str
        kind: Kind
        more: tuple[str, ...]

    out = deep({"k\n": [Item("x\n", Kind.A, ("y\x1b",))]}, terminal)
    assert out == {"k\\n": [Item("x\\n", Kind.A, ("y\\x1b",))]}
