"""A ``torch.library`` op of the user's package (tests/custom_ops.py, ``bcfg_npukit::fancy_act``)
through PT2E: the hint names the op by its own namespace, the name it gives resolves, and the
generated quantizer annotates the op torch.export records, through prepare and convert."""

from __future__ import annotations

import pytest
import torch

from generator.diagnostics import SpecError
from generator.semantics.driver import resolve_specs

from .pt2e_support import KEY, generate, symmetric_config

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402

from tests.custom_ops import LinearFancy  # noqa: E402  (registers bcfg_npukit::fancy_act)

OP = "torch.ops.bcfg_npukit.fancy_act.default"
SPEC = """
dtypes io = {input: qint8, output: qint8}
dtypes w8 = {input: qint8, output: qint8, weight: qint8, bias: float}
quantizer npu {}
backend npu {
    pattern nn.Linear { dtypes: w8 }
    pattern tests.custom_ops.fancy_act {
        observation: shared_observer
        dtypes: io
        PT2E
    }
}
"""


def errors(tmp_path, pt2e: str) -> list[tuple[str, str | None]]:
    spec = tmp_path / "t.bcfg"
    spec.write_text(SPEC.replace("PT2E", pt2e))
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec], ("torch", "operator", "tests"))
    return [(d.message, d.hint) for d in exc.value.diagnostics if d.severity == "error"]


def test_the_aten_name_gets_a_did_you_mean_in_the_ops_own_namespace(tmp_path):
    # what a hint once said: aten.fancy_act.default, which is no op; did you mean names it
    ((message, hint),) = errors(tmp_path, "pt2e: {aten: aten.fancy_act.default}")
    assert message == "unknown symbol 'torch.ops.aten.fancy_act.default'"
    assert hint == f"did you mean '{OP}'?"
    # a misspelling, and an overload the op does not have: its default
    ((_, hint),) = errors(tmp_path, "pt2e: {aten: aten.fancy_ac.out}")
    assert hint == f"did you mean '{OP}'?"


def test_the_function_is_the_op_fx_traces_in_both_halves(tmp_path):
    """``pattern tests.custom_ops.fancy_act`` is keyed by the op FX records for the call,
    ``torch.ops.bcfg_npukit.fancy_act.default`` (it was keyed by the function, which FX never
    records: prepare_fx put no observer), and PT2E needs no ``aten:`` for it."""
    from torch.ao.quantization import QConfig, QConfigMapping
    from torch.ao.quantization.observer import MinMaxObserver
    from torch.ao.quantization.quantize_fx import prepare_fx

    from generator.emit.backend_config import render_backend

    spec = tmp_path / "t.bcfg"
    spec.write_text(SPEC.replace("PT2E", ""))
    (backend,) = resolve_specs(tmp_path, [spec], ("torch", "operator", "tests")).backends
    source = render_backend(backend)
    assert f"BackendPatternConfig({OP})" in source and "import tests.custom_ops" in source
    scope: dict = {}
    exec(compile(source, "npu.py", "exec"), scope)
    observer = MinMaxObserver.with_args(dtype=torch.qint8)
    mapping = QConfigMapping().set_global(QConfig(activation=observer, weight=observer))
    x = torch.randn(2, 4)
    prepared = prepare_fx(
        LinearFancy().eval(), mapping, (x,), backend_config=scope["get_npu_backend_config"]()
    )
    (act,) = [
        n for n in prepared.graph.nodes if n.target == torch.ops.bcfg_npukit.fancy_act.default
    ]
    (user,) = act.users
    assert user.op == "call_module" and "activation_post_process" in str(user.target)
    (tmp_path / "pt2e").mkdir()
    get = generate(tmp_path / "pt2e", SPEC.replace("PT2E", ""))
    q = get().set_global(symmetric_config("per_tensor"))
    gm = prepare_pt2e(torch.export.export(LinearFancy().eval(), (x,)).module(), q)
    (act,) = [n for n in gm.graph.nodes if n.target == torch.ops.bcfg_npukit.fancy_act.default]
    assert KEY in act.meta and act.meta[KEY]._annotated


def test_the_op_by_its_namespace_is_quantized(tmp_path):
    get = generate(tmp_path, SPEC.replace("PT2E", f"pt2e: {{aten: {OP}}}"))
    model = LinearFancy().eval()
    x = torch.randn(2, 4)
    gm = torch.export.export(model, (x,)).module()
    q = get().set_global(symmetric_config("per_tensor"))
    prepared = prepare_pt2e(gm, q)
    (act,) = [
        n for n in prepared.graph.nodes if n.target == torch.ops.bcfg_npukit.fancy_act.default
    ]
    assert KEY in act.meta and act.meta[KEY]._annotated
    assert q.problems() == []
    prepared(x)
    converted = convert_pt2e(prepared)
    (act,) = [
        n for n in converted.graph.nodes if n.target == torch.ops.bcfg_npukit.fancy_act.default
    ]
    # it reads a dequantized input and its output is quantized: it runs between quantized ops
    assert "dequantize" in str(act.args[0].target)
    assert any("quantize_per_tensor" in str(u.target) for u in act.users)
    torch.testing.assert_close(converted(x), model(x), atol=0.1, rtol=0.1)


NPUKIT = """
import torch


@torch.library.custom_op("bcfg_coldkit::fancy_act", mutates_args=())
def fancy_act(x: torch.Tensor) -> torch.Tensor:
    return x.clamp(0, 6)
"""


def test_an_op_resolves_the_same_whatever_the_cache_holds(tmp_path):
    """A spec naming the op only by ``torch.ops`` gets the same answer on a cold cache, and
    after a run that imported the module registering the op (which used to cache the op's
    facts: the spec then passed); the hint says how, and doing what it says resolves it."""
    import os
    import subprocess
    import sys

    from tests.support import REPO

    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["coldkit"]\n')
    (tmp_path / "coldkit").mkdir()
    (tmp_path / "coldkit" / "__init__.py").write_text("")
    (tmp_path / "coldkit" / "ops.py").write_text(NPUKIT)
    (tmp_path / "specs").mkdir()
    op = "torch.ops.bcfg_coldkit.fancy_act.default"
    body = "{ observation: shared_observer  dtypes: io  pt2e: {aten: OP} }".replace("OP", op)
    for name, pattern in (("named", "coldkit.ops.fancy_act"), ("bare", "nn.ReLU")):
        (tmp_path / "specs" / f"{name}.bcfg").write_text(
            "dtypes io = {input: qint8, output: qint8}\n"
            f"quantizer {name} {{}}\nbackend {name} {{\n    pattern {pattern} {body}\n}}\n"
        )

    def generate(spec: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "generator", "generate", f"specs/{spec}.bcfg"],
            cwd=tmp_path,
            env={
                **os.environ,
                "PYTHONPATH": str(REPO),
                "BCFG_CACHE_DIR": str(tmp_path / "c"),
                **env,
            },
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    cold = generate("bare")
    assert cold.returncode == 2 and f"unknown symbol '{op}'" in cold.stderr, cold.stderr
    assert "no allowed package registers bcfg_coldkit::fancy_act" in cold.stderr
    assert generate("named").returncode == 0  # imports coldkit.ops: the op is registered
    warm = generate("bare")
    assert (warm.returncode, warm.stderr) == (cold.returncode, cold.stderr)
    # what the hint says: the package imports the module that registers the op
    (tmp_path / "coldkit" / "__init__.py").write_text("from . import ops\n")
    for env in ({}, {"BCFG_NO_CACHE": "1"}):
        done = generate("bare", **env)
        assert done.returncode == 0, done.stderr


def test_a_module_class_calling_the_op_gets_a_hint_in_the_ops_namespace(tmp_path):
    """``pattern tests.custom_ops.FancyAct`` (a module whose forward calls the op) without
    ``pt2e:``: the hint said ``aten.fancy_act.default``, which is no op (issue 53.10)."""
    spec = tmp_path / "t.bcfg"
    spec.write_text(
        SPEC.replace("tests.custom_ops.fancy_act", "tests.custom_ops.FancyAct").replace("PT2E", "")
    )
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec], ("torch", "operator", "tests"))
    (hint,) = [d.hint for d in exc.value.diagnostics if d.severity == "error"]
    assert hint is not None and f"likely pt2e: {{aten: {OP}}}" in hint, hint
