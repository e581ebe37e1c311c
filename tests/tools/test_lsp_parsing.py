"""The server's parse cache gives exactly the spec ``parse_text`` gives, a declaration at a time."""

from __future__ import annotations

import random

import pytest

from generator.diagnostics import SpecError
from generator.lang.parse import parse_text
from generator.sources import Source, normalize_newlines
from generator.tools.lsp.parsing import ParseCache
from tests.support import REPO
from tests.tools.test_fuzz import seeded_mutants

SPECS = sorted((REPO / "specs").glob("*.bcfg"))


def same(cache: ParseCache, name: str, text: str) -> None:
    text = normalize_newlines(text)  # as every Source's text is
    try:
        expected = parse_text(text, name)
    except SpecError as exc:
        with pytest.raises(SpecError) as got:
            cache.parse(Source.of(name, text))
        assert [d.format() for d in got.value.diagnostics] == [d.format() for d in exc.diagnostics]
        return
    assert cache.parse(Source.of(name, text)) == expected


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_every_spec_and_its_edits_parse_as_a_whole_parse_does(path):
    cache = ParseCache()
    name = f"specs/{path.name}"
    text = path.read_text()
    same(cache, name, text)
    rng = random.Random(path.name)
    lines = text.split("\n")
    for _ in range(12):  # edits as typing makes them: lines added, removed, changed, joined
        i = rng.randrange(len(lines))
        op = rng.choice(["add", "remove", "comment", "join", "indent"])
        if op == "add":
            lines.insert(i, "")
        elif op == "remove" and not lines[i].strip():
            del lines[i]
        elif op == "comment":
            lines.insert(i, "# a comment")
        elif op == "join" and i + 1 < len(lines) and not lines[i].lstrip().startswith("#"):
            lines[i : i + 2] = [lines[i] + " " + lines[i + 1].lstrip()]
        elif op == "indent":
            lines[i] = "  " + lines[i]
        same(cache, name, "\n".join(lines))


def test_declarations_that_share_a_line_and_errors():
    cache = ParseCache()
    text = "dtypes a = {input: quint8}  dtypes b = {input: qint8}\nalias q = nnq  # end\n"
    same(cache, "t.bcfg", text)
    same(cache, "t.bcfg", "\n" + text)
    same(cache, "t.bcfg", text.replace("qint8}", "qint8"))  # an error in the second declaration
    same(cache, "t.bcfg", text)


def test_the_fuzzers_mutants_parse_as_a_whole_parse_does():
    cache = ParseCache()
    for name, data in seeded_mutants(11, 150):
        same(cache, f"specs/{name}", data.decode("utf-8", "replace"))
