"""generated/qualcomm_quantizer.py's QnnQuantizer (specs/qualcomm.bcfg) annotates as ExecuTorch's
Qualcomm quantizer.

The full tier (tests/conftest.py's FULL; the PR tier compares the generated class with the
recording of tests/targets.py's ``qualcomm`` row, tests/test_conformance.py). Here: a few
models of tests/live/qualcomm_zoo.py under four setups and both export modes, three that
Qualcomm's LPAI backend annotates otherwise under three LPAI setups
(``python -m tests.live.vendor_zoo qualcomm`` runs all of it), and ExecuTorch's QAT conv-bn
tests with its class swapped for the generated one and for one that annotates nothing
(``python -m tests.live.executorch_suites qualcomm`` runs both shipped files, original
against swapped, test by test). ``QNN_SDK_ROOT`` is set empty (tests/live/qualcomm_zoo.py).
"""

from __future__ import annotations

import pytest

from .qualcomm_zoo import install

install()
pytest.importorskip(
    "executorch.backends.qualcomm.quantizer.quantizer",
    reason="ExecuTorch's Qualcomm quantizer is not installed",
)


def test_zoo_models_annotate_and_convert_as_executorch_does():
    from .vendor_zoo import clean, compare

    names = ["cnn", "transformer block", "split unbind"]
    setups = ["16a4w", "8a8w qat", "16a4w_block blocks", "custom discard"]
    result = compare("qualcomm", names, setups)
    assert len(result) == 3 * 4 * 2
    assert [k for k, v in result.items() if not clean(v)] == []
    # The masked attention's -inf replaced by the quantized range on both sides.
    assert result["transformer block 16a4w strict"]["outputs_equal"]


def test_the_comparison_sees_a_quantizer_without_the_concat_observer():
    import torch

    import specs.hooks.qualcomm as hooks
    from generated.qualcomm_quantizer import QnnQuantizer

    from .vendor_zoo import compare_one, zoo

    class PlainCat(QnnQuantizer):  # cat as one input and output
        def __init__(self) -> None:
            super().__init__()
            for op in (torch.ops.aten.cat.default, torch.ops.aten.concat.default):
                self._rules_map[op] = self.api.Entry(hooks.general)

    name, factory, args = next(z for z in zoo("qualcomm").ZOO if z[0] == "cat stack")
    torch.manual_seed(0)
    gm = torch.export.export(factory().eval(), args).module()
    setup = zoo("qualcomm").SETUPS["8a8w"]
    assert compare_one(gm, args, setup, "qualcomm")["differ"] == []
    assert compare_one(gm, args, setup, "qualcomm", PlainCat)["differ"]


def test_lpai_annotates_with_its_own_registry_as_executorch_does():
    """backend=LPAI: the zoo's models that LPAI annotates otherwise than HTP, the same as
    ExecuTorch's class; the generated class with HTP's kinds in LPAI's registry differs
    (the patterns given: {backend: "lpai"} are what makes them the same)."""
    import torch

    import specs.hooks.qualcomm as hooks
    from generated.qualcomm_quantizer import QnnQuantizer

    from .vendor_zoo import clean, compare, compare_one, zoo

    names = ["norms unweighted", "instance norm", "matmul"]
    setups = ["lpai 16a16w", "lpai fp16a8w", "lpai 8a8w qat"]
    result = compare("qualcomm", names, setups, modes=(True,))
    assert len(result) == 3 * 3
    assert [k for k, v in result.items() if not clean(v)] == []

    class HtpKinds(QnnQuantizer):
        def select(self, **params):
            super().select(**params)
            for op, entry in list(self.registry.items()):
                name = entry.annotate_fn.__name__
                if name.endswith("_lpai"):
                    self.registry[op] = self.api.Entry(getattr(hooks, name[: -len("_lpai")]))
            return self

    for name in names:
        _, factory, args = next(z for z in zoo("qualcomm").ZOO if z[0] == name)
        torch.manual_seed(0)
        gm = torch.export.export(factory().eval(), args).module()
        setup = zoo("qualcomm").SETUPS["lpai 16a16w" if name == "instance norm" else "lpai fp16a8w"]  # fmt: skip
        assert compare_one(gm, args, setup, "qualcomm", HtpKinds)["differ"], name


def recompiles(gm) -> list:
    """A list that gets an item each time ``gm`` is recompiled."""
    calls, recompile = [], gm.recompile

    def counting():
        calls.append(1)
        return recompile()

    gm.recompile = counting
    return calls


def test_annotate_recompiles_only_when_an_infinite_scalar_was_replaced():
    """The generated annotate recompiles the module when it replaced an infinite scalar (the
    module then computes with the quantized range, as ExecuTorch's does), and not when nothing
    of the graph's code changed (ExecuTorch's recompiles always: most of its annotate on a
    graph of cats)."""
    import torch

    from .vendor_zoo import classes, zoo

    original, generated = classes("qualcomm")
    setup = zoo("qualcomm").SETUPS["8a8w"]

    class Inf(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + float("inf")

    _, cnn, cnn_args = next(z for z in zoo("qualcomm").ZOO if z[0] == "cnn")
    x = torch.randn(2, 8)
    for model, args, replaced in ((Inf(), (x,), True), (cnn().eval(), cnn_args, False)):
        runs = {}
        for cls in (original, generated):
            gm = torch.export.export(model, args).module()
            q, calls = setup(cls()), recompiles(gm)
            q.annotate(gm)
            runs[cls] = (len(calls), gm(*args))
        assert runs[original][0] == 1 and runs[generated][0] == int(replaced), runs
        assert torch.equal(runs[original][1], runs[generated][1])
    assert torch.isfinite(runs[generated][1]).all()


def outcomes(swap: str, out) -> dict[str, str]:
    from .executorch_suites import run, tests_dir

    path = tests_dir(None, "qualcomm") / "test_conv_bn_qat.py"
    result = run([str(path)], swap, out, (), None, "qualcomm")
    return {k.split("::")[-1]: v["outcome"] for k, v in result.items()}


def test_executorchs_conv_bn_tests_pass_swapped_and_fail_with_nothing(tmp_path):
    from .executorch_suites import QUALCOMM_NOTHING, QUALCOMM_SWAP

    swapped = outcomes(QUALCOMM_SWAP, tmp_path / "swapped.json")
    assert swapped and set(swapped.values()) == {"passed"}, swapped
    nothing = outcomes(QUALCOMM_NOTHING, tmp_path / "nothing.json")
    assert "failed" in nothing.values(), nothing
