"""``bcfg compat --quantization-config``: one meaning of the config function for every runtime
base (issue 53.6). ``f(quantizer)`` that configures the quantizer and returns a config made that
config the global one under ``scopes: composable`` and dropped it without a word under
``scopes: modules`` (its ops then "left float on purpose"); now it is the global config for
both, and the report says what the function did."""

from __future__ import annotations

import pytest

pytest.importorskip("torchao", reason="the PT2E runtime needs torchao (pip install '.[pt2e]')")

import torch  # noqa: E402
from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config  # noqa: E402

from generator.live.compat.pt2e import configure  # noqa: E402

CONFIG = get_symmetric_quantization_config()


def configures_only(q):
    if hasattr(q, "set_module_type"):
        q.set_module_type(torch.nn.Conv2d, CONFIG)
    else:  # a composable quantizer of api: stages
        q.add_stage(CONFIG, [torch.ops.aten.conv2d.default])


def configures_and_returns(q):
    configures_only(q)
    return CONFIG


def returns():
    return CONFIG


COMPOSABLE = """
    dtypes s = {input: qint8, output: qint8, weight: qint8}
    quantizer t { fx: false  scopes: composable }
    backend t { pattern aten.conv2d.default { dtypes: s } }
"""


def getter(base, tmp_path):
    if base == "modules":
        from generated.xnnpack_executorch_quantizer import get_xnnpack_executorch_quantizer

        return get_xnnpack_executorch_quantizer
    from tests.live.pt2e_support import generate

    return generate(tmp_path, COMPOSABLE)


def global_config(q):
    stage = getattr(q, "global_stage", None)
    return stage.config if stage is not None else getattr(q, "global_config", None)


@pytest.mark.parametrize("base", ["modules", "composable"])
def test_a_config_the_configuring_function_returns_is_the_global_config(base, tmp_path):
    get = getter(base, tmp_path)
    q, how = configure(get(), "m:f", configures_and_returns)
    assert global_config(q) is CONFIG
    assert how == "m:f(quantizer) configured the quantizer and returned a config: the global config"
    q, how = configure(get(), "m:f", returns)
    assert global_config(q) is CONFIG and how == "m:f() returned the global config"
    q, how = configure(get(), "m:f", configures_only)
    assert global_config(q) is None
    assert how == (
        "m:f(quantizer) configured the quantizer; it set no global config: an op no other "
        "setting selects is left float"
    )


def test_a_config_the_quantizer_refuses_when_set_is_a_clear_error(tmp_path):
    """A config no pattern takes (weight_qscheme: per_channel, a per-tensor weight config)
    is refused by set_global itself: compat says so, naming the function and the pattern,
    where it stopped with "internal error" (issue 53, the fresh-clone trial)."""
    from generator.live.targets import ImportFailure
    from tests.live.pt2e_support import generate

    spec = COMPOSABLE.replace("{ dtypes: s }", "{ dtypes: s  pt2e: {weight_qscheme: per_channel} }")
    with pytest.raises(ImportFailure) as exc:
        configure(generate(tmp_path, spec)(), "m:f", returns)  # CONFIG's weights: per tensor
    said = str(exc.value)
    assert said.startswith("the quantizer refuses the config m:f() returned: ")
    assert "pattern aten.conv2d.default: weight.qscheme is torch.per_tensor_symmetric" in said
