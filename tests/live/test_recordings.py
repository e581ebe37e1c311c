"""The full tier's check of the recordings: made again now, they are the checked-in ones.

``python -m tests.record`` runs every reference quantizer on its zoo again (Cortex-M and
Arm TOSA in the Arm environment) into a folder of its own; each target's recording must
say what the checked-in one says (the annotations, model by model, and what made it). A
difference means a reference, a zoo or a pinned version changed: re-record
(``python -m tests.record``) and review the change of ``tests/recordings/``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.record import ROOT, folder
from tests.support import REPO
from tests.targets import TARGETS

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")


@pytest.fixture(scope="module")
def again(tmp_path_factory):
    root = tmp_path_factory.mktemp("recordings")
    run = subprocess.run(
        [sys.executable, "-m", "tests.record", "--root", str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return root


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_the_reference_annotates_as_recorded(again, target):
    theirs = json.loads((folder(target, ROOT) / "recording.json").read_text())
    now = json.loads((folder(target, again) / "recording.json").read_text())
    changed = [m for m in theirs["models"].keys() | now["models"].keys()
               if theirs["models"].get(m) != now["models"].get(m)]  # fmt: skip
    assert changed == [], f"re-record: {theirs['command']}"
    assert {k: v for k, v in theirs.items() if k != "models"} == {
        k: v for k, v in now.items() if k != "models"
    }
