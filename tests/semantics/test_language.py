"""Language features, each resolved from a small spec and checked in the model and in torch."""

from __future__ import annotations

import textwrap

import pytest

from generator.diagnostics import SpecError
from generator.live.build import build_backend
from generator.semantics import model as m
from generator.semantics.driver import resolve_specs


def resolve(tmp_path, text: str, extra: dict[str, str] | None = None) -> m.Backend:
    for name, body in (extra or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(body))
    spec = tmp_path / "t.bcfg"
    spec.write_text(textwrap.dedent(text))
    (backend,) = resolve_specs(tmp_path, [spec]).backends
    return backend


def errors(tmp_path, text: str) -> list[str]:
    with pytest.raises(SpecError) as exc:
        resolve(tmp_path, text)
    return [
        f"{d.span.line}:{d.span.column}: {d.message}"
        for d in exc.value.diagnostics
        if d.severity == "error"
    ]


def test_loops_interpolation_and_groups(tmp_path):
    b = resolve(
        tmp_path,
        """
        dtypes d = {input: quint8, output: quint8}
        group cells(ds, names) {
            for cell in names { pattern nn.${cell} { dtypes: ds  root: nn.${cell}  reference: nnqr.${cell} } }
        }
        backend b {
            use cells(d, [GRUCell, LSTM])
            for n in [1, 3] { pattern F.conv${n}d { dtypes: d } }
            for (op, obs) in [(torch.cat, shared_observer), ("shape", not_observed)] {
                pattern op { observation: obs  dtypes: d }
            }
        }
        """,
    )
    paths = [c.pattern.path if isinstance(c.pattern, m.Symbol) else c.pattern for c in b.configs]
    assert paths == [
        "torch.nn.GRUCell",
        "torch.nn.LSTM",
        "torch.nn.functional.conv1d",
        "torch.nn.functional.conv3d",
        "torch.cat",
        "shape",
    ]
    assert b.configs[1].reference_module.path == "torch.ao.nn.quantized.reference.LSTM"
    assert [c.observation for c in b.configs[4:]] == [
        "OUTPUT_SHARE_OBSERVER_WITH_INPUT",
        "INPUT_OUTPUT_NOT_OBSERVED",
    ]


def test_override_replaces_in_place_and_duplicates_are_errors(tmp_path):
    b = resolve(
        tmp_path,
        """
        backend b {
            pattern nn.ReLU { observation: shared_observer }
            pattern nn.Tanh {}
            override pattern nn.ReLU { observation: not_observed }
        }
        """,
    )
    assert [(c.pattern.path, c.observation) for c in b.configs] == [
        ("torch.nn.ReLU", "INPUT_OUTPUT_NOT_OBSERVED"),
        ("torch.nn.Tanh", "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"),
    ]
    # torch agrees: setting a pattern twice keeps the first position.
    built = build_backend(b)
    assert [c.pattern for c in built.configs][0].__name__ == "ReLU"
    msgs = errors(tmp_path, "backend b {\n  pattern nn.ReLU {}\n  pattern torch.nn.ReLU {}\n}\n")
    assert msgs == ["3:3: pattern nn.ReLU is already defined at t.bcfg:2:3"]
    msgs = errors(tmp_path, "backend b {\n  override pattern nn.ReLU {}\n}\n")
    assert "replaces nothing" in msgs[0]


def test_same_object_under_two_names_is_a_duplicate(tmp_path):
    # F.avg_pool2d is torch._C._nn.avg_pool2d; torch keys configs by object.
    msgs = errors(
        tmp_path,
        "backend b {\n  pattern F.avg_pool2d {}\n  pattern torch._C._nn.avg_pool2d {}\n}\n",
    )
    assert "already defined" in msgs[0]


def test_constraints_and_constrain(tmp_path):
    b = resolve(
        tmp_path,
        """
        constraint act = qint8 {scale_min: 2 ** -12}
        constraint fixed = quint8 {quant_min: 0, quant_max: 255, scale: 1.0 / 256.0, zero_point: 0}
        dtypes ds = [{input: act, output: act}, {input: quint8, output: quint8, weight: qint8, bias: float}]
        backend b { pattern nn.Sigmoid { dtypes: constrain(ds, fixed) } }
        """,
    )
    sym, plain = b.configs[0].dtype_configs
    assert sym.input == m.DType("qint8", scale_min_lower_bound=2**-12)
    assert plain.input == m.DType("quint8", 0, 255, None, None, 1 / 256, 0)
    assert plain.weight == m.DType("qint8") and plain.bias == "float32"
    dc = build_backend(b).configs[0].dtype_configs[1]
    assert dc.input_dtype_with_constraints.scale_exact_match == 0.00390625


def test_complex_patterns_getters_and_fusers(tmp_path):
    b = resolve(
        tmp_path,
        """
        fuse add_conv(add, (bn, conv), _) eval_only =
            nni.ConvAdd2d(nn.utils.fusion.fuse_conv_bn_eval(conv, bn), add)
        backend b {
            pattern complex (operator.add, (nn.BatchNorm2d, nn.Conv2d), MatchAllNode) {
                fuser: add_conv
                root_node: pattern[1][1]
                extra_inputs: [pattern[2]]
                fused: nni.ConvAdd2d
                num_tensor_args: {0: different_observer, 2: shared_observer}
                input_index: {weight: 1, bias: 2}
            }
            pattern complex (operator.getitem, aten.max_pool2d_with_indices.default, 0) {
                root_node: pattern[1]
            }
            pattern (nn.Linear, nn.ReLU) { fuser: sequential(nni.LinearReLU) }
        }
        """,
    )
    c = b.configs[0]
    assert c.complex and c.root_node_getter == m.NodeGetter((1, 1))
    assert c.extra_inputs_getter == m.ExtraInputsGetter(((2,),))
    assert isinstance(c.fuser, m.DefinedFuser) and c.fuser.eval_only
    assert c.num_tensor_args == (
        (0, "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"),
        (2, "OUTPUT_SHARE_OBSERVER_WITH_INPUT"),
    )
    assert b.configs[1].pattern[2] == 0
    built = build_backend(b).configs
    assert built[0]._root_node_getter(("a", ("b", "c"), "d")) == "c"
    assert built[0]._extra_inputs_getter(("a", ("b", "c"), "d")) == ["d"]
    with pytest.raises(NotImplementedError):
        built[0].fuser_method(True, None, (None, None), None)


def test_imports_aliases_and_backend_name(tmp_path):
    b = resolve(
        tmp_path,
        """
        import "lib.bcfg"
        backend b "b_v2.0" { use relus(d) }
        """,
        {"lib.bcfg": """
            alias qnn = torch.ao.nn.quantized
            dtypes d = {input: quint8, output: quint8}
            group relus(ds) { pattern qnn.ReLU6 { dtypes: ds } }
            """},
    )
    assert b.name == "b_v2.0" and b.module == "b"
    assert b.configs[0].pattern.path == "torch.ao.nn.quantized.ReLU6"
    assert [name for name, _ in b.inputs] == ["t.bcfg", "lib.bcfg"]


def test_several_errors_are_reported_together(tmp_path):
    msgs = errors(
        tmp_path,
        "backend b {\n  pattern nn.Conv2dd {}\n  pattern (nn.ReLU,) {}\n  pattern nn.ReLU { root: F.relu }\n}\n",
    )
    assert len(msgs) == 3
    assert msgs[0].startswith("2:11: unknown symbol 'torch.nn.Conv2dd'")
    assert msgs[1].startswith("3:11: a sequential pattern has 2 to 4 elements")
    assert msgs[2].startswith("4:27: a root module must be an nn.Module class")


def test_specs_cannot_import_arbitrary_modules(tmp_path):
    msgs = errors(tmp_path, "backend b {\n  pattern os.system {}\n}\n")
    assert "'os' is not an allowed module" in msgs[0]
    import sys

    assert "os.system" not in str(sys.modules.get("__main__"))


def test_fusers_named_alike_stay_distinct(tmp_path):
    # `fuse a` and `fuse fuse_a` once both rendered as `_fuse_a`.
    from generator.emit.backend_config import render_backend

    b = resolve(
        tmp_path,
        """
        fuse a(x, y) = nni.LinearReLU(x, y)
        fuse fuse_a(x, y) = nni.ConvReLU2d(x, y)
        backend b {
            pattern (nn.Linear, nn.ReLU) { fuser: a  fused: nni.LinearReLU }
            pattern (nn.Conv2d, nn.ReLU) { fuser: fuse_a  fused: nni.ConvReLU2d }
        }
        """,
    )
    namespace: dict = {}
    exec(compile(render_backend(b), "b.py", "exec"), namespace)
    linear, conv = namespace["get_b_backend_config"]().configs
    assert linear.fuser_method is not conv.fuser_method
    assert linear.fuser_method.__name__ == "_fuse_a"
    assert conv.fuser_method.__name__ == "_fuse_fuse_a"


def test_names_may_start_with_a_keyword(tmp_path):
    """`pattern_ds`, `dtypes_x` and `patterns` are names (the lexer once split them)."""
    b = resolve(
        tmp_path,
        """
        dtypes pattern_ds = {input: quint8, output: quint8}
        dtypes dtypes_x = {input: qint8, output: qint8}
        backend b {
            for patterns in [nn.ReLU, nn.ReLU6] {
                pattern patterns { dtypes: [pattern_ds, dtypes_x] }
            }
        }
        """,
    )
    assert [c.pattern for c in b.configs] == [
        m.Symbol("torch.nn.ReLU", m.SymbolKind.MODULE),
        m.Symbol("torch.nn.ReLU6", m.SymbolKind.MODULE),
    ]
    assert [d.input for d in b.configs[0].dtype_configs] == [m.DType("quint8"), m.DType("qint8")]


def test_fuse_bodies_pass_is_qat_and_constants(tmp_path):
    """torch-1.13 wrappers (reverse2/reverse3) and calls with constant flags, as fuse definitions."""
    import torch
    from torch import nn

    from generator.emit.backend_config import render_backend
    from generator.live.canonical import compare_backend_configs

    b = resolve(
        tmp_path,
        """
        alias fmm = torch.ao.quantization.fuser_method_mappings
        fuse bn_conv(bn, conv) = fmm.fuse_conv_bn(is_qat, conv, bn)
        fuse relu_bn_conv(relu, (bn, conv)) = fmm.fuse_conv_bn_relu(is_qat, conv, bn, relu)
        fuse scaled(a, b) = nn.Hardtanh(-2 * 0.5, 1.5, false)
        backend b {
            pattern complex (nn.BatchNorm2d, nn.Conv2d) {
                fuser: bn_conv
                fused: nni.ConvBn2d
            }
            pattern complex (nn.ReLU, (nn.BatchNorm2d, nn.Conv2d)) {
                fuser: relu_bn_conv
                fused: nni.ConvBnReLU2d
            }
            pattern (nn.Conv1d, nn.ReLU) {
                fuser: scaled
                fused: nn.Hardtanh
            }
        }
        """,
    )
    body = b.configs[0].fuser.body
    assert body.args[0] == m.FuseQat() and body.args[1] == m.FuseArg("conv")
    from generator.semantics.spelling import fuse_definition

    assert fuse_definition(b.configs[2].fuser) == (
        "fuse scaled(a, b) = nn.Hardtanh(-1.0, 1.5, false)"
    )
    assert "fmm.fuse_conv_bn(is_qat, conv, bn)" in fuse_definition(b.configs[0].fuser).replace(
        "torch.ao.quantization.fuser_method_mappings", "fmm"
    )
    assert b.configs[2].fuser.body.args == (m.FuseConst(-1.0), m.FuseConst(1.5), m.FuseConst(False))
    built = build_backend(b)
    namespace: dict = {}
    exec(compile(render_backend(b), "b.py", "exec"), namespace)
    generated = namespace["get_b_backend_config"]()
    assert compare_backend_configs(built, generated) == []
    # The QAT flag reaches the wrapped function: a train-mode conv + bn fuses into
    # ConvBn2d, an eval-mode pair folds into a plain Conv2d.
    conv, bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
    for fuser in (built.configs[0].fuser_method, generated.configs[0].fuser_method):
        assert type(fuser(True, bn.train(), conv.train())).__name__ == "ConvBn2d"
        assert type(fuser(False, bn.eval(), conv.eval())) is nn.Conv2d
    hardtanh = generated.configs[2].fuser_method(False, nn.Conv1d(1, 1, 1), nn.ReLU())
    assert (hardtanh.min_val, hardtanh.max_val, hardtanh.inplace) == (-1.0, 1.5, False)
    assert torch.is_tensor(torch.zeros(1))


def test_fuse_body_words_that_are_not_allowed(tmp_path):
    assert (
        errors(
            tmp_path,
            """
        fuse f(a, b) = nni.LinearReLU(a, "b")
        backend b { pattern (nn.Linear, nn.ReLU) { fuser: f  fused: nni.LinearReLU } }
        """,
        )
        == [
            "2:34: a fuse body may only use its parameters, is_qat, true, false, numbers and calls of modules or functions"
        ]
    )
    assert (
        errors(
            tmp_path,
            """
        fuse f(a, b) = nni.LinearReLU(a, is_qatt)
        backend b { pattern (nn.Linear, nn.ReLU) { fuser: f  fused: nni.LinearReLU } }
        """,
        )
        == ["2:34: 'is_qatt' is not a parameter of this fuser"]
    )
    assert (
        errors(
            tmp_path,
            """
        fuse f(a, is_qat) = nni.LinearReLU(a, is_qat)
        backend b { pattern (nn.Linear, nn.ReLU) { fuser: f  fused: nni.LinearReLU } }
        """,
        )
        == ["2:11: 'is_qat' cannot be a parameter name"]
    )


def test_sequential_fuses_the_two_elements_of_a_complex_pattern(tmp_path):
    """torch calls _sequential_wrapper2 on a complex pair with the elements as they nest."""
    from generator.emit.backend_config import render_backend

    b = resolve(
        tmp_path,
        """
        backend b {
            pattern complex (nn.ReLU, nn.Conv2d) {
                fuser: sequential(nni.ConvReLU2d)
                fused: nni.ConvReLU2d
            }
            pattern complex (nn.ReLU, (operator.add, nn.Conv2d, MatchAllNode)) {
                fuser: sequential(nn.Sequential)
                fused: nn.Sequential
                root_node: pattern[1][1]
            }
        }
        """,
    )
    assert isinstance(b.configs[1].fuser, m.SequentialFuser)
    namespace: dict = {}
    exec(compile(render_backend(b), "b.py", "exec"), namespace)
    pair, nested = namespace["get_b_backend_config"]().configs
    from generator.live.names import sequential_class

    assert sequential_class(pair.fuser_method).__name__ == "ConvReLU2d"
    assert sequential_class(nested.fuser_method).__name__ == "Sequential"
    assert (
        errors(
            tmp_path,
            """
        backend b {
            pattern complex (operator.add, nn.Conv2d, MatchAllNode) {
                fuser: sequential(nni.ConvAdd2d)
                fused: nni.ConvAdd2d
            }
        }
        """,
        )
        == ["4:9: sequential() fuses exactly two modules, but the pattern has 3 elements"]
    )
