"""The opt-in report of a generated quantizer (``quantizer.report()``, runtime ``report.py``):
why every op is quantized or left float, from the generated code alone."""

from __future__ import annotations

import copy
import io
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e  # noqa: E402

from tests.live.pt2e_support import dump, generate, symmetric_config  # noqa: E402
from tests.support import REPO  # noqa: E402

SPEC = """
    constraint act = qint8 {scale_min: 2 ** -12}
    dtypes s = {input: act, output: act, weight: qint8, bias: float}
    dtypes dyn = {input: act, output: float, weight: qint8, bias: float, dynamic: true}
    dtypes io = {input: act, output: act}
    backend t {
        pattern nn.Conv2d { dtypes: s }
        pattern (nn.Conv2d, nn.ReLU) { dtypes: s }
        pattern nn.Linear { dtypes: [s, dyn] }
        pattern torch.add { dtypes: io }
        pattern F.max_pool2d { observation: shared_observer  dtypes: io }
    }
    quantizer t {}
"""


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.conv(x)
        z = torch.add(F.relu(y), y)  # conv has two users: (conv, relu) cannot match
        p = F.max_pool2d(torch.sigmoid(z), 2)  # sigmoid: no rule; the pool shares its input's
        q = torch.add(p, x[:, :1, ::2, ::2].argmax(1, keepdim=True))  # an int64 input
        return self.fc(q.mean((2, 3)))


@pytest.fixture(scope="module")
def getter(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("report"), SPEC)


def exported(model=None):
    torch.manual_seed(0)
    model = (model or Net()).eval()
    return torch.export.export(model, (torch.randn(1, 3, 8, 8),)).module()


def by_node(report):
    return {e.node: e for e in report.entries}


def test_off_by_default_and_the_same_annotations_on(getter):
    gm = exported()
    plain = getter().set_global(symmetric_config("per_tensor"))
    annotated = dump(plain.annotate(copy.deepcopy(gm)))
    assert plain.last_report is None

    out = io.StringIO()
    q = getter().set_global(symmetric_config("per_tensor")).report(out)
    assert dump(q.annotate(copy.deepcopy(gm))) == annotated  # reporting changes nothing
    assert q.last_report is not None and out.getvalue() == q.last_report.text()


def test_every_op_gets_the_rule_that_quantized_it_or_the_reason_it_is_float(getter):
    q = getter().set_global(symmetric_config("per_tensor")).report(None)
    prepare_pt2e(exported(), q)
    report = q.last_report
    e = by_node(report)
    assert (e["conv2d"].quantized, e["conv2d"].rule, e["conv2d"].role) == (True, "nn.Conv2d", "op")
    assert e["conv2d"].specs == "x: int8, conv_weight: int8, output: int8"
    assert (e["add"].rule, e["linear"].rule) == ("torch.add", "nn.Linear")
    assert e["relu"].reason == "second_user"
    assert e["relu"].detail == (
        "pattern (nn.Conv2d, nn.ReLU): chain broke at conv2d: its output has other users (add)"
    )
    assert (e["sigmoid"].reason, e["mean"].reason) == ("no_rule", "no_rule")
    assert e["max_pool2d"].reason == "producer_float"
    assert e["max_pool2d"].detail == (
        "pattern F.max_pool2d: it shares its input's observer, and its input sigmoid is not "
        "quantized"
    )
    assert e["add_1"].reason == "non_float_input"
    assert e["add_1"].detail == (
        "pattern torch.add: activation input argmax is a torch.int64 tensor, not float32"
    )
    assert not any(x.deliberate for x in report.float_nodes if x.node != "argmax")
    assert report.matches == (
        ("nn.Conv2d", "global", 1),
        ("nn.Linear", "global", 1),
        ("torch.add", "global", 1),
    )
    text = report.text()
    assert text.startswith("t quantizer: 3 of ")
    assert "  relu " in text and "patterns matched:" in text
    assert report.as_dict()["nodes"][0]["node"] == "conv2d"


def test_configs_a_rule_does_not_take_and_scopes(getter):
    q = getter().set_global(symmetric_config("dynamic")).report(None)
    prepare_pt2e(exported(), q)
    e = by_node(q.last_report)
    assert e["linear"].quantized and "dynamic" in (e["linear"].specs or "")
    assert e["conv2d"].reason == "not_tried"
    assert e["conv2d"].detail == (
        "pattern nn.Conv2d allows static configs only; global config has "
        "input_activation.is_dynamic True"
    )

    # conv in module_name '0', relu in the global scope: the chain spans two scopes.
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.ReLU(), nn.Conv2d(4, 4, 1))
    cfg = symmetric_config("per_tensor")
    q = getter().set_global(cfg).set_module_name("0", cfg).set_module_name("2", None).report(None)
    prepare_pt2e(exported(model), q)
    e = by_node(q.last_report)
    assert e["conv2d"].scope == "module_name '0'" and e["conv2d"].rule == "nn.Conv2d"
    assert e["relu"].reason == "scope_filter"
    assert e["relu"].detail == (
        "pattern (nn.Conv2d, nn.ReLU): the match spans two configs' scopes (relu in another)"
    )
    assert e["conv2d_1"].reason == "no_config" and e["conv2d_1"].deliberate
    assert e["conv2d_1"].detail == "left float on purpose: module_name '2' config is None"


def test_a_config_the_dtypes_do_not_allow_is_reported_before_validate_raises(getter):
    from torchao.quantization.pt2e.observer import HistogramObserver
    from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec

    act = QuantizationSpec(torch.uint8, HistogramObserver, 0, 255, torch.per_tensor_affine)
    out = io.StringIO()
    q = getter().set_global(QuantizationConfig(act, act, None, None)).report(out)
    with pytest.raises(ValueError, match="do not allow"):
        prepare_pt2e(exported(), q)
    rejected = {e.node: e for e in q.last_report.rejected}
    assert set(rejected) >= {"add"}
    assert rejected["add"].detail == (
        "config global not allowed: input_activation.dtype is torch.uint8, "
        "the spec allows torch.int8 (dtype config io)"
    )
    assert "configs the rules do not allow" in out.getvalue()


def test_the_report_works_from_generated_code_alone(tmp_path):
    """The shipped xnnpack quantizer and its _bcfg_pt2e copy, in a folder of their own, with
    ``generator`` unimportable: the report prints on standard error."""
    pkg = tmp_path / "shipped"
    shutil.copytree(REPO / "generated" / "_bcfg_pt2e", pkg / "_bcfg_pt2e")
    shutil.copy(REPO / "generated" / "xnnpack_quantizer.py", pkg / "xnnpack_quantizer.py")
    (pkg / "__init__.py").write_text("")
    code = textwrap.dedent("""
        import sys
        sys.modules["generator"] = None  # bcfg is not installed
        import torch
        import torch.nn as nn
        from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
        from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config
        from shipped.xnnpack_quantizer import get_xnnpack_quantizer

        model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.ReLU(), nn.Sigmoid()).eval()
        gm = torch.export.export(model, (torch.randn(1, 3, 4, 4),)).module()
        q = get_xnnpack_quantizer().set_global(get_symmetric_quantization_config()).report()
        prepare_pt2e(gm, q)
        assert not any(m == "generator" or m.startswith("generator.") for m in sys.modules
                       if sys.modules[m] is not None)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "xnnpack quantizer: 2 of 3 op(s) quantized, 1 left float" in done.stderr
    assert "(nn.Conv2d, nn.ReLU)  global  1" in done.stderr
    assert "sigmoid  aten.sigmoid.default  no rule of the quantizer has aten.sigmoid.default" in (
        done.stderr
    )


def declines(model, config, accept):
    """A hook that annotates nothing (tests/runtime/test_report.py's spec names it)."""
    return False


def test_hooks_that_leave_an_op_are_named(tmp_path):
    getter = generate(
        tmp_path,
        SPEC.replace(
            "    }\n    quantizer",
            """
        pattern torch.mul { dtypes: io  pt2e: {annotate: tests.runtime.test_report.declines} }
        pattern torch.sub {
            dtypes: io
            pt2e: {annotate: tests.runtime.test_report.declines, aten: aten.sub.Tensor}
        }
    }
    quantizer""".replace("\n        ", "\n    "),
        ),
    )
    model = nn.Sequential(nn.Conv2d(3, 4, 1)).eval()

    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = model

        def forward(self, x):
            y = self.body(x)
            return (y * y) - y

    q = getter().set_global(symmetric_config("per_tensor")).report(None)
    prepare_pt2e(exported(Twice()), q)
    e = by_node(q.last_report)
    assert e["sub"].reason == "hook_declined"
    assert e["sub"].detail == "pattern torch.sub: declines left it"
    assert e["mul"].reason == "no_rule"
    assert e["mul"].detail == (
        "no rule of the quantizer has aten.mul.Tensor; the hooks of torch.mul (declines) did "
        "not annotate it"
    )
