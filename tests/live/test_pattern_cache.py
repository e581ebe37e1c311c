"""The live suites' cache of torchao's pattern exports (tests/live/pt2e_support.py, on for
the session in tests/live/conftest.py) gives each call the graph a fresh export gives, and
exports each pattern once."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="PT2E quantizers need torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torchao.quantization.pt2e import qat_utils, utils  # noqa: E402

from .pt2e_support import cached, pattern_key  # noqa: E402

# convert's example inputs for the quantized conv2d + bn patterns (qat_utils._fold_conv_bn_qat)
INPUTS = (torch.randn(1, 1, 3, 3), torch.randn(1, 1, 1, 1), *(torch.randn(1) for _ in range(4)))


def test_a_cached_pattern_is_a_fresh_export_and_exported_once():
    calls = []

    def export(*args, **kwargs):
        calls.append(args[0])
        return utils._get_aten_graph_module_for_pattern(*args, **kwargs)

    export_once = cached(export)
    kwargs = qat_utils._get_quantized_conv_bn_example_inputs_kwargs(True, True, True, False)
    pattern = qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, False)
    fresh = utils._get_aten_graph_module_for_pattern(pattern, INPUTS, False, **kwargs)
    first = export_once(pattern, INPUTS, False, **kwargs)
    # The same pattern made again (a new function object, as torchao makes it each run).
    again = qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, False)
    second = export_once(again, INPUTS, False, **kwargs)
    assert len(calls) == 1
    assert first.code == second.code == fresh.code
    assert first is not second and first.graph is not second.graph  # each call its own copy


def test_what_the_graph_depends_on_is_in_the_key():
    kwargs = qat_utils._get_quantized_conv_bn_example_inputs_kwargs(True, True, True, False)
    key = pattern_key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, False),
        INPUTS,
        False,
        kwargs,
    )
    other_flags = pattern_key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, True),
        INPUTS,
        False,
        kwargs,
    )
    other_conv = pattern_key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv_transpose2d, False),
        INPUTS,
        False,
        kwargs,
    )
    other_shape = pattern_key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, False),
        (torch.randn(1, 1, 3, 3, 3), *INPUTS[1:]),
        False,
        kwargs,
    )
    assert key is not None and len({key, other_flags, other_conv, other_shape}) == 4
    assert pattern_key(torch.nn.ReLU(), INPUTS, False, {}) is None  # a module: exported
    assert pattern_key(lambda x: x + [1], INPUTS, False, {"y": [1]}) is None  # unhashable
