"""``bcfg diff`` on the PT2E-only targets of other runtime bases (``scopes: composable``):
specs/arm_tosa.bcfg, specs/cortex_m.bcfg and specs/cadence.bcfg, a pattern edited in each,
said in text, markdown and JSON, with where the spec writes it."""

from __future__ import annotations

import json

import pytest

from tests.support import REPO
from tests.tools.test_diff import bcfg, edit, repo  # noqa: F401 (repo: a fixture)


def line(target: str, after: str, needle: str) -> int:
    """The line of the first ``needle`` at or after the first line with ``after`` in the spec."""
    lines = (REPO / "specs" / f"{target}.bcfg").read_text(encoding="utf-8").splitlines()
    start = next(i for i, text in enumerate(lines) if after in text)
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


DIV = line("cortex_m", "for op in [aten.div.Tensor, aten.div_.Tensor]", "dtypes: [io8, io16]")
TANH = line("arm_tosa", "aten.tanh.default", "pattern op {}")
POOL = line("cadence", "pattern aten.max_pool2d.default {", "pattern")


def narrow_div(text: str) -> str:
    div = "    for op in [aten.div.Tensor, aten.div_.Tensor] {\n        pattern op {\n"
    return text.replace(div + "            dtypes: [io8, io16]", div + "            dtypes: io8")


def drop_tanh(text: str) -> str:
    return text.replace("aten.atan.default, aten.tanh.default,", "aten.atan.default,")


def not_eager(text: str) -> str:
    pool = "    pattern aten.max_pool2d.default {\n        observation: shared_observer\n"
    pool += "        dtypes: A8W8\n"
    return text.replace(pool + "        pt2e: {eager: true}\n", pool)


CASES = {
    "cortex_m": (
        narrow_div,
        "cortex_m\n  ~ dtypes: - io16  narrowing\n"
        "      in 2 patterns: aten.div.Tensor, aten.div_.Tensor\n"
        f"      at specs/cortex_m.bcfg:{DIV}\n",
        {"pattern": "aten.div.Tensor", "change": "changed", "field": "dtypes", "before": "io16"},
        "| ✏️ changed | `aten.div.Tensor`, `aten.div_.Tensor` | `dtypes` | − `io16` | — "
        f"| ⚠️ narrowing | specs/cortex_m.bcfg:{DIV} |",
    ),
    "arm_tosa": (
        drop_tanh,
        f"arm_tosa\n  - aten.tanh.default  narrowing\n      was specs/arm_tosa.bcfg:{TANH}\n",
        {
            "pattern": "aten.tanh.default",
            "change": "removed",
            "was": f"specs/arm_tosa.bcfg:{TANH}:9",
        },
        "| ➖ removed | `aten.tanh.default` | — | — | — | ⚠️ narrowing "
        f"| was specs/arm_tosa.bcfg:{TANH} |",
    ),
    "cadence": (
        not_eager,
        "cadence\n  ~ pt2e: - {eager: true}  narrowing\n      in aten.max_pool2d.default\n"
        f"      at specs/cadence.bcfg:{POOL}\n",
        {"pattern": "aten.max_pool2d.default", "field": "pt2e", "before": "{eager: true}"},
        "| ✏️ changed | `aten.max_pool2d.default` | `pt2e` | − `{eager: true}` | — "
        f"| ⚠️ narrowing | specs/cadence.bcfg:{POOL} |",
    ),
}


SUMMARIES = {
    "cortex_m": "1 backend changed: 0 patterns added, 0 removed, 2 changed, 0 moved; "
    "narrows 2 patterns (user models may stop being quantized)",
    "arm_tosa": "1 backend changed: 0 patterns added, 1 removed, 0 changed, 0 moved; "
    "narrows 1 pattern (user models may stop being quantized)",
    "cadence": "1 backend changed: 0 patterns added, 0 removed, 1 changed, 0 moved; "
    "narrows 1 pattern (user models may stop being quantized)",
}


@pytest.mark.parametrize("target", sorted(CASES))
def test_a_pattern_edited_in_each_format(repo, capsys, target):  # noqa: F811
    change, text, change_json, row = CASES[target]
    spec = repo / "specs" / f"{target}.bcfg"
    before = spec.read_text()
    edit(spec, change)
    assert spec.read_text() != before, "the edit no longer applies to the spec"
    code, out, err = bcfg(capsys, "--exit-code")
    assert (code, err) == (1, "")
    assert text in out
    assert out.splitlines()[-1] == SUMMARIES[target]
    code, out, _ = bcfg(capsys, "--format", "json")
    changes = json.loads(out)["changes"]
    assert {c["backend"] for c in changes} == {target}
    assert changes[0].items() >= change_json.items() and changes[0]["severity"] == "narrowing"
    code, out, _ = bcfg(capsys, "--format", "markdown")
    assert f"#### {target}" in out and row in out
