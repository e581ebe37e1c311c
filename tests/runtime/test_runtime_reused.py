"""A module called twice, or two modules tied to one weight (pt2e ``reused_weight``): each call
quantized (``match``), or only the first (``decline``), in both annotation schemes."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e  # noqa: E402

from tests.live.pt2e_support import generate, symmetric_config  # noqa: E402

SPEC = """
    constraint act = qint8 {scale_min: 2 ** -12}
    dtypes s = {input: act, output: act, weight: qint8, bias: float}
    quantizer t { QUANTIZER }
    backend t {
        pattern nn.Conv2d { dtypes: s }
        pattern nn.Linear { dtypes: s  LINEAR }
    }
"""
SCHEMES = {"modules": "", "operators": "scopes: operators"}


class Reused(nn.Module):
    """A conv called twice; a linear called twice; a linear tied to the first one's weight."""

    def __init__(self) -> None:
        super().__init__()
        self.conv, self.fc, self.tied = nn.Conv2d(4, 4, 1), nn.Linear(4, 4), nn.Linear(4, 4)
        self.tied.weight = self.fc.weight

    def forward(self, x):
        y = self.conv(self.conv(x)).mean((2, 3))
        return self.tied(self.fc(self.fc(y)))


def quantized(scheme: str, quantizer: str, linear: str, tmp_path) -> dict[str, bool]:
    """For each conv and linear node: whether its weight is quantized there."""
    text = SPEC.replace("QUANTIZER", f"{SCHEMES[scheme]}  {quantizer}").replace("LINEAR", linear)
    tmp_path.mkdir(exist_ok=True)
    q = generate(tmp_path, text)().report(None)
    q.set_global(symmetric_config("per_tensor"))
    torch.manual_seed(0)
    gm = torch.export.export(Reused().eval(), (torch.randn(1, 4, 4, 4),)).module()
    prepare_pt2e(gm, q)
    out = {}
    for e in q.last_report.entries:
        if e.node.startswith(("conv2d", "linear")):
            out[e.node] = e.quantized
    return out


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_match_quantizes_every_call(scheme, tmp_path):
    assert quantized(scheme, "", "", tmp_path) == {
        "conv2d": True,
        "conv2d_1": True,
        "linear": True,
        "linear_1": True,
        "linear_2": True,
    }


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_decline_quantizes_the_first_call_only_and_a_pattern_overrides_it(scheme, tmp_path):
    assert quantized(scheme, "reused_weight: decline", "", tmp_path) == {
        "conv2d": True,
        "conv2d_1": False,
        "linear": True,
        "linear_1": False,
        "linear_2": False,  # its weight is fc's
    }
    linear = "pt2e: {reused_weight: match}"
    assert quantized(scheme, "reused_weight: decline", linear, tmp_path / "b") == {
        "conv2d": True,
        "conv2d_1": False,
        "linear": True,
        "linear_1": True,
        "linear_2": True,
    }


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_the_report_says_which_weight_was_taken(scheme, tmp_path):
    text = SPEC.replace("QUANTIZER", f"{SCHEMES[scheme]}  reused_weight: decline")
    q = generate(tmp_path, text.replace("LINEAR", ""))().report(None)
    q.set_global(symmetric_config("per_tensor"))
    torch.manual_seed(0)
    gm = torch.export.export(Reused().eval(), (torch.randn(1, 4, 4, 4),)).module()
    prepare_pt2e(gm, q)
    e = {e.node: e for e in q.last_report.entries}["conv2d_1"]
    assert e.reason == "annotated" and "conv_weight" in (e.detail or ""), (e.reason, e.detail)
