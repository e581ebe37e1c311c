"""``bcfg import``: live BackendConfig -> spec -> generated module -> the same BackendConfig.

The main test imports torch's eight built-in backends and checks that the
generated module builds a config equivalent (``generator.live.canonical``) to the
original. A property test does the same for random BackendConfigs built through
torch's API, with random patterns, dtypes, constraints, observation types,
modules, fusers and getters.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import types
from pathlib import Path

import pytest
import torch
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.qat as nnqat
import torch.ao.nn.quantized.reference as nnqr
import torch.ao.quantization.backend_config.utils  # BackendConfig needs it loaded
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
    ObservationType,
)
from torch.ao.quantization.fuser_method_mappings import (
    _sequential_wrapper2,
    fuse_conv_bn,
)
from torch.ao.quantization.utils import MatchAllNode

from generator.cli import main
from generator.config import Project
from generator.emit.backend_config import render_backend
from generator.lang.fmt import format_text
from generator.live.canonical import compare_backend_configs
from generator.live.names import public_names
from generator.live.targets import ImportFailure, load_backend_config
from generator.semantics.driver import resolve_specs
from generator.tools.importer.flow import Request, import_configs, run_import

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]

TORCH_BACKENDS = {
    "native": "torch.ao.quantization.backend_config:get_native_backend_config",
    "fbgemm": "torch.ao.quantization.backend_config:get_fbgemm_backend_config",
    "qnnpack": "torch.ao.quantization.backend_config:get_qnnpack_backend_config",
    "x86": "torch.ao.quantization.backend_config.x86:get_x86_backend_config",
    "onednn": "torch.ao.quantization.backend_config:get_onednn_backend_config",
    "executorch": "torch.ao.quantization.backend_config:get_executorch_backend_config",
    "tensorrt": "torch.ao.quantization.backend_config:get_tensorrt_backend_config",
    "qnnpack_pt2e": "torch.ao.quantization.backend_config._qnnpack_pt2e:get_qnnpack_pt2e_backend_config",
}
HERE = __name__  # this module, as the generated code will import it
ALLOW = ("torch", "operator", HERE.split(".")[0])


class Imported:
    """One imported spec, as the tests look at it."""

    def __init__(self, result) -> None:
        (self.text,) = result.files.values()
        ((_, self.module, self.configs),) = result.backends
        self.result = result


def import_target(target: str, allow: tuple[str, ...] = ("torch", "operator")) -> Imported:
    """``bcfg import TARGET`` in this process (no child process), verified."""
    root = Path(__file__).parent  # a project without specs: no groups of its own
    project = Project(root, root / "no-specs-here", root / "generated", allow)
    return Imported(run_import(Request([target], None, False), project))


def build_spec(
    config, function: str, source: str, allow=("torch", "operator"), fold=True, library=True
):
    """The import of a live BackendConfig, in a folder without specs (no project groups)."""
    root = Path(__file__).parent
    project = Project(root, root / "no-specs-here", root / "generated", tuple(allow))
    return Imported(
        import_configs(
            [(config, function, source)], project, verify=fold, fold=fold, library=library
        )
    )


def regenerate(text: str, folder: Path, allow: tuple[str, ...] = ALLOW) -> BackendConfig:
    """Spec text -> resolve -> render -> exec the module -> its BackendConfig."""
    spec = folder / "imported.bcfg"
    spec.write_text(text, encoding="utf-8")
    backend = resolve_specs(folder, [spec], allow).backends[0]
    module = types.ModuleType(f"bcfg_generated_{backend.module}")
    exec(compile(render_backend(backend), str(spec), "exec"), module.__dict__)  # noqa: S102
    return getattr(module, f"get_{backend.module}_backend_config")()


def code_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


# ------------------------------------------------------- the main test


@pytest.mark.parametrize("backend", list(TORCH_BACKENDS))
def test_torch_backend_round_trips(backend: str, tmp_path: Path) -> None:
    """The main test: import torch's backend, generate it again, get the same config."""
    imported = import_target(TORCH_BACKENDS[backend])
    original, _ = load_backend_config(TORCH_BACKENDS[backend])
    assert imported.module == backend
    assert format_text(imported.text) == imported.text  # passes `bcfg fmt --check`
    assert compare_backend_configs(original, regenerate(imported.text, tmp_path)) == []
    dump = build_spec(original, "get_x", "x", fold=False).text  # one pattern per config
    ratio = 0.5 if len(original.configs) > 50 else 0.7
    assert code_lines(imported.text) < ratio * code_lines(dump)  # idiomatic, not a dump


def test_idioms_in_imported_native() -> None:
    """torch's helpers come back as `use` lines of the shipped library; dtypes are named once."""
    text = import_target(TORCH_BACKENDS["native"]).text
    assert 'import "bcfg:torch"' in text
    assert "dtypes quint8_quint8_qint8_float = {" in text
    assert "    use conv(quint8_quint8_qint8_float)\n" in text
    assert "    use binary(quint8_quint8)\n" in text and "use embedding([" in text
    assert "pattern " not in text  # all 194 configs are library groups


def test_loop_idioms_without_the_library() -> None:
    """Without recognition, runs of patterns fold into loops, with ${n} holes in names."""
    from torch.ao.quantization.backend_config import _common_operator_config_utils as cu

    config = BackendConfig("conv").set_backend_pattern_configs(
        cu._get_conv_configs([DTypeConfig(torch.quint8, torch.quint8, torch.qint8, torch.float)])
    )
    text = build_spec(config, "get_conv_backend_config", "x", library=False).text
    assert "for n in [1, 2, 3] {" in text and "pattern nn.Conv${n}d {" in text
    assert "for relu in [nn.ReLU, F.relu] {" in text
    assert "fuser: sequential(nni.ConvReLU${n}d)" in text
    assert "alias fuser_method_mappings = torch.ao.quantization.fuser_method_mappings" in text
    assert "torch.nn.modules" not in text


def test_idioms_in_imported_onednn_and_pt2e() -> None:
    onednn = import_target(TORCH_BACKENDS["onednn"]).text
    assert "fuser: onednn._fuse_conv_add_left" in onednn
    assert "root_node: pattern[1][1]" in onednn and "extra_inputs: [pattern[2]]" in onednn
    assert "for add in [torch.add, operator.add] {" in onednn
    pt2e = import_target(TORCH_BACKENDS["qnnpack_pt2e"]).text
    assert 'backend qnnpack_pt2e "qnnpack_pytorch_2.0_export" {' in pt2e
    assert "pattern complex (operator.getitem, aten.max_pool2d_with_indices.default, 0) {" in pt2e
    assert "root_node: pattern[1]" in pt2e


def test_symbol_table_names_public_paths() -> None:
    table = public_names()
    assert table.name(F.max_pool2d).path == "torch.nn.functional.max_pool2d"
    assert table.name(nn.Conv2d).path == "torch.nn.Conv2d"
    assert table.name(torch.add).path == "torch.add"
    assert table.name(operator.getitem).path == "operator.getitem"
    assert table.name(torch.ops.aten.add.Tensor).path == "torch.ops.aten.add.Tensor"
    assert (
        table.name(torch.ops.aten.convolution.default).path == "torch.ops.aten.convolution.default"
    )
    assert table.name(MatchAllNode).path == "torch.ao.quantization.utils.MatchAllNode"
    assert (
        table.name(fuse_conv_bn).path == "torch.ao.quantization.fuser_method_mappings.fuse_conv_bn"
    )
    assert table.name(my_fuser).path == f"{HERE}.my_fuser"
    assert table.name(lambda x: x) is None


# ------------------------------------------- a user's own backend module

USER_MODULE = """
import torch.nn as nn
import torch.ao.nn.intrinsic as nni
from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig, DTypeConfig
from torch.ao.quantization.fuser_method_mappings import _sequential_wrapper2

int8 = DTypeConfig(input_dtype=torch.quint8, output_dtype=torch.quint8, weight_dtype=torch.qint8)


def fuse_linear_relu(is_qat, linear, relu):
    return nni.LinearReLU(linear, relu)


def root_of(pattern):
    relu, linear = pattern
    return linear


def get_my_config():
    configs = [
        BackendPatternConfig((nn.Linear, nn.ReLU))
        .set_dtype_configs([int8])
        .set_fuser_method(fuse_linear_relu)
        .set_fused_module(nni.LinearReLU),
        BackendPatternConfig((nn.Conv2d, nn.ReLU))
        .set_dtype_configs([int8])
        .set_fuser_method(_sequential_wrapper2(nni.ConvReLU2d))
        ._set_root_node_getter(root_of),
    ]
    return BackendConfig("mine").set_backend_pattern_configs(configs)


def not_a_config():
    return 42


def broken():
    raise RuntimeError("boom\\nsecond line")


def lambda_fuser():
    return BackendConfig("x").set_backend_pattern_config(
        BackendPatternConfig((nn.Linear, nn.ReLU)).set_fuser_method(lambda is_qat, a, b: a)
    )
"""


@pytest.fixture
def user_project(tmp_path: Path, monkeypatch) -> Path:
    """A project folder holding a user's backend module, ``userbackend.py``."""
    (tmp_path / "userbackend.py").write_text("import torch\n" + USER_MODULE)
    (tmp_path / "pyproject.toml").write_text('[tool.bcfg]\nallow = ["userbackend"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "userbackend", raising=False)
    return tmp_path


def test_user_module_round_trips_through_the_cli(user_project: Path, capsys) -> None:
    assert (
        main(["import", "userbackend:get_my_config", "-o", "specs/mine.bcfg"]) == 2
    )  # no specs/ yet
    (user_project / "specs").mkdir()
    assert main(["import", "userbackend:get_my_config", "-o", "specs/mine.bcfg"]) == 0
    text = (user_project / "specs" / "mine.bcfg").read_text()
    assert "fuser: userbackend.fuse_linear_relu" in text
    assert "fuser: sequential(nni.ConvReLU2d)" in text
    assert "root_node: pattern[1]" in text
    assert "backend my_backend" not in text and 'backend my "mine" {' in text
    assert main(["fmt", "--check", "specs/mine.bcfg"]) == 0
    import userbackend

    regenerated = regenerate(text, user_project / "specs", ("torch", "operator", "userbackend"))
    assert compare_backend_configs(userbackend.get_my_config(), regenerated) == []


def test_module_off_the_allow_list_is_noted(user_project: Path, capsys) -> None:
    (user_project / "pyproject.toml").write_text("[tool.bcfg]\n")
    assert (
        main(["import", "userbackend:get_my_config"]) == 1
    )  # written, but generate needs the allow-list
    out, err = capsys.readouterr()
    assert "# Note: 'userbackend' is not on the allow-list" in out
    assert "note: 'userbackend' is not on the allow-list" in err
    assert (
        "error" not in err
        and "before bcfg generate accepts the spec: extend [tool.bcfg] allow" in err
    )


@pytest.mark.parametrize(
    "target, message",
    [
        ("userbackend", "expected MODULE:FUNCTION"),
        ("userbackend:", "expected MODULE:FUNCTION"),
        ("no_such_module_xyz:f", "no module named 'no_such_module_xyz'"),
        ("userbackend:missing", "userbackend has no attribute 'missing'"),
        ("userbackend:int8", "is not a function"),
        ("userbackend:not_a_config", "returned int, not a BackendConfig"),
        ("userbackend:broken", "calling userbackend:broken() failed: RuntimeError: boom"),
        (
            "userbackend:lambda_fuser",
            "config 0 (pattern (Linear, ReLU)): fuser_method lambda_fuser.<locals>.<lambda> has no importable",
        ),
    ],
)
def test_errors_are_one_line_with_exit_code_2(
    user_project: Path, capsys, target: str, message: str
) -> None:
    assert main(["import", target]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("bcfg import: ") and message in err, err


def test_config_bcfg_rejects_is_written_with_findings(user_project: Path, capsys) -> None:
    """torch accepts `fused` without a fuser; bcfg's checks do not: write the spec, point at the line."""
    (user_project / "odd.py").write_text(
        "import torch.nn as nn\n"
        "import torch.ao.nn.intrinsic as nni\n"
        "from torch.ao.quantization.backend_config import BackendConfig, BackendPatternConfig\n"
        "def get_odd():\n"
        "    return BackendConfig('odd').set_backend_pattern_config(\n"
        "        BackendPatternConfig((nn.Conv2d, nn.ReLU)).set_fused_module(nni.ConvReLU2d))\n"
    )
    assert main(["import", "odd:get_odd", "-o", "odd.bcfg"]) == 1
    err = capsys.readouterr().err
    text = (user_project / "odd.bcfg").read_text()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "fused: nni.ConvReLU2d" in ln)
    assert f"bcfg import: odd.bcfg:{line}:" in err and "error:" in err
    assert "fix the 1 error(s) above in the spec" in err


def test_getter_that_is_not_a_picker_is_refused() -> None:
    config = BackendConfig("x").set_backend_pattern_config(
        BackendPatternConfig((nn.Conv2d, nn.ReLU))._set_root_node_getter(lambda p: p[0].whatever)
    )
    with pytest.raises(ImportFailure, match="does not just pick elements of the pattern"):
        build_spec(config, "get_x", "x:get_x")


# ----------------------------------------------- random BackendConfigs


def my_fuser(is_qat, *modules):
    """A user fuser, named by its dotted path in imported specs."""
    return nn.Sequential(*modules)


def my_op(x):
    """A user function used as a pattern atom."""
    return x


MODULES = [
    nn.Conv1d,
    nn.Conv2d,
    nn.Linear,
    nn.ReLU,
    nn.BatchNorm2d,
    nni.ConvReLU2d,
    nnqat.Linear,
    nnqr.Linear,
    nn.LSTM,
]
FUNCTIONS = [
    F.relu,
    F.linear,
    F.max_pool2d,
    torch.add,
    torch.cat,
    operator.add,
    operator.getitem,
    my_op,
]
OPS = [torch.ops.aten.add.Tensor, torch.ops.aten.convolution.default, torch.ops.aten.relu.default]
ATOMS = st.sampled_from(MODULES + FUNCTIONS + OPS + ["relu", "view", "size", MatchAllNode])
DTYPES = [
    torch.quint8,
    torch.qint8,
    torch.float32,
    torch.float16,
    torch.qint32,
    torch.quint4x2,
    torch.int8,
    torch.uint8,
]
RANGES = {
    torch.quint8: (0, 255),
    torch.qint8: (-128, 127),
    torch.int8: (-128, 127),
    torch.uint8: (0, 255),
}
OBSERVATIONS = st.sampled_from(list(ObservationType))
SCALES = st.one_of(
    st.integers(-20, -1).map(lambda k: 2.0**k), st.floats(1e-6, 10.0), st.integers(1, 4)
)


@st.composite
def constrained(draw: st.DrawFn, dtype: torch.dtype) -> torch.dtype | DTypeWithConstraints:
    if dtype not in RANGES or draw(st.booleans()):
        return dtype
    lo, hi = RANGES[dtype]
    kw = {}
    if draw(st.booleans()):
        lo, hi = sorted(draw(st.lists(st.integers(lo, hi), min_size=2, max_size=2)))
        kw.update(quant_min_lower_bound=lo, quant_max_upper_bound=hi)
    if draw(st.booleans()):
        kw.update(scale_exact_match=draw(SCALES), zero_point_exact_match=draw(st.integers(lo, hi)))
    else:
        if draw(st.booleans()):
            kw["scale_min_lower_bound"] = draw(SCALES)
        if draw(st.booleans()):
            kw["scale_max_upper_bound"] = 1e3
    return DTypeWithConstraints(dtype=dtype, **kw)


@st.composite
def dtype_configs(draw: st.DrawFn) -> DTypeConfig:
    def slot() -> object:
        dt = draw(st.none() | st.sampled_from(DTYPES))
        return None if dt is None else draw(constrained(dt))

    return DTypeConfig(
        input_dtype=slot(),
        output_dtype=slot(),
        weight_dtype=slot(),
        bias_dtype=draw(st.none() | st.sampled_from(DTYPES)),
        is_dynamic=draw(st.sampled_from([None, True, False])),
    )


def complex_patterns(depth: int = 2) -> st.SearchStrategy:
    if depth == 0:
        return ATOMS
    arg = st.one_of(ATOMS, st.integers(0, 3), complex_patterns(depth - 1))
    return st.tuples(ATOMS, st.lists(arg, min_size=1, max_size=2)).map(lambda t: (t[0], *t[1]))


def _pick(path: tuple[int, ...], pattern: object) -> object:
    return functools.reduce(operator.getitem, path, pattern)


def _paths(p: object, here: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    out = [here]
    if isinstance(p, tuple):
        for i, x in enumerate(p):
            out += _paths(x, here + (i,))
    return out


@st.composite
def pattern_configs(draw: st.DrawFn, dtypes: list[DTypeConfig]) -> BackendPatternConfig:
    if draw(st.booleans()):
        pattern = draw(st.one_of(ATOMS, st.lists(ATOMS, min_size=2, max_size=3).map(tuple)))
        config = BackendPatternConfig(pattern)
        reversed_pattern = pattern if not isinstance(pattern, tuple) else tuple(reversed(pattern))
        if isinstance(pattern, tuple) and len(pattern) == 3:
            reversed_pattern = (pattern[2], (pattern[1], pattern[0]))
    else:
        pattern = draw(st.one_of(ATOMS, complex_patterns()))
        config = BackendPatternConfig()._set_pattern_complex_format(pattern)
        reversed_pattern = pattern
    config.set_observation_type(draw(OBSERVATIONS))
    config.set_dtype_configs(draw(st.lists(st.sampled_from(dtypes), max_size=3)))
    for setter in ("set_root_module", "set_qat_module", "set_reference_quantized_module"):
        if draw(st.booleans()):
            getattr(config, setter)(draw(st.sampled_from(MODULES)))
    # Only fusers bcfg's checks accept: sequential() on two modules, fusers taking one
    # module per pattern element, and a `fused` module for whatever is fused.
    n = len(pattern) if isinstance(pattern, tuple) else 1
    simple = config._pattern_complex_format is None
    kinds = ["none", "mine"] + ["sequential"] * (simple and n == 2) + ["conv_bn"] * (n == 2)
    fuser = draw(st.sampled_from(kinds))
    if fuser == "sequential":
        fused = draw(st.sampled_from([nni.ConvReLU2d, nni.LinearReLU]))
        config.set_fuser_method(_sequential_wrapper2(fused))
        if draw(st.booleans()):
            config.set_fused_module(fused)
    elif fuser != "none":
        config.set_fuser_method(fuse_conv_bn if fuser == "conv_bn" else my_fuser)
        if config.root_module is None or draw(st.booleans()):
            config.set_fused_module(draw(st.sampled_from(MODULES)))
    paths = _paths(reversed_pattern)
    if draw(st.booleans()):
        config._set_root_node_getter(functools.partial(_pick, draw(st.sampled_from(paths))))
    if draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(paths), max_size=3))
        config._set_extra_inputs_getter(lambda p, chosen=chosen: [_pick(c, p) for c in chosen])
    counts = draw(st.dictionaries(st.integers(0, 4), OBSERVATIONS, max_size=3))
    config._set_num_tensor_args_to_observation_type(counts)
    names = st.sampled_from(["weight", "bias", "input", "extra_1"])
    config._set_input_type_to_index(draw(st.dictionaries(names, st.integers(0, 5), max_size=3)))
    return config


def _substitute(pattern: object, atoms: list) -> object:
    """``pattern`` with its leaf atoms replaced, in order, by ``atoms`` (ints kept)."""
    if isinstance(pattern, tuple):
        return tuple(_substitute(p, atoms) for p in pattern)
    if isinstance(pattern, int):
        return pattern
    return atoms.pop(0)


def _leaves(pattern: object) -> int:
    if isinstance(pattern, tuple):
        return sum(_leaves(p) for p in pattern)
    return 0 if isinstance(pattern, int) else 1


@st.composite
def families(draw: st.DrawFn, dtypes: list[DTypeConfig]) -> list[BackendPatternConfig]:
    """A pattern config and copies of it whose pattern differs in some atoms: what loops fold."""
    base = draw(pattern_configs(dtypes))
    out = [base]
    d = base.to_dict()
    key = "pattern" if "pattern" in d else "pattern_complex_format"
    for _ in range(draw(st.integers(0, 4))):
        atoms = draw(st.lists(ATOMS, min_size=_leaves(d[key]), max_size=_leaves(d[key])))
        out.append(BackendPatternConfig.from_dict({**d, key: _substitute(d[key], atoms)}))
    return out


@st.composite
def backend_configs(draw: st.DrawFn) -> BackendConfig:
    dtypes = draw(st.lists(dtype_configs(), min_size=1, max_size=4))
    config = BackendConfig(draw(st.text(max_size=8)))
    for family in draw(st.lists(families(dtypes), max_size=5)):
        for pc in family:
            config.set_backend_pattern_config(pc)
    return config


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(config=backend_configs())
def test_random_backend_configs_round_trip(config: BackendConfig, tmp_path_factory) -> None:
    imported = build_spec(config, "get_random_backend_config", "random", ALLOW)
    assert format_text(imported.text) == imported.text
    regenerated = regenerate(imported.text, tmp_path_factory.mktemp("random"))
    assert compare_backend_configs(config, regenerated) == []


# ------------------------------------------- writing, verifying, scaling


def test_several_targets_need_a_folder_and_keep_hand_written_files(
    user_project: Path, capsys
) -> None:
    targets = ["userbackend:get_my_config", "userbackend:get_my_config"]
    assert main(["import", *targets]) == 2
    assert "name a folder with -o" in capsys.readouterr().err
    (user_project / "specs").mkdir()
    (user_project / "specs" / "my.bcfg").write_text("# mine\n")
    assert main(["import", *targets, "-o", "specs"]) == 2
    err = capsys.readouterr().err
    assert "specs/my.bcfg exists and was not written by bcfg import" in err
    assert sorted(p.name for p in (user_project / "specs").iterdir()) == ["my.bcfg"]
    (user_project / "specs" / "my.bcfg").unlink()
    assert main(["import", *targets, "-o", "specs"]) == 0
    err = capsys.readouterr().err
    assert "wrote specs/my.bcfg: backend my" in err and "wrote specs/my_2.bcfg" in err
    assert "wrote specs/common.bcfg: shared by the backends" in err
    assert "verified: the specs regenerate all 4 pattern configs" in err
    # A second import replaces what the first wrote.
    assert main(["import", *targets, "-o", "specs", "--no-verify"]) == 0
    assert "not verified (--no-verify)" in capsys.readouterr().err
    assert main(["fmt", "--check", "specs"]) == 0


def test_files_are_written_all_or_none(tmp_path: Path, monkeypatch) -> None:
    from generator.cli import UsageError
    from generator.tools.importer import command

    files = {tmp_path / f"{n}.bcfg": f"# {n}\n" for n in ("a", "b", "c")}
    real = os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(dst))
        real(src, dst)

    monkeypatch.setattr(command.os, "replace", failing)
    with pytest.raises(UsageError, match="No space left on device"):
        command._write_all(files)
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["a.bcfg"] or leftovers == []  # renames are not undone, temporaries are
    assert not any(name.endswith(".tmp") for name in leftovers)


def test_verification_reports_a_config_that_differs() -> None:
    from generator.semantics.driver import analyze
    from generator.sources import MemorySources
    from generator.tools.importer.verify import verify

    spec = "backend b {\n    pattern nn.Linear { dtypes: {input: quint8, output: quint8} }\n}\n"
    (backend,) = analyze(MemorySources({"b.bcfg": spec}), ["b.bcfg"]).backends
    same = BackendPatternConfig(nn.Linear).set_dtype_configs(
        [DTypeConfig(torch.quint8, torch.quint8)]
    )
    other = BackendPatternConfig(nn.Linear).set_dtype_configs(
        [DTypeConfig(torch.qint8, torch.quint8)]
    )
    assert verify("b", [same], backend) == []
    (problem,) = verify("b", [other], backend)
    assert "dtype_configs[0].input_dtype" in problem


def test_folding_does_bounded_work_on_lists_of_lookalikes(monkeypatch) -> None:
    """Many distinct patterns with the same fields: the loop search stays linear in their number."""
    from generator.tools.importer import fold

    searches = []
    original = fold._Search.__init__

    def recording(self, folder, items):
        original(self, folder, items)
        searches.append((self, self.budget, len(items)))

    monkeypatch.setattr(fold._Search, "__init__", recording)
    atoms = MODULES + FUNCTIONS
    patterns = [(a, b) for a in atoms for b in atoms]
    patterns += [(a, b, c) for a in atoms for b in atoms for c in atoms]
    patterns = patterns[:1500]
    config = BackendConfig("many").set_backend_pattern_configs(
        [BackendPatternConfig(p) for p in patterns]
    )
    text = build_spec(config, "get_many", "many", library=False).text
    # Every search stops trying runs once it has anti-unified its budget of
    # items: at most one run (MAX_REPEAT blocks of MAX_BLOCK items) past it.
    for search, budget, n in searches:
        assert budget == fold.WORK_PER_ITEM * n + 4096
        assert budget - search.budget <= budget + fold.MAX_REPEAT * fold.MAX_BLOCK
    assert searches[0][2] == len(patterns) and searches[0][0].budget <= 0  # it ran out
    assert code_lines(text) < len(patterns) * 0.6  # still folded: loops over the last atom
