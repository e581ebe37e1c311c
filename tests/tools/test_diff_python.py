"""``bcfg diff`` on the project's own Python that the specs name (issue 53.3): both revisions
resolve against the working tree's modules, so a hook whose code changed compared as "no
semantic change"; the diff now reads the definition at each revision and lists it."""

from __future__ import annotations

import textwrap

from generator.cli import main
from tests.tools.test_diff import commit, git

HOOKS = """
LIMIT = 4


def tiny(node, model):
    return False


def small(node, model):
    return len(node.args) > LIMIT


def other(node, model):
    return True
"""
SPEC = """
dtypes s = {input: qint8, output: qint8, weight: qint8, bias: float}
quantizer n { fx: false }
backend n {
    pattern aten.linear.default { dtypes: s  pt2e: {skip: [npuhooks.skips.tiny, npuhooks.skips.small]} }
}
"""


def test_a_named_hook_whose_code_changed_is_listed_and_a_comment_is_not(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "specs").mkdir()
    (tmp_path / "npuhooks").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["npuhooks"]\n')
    (tmp_path / "npuhooks" / "__init__.py").write_text("")
    skips = tmp_path / "npuhooks" / "skips.py"
    skips.write_text(HOOKS)
    (tmp_path / "specs" / "n.bcfg").write_text(textwrap.dedent(SPEC))
    git(tmp_path, "init", "-q")
    commit(tmp_path, "first")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")

    def diff() -> tuple[int, str]:
        code = main(["diff", "--exit-code"])
        return code, capsys.readouterr().out

    # a comment, and a function the spec does not name: nothing to review
    skips.write_text(HOOKS.replace("return True", "return 1") + "# a comment\n")
    assert diff() == (
        0,
        "bcfg diff: HEAD → the working tree: no semantic change\n".replace(
            "HEAD", f"HEAD ({git(tmp_path, 'rev-parse', '--short=7', 'HEAD').strip()})"
        ),
    )
    skips.write_text(HOOKS.replace("return False", "return node is None"))
    code, out = diff()
    assert code == 1
    assert "~ npuhooks.skips.tiny  changed, in npuhooks/skips.py" in out, out
    assert "other" not in out and "small" not in out
    # a module-level name a named definition uses (a config built from the module's specs)
    skips.write_text(HOOKS.replace("LIMIT = 4", "LIMIT = 5"))
    code, out = diff()
    assert code == 1 and "~ npuhooks.skips.small  changed, in npuhooks/skips.py" in out, out
    assert "tiny" not in out
