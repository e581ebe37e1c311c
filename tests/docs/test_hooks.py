"""The site's markers show the repository's files only: ``<!-- bcfg:include FILE -->`` and
``<!-- bcfg:error NAME -->`` naming a file elsewhere on the building machine (an absolute
path, ``..``, a symlink that leads out) fail the build instead of publishing it.

The hooks are called directly (a full build is tests/docs/test_site.py's)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.conftest import require_mkdocs
from tests.support import REPO


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    require_mkdocs()
    spec = importlib.util.spec_from_file_location("bcfg_docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def secret(tmp_path) -> Path:
    """A Markdown file, an error case and its pinned output outside the repository."""
    (tmp_path / "secret.md").write_text("# Secret\n\nthe machine's secret\n")
    (tmp_path / "leak.bcfg").write_text("the machine's secret\n")
    (tmp_path / "leak.expected").write_text("the machine's secret\n")
    return tmp_path


def _relative(target: Path, start: Path) -> str:
    return "../" * len(start.resolve().parts[1:]) + target.resolve().as_posix().lstrip("/")


def test_an_include_outside_the_repository_fails_the_build(hooks, secret):
    for name in (str(secret / "secret.md"), _relative(secret / "secret.md", REPO)):
        with pytest.raises(hooks.PluginError, match="is outside the repository"):
            hooks.include_markdown(name, "guides/page.md")


def test_an_error_case_outside_the_corpus_fails_the_build(hooks, secret):
    for name in (str(secret / "leak"), _relative(secret / "leak", REPO / "tests" / "errors")):
        with pytest.raises(hooks.PluginError, match="is not the name of a case of tests/errors"):
            hooks.error_markdown(name)


def test_a_symlink_leading_out_fails_the_build(hooks, secret, tmp_path, monkeypatch):
    """Inside a repository (here a copy of its layout), a symlink to a file outside it."""
    repo = tmp_path / "repo"
    errors = repo / "tests" / "errors"
    errors.mkdir(parents=True)
    (repo / "notes.md").symlink_to(secret / "secret.md")
    (errors / "leak.bcfg").symlink_to(secret / "leak.bcfg")
    (errors / "leak.expected").write_text("pinned\n")
    (errors / "folder").mkdir()
    (errors / "folder" / "main.bcfg").symlink_to(secret / "leak.bcfg")
    (errors / "folder.expected").write_text("pinned\n")
    monkeypatch.setattr(hooks, "REPO", repo)
    monkeypatch.setattr(hooks, "ERRORS", errors)
    with pytest.raises(hooks.PluginError, match="is outside the repository"):
        hooks.include_markdown("notes.md", "page.md")
    for name in ("leak", "folder"):
        with pytest.raises(hooks.PluginError, match="is outside tests/errors"):
            hooks.error_markdown(name)


def test_the_repositorys_own_files_are_still_shown(hooks):
    assert "bcfg" in hooks.include_markdown("ARCHITECTURE.md", "reference/architecture.md")
    case = sorted(p.stem for p in (REPO / "tests" / "errors").glob("*.expected"))[0]
    assert f'<a id="error-{case}"></a>' in hooks.error_markdown(case)


def _figures(tmp_path: Path) -> Path:
    """Figures as benchmarks/pt2e_scale.py --json writes them: two sizes of one model."""
    data = {
        "targets": {
            "x86_inductor": {"generated": "X86InductorQuantizer", "reference": "ao.x86:X86"}
        },
        "families": {"transformer": "transformer: linear, matmul"},
        "limit": 20.0,
        "slow": 5.0,
        "rounds": 3,
        "graphs": [
            {"family": "transformer", "size": 1000, "nodes": 995},
            {"family": "transformer", "size": 16000, "nodes": 16003},
        ],
        "times": [
            {
                "family": "transformer",
                "nodes": 995,
                "target": "x86_inductor",
                "variant": v,
                "seconds": s,
            }
            for v, s in (("gen", [0.02]), ("ref", [0.1]))
        ]
        + [
            {
                "family": "transformer",
                "nodes": 16003,
                "target": "x86_inductor",
                "variant": "gen",
                "seconds": [0.5, 0.4, 0.9],
            }
        ],
        "over": [
            {
                "family": "transformer",
                "nodes": 16003,
                "target": "x86_inductor",
                "variant": "ref",
                "what": "over",
            }
        ],
    }
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(data))
    return path


def test_the_scale_marker_shows_the_largest_graph_of_each_model(hooks, tmp_path):
    text = hooks.scale_markdown("x86_inductor", "guides/pt2e/x86-inductor.md", _figures(tmp_path))
    assert text.startswith(
        "The generated `X86InductorQuantizer` annotates a 16,003-node transformer in "
        "0.50 s; the hand-written class it replaces, `ao.x86.X86`, takes > 20 s (stopped)."
    )
    assert "](../../contributing/benchmarks.md#pt2e-quantizers-at-scale)" in text
    assert text.rstrip().endswith(
        "| transformer: linear, matmul | 16,003 | 0.50 s | > 20 s (stopped) | < 0.03x |"
    )
    assert "995" not in text  # only the largest graph


def test_a_scale_marker_without_figures_fails_the_build(hooks, tmp_path):
    with pytest.raises(hooks.PluginError, match="has no figures for 'arm_inductor'"):
        hooks.scale_markdown("arm_inductor", "guides/x.md", _figures(tmp_path))
    with pytest.raises(hooks.PluginError, match="run `python benchmarks/pt2e_scale.py --docs`"):
        hooks.scale_markdown("x86_inductor", "guides/x.md", tmp_path / "none.json")


def test_the_checked_in_figures_cover_every_target_at_every_size(hooks):
    """benchmarks/scale/figures.json (the last --docs run) has, for every target of the main
    environment, the generated annotate at every size of every model, and the hand-written
    class's time or how it ran over; the targets whose reference imports only in an
    environment of their own (Cortex-M, Arm TOSA, Cadence) at least on the 1k transformer.
    A graph is known by its model and size: another environment's export of it may differ
    by a node."""
    from benchmarks.scale.targets import TARGETS

    data = json.loads(hooks.SCALE.read_text())
    sizes = {g["size"] for g in data["graphs"]}
    assert sizes == {1000, 4000, 16000}

    def at(entries: list) -> set:
        size = lambda n: min(sizes, key=lambda s: abs(s - n))  # noqa: E731
        return {(e["family"], size(e["nodes"]), e["target"], e["variant"]) for e in entries}

    timed, over = at(data["times"]), at(data["over"])
    graphs = {(g["family"], g["size"]) for g in data["graphs"]}
    for t in TARGETS:
        assert t.name in data["targets"]
        for family, size in graphs if not t.env else {("transformer", 1000)}:
            assert (family, size, t.name, "gen") in timed, (family, size, t.name)
            assert {(family, size, t.name, "ref")} & (timed | over), (family, size, t.name)


def _nav(hooks, docs: Path) -> list:
    from types import SimpleNamespace

    config = SimpleNamespace(docs_dir=str(docs), nav=[{"Home": "index.md"}, {"Support matrix": []}])
    return hooks.on_config(config).nav[1]["Support matrix"]


def test_the_navigation_lists_the_examples_apart_only_if_the_project_names_some(hooks, monkeypatch):
    """[tool.bcfg] examples (my_backend) get a section of their own after the backends; with
    none named, every backend's page is under Backends and there is no Examples section."""
    from generator.infra.write import DOCS

    names = sorted(p.stem for p in DOCS.files(REPO / "docs") if p.parent.name == "backends")
    assert "my_backend" in names
    listed = lambda section: [p.split("/")[-1] for e in section for p in e.values()]  # noqa: E731
    backends, examples = _nav(hooks, REPO / "docs")
    assert list(backends) == ["Backends"] and list(examples) == ["Examples"]
    assert listed(examples["Examples"]) == ["my_backend.md"]
    assert listed(backends["Backends"]) == [f"{n}.md" for n in names if n != "my_backend"]
    real = hooks.find_project(REPO)
    monkeypatch.setattr(hooks, "find_project", lambda root: replace(real, examples=()))
    (backends,) = _nav(hooks, REPO / "docs")
    assert listed(backends["Backends"]) == [f"{n}.md" for n in names]


def test_the_pages_hold_what_their_error_and_key_table_markers_render(hooks):
    """The raw Markdown (GitHub, the repository) showed nothing where a page had
    ``<!-- bcfg:error ... -->`` or ``<!-- bcfg:key-table ... -->`` (issue 53.8): the pages hold
    the content between the marker and ``<!-- bcfg:end ... -->``, as the build renders it;
    ``python docs/hooks.py --fill`` writes it."""
    stale = [
        p.relative_to(hooks.REPO).as_posix()
        for p in hooks.pages()
        if hooks.filled(p.read_text(encoding="utf-8")) != p.read_text(encoding="utf-8")
    ]
    assert stale == [], f"run python docs/hooks.py --fill: {stale}"
    text = (hooks.REPO / "docs" / "reference" / "pt2e.md").read_text(encoding="utf-8")
    assert "<!-- bcfg:key-table pattern -->\n| key | value |" in text
    assert "| `weight_qscheme` |" in text
    # the build renders the markers afresh: a page's stale copy is dropped
    assert hooks.bare(text).count("weight_qscheme` |") == 0


def test_the_home_pages_compass_is_the_registrys(hooks, monkeypatch):
    """The compass of targets on the home page (``<!-- bcfg:compass targets -->``) is rendered
    from tests/targets.py and the spec sizes: a row a target, its spec and hooks counted afresh
    (a spec grown by a line shows at once: the page's copy is then stale), the boundary after."""
    from tests.reference import size
    from tests.targets import TARGETS

    home = (hooks.REPO / "docs" / "index.md").read_text(encoding="utf-8")
    assert "<!-- bcfg:compass targets -->\n| target |" in home
    table = hooks.compass_markdown()
    rows = [r for r in table.splitlines() if r.startswith("| [`")]
    assert [r.split("`")[1] for r in rows] == [t.generated for t in TARGETS] + [
        b[0] for b in hooks.BOUNDARY
    ]
    vulkan = next(r for r in rows if r.startswith("| [`VulkanQuantizer`]"))
    assert f"| {size.target_lines('vulkan')} | 293 |" in vulkan
    assert "boundary, not reproduced" in rows[-1]
    real = size.target_lines
    monkeypatch.setattr(size, "target_lines", lambda name: real(name) + (name == "vulkan"))
    assert hooks.filled(home) != home  # a spec's new line makes the page's copy stale


def test_the_sessions_count_the_specs_and_the_matrix_pages(hooks, monkeypatch, tmp_path):
    """``<!-- bcfg:session NAME -->`` (bcfg fmt's and bcfg docs' sessions) counts the
    repository's specs and the support matrix's files: a new PT2E-only target (its spec and
    its page) makes both pages stale, with no figure written by hand (tests/docs/test_pages.py
    replays them against bcfg)."""
    import shutil

    for name in ("specs", "docs"):
        shutil.copytree(REPO / name, tmp_path / name)
    monkeypatch.setattr(hooks, "REPO", tmp_path)
    before = hooks.figures()
    pages = {
        p: (REPO / "docs" / p).read_text(encoding="utf-8")
        for p in ("reference/fmt.md", "guides/support-matrix.md")
    }
    assert all(hooks.filled(text) == text for text in pages.values())
    (tmp_path / "specs" / "new.bcfg").write_text("quantizer new {\n    fx: false\n}\n")
    page = tmp_path / "docs" / "backends" / "new.md"
    page.write_text((tmp_path / "docs" / "backends" / "vulkan.md").read_text(encoding="utf-8"))
    after = hooks.figures()
    assert after == {
        **before,
        "specs": before["specs"] + 1,
        "specs_but_one": before["specs"],
        "pt2e_only": before["pt2e_only"] + 1,
        "files": before["files"] + 1,
    }
    assert f"{after['pt2e_only']} PT2E-only target(s)" in hooks.session_markdown("docs")
    assert all(hooks.filled(text) != text for text in pages.values())
