"""``examples/npu/``, a project of its own: in sync, warning-free, and explained by compat.

The example has its pyproject.toml (strict = true), specs/, generated/ and
npu_example.py. The site's NPU guide (docs/guides/npu.md) shows it: running
it, and what the guide shows, is checked by tests/docs/test_pages.py.
"""

from __future__ import annotations

import json
import sys

import pytest

from generator import cli
from tests.support import REPO

EXAMPLE = REPO / "examples" / "npu"
DEFAULT = "torch.ao.quantization:get_default_qconfig_mapping"


@pytest.fixture
def in_example(monkeypatch, capsys):
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def call(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def test_the_example_is_in_sync_and_warning_free(in_example):
    code, _, err = in_example("check")  # strict = true: a warning would fail it
    assert code == 0, err
    assert "warning" not in err


def test_compat_honours_the_example_mapping_and_explains_the_default(in_example):
    model = ("--model", "npu_example:model")
    code, out, err = in_example(
        "compat", "npu", "--qconfig-mapping", "npu_example:npu_qconfig_mapping", *model
    )
    assert code == 0, err
    assert out.splitlines()[-1] == "5 node(s): 5 honoured, 0 not honoured"
    code, out, _ = in_example(
        "compat", "npu", "--qconfig-mapping", DEFAULT, *model, "--format", "json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["honored"] == []
    for entry in doc["skipped"]:
        assert entry["closest"]["failures"][0]["message"] == (
            "eps 2**-23 is below the backend's scale_min 2**-10"
        )
        assert "eps=2**-10" in entry["suggested_qconfig"]
