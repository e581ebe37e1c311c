"""The site's home page and the README agree: the same spec, the same proof, and a spec a reader
copies from either generates without a warning, strict included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.pages import blocks
from tests.docs.test_readme import README, readme_blocks
from tests.support import REPO, run_cli

HOME = (REPO / "docs" / "index.md").read_text(encoding="utf-8")


def shown_specs() -> list[tuple[str, str]]:
    """Every spec the home page and the README show, by where it is shown."""
    home = [("docs/index.md", b.text) for b in blocks("index.md") if b.lang == "bcfg"]
    return home + [("README.md", text) for text in readme_blocks("bcfg")]


def test_the_home_page_shows_the_readmes_spec():
    (home,) = [b.text for b in blocks("index.md") if b.lang == "bcfg"]
    (readme,) = readme_blocks("bcfg")
    assert home == readme


@pytest.mark.parametrize("where,spec", shown_specs(), ids=[w for w, _ in shown_specs()])
def test_a_shown_spec_generates_without_a_warning_even_when_strict(tmp_path: Path, where, spec):
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\nstrict = true\n", encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "my_backend.bcfg").write_text(spec, encoding="utf-8")
    code, out, err = run_cli(tmp_path, "generate")
    assert code == 0, f"{where}: {out}{err}"
    assert "warning" not in (out + err).lower(), f"{where}: {out}{err}"
    assert (tmp_path / "generated" / "my_backend.py").is_file()


def test_the_strict_check_fails_on_the_spec_the_home_page_used_to_show(tmp_path: Path):
    """The fusion without the fused module's own pattern: FX would fuse and never quantize."""
    (spec,) = readme_blocks("bcfg")
    start = spec.index("    # ...which FX then quantizes")
    broken = spec[:start] + spec[spec.index("    }\n", start) + len("    }\n") :]
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\nstrict = true\n", encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "my_backend.bcfg").write_text(broken, encoding="utf-8")
    code, out, err = run_cli(tmp_path, "generate")
    assert code != 0 and "warning" in (out + err).lower(), out + err


def _bullets(markdown: str) -> list[str]:
    """The bold lead of each item of a list (``- **what**``)."""
    return re.findall(r"^- \*\*(.+?)\*\*", markdown, re.M)


def test_the_home_pages_proof_is_the_readmes():
    from docs.hooks import include_markdown

    assert "<!-- bcfg:include README.md#proof -->" in HOME
    proof = include_markdown("README.md#proof", "index.md")
    start = README.index("<!-- bcfg:section proof -->")
    readme = README[start : README.index("<!-- bcfg:end proof -->")]
    leads = _bullets(readme)
    # Every shipped target the README claims: torch's eight, both XNNPACK quantizers, Inductor.
    assert any("eight" in lead for lead in leads)
    assert any("ExecuTorch's XNNPACK" in lead for lead in leads)
    assert any("X86 and Arm Inductor" in lead for lead in leads)
    assert _bullets(proof) == leads
    # Its links lead to the site's pages; paths of the repository show as text.
    links = re.findall(r"\]\(([^)\s]+)\)", proof)
    assert links and all((REPO / "docs" / link.split("#")[0]).is_file() for link in links), links
    assert "(specs/" not in proof and "`specs/xnnpack.bcfg`" in proof


def test_an_include_of_a_section_that_is_not_there_fails_the_build():
    from mkdocs.exceptions import PluginError

    from docs.hooks import include_markdown

    with pytest.raises(PluginError, match="no <!-- bcfg:section nothing -->"):
        include_markdown("README.md#nothing", "index.md")
