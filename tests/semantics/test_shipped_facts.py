"""The torch facts bcfg ships: which build a table belongs to, and what it answers.

A table applies to the one torch build it was made from, unedited: these tests
build a fake install (a ``torch/`` folder and its dist-info) and check that a
table is found for it and refused for another RECORD, an edited file, another
Python; that missing names come out as the live resolver says them; and that
a table in use resolves the project's specs, and every error of the corpus,
exactly as live resolution does. tests/live/test_facts_table.py checks that
the tables equal what the installed torch says.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.infra import write
from generator.semantics import facts, shipped
from tests.errors import cases, expected_path, run_case
from tests.support import REPO, shipped_table

ALLOW = facts.DEFAULT_ALLOW


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class FakeInstall:
    """A site folder with a ``torch`` package, its dist-info, and a table folder for it."""

    def __init__(self, root: Path, version: str = "9.9.9"):
        self.site = root / "site"
        self.tables = root / "tables"
        self.version = version
        (self.site / "torch").mkdir(parents=True)
        self.tables.mkdir()
        self.files = {"torch/__init__.py": b"", "torch/x.py": b"A = 1\n"}
        for rel, data in self.files.items():
            (self.site / rel).write_bytes(data)
        self.info = self.site / f"torch-{version}.dist-info"
        self.info.mkdir()
        self.write_record()

    def write_record(self, extra: str = "") -> None:
        lines = [f"{rel},sha256={_b64(data)},{len(data)}" for rel, data in self.files.items()]
        lines += ["../../bin/torchrun,sha256=abc,3", f"{self.info.name}/RECORD,,", extra]
        record = self.info / "RECORD"
        record.write_text("\n".join(lines) + "\n")
        later = time.time() + 10  # written after the files, as installers do
        os.utime(record, (later, later))

    @property
    def build(self) -> shipped.Build:
        return shipped.Build(self.site, self.version, self.info / "RECORD")

    def write_table(self, **changes) -> Path:
        digest, _ = shipped.record_digest((self.info / "RECORD").read_bytes())
        header = {
            "format": shipped.FORMAT,
            "torch": self.version,
            "python": shipped.python_tag(),
            "record": digest,
            "files": [["torch/x.py", len(self.files["torch/x.py"])]],
            **changes,
        }
        body = {
            "facts": {"torch": ["namespace", "torch", "torch", None]},
            "sigs": {},
            "unknown": {},
            "spaces": {"torch": {"module": True, "dir": ["x"], "more": [], "subs": ["x"]}},
        }
        path = self.tables / shipped.table_name(self.version, digest)
        path.write_text(json.dumps(header) + "\n" + json.dumps(body))
        return path


@pytest.fixture
def fake(tmp_path, monkeypatch):
    install = FakeInstall(tmp_path)
    install.write_table()
    monkeypatch.setattr(shipped, "FOLDER", install.tables)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(shipped.ENV_SWITCH, raising=False)
    return install


def test_the_table_of_the_build_is_found(fake):
    table = shipped.load(fake.build)
    assert table is not None and table.version == "9.9.9"
    assert table.missing("torch.y") == ("unknown symbol 'torch.y'", None)
    assert table.missing("torch.x") is None  # it exists: only live resolution can say more


def test_the_digest_leaves_out_what_the_installer_adds(fake):
    """Scripts (with the interpreter's path), byte code and dist-info files are not the build."""
    before = shipped.load(fake.build)
    fake.write_record(extra="torch/__pycache__/x.cpython-311.pyc,,")
    text = (fake.info / "RECORD").read_text().replace("torchrun,sha256=abc", "torchrun,sha256=xyz")
    (fake.info / "RECORD").write_text(text)
    later = time.time() + 20
    os.utime(fake.info / "RECORD", (later, later))
    after = shipped.load(fake.build)
    assert before is not None and after is not None and after.digest == before.digest


def test_another_record_has_no_table(fake):
    fake.files["torch/y.py"] = b"B = 2\n"
    (fake.site / "torch" / "y.py").write_bytes(b"B = 2\n")
    fake.write_record()
    assert shipped.load(fake.build) is None


def test_another_version_or_python_or_format_has_no_table(fake):
    assert shipped.load(shipped.Build(fake.site, "9.9.8", fake.build.record)) is None
    fake.write_table(python="2.7")
    assert shipped.load(fake.build) is None
    fake.write_table(format=shipped.FORMAT + 1)
    assert shipped.load(fake.build) is None


def test_the_switch_turns_the_tables_off(fake, monkeypatch):
    monkeypatch.setenv(shipped.ENV_SWITCH, "0")
    assert shipped.load(fake.build) is None


@pytest.mark.parametrize("how", ["longer", "same size", "deleted"])
def test_an_edited_file_has_no_table(fake, how):
    x = fake.site / "torch" / "x.py"
    if how == "deleted":
        x.unlink()
    else:
        x.write_bytes(b"A = 22\n" if how == "longer" else b"A = 2\n")
        later = time.time() + 60
        os.utime(x, (later, later))
    assert shipped.load(fake.build) is None


def test_a_copy_without_its_times_is_checked_by_hash_once(fake, tmp_path):
    x = fake.site / "torch" / "x.py"
    later = time.time() + 60
    os.utime(x, (later, later))  # newer than RECORD, as after `cp -r`
    assert shipped.load(fake.build) is not None
    entries = list((tmp_path / "xdg" / "bcfg" / "torch-files").glob("*.json"))
    assert len(entries) == 1  # the check is cached for this state of the file
    x.write_bytes(b"A = 2\n")  # then edited, same size
    os.utime(x, (later + 5, later + 5))
    assert shipped.load(fake.build) is None


@pytest.mark.parametrize(
    "damage, where",
    [
        (lambda text: text[: len(text) - 40], "body"),  # cut short
        (lambda text: text.replace("\n", "\n<<<<<<< HEAD\n", 1), "body"),  # conflicted
        (lambda text: text.rsplit("\n", 1)[0] + '\n{"facts": []}', "body"),  # another shape
        (lambda text: "<<<<<<< HEAD\n" + text, "header"),
        (lambda text: text.replace('"record": "', '"record": "0', 1), "header"),
    ],
)
def test_a_damaged_table_is_no_table_with_one_warning(fake, capsys, damage, where):
    path = fake.write_table()
    path.write_text(damage(path.read_text()))
    table = shipped.load(fake.build)
    if where == "header":
        assert table is None
    else:
        assert table is not None  # the body is read on first use
        for _ in range(2):
            assert table.facts == {} and table.missing("torch.y") is None  # nothing known
    assert shipped.load(fake.build) is None or where == "body"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err
    assert err.startswith(f"bcfg: warning: the torch facts table {path} is damaged (")
    assert err.endswith(
        "torch facts are found by importing torch instead (slower; reinstall bcfg to repair the table)\n"
    )


def _installed_build(site: Path) -> str:
    code = "from generator.semantics import shipped; b = shipped.installed_build(); print(b and b.version)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_the_build_is_the_torch_import_finds(fake):
    assert _installed_build(fake.site) == "9.9.9"
    (fake.site / "torch-9.9.8.dist-info").mkdir()  # two installs in one folder: none to trust
    assert _installed_build(fake.site) == "None"


def test_a_source_tree_is_no_build(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    assert _installed_build(tmp_path) == "None"


# ------------------------------------------------------------------ the installed build's table


@pytest.fixture
def table():
    return shipped_table()


def test_the_error_corpus_reads_the_same_from_the_shipped_table(table, tmp_path, monkeypatch):
    """Every error and did-you-mean of the corpus, with missing names answered by the table."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(facts, "torch_imported", lambda: False)
    answered = []
    real = shipped.Shipped.missing

    def missing(self, path):
        found = real(self, path)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(shipped.Shipped, "missing", missing)
    for name in cases():
        assert run_case(name) == expected_path(name).read_text(encoding="utf-8"), name
    assert sum(answered) >= 20  # the corpus's unknown names came from the table


def test_a_user_module_naming_a_torch_object_gets_its_identity(table, tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text("import torch\nConv = torch.nn.Conv2d\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    base = facts.TorchFacts((*ALLOW, "mine"), base=table)
    assert base.lookup("mine.Conv").identity == base.lookup("torch.nn.Conv2d").identity
    live = facts.TorchFacts((*ALLOW, "mine"))
    assert live.lookup("mine.Conv").identity == live.lookup("torch.nn.Conv2d").identity


def test_commands_with_a_table_cut_short_run_on_live_facts(table, tmp_path, monkeypatch, capsys):
    """The installed build's table cut short: a command warns once and does what it would
    without a table (here: an unknown name's error, found live)."""
    from generator.cli import main
    from tests.support import scratch_project

    assert table.path is not None
    copy = tmp_path / "tables"
    copy.mkdir()
    text = table.path.read_bytes()
    (copy / table.path.name).write_bytes(text[: len(text) // 2])
    monkeypatch.setattr(shipped, "FOLDER", copy)
    monkeypatch.setattr(shipped, "_WARNED", set())
    root = scratch_project(tmp_path, monkeypatch)
    (root / "specs" / "bad.bcfg").write_text(
        "dtypes d = {input: quint8, output: quint8}\nbackend bad { pattern nn.ReLUU { dtypes: d } }\n"
    )
    assert main(["check", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("is damaged") == 1 and "internal error" not in err
    assert f"bcfg: warning: the torch facts table {copy / table.path.name} is damaged" in err
    assert "nn.ReLUU" in err and "did you mean 'nn.ReLU'" in err


def test_a_name_outside_torch_is_learned_without_torch(table):
    """operator's names resolve live; the shipped torch identities are not resolved for them."""
    code = (
        "import sys\n"
        "from generator.semantics import facts\n"
        "t = facts.TorchFacts.cached()\n"
        "assert t.shipped\n"
        "f = t.lookup('operator.add')\n"
        "t.lookup('torch.nn.Conv2d'); t.lookup('torch.quint8')\n"
        "print(f.identity, 'torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert out.stdout.split() == ["operator.add", "False"], out.stderr


_RUN = """
import contextlib, io, sys
from generator.cli import main
codes = []
with contextlib.redirect_stdout(io.StringIO()):
    for argv in {argvs!r}:
        codes.append(main(argv))
print(codes, 'torch' in sys.modules)
"""


def test_commands_on_a_fresh_clone_import_no_torch_and_write_what_a_live_run_does(
    table, project_copy, tmp_path
):
    """generate (cache empty, generated/ and docs/ emptied), docs and explain: no torch."""
    # Only what bcfg writes: docs/ also holds the documentation site's own pages.
    owned = {"generated": write.MODULES, "docs": write.DOCS}
    for folder, kind in owned.items():
        for p in kind.files(project_copy / folder):
            p.unlink()
    argvs = [["generate", "-q"], ["docs", "-q"], ["explain", "x86", "nn.Conv2d"]]
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop(shipped.ENV_SWITCH, None)
    run = subprocess.run(
        [sys.executable, "-c", _RUN.format(argvs=argvs)],
        cwd=project_copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.stdout.split("]")[-1].strip() == "False", run.stdout + run.stderr
    assert run.stdout.startswith("[0, 0, 0]"), run.stdout + run.stderr
    for folder, kind in owned.items():
        ours = {p.relative_to(project_copy / folder): p for p in kind.files(project_copy / folder)}
        theirs = {p.relative_to(REPO / folder): p for p in kind.files(REPO / folder)}
        assert ours and sorted(ours) == sorted(theirs)
        for rel, p in ours.items():
            assert p.read_bytes() == theirs[rel].read_bytes(), rel
