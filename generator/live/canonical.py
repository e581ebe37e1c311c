"""Field-by-field comparison of ``BackendConfig`` objects, with a canonical form
for the callables they hold.

Two backend configs are *equivalent* when they have the same ``name``, the same
number of pattern configs, and pattern config ``i`` of one equals pattern config
``i`` of the other on every key of ``BackendPatternConfig.to_dict()``.  A key
present in one dict and absent from the other is a difference.  Values compare
strictly: tuples, lists and dicts by structure (dicts including key order), and
everything else by identity or by ``==`` between values of the same type, so
``0`` and ``0.0`` differ.  ``dtype_configs`` compare entry by entry on the keys
of ``DTypeConfig.to_dict()``, and ``DTypeWithConstraints`` values field by field.

Classes, dtypes and pattern atoms compare by identity or ``==``.  The callables
(``fuser_method``, ``root_node_getter``, ``extra_inputs_getter``) cannot:
torch builds some of them afresh on every call, and a generated module defines
its own copies of torch's private helpers.  Two callables are equivalent when

(a) they are the same object; or
(b) both are closures made by
    ``torch.ao.quantization.fuser_method_mappings._sequential_wrapper2(cls)``
    (recognised by the identity of their code object) wrapping the same class;
    or
(c) they behave the same on the config's pattern:

    * getters are called on the pattern in reversed nested tuple format with
      every element replaced by a unique sentinel object, and must return the
      same structure of lists and tuples holding the same sentinels;
    * fusers are called the way FX fusion calls them, once with
      ``is_qat=False`` on modules in eval mode and once with ``is_qat=True`` on
      modules in train mode.  Every module class in the pattern is
      instantiated from a fixed factory (two channels or features, batch norms
      with random statistics), with the same ``torch.manual_seed`` for both
      callables; ``torch.nn.functional.relu`` becomes an ``nn.ReLU`` module,
      and every other atom (``operator.add``, ``torch.add``, ``MatchAllNode``,
      method names) is passed as is.  The arguments follow the pattern: the
      atoms in forward order for a ``pattern``, the reversed nested structure
      for a ``pattern_complex_format``.  The fusers must return modules of the
      same types (recursively, with the same training flags) whose state dicts
      hold equal tensors, or equal non-module values.

In (c), raising the same exception type counts as the same behaviour.  A
pattern holding a module class the factory does not know cannot be compared,
and is reported as a difference.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.ao.quantization.backend_config import (
    BackendConfig,
    BackendPatternConfig,
    DTypeConfig,
    DTypeWithConstraints,
)
from torch.ao.quantization.backend_config.utils import (
    _get_pattern_in_reversed_nested_tuple_format,
)

from .names import public_names, sequential_class

__all__ = [
    "CALLABLE_FIELDS",
    "callable_difference",
    "callables_equivalent",
    "canonical_dict",
    "compare_backend_configs",
]

CALLABLE_FIELDS = ("fuser_method", "root_node_getter", "extra_inputs_getter")
"""The ``BackendPatternConfig.to_dict()`` keys whose values are callables."""


_CHANNELS = 2


def _batch_norm(cls: type[nn.Module]) -> nn.Module:
    """Build a batch norm whose affine parameters and running statistics are
    random, so that folding it into a convolution is visible in the weights."""
    bn = cls(_CHANNELS)
    with torch.no_grad():
        bn.get_parameter("weight").uniform_(0.5, 1.5)
        bn.get_parameter("bias").uniform_(-0.5, 0.5)
        bn.get_buffer("running_mean").uniform_(-0.5, 0.5)
        bn.get_buffer("running_var").uniform_(0.5, 1.5)
    return bn


_MODULE_FACTORY: dict[type[nn.Module], Callable[[], nn.Module]] = {
    nn.Conv1d: lambda: nn.Conv1d(_CHANNELS, _CHANNELS, 1),
    nn.Conv2d: lambda: nn.Conv2d(_CHANNELS, _CHANNELS, 1),
    nn.Conv3d: lambda: nn.Conv3d(_CHANNELS, _CHANNELS, 1),
    nn.ConvTranspose1d: lambda: nn.ConvTranspose1d(_CHANNELS, _CHANNELS, 1),
    nn.ConvTranspose2d: lambda: nn.ConvTranspose2d(_CHANNELS, _CHANNELS, 1),
    nn.ConvTranspose3d: lambda: nn.ConvTranspose3d(_CHANNELS, _CHANNELS, 1),
    nn.Linear: lambda: nn.Linear(_CHANNELS, _CHANNELS),
    nn.BatchNorm1d: lambda: _batch_norm(nn.BatchNorm1d),
    nn.BatchNorm2d: lambda: _batch_norm(nn.BatchNorm2d),
    nn.BatchNorm3d: lambda: _batch_norm(nn.BatchNorm3d),
    nn.ReLU: nn.ReLU,
    nn.ReLU6: nn.ReLU6,
    nn.LeakyReLU: nn.LeakyReLU,
    nn.Tanh: nn.Tanh,
    nn.Sigmoid: nn.Sigmoid,
    nn.Hardtanh: nn.Hardtanh,
    nn.Hardswish: nn.Hardswish,
    nn.Hardsigmoid: nn.Hardsigmoid,
    nn.ELU: nn.ELU,
    nn.GELU: nn.GELU,
    nn.SiLU: nn.SiLU,
    nn.Identity: nn.Identity,
}
"""How the fuser comparison instantiates each module class of a pattern."""


class _Node:
    """Stand-in for the FX node matched by one element of a pattern."""

    def __init__(self, index: int, atom: Any) -> None:
        self.index = index
        self.atom = atom

    def __repr__(self) -> str:
        return f"<node {self.index}: {_describe(self.atom)}>"


@dataclasses.dataclass(frozen=True)
class _Outcome:
    """What calling a callable did: raised ``raised``, or returned ``value``."""

    raised: type[Exception] | None
    value: Any = None


# ---------------------------------------------------------------------------
# Names and descriptions
# ---------------------------------------------------------------------------


def _object_name(obj: Any) -> str:
    """Dotted name of a class, function or op: its public path in bcfg's symbol
    table (``names``) where there is one, else ``module.qualname``
    (``qualname`` alone for builtins)."""
    public = public_names().name(obj)
    if public is not None:
        return public.path
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        return repr(obj)
    return f"{module}.{qualname}" if module and module != "builtins" else qualname


def _describe(value: Any) -> str:
    """Human-readable rendering of a config value for difference messages."""
    if isinstance(value, tuple):
        inner = ", ".join(_describe(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_describe(k)}: {_describe(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (str, int, float, bool, torch.dtype, _Node)) or value is None:
        return repr(value)
    if isinstance(value, nn.Module):
        return f"{_object_name(type(value))} instance"
    sequential = sequential_class(value)
    if sequential is not None:
        return f"_sequential_wrapper2({_object_name(sequential)})"
    if isinstance(value, type) or callable(value):
        return _object_name(value)
    return repr(value)


def _config_label(index: int, config: dict[str, Any]) -> str:
    """``config <index> (pattern <readable pattern>)`` prefix of a message."""
    for key in ("pattern", "pattern_complex_format"):
        if key in config:
            return f"config {index} ({key} {_describe(config[key])})"
    return f"config {index} (no pattern)"


# ---------------------------------------------------------------------------
# Canonical, JSON-serialisable form
# ---------------------------------------------------------------------------


def _canonical_value(value: Any, callable_field: bool) -> Any:
    """Plain-data form of one config value (see :func:`canonical_dict`)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, DTypeWithConstraints):
        return {
            field.name: _canonical_value(getattr(value, field.name), False)
            for field in dataclasses.fields(value)
        }
    if isinstance(value, (tuple, list)):
        return type(value)(_canonical_value(v, callable_field) for v in value)
    if isinstance(value, dict):
        return {_canonical_key(k): _canonical_value(v, callable_field) for k, v in value.items()}
    if callable_field:
        sequential = sequential_class(value)
        if sequential is not None:
            return ("sequential", _object_name(sequential))
        return ("callable", _object_name(value))
    if isinstance(value, type) or callable(value):
        return _object_name(value)
    return repr(value)


def _canonical_key(key: Any) -> str | int | float | bool | None:
    """A dict key in a form ``json.dumps`` accepts."""
    canonical = _canonical_value(key, False)
    if canonical is None or isinstance(canonical, (str, int, float, bool)):
        return canonical
    return str(canonical)


def canonical_dict(backend_config: BackendConfig | dict[str, Any]) -> dict[str, Any]:
    """Return a plain structure describing ``backend_config``, for printing.

    It has the shape of ``BackendConfig.to_dict()``.  Classes and functions
    become dotted-name strings (``"torch.nn.Conv2d"``), aten ops
    ``"torch.ops.aten.add.Tensor"``, dtypes their ``str`` (``"torch.quint8"``),
    enums their member names, and ``DTypeWithConstraints`` dicts of their
    fields.  In the callable fields, ``_sequential_wrapper2(cls)`` closures
    become ``("sequential", "<class path>")`` and other callables
    ``("callable", "<module>.<qualname>")``.  Tuples stay tuples, so the result
    is serialisable with ``json.dumps`` (which writes tuples as arrays).
    """
    data = _normalize(backend_config)
    return {
        "name": data["name"],
        "configs": [
            {key: _canonical_value(value, key in CALLABLE_FIELDS) for key, value in config.items()}
            for config in data["configs"]
        ],
    }


# ---------------------------------------------------------------------------
# Structural equality
# ---------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Strict structural equality: containers by type, length, key order and
    elements; anything else by identity or ``==`` within the same type."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return _same(list(a), list(b)) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _normalize(backend_config: BackendConfig | dict[str, Any]) -> dict[str, Any]:
    """The ``to_dict()`` form of ``backend_config``, with any
    ``BackendPatternConfig`` or ``DTypeConfig`` objects inside a dict (which
    ``from_dict`` accepts) converted to their dicts too."""
    data = backend_config.to_dict() if isinstance(backend_config, BackendConfig) else backend_config
    configs = []
    for config in data.get("configs", []):
        if isinstance(config, BackendPatternConfig):
            config = config.to_dict()
        if "dtype_configs" in config:
            config = {
                **config,
                "dtype_configs": [
                    d.to_dict() if isinstance(d, DTypeConfig) else d
                    for d in config["dtype_configs"]
                ],
            }
        configs.append(config)
    return {"name": data.get("name", ""), "configs": configs}


def _presence_differences(what: str, expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Messages for the keys present in only one of two dicts."""
    out = [
        f"{what}{key} present in expected only (expected {_describe(value)})"
        for key, value in expected.items()
        if key not in actual
    ]
    out += [
        f"{what}{key} present in actual only (got {_describe(value)})"
        for key, value in actual.items()
        if key not in expected
    ]
    return out


def _value_difference(what: str, expected: Any, actual: Any) -> list[str]:
    """``[message]`` if ``expected`` and ``actual`` differ, else ``[]``."""
    if _same(expected, actual):
        return []
    return [f"{what} differs: expected {_describe(expected)}, got {_describe(actual)}"]


def _dtype_config_differences(expected: list[Any], actual: list[Any]) -> list[str]:
    """Differences between two ``dtype_configs`` lists, entry by entry."""
    if len(expected) != len(actual):
        return [
            (
                f"dtype_configs differs: expected {len(expected)} entries, "
                f"got {len(actual)}: expected {_describe(expected)}, "
                f"got {_describe(actual)}"
            )
        ]
    out: list[str] = []
    for j, (exp, act) in enumerate(zip(expected, actual)):
        prefix = f"dtype_configs[{j}]"
        if not isinstance(exp, dict) or not isinstance(act, dict):
            out += _value_difference(prefix, exp, act)
            continue
        out += _presence_differences(f"{prefix}.", exp, act)
        for key in (k for k in exp if k in act):
            exp_value, act_value = exp[key], act[key]
            if isinstance(exp_value, DTypeWithConstraints) and isinstance(
                act_value, DTypeWithConstraints
            ):
                for field in dataclasses.fields(DTypeWithConstraints):
                    out += _value_difference(
                        f"{prefix}.{key}.{field.name}",
                        getattr(exp_value, field.name),
                        getattr(act_value, field.name),
                    )
            else:
                out += _value_difference(f"{prefix}.{key}", exp_value, act_value)
    return out


def _pattern_config_differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Differences between two ``BackendPatternConfig.to_dict()`` dicts."""
    out = _presence_differences("", expected, actual)
    for key in (k for k in expected if k in actual):
        exp_value, act_value = expected[key], actual[key]
        if key == "dtype_configs" and isinstance(exp_value, list):
            if isinstance(act_value, list):
                out += _dtype_config_differences(exp_value, act_value)
            else:
                out += _value_difference(key, exp_value, act_value)
        elif key in CALLABLE_FIELDS:
            message = callable_difference(key, exp_value, act_value, expected)
            if message is not None:
                out.append(f"{key} differs: {message}")
        else:
            out += _value_difference(key, exp_value, act_value)
    return out


def compare_backend_configs(
    expected: BackendConfig | dict[str, Any], actual: BackendConfig | dict[str, Any]
) -> list[str]:
    """Return the differences between two backend configs; ``[]`` means
    equivalent.

    Either argument may be a ``BackendConfig`` or its ``to_dict()`` form.  The
    comparison is field by field and in order, with callables compared in the
    canonical form described in this module's docstring.  Each message about a
    pattern config starts with ``config <index> (pattern <pattern>):`` and
    names the field, e.g. ``config 17 (pattern (torch.nn.Conv2d,
    torch.nn.ReLU)): fuser_method differs: ...``.
    """
    exp = _normalize(expected)
    act = _normalize(actual)
    out = _value_difference("name", exp["name"], act["name"])
    exp_configs, act_configs = exp["configs"], act["configs"]
    if len(exp_configs) != len(act_configs):
        out.append(
            f"number of configs differs: expected {len(exp_configs)}, " f"got {len(act_configs)}"
        )
    for i, (exp_config, act_config) in enumerate(zip(exp_configs, act_configs)):
        label = _config_label(i, exp_config)
        out += [f"{label}: {m}" for m in _pattern_config_differences(exp_config, act_config)]
    for i in range(len(act_configs), len(exp_configs)):
        out.append(f"{_config_label(i, exp_configs[i])}: missing from actual")
    for i in range(len(exp_configs), len(act_configs)):
        out.append(f"{_config_label(i, act_configs[i])}: extra config in actual")
    return out


# ---------------------------------------------------------------------------
# Callables
# ---------------------------------------------------------------------------


def _call(fn: Callable[..., Any], *args: Any) -> _Outcome:
    """Call ``fn`` and record whether it returned or raised."""
    try:
        return _Outcome(None, fn(*args))
    except Exception as exc:  # noqa: BLE001  (any exception is an outcome)
        return _Outcome(type(exc))


def _describe_outcome(outcome: _Outcome) -> str:
    """``raised X`` or ``returned Y``."""
    if outcome.raised is not None:
        return f"raised {_object_name(outcome.raised)}"
    return f"returned {_describe(outcome.value)}"


def _module_difference(expected: nn.Module, actual: nn.Module) -> str | None:
    """Why two modules differ in structure or state, or ``None``."""

    def layout(module: nn.Module) -> list[tuple[str, type, bool]]:
        return [(n, type(m), m.training) for n, m in module.named_modules()]

    exp_layout, act_layout = layout(expected), layout(actual)
    if exp_layout != act_layout:

        def render(entries: list[tuple[str, type, bool]]) -> str:
            return ", ".join(
                f"{name or '<root>'}: {_object_name(cls)}"
                f"{' (train)' if training else ' (eval)'}"
                for name, cls, training in entries
            )

        return (
            f"module structure differs: expected [{render(exp_layout)}], "
            f"got [{render(act_layout)}]"
        )
    exp_state, act_state = expected.state_dict(), actual.state_dict()
    if list(exp_state) != list(act_state):
        return f"state_dict keys differ: expected {list(exp_state)}, " f"got {list(act_state)}"
    for key, exp_value in exp_state.items():
        act_value = act_state[key]
        if isinstance(exp_value, torch.Tensor) and isinstance(act_value, torch.Tensor):
            equal = (
                exp_value.dtype == act_value.dtype
                and exp_value.shape == act_value.shape
                and torch.equal(exp_value, act_value)
            )
        else:
            equal = _same(exp_value, act_value)
        if not equal:
            return f"state_dict entry {key!r} differs"
    return None


def _outcome_difference(expected: _Outcome, actual: _Outcome) -> str | None:
    """Why two outcomes differ, or ``None`` if they count as the same."""
    if expected.raised is None and actual.raised is None:
        if isinstance(expected.value, nn.Module) and isinstance(actual.value, nn.Module):
            return _module_difference(expected.value, actual.value)
        if _same(expected.value, actual.value):
            return None
    elif expected.raised is actual.raised:
        return None
    return f"expected {_describe_outcome(expected)}, " f"got {_describe_outcome(actual)}"


def _sentinel_pattern(pattern: Any, counter: list[int]) -> Any:
    """``pattern`` with every element replaced by a fresh :class:`_Node`."""
    if isinstance(pattern, tuple):
        return tuple(_sentinel_pattern(p, counter) for p in pattern)
    counter[0] += 1
    return _Node(counter[0], pattern)


def _getter_difference(
    expected: Callable[..., Any], actual: Callable[..., Any], reversed_pattern: Any
) -> str | None:
    """Compare two root-node or extra-inputs getters on a sentinel pattern."""
    node_pattern = _sentinel_pattern(reversed_pattern, [0])
    difference = _outcome_difference(_call(expected, node_pattern), _call(actual, node_pattern))
    if difference is None:
        return None
    return f"on node pattern {_describe(node_pattern)}: {difference}"


def _module_classes_without_factory(pattern: Any) -> list[type]:
    """Module classes in ``pattern`` that ``_MODULE_FACTORY`` cannot build."""
    if isinstance(pattern, tuple):
        return [c for p in pattern for c in _module_classes_without_factory(p)]
    if (
        isinstance(pattern, type)
        and issubclass(pattern, nn.Module)
        and pattern not in _MODULE_FACTORY
    ):
        return [pattern]
    return []


def _fuser_arguments(pattern: Any, training: bool) -> Any:
    """What FX fusion passes a fuser for ``pattern``: modules for module
    classes, an ``nn.ReLU`` for ``F.relu``, every other atom as is (as in
    ``torch.ao.quantization.fx.fuse_handler.DefaultFuseHandler.fuse``)."""
    if isinstance(pattern, tuple):
        return tuple(_fuser_arguments(p, training) for p in pattern)
    if pattern is F.relu:
        return nn.ReLU().train(training)
    if isinstance(pattern, type) and issubclass(pattern, nn.Module):
        return _MODULE_FACTORY[pattern]().train(training)
    return pattern


def _run_fuser(fuser: Callable[..., Any], pattern: Any, is_qat: bool) -> _Outcome:
    """Call ``fuser(is_qat, *modules)`` on freshly seeded modules for
    ``pattern``, leaving the global RNG state as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        arguments = _fuser_arguments(pattern, training=is_qat)
        if not isinstance(arguments, tuple):
            arguments = (arguments,)
        return _call(fuser, is_qat, *arguments)


def _fuser_difference(
    expected: Callable[..., Any], actual: Callable[..., Any], pattern: Any
) -> str | None:
    """Compare two fuser methods on real modules for ``pattern`` (in the format
    the fuser takes), in eval mode and in QAT mode."""
    missing = _module_classes_without_factory(pattern)
    if missing:
        names = ", ".join(_object_name(c) for c in missing)
        return f"cannot compare behaviour: no module factory for {names}"
    for is_qat in (False, True):
        difference = _outcome_difference(
            _run_fuser(expected, pattern, is_qat), _run_fuser(actual, pattern, is_qat)
        )
        if difference is not None:
            return f"with is_qat={is_qat}: {difference}"
    return None


def _patterns_of(config: BackendPatternConfig | dict[str, Any]) -> tuple[Any, Any]:
    """``(pattern, pattern_complex_format)`` of a config or its dict."""
    if isinstance(config, BackendPatternConfig):
        return config.pattern, config._pattern_complex_format
    return config.get("pattern"), config.get("pattern_complex_format")


def callable_difference(
    field: str,
    expected: Any,
    actual: Any,
    config: BackendPatternConfig | dict[str, Any],
) -> str | None:
    """Explain why two values of callable field ``field`` of ``config`` are not
    equivalent, or return ``None`` if they are.

    ``field`` is one of :data:`CALLABLE_FIELDS`; ``config`` (a
    ``BackendPatternConfig`` or its dict) supplies the pattern the behaviour is
    checked on.  The rules are (a) identity, (b) ``_sequential_wrapper2``
    closures over the same class, (c) same behaviour on the pattern; see the
    module docstring.
    """
    if field not in CALLABLE_FIELDS:
        raise ValueError(f"{field!r} is not one of {CALLABLE_FIELDS}")
    if expected is actual:
        return None
    expected_class = sequential_class(expected)
    actual_class = sequential_class(actual)
    if expected_class is not None and actual_class is not None:
        if expected_class is actual_class:
            return None
        return (
            f"expected {_describe(expected)}, got {_describe(actual)}: "
            f"different wrapped classes"
        )
    if not callable(expected) or not callable(actual):
        return f"expected {_describe(expected)}, got {_describe(actual)}"
    pattern, complex_pattern = _patterns_of(config)
    if pattern is not None and complex_pattern is not None:
        return "cannot compare behaviour: config has both pattern formats"
    if pattern is None and complex_pattern is None:
        return "cannot compare behaviour: config has no pattern"
    if field == "fuser_method":
        difference = _fuser_difference(
            expected, actual, complex_pattern if pattern is None else pattern
        )
    else:
        try:
            reversed_pattern = _get_pattern_in_reversed_nested_tuple_format(
                BackendPatternConfig(pattern)
                if pattern is not None
                else BackendPatternConfig()._set_pattern_complex_format(complex_pattern)
            )
        except ValueError as exc:
            return f"cannot compare behaviour: {exc}"
        difference = _getter_difference(expected, actual, reversed_pattern)
    if difference is None:
        return None
    return f"{_describe(expected)} vs {_describe(actual)}: {difference}"


def callables_equivalent(
    field: str,
    expected: Any,
    actual: Any,
    config: BackendPatternConfig | dict[str, Any],
) -> bool:
    """Whether two values of callable field ``field`` of ``config`` are
    equivalent; :func:`callable_difference` says why not."""
    return callable_difference(field, expected, actual, config) is None


def sample_fusion(
    fuser: Callable[..., Any], pattern: Any, is_qat: bool
) -> tuple[nn.Module | None, type[Exception] | None]:
    """What ``fuser`` builds from sample modules for ``pattern`` (reversed nested form), as FX
    fusion calls it; or the exception class it raises. ``(None, None)`` when a module class of
    the pattern has no sample (``bcfg compat`` then cannot tell what the fusion makes)."""
    if _module_classes_without_factory(pattern):
        return None, None
    outcome = _run_fuser(fuser, pattern, is_qat)
    made = outcome.value if isinstance(outcome.value, nn.Module) else None
    return made, outcome.raised
