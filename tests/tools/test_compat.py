"""``bcfg compat`` as a user runs it: formats, exit codes, bad input; and ``--strict``.

A small project (a constrained backend, a user module on the allow-list)
is built once; the command runs in-process through ``cli.main``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from generator import cli

SPEC = """\
constraint act = quint8 {quant_min: 0, quant_max: 127, scale_min: 2 ** -10}
dtypes int8 = {input: act, output: act}
dtypes weighted = {input: act, output: act, weight: qint8, bias: float}

backend tiny {
    pattern nn.Linear {
        dtypes: weighted
        root: nn.Linear
        reference: nnqr.Linear
    }
    pattern nn.ReLU {
        observation: shared_observer
        dtypes: int8
    }
    pattern (nn.Linear, nn.ReLU) {
        dtypes: weighted
        fuser: sequential(nni.LinearReLU)
        fused: nni.LinearReLU
    }
    pattern nni.LinearReLU {
        dtypes: weighted
        root: nn.Linear
        reference: nnqr.Linear
    }
}
"""

USER = """\
import sys

import torch
from torch import nn
from torch.ao.quantization import QConfig, QConfigMapping, get_default_qconfig_mapping
from torch.ao.quantization.observer import HistogramObserver, MinMaxObserver

FIT = QConfig(
    activation=HistogramObserver.with_args(quant_min=0, quant_max=127, eps=2**-10),
    weight=MinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
)
NOT_CALLABLE = 3


def fits():
    return QConfigMapping().set_global(FIT)


def default():
    return get_default_qconfig_mapping("x86")


def relu_off():
    return fits().set_object_type(nn.ReLU, None)


def lookup():
    return fits().set_object_type(nn.Linear, FIT)


def raises():
    raise RuntimeError("boom")


def exits():
    sys.exit(3)


def wrong():
    return {"": FIT}


def noisy():
    print("hello from the user")
    return fits()


def raw_noisy():
    import os

    os.write(1, b"raw bytes on descriptor 1\\n")
    print("printed by the user")
    sys.stdout.write("written by the user\\n")
    sys.stdout.flush()
    return fits()


def dies():
    import os

    os._exit(7)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def model():
    return Net().eval(), (torch.randn(2, 8),)


def half_model():
    return Net()


def bare_inputs():
    return Net(), torch.randn(2, 8)


class Quitter(nn.Module):
    def forward(self, x):
        print("tracing the quitter")
        sys.exit(5)


def quitter():
    return Quitter(), (torch.randn(2, 8),)


class Abort(BaseException):
    pass  # a project's own way to stop: not an Exception


def aborts():
    raise Abort("no mapping today")


def skips():
    import pytest

    pytest.skip("not on this machine")


class Aborting(nn.Module):
    def forward(self, x):
        raise Abort("forward aborts")


def aborting():
    return Aborting(), (torch.randn(2, 8),)


class Multiline(nn.Module):
    def forward(self, x):
        raise ValueError("first line\\nsecond line\\n  third line")


def multiline():
    return Multiline(), (torch.randn(2, 8),)


def backend_aborts():
    raise Abort("no backend config today")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("compat")
    (root / "pyproject.toml").write_text(
        '[tool.bcfg]\nallow = ["compat_user", "compat_broken", "compat_exits"]\n'
    )
    (root / "specs").mkdir()
    (root / "specs" / "tiny.bcfg").write_text(SPEC)
    (root / "compat_user.py").write_text(USER)
    (root / "compat_broken.py").write_text("import compat_no_such_package\n")
    (root / "compat_exits.py").write_text("import sys\nsys.exit(1)\n")
    return root


def test_a_mapping_that_fits_is_exit_0(run):
    code, out, err = run("compat", "tiny", "--qconfig-mapping", "compat_user:fits")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("backend tiny (specs/tiny.bcfg), QConfigMapping compat_user:fits")
    assert lines[2].split() == ["WHERE", "PATTERN", "QCONFIG", "FROM", "VERDICT"]
    assert lines[3].split() == ["specs/tiny.bcfg:6:5", "nn.Linear", "global", "honoured"]
    assert "(nn.Linear, nn.ReLU)" in out and "fused" in out
    assert lines[-1] == (
        "4 pattern config(s): 3 honoured, 1 fused (their fused module's config decides), 0 not honoured"
    )


def test_a_mapping_that_does_not_fit_is_explained_exit_1(run):
    code, out, err = run("compat", "tiny", "--qconfig-mapping", "compat_user:default")
    assert code == 1, err
    assert (
        "nn.Linear (specs/tiny.bcfg:6:5), nni.LinearReLU (specs/tiny.bcfg:20:5): QConfig not" in out
    )
    assert "nn.ReLU (specs/tiny.bcfg:11:5): QConfig not supported" in out
    assert (
        "closest dtype config, 1 of 1 (int8): {input: quint8 {quant_min: 0, quant_max: 127, scale_min: 2**-10}"
        in out
    )
    assert "input scale_min: eps 2**-23 is below the backend's scale_min 2**-10" in out
    assert (
        "would fit: QConfig(activation=HistogramObserver.with_args(reduce_range=True, eps=2**-10)"
        in out
    )


def test_json_lists_skipped_and_honored(run):
    code, out, _ = run(
        "compat", "tiny", "--qconfig-mapping", "compat_user:default", "--format", "json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["backend"] == "tiny" and doc["error"] is None
    skipped = {e["pattern"]: e for e in doc["skipped"]}
    linear = skipped["nn.Linear"]
    assert linear["where"] == "specs/tiny.bcfg:6:5" and linear["status"] == "QConfig not supported"
    assert linear["closest"]["name"] == "weighted"
    assert linear["closest"]["failures"][0] == {
        "field": "input scale_min",
        "message": "eps 2**-23 is below the backend's scale_min 2**-10",
    }
    assert linear["reason"].startswith("input scale_min")
    assert [e["pattern"] for e in doc["honored"]] == ["(nn.Linear, nn.ReLU)"]


def test_a_model_is_judged_node_by_node(run):
    args = ("compat", "tiny", "--model", "compat_user:model", "--qconfig-mapping")
    code, out, _ = run(*args, "compat_user:fits")
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()[3:5]] == ["fc1", "fc2"]
    assert "nni.LinearReLU" in out
    code, out, _ = run(*args, "compat_user:default", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["model"] == "compat_user:model"
    assert {e["node"] for e in doc["skipped"]} == {"fc1", "fc2"}
    assert doc["skipped"][0]["op"] == "call_module fc1"
    code, out, _ = run(*args, "compat_user:default", "--format", "markdown")
    assert out.startswith("# bcfg compat: backend `tiny`")
    assert "| node | op | pattern | qconfig from | verdict |" in out
    assert (
        "| `fc1` | `call_module fc1` | `nni.LinearReLU` | `global` | **QConfig not supported** |"
        in out
    )


def test_qat_names_the_missing_qat_module(run):
    code, out, _ = run("compat", "tiny", "--qconfig-mapping", "compat_user:fits", "--qat")
    assert code == 1
    assert "quantization-aware training" in out.splitlines()[0]
    assert "the backend names no QAT module for nn.Linear" in out
    args = ("compat", "tiny", "--qat", "--model", "compat_user:model")
    code, out, _ = run(*args, "--qconfig-mapping", "compat_user:fits")
    verdicts = {ln.split()[0]: " ".join(ln.split()[5:]) for ln in out.splitlines()[3:5]}
    # the fused fc1 and the plain fc2 both lack a QAT module: their weights train as floats
    assert code == 1 and verdicts == {"fc1": "no QAT module", "fc2": "no QAT module"}
    assert "the backend names no QAT module for nni.LinearReLU" in out


def test_a_deliberate_skip_is_not_a_failure(run):
    code, out, _ = run("compat", "tiny", "--qconfig-mapping", "compat_user:relu_off")
    assert code == 0
    assert "object_type[nn.ReLU]  skipped by the mapping" in out


def test_prepare_fx_failing_is_exit_2_with_torchs_message(run):
    args = ("compat", "tiny", "--model", "compat_user:model", "--qconfig-mapping")
    code, out, err = run(*args, "compat_user:lookup")
    assert code == 2 and out == ""
    assert err.startswith("bcfg compat: prepare_fx fails on this model: LookupError: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "target, message",
    [
        ("os:getcwd", "'os' is not an allowed module (allowed: torch, operator, compat_user"),
        ("compat_nothing:f", "'compat_nothing' is not an allowed module"),
        (
            "compat_user",
            "expected MODULE:FUNCTION (like mypkg.backend:get_config), got 'compat_user'",
        ),
        ("compat_user:nope", "compat_user has no attribute 'nope'"),
        (
            "compat_user:NOT_CALLABLE",
            "compat_user:NOT_CALLABLE is not a function (it is int): name a function that "
            "returns it (def not_callable(): return ...)",
        ),
        ("compat_user:raises", "calling compat_user:raises() failed: RuntimeError: boom"),
        ("compat_user:exits", "calling compat_user:exits() failed: it called sys.exit(3)"),
        (
            "compat_user:wrong",
            "compat_user:wrong() returned dict, not a QConfigMapping (QConfigMapping.from_dict turns a dict into one)",
        ),
        (
            "compat_broken:f",
            "importing compat_broken failed: ModuleNotFoundError: No module named 'compat_no_such_package'",
        ),
        ("compat_exits:f", "importing compat_exits failed: it called sys.exit(1)"),
    ],
)
def test_a_bad_mapping_target_is_one_line_exit_2(run, target, message):
    code, out, err = run("compat", "tiny", "--qconfig-mapping", target)
    assert code == 2 and out == ""
    assert err == f"bcfg compat: {message}" + err[len(f"bcfg compat: {message}") :]
    assert err.startswith(f"bcfg compat: {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "target, message",
    [
        (
            "compat_user:half_model",
            "compat_user:half_model() returned Net, not (model, example_inputs)",
        ),
        ("compat_user:bare_inputs", "returned (model, Tensor): example_inputs must be a tuple"),
        (
            "compat_user:fits",
            "compat_user:fits() returned QConfigMapping, not (model, example_inputs)",
        ),
    ],
)
def test_a_bad_model_target_is_one_line_exit_2(run, target, message):
    code, out, err = run(
        "compat", "tiny", "--qconfig-mapping", "compat_user:fits", "--model", target
    )
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("--qconfig-mapping", "compat_user:aborts"),
            "calling compat_user:aborts() failed: Abort: no mapping today",
        ),
        (
            ("--qconfig-mapping", "compat_user:skips"),
            "calling compat_user:skips() failed: Skipped: not on this machine",
        ),
        (
            ("--qconfig-mapping", "compat_user:fits", "--model", "compat_user:aborts"),
            "calling compat_user:aborts() failed: Abort: no mapping today",
        ),
        (
            ("--qconfig-mapping", "compat_user:fits", "--model", "compat_user:aborting"),
            "prepare_fx fails on this model: Abort: forward aborts",
        ),
    ],
)
def test_any_base_exception_of_the_users_code_is_the_users_failure(run, args, message):
    """A BaseException that is no Exception (pytest's Skipped, a project's Abort) is the
    user's failure, exit 2, in the child as in this process; never an internal error."""
    for in_child in (True, False) if "aborting" in args[-1] else (True,):
        try:
            code, out, err = run("compat", "tiny", *args, in_child=in_child)
        except BaseException as exc:  # noqa: BLE001  (Skipped would skip this test: a failure)
            escaped = exc
        else:
            escaped = None
        assert escaped is None, f"{escaped!r} escaped from bcfg"
        assert (code, out) == (2, ""), err
        assert err.endswith(f"bcfg compat: {message}\n") and "internal error" not in err, err


def test_diff_configs_reports_a_base_exception_as_the_users(run):
    code, out, err = run(
        "diff", "--configs", "compat_user:backend_aborts", "compat_user:backend_aborts"
    )
    assert (code, out) == (2, "") and "internal error" not in err
    assert err == (
        "bcfg diff: calling compat_user:backend_aborts() failed: Abort: no backend config today\n"
    )


def test_a_multi_line_error_is_shown_with_its_lines(run):
    args = ("--qconfig-mapping", "compat_user:fits", "--model", "compat_user:multiline")
    code, out, err = run("compat", "tiny", *args)
    assert (code, out) == (2, "")
    assert err.endswith(
        "bcfg compat: prepare_fx fails on this model: ValueError: first line\n"
        "    second line\n"
        "    third line\n"
    ), err


def test_a_model_that_exits_while_traced_is_exit_2(run):
    args = ("compat", "tiny", "--qconfig-mapping", "compat_user:fits", "--format", "json")
    code, out, err = run(*args, "--model", "compat_user:quitter")
    assert code == 2 and json.loads(out)["error"] == "SystemExit: 5"
    assert "tracing the quitter" in err
    assert err.endswith("bcfg compat: prepare_fx fails on this model: SystemExit: 5\n")


def test_an_unknown_backend_suggests_one(run):
    code, _, err = run("compat", "tinny", "--qconfig-mapping", "compat_user:fits")
    assert code == 2
    assert err == "bcfg compat: no backend 'tinny': did you mean 'tiny'? backends are tiny\n"


def test_what_user_code_prints_stays_out_of_the_json(run):
    code, out, err = run(
        "compat", "tiny", "--qconfig-mapping", "compat_user:noisy", "--format", "json"
    )
    assert code == 0 and json.loads(out)["backend"] == "tiny"
    assert "hello from the user" in err


def test_a_disagreement_with_torch_is_an_internal_error(run, monkeypatch):
    from generator.live.compat import truth

    monkeypatch.setattr(truth, "_agree", _disagree)
    code, _, err = run(
        "compat",
        "tiny",
        "--qconfig-mapping",
        "compat_user:fits",
        "--model",
        "compat_user:model",
    )
    assert code == 3
    assert (
        err.startswith("bcfg: internal error: Disagreement: predicted fc1") and err.count("\n") == 1
    )


def _disagree(predicted, observed):
    from generator.live.compat.nodes import Disagreement

    raise Disagreement("predicted fc1")


# ------------------------------------------------------------------ --strict

WARNED = textwrap.dedent("""\
    dtypes d = {input: uint8, output: uint8}
    backend w {
        pattern nn.ReLU { dtypes: d }
    }
    """)


@pytest.fixture
def warned(tmp_path, monkeypatch, capsys):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "w.bcfg").write_text(WARNED)
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\n")
    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> tuple[int, str]:
        code = cli.main(list(args))
        return code, capsys.readouterr().err

    return call


def test_strict_makes_warnings_errors_and_writes_nothing(warned, tmp_path):
    code, err = warned("generate", "--strict")
    assert code == 2 and not (tmp_path / "generated").exists()
    assert "specs/w.bcfg:1:13: error: input dtype uint8 is a plain integer type" in err
    assert "note: a warning, made an error by --strict" in err
    code, err = warned("generate")
    assert code == 0 and "warning: input dtype uint8" in err
    assert warned("check")[0] == 0  # the fast check records the tree, with its warnings
    code, err = warned("check", "--strict")
    assert code == 2 and "error: input dtype uint8" in err


def test_strict_from_pyproject(warned, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bcfg]\nstrict = true\n")
    code, err = warned("generate")
    assert code == 2 and "made an error by [tool.bcfg] strict" in err
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nstrict = "yes"\n')
    code, err = warned("generate")
    assert code == 2 and "[tool.bcfg] strict must be true or false" in err


@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_nothing_the_users_code_writes_reaches_standard_output(run, fmt):
    """The command runs in a child process: even bytes written straight to descriptor 1 go to
    standard error, and standard output is what the child-side run prints, byte for byte."""
    args = ("compat", "tiny", "--qconfig-mapping", "compat_user:raw_noisy", "--format", fmt)
    code, out, err = run(*args, in_child=False)
    assert code == 0, err
    for noise in ("raw bytes on descriptor 1", "printed by the user", "written by the user"):
        assert noise in err and noise not in out
    assert (code, out) == run(*args)[:2]
    if fmt == "json":
        assert json.loads(out)["qconfig_mapping"] == "compat_user:raw_noisy"


def test_users_code_that_ends_the_child_is_one_line(run):
    code, out, err = run("compat", "tiny", "--qconfig-mapping", "compat_user:dies", in_child=False)
    assert (code, out) == (2, "")
    assert err == (
        "bcfg compat: the check of compat_user:dies ended (exit status 7) while calling "
        "compat_user:dies, before bcfg had a result: the target's code ended the process "
        "(os._exit?)\n"
    )
