"""Projects whose specs name their own modules, through the ``bcfg`` script (issue 24).

Every command that resolves specs imports the project's modules from its root
(and ``[tool.bcfg] pythonpath``) whatever the working directory, with the
console script as pre-commit and CI run it, without PYTHONPATH; the fast check
takes its path there and falls back when a user module is edited, shadowed,
moved or removed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.tools.projects import SPEC, Console, acme_project

FAST = "fast check: these very specs and outputs were verified before"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One cache for the module: the symbol facts of torch's names are learned once."""
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture
def acme(tmp_path, cache) -> Console:
    return acme_project(tmp_path / "acme", cache)


# The plain conv's pattern config, as the spec writes it.
CONV = "    pattern nn.Conv2d {\n        dtypes: int8\n        root: nn.Conv2d\n        reference: nnqr.Conv2d\n    }\n"


def widen_the_fusion(project: Console) -> None:
    """A reviewed change: the fused linear takes a second dtype config (line 9 of the spec)."""
    project.edit(
        SPEC, "dtypes int8 = {", "dtypes int16 = {input: qint32, output: qint32}\ndtypes int8 = {"
    )
    fusion = "        dtypes: int8\n        fuser: acme_ops"
    project.edit(SPEC, fusion, fusion.replace("int8", "[int8, int16]"))


def ok(done) -> str:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cannot import" not in done.stderr
    return done.stdout


def test_every_command_finds_the_projects_modules_from_any_folder(acme):
    """Run from specs/, where neither `python -m` nor the script's own folder would find acme_ops."""
    specs = acme.root / "specs"
    checked = acme.bcfg("-v", "check", cwd=specs)
    ok(checked)
    assert FAST in checked.stderr
    assert f"imported from {acme.root.resolve()}" in checked.stderr

    # A reviewed change: the fused pattern takes a second dtype config.
    widen_the_fusion(acme)
    assert "no semantic change" in ok(acme.bcfg("diff", "HEAD", "HEAD", cwd=specs))
    changes = json.loads(ok(acme.bcfg("diff", "--format", "json", cwd=specs)))["changes"]
    assert [(c["pattern"], c["field"], c["after"]) for c in changes] == [
        ("(nn.Linear, nn.GELU)", "dtypes", "int16")
    ]
    ok(acme.bcfg("generate", cwd=specs))
    acme.commit("int16 too")
    changes = json.loads(ok(acme.bcfg("diff", "HEAD~1", "HEAD", "--format", "json", cwd=specs)))
    assert changes["summary"]["changed"] == 1

    explained = ok(acme.bcfg("explain", "acme_npu", "acme_ops.LinearGELU", cwd=specs))
    assert "pattern acme_ops.LinearGELU (module)" in explained
    ok(acme.bcfg("docs", cwd=specs))
    compat = acme.bcfg(
        "compat",
        "acme_npu",
        "--qconfig-mapping",
        "acme_ops.mapping:acme_qconfig_mapping",
        cwd=specs,
    )
    assert "0 not honoured" in ok(compat)
    imported = ok(acme.bcfg("import", "acme_ops.legacy:get_acme_backend_config", cwd=specs))
    assert "fuser: acme_ops.fusers.fuse_linear_gelu" in imported
    # From outside the project, naming its spec: the project is the spec's.
    ok(acme.bcfg("generate", str(acme.root / SPEC), cwd=acme.root.parent))


def test_a_pythonpath_folder_holds_the_modules(acme):
    """A src layout: [tool.bcfg] pythonpath = ["src"] puts src/ on the path after the root."""
    (acme.root / "src").mkdir()
    shutil.move(acme.root / "acme_ops", acme.root / "src" / "acme_ops")
    failed = acme.bcfg("check")
    assert failed.returncode == 2
    assert f"{SPEC}:9:16: error: cannot import module 'acme_ops'" in failed.stderr
    acme.edit("pyproject.toml", "strict = true", 'strict = true\npythonpath = ["src"]')
    for argv in (["check"], ["diff", "--exit-code"], ["explain", "acme_npu"]):
        ok(acme.bcfg(*argv, cwd=acme.root / "specs"))
    assert FAST in acme.bcfg("-v", "check").stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"src"', "[tool.bcfg] pythonpath must be a list of folders, relative to the project root"),
        ('["/opt/acme"]', "[tool.bcfg] pythonpath: '/opt/acme' is absolute"),
        ('["lib"]', "[tool.bcfg] pythonpath: no folder 'lib' in the project root"),
    ],
)
def test_a_bad_pythonpath_is_located(acme, value, message):
    acme.edit("pyproject.toml", "strict = true", f"strict = true\npythonpath = {value}")
    done = acme.bcfg("check")
    assert done.returncode == 2
    assert f"pyproject.toml:12:14: error: {message}" in done.stderr, done.stderr


# ------------------------------------------------------------------ the fast check


def fast(acme: Console) -> tuple[int, bool, str]:
    """``bcfg -v check``: its exit code, whether the fast path answered, and what it printed."""
    done = acme.bcfg("-v", "check")
    return done.returncode, FAST in done.stderr, done.stdout + done.stderr


def test_the_fast_path_answers_until_a_user_module_is_edited(acme):
    assert fast(acme)[:2] == (0, True)
    # An edit that changes nothing the spec names: the full path runs, finds the tree up to
    # date, and the fast path answers again.
    acme.edit("acme_ops/fused.py", '"""Linear then GELU', '"""Linear, then GELU')
    assert fast(acme)[:2] == (0, False)
    assert fast(acme)[:2] == (0, True)
    # An edit that drops what the spec names.
    acme.edit("acme_ops/fusers.py", "def fuse_linear_gelu(", "def fuse_linear_gelu_v2(")
    acme.edit("acme_ops/__init__.py", "fuse_linear_gelu\n", "fuse_linear_gelu_v2\n")
    code, hit, out = fast(acme)
    assert (code, hit) == (2, False)
    assert f"{SPEC}:9:16: error: unknown symbol 'acme_ops.fuse_linear_gelu'" in out
    assert "did you mean 'acme_ops.fuse_linear_gelu_v2'?" in out


def test_the_fast_path_sees_a_module_shadowed(acme):
    """A file earlier on the path now answers `import acme_ops`: src/ behind the root."""
    acme.edit("pyproject.toml", "strict = true", 'strict = true\npythonpath = ["src"]')
    (acme.root / "src").mkdir()
    shutil.move(acme.root / "acme_ops", acme.root / "src" / "acme_ops")
    assert fast(acme)[:2] == (0, False)
    assert fast(acme)[:2] == (0, True)
    (acme.root / "acme_ops.py").write_text("from torch import nn\n\nLinearGELU = nn.Sequential\n")
    code, hit, out = fast(acme)
    assert (code, hit) == (2, False)
    assert f"{SPEC}:9:16: error: unknown symbol 'acme_ops.fuse_linear_gelu'" in out


def test_the_fast_path_sees_a_module_moved_or_removed(acme):
    acme.edit("pyproject.toml", "strict = true", 'strict = true\npythonpath = ["src"]')
    (acme.root / "src").mkdir()
    assert fast(acme)[:2] == (0, False)  # the settings changed: a key of their own
    assert fast(acme)[:2] == (0, True)
    # Moved to src/: found there, the same code; the full path runs once.
    shutil.move(acme.root / "acme_ops", acme.root / "src" / "acme_ops")
    assert fast(acme)[:2] == (0, False)
    assert fast(acme)[:2] == (0, True)
    # A module of the package removed.
    (acme.root / "src" / "acme_ops" / "hooks.py").unlink()
    code, hit, out = fast(acme)
    assert (code, hit) == (2, False)
    assert f"{SPEC}:22:22: error: unknown symbol 'acme_ops.hooks.wide_input'" in out


@pytest.mark.parametrize(
    ("code", "failure"),
    [
        ("1 / 0", "ZeroDivisionError: division by zero"),
        ("def broken(:", "SyntaxError: invalid syntax"),
        ("raise SystemExit(3)", "it called sys.exit(3)"),
        ("from .nothing import x", "ModuleNotFoundError: No module named 'acme_ops.nothing'"),
    ],
)
def test_a_user_module_that_fails_is_an_error_at_the_name(acme, code, failure):
    """Not bcfg's crash (exit 3): the spec's name, what failed and where; its prints on stderr."""
    hooks = acme.root / "acme_ops" / "hooks.py"
    text = hooks.read_text() + f'\nprint("loading hooks")\n{code}\n'
    hooks.write_text(text)
    line = len(text.splitlines())
    for argv in (["check"], ["diff", "--format", "json"]):
        done = acme.bcfg(*argv)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert (
            f"{SPEC}:22:22: error: importing 'acme_ops.hooks' failed: {failure} "
            f"(acme_ops/hooks.py:{line})\n" in done.stderr
        )
        assert "hint: fix the module: bcfg imports it" in done.stderr
    assert "loading hooks" in done.stderr or code.startswith("def")


def test_the_ci_workflow_runs_in_a_project_with_its_own_modules(tmp_path, cache):
    """examples/github-workflow-bcfg-diff.yml, its bcfg steps run as written in a pull request's
    clone (origin/main is the base), with the `bcfg` on PATH and no PYTHONPATH."""
    import yaml

    from generator.tools.diff_report import MARKER
    from tests.support import REPO

    origin = acme_project(tmp_path / "origin", cache)
    origin.git("clone", "-q", str(origin.root), "pr", cwd=tmp_path)
    pr = Console(tmp_path / "pr", origin.env)
    pr.git("checkout", "-q", "-b", "int16-linear-gelu")
    widen_the_fusion(pr)
    pr.edit(SPEC, CONV, "")
    ok(pr.bcfg("generate"))
    pr.commit("int16 for the fused linear; no plain conv")

    workflow = yaml.safe_load((REPO / "examples" / "github-workflow-bcfg-diff.yml").read_text())
    steps = [s for s in workflow["jobs"]["bcfg-diff"]["steps"] if "bcfg " in s.get("run", "")]
    assert [s["name"] for s in steps] == [
        "generated/ is in sync with specs/",
        "Annotate the changes",
        "Write the comment",
        "No narrowing change",
    ]
    outputs = []
    for step in steps[:-1]:
        script = step["run"].replace("${{ github.base_ref }}", "main")
        outputs.append(ok(pr.run("bash", "-eo", "pipefail", "-c", script)))
    # The last step fails the check: the pull request removes a pattern (narrowing).
    script = steps[-1]["run"].replace("${{ github.base_ref }}", "main")
    failed = pr.run("bash", "-eo", "pipefail", "-c", script)
    assert failed.returncode == 1
    assert "narrowing changes in 1 pattern (--fail-on narrowing)" in failed.stderr
    annotations = outputs[1].splitlines()
    assert (
        f"::notice file={SPEC},line=9,title=bcfg diff%3A widening::acme_npu (nn.Linear, nn.GELU): dtypes: + int16"
        in annotations
    )
    assert any(
        a.startswith(f"::warning file={SPEC},line=") and "nn.Conv2d: pattern removed" in a
        for a in annotations
    )
    comment = (pr.root / "bcfg-diff.md").read_text()
    assert comment.startswith(MARKER + "\n### bcfg diff: origin/main")
    assert "narrows 1 pattern" in comment and "`int16`" in comment


def test_diff_says_the_base_revision_resolves_against_the_working_trees_modules(acme):
    """A pull request renames a class of acme_ops and the spec with it: the base revision's spec
    names the old class, which the working tree's module no longer has. The error says so."""
    acme.edit("acme_ops/fused.py", "class LinearGELU(", "class LinearGelu(")
    acme.edit("acme_ops/__init__.py", "import LinearGELU", "import LinearGelu")
    acme.edit("acme_ops/__init__.py", '"LinearGELU"', '"LinearGelu"')
    acme.edit("acme_ops/fusers.py", "LinearGELU", "LinearGelu")
    spec = acme.root / SPEC
    spec.write_text(spec.read_text().replace("LinearGELU", "LinearGelu"))
    done = acme.bcfg("diff", "HEAD")
    assert (done.returncode, done.stdout) == (2, "")
    assert f"{SPEC}:10:16: error: unknown symbol 'acme_ops.LinearGELU'" in done.stderr
    assert (
        "note: the project's own modules are imported from the working tree "
        f"({acme.root.resolve()}) for every revision\n" in done.stderr
    )
    assert "the specs at HEAD (" in done.stderr
