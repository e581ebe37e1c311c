"""docs/index.html in a real browser: Debian's headless Chromium, over the DevTools protocol.

The page must show every backend and every pattern, its search and filters
must change what is shown, its detail view must show every field, and it must
load nothing but itself. Screenshots are saved in the test's temporary folder
(``pytest --basetemp=DIR`` keeps them somewhere known).
"""

from __future__ import annotations

import os

import pytest

from generator.emit import words
from generator.lang.vocabulary import FIELDS
from tests.browser import Browser, chromium
from tests.support import REPO

EXAMPLES = ["my_backend"]  # [tool.bcfg] examples: the last columns
ABSENT = "Debian's chromium is not installed (apt-get install -y chromium; .ci/run installs it)"

PAGE = REPO / "docs" / "index.html"

VISIBLE_ROWS = "[...document.querySelectorAll('#matrix tbody tr')].filter(r => !r.hidden)"
VISIBLE_PATTERNS = f"{VISIBLE_ROWS}.map(r => r.querySelector('th code').textContent)"
VISIBLE_BACKENDS = (
    "[...document.querySelectorAll('#matrix thead th[data-b]')].filter(t => !t.hidden)"
    ".map(t => t.dataset.b)"
)


def click(b: Browser, selector: str) -> None:
    assert b.js(f"(e => (e.click(), true))(document.querySelector({selector!r}))")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if chromium() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{ABSENT}; in CI it must be: .ci/run installs it")
        pytest.skip(ABSENT)
    with Browser(tmp_path_factory.mktemp("chromium-profile")) as b:
        b.call("Network.enable")
        b.open(PAGE.as_uri())
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


def reset(b: Browser) -> None:
    b.open(PAGE.as_uri())


def test_the_matrix_shows_every_backend_and_every_pattern(browser, every_backend, pt2e_only, shots):
    b = browser
    resolved = every_backend  # the FX backends, then the PT2E-only targets
    assert b.js("document.compatMode") == "CSS1Compat"  # the leading comment keeps standards mode
    fx = sorted(n for n in resolved if n not in pt2e_only + EXAMPLES)
    assert b.js(VISIBLE_BACKENDS) == fx + pt2e_only + EXAMPLES  # PT2E-only targets after FX's
    patterns = {words.config_pattern(c) for backend in resolved.values() for c in backend.configs}
    shown = b.js(VISIBLE_PATTERNS)
    assert len(shown) == len(set(shown)) and set(shown) == patterns
    assert b.js("document.getElementById('count').textContent") == (
        f"{len(patterns)} of {len(patterns)} patterns"
    )
    for name, backend in resolved.items():
        cells = b.js(
            f"[...document.querySelectorAll('#matrix td[data-b=\"{name}\"]:not(.none)')]"
            ".map(td => td.closest('tr').querySelector('th code').textContent)"
        )
        # one row a pattern: a pattern's variants (Cortex-M's given: layouts) share it
        assert sorted(cells) == sorted({words.config_pattern(c) for c in backend.configs}), name
    png = b.screenshot(shots / "matrix.png")
    assert png.stat().st_size > 10_000


def test_the_header_row_and_pattern_column_stay_in_place_when_scrolling(browser):
    b = browser
    reset(b)
    before = b.js("document.querySelector('#matrix thead th[data-b]').getBoundingClientRect().top")
    first = b.js("document.querySelector('#matrix tbody th').getBoundingClientRect().left")
    b.js("(s => { s.scrollTop = 3000; s.scrollLeft = 600; })(document.getElementById('scroller'))")
    assert b.js("document.getElementById('scroller').scrollTop") > 0
    after = b.js("document.querySelector('#matrix thead th[data-b]').getBoundingClientRect().top")
    assert after == before  # sticky header row
    rows = b.js(f"{VISIBLE_ROWS}.map(r => r.querySelector('th').getBoundingClientRect().left)")
    assert first in rows  # the pattern column stays at the left edge


def test_search_narrows_the_rows(browser, shots):
    b = browser
    reset(b)
    total = len(b.js(VISIBLE_PATTERNS))
    b.js("document.getElementById('search').focus()")
    b.call("Input.insertText", text="conv2d relu")
    shown = b.js(VISIBLE_PATTERNS)
    assert 0 < len(shown) < total
    assert all("conv2d" in p.lower() and "relu" in p.lower() for p in shown), shown
    assert "(nn.Conv2d, nn.ReLU)" in shown
    assert (
        b.js("document.getElementById('count').textContent") == f"{len(shown)} of {total} patterns"
    )
    b.screenshot(shots / "search.png")
    b.js(
        "(s => { s.value = 'no such pattern'; s.dispatchEvent(new Event('input', {bubbles: true})); })(document.getElementById('search'))"
    )
    assert b.js(VISIBLE_PATTERNS) == []
    assert b.js("document.getElementById('empty').hidden") is False


def test_the_backend_filter_leaves_one_backends_columns_and_rows(browser, resolved, shots):
    b = browser
    reset(b)
    click(b, "button[data-none=backend]")
    assert b.js(VISIBLE_PATTERNS) == []
    click(b, "input[name=backend][value=onednn]")
    assert b.js(VISIBLE_BACKENDS) == ["onednn"]
    assert b.js(
        "[...document.querySelectorAll('#matrix td[data-b]')].filter(td => !td.hidden).every(td => td.dataset.b === 'onednn')"
    )
    shown = b.js(VISIBLE_PATTERNS)
    assert sorted(shown) == sorted(words.config_pattern(c) for c in resolved["onednn"].configs)
    assert len(shown) == 221
    # Wide enough for one column: nothing to scroll sideways.
    assert b.js("(s => s.scrollWidth <= s.clientWidth)(document.getElementById('scroller'))")
    b.screenshot(shots / "onednn.png")


def search_for(b: Browser, text: str) -> None:
    b.js(
        f"(s => {{ s.value = {text!r}; s.dispatchEvent(new Event('input', {{bubbles: true}})); }})"
        "(document.getElementById('search'))"
    )


def test_a_search_shows_only_the_columns_of_the_backends_that_have_what_it_finds(
    browser, every_backend, pt2e_only, shots
):
    """A pattern only the PT2E-only targets (the last columns) have: its cells are on screen,
    not past ten empty columns, and its row is not stretched by cells out of sight."""
    b = browser
    reset(b)
    fx = [n for n in every_backend if n not in pt2e_only + EXAMPLES]
    fx_patterns = {words.config_pattern(c) for n in fx + EXAMPLES for c in every_backend[n].configs}
    only = sorted(
        {words.config_pattern(c) for n in pt2e_only for c in every_backend[n].configs} - fx_patterns
    )
    assert only, "no pattern only a PT2E-only target has"
    pattern = only[0]
    having = [
        n
        for n in sorted(fx) + pt2e_only + EXAMPLES
        if any(words.config_pattern(c) == pattern for c in every_backend[n].configs)
    ]
    search_for(b, pattern.lower())
    shown = b.js(VISIBLE_PATTERNS)
    assert pattern in shown
    columns = b.js(VISIBLE_BACKENDS)
    # The columns are the backends with a shown pattern, in their order; the rest are hidden.
    assert columns == [
        n
        for n in sorted(fx) + pt2e_only + EXAMPLES
        if any(words.config_pattern(c) in shown for c in every_backend[n].configs)
    ]
    assert set(having) <= set(columns) and len(columns) < len(every_backend)
    total = len(every_backend)
    assert b.js("document.getElementById('columns').textContent") == (
        f"({total - len(columns)} of {total} backends hidden: none of these patterns)"
    )
    # Every filled cell of the found row is inside the window.
    right = b.js(
        "Math.max(...[...document.querySelectorAll('#matrix tr[id]')].filter(r => !r.hidden)"
        ".flatMap(r => [...r.querySelectorAll('td:not(.none)')]).filter(td => !td.hidden)"
        ".map(td => td.getBoundingClientRect().right))"
    )
    assert right <= b.js("window.innerWidth"), right
    b.screenshot(shots / "search-pt2e-only.png")
    reset(b)
    assert b.js("document.getElementById('columns').hidden") is True
    assert b.js(VISIBLE_BACKENDS) == sorted(fx) + pt2e_only + EXAMPLES


def test_the_search_box_shows_its_whole_placeholder(browser):
    b = browser
    reset(b)
    room, needed = b.js(
        "(s => { const st = getComputedStyle(s); const c = document.createElement('canvas')"
        ".getContext('2d'); c.font = st.font;"
        " return [s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight),"
        " c.measureText(s.placeholder).width]; })(document.getElementById('search'))"
    )
    assert needed <= room, (needed, room)


def test_each_column_says_which_flows_its_backend_serves(browser, every_backend):
    """torch's FX `executorch` and ExecuTorch's PT2E `xnnpack_executorch` are told apart."""
    b = browser
    reset(b)
    labels = b.js(
        "Object.fromEntries([...document.querySelectorAll('#matrix thead th[data-b]')]"
        ".map(t => [t.dataset.b, t.querySelector('small').textContent]))"
    )
    assert labels["executorch"] == f"FX · {len(every_backend['executorch'].configs)}"
    assert labels["xnnpack"] == f"FX + PT2E · {len(every_backend['xnnpack'].configs)}"
    assert labels["xnnpack_executorch"] == (
        f"PT2E only · {len(every_backend['xnnpack_executorch'].configs)}"
    )
    # The toy is not read as a real target: said so, last, after a dashed rule.
    assert labels["my_backend"] == f"example, FX · {len(every_backend['my_backend'].configs)}"
    rule = b.js(
        "getComputedStyle(document.querySelector('#matrix thead th[data-b=\"my_backend\"]'))"
        ".borderLeftStyle"
    )
    assert rule == "dashed"


def test_the_kind_and_dtype_filters(browser, every_backend):
    resolved = every_backend
    b = browser
    reset(b)
    for kind in ("module", "functional", "fused"):
        click(b, f"input[name=kind][value={kind}]")  # leave only `method`
    shown = b.js(VISIBLE_PATTERNS)
    assert shown and all(p.startswith('"') for p in shown)
    reset(b)
    b.js(
        "(s => { s.value = 'quint4x2'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.getElementById('dtype'))"
    )
    expected = {
        words.config_pattern(c)
        for backend in resolved.values()
        for c in backend.configs
        if "quint4x2" in words.dtypes_used(c)
    }
    assert set(b.js(VISIBLE_PATTERNS)) == expected
    assert {"nn.Embedding", "nn.EmbeddingBag"} <= expected and len(expected) < 10


def test_the_detail_view_shows_every_field_for_each_group_of_backends(
    browser, every_backend, pt2e_only, shots
):
    b = browser
    resolved = every_backend
    reset(b)
    click(b, "tr[id='p-nn.Conv2d'] th a")
    assert b.js("document.getElementById('detail').hidden") is False
    assert b.js("location.hash") == "#p-nn.Conv2d"
    assert b.js("document.querySelector('#detail h2').textContent") == "nn.Conv2d"
    groups = b.js(
        "[...document.querySelectorAll('#detail section')].map(s => "
        "[s.querySelector('h3').textContent, [...s.querySelectorAll('dt')].map(d => d.textContent)])"
    )
    having = sorted(
        n
        for n, be in resolved.items()
        if any(words.config_pattern(c) == "nn.Conv2d" for c in be.configs)
    )
    # A PT2E-only target is a group of its own, labelled so (x86_inductor's among them).
    labels = [label for label, _ in groups if "PT2E" in label]
    assert labels == [f"{n} (PT2E only)" for n in pt2e_only if n in having]
    assert "x86_inductor (PT2E only)" in labels
    # It shows the fields its spec sets, not the BackendConfig's it never has.
    only = {label.removesuffix(" (PT2E only)"): f for label, f in groups if "PT2E" in label}
    assert {n: sorted(f) for n, f in only.items()} == {
        n: ["dtypes", "observation", "pt2e"] for n in pt2e_only if n in having
    }
    groups = [(label, fields) for label, fields in groups if "PT2E" not in label]
    assert sorted(n for label, _ in groups for n in label.split(", ")) == sorted(
        set(having) - set(pt2e_only)
    )
    for label, fields in groups:
        # The BackendConfig fields, and pt2e where a spec sets it (xnnpack's quantizer).
        pt2e = {
            c.pt2e is not None
            for n in label.split(", ")
            for c in resolved[n].configs
            if words.config_pattern(c) == "nn.Conv2d"
        }
        assert len(pt2e) == 1
        assert sorted(fields) == sorted([f.word for f in FIELDS] + ["pt2e"] * pt2e.pop())
    assert any("pt2e" in fields for _, fields in groups)  # xnnpack's conv2d
    text = b.js("document.getElementById('detail').textContent")
    assert "nnqr.Conv2d" in text and "nnqat.Conv2d" in text and "different_observer" in text
    b.screenshot(shots / "detail.png")
    b.js("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
    assert b.js("document.getElementById('detail').hidden") is True


def test_the_page_loads_nothing_but_itself(browser):
    b = browser
    reset(b)
    requests = [e["request"]["url"] for e in b.events("Network.requestWillBeSent")]
    assert requests and set(requests) == {PAGE.as_uri()}


HOSTILE_NAME = "</th><img src=x onerror=\"document.title='PWNED'\">--->\n| `x`\u202e"


def test_a_hostile_page_shows_its_names_and_runs_only_its_own_script(browser, resolved, tmp_path):
    """Names and folders that try to close the comment, add an element or run a handler are
    shown as text; the page's own script runs (its hash is in the CSP) and a script written into
    the page by anyone else does not."""
    import dataclasses

    from generator.emit.docs import render_docs

    backend = dataclasses.replace(
        resolved["my_backend"], name=HOSTILE_NAME, spec_file=f"specs/{HOSTILE_NAME}.bcfg"
    )
    html = render_docs([backend], HOSTILE_NAME)["index.html"]
    page = tmp_path / "index.html"
    page.write_text(html, encoding="utf-8")
    b = browser
    try:
        b.open(page.as_uri())
        assert b.js("document.title") == "Support matrix · bcfg"
        assert b.js("document.images.length") == 0
        assert b.js("document.childNodes[0].nodeType") == Node_COMMENT
        title = b.js("document.querySelector('#matrix thead th[data-b]').title")
        assert title.startswith("</th><img src=x onerror=") and "\\n" in title
        b.js("document.getElementById('search').focus()")
        b.call("Input.insertText", text="linear")  # the page's own script filters the rows
        assert b.js(VISIBLE_PATTERNS) == ["nn.Linear"]
        # The same page with a script of someone else's: the CSP does not let it run.
        injected = html.replace("</body>", "<script>document.title = 'INJECTED';</script></body>")
        page.write_text(injected, encoding="utf-8")
        b.open(page.as_uri())
        assert b.js("document.title") == "Support matrix · bcfg"
    finally:
        reset(b)


Node_COMMENT = 8
