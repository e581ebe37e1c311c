"""``bcfg diff`` over everything a git repository can hold.

Specs committed as symbolic links (to files, to folders, inside the repository
and out of it, dangling, in loops) are seen at a revision as ``bcfg check``
sees them on disk: the same names, the same errors. Objects a clone does not
hold (deleted, damaged, left out of a partial clone whose remote is gone)
are located errors, never an internal error, and git never fetches them.
File names that are not UTF-8 come out as valid UTF-8 in every format, and a
huge blob in history is refused from its size without being read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO
from tests.tools.test_diff import commit, git

RELU = (
    "backend {name} {{\n    pattern nn.{op} {{ dtypes: {{input: quint8, output: quint8}} }}\n}}\n"
)


def bcfg(cwd: Path, *args: str) -> tuple[int, str, str]:
    """``bcfg ARGS`` as a user runs it (a process of its own): exit code, stdout, stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.bcfg]\n")
    (root / "specs").mkdir(exist_ok=True)
    git(root, "init", "-q")
    return root


def resolved_names(cwd: Path) -> list[str]:
    """The spec files ``bcfg explain`` names for each backend of the working tree (as check)."""
    code, out, err = bcfg(cwd, "explain", "a", "--format", "json")
    assert code == 0, err
    return [json.loads(out)["spec_file"]]


# ------------------------------------------------------------------ symbolic links


def test_specs_committed_as_links_are_what_check_sees(tmp_path):
    root = project(tmp_path / "repo")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "o.bcfg").write_text(RELU.format(name="o", op="ReLU"))
    (root / "shared").mkdir()
    (root / "shared" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU"))
    (root / "lib").mkdir()
    (root / "lib" / "d.bcfg").write_text("dtypes d = {input: quint8, output: quint8}\n")
    (root / "specs" / "a.bcfg").symlink_to("../shared/a.bcfg")  # a file, relative
    (root / "specs" / "o.bcfg").symlink_to(outside / "o.bcfg")  # a file outside the repository
    (root / "specs" / "lib").symlink_to(root / "lib")  # a folder, absolute, inside
    (root / "specs" / "c.bcfg").write_text(
        'import "lib/d.bcfg"\nbackend c {\n    pattern nn.ReLU { dtypes: d }\n}\n'
    )
    commit(root, "one")
    (root / "shared" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU6"))
    (root / "lib" / "d.bcfg").write_text("dtypes d = {input: qint8, output: qint8}\n")
    commit(root, "two")

    code, out, err = bcfg(root, "diff", "HEAD~1", "HEAD", "--format", "json")
    assert code == 0, err
    changes = json.loads(out)["changes"]
    assert {(c["backend"], c["change"], c["pattern"]) for c in changes} == {
        ("a", "removed", "nn.ReLU"),
        ("a", "added", "nn.ReLU6"),
        ("c", "changed", "nn.ReLU"),
    }
    # Named where the links lead, as bcfg check names them on disk.
    assert resolved_names(root) == ["shared/a.bcfg"]
    wheres = {c["where"].rsplit(":", 2)[0] for c in changes if c["where"]}
    assert wheres == {"shared/a.bcfg", "lib/d.bcfg"}
    code, out, err = bcfg(root, "diff", "--exit-code")  # HEAD against the working tree
    assert (code, err) == (0, "") and "no semantic change" in out


def test_a_spec_folder_linked_out_of_the_repository_is_read_from_disk(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "o.bcfg").write_text(RELU.format(name="o", op="ReLU"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.bcfg]\n")
    (root / "specs").symlink_to(outside)
    git(root, "init", "-q")
    commit(root, "one")
    git(root, "commit", "-q", "--allow-empty", "-m", "two")
    code, out, err = bcfg(root, "diff", "HEAD~1", "HEAD")
    assert (code, err) == (0, "") and "no semantic change" in out


@pytest.mark.parametrize("kind", ["dangling", "loop", "folder"])
def test_a_broken_link_is_the_error_check_gives_at_its_revision(tmp_path, kind):
    root = project(tmp_path / "repo")
    (root / "specs" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU"))
    if kind == "dangling":
        (root / "specs" / "b.bcfg").symlink_to("missing.bcfg")
    elif kind == "folder":
        (root / "specs" / "b.bcfg").mkdir()
        (root / "specs" / "b.bcfg" / "inside").write_text("a file, so git keeps the folder\n")
    else:
        (root / "specs" / "b.bcfg").symlink_to("c.bcfg")
        (root / "specs" / "c.bcfg").symlink_to("b.bcfg")
    commit(root, "one")
    git(root, "commit", "-q", "--allow-empty", "-m", "two")

    check, _, on_disk = bcfg(root, "check")
    code, out, err = bcfg(root, "diff", "HEAD~1", "HEAD")
    assert (check, code, out) == (2, 2, "")
    assert "internal error" not in err
    disk = [line.split(": error: ")[0] for line in on_disk.splitlines() if ": error: " in line]
    at = [line.split(": error: ")[0] for line in err.splitlines() if ": error: " in line]
    assert at == disk and disk  # the same files, at the same places
    why = {"dangling": "no such file", "folder": "it is a folder"}.get(
        kind, "too many levels of symbolic links"
    )
    assert f"at HEAD~1: {why}" in err


# ------------------------------------------------------------------ objects git lacks


def two_revisions(root: Path) -> Path:
    project(root)
    (root / "specs" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU"))
    commit(root, "one")
    (root / "specs" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU6"))
    commit(root, "two")
    return root


def object_file(root: Path, rev: str) -> Path:
    oid = git(root, "rev-parse", rev).strip()
    return root / ".git" / "objects" / oid[:2] / oid[2:]


@pytest.mark.parametrize("damage", ["missing blob", "corrupt blob", "missing tree"])
def test_objects_git_cannot_read_are_located_errors(tmp_path, damage):
    root = two_revisions(tmp_path / "repo")
    rev = "HEAD~1:specs" if damage == "missing tree" else "HEAD~1:specs/a.bcfg"
    path = object_file(root, rev)
    path.chmod(0o644)
    if damage.startswith("missing"):
        path.unlink()
    else:
        path.write_bytes(b"this is no zlib stream")
    code, out, err = bcfg(root, "diff", "HEAD~1", "HEAD", "--format", "json")
    assert (code, out) == (2, "")
    assert "internal error" not in err and "Traceback" not in err
    if damage == "missing tree":
        assert err.startswith("bcfg diff: cannot list specs/: git cannot read specs at HEAD~1")
    else:
        assert err.startswith(
            "specs/a.bcfg:1:1: error: cannot read specs/a.bcfg at HEAD~1: this clone does not "
            "hold its content"
        )


def test_a_partial_clone_never_fetches(tmp_path):
    """Blobs a partial clone left out are errors at once, even while its remote is reachable:
    git is never allowed to fetch them (so never waits on a network)."""
    source = two_revisions(tmp_path / "source")
    git(source, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", "--filter=blob:none", source.as_uri(), str(clone))
    missing = git(clone, "rev-list", "--objects", "--missing=print", "--all")
    assert "?" in missing  # the older blob is not in the clone
    for reachable in (True, False):
        if not reachable:
            shutil.move(source, tmp_path / "gone")
        code, out, err = bcfg(clone, "diff", "HEAD~1", "HEAD")
        assert (code, out) == (2, ""), err
        assert "this clone does not hold its content" in err and "bcfg never fetches" in err
        assert "internal error" not in err
    assert "?" in git(clone, "rev-list", "--objects", "--missing=print", "--all")  # nothing came


# ------------------------------------------------------------------ names and sizes


def test_file_names_that_are_not_utf8_give_valid_utf8_in_every_format(tmp_path):
    root = project(tmp_path / "repo")
    name = Path(os.fsdecode(b"specs/caf\xe9.bcfg"))
    (root / name).write_text(RELU.format(name="cafe", op="ReLU"))
    commit(root, "one")
    (root / name).write_text(RELU.format(name="cafe", op="ReLU6"))
    commit(root, "two")
    # Decoded strictly as UTF-8 (``bcfg``); the name shown with its byte escaped, as text of each
    # format (a Markdown backslash is written twice).
    for fmt, shown in (("text", "\\"), ("github", "\\"), ("markdown", "\\\\"), ("json", "\\\\")):
        code, out, err = bcfg(root, "diff", "HEAD~1", "HEAD", "--format", fmt)
        assert code == 0, err
        assert f"caf{shown}udce9.bcfg" in out
    data = json.loads(bcfg(root, "diff", "HEAD~1", "HEAD", "--format", "json")[1])
    assert {c["where"] for c in data["changes"]} == {
        "specs/caf\\udce9.bcfg:1:1",
        "specs/caf\\udce9.bcfg:2:5",
    }


def test_a_huge_blob_in_history_is_refused_by_its_size_with_bounded_memory(tmp_path):
    """The same diff over a 200 MB blob and over a small one peak at the same memory: the blob
    is refused from its size and never read (it took its size and more before)."""
    peaks = {}
    for size in (2, 200):
        root = project(tmp_path / f"repo{size}")
        (root / "specs" / "a.bcfg").write_text(RELU.format(name="a", op="ReLU"))
        with (root / "specs" / "huge.bcfg").open("w") as f:
            for _ in range(size):
                f.write("# padding\n" * 100_000)  # 1 MB a round
        commit(root, "one")
        (root / "specs" / "huge.bcfg").unlink()
        commit(root, "two")
        script = (
            "import resource, sys\n"
            "from generator.cli import main\n"
            "code = main(['diff', 'HEAD~1', 'HEAD'])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(code)\n"
        )
        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, env=env
        )
        *lines, peak_kb = done.stderr.strip().splitlines()
        assert done.returncode == 2
        mb = f"{size * 1_000_000 / (1 << 20):.1f} MB"
        assert (
            lines[0]
            == f"specs/huge.bcfg:1:1: error: the file is {mb}; bcfg reads specs of at most 1 MB"
        )
        peaks[size] = int(peak_kb) >> 10
    assert peaks[200] < peaks[2] + 50, f"{peaks} MB"
