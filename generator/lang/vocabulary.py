"""The words of the bcfg language, and what each means in torch's API: one table per kind.

Every stage reads these tables, so adding a pattern field, a dtype key or a
keyword is one edit here: the resolver types fields through ``FIELDS``, fmt
orders them by ``fmt_rank``, the emitters call ``setter`` in table order, the
importer reads ``dict_key`` from ``BackendPatternConfig.to_dict()``, the
diff and docs name fields by ``word``, and the editor grammars take their
keyword lists from here.

Standard library only, and no other bcfg module: everything may import it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum

from .pt2e_keys import (
    CONDITIONS,
    PT2E_TABLE,
    QUANTIZER_TABLE,
    SKIP_HOOKS,
    Match,
    OperatorType,
    Other,
    Outputs,
    QatConfig,
    QParams,
    ReusedWeight,
    Scope,
    Scopes,
)

# Words that start a declaration or an item, and the other reserved words.
DECLARATION_KEYWORDS = (
    "import",
    "alias",
    "constraint",
    "dtypes",
    "fuse",
    "group",
    "backend",
    "quantizer",
)
ITEM_KEYWORDS = ("pattern", "override", "use", "for")
OTHER_KEYWORDS = ("in", "complex")
KEYWORDS = DECLARATION_KEYWORDS + ITEM_KEYWORDS + OTHER_KEYWORDS
# Functions built into the language, and its two literal words.
BUILTIN_FUNCTIONS = ("sequential", "constrain", "scalars_to_tensors")
BOOLEANS = ("true", "false")

# What each keyword and built-in function says, in one line (editor hover and completion).
KEYWORD_DOCS: dict[str, str] = {
    "import": 'import "file.bcfg": every definition of that file; the path is relative to this one',
    "alias": "alias name = dotted.path: a short name for a module path",
    "constraint": "constraint name = dtype {quant_min: .., scale_min: ..}: a dtype with constraints",
    "dtypes": "dtypes name = {input: .., output: .., weight: .., bias: ..}: a dtype set",
    "fuse": "fuse name(params) [eval_only] [same_mode] = Module(params): a fuser function",
    "group": "group name(params) { items }: patterns to expand with `use name(args)`",
    "backend": 'backend name ["BackendConfig name"] { items }: generates <out>/<name>.py',
    "quantizer": "quantizer name { transform: .., outputs: .. }: a PT2E quantizer for backend name, <out>/<name>_quantizer.py",
    "pattern": "pattern head { fields }: one BackendPatternConfig",
    "override": "override pattern head { fields }: replace an earlier pattern, in its position",
    "use": "use group(args): expand a group here",
    "for": "for x in [..] { items }: repeat the items for each element; ${x} fills names",
    "in": "for x in [..] { items }: the list a loop runs over",
    "complex": "pattern complex (op, (op, ..)): torch's reversed nested pattern form",
}
BUILTIN_DOCS: dict[str, str] = {
    "sequential": "sequential(M): fuse the 2 or 3 matched modules, in order, into M",
    "constrain": "constrain(ds, c): the dtype set ds with each activation dtype of c's dtype given c's constraints",
    "scalars_to_tensors": "scalars_to_tensors(ops..): a quantizer transform: scalar operands of ops become tensor constants",
}


class FieldKind(StrEnum):
    """What kind of value a pattern field holds; the resolver has one coercion per kind."""

    OBSERVATION = "observation"
    DTYPES = "dtypes"
    MODULE = "module"
    FUSER = "fuser"
    NODE_GETTER = "node_getter"
    INPUTS_GETTER = "inputs_getter"
    NUM_TENSOR_ARGS = "num_tensor_args"
    INPUT_INDEX = "input_index"
    PT2E = "pt2e"


@dataclass(frozen=True)
class FieldSpec:
    """One field of ``pattern { ... }``: its spec word and what it is in torch's API.

    ``attr`` is the attribute of the resolved ``PatternConfig``; ``setter`` the
    ``BackendPatternConfig`` method the generated code calls; ``dict_key`` its
    key in ``BackendPatternConfig.to_dict()`` (both empty for ``pt2e``, which
    only the PT2E quantizer reads); ``fmt_rank`` its place in ``bcfg fmt``'s
    canonical order. Table order is the order generated code sets fields in.
    """

    word: str
    attr: str
    setter: str
    dict_key: str
    kind: FieldKind
    fmt_rank: int
    doc: str


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "observation",
        "observation",
        "set_observation_type",
        "observation_type",
        FieldKind.OBSERVATION,
        0,
        "how the output is observed: different_observer, shared_observer or not_observed",
    ),
    FieldSpec(
        "dtypes",
        "dtype_configs",
        "set_dtype_configs",
        "dtype_configs",
        FieldKind.DTYPES,
        1,
        "the supported dtype configs: a record, a dtype set name, or a list of them",
    ),
    FieldSpec(
        "root",
        "root_module",
        "set_root_module",
        "root_module",
        FieldKind.MODULE,
        2,
        "the float module class the pattern's root is",
    ),
    FieldSpec(
        "qat",
        "qat_module",
        "set_qat_module",
        "qat_module",
        FieldKind.MODULE,
        4,
        "the QAT module class that replaces the root in prepare_qat_fx",
    ),
    FieldSpec(
        "reference",
        "reference_module",
        "set_reference_quantized_module",
        "reference_quantized_module_for_root",
        FieldKind.MODULE,
        3,
        "the reference quantized module class convert swaps the root for",
    ),
    FieldSpec(
        "fused",
        "fused_module",
        "set_fused_module",
        "fused_module",
        FieldKind.MODULE,
        6,
        "the module class the fuser builds",
    ),
    FieldSpec(
        "fuser",
        "fuser",
        "set_fuser_method",
        "fuser_method",
        FieldKind.FUSER,
        5,
        "how the matched modules are fused: sequential(M), a fuse name or a function",
    ),
    FieldSpec(
        "root_node",
        "root_node_getter",
        "_set_root_node_getter",
        "root_node_getter",
        FieldKind.NODE_GETTER,
        7,
        "the root node of the matched pattern, like pattern[1][0]",
    ),
    FieldSpec(
        "extra_inputs",
        "extra_inputs_getter",
        "_set_extra_inputs_getter",
        "extra_inputs_getter",
        FieldKind.INPUTS_GETTER,
        8,
        "the extra inputs of a fused node, like [pattern[2]]",
    ),
    FieldSpec(
        "num_tensor_args",
        "num_tensor_args",
        "_set_num_tensor_args_to_observation_type",
        "num_tensor_args_to_observation_type",
        FieldKind.NUM_TENSOR_ARGS,
        9,
        "observation type by number of tensor arguments, like {0: different_observer}",
    ),
    FieldSpec(
        "input_index",
        "input_type_to_index",
        "_set_input_type_to_index",
        "input_type_to_index",
        FieldKind.INPUT_INDEX,
        10,
        "argument positions of weight and bias, like {weight: 1, bias: 2}",
    ),
)
# The field only a PT2E quantizer reads (``quantizer`` declarations): not a
# BackendConfig field, so not in ``FIELDS``, which the BackendConfig emitters,
# the live builder and the importer go through.
PT2E_FIELD = FieldSpec(
    "pt2e",
    "pt2e",
    "",
    "",
    FieldKind.PT2E,
    11,
    "how the PT2E quantizer matches the pattern: {aten: .., match: .., eager: .., skip: .., annotate: ..}",
)
PATTERN_FIELDS: tuple[FieldSpec, ...] = FIELDS + (PT2E_FIELD,)
FIELD_BY_WORD: dict[str, FieldSpec] = {f.word: f for f in PATTERN_FIELDS}
FIELD_WORDS: tuple[str, ...] = tuple(f.word for f in PATTERN_FIELDS)
# torch's own names of each field (its setter without ``set_``, its ``to_dict()`` key), which
# people coming from BackendPatternConfig write: ``fused_module`` is ``fused``.
FIELD_BY_TORCH_NAME: dict[str, FieldSpec] = {
    name: f
    for f in FIELDS
    for name in (f.setter.lstrip("_").removeprefix("set_"), f.dict_key)
    if name != f.word
}
FMT_FIELD_ORDER: tuple[str, ...] = tuple(
    f.word for f in sorted(PATTERN_FIELDS, key=lambda f: f.fmt_rank)
)


@dataclass(frozen=True)
class DTypeKey:
    """A key of a dtype config record and the ``DTypeConfig`` argument it sets."""

    word: str
    torch: str


DTYPE_CONFIG_KEYS: tuple[DTypeKey, ...] = (
    DTypeKey("input", "input_dtype"),
    DTypeKey("output", "output_dtype"),
    DTypeKey("weight", "weight_dtype"),
    DTypeKey("bias", "bias_dtype"),
    DTypeKey("dynamic", "is_dynamic"),
)
DTYPE_KEY_WORDS: tuple[str, ...] = tuple(k.word for k in DTYPE_CONFIG_KEYS)

# The constraint fields of ``DTypeWithConstraints``, in torch's order, with the
# short names specs use for them: (torch field, spec key).
CONSTRAINT_FIELDS: tuple[tuple[str, str], ...] = (
    ("quant_min_lower_bound", "quant_min"),
    ("quant_max_upper_bound", "quant_max"),
    ("scale_min_lower_bound", "scale_min"),
    ("scale_max_upper_bound", "scale_max"),
    ("scale_exact_match", "scale"),
    ("zero_point_exact_match", "zero_point"),
)
CONSTRAINT_WORDS: dict[str, str] = dict(CONSTRAINT_FIELDS)  # torch field -> spec key
# Spec key (short or torch's name) -> DTypeWithConstraints field.
CONSTRAINT_KEYS: dict[str, str] = {
    key: torch_field for torch_field, short in CONSTRAINT_FIELDS for key in (short, torch_field)
}

FUSE_FLAGS = ("eval_only", "same_mode")

# ObservationType members and the words specs use for them.
OBSERVATION_WORDS: dict[str, str] = {
    "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT": "different_observer",
    "OUTPUT_SHARE_OBSERVER_WITH_INPUT": "shared_observer",
    "INPUT_OUTPUT_NOT_OBSERVED": "not_observed",
}
DEFAULT_OBSERVATION = "OUTPUT_USE_DIFFERENT_OBSERVER_AS_INPUT"
# Spec word, or the member's own name -> ObservationType member name.
OBSERVATIONS: dict[str, str] = {
    **{word: member for member, word in OBSERVATION_WORDS.items()},
    **{member: member for member in OBSERVATION_WORDS},
}

# Short names every spec may use, as torch's own backend code does.
BUILTIN_ALIASES: dict[str, str] = {
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "nni": "torch.ao.nn.intrinsic",
    "nniqat": "torch.ao.nn.intrinsic.qat",
    "nnqat": "torch.ao.nn.qat",
    "nnq": "torch.ao.nn.quantized",
    "nnqr": "torch.ao.nn.quantized.reference",
    "aten": "torch.ops.aten",
    "MatchAllNode": "torch.ao.quantization.utils.MatchAllNode",
}
# The aliases generated modules import (``import torch.nn as nn``): those of
# importable modules. ``aten`` is an attribute of ``torch.ops``, not a module,
# and ``MatchAllNode`` is a class.
MODULE_ALIASES: dict[str, str] = {
    module: alias
    for alias, module in BUILTIN_ALIASES.items()
    if alias not in ("aten", "MatchAllNode")
}

# Dtype names a spec may use bare: `quint8` is `torch.quint8`.
DTYPE_NAMES = (
    "quint8",
    "qint8",
    "qint32",
    "quint4x2",
    "quint2x4",
    "float",
    "float32",
    "float16",
    "half",
    "bfloat16",
    "float64",
    "double",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "bool",
    "float8_e4m3fn",
    "float8_e5m2",
)

# Plain integer dtypes and the quantized dtype FX's quantized ops take instead.
QUANTIZED_DTYPE_OF: dict[str, str] = {"uint8": "quint8", "int8": "qint8", "int32": "qint32"}

# Ranges of the quantized dtypes, for constraint checks.
QUANT_RANGES: dict[str, tuple[int, int]] = {
    "quint8": (0, 255),
    "qint8": (-128, 127),
    "qint32": (-(2**31), 2**31 - 1),
    "quint4x2": (0, 15),
    "quint2x4": (0, 3),
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
}


def spell(path: str, aliases: dict[str, str] | None = None) -> str:
    """A full dotted path as a spec writes it: ``torch.nn.Conv2d`` -> ``nn.Conv2d``.

    ``aliases`` maps alias names to dotted paths (the built-in ones by default);
    the longest matching path wins.
    """
    if aliases is None:
        return _spell_builtin(path)
    return _spell(path, aliases)


@functools.lru_cache(maxsize=8192)
def _spell_builtin(path: str) -> str:
    """``spell`` with the built-in aliases; docs and messages spell the same paths again and again."""
    return _spell(path, BUILTIN_ALIASES)


def _spell(path: str, table: dict[str, str]) -> str:
    best = None
    for alias, target in table.items():
        matches = path == target or path.startswith(target + ".")
        if matches and (best is None or len(target) > len(table[best])):
            best = alias
    if best is None:
        return path
    return best + path[len(table[best]) :]


# ---------------------------------------------------------------- PT2E

# The table of PT2E keys is lark-free data, like this module: the emitters read it from here.
# The keys of a pattern's ``pt2e: {...}`` record and the fields of ``quantizer NAME { ... }``,
# in fmt's canonical order, and what each says: rows of the table of PT2E keys.
PT2E_KEYS: dict[str, str] = {k.word: k.doc for k in PT2E_TABLE}
QUANTIZER_FIELDS: dict[str, str] = {k.word: k.doc for k in QUANTIZER_TABLE}
# The words of the closed sets; the first is the default.
PT2E_MATCH_WORDS: tuple[str, ...] = tuple(w.value for w in Match)
PT2E_QPARAMS_WORDS: tuple[str, ...] = tuple(w.value for w in QParams)
PT2E_SKIP_HOOKS = SKIP_HOOKS
PT2E_CONDITIONS = CONDITIONS
PT2E_REUSED_WEIGHT_WORDS: tuple[str, ...] = tuple(w.value for w in ReusedWeight)
PT2E_QAT_WORDS: tuple[str, ...] = tuple(w.value for w in QatConfig)
PT2E_SCOPE_WORDS: tuple[str, ...] = tuple(w.value for w in Scope)
PT2E_OTHER_WORDS: tuple[str, ...] = tuple(w.value for w in Other)
QUANTIZER_OPERATOR_TYPE: tuple[str, ...] = tuple(w.value for w in OperatorType)
QUANTIZER_SCOPES: tuple[str, ...] = tuple(w.value for w in Scopes)
QUANTIZER_OUTPUTS: tuple[str, ...] = tuple(w.value for w in Outputs)
# Spec dtypes (canonical names) as PT2E QuantizationSpec dtypes; None: not quantized.
# A dtype missing here has no PT2E equivalent.
PT2E_DTYPES: dict[str, str | None] = {
    "quint8": "uint8",
    "qint8": "int8",
    "qint32": "int32",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    "float32": None,
}


def quote(text: str) -> str:
    """A STRING token whose value is ``text``."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    return '"' + "".join(out) + '"'
