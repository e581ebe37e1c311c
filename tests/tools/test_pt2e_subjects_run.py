"""``python -m tests.tools.pt2e_subjects.run``, the on-demand import of a production quantizer:
bcfg's own dependencies an environment lacks are linked into a folder on its path (ExecuTorch's
Arm environment has no lark and no black, and the import could not generate there), and the
figures are read from what the import printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.tools.pt2e_subjects.run import figures, link_dependencies


def test_an_environment_without_bcfgs_dependencies_imports_them_from_the_linked_folder(
    tmp_path,
) -> None:
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    code = "import lark, black, jinja2, pygments"
    assert subprocess.run([str(python), "-c", code], capture_output=True).returncode != 0
    linked = link_dependencies(python, tmp_path / "deps")
    assert {"lark", "black", "jinja2", "pygments"} <= {n.lower() for n in linked}
    run = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path / "deps"), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    # nothing is linked where nothing is missing
    assert link_dependencies(Path(sys.executable), tmp_path / "none") == []
    assert not (tmp_path / "none").exists()


def test_the_figures_are_read_from_the_import(tmp_path) -> None:
    (tmp_path / "q.bcfg").write_text("# a comment\n\nbackend q {\n}\n")
    (tmp_path / "q_hooks.py").write_text('"""Doc."""\n\nX = 1\n')
    (tmp_path / "q.proof.txt").write_text(
        "scopes: composable: 2 of 9 graphs differ\nkept: scopes: composable\n"
    )
    text = "bcfg import: not proved: 2 of 9 graphs differ; each is in q.proof.txt\n"
    got = figures(tmp_path, "q", text, 12.4, 1)
    assert got == {
        "quantizer": "q", "returncode": 1, "graphs_same": 7, "graphs": 9,
        "composition": "composable", "seconds": 12, "spec_lines": 2, "hooks_lines": 1,
    }  # fmt: skip
    proved = "bcfg import: proved: the generated quantizer annotates as m:f() on all 5 graphs (q.proof.txt)\n"
    assert figures(tmp_path, "q", proved, 1, 0)["graphs_same"] == 5
