"""The built site in a real browser: Debian's headless Chromium, over the DevTools protocol.

The site is served on 127.0.0.1 (search runs in a web worker, which a file://
page may not start). Navigation must lead from the home page to a guide,
search must find a pattern and a command, a page with a spec must show it
highlighted, and nothing may be loaded from anywhere but the site.
Screenshots go to the test's temporary folder (``pytest --basetemp=DIR``
keeps them somewhere known).
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time

import pytest

from tests.browser import Browser, chromium

ABSENT = "Debian's chromium is not installed (apt-get install -y chromium; .ci/run installs it)"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(_Quiet, directory=str(site.root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()


@pytest.fixture(scope="module")
def browser(tmp_path_factory, served):
    if chromium() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{ABSENT}; in CI it must be: .ci/run installs it")
        pytest.skip(ABSENT)
    with Browser(tmp_path_factory.mktemp("chromium-profile"), width=1400, height=900) as b:
        b.call("Network.enable")
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("site-screenshots")


def until(b: Browser, expression: str, timeout: float = 20) -> object:
    """The value of ``expression`` once it is truthy (the page works asynchronously)."""
    deadline = time.monotonic() + timeout
    while True:
        value = b.js(expression)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


H1 = "document.querySelector('h1').firstChild.textContent"  # the title, without its permalink


def click(b: Browser, selector: str) -> None:
    assert b.js(f"(e => (e.click(), true))(document.querySelector({selector!r}))")


def test_navigation_leads_from_the_home_page_to_the_guides(browser, served, shots):
    b = browser
    b.open(served)
    assert b.js(H1) == "bcfg"
    tabs = b.js("[...document.querySelectorAll('.md-tabs__link')].map(a => a.textContent.trim())")
    assert tabs == [
        "Home",
        "Getting started",
        "Guides",
        "Reference",
        "Support matrix",
        "Contributing",
    ]
    b.screenshot(shots / "home.png")
    click(b, ".md-tabs__item:nth-child(3) .md-tabs__link")  # Guides
    b.wait_for("Page.loadEventFired")
    assert b.js("location.pathname") == "/guides/npu/"
    assert b.js(H1) == "Write a spec for your NPU (FX)"
    sidebar = b.js(
        "[...document.querySelectorAll('.md-sidebar--primary .md-nav__link')]"
        ".map(a => a.textContent.trim())"
    )
    for guide in ("Custom fused modules", "PT2E quantizers", "Why isn't my model quantized?"):
        assert guide in sidebar, guide
    click(b, ".md-sidebar--primary a[href$='../fused-modules/']")
    b.wait_for("Page.loadEventFired")
    assert b.js(H1) == "Custom fused modules"
    b.screenshot(shots / "guide.png")


def search(b: Browser, served: str, query: str) -> list[str]:
    """The pages the site's search lists for ``query``, as paths."""
    b.open(served)
    b.js("document.querySelector('.md-search__input').focus()")
    b.call("Input.insertText", text=query)
    found = until(
        b,
        "[...document.querySelectorAll('.md-search-result__item > .md-search-result__link')]"
        ".map(a => new URL(a.href).pathname)",
    )
    assert isinstance(found, list)
    return found


def test_search_finds_a_pattern_and_a_command(browser, served, shots):
    b = browser
    found = search(b, served, "ConvReLU2d")
    assert "/getting-started/tour/" in found, found
    found = search(
        b, served, "LinearLeakyReLU"
    )  # onednn's: its page, the matrix, explain's example
    assert {"/matrix/backends/onednn/", "/matrix/", "/guides/explain/"} <= set(found), found
    b.screenshot(shots / "search-pattern.png")
    found = search(b, served, "exit-code")
    assert "/reference/commands/" in found, found
    found = search(b, served, "bcfg explain")
    assert "/guides/explain/" in found, found
    b.screenshot(shots / "search-command.png")


def test_the_matrix_page_never_breaks_an_identifier_inside_a_word(browser, served, shots):
    """Thirteen columns at 1400 pixels: an identifier such as torch.adaptive_avg_pool1d stays
    on one line (Material would break code anywhere); the table scrolls sideways instead."""
    b = browser
    b.open(served + "matrix/")
    until(b, "document.querySelector('.md-typeset table') !== null")
    broken = b.js(
        "[...document.querySelectorAll('.md-typeset table code')]"
        ".filter(c => !/\\s/.test(c.textContent) && c.getClientRects().length > 1)"
        ".map(c => c.textContent)"
    )
    checked = b.js(
        "[...document.querySelectorAll('.md-typeset table code')]"
        ".filter(c => !/\\s/.test(c.textContent)).length"
    )
    assert checked > 100 and broken == [], broken[:10]
    headers = b.js(
        "[...document.querySelectorAll('.md-typeset table th')].filter(th => {"
        " const r = document.createRange(); r.selectNodeContents(th);"
        " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })"
        ".map(th => th.textContent)"
    )
    assert headers == [], headers  # a column's name and flow on one line
    assert b.js(  # the matrix (the backends' table before it fits: issue 53.11)
        "[...document.querySelectorAll('.md-typeset__scrollwrap')]"
        ".some(w => w.scrollWidth > w.clientWidth)"
    )
    b.screenshot(shots / "matrix-page.png")


def test_the_matrix_navigation_shows_the_examples_apart(browser, served, shots):
    """The support matrix's sidebar: the backends, then the example (my_backend) under a
    section of its own, both on screen once scrolled to."""
    b = browser
    b.open(served + "matrix/")
    sections = b.js(  # the sections on screen, with their titles and pages
        "[...document.querySelectorAll('.md-sidebar--primary .md-nav__item--section')]"
        ".filter(s => s.getBoundingClientRect().height > 0)"
        ".map(s => [s.querySelector(':scope > nav > .md-nav__title').textContent.trim(),"
        " [...s.querySelectorAll('a')].map(a => a.textContent.trim())])"
    )
    titles = [title for title, _ in sections]
    assert titles == ["Support matrix", "Backends", "Examples"], sections
    backends, examples = (links for _, links in sections[1:])
    assert examples == ["my_backend"] and "my_backend" not in backends
    assert "x86_inductor (PT2E only)" in backends
    b.js(
        "document.querySelector('.md-sidebar--primary a[href$=\"backends/my_backend/\"]')"
        ".scrollIntoView({block: 'center'})"
    )
    shown = b.js(
        "[...document.querySelectorAll('.md-sidebar--primary .md-nav__item--section > label')]"
        ".map(l => (r => r.height > 0 && r.top >= 0 && r.bottom <= innerHeight)"
        "(l.getBoundingClientRect()))"
    )
    assert shown[-1] is True, shown  # the Examples heading is visible beside its page
    b.screenshot(shots / "matrix-navigation.png")


def test_a_spec_renders_highlighted(browser, served, shots):
    b = browser
    b.open(served + "getting-started/tour/")
    colours = b.js(
        "(() => { const code = document.querySelector('.language-bcfg code');"
        " const colour = s => getComputedStyle(code.querySelector(s)).color;"
        " return {keyword: colour('.kd'), name: colour('.n'), comment: colour('.c1'),"
        " text: getComputedStyle(code).color}; })()"
    )
    assert len({colours["keyword"], colours["comment"], colours["text"]}) == 3, colours
    assert b.js("document.querySelector('.language-bcfg code').textContent").startswith(
        "# The example from BackendConfig's docstring"
    )
    b.js("document.querySelector('.language-bcfg').scrollIntoView()")
    png = b.screenshot(shots / "highlighted-spec.png")
    assert png.stat().st_size > 10_000


def test_a_link_to_an_error_opens_its_example(browser, served, shots):
    b = browser
    b.open(served + "reference/language/#error-fused_without_fuser")
    opened = until(
        b,
        "[...document.querySelectorAll('details[open]')].map(d => d.querySelector('summary').textContent)",
    )
    assert opened == ["A fused module without a fuser method"], opened
    text = b.js("document.querySelector('details[open]').textContent")
    assert "error: 'fused: torch.ao.nn.intrinsic.ConvReLU2d' without a fuser" in text
    b.screenshot(shots / "error-example.png")


def test_the_site_loads_nothing_but_itself(browser, served):
    b = browser
    for path in ("", "getting-started/tour/", "matrix/explore/", "reference/language/"):
        b.open(served + path)
        until(b, "document.readyState === 'complete'")
        requests = {e["request"]["url"] for e in b.events("Network.requestWillBeSent")}
        assert requests and all(u.startswith(served) or u.startswith("data:") for u in requests), (
            path,
            sorted(u for u in requests if not u.startswith(served)),
        )


# What a newcomer comes to do (the "Done when"), and the page the search must offer.
TASKS = {
    "NPU": "/guides/npu/",  # write a spec for my accelerator
    "fused module": "/guides/fused-modules/",
    "PT2E quantizer": "/guides/pt2e/",
    "pull request": "/guides/reviewing/",
    "not quantized": "/guides/not-quantized/",
}


@pytest.mark.parametrize("query", TASKS)
def test_search_leads_a_newcomer_to_the_guide(browser, served, query):
    found = search(browser, served, query)
    assert TASKS[query] in found[:5], found


def test_the_wide_tables_fit_at_1280_pixels(browser, served, shots):
    """At 1,280 pixels the backends' table and the PT2E key table scrolled sideways (the key
    table's meaning column cut off, issue 53.11): those pages give the tables the table of
    contents' width, and the backends' table is narrower. The matrix itself (a column per
    backend) still scrolls, by design, with its pattern column sticky."""
    b = browser
    b.call(
        "Emulation.setDeviceMetricsOverride",
        width=1280,
        height=900,
        deviceScaleFactor=1,
        mobile=False,
    )
    try:
        overflowing = (
            "[...document.querySelectorAll('.md-typeset__scrollwrap')]"
            ".filter(w => w.scrollWidth > w.clientWidth + 1)"
            ".map(w => w.querySelector('th').textContent.trim())"
        )
        b.open(served + "reference/pt2e/")
        until(b, "document.querySelector('.md-typeset table') !== null")
        assert b.js(overflowing) == []
        b.screenshot(shots / "pt2e-keys-1280.png")
        b.open(served + "matrix/")
        until(b, "document.querySelector('.md-typeset table') !== null")
        assert b.js(overflowing) == ["pattern"]  # the matrix, not the backends' table
        b.screenshot(shots / "matrix-1280.png")
    finally:
        b.call("Emulation.clearDeviceMetricsOverride")
