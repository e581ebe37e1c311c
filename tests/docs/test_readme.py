"""The README is a landing page that stays true.

At most ~250 lines; its two set-up commands are the ones ``.ci/run`` runs (so CI
proves them on a fresh machine); every link leads to a file of the repository;
its taste is the repository's spec and the tour's ``bcfg diff`` (which
tests/docs/test_pages.py runs); and it links every page of the site's
navigation.
"""

from __future__ import annotations

import re

import yaml

from tests.docs.pages import block as page_block
from tests.support import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def readme_blocks(lang: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)^```$", README, re.M | re.S)]


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_the_readme_is_a_landing_page():
    assert len(README.splitlines()) <= 250


def ci_commands() -> list[str]:
    """The lines of .ci/run after its 'README, "Set up", command N' comments, as a person types them."""
    lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = {}
    for i, line in enumerate(lines):
        m = re.match(r'# README, "Set up", command (\d)', line)
        if m:
            command = next(x for x in lines[i + 1 :] if not x.startswith("#"))
            commands[int(m.group(1))] = command.replace('"$PY"', "python3.11").replace(
                "pip install -q ", "pip install "
            )
    return [commands[1], commands[2]]


def test_the_set_up_commands_are_the_ones_ci_runs():
    setup = section("Set up")
    shown = re.findall(r"^```sh\n(.*?)\n```$", setup, re.M | re.S)
    assert shown == ci_commands()
    install, tests = shown
    # torch's CPU build first, before anything that depends on torch; then the extras the
    # tests need (docs builds this site); then the main job.
    steps = install.split(" && ")
    assert steps[0] == "python3.11 -m venv .venv"
    # --retries 0 --timeout 10: an unreachable PyTorch index is skipped at once, without pip's
    # five retries a package and their 50 lines of warnings (install.md has the measurement).
    assert steps[1] == (
        ".venv/bin/pip install --retries 0 --timeout 10 torch==2.13.0"
        " --extra-index-url https://download.pytorch.org/whl/cpu"
    )
    assert steps[2] == ".venv/bin/pip install -e '.[test,pt2e,docs,executorch]'"
    assert steps[3] == ".venv/bin/bcfg generate"
    assert tests.endswith(".venv/bin/python -m pytest -q -n auto --dist loadfile")
    # The install page shows the same two commands (its lines continued with a backslash).
    page = (REPO / "docs" / "getting-started" / "install.md").read_text(encoding="utf-8")
    page = re.sub(r" \\\n +", " ", page)
    assert f"```sh\n{install}\n```" in page and f"```sh\n{tests}\n```" in page


def test_every_link_leads_somewhere():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    assert links
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path = link.split("#")[0]
        assert (REPO / path).exists(), link


def test_the_taste_is_the_repositorys_spec_and_the_tours_diff():
    (spec,) = readme_blocks("bcfg")
    text = (REPO / "specs" / "my_backend.bcfg").read_text(encoding="utf-8")
    assert text.endswith(spec) and text[: -len(spec)].strip().startswith("#")
    (diff,) = readme_blocks("console")
    assert diff == page_block("getting-started/tour.md", "console", starting="$ bcfg diff")


def _pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _pages(v)]
    return [p for item in nav for p in _pages(item)]


def test_the_readme_links_every_page_of_the_site():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    linked = set(re.findall(r"\]\(docs/([^)#]+)\)", README))
    # The home page is the README's own content; the matrix and the architecture are linked
    # as the files they are (docs/README.md, ARCHITECTURE.md).
    skip = {"index.md", "matrix/README.md", "matrix/explore.md", "contributing/index.md"}
    skip |= {
        "contributing/architecture.md",
        "guides/pt2e/xnnpack.md",
        "guides/pt2e/x86-inductor.md",
    }
    skip |= {"guides/pt2e/executorch.md"}
    missing = [p for p in _pages(nav) if p not in linked and p not in skip]
    assert missing == []
