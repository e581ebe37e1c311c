"""``import "bcfg:torch"``: the shipped library places exactly what torch's helpers build.

Each group of the library is expanded through the resolver for several dtype
sets and compared, canonically and in order, with a ``BackendConfig`` built from
the helper of torch's ``_common_operator_config_utils.py`` it stands for, on the
installed torch.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
import torch.ao.quantization.backend_config.utils  # noqa: F401  (BackendConfig needs it)
from torch.ao.quantization.backend_config import BackendConfig, DTypeConfig, DTypeWithConstraints
from torch.ao.quantization.backend_config import _common_operator_config_utils as cu

from generator.diagnostics import SpecError
from generator.live.build import build_backend
from generator.live.canonical import compare_backend_configs
from generator.semantics.driver import resolve_specs
from generator.sources import MemorySources, read_library

# library group -> torch's helper
HELPERS = {
    "conv": cu._get_conv_configs,
    "linear": cu._get_linear_configs,
    "binary": cu._get_binary_op_configs,
    "cat": lambda ds: [cu._get_cat_config(ds)],
    "default_ops": cu._get_default_op_configs,
    "fixed_qparams": cu._get_fixed_qparams_op_configs,
    "share_qparams": cu._get_share_qparams_op_configs,
    "tensor_info": cu._get_tensor_info_op_configs,
    "bn": cu._get_bn_configs,
    "layer_norm": cu._get_ln_configs,
    "rnn": cu._get_rnn_op_configs,
    "embedding": cu._get_embedding_op_configs,
}

# Dtype sets to expand each group with: spec text, live DTypeConfigs.
DTYPE_SETS = {
    "[w8]": [
        DTypeConfig(torch.quint8, torch.quint8, torch.qint8, torch.float),
    ],
    "[a, dyn]": [
        DTypeConfig(
            DTypeWithConstraints(torch.qint8, scale_min_lower_bound=2**-12),
            DTypeWithConstraints(torch.qint8, scale_min_lower_bound=2**-12),
        ),
        DTypeConfig(torch.quint8, torch.float, torch.qint8, torch.float, is_dynamic=True),
    ],
}
DECLS = """
    constraint min_scale = qint8 {scale_min: 2 ** -12}
    dtypes w8 = {input: quint8, output: quint8, weight: qint8, bias: float}
    dtypes a = {input: min_scale, output: min_scale}
    dtypes dyn = {input: quint8, output: float, weight: qint8, bias: float, dynamic: true}
"""


def expand(tmp_path: Path, body: str) -> BackendConfig:
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(f'import "bcfg:torch"\n{DECLS}\nbackend t {{\n{body}\n}}\n'))
    (backend,) = resolve_specs(tmp_path, [spec]).backends
    return build_backend(backend)


@pytest.mark.parametrize("group", list(HELPERS))
def test_each_group_places_what_its_torch_helper_builds(tmp_path: Path, group: str) -> None:
    for text, live in DTYPE_SETS.items():
        if group == "fixed_qparams" and text != "[w8]":
            continue  # torch refuses scale bounds on fixed-qparams activations
        ours = expand(tmp_path, f"use {group}({text})")
        theirs = BackendConfig("t").set_backend_pattern_configs(HELPERS[group](live))
        assert compare_backend_configs(theirs, ours) == [], (group, text)


def test_a_library_import_is_resolved_from_any_folder_and_in_memory(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert len(expand(deep, "use linear(w8)").configs) == 12
    text = 'import "bcfg:torch"\ndtypes d = {input: quint8, output: quint8}\nbackend m { use cat(d) }\n'
    from generator.semantics.driver import analyze

    analysis = analyze(MemorySources({"m.bcfg": text}), ["m.bcfg"], ("torch", "operator"))
    assert [b.module for b in analysis.backends] == ["m"]
    assert not analysis.warnings  # a library's unused groups are not the user's concern
    assert read_library("bcfg:torch").text.startswith("# bcfg's library")


def test_an_unknown_library_is_a_located_error(tmp_path: Path) -> None:
    spec = tmp_path / "t.bcfg"
    spec.write_text('import "bcfg:tensorflow"\nbackend t {}\n')
    with pytest.raises(SpecError) as exc:
        resolve_specs(tmp_path, [spec])
    (d,) = exc.value.diagnostics
    assert (d.span.line, d.span.column) == (1, 1)
    assert d.message == "cannot import 'bcfg:tensorflow': bcfg ships no such library"
    assert d.hint == 'libraries: "bcfg:torch"'


def test_the_repositorys_specs_hold_the_same_groups() -> None:
    """specs/common.bcfg writes out the library's groups: torch's eight backends prove them."""
    from tests.support import REPO

    library = read_library("bcfg:torch").text
    common = (REPO / "specs" / "common.bcfg").read_text(encoding="utf-8")
    marker = "# Fixed quantization parameters of ops whose output range is known."
    assert library[library.index(marker) :] == common[common.index(marker) :]
