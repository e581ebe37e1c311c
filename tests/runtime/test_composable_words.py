"""A composable quantizer's report says what split a pattern (issue 53.7): a stage that sees
only part of a chain (``set_module_type`` of the conv, ``add_stage`` of the linear's op)
matches that part alone; the rest of the chain's match is rejected, and its float op said
only "linear was matched first". It now names the match that took it and what that means."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from tests.live.pt2e_support import generate, symmetric_config  # noqa: E402

SPEC = """
    dtypes s = {input: qint8, output: qint8, weight: qint8}
    quantizer t { fx: false  scopes: composable }
    backend t {
        pattern (aten.linear.default, aten.relu.default) { dtypes: s }
        pattern aten.linear.default { dtypes: s }
    }
"""


def test_a_stage_that_splits_a_chain_is_named_in_the_float_ops_detail(tmp_path):
    q = generate(tmp_path, SPEC)().report(None)
    config = symmetric_config("per_tensor")
    q.add_stage(config, [torch.ops.aten.linear.default]).set_global_stage(config)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).eval()
    gm = torch.export.export(model, (torch.randn(2, 4),)).module()
    q.annotate(gm)
    relu = next(e for e in q.last_report.entries if e.op == "aten.relu.default")
    assert not relu.quantized
    assert "linear was matched first, by pattern aten.linear.default of stage 1" in relu.detail
    assert "not quantized together" in relu.detail
