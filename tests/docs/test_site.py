"""The documentation site, built with ``mkdocs build --strict``: complete, and true to bcfg.

The build itself fails on a broken link, a missing page or anchor, a marker the
hooks do not know and a command without its section (shown here by breaking a
copy of the pages). The built pages are then checked against bcfg: every
command and option, every case of the error corpus (once each), every word of
the language, the generated support matrix as ``bcfg generate`` wrote it, and
nothing loaded from anywhere but the site.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from generator import cli
from generator.infra.write import DOCS as OWNED_DOCS
from generator.lang import vocabulary as v
from tests.docs.conftest import require_mkdocs
from tests.errors import cases, expected_path
from tests.support import REPO


def text_of(page: Path) -> str:
    """A built page's text, tags dropped and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def pages(site) -> list[Path]:
    return sorted(site.root.rglob("*.html"))


def test_the_site_builds_strictly_without_a_warning(site):
    assert "WARNING" not in site.log, site.log
    print(f"mkdocs build --strict: {site.seconds:.1f} s")
    for page in (
        "index.html",
        "getting-started/install/index.html",
        "getting-started/tour/index.html",
        "guides/fused-modules/index.html",
        "guides/pt2e/index.html",
        "guides/not-quantized/index.html",
        "guides/reviewing/index.html",
        "reference/language/index.html",
        "reference/commands/index.html",
        "matrix/index.html",
        "contributing/architecture/index.html",
    ):
        assert (site.root / page).is_file(), page


def _broken_build(tmp_path: Path, edit) -> subprocess.CompletedProcess[str]:
    """Build a copy of the pages after ``edit(docs_copy)``, with the real config and hooks."""
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs)
    edit(docs)
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {REPO / 'mkdocs.yml'}\ndocs_dir: {docs}\nhooks:\n  - {REPO / 'docs' / 'hooks.py'}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config), "-d", str(tmp_path / "out")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_broken_link_or_anchor_or_a_missing_page_fails_the_build(tmp_path):
    require_mkdocs()

    def edit(docs: Path) -> None:
        page = docs / "guides" / "npu.md"
        page.write_text(
            page.read_text()
            + "\n[gone](no-such-page.md) and [lost](../getting-started/tour.md#no-such-anchor)\n"
        )
        (docs / "reference" / "equivalence.md").unlink()  # the nav and two pages name it

    done = _broken_build(tmp_path, edit)
    log = done.stdout + done.stderr
    assert done.returncode != 0
    assert "'no-such-page.md'" in log and "#no-such-anchor" in log, log
    assert "'reference/equivalence.md' is included in the 'nav'" in log, log
    assert "warnings in strict mode" in log, log


def test_a_command_without_its_section_or_an_unknown_marker_fails_the_build(tmp_path):
    require_mkdocs()

    def drop_diff(docs: Path) -> None:
        page = docs / "reference" / "commands.md"
        page.write_text(page.read_text().replace("<!-- bcfg:command diff -->\n", ""))

    done = _broken_build(tmp_path / "a", drop_diff)
    assert done.returncode != 0
    assert "no <!-- bcfg:command NAME --> for diff" in done.stdout + done.stderr

    def unknown_case(docs: Path) -> None:
        page = docs / "reference" / "language.md"
        page.write_text(page.read_text() + "\n<!-- bcfg:error no_such_case -->\n")

    done = _broken_build(tmp_path / "b", unknown_case)
    assert done.returncode != 0
    assert "no case tests/errors/no_such_case" in done.stdout + done.stderr


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_command_reference_has_every_command_and_option(site):
    page = (site.root / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    sections = re.split(r'<h2 id="', page)
    by_id = {s.split('"', 1)[0]: html.unescape(re.sub(r"<[^>]+>", "", s)) for s in sections[1:]}
    assert [c.name for c in cli.COMMANDS] == [
        i.removeprefix("bcfg-") for i in by_id if i.startswith("bcfg-")
    ]
    for name, parser in _subparsers().items():
        text = by_id[f"bcfg-{name}"]
        command = next(c for c in cli.COMMANDS if c.name == name)
        assert command.help[1:] in text, name
        for action in parser._actions:
            if action.dest in ("help", "verbosity", "output_format"):
                continue
            for option in action.option_strings:
                assert option in text, (name, option)
            if action.metavar:
                assert action.metavar in text, (name, action.metavar)
            if action.help:
                assert " ".join(action.help.split()) in " ".join(text.split()), (name, action.dest)
    common = by_id["options-every-command-takes"]
    for option in ("-q", "--quiet", "-v", "--verbose", "--output-format", "--version"):
        assert option in common, option


def test_every_case_of_the_error_corpus_is_shown_once_as_it_is_pinned(site):
    shown: dict[str, list[Path]] = {}
    for page in pages(site):
        for name in re.findall(r'id="error-([A-Za-z0-9_]+)"', page.read_text(encoding="utf-8")):
            shown.setdefault(name, []).append(page)
    missing = sorted(set(cases()) - set(shown))
    assert not missing, (
        f"error-corpus cases no page shows: {missing}; add <!-- bcfg:error NAME --> to the "
        "reference page of the construct (docs/reference/*.md)"
    )
    assert {n: len(p) for n, p in shown.items() if len(p) > 1} == {}
    assert set(shown) <= set(cases())
    for name, (page,) in shown.items():
        text = text_of(page)
        for line in expected_path(name).read_text(encoding="utf-8").splitlines():
            assert line.rstrip() in text, (name, line)


def _code(page: Path) -> str:
    source = page.read_text(encoding="utf-8")
    return html.unescape(
        " ".join(re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<code>(.*?)</code>", source, re.S))
    )


def test_the_language_reference_says_every_word_of_the_language(site):
    reference = site.root / "reference"
    code = _code(reference / "language" / "index.html") + _code(reference / "pt2e" / "index.html")
    words = {
        *v.KEYWORDS,
        *v.BUILTIN_FUNCTIONS,
        *v.BOOLEANS,
        *v.FIELD_WORDS,
        *v.DTYPE_KEY_WORDS,
        *(w for pair in v.CONSTRAINT_FIELDS for w in pair),
        *v.FUSE_FLAGS,
        *v.OBSERVATION_WORDS,
        *v.OBSERVATION_WORDS.values(),
        *v.BUILTIN_ALIASES,
        *v.DTYPE_NAMES,
        *v.PT2E_KEYS,
        *v.PT2E_MATCH_WORDS,
        *v.PT2E_SKIP_HOOKS,
        *v.QUANTIZER_FIELDS,
        *v.QUANTIZER_OUTPUTS,
    }
    tokens = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    assert sorted(words - tokens) == []


def test_the_support_matrix_is_the_one_bcfg_generate_wrote(site, pt2e_only):
    docs = REPO / "docs"
    generated = OWNED_DOCS.files(docs)
    assert (site.root / "matrix" / "explorer.html").read_bytes() == (
        docs / "index.html"
    ).read_bytes()
    overview = text_of(site.root / "matrix" / "index.html")
    backends = [p.stem for p in generated if p.parent.name == "backends"]
    assert backends
    for name in backends:
        assert (site.root / "matrix" / "backends" / name / "index.html").is_file(), name
        assert name in overview
    nav = (site.root / "matrix" / "explore" / "index.html").read_text(encoding="utf-8")
    for name in backends:  # the navigation lists every backend's page, by its name
        assert f'href="../backends/{name}/"' in nav, name
    # PT2E-only targets are marked as such there; FX backends are not.
    titles = re.findall(r'href="\.\./backends/(\w+)/"[^>]*>\s*<span[^>]*>\s*([^<]*?)\s*<', nav)
    marked = sorted(name for name, title in titles if title.endswith("(PT2E only)"))
    assert marked == pt2e_only, titles
    assert 'src="../explorer.html"' in nav
    row = "| `nn.Hardswish` |"  # a row of the generated Markdown matrix, as a table row
    assert row in (docs / "README.md").read_text(encoding="utf-8")
    assert "<td><code>nn.Hardswish</code></td>" in (site.root / "matrix" / "index.html").read_text(
        encoding="utf-8"
    )


def nav_sections(page: str) -> dict[str, list[str]]:
    """The sections of a built page's navigation, in their order: for each, by its title, the
    links it lists (those of the sections inside it too)."""
    sections = {}
    opening = r'<nav class="md-nav"[^>]*aria-labelledby[^>]*>\s*<label class="md-nav__title"'
    for section in re.finditer(opening + r"[^>]*>(.*?)</label>", page, re.S):
        title = re.sub(r"<[^>]+>|\s+", " ", section.group(1)).strip()
        body = page[section.end() :]
        depth, end = 0, len(body)
        for tag in re.finditer(r'<nav class="md-nav"|</nav>', body):  # its own </nav>
            depth += 1 if tag.group().startswith("<nav") else -1
            if depth < 0:
                end = tag.start()
                break
        sections[title] = re.findall(r'<a href="([^"]+)" class="md-nav__link', body[:end])
    return sections


def test_the_examples_are_listed_apart_from_the_backends(site):
    """[tool.bcfg] examples (the toy my_backend): under "Examples" in the support matrix's
    navigation, after the backends and not among them; every page of the matrix is in one."""
    from generator.config import find_project

    examples = find_project(REPO).examples
    assert examples, "pyproject.toml names no example"
    sections = nav_sections((site.root / "matrix" / "explore" / "index.html").read_text("utf-8"))
    backends, shown = sections["Backends"], sections["Examples"]
    assert shown == [f"../backends/{name}/" for name in examples]
    assert backends and not set(backends) & set(shown)
    pages = [p.stem for p in OWNED_DOCS.files(REPO / "docs") if p.parent.name == "backends"]
    assert sorted(backends + shown) == sorted(f"../backends/{name}/" for name in pages)
    titles = list(sections)
    assert titles.index("Examples") == titles.index("Backends") + 1  # right after them
    assert set(shown) <= set(sections["Support matrix"])  # in the support matrix's section


def test_specs_are_highlighted_by_bcfgs_own_lexer(site):
    tour = (site.root / "getting-started" / "tour" / "index.html").read_text(encoding="utf-8")
    assert '<span class="kd">backend</span>' in tour
    assert '<span class="k">pattern</span>' in tour
    assert '<span class="nb">sequential</span>' in tour
    assert '<span class="kt">quint8</span>' in tour


LOADS = re.compile(
    r"<(?:script|img|iframe|source|audio|video)\b[^>]*\bsrc=\"([^\"]+)\"|<link\b[^>]*\bhref=\"([^\"]+)\""
)


def test_the_site_loads_nothing_from_elsewhere(site):
    loaded = set()
    for page in pages(site):
        for src, href in LOADS.findall(page.read_text(encoding="utf-8")):
            loaded.add(src or href)
    assert loaded
    external = sorted(u for u in loaded if re.match(r"[a-z]+:|//", u))
    assert external == []
    for css in site.root.rglob("*.css"):
        assert not re.search(r"url\(['\"]?(?:https?:)?//", css.read_text(encoding="utf-8")), css
