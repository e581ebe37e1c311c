"""``bcfg import`` on the shapes of real projects' BackendConfigs (``import_shapes``, our re-creations).

torch_migraphx and qattn compose torch's helpers (library ``use`` lines);
mmrazor copies the helpers in torch-1.13 style, reversed with closure fusers,
over four backends (several targets, a shared file, discovered groups, fuse
declarations with ``is_qat``); spconv copies ``_sequential_wrapper2`` and loops
over sets of classes (a stable order, ``sequential()`` on a complex pair); the
tutorial names its own fuser module (``bcfg generate`` resolves it from the
project root). Each import is verified by the importer itself; the tests check
what a person reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it)

from generator.config import Project
from generator.lang.fmt import format_text
from generator.live.targets import ImportFailure
from generator.tools.importer.flow import Request, run_import

HERE = Path(__file__).parent
MODULE = "tests.tools.import_shapes"
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def code_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def imported(*functions: str, folder: bool = False) -> dict[str, str]:
    """Import ``MODULE:function`` targets in this process (verified), as a project without specs."""
    project = Project(HERE, HERE / "no-specs-here", HERE / "generated", ("torch", "operator"))
    targets = [f"{MODULE}:{f}" for f in functions]
    out = str(HERE / "out") if folder else None
    result = run_import(Request(targets, out, folder), project)
    assert result.verified and "all" in result.verified
    for text in result.files.values():
        assert format_text(text) == text  # passes `bcfg fmt --check`
    return result.files


def test_configs_built_from_torchs_helpers_import_as_library_uses() -> None:
    """migraphx's Python is 49 lines (NBNC); its spec is a few `use` lines and two dtypes."""
    (text,) = imported("get_migraphx_like_backend_config").values()
    assert 'import "bcfg:torch"' in text
    for group in ("conv", "linear", "binary", "share_qparams", "tensor_info"):
        assert f"    use {group}(" in text
    assert "pattern" not in text
    assert code_lines(text) <= 15
    (qattn,) = imported("get_qattn_like_backend_config").values()
    assert "pattern F.scaled_dot_product_attention { dtypes: qint8_qint8 }" in qattn
    assert "use linear([" in qattn and code_lines(qattn) <= 18  # qattn's Python: 65


def test_four_related_backends_share_groups_and_fusers() -> None:
    """mmrazor: torch-1.13 reversed patterns with closure fusers, over four backends."""
    files = imported(
        "get_mmrazor_like_academic_backend_config",
        "get_mmrazor_like_native_backend_config",
        "get_mmrazor_like_openvino_backend_config",
        "get_mmrazor_like_tensorrt_backend_config",
        folder=True,
    )
    shared = files["out/common.bcfg"]
    # Reversed closures proven by tracing: fuse declarations, is_qat passed on.
    assert "fuse fuse_relu_conv(relu, conv) = nni.ConvReLU1d(conv, relu)" in shared
    assert "fuse_conv_bn(is_qat, conv, bn)" in shared
    assert "fuse fuse_relu_bn_conv(relu, (bn, conv)) =" in shared
    # Groups found across the backends, with a dtype-set parameter.
    assert "group conv_ops(ds) {" in shared and "group linear_ops(ds) {" in shared
    academic = files["out/mmrazor_like_academic.bcfg"]
    assert 'import "common.bcfg"' in academic
    assert "use conv_ops(quint8_quint8_qint8_float)" in academic
    assert code_lines(academic) <= 6
    trt = files["out/mmrazor_like_tensorrt.bcfg"]
    assert "use conv_ops(qint8_qint8_qint8_float)" in trt and "pattern complex torch.addmm {" in trt
    assert sum(code_lines(t) for t in files.values()) < 400  # 444 configs


def test_set_built_configs_import_in_one_order_with_a_warning(tmp_path: Path) -> None:
    """spconv: a copy of _sequential_wrapper2, loops over sets of classes; the same spec every run."""
    specs = []
    for seed in ("1", "2"):
        out = tmp_path / f"run{seed}.bcfg"
        env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
        run = subprocess.run(
            [sys.executable, "-m", "generator", "import"]
            + [f"{MODULE}:get_spconv_like_backend_config", "-o", str(out)],
            cwd=HERE.parent.parent,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert run.returncode in (0, 1), run.stderr
        assert "iterating the sets tests.tools.import_shapes.SPARSE_CONV_TYPES" in run.stderr
        assert "whose order changes from run to run" in run.stderr
        assert "verified:" in run.stderr
        specs.append(out.read_text())
    assert specs[0] == specs[1]
    text = specs[0]
    # The byte-identical copy of torch's wrapper, on a complex pair: sequential().
    assert "fuser: sequential(import_shapes.SpconvAddReLUNd)" in text
    assert "pattern complex (\n" in text and "import_shapes.SparseReLU,\n" in text


def test_unprovable_closures_name_the_config_and_a_fuse_to_paste() -> None:
    import torch.ao.nn.intrinsic as nni
    from torch import nn
    from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig

    from generator.tools.importer.flow import import_configs

    def make(scale: float):  # a closure doing real work: not provable
        def fuser(is_qat, linear, relu):
            linear.weight.data *= scale
            return nni.LinearReLU(linear, relu)

        return fuser

    config = BackendConfig("x").set_backend_pattern_config(
        BackendPatternConfig((nn.Linear, nn.ReLU))
        .set_fuser_method(make(2.0))
        .set_fused_module(nni.LinearReLU)
    )
    project = Project(HERE, HERE / "no-specs-here", HERE / "generated", ("torch", "operator"))
    with pytest.raises(ImportFailure) as exc:
        import_configs([(config, "get_x", "x")], project)
    message = str(exc.value)
    assert message.startswith("config 0 (pattern (Linear, ReLU)): fuser_method")
    assert "it reads .weight of a matched module" in message
    assert "`fuse my_fuser(linear, relu) = nni.LinearReLU(linear, relu)`" in message


def test_tutorial_fuser_module_resolves_for_generate_from_any_folder(tmp_path: Path) -> None:
    """The spec names the tutorial's own module; `bcfg generate` finds it from the project root."""
    shutil.copy(HERE / "import_shapes.py", tmp_path / "tutorial.py")
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["tutorial"]\n')
    (tmp_path / "specs").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"NO_COLOR": "1"}
    script = str(Path(sys.executable).parent / "bcfg")
    run = subprocess.run(
        [script, "import", "tutorial:get_tutorial_like_backend_config", "-o", "specs/tut.bcfg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "fuser: tutorial.fuse_conv2d_relu" in (tmp_path / "specs" / "tut.bcfg").read_text()
    run = subprocess.run(
        [script, "generate"], cwd=tmp_path / "specs", capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert "import tutorial" in (tmp_path / "generated" / "tutorial_like.py").read_text()


def test_groups_of_the_project_are_used(tmp_path: Path) -> None:
    """A group the project's specs already declare is `use`d, through an import of its file."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "mine.bcfg").write_text(
        "group pools(ds) {\n"
        "    for op in [nn.MaxPool2d, nn.AvgPool2d, F.max_pool2d] {\n"
        "        pattern op {\n"
        "            observation: shared_observer\n"
        "            dtypes: ds\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    import torch
    from torch import nn
    from torch.ao.quantization.backend_config import (
        BackendConfig,
        BackendPatternConfig,
        DTypeConfig,
        ObservationType,
    )
    from torch.nn import functional as F

    from generator.tools.importer.flow import import_configs

    ds = [DTypeConfig(torch.quint8, torch.quint8)]
    config = BackendConfig("p").set_backend_pattern_configs(
        [
            BackendPatternConfig(op)
            .set_observation_type(ObservationType.OUTPUT_SHARE_OBSERVER_WITH_INPUT)
            .set_dtype_configs(ds)
            for op in (nn.MaxPool2d, nn.AvgPool2d, F.max_pool2d)
        ]
    )
    project = Project(tmp_path, tmp_path / "specs", tmp_path / "generated", ("torch", "operator"))
    output = str(tmp_path / "specs" / "p.bcfg")
    result = import_configs([(config, "get_p_backend_config", "p")], project, output)
    text = result.files["specs/p.bcfg"]
    assert 'import "mine.bcfg"' in text and "use pools({input: quint8, output: quint8})" in text
    assert result.verified
