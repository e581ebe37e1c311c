"""``semantics.delegates``: which dtype configs of a quantizer's patterns a delegate refuses,
said once per dtype, where it is defined. (What ExecuTorch does with them: tests/live/test_delegates.py.)
"""

from __future__ import annotations

import textwrap

from generator.semantics.driver import analyze
from generator.semantics.facts import TorchFacts
from generator.sources import MemorySources

FACTS = TorchFacts()


def warnings(text: str) -> list[tuple[int, str]]:
    spec = textwrap.dedent(text) + "quantizer b { delegate: xnnpack }\n"
    analysis = analyze(MemorySources({"b.bcfg": spec}), ["b.bcfg"], facts=FACTS)
    return [
        (d.span.line, d.message)
        for d in analysis.warnings
        if d.span is not None and "says delegate: xnnpack" in d.message
    ]


def test_int8_and_float_run_and_a_dynamic_configs_output_is_not_judged():
    assert warnings("""
            dtypes w8 = {input: qint8, output: qint8, weight: qint8, bias: float}
            dtypes dyn = {input: qint8, output: quint8, weight: qint8, bias: float, dynamic: true}
            dtypes half = {input: float16, output: float16, weight: float16, bias: float16}
            backend b {
                pattern nn.Linear { dtypes: [w8, dyn, half] }
            }
            """) == []


def test_one_warning_per_refused_dtype_at_its_constraint_naming_every_config_and_pattern():
    got = warnings("""
        constraint act = quint8 {quant_min: 0, quant_max: 127}
        dtypes w8 = {input: act, output: act, weight: qint8, bias: float}
        dtypes io = {input: act, output: act}
        backend b {
            pattern nn.Linear { dtypes: w8 }
            pattern nn.Conv2d { dtypes: w8 }
            pattern nn.Hardtanh { dtypes: io }
        }
        """)
    assert [(line, m.split(":")[0]) for line, m in got] == [
        (
            2,
            "activations in quint8 (constraint act; dtype configs w8, io; patterns nn.Linear, "
            "nn.Conv2d, nn.Hardtanh)",
        )
    ]


def test_a_dtype_written_in_place_is_warned_at_its_key():
    got = warnings("""
        dtypes w8 = {input: qint8, output: qint8, weight: quint8, bias: float}
        backend b {
            pattern nn.Linear { dtypes: w8 }
            pattern nn.Hardtanh { dtypes: {input: quint8, output: quint8} }
        }
        """)
    assert [(line, m.split(" (")[0]) for line, m in got] == [
        (2, "weights in quint8"),
        (5, "activations in quint8"),  # input and output: one dtype, one warning
    ]
    assert "; pattern nn.Hardtanh)" in got[1][1]


def test_a_pattern_left_out_of_the_quantizer_is_not_lowered_so_not_judged():
    assert warnings("""
            dtypes w8 = {input: qint8, output: qint8, weight: qint8, bias: float}
            dtypes u8 = {input: quint8, output: quint8}
            backend b {
                pattern nn.Linear { dtypes: w8 }
                pattern nn.Hardtanh { dtypes: u8  pt2e: {aten: []} }
            }
            """) == []


def test_weights_with_a_fixed_zero_point_other_than_0_are_refused():
    got = warnings("""
        constraint w = qint8 {scale: 0.5, zero_point: 3}
        dtypes w8 = {input: qint8, output: qint8, weight: w, bias: float}
        backend b {
            pattern nn.Linear { dtypes: w8 }
        }
        """)
    assert [(line, m.split(" (")[0]) for line, m in got] == [(2, "weights in qint8, zero point 3")]
    assert "int8 weights with zero point 0 (symmetric) only" in got[0][1]
