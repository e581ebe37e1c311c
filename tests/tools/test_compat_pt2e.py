"""``bcfg compat --quantization-config`` as a user runs it: the PT2E quantizer of a backend,
op by op, in text, markdown and JSON, with FX compat's exit codes; bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torchao", reason="PT2E compat needs torchao (pip install '.[pt2e]')")

SPEC = """\
constraint act = qint8 {scale_min: 2 ** -12}
dtypes s = {input: act, output: act, weight: qint8, bias: float}
dtypes io = {input: act, output: act}

backend tiny {
    pattern nn.Linear { dtypes: s }
    pattern (nn.Linear, nn.ReLU) { dtypes: s }
    pattern nn.Flatten { observation: shared_observer  dtypes: io }
}
quantizer tiny {}

backend fx_only {
    pattern nn.Linear { dtypes: s }
}

backend solo {
    pattern (nn.Linear, nn.ReLU) { dtypes: s }
    pattern nn.Flatten { observation: shared_observer  dtypes: io }
}
quantizer solo { fx: false }

backend staged {
    pattern nn.Linear { dtypes: s }
}
quantizer staged { fx: false  scopes: composable }
"""

USER = """\
import torch
from torch import nn
from torchao.quantization.pt2e.observer import HistogramObserver, MinMaxObserver
from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec


def config():
    act = QuantizationSpec(
        torch.int8, HistogramObserver.with_args(eps=2**-12), -128, 127, torch.per_tensor_affine
    )
    weight = QuantizationSpec(torch.int8, MinMaxObserver, -127, 127, torch.per_tensor_symmetric)
    return QuantizationConfig(act, act, weight, None)


def uint8():
    act = QuantizationSpec(torch.uint8, HistogramObserver, 0, 255, torch.per_tensor_affine)
    return QuantizationConfig(act, act, None, None)


def qat():
    from torchao.quantization.pt2e.fake_quantize import FakeQuantize
    from torchao.quantization.pt2e.observer import MovingAverageMinMaxObserver

    act = QuantizationSpec(
        torch.int8,
        FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, eps=2**-12),
        -128,
        127,
        torch.per_tensor_affine,
    )
    weight = QuantizationSpec(
        torch.int8,
        FakeQuantize.with_args(observer=MovingAverageMinMaxObserver),
        -127,
        127,
        torch.per_tensor_symmetric,
    )
    return QuantizationConfig(act, act, weight, None, is_qat=True)


def plain_train():
    return Plain().train(), (torch.randn(2, 2, 8),)


def fc2_off(quantizer):
    quantizer.set_global(config()).set_module_name("fc2", None)


def not_a_config():
    return {"global": config()}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc1(x)
        return self.fc2(torch.relu(y) + y).sigmoid()


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

    def forward(self, x):
        return self.fc(x).flatten(1)


def model():
    return Net().eval(), (torch.randn(2, 8),)


def plain():
    return Plain().eval(), (torch.randn(2, 2, 8),)


class Unexportable(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow: torch.export cannot trace it
            return x
        return -x


def unexportable():
    return Unexportable(), (torch.randn(2, 8),)


class Abort(BaseException):
    pass  # a project's own way to stop: not an Exception


def aborts():
    raise Abort("no config today")


class Aborting(nn.Module):
    def forward(self, x):
        raise Abort("forward aborts")


def aborting():
    return Aborting(), (torch.randn(2, 8),)


CALLS = []


def once():
    # Registers something that cannot be registered twice (a custom op, an observer class).
    CALLS.append(1)
    if len(CALLS) > 1:
        raise RuntimeError("registered twice")
    return config()


def torchao_xnnpack():
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    return get_symmetric_quantization_config()


def executorch_xnnpack():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        get_symmetric_quantization_config,
    )

    return get_symmetric_quantization_config()


class Half:
    input_activation = None


def half_a_config():
    return Half()
"""

ARGS = ("compat", "tiny", "--quantization-config")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compat_pt2e")
    (root / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["compat_pt2e_user"]\n')
    (root / "specs").mkdir()
    (root / "specs" / "tiny.bcfg").write_text(SPEC)
    (root / "compat_pt2e_user.py").write_text(USER)
    return root


def test_a_model_all_quantized_is_exit_0(run):
    code, out, err = run(*ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:plain")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(
        "backend tiny (specs/tiny.bcfg), PT2E quantizer, config compat_pt2e_user:config, "
        "model compat_pt2e_user:plain; post-training quantization, non-strict export, torch "
    )
    assert lines[2].split() == ["NODE", "OP", "PATTERN", "CONFIG", "VERDICT"]
    assert lines[3].split() == ["linear", "aten.linear.default", "(nn.Linear,", "nn.ReLU)"] + [
        "global",
        "quantized",
    ]
    assert lines[5].split() == ["flatten", "aten.flatten.using_ints", "nn.Flatten", "global"] + [
        "quantized"
    ]
    assert lines[-1] == "3 op(s): 3 quantized, 0 left float"


def test_what_is_left_float_is_explained_exit_1(run):
    code, out, _ = run(*ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:model")
    assert code == 1
    assert "relu: left float\n    pattern (nn.Linear, nn.ReLU) (specs/tiny.bcfg:7:5)\n" in out
    assert "    chain broke at linear: its output has other users (add) [second_user]\n" in out
    assert "add: left float\n    no rule of the quantizer has aten.add.Tensor [no_rule]\n" in out
    assert (
        "sigmoid: left float\n    no rule of the quantizer has aten.sigmoid.default [no_rule]"
        in out
    )
    assert out.splitlines()[-1] == "5 op(s): 2 quantized, 3 left float"


def test_json_and_markdown(run):
    model = ("--model", "compat_pt2e_user:model")
    code, out, _ = run(*ARGS, "compat_pt2e_user:fc2_off", *model, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["quantizer"] == "pt2e" and doc["strict_export"] is False
    by = {e["node"]: e for e in doc["skipped"] + doc["honored"]}
    assert by["linear"]["status"] == "quantized" and by["linear"]["pattern"] == "nn.Linear"
    assert by["linear"]["where"] == "specs/tiny.bcfg:6:5"
    assert by["linear"]["specs"] == "x: int8, fc1_weight: int8, output: int8"
    assert by["linear_1"]["reason"] == "no_config" and by["linear_1"]["deliberate"]
    assert by["linear_1"]["detail"] == "left float on purpose: module_name 'fc2' config is None"
    code, out, _ = run(*ARGS, "compat_pt2e_user:config", *model, "--format", "markdown")
    assert code == 1 and out.startswith("# bcfg compat: backend `tiny`, PT2E\n")
    assert "| `sigmoid` | `aten.sigmoid.default` | - | `global` | **left float** |" in out
    assert "\n## Not quantized\n" in out


def test_a_config_the_spec_does_not_allow_is_exit_1_with_the_field(run):
    code, out, err = run(*ARGS, "compat_pt2e_user:uint8", "--model", "compat_pt2e_user:plain")
    assert code == 1, err
    assert (
        "linear, relu: config not allowed\n    pattern (nn.Linear, nn.ReLU) (specs/tiny.bcfg:7:5)\n"
        in out
    )
    assert (
        "input_activation.dtype is torch.uint8, the spec allows torch.int8 (dtype config s)" in out
    )
    assert "prepare_pt2e raises: ValueError: tiny quantizer: " in out


def test_strict_export_is_said(run):
    args = (*ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:plain")
    code, out, _ = run(*args, "--strict-export")
    assert code == 0 and ", strict export, torch " in out.splitlines()[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            (*ARGS, "compat_pt2e_user:config"),
            "--quantization-config needs --model: PT2E quantizes an exported model",
        ),
        (
            (
                "compat",
                "fx_only",
                "--quantization-config",
                "compat_pt2e_user:config",
                "--model",
                "compat_pt2e_user:model",
            ),
            "backend 'fx_only' has no PT2E quantizer: add `quantizer fx_only {}` to specs/tiny.bcfg",
        ),
        (
            (*ARGS, "compat_pt2e_user:not_a_config", "--model", "compat_pt2e_user:model"),
            "compat_pt2e_user:not_a_config() returned dict, not a QuantizationConfig",
        ),
        (
            ("compat", "tiny", "--qconfig-mapping", "x:y", "--strict-export"),
            "--strict-export is for PT2E (--quantization-config)",
        ),
        (
            (*ARGS, "compat_pt2e_user:half_a_config", "--model", "compat_pt2e_user:model"),
            "compat_pt2e_user:half_a_config() returned compat_pt2e_user.Half, not a "
            "QuantizationConfig (torchao.quantization.pt2e.quantizer.QuantizationConfig, or an "
            "object with its fields input_activation, output_activation, weight, bias)",
        ),
        (
            (*ARGS, "compat_pt2e_user:aborts", "--model", "compat_pt2e_user:model"),
            "calling compat_pt2e_user:aborts() failed: Abort: no config today",
        ),
        (
            (*ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:aborts"),
            "calling compat_pt2e_user:aborts() failed: Abort: no config today",
        ),
        (
            (*ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:aborting"),
            "torch.export fails: Abort: forward aborts",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(run, args, message):
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err and "internal error" not in err


def test_the_config_function_is_called_once(run):
    """A function that registers something fails when called again: compat calls it once."""
    code, out, err = run(*ARGS, "compat_pt2e_user:once", "--model", "compat_pt2e_user:plain")
    assert code == 0, err
    assert out.splitlines()[-1] == "3 op(s): 3 quantized, 0 left float"


@pytest.mark.parametrize("config", ["torchao_xnnpack", "executorch_xnnpack"])
def test_the_configs_of_torchaos_and_executorchs_helpers_are_taken(run, config):
    """Their QuantizationConfig dataclasses are not torchao's, but have its fields, which is
    all the generated quantizer reads."""
    if config == "executorch_xnnpack":
        pytest.importorskip("executorch", reason="pip install '.[executorch]'")
    args = (*ARGS, f"compat_pt2e_user:{config}", "--model", "compat_pt2e_user:plain")
    code, out, err = run(*args, "--format", "json")
    assert code == 0, err
    assert [e["node"] for e in json.loads(out)["honored"]] == ["linear", "relu", "flatten"]


def test_a_rejected_configs_error_is_shown_with_its_lines(run):
    code, out, err = run(*ARGS, "compat_pt2e_user:uint8", "--model", "compat_pt2e_user:plain")
    assert code == 1, err
    assert (
        "prepare_pt2e raises: ValueError: tiny quantizer: 1 pattern(s) of specs/tiny.bcfg do not "
        "allow the quantization config they matched with:\n"
        "    pattern (nn.Linear, nn.ReLU), global config: input_activation.dtype is torch.uint8"
    ) in out


@pytest.fixture
def scratch_tmp(tmp_path, monkeypatch):
    """The temporary directory, of this test alone, for this process and a child."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return folder


@pytest.mark.parametrize(
    "config, model, code",
    [
        ("config", "plain", 0),
        ("config", "model", 1),
        ("not_a_config", "model", 2),
        ("config", "unexportable", 2),
    ],
)
def test_nothing_is_left_in_the_temporary_directory(run, scratch_tmp, config, model, code):
    args = (*ARGS, f"compat_pt2e_user:{config}", "--model", f"compat_pt2e_user:{model}")
    for in_child in (True, False) if code == 1 else (True,):
        assert run(*args, in_child=in_child)[0] == code
        left = [p.name for p in scratch_tmp.iterdir() if p.name.startswith("bcfg")]
        assert left == []


def test_an_export_that_fails_is_exit_2_with_torchs_message(run):
    code, out, err = run(
        *ARGS, "compat_pt2e_user:config", "--model", "compat_pt2e_user:unexportable"
    )
    assert code == 2 and out == ""
    assert "torch.export fails: " in err and "Traceback" not in err


def test_qat_prepares_with_prepare_qat_pt2e(run):
    args = (*ARGS, "compat_pt2e_user:qat", "--model", "compat_pt2e_user:plain_train", "--qat")
    code, out, err = run(*args, "--format", "json")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["qat"] is True and doc["skipped"] == []
    assert [e["node"] for e in doc["honored"]] == ["linear", "relu", "flatten"]


def test_a_pt2e_only_target_is_checked_by_its_quantizer(run):
    """solo (fx: false) has no BackendConfig: compat checks its PT2E quantizer, and FX compat
    says why it cannot check it, not that there is no such backend."""
    args = ("compat", "solo", "--quantization-config", "compat_pt2e_user:config")
    code, out, err = run(*args, "--model", "compat_pt2e_user:plain")
    assert code == 0, err
    assert out.startswith("backend solo (specs/tiny.bcfg), PT2E quantizer, config ")
    code, out, err = run("compat", "solo", "--qconfig-mapping", "compat_pt2e_user:config")
    assert (code, out) == (2, "")
    assert err == (
        "bcfg compat: backend 'solo' is PT2E-only (specs/tiny.bcfg says `quantizer solo "
        "{ fx: false }`): it has no BackendConfig; --qconfig-mapping checks a BackendConfig; "
        "check its PT2E quantizer with --quantization-config MODULE:FUNCTION --model "
        "MODULE:FUNCTION\n"
    )


def test_a_composable_quantizer_is_explained(run):
    """staged (scopes: composable): its global stage is the config compat is given."""
    args = ("compat", "staged", "--quantization-config", "compat_pt2e_user:config")
    code, out, err = run(*args, "--model", "compat_pt2e_user:model", "--format", "json")
    assert code == 1, err
    doc = json.loads(out)
    assert [(e["node"], e["config"]) for e in doc["honored"]] == [
        ("linear", "global"),
        ("linear_1", "global"),
    ]
    assert {e["node"]: e["reason"] for e in doc["skipped"]} == {
        "relu": "no_rule",
        "add": "no_rule",
        "sigmoid": "no_rule",
    }


def test_a_base_without_report_is_refused_at_the_spec(run, monkeypatch):
    """A runtime base the key table says has no report() is refused where the spec names it."""
    from generator.lang import pt2e_keys as t

    no_report = t.Base("ComposableSpecQuantizer", reports=False)
    monkeypatch.setitem(t.BASES, t.Scopes.COMPOSABLE, no_report)
    args = ("compat", "staged", "--quantization-config", "compat_pt2e_user:config")
    code, out, err = run(*args, "--model", "compat_pt2e_user:model")
    assert (code, out) == (2, "")
    assert err.startswith(
        "bcfg compat: specs/tiny.bcfg:25:1: quantizer staged has scopes: composable, whose "
        "runtime base (ComposableSpecQuantizer) has no report(), which bcfg compat reads "
        "to explain each op; compat explains scopes: modules, scopes: operators, scopes: pairs "
        "and scopes: registry quantizers."
    )
