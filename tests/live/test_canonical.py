"""Tests for generator.live.canonical: field-by-field comparison of BackendConfigs and
the canonical form of their callables."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.ao.nn.intrinsic as nni
import torch.nn.functional as F
from torch import nn
from torch.ao.quantization import backend_config as bc
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeWithConstraints,
    ObservationType,
    _qnnpack_pt2e,
    onednn,
    x86,
)
from torch.ao.quantization.fuser_method_mappings import (
    _sequential_wrapper2,
    fuse_conv_bn,
)
from torch.ao.quantization.utils import MatchAllNode

from generator.live.canonical import (
    CALLABLE_FIELDS,
    callable_difference,
    callables_equivalent,
    canonical_dict,
    compare_backend_configs,
)

BACKENDS: dict[str, tuple[Callable[[], BackendConfig], str, int]] = {
    "native": (bc.get_native_backend_config, "native", 194),
    "fbgemm": (bc.get_fbgemm_backend_config, "fbgemm", 192),
    "qnnpack": (bc.get_qnnpack_backend_config, "qnnpack", 190),
    "x86": (x86.get_x86_backend_config, "x86", 192),
    "onednn": (bc.get_onednn_backend_config, "onednn", 221),
    "executorch": (bc.get_executorch_backend_config, "executorch", 84),
    "tensorrt": (bc.get_tensorrt_backend_config, "tensorrt", 149),
    "qnnpack_pt2e": (
        _qnnpack_pt2e.get_qnnpack_pt2e_backend_config,
        "qnnpack_pytorch_2.0_export",
        13,
    ),
}

ONEDNN = bc.get_onednn_backend_config()
BASE = ONEDNN.to_dict()


class _Mutant(nn.Module):
    """A module class no torch backend config mentions."""


def _mutant_fuser(is_qat: bool, *modules: Any) -> nn.Module:
    return _Mutant()


def _mutant_root_node_getter(pattern: Any) -> Any:
    return pattern[0]


def _mutant_extra_inputs_getter(pattern: Any) -> list[Any]:
    return []


def _passthrough(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A distinct function object that behaves exactly like ``fn``."""
    return lambda *args: fn(*args)


def _first_index(predicate: Callable[[dict[str, Any]], bool]) -> int:
    """Index of the first onednn config dict satisfying ``predicate``."""
    return next(i for i, c in enumerate(BASE["configs"]) if predicate(c))


def _index_of(field: str, value: Any) -> int:
    """Index of the first onednn config whose ``field`` is ``value``."""
    return _first_index(lambda c: c.get(field) is value)


CONV_RELU_INDEX = _first_index(lambda c: c.get("pattern") == (nn.Conv2d, nn.ReLU))


# ---------------------------------------------------------------------------
# torch's own backend configs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_backend_config_equals_a_second_call(backend: str) -> None:
    getter, name, count = BACKENDS[backend]
    first, second = getter(), getter()
    assert first.name == name
    assert len(first.configs) == count
    assert compare_backend_configs(first, second) == []
    assert compare_backend_configs(first.to_dict(), second) == []
    assert compare_backend_configs(first, second.to_dict()) == []
    assert canonical_dict(first) == canonical_dict(second)
    json.dumps(canonical_dict(first))


@pytest.mark.parametrize("backend", ["native", "onednn", "executorch", "tensorrt"])
def test_fresh_sequential_wrappers_are_distinct_objects(backend: str) -> None:
    """The second-call comparison above really exercises rule (b)."""
    getter = BACKENDS[backend][0]
    pairs = [
        (a.fuser_method, b.fuser_method)
        for a, b in zip(getter().configs, getter().configs)
        if a.fuser_method is not None
    ]
    assert any(a is not b for a, b in pairs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_behaviourally_identical_callables_are_equivalent(backend: str) -> None:
    """Rule (c) accepts every fuser and getter of torch's configs when wrapped
    in a new function object, so the module factory covers every pattern."""
    getter = BACKENDS[backend][0]
    data = getter().to_dict()
    wrapped = 0
    for config in data["configs"]:
        for field in CALLABLE_FIELDS:
            if field in config:
                config[field] = _passthrough(config[field])
                wrapped += 1
    assert compare_backend_configs(getter(), data) == []
    if backend != "qnnpack_pt2e":
        assert wrapped > 0


def test_rebuilt_from_dict_is_equivalent() -> None:
    assert compare_backend_configs(ONEDNN, BackendConfig.from_dict(BASE)) == []


def test_dict_holding_config_objects_is_accepted() -> None:
    data = {"name": "onednn", "configs": ONEDNN.configs}
    assert compare_backend_configs(ONEDNN, data) == []
    assert canonical_dict(data) == canonical_dict(ONEDNN)


# ---------------------------------------------------------------------------
# Mutation tests: every single-field change is reported, and only it
# ---------------------------------------------------------------------------

_MODULE_FIELDS = (
    "root_module",
    "qat_module",
    "reference_quantized_module_for_root",
    "fused_module",
)
_CALLABLE_MUTANTS = {
    "fuser_method": _mutant_fuser,
    "root_node_getter": _mutant_root_node_getter,
    "extra_inputs_getter": _mutant_extra_inputs_getter,
}
_REQUIRED_FIELDS = ("observation_type", "dtype_configs", "pattern")


def _other_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.quint4x2 if dtype is not torch.quint4x2 else torch.qint8


def _other_number(value: Any) -> Any:
    if value is None:
        return 3
    if isinstance(value, bool):
        return not value
    return value + 1 if isinstance(value, int) else value * 2 + 1.0


def _other_observation_type(value: ObservationType) -> ObservationType:
    members = list(ObservationType)
    return members[(members.index(value) + 1) % len(members)]


def _mutated_pattern(pattern: Any) -> Any:
    return (_Mutant,) + pattern[1:] if isinstance(pattern, tuple) else _Mutant


def _dict_field_mutations(value: dict[Any, Any]) -> list[tuple[str, dict[Any, Any]]]:
    """Changed value, reversed key order, dropped key."""
    first = next(iter(value))
    changed = dict(value)
    old = changed[first]
    changed[first] = (
        _other_observation_type(old) if isinstance(old, ObservationType) else _other_number(old)
    )
    out = [("value", changed)]
    if len(value) > 1:
        out.append(("order", dict(reversed(list(value.items())))))
    out.append(("drop", {k: v for k, v in value.items() if k != first}))
    return out


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Mutation dropping ``key`` from a config dict."""
    return lambda c: {k: v for k, v in c.items() if k != key}


def _field_mutations(
    config: dict[str, Any],
) -> list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]]:
    """``(case id, mutate(config) -> new config, expected message start)`` for
    every field of ``config``, every dtype config key and every
    DTypeWithConstraints field."""
    cases: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = []

    def replace(key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda c: {**c, key: value}

    for key, value in config.items():
        if key in ("pattern", "pattern_complex_format"):
            cases.append((key, replace(key, _mutated_pattern(value)), key))
        elif key == "observation_type":
            cases.append((key, replace(key, _other_observation_type(value)), key))
        elif key in _MODULE_FIELDS:
            cases.append((key, replace(key, _Mutant), key))
        elif key in CALLABLE_FIELDS:
            cases.append((key, replace(key, _CALLABLE_MUTANTS[key]), key))
        elif key in ("num_tensor_args_to_observation_type", "input_type_to_index"):
            for how, new in _dict_field_mutations(value):
                cases.append((f"{key}-{how}", replace(key, new), key))
        elif key == "dtype_configs":
            cases += _dtype_config_mutations(value)
        else:
            raise AssertionError(f"no mutation for field {key!r}")
        if key not in _REQUIRED_FIELDS and key != "pattern_complex_format":
            cases.append((f"{key}-absent", _without(key), key))
    for key in _MODULE_FIELDS:
        if key not in config:
            cases.append((f"{key}-added", replace(key, _Mutant), key))
    return cases


def _dtype_config_mutations(
    dtype_configs: list[dict[str, Any]],
) -> list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]]:
    cases: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = []

    def with_entry(j: int, entry: dict[str, Any]) -> Callable[..., dict[str, Any]]:
        new = list(dtype_configs)
        new[j] = entry
        return lambda c: {**c, "dtype_configs": new}

    for j, entry in enumerate(dtype_configs):
        for key, value in entry.items():
            where = f"dtype_configs[{j}].{key}"
            if isinstance(value, DTypeWithConstraints):
                for field in dataclasses.fields(value):
                    old = getattr(value, field.name)
                    new_value = _other_dtype(old) if field.name == "dtype" else _other_number(old)
                    changed = dataclasses.replace(value, **{field.name: new_value})  # type: ignore[arg-type]
                    mutate = with_entry(j, {**entry, key: changed})
                    cases.append((f"{where}.{field.name}", mutate, where))
            elif key == "bias_dtype":
                mutate = with_entry(j, {**entry, key: _other_dtype(value)})
                cases.append((where, mutate, where))
            elif key == "is_dynamic":
                mutate = with_entry(j, {**entry, key: not value})
                cases.append((where, mutate, where))
            else:
                raise AssertionError(f"no mutation for dtype config key {key!r}")
            dropped = {k: v for k, v in entry.items() if k != key}
            cases.append((f"{where}-absent", with_entry(j, dropped), where))
    extra = list(dtype_configs) + [dtype_configs[0]]
    cases.append(
        (
            "dtype_configs-extra",
            lambda c: {**c, "dtype_configs": extra},
            "dtype_configs differs",
        )
    )
    return cases


def _sample_indices() -> list[int]:
    """Configs covering every field and every non-None DTypeWithConstraints
    field of onednn (first and last occurrence), plus a spread of others."""
    seen: dict[str, list[int]] = {}
    for i, config in enumerate(BASE["configs"]):
        for key in config:
            seen.setdefault(key, []).append(i)
        for entry in config["dtype_configs"]:
            for key, value in entry.items():
                seen.setdefault(f"dtype.{key}", []).append(i)
                if isinstance(value, DTypeWithConstraints):
                    for field in dataclasses.fields(value):
                        if getattr(value, field.name) is not None:
                            seen.setdefault(f"dwc.{field.name}", []).append(i)
    chosen = {i for indices in seen.values() for i in (indices[0], indices[-1])}
    chosen |= set(range(0, len(BASE["configs"]), 40))
    return sorted(chosen)


def _mutation_cases() -> list[Any]:
    cases = []
    for i in _sample_indices():
        for case_id, mutate, field in _field_mutations(BASE["configs"][i]):
            cases.append(pytest.param(i, mutate, field, id=f"config{i}-{case_id}"))
    return cases


MUTATION_CASES = _mutation_cases()


def test_mutation_sample_covers_every_field() -> None:
    fields = {key for c in BASE["configs"] for key in c}
    assert len(fields) == 13
    mutated = {case.values[2].split("[")[0] for case in MUTATION_CASES}
    assert fields <= mutated | {"dtype_configs differs"}
    ids = " ".join(case.id for case in MUTATION_CASES)
    for field in dataclasses.fields(DTypeWithConstraints):
        assert f".{field.name}" in ids


@pytest.mark.parametrize("index, mutate, field", MUTATION_CASES)
def test_single_field_mutation_is_reported(
    index: int, mutate: Callable[[dict[str, Any]], dict[str, Any]], field: str
) -> None:
    configs = list(BASE["configs"])
    configs[index] = mutate(configs[index])
    rebuilt = BackendConfig.from_dict({"name": BASE["name"], "configs": configs})
    differences = compare_backend_configs(ONEDNN, rebuilt)
    assert differences
    assert all(d.startswith(f"config {index} (") for d in differences), differences
    assert any(f"): {field}" in d for d in differences), differences


def test_swapped_configs_are_reported() -> None:
    configs = list(BASE["configs"])
    configs[3], configs[98] = configs[98], configs[3]
    differences = compare_backend_configs(
        ONEDNN, BackendConfig.from_dict({**BASE, "configs": configs})
    )
    assert {d.split(" (")[0] for d in differences} == {"config 3", "config 98"}
    assert any("): pattern differs" in d for d in differences)


def test_dropped_config_is_reported() -> None:
    configs = BASE["configs"][:50] + BASE["configs"][51:]
    differences = compare_backend_configs(
        ONEDNN, BackendConfig.from_dict({**BASE, "configs": configs})
    )
    assert "number of configs differs: expected 221, got 220" in differences
    assert any(d.startswith("config 220 (") and "missing" in d for d in differences)
    assert not any(d.startswith("config 49 (") for d in differences)


def test_extra_config_is_reported() -> None:
    extra = BackendPatternConfig(_Mutant)
    differences = compare_backend_configs(ONEDNN, {**BASE, "configs": BASE["configs"] + [extra]})
    assert differences == [
        "number of configs differs: expected 221, got 222",
        f"config 221 (pattern {__name__}._Mutant): extra config in actual",
    ]


def test_name_change_is_reported() -> None:
    differences = compare_backend_configs(ONEDNN, {**BASE, "name": "onednn2"})
    assert differences == ["name differs: expected 'onednn', got 'onednn2'"]


def test_unknown_key_is_reported_and_values_compare_strictly() -> None:
    configs = list(BASE["configs"])
    configs[0] = {**configs[0], "future_field": 1}
    assert any(
        "future_field present in actual only" in d
        for d in compare_backend_configs(BASE, {**BASE, "configs": configs})
    )
    index = _first_index(lambda c: c["dtype_configs"][0]["input_dtype"].quant_min_lower_bound == 0)
    entry = BASE["configs"][index]["dtype_configs"][0]
    as_float = dataclasses.replace(entry["input_dtype"], quant_min_lower_bound=0.0)
    configs = list(BASE["configs"])
    configs[index] = {**configs[index], "dtype_configs": [{**entry, "input_dtype": as_float}]}
    differences = compare_backend_configs(BASE, {**BASE, "configs": configs})
    assert len(differences) == 1
    assert "dtype_configs[0].input_dtype.quant_min_lower_bound differs" in differences[0]


def test_message_format_names_index_pattern_and_field() -> None:
    index = CONV_RELU_INDEX
    configs = list(BASE["configs"])
    configs[index] = {**configs[index], "fuser_method": _mutant_fuser}
    (message,) = compare_backend_configs(BASE, {**BASE, "configs": configs})
    assert message.startswith(
        f"config {index} (pattern (torch.nn.Conv2d, torch.nn.ReLU)): "
        "fuser_method differs: "
        "_sequential_wrapper2(torch.ao.nn.intrinsic.ConvReLU2d) vs "
    )
    assert "with is_qat=False" in message
    assert "torch.ao.nn.intrinsic.ConvReLU2d" in message


# ---------------------------------------------------------------------------
# Callable equivalence
# ---------------------------------------------------------------------------


def _my_conv_add_root_node_getter_left(pattern: Any) -> Any:
    return pattern[1]


def _wrong_conv_add_root_node_getter_left(pattern: Any) -> Any:
    return pattern[2]


def _my_conv_add_extra_inputs_getter_left(pattern: Any) -> list[Any]:
    return [pattern[-1]]


def _tuple_conv_add_extra_inputs_getter_left(pattern: Any) -> tuple[Any, ...]:
    return (pattern[-1],)


def _my_fuse_conv_bn_add_left(is_qat: bool, add: Any, bn_conv: Any, extra: Any) -> nn.Module:
    bn, conv = bn_conv
    if is_qat:
        raise NotImplementedError("no QAT fusion")
    return nni.ConvAdd2d(nn.utils.fusion.fuse_conv_bn_eval(conv, bn), add)


def _unfolded_fuse_conv_bn_add_left(is_qat: bool, add: Any, bn_conv: Any, extra: Any) -> nn.Module:
    _bn, conv = bn_conv
    if is_qat:
        raise NotImplementedError("no QAT fusion")
    return nni.ConvAdd2d(conv, add)


def _qat_fuse_conv_bn_add_left(is_qat: bool, add: Any, bn_conv: Any, extra: Any) -> nn.Module:
    bn, conv = bn_conv
    fused = nn.utils.fusion.fuse_conv_bn_eval(conv.eval(), bn.eval())
    return nni.ConvAdd2d(fused, add)


def test_reimplemented_root_node_getter() -> None:
    torch_getter = onednn._conv_add_root_node_getter_left
    config = BASE["configs"][_index_of("root_node_getter", torch_getter)]
    field = "root_node_getter"
    assert callables_equivalent(field, torch_getter, _my_conv_add_root_node_getter_left, config)
    message = callable_difference(
        field, torch_getter, _wrong_conv_add_root_node_getter_left, config
    )
    assert message is not None and "<node 2:" in message and "<node 3:" in message


def test_reimplemented_extra_inputs_getter() -> None:
    torch_getter = onednn._conv_add_extra_inputs_getter_left
    config = BASE["configs"][_index_of("extra_inputs_getter", torch_getter)]
    field = "extra_inputs_getter"
    assert callables_equivalent(field, torch_getter, _my_conv_add_extra_inputs_getter_left, config)
    assert not callables_equivalent(
        field, torch_getter, _tuple_conv_add_extra_inputs_getter_left, config
    )


def test_reimplemented_fuser() -> None:
    torch_fuser = onednn._fuse_conv_bn_add_left
    index = _index_of("fuser_method", torch_fuser)
    config = ONEDNN.configs[index]
    assert config._pattern_complex_format == (torch.add, (nn.BatchNorm2d, nn.Conv2d), MatchAllNode)
    field = "fuser_method"
    assert callables_equivalent(field, torch_fuser, _my_fuse_conv_bn_add_left, config)
    unfolded = callable_difference(field, torch_fuser, _unfolded_fuse_conv_bn_add_left, config)
    assert unfolded is not None
    assert "with is_qat=False" in unfolded and "state_dict" in unfolded
    qat = callable_difference(field, torch_fuser, _qat_fuse_conv_bn_add_left, config)
    assert qat is not None
    assert "with is_qat=True" in qat and "raised NotImplementedError" in qat


def test_sequential_wrappers() -> None:
    config = BackendPatternConfig((nn.Conv2d, nn.ReLU))
    wrapper = _sequential_wrapper2(nni.ConvReLU2d)
    field = "fuser_method"
    assert callables_equivalent(field, wrapper, _sequential_wrapper2(nni.ConvReLU2d), config)
    message = callable_difference(field, wrapper, _sequential_wrapper2(nni.LinearReLU), config)
    assert message is not None and "different wrapped classes" in message
    assert callables_equivalent(
        field, wrapper, lambda is_qat, conv, relu: nni.ConvReLU2d(conv, relu), config
    )
    assert not callables_equivalent(
        field, wrapper, lambda is_qat, conv, relu: nn.Sequential(conv, relu), config
    )


def test_sequential_wrapper_is_recognised_by_code_not_name() -> None:
    sequential = nni.LinearReLU

    def fuser_method(is_qat: bool, m1: nn.Module, m2: nn.Module) -> nn.Module:
        return nn.Sequential(m1, m2)

    fuser_method.__qualname__ = "_sequential_wrapper2.<locals>.fuser_method"
    config = BackendPatternConfig((nn.Linear, nn.ReLU))
    wrapper = _sequential_wrapper2(sequential)
    message = callable_difference("fuser_method", wrapper, fuser_method, config)
    assert message is not None and "different wrapped classes" not in message
    assert "with is_qat=False: module structure differs" in message


def test_relu_function_leaf_becomes_a_module() -> None:
    config = BackendPatternConfig((nn.Linear, F.relu))

    def takes_module(is_qat: bool, linear: nn.Module, relu: nn.Module) -> nn.Module:
        assert isinstance(relu, nn.ReLU) and relu.training == is_qat
        return nni.LinearReLU(linear, relu)

    assert callables_equivalent(
        "fuser_method", _sequential_wrapper2(nni.LinearReLU), takes_module, config
    )


def test_complex_pattern_fuser_gets_reversed_nested_arguments() -> None:
    config = BackendPatternConfig()._set_pattern_complex_format(
        (torch.add, MatchAllNode, (nn.BatchNorm2d, nn.Conv2d))
    )
    seen: list[Any] = []

    def recorder(is_qat: bool, *args: Any) -> None:
        seen.append(args)

    assert callables_equivalent("fuser_method", recorder, _passthrough(recorder), config)
    add, extra, (bn, conv) = seen[0]
    assert add is torch.add and extra is MatchAllNode
    assert isinstance(bn, nn.BatchNorm2d) and isinstance(conv, nn.Conv2d)
    assert not bn.training and seen[2][2][0].training


def test_unknown_module_leaf_cannot_be_compared() -> None:
    config = BackendPatternConfig((nn.Conv2d, _Mutant))
    fuser = _sequential_wrapper2(nn.Sequential)
    assert callables_equivalent("fuser_method", fuser, fuser, config)
    message = callable_difference("fuser_method", fuser, _passthrough(fuser), config)
    assert message is not None
    assert "cannot compare behaviour" in message and "_Mutant" in message


def test_behaviour_check_leaves_rng_state_alone() -> None:
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    config = BackendPatternConfig((nn.Conv2d, nn.BatchNorm2d))
    fuser = fuse_conv_bn
    assert callables_equivalent("fuser_method", fuser, _passthrough(fuser), config)
    assert torch.equal(torch.rand(3), expected)


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError):
        callable_difference("root_module", nn.Conv2d, nn.Conv2d, {})


# ---------------------------------------------------------------------------
# canonical_dict
# ---------------------------------------------------------------------------


def test_canonical_dict_values() -> None:
    canonical = canonical_dict(ONEDNN)
    configs = canonical["configs"]
    assert canonical["name"] == "onednn"
    sequential = configs[CONV_RELU_INDEX]
    assert sequential["fuser_method"] == (
        "sequential",
        "torch.ao.nn.intrinsic.ConvReLU2d",
    )
    assert sequential["pattern"] == ("torch.nn.Conv2d", "torch.nn.ReLU")
    assert sequential["observation_type"] == "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"
    assert sequential["dtype_configs"][0]["input_dtype"]["dtype"] == "torch.quint8"
    complex_config = configs[_index_of("fuser_method", onednn._fuse_conv_bn_add_left)]
    assert complex_config["fuser_method"] == (
        "callable",
        "torch.ao.quantization.backend_config.onednn._fuse_conv_bn_add_left",
    )
    assert complex_config["pattern_complex_format"] == (
        "torch.add",
        ("torch.nn.BatchNorm2d", "torch.nn.Conv2d"),
        "torch.ao.quantization.utils.MatchAllNode",
    )
    patterns = {
        str(c.get("pattern")) for c in canonical_dict(bc.get_native_backend_config())["configs"]
    }
    assert "torch.nn.functional.max_pool2d" in patterns
    pt2e = canonical_dict(_qnnpack_pt2e.get_qnnpack_pt2e_backend_config())
    assert any(c.get("pattern") == "torch.ops.aten.relu.default" for c in pt2e["configs"])
    assert json.loads(json.dumps(canonical))["name"] == "onednn"
