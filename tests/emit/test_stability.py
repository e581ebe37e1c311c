"""Generated output changes only when a BackendConfig changes.

Comment, blank-line, indentation and ``bcfg fmt``-only edits of any spec change
no byte of ``generated/``; a module whose configs did not change is not
rewritten, even when a spec it imports changed; a real change touches only the
modules whose configs it changes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.cli import main
from generator.config import find_project
from generator.infra.write import write_outputs
from generator.lang.fmt import format_text
from generator.pipeline import compile_project
from tests.support import REPO


@pytest.fixture
def project(project_copy, monkeypatch):
    monkeypatch.chdir(project_copy)
    monkeypatch.setenv("NO_COLOR", "1")
    return project_copy


def rendered(root: Path) -> dict[str, str]:
    """Every file a full run would write (modules and docs), by path in the project."""
    outputs, _, _ = compile_project(find_project(root))
    return {
        (o.out_dir.relative_to(root) / name).as_posix(): text
        for o in outputs
        for name, text in o.files.items()
    }


def checked_in() -> dict[str, str]:
    return {name: (REPO / name).read_text() for name in rendered(REPO)}


def edit(path: Path, change) -> None:
    path.write_text(change(path.read_text()))


def test_a_comment_at_the_top_of_common_changes_nothing(project):
    edit(project / "specs" / "common.bcfg", lambda t: "# a new first line\n" + t)
    assert rendered(project) == checked_in()


def test_a_blank_line_in_the_middle_changes_nothing(project):
    def blank(text: str) -> str:
        lines = text.split("\n")
        mid = len(lines) // 2
        return "\n".join(lines[:mid] + [""] + lines[mid:])

    edit(project / "specs" / "common.bcfg", blank)
    assert rendered(project) == checked_in()


def test_indentation_and_layout_changes_nothing(project):
    # Re-indent every line of every spec and join each record over one line.
    def relayout(text: str) -> str:
        text = re.sub(r"(?m)^(\s*)", lambda m: "\t" + m.group(1) * 2, text)
        return re.sub(r"\{\n\s*(input: [^}]*?),?\n\s*\}", lambda m: "{" + m.group(1) + "}", text)

    for spec in (project / "specs").glob("*.bcfg"):
        edit(spec, relayout)
    assert (project / "specs" / "common.bcfg").read_text() != (
        REPO / "specs" / "common.bcfg"
    ).read_text()
    assert rendered(project) == checked_in()


def test_bcfg_fmt_after_a_rewrap_leaves_check_passing(project, capsys):
    common = project / "specs" / "common.bcfg"
    canonical = common.read_text()
    # Written over several lines, then put back on one by bcfg fmt.
    wrapped = canonical.replace(
        "dtypes default_quint8 = {input: quint8, output: quint8}",
        "dtypes default_quint8 = {\n    input: quint8,\n    output: quint8,\n}",
    )
    assert wrapped != canonical
    common.write_text(wrapped)
    assert main(["check"]) == 0
    assert main(["fmt"]) == 0
    assert common.read_text() == canonical == format_text(wrapped, "common.bcfg")
    assert main(["check"]) == 0, capsys.readouterr().err


def test_a_module_whose_configs_did_not_change_is_not_rewritten(project):
    # dynamic_fp16 is used by native, fbgemm, qnnpack, x86 and executorch's configs,
    # not by onednn, tensorrt, qnnpack_pt2e or my_backend.
    edit(
        project / "specs" / "common.bcfg",
        lambda t: t.replace(
            "input: float16, output: float, weight: float16, bias: float, dynamic: true",
            "input: float16, output: float, weight: float16, bias: float16, dynamic: true",
        ),
    )
    outputs, _, _ = compile_project(find_project(project))
    written, removed = write_outputs(outputs[0])  # the modules
    assert removed == []
    assert sorted(p.name for p in written) == [
        "executorch.py",
        "fbgemm.py",
        "native.py",
        "qnnpack.py",
        "x86.py",
    ]
    before = checked_in()
    for name in ("onednn.py", "tensorrt.py", "qnnpack_pt2e.py", "__init__.py"):
        assert (project / "generated" / name).read_text() == before[f"generated/{name}"]


def test_a_hand_edit_is_named_as_one(project, capsys):
    x86 = project / "generated" / "x86.py"
    edit(x86, lambda t: t.replace("bias_dtype=torch.float32", "bias_dtype=torch.float16", 1))
    stale = project / "generated" / "native.py"
    edit(project / "specs" / "native.bcfg", lambda t: t.replace("use cat(default_quint8)\n", ""))
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert "generated/x86.py was edited by hand" in err
    assert "native.py was edited by hand" not in err and stale.exists()
    # x86.py and native.py, and the docs native's change touches (README.md, index.html, native.md).
    assert "5 generated file(s) out of date" in err
