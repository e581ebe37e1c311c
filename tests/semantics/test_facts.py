"""The symbol table's cache: resolution without torch when the facts it needs are cached.

A warm ``bcfg generate`` after a spec edit must not import torch, yet say and
write exactly what a run without the cache says and writes. These tests pin
that for the table cached per torch version, with the shipped facts turned off
(as for a torch build bcfg ships none for; tests/semantics/test_shipped_facts.py
tests those): no torch in a warm run; the same output and the same errors,
did-you-mean suggestions and arity messages from cached facts as from live
objects; two paths to one object are one pattern whether their facts are cached
or not; and a deleted or corrupt table, or another torch version, falls back to
live resolution.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli import main
from generator.diagnostics import SpecError
from generator.infra import cache
from generator.semantics import facts, shipped
from generator.semantics.driver import resolve_specs
from tests.errors import cases, expected_path, run_case
from tests.support import REPO, scratch_project

ALLOW = facts.DEFAULT_ALLOW


@pytest.fixture(autouse=True)
def _no_shipped_facts(monkeypatch):
    """The cache alone: no shipped table (as for a torch build bcfg has none for)."""
    monkeypatch.setenv(shipped.ENV_SWITCH, "0")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A scratch project (pyproject, specs) with its own cache folder, as the working directory;
    without the specs that name the project's own Python (specs/hooks/: cortex_m, arm_tosa,
    cadence, nxp), whose facts are resolved live on every run by design: these tests are
    about torch's."""
    root = scratch_project(tmp_path, monkeypatch)
    for spec in (root / "specs").glob("*.bcfg"):
        if "specs.hooks" in spec.read_text(encoding="utf-8"):
            spec.unlink()
    shutil.rmtree(root / "specs" / "hooks")
    pyproject = root / "pyproject.toml"
    lines = pyproject.read_text().splitlines()
    pyproject.write_text("\n".join("allow = []" if x.startswith("allow =") else x for x in lines))
    return root


def add_pattern(root: Path) -> None:
    """The benchmark's edit: one more pattern in the x86 backend."""
    spec = root / "specs" / "x86.bcfg"
    text = spec.read_text(encoding="utf-8").rstrip().removesuffix("}")
    spec.write_text(
        text + "    pattern (nn.Softmax, nn.Conv1d) { dtypes: default_quint8 }\n}\n",
        encoding="utf-8",
    )


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.py"))}


def symbol_entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "xdg" / "bcfg" / "symbols").glob("*.json"))


def cached_resolve(root: Path, text: str, name: str = "t.bcfg"):
    """Resolve one spec with the cached table, as a run does (and save what it learned)."""
    spec = root / name
    spec.write_text(text, encoding="utf-8")
    table = facts.TorchFacts.cached(ALLOW)
    try:
        return resolve_specs(root, [spec], ALLOW, table)
    finally:
        table.save()


def messages(root: Path, text: str, cached: bool) -> list[tuple[str, str, str | None]]:
    spec = root / "t.bcfg"
    spec.write_text(text, encoding="utf-8")
    table = facts.TorchFacts.cached(ALLOW) if cached else None
    with pytest.raises(SpecError) as exc:
        resolve_specs(root, [spec], ALLOW, table)
    return [(str(d.span), d.message, d.hint) for d in exc.value.diagnostics]


def refuse_live_resolution(monkeypatch) -> None:
    """From now on, fail the test if any path is resolved live (forgetting those resolved so far)."""

    def refuse(path: str, allow):
        raise AssertionError(f"{path} was resolved live")

    monkeypatch.setattr(facts, "_found", {})
    monkeypatch.setattr(facts, "_resolve", refuse)


def test_a_warm_generate_after_an_edit_imports_no_torch_and_writes_what_a_cold_one_does(
    project, tmp_path, monkeypatch
):
    code = (
        "import sys\n"
        "from generator.cli import main\n"
        "code = main(['generate'])\n"
        "print(code, 'torch' in sys.modules)\n"
    )

    def generate() -> subprocess.CompletedProcess:
        # Both runs in fresh interpreters, so that both see the generator as it is now.
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    out = generate()
    assert out.stdout.strip() == "0 True", out.stdout + out.stderr
    add_pattern(project)
    out = generate()
    assert out.stdout.strip() == "0 False", out.stdout + out.stderr
    assert "wrote generated/x86.py" in out.stderr
    cold = tmp_path / "cold"
    shutil.copytree(project / "specs", cold / "specs")
    shutil.copy(project / "pyproject.toml", cold / "pyproject.toml")
    monkeypatch.chdir(cold)
    monkeypatch.setenv("BCFG_NO_CACHE", "1")
    assert main(["generate"]) == 0
    assert files(cold / "generated") == files(project / "generated")


def test_a_warm_run_takes_every_fact_from_the_table(project, monkeypatch):
    assert main(["generate"]) == 0
    before = files(project / "generated")
    add_pattern(project)
    refuse_live_resolution(monkeypatch)
    assert main(["generate"]) == 0
    after = files(project / "generated")
    # Only the module whose configs changed is rewritten (not __init__.py).
    assert [n for n in before if before[n] != after[n]] == ["x86.py"]


@pytest.mark.parametrize("cached", ["F.avg_pool2d", "torch._C._nn.avg_pool2d", "both"])
def test_two_paths_to_one_object_are_one_pattern_cached_or_not(project, monkeypatch, cached):
    paths = ["F.avg_pool2d", "torch._C._nn.avg_pool2d"] if cached == "both" else [cached]
    ds = "{ dtypes: {input: quint8, output: quint8} }"
    backends = "".join(f"backend b{i} {{ pattern {p} {ds} }}\n" for i, p in enumerate(paths))
    cached_resolve(project, backends, "learn.bcfg")
    both = (
        f"backend b {{\n  pattern F.avg_pool2d {ds}\n  pattern torch._C._nn.avg_pool2d {ds}\n}}\n"
    )
    live = messages(project, both, cached=False)
    assert live[0][1].startswith("pattern torch._C._nn.avg_pool2d is already defined at t.bcfg:2")
    if cached == "both":
        refuse_live_resolution(monkeypatch)
    assert messages(project, both, cached=True) == live


def test_unknown_names_get_the_live_error_and_suggestion(project):
    assert main(["generate"]) == 0
    text = "backend b {\n  pattern nn.Conv2D {}\n  pattern Linear {}\n  pattern F.relux {}\n}\n"
    live = messages(project, text, cached=False)
    assert messages(project, text, cached=True) == live
    assert live == [
        ("t.bcfg:2:11", "unknown symbol 'torch.nn.Conv2D'", "did you mean 'nn.Conv2d'?"),
        ("t.bcfg:3:11", "unknown symbol 'Linear'", "did you mean 'nn.Linear'?"),
        ("t.bcfg:4:11", "unknown symbol 'torch.nn.functional.relux'", "did you mean 'F.relu'?"),
    ]
    assert "torch.nn.Conv2D" not in facts.TorchFacts.cached(ALLOW)


def test_the_error_corpus_reads_the_same_from_a_warm_table(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for _ in ("cold", "warm"):
        for name in cases():
            assert run_case(name) == expected_path(name).read_text(encoding="utf-8"), name
    from generator.config import find_project

    table = facts.TorchFacts.cached(find_project(REPO).allow)  # the corpus runs with the repo's
    assert "torch.ao.nn.intrinsic.ConvAdd2d" in table  # fuse_call_arity's, from the cache


def test_cached_signatures_bind_as_the_live_ones(project, tmp_path):
    assert main(["generate"]) == 0
    (entry,) = symbol_entries(tmp_path)
    paths = json.loads(entry.read_text(encoding="utf-8"))["value"]["sigs"]
    assert paths, "the specs' fusers have signatures"
    table = facts.TorchFacts.cached(ALLOW)
    for path in paths:
        sig = table.signature(path)
        live = inspect.signature(facts.resolve(path, ALLOW).obj)
        assert sig is not None and sig.text == str(live)
        for n in range(6):
            try:
                live.bind(*([None] * n))
                want = None
            except TypeError as exc:
                want = str(exc)
            assert sig.bind_error(n) == want, (path, n)


def test_only_torch_and_operator_facts_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    allow = (*ALLOW, "math")
    spec = tmp_path / "t.bcfg"
    spec.write_text("backend b {\n  pattern math.floor {}\n  pattern operator.add {}\n}\n")
    table = facts.TorchFacts.cached(allow)
    resolve_specs(tmp_path, [spec], allow, table)
    table.save()
    again = facts.TorchFacts.cached(allow)
    assert "operator.add" in again and "math.floor" not in again


def test_another_torch_version_misses(project, monkeypatch):
    assert main(["generate"]) == 0
    assert "torch.nn.Conv2d" in facts.TorchFacts.cached(ALLOW)
    real = cache.dist_version
    monkeypatch.setattr(
        cache, "dist_version", lambda name: "9.9.9" if name == "torch" else real(name)
    )
    assert "torch.nn.Conv2d" not in facts.TorchFacts.cached(ALLOW)


def _damage(entry: Path, how: str) -> None:
    if how == "deleted":
        entry.unlink()
        return
    if how == "garbage":
        entry.write_text("{not json", encoding="utf-8")
        return
    data = json.loads(entry.read_text(encoding="utf-8"))
    facts = data["value"]["facts"]
    if how == "wrong shape":
        facts["torch.nn.Conv2d"] = ["module", "torch"]
    elif how == "unknown kind":
        facts["torch.nn.Conv2d"][0] = "gadget"
    elif how == "identity elsewhere":
        facts["torch.nn.Conv2d"][2] = "torch.nn.nowhere"
    elif how == "bad signature":
        path = next(iter(data["value"]["sigs"]))
        data["value"]["sigs"][path] = ["(a)", [["a", "SOMETIMES", False]]]
    entry.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    "how",
    [
        "deleted",
        "garbage",
        "wrong shape",
        "unknown kind",
        "identity elsewhere",
        "bad signature",
    ],
)
def test_a_deleted_or_corrupt_table_falls_back_to_live_resolution(project, tmp_path, how):
    assert main(["generate"]) == 0
    before = files(project / "generated")
    (entry,) = symbol_entries(tmp_path)
    _damage(entry, how)
    assert "torch.nn.Conv2d" not in facts.TorchFacts.cached(ALLOW)
    (project / "generated" / "x86.py").unlink()
    assert main(["generate"]) == 0
    assert files(project / "generated") == before
    assert "torch.nn.Conv2d" in facts.TorchFacts.cached(ALLOW)  # written again
