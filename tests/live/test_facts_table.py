"""The shipped torch facts are what the installed torch says (``live.facts_table``).

The table of the installed build is made again, in a fresh interpreter, and
must equal the shipped file byte for byte (a spec that names something new, or
another torch, needs ``python -m generator.live.facts_table``: README, "Torch
facts"). What the table says of names it does not hold, that they are missing
and what to suggest, is checked against live resolution on misspellings of
a fixed quarter of the names its namespaces list (all of them with
BCFG_EVERY_NAME=1). And every shipped table, of any torch version,
must decide every name the project's specs ask about, so that no run on a
supported torch imports it for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.config import TORCH_VERIFIED, find_project
from generator.semantics import facts, shipped
from generator.semantics.driver import resolve_specs
from tests.support import REPO, shipped_table

ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}


@pytest.fixture(scope="module")
def installed() -> shipped.Shipped:
    return shipped_table()


def test_the_shipped_table_is_what_the_installed_torch_says(installed):
    run = subprocess.run(
        [sys.executable, "-m", "generator.live.facts_table", "--check"],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, (
        run.stdout + run.stderr + "\nregenerate: python -m generator.live.facts_table"
    )
    assert "unreviewed" not in run.stderr, run.stderr


# Misspell a fixed quarter of the listed names four ways (every name: BCFG_EVERY_NAME=1,
# about four times as long); compare what the table says with torch.
_MISSPELLINGS = """
import json
import os
import zlib
from generator.live import facts_table
from generator.semantics import facts, shipped

facts_table.make()  # the state the table was made in: torch imported, its names resolved
table = shipped.load()
out = {"same": 0, "undecided": 0, "live": 0, "wrong": []}
for prefix, space in sorted(table.spaces.items()):
    for name in space["dir"] + space["more"]:
        if zlib.crc32(name.encode()) % 4 and not os.environ.get("BCFG_EVERY_NAME"):
            continue
        for typo in {name + "x", name[:-1], name.swapcase(), "x" + name[1:]} - {"", name}:
            path = f"{prefix}.{typo}"
            said = table.missing(path)
            if said is not None and said[1] is None and facts._names_an_op(path):
                out["live"] += 1  # no did-you-mean for an op: a run asks torch (other namespaces)
                continue
            if said is None:
                out["undecided"] += 1
                continue
            try:
                facts.resolve(path, (path.partition(".")[0], *facts.DEFAULT_ALLOW))
                live = "exists"
            except facts.UnknownSymbol as exc:
                live = [exc.message, exc.suggestion]
            if live == list(said):
                out["same"] += 1
            else:
                out["wrong"].append([path, said, live])
print(json.dumps(out))
"""


def test_missing_names_are_what_torch_says(installed):
    run = subprocess.run(
        [sys.executable, "-c", _MISSPELLINGS],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.splitlines()[-1])
    assert found["wrong"] == []
    assert found["same"] > 10 * found["undecided"], found  # the listings decide nearly all


def test_every_shipped_table_decides_every_name_the_specs_ask(installed):
    """Names are asked as a run asks them (with the installed build's table); each table, of
    every torch version bcfg ships facts for, knows each name or that it is missing."""
    asked: dict[str, None] = {}

    class Recorder(facts.TorchFacts):
        def lookup(self, path):
            asked[path] = None
            return super().lookup(path)

        def signature(self, path):
            asked[path] = None
            return super().signature(path)

    project = find_project(REPO)
    recorder = Recorder(project.allow, base=installed)  # specs/hooks/: the project's own
    resolve_specs(project.root, project.spec_files(), project.allow, recorder)
    names = [n for n in asked if n.startswith("torch.")]
    assert len(names) > 200
    tables = sorted(shipped.FOLDER.glob("torch-*.json"))
    assert {t.name.split("-")[1].partition("+")[0] for t in tables} >= set(TORCH_VERIFIED)
    for path in tables:
        table = shipped.Shipped(path, "", path.name)
        undecided = [n for n in names if n not in table.facts and table.missing(n) is None]
        assert undecided == [], (path.name, undecided[:10])
        callables = [n for n in names if table.facts.get(n, ["value"])[0] != "value"]
        unsigned = [n for n in callables if table.facts[n][0] in _SIGNED and n not in table.sigs]
        assert unsigned == [], (path.name, unsigned[:10])


_SIGNED = ("module", "class", "function")
