"""The error corpus (tests/errors/): every broken spec gets its pinned message.

Each case's expected transcript pins file, line, column, message, caret, hint
and exit code. After an intended wording change, re-accept with
``python -m tests.errors --accept`` (or ``pytest tests/test_errors.py --accept``)
and review the diff.
"""

from __future__ import annotations

import difflib
import re

import pytest

from tests.errors import ACCEPT_COMMAND, cases, expected_path, run_case, spec_of

CASES = cases()

# Every check the tool makes, and the case that shows its message. A check
# without a case, or a case that does not show its check, fails below.
CHECKS = {
    "syntax: an unclosed backend is named, not the closed block before the error": (
        "syntax_unclosed_backend",
        "expected '}' to close the backend opened at 4:1, found 'backend'",
    ),
    "names: a backend name must make a file name of its own": (
        "backend_file_name",
        "backend name '__init__' is reserved",
    ),
    "escaping: what a message quotes cannot drive the terminal or forge a line": (
        "message_escaping",
        "'Conv\\x1b[31mX\\ntests/errors/forged.bcfg:1:1: error: forgedd' is not a valid name segment",
    ),
    "allow-list: no path around it through a module torch imports": (
        "allow_list_walk_around",
        "'torch.os' is the module 'os', outside the allowed modules",
    ),
    "syntax: unclosed brace, said with where it opened": (
        "syntax_unclosed_pattern",
        "expected '}' to close the pattern opened at 5:5",
    ),
    "syntax: file ends inside a block": ("syntax_unclosed_at_eof", "found the end of the file"),
    "syntax: a dtype name expected": (
        "syntax_expected_dtype",
        "expected a dtype name after 'output:'",
    ),
    "syntax: constraint base must be a dtype": (
        "syntax_constraint_needs_dtype",
        "expected a dtype name after '='",
    ),
    "syntax: misspelled keyword": ("syntax_misspelled_keyword", "did you mean 'pattern'?"),
    "syntax: unexpected character": ("syntax_unexpected_character", "unexpected character ';'"),
    "syntax: unterminated string": (
        "syntax_unterminated_string",
        "this string is not closed on its line",
    ),
    "syntax: bad escape": ("syntax_bad_escape", "invalid escape sequence"),
    "syntax: half of a surrogate pair in a string": (
        "string_lone_surrogate",
        "is half of a UTF-16 surrogate pair, not a character",
    ),
    "syntax: wrong closing bracket": (
        "syntax_wrong_bracket",
        "expected ')' to close the '(' opened at 3:13, found ']'",
    ),
    "syntax: missing comma": ("syntax_missing_comma", "expected '}' or ','"),
    "syntax: import needs a string": (
        "syntax_import_needs_string",
        "expected a file name in quotes after 'import'",
    ),
    "syntax: a name that starts with a keyword is a name": (
        "syntax_keyword_prefixed_names",
        "unknown dtype config key 'dtypes_in'",
    ),
    "input: not UTF-8": ("input_not_utf8", "the file is not valid UTF-8"),
    "input: NUL byte": ("input_nul_byte", "the file contains a NUL byte"),
    "input: BOM and CRLF": ("input_bom_crlf", "input_bom_crlf.bcfg:3:13: error: unknown symbol"),
    "input: empty file": ("input_empty", "[exit 0]"),
    "input: deep nesting": ("input_deep_nesting", "brackets are nested more than 32 deep"),
    "symbol: unknown, did-you-mean": ("unknown_symbol", "did you mean 'nn.Conv2d'?"),
    "quantizer delegate: a dtype the delegate does not run, at its constraint": (
        "delegate_xnnpack",
        "2:1: warning: activations in quint8 (constraint act;",
    ),
    "quantizer delegate: a delegate bcfg does not know": (
        "delegate_unknown",
        "hint: did you mean 'xnnpack'?",
    ),
    "symbol: an op in another namespace than the one named, did-you-mean across namespaces": (
        "aten_op_other_namespace",
        "did you mean 'torch.ops.onednn.qconv2d_pointwise.default'?",
    ),
    "pattern: a plain Python function FX traces through (warning)": (
        "pattern_traced_function",
        "warning: FX traces through specs.hooks.cadence.tensor_add, a plain Python function",
    ),
    "symbol: bare unknown name": ("unknown_name", "did you mean 'nn.Linear'?"),
    "symbol: not on the allow-list": ("disallowed_module", "'os' is not an allowed module"),
    "kind: function where a module class is needed": (
        "wrong_kind_function_as_module",
        "a root module must be an nn.Module class, got a function",
    ),
    "kind: class that is not an nn.Module": (
        "wrong_kind_class_not_module",
        "is not a subclass of torch.nn.Module",
    ),
    "kind: non-dtype as dtype": (
        "wrong_kind_not_dtype",
        "expected a dtype or constraint, got a module class",
    ),
    "dtype: unknown dtype name": ("unknown_dtype", "unknown dtype 'quint9'"),
    "pattern: sequential tuple not 2-4 long": (
        "sequential_length",
        "a sequential pattern has 2 to 4 elements, this one has 5",
    ),
    "pattern: sequential tuple of 4 in a BackendConfig": (
        "sequential_length_fx",
        "make the backend PT2E-only with quantizer b { fx: false }",
    ),
    "pattern: sequential pattern nests": (
        "sequential_nested",
        "a sequential pattern cannot nest tuples",
    ),
    "pattern: malformed complex pattern": (
        "complex_malformed",
        "the first element of a complex pattern tuple is its operator",
    ),
    "pattern: method name not an identifier": ("pattern_bad_method_name", "is not a method name"),
    "duplicate: pattern defined twice": (
        "duplicate_pattern",
        "is already defined at tests/errors/duplicate_pattern.bcfg:3:5",
    ),
    "duplicate: via two uses of a group": (
        "duplicate_pattern_via_group",
        "the first comes from 'use relus(d)'",
    ),
    "duplicate: via a loop": ("duplicate_pattern_in_loop", "the first comes from the loop element"),
    "duplicate: override of nothing": ("override_nothing", "replaces nothing"),
    "constraint: bound outside the dtype's range": (
        "constraint_out_of_range",
        "quant_min -1 is outside the range of quint8, 0..255",
    ),
    "constraint: min above max": (
        "constraint_min_above_max",
        "quant_max 100 is below quant_min 200",
    ),
    "constraint: non-positive scale bound": (
        "constraint_scale_not_positive",
        "scale_min must be positive",
    ),
    "constraint: exact zero point outside the range": (
        "constraint_exact_out_of_range",
        "zero_point 200 is outside quant_min..quant_max",
    ),
    "constraint: bounds on a float dtype": (
        "constraint_float_dtype",
        "float16 has no quantized range",
    ),
    "constraint: unknown key; constrain() changes nothing": (
        "constraint_unknown_key",
        "constrain() changes nothing",
    ),
    "fusion: fused module without fuser": ("fused_without_fuser", "without a fuser"),
    "fusion: fuser without fused module": ("fuser_without_fused", "a fuser without 'fused'"),
    "modules: root without reference (warning)": (
        "root_without_reference",
        "warning: root module torch.nn.Linear has no reference module",
    ),
    "dtypes: plain integer dtype (warning; not on aten patterns)": (
        "dtype_plain_integer",
        "warning: input dtype uint8 is a plain integer type: FX's quantized ops take quint8",
    ),
    "dtypes: a pattern without dtype configs (warning)": (
        "dtype_missing",
        "warning: pattern nn.ReLU has no dtype configs: FX never quantizes it",
    ),
    "syntax: a missing '}', with where it most likely goes": (
        "syntax_unclosed_pattern",
        "hint: add '}' at the end of line 6, if the pattern ends there",
    ),
    "syntax: the wrong closing bracket, with the one that pairs": (
        "syntax_wrong_bracket",
        "hint: the '(' at 3:13 pairs with ')', not ']'",
    ),
    "syntax: a field written with '='": (
        "syntax_field_equals",
        "hint: write 'dtypes: int8': a field takes ':' ('=' defines a name at the top level",
    ),
    "syntax: a field without ':'": (
        "syntax_field_without_colon",
        "hint: write 'dtypes: int8': a field takes ':' before its value",
    ),
    "syntax: a definition written with ':'": (
        "syntax_definition_colon",
        "hint: a definition takes '=': dtypes int8 = ...; ':' is for fields",
    ),
    "syntax: a record entry written with '='": (
        "syntax_record_equals",
        "hint: write 'input: quint8': a record's entries take ':'",
    ),
    "syntax: a C comment": ("syntax_slash_comment", "hint: comments start with '#'"),
    "syntax: single quotes": (
        "syntax_single_quotes",
        'hint: strings are written in double quotes: "relu"',
    ),
    "syntax: a loop's values without a list": (
        "syntax_loop_without_list",
        "hint: write the loop's values as a list: for n in [1, 2] { ... }",
    ),
    "syntax: a pattern without braces": (
        "syntax_pattern_without_braces",
        "hint: a pattern's fields go in braces, even none: pattern nn.Linear {}",
    ),
    "syntax: a pattern after its backend was closed": (
        "syntax_pattern_outside_backend",
        "(or the '}' before it closed its backend or group too early)",
    ),
    "syntax: a '}' that closes nothing": (
        "syntax_stray_brace",
        "hint: this '}' closes nothing: remove it, or add the '{' it should close",
    ),
    "syntax: override without 'pattern'": (
        "syntax_override_without_pattern",
        "hint: write: override pattern nn.ReLU { dtypes: int8 }",
    ),
    "syntax: sequential without parentheses": (
        "syntax_sequential_without_parens",
        "hint: sequential takes its module in parentheses: sequential(nni.ConvReLU2d)",
    ),
    "syntax: a group argument by name": (
        "syntax_use_named_argument",
        "hint: a group's arguments are written in order, without names: use g(int8)",
    ),
    "syntax: a field left without a value": (
        "syntax_value_missing",
        "hint: 'dtypes:' on line 5 has no value, so 'root' was read as its value",
    ),
    "syntax: a backend named by a string": (
        "syntax_backend_string_name",
        'a string after the name sets the BackendConfig\'s name: backend my_backend "my backend"',
    ),
    "syntax: a ';'": ("syntax_unexpected_character", "hint: no ';' is needed"),
    "syntax: commas between pattern fields": (
        "syntax_comma_between_fields",
        "hint: pattern fields are separated by spaces or new lines, not commas",
    ),
    "names: a short name one character off": ("unknown_short_name", "hint: did you mean 'w8'?"),
    "fusion: into a module no pattern config names (warning)": (
        "fusion_into_nothing",
        "warning: pattern (nn.Conv2d, nn.ReLU) is fused into nni.ConvReLU2d, which no pattern config",
    ),
    "dtypes: an integer bias (warning)": (
        "dtype_bias_integer",
        "warning: bias dtype qint32 never matches",
    ),
    "constraint: no observer can satisfy it (warning)": (
        "constraint_unsatisfiable",
        "warning: no observer can satisfy quant_min 10, quant_max 200",
    ),
    "constraint: bounds FX never checks (warning)": (
        "constraint_unchecked",
        "warning: FX checks quant_min only together with quant_max",
    ),
    "run: --strict makes warnings errors": ("strict", "note: a warning, made an error by --strict"),
    "getter: position the pattern does not have": (
        "getter_out_of_range",
        "pattern[3] is not an element of the pattern",
    ),
    "count: fuser does not fit its pattern": (
        "fuser_arity",
        "it takes 2 module(s), the pattern has 3 element(s)",
    ),
    "count: call in a fuse body": ("fuse_call_arity", "missing a required argument: 'add'"),
    "fuse body: only parameters, is_qat, booleans, numbers and calls": (
        "fuse_body_string",
        "a fuse body may only use its parameters, is_qat, true, false, numbers",
    ),
    "library: an error inside it is shown at the use": (
        "library_error_at_use",
        "in bcfg's library",
    ),
    "library: no such library": ("library_unknown", "bcfg ships no such library"),
    "fuse body: a word that is no parameter": (
        "fuse_body_unknown_word",
        "'qat' is not a parameter of this fuser",
    ),
    "count: group arguments": ("group_arg_count", "group 'relus' takes 2 argument(s), got 1"),
    "import: undefined": ("import_missing", "cannot import 'comon.bcfg': no such file"),
    "import: cycle": ("import_cycle", "import cycle:"),
    "import: error in an imported file, no cascade": ("import_error_no_cascade", "bcfg: 1 error;"),
    "group: undefined": ("group_undefined", "unknown group 'relu'"),
    "group: cycle": ("group_cycle", "group 'a' uses itself: a -> b -> a"),
    "definition: cycle": ("definition_cycle", "'a' is defined in terms of itself: a -> b -> a"),
    "definition: defined twice": ("duplicate_definition", "'d' is already defined at"),
    "definition: unused (warning)": (
        "unused_definition",
        "warning: dtype set 'unused' is defined but never used",
    ),
    "field: unknown or set twice": ("unknown_field", "unknown field 'dtype'"),
    "names: interpolation": ("interpolation", "'${m}' names no loop variable"),
    "names: backend module name": ("backend_name", "is not a valid Python module name"),
    "numbers: too large, not finite": ("numbers", "this number is not finite"),
    "run: every independent error reported": (
        "several_errors",
        "bcfg: 7 errors; nothing was written",
    ),
    "run: errors capped": ("too_many_errors", "note: stopped after 50 errors"),
    "pt2e: a pattern without an ATen mapping": (
        "pt2e_no_aten_mapping",
        "nn.GRU has no ATen mapping: the PT2E quantizer cannot match pattern nn.GRU",
    ),
    "pt2e: a dtype PT2E cannot express": (
        "pt2e_dtype_unexpressible",
        "dtype quint4x2 has no PT2E equivalent",
    ),
    "pt2e: a constraint no observer can satisfy": (
        "pt2e_scale_max",
        "sets scale_max, which no PT2E observer has",
    ),
    "pt2e: a complex pattern": ("pt2e_complex_pattern", "is not one"),
    "pt2e: keys and values of the pt2e record": ("pt2e_settings", "did you mean 'aten'?"),
    "pt2e: settings that do not fit their pattern": (
        "pt2e_rule_settings",
        "eager: true applies to shared_observer patterns",
    ),
    "pt2e: a fusion a kept rule leaves after its first op's pattern (warning)": (
        "pt2e_fusion_order",
        "keeps its place, so the PT2E quantizer never fuses it",
    ),
    "pt2e: input and output dtypes differ, FX leaves it float, PT2E does not (warning)": (
        "pt2e_mixed_dtypes",
        "so it never matches and leaves the pattern float, while the PT2E quantizer quantizes it",
    ),
    "pt2e: a shared op whose dtypes miss another pattern's output dtype (warning)": (
        "pt2e_follows_other_dtype",
        "FX leaves it float, while the PT2E quantizer follows its quantized input",
    ),
    "pt2e: a fusion and its fused module without dtypes: any config (warning)": (
        "pt2e_fusion_without_dtypes",
        "the PT2E rule would allow any quantization config",
    ),
    "pt2e: no dtypes warns only in a backend FX sees (fx: false: any config)": (
        "pt2e_only_without_dtypes",
        "only_without_dtypes.bcfg:10:13: warning: pattern aten.relu.default has no dtype configs",
    ),
    "pt2e: configs: accessors needs scopes: composable": (
        "pt2e_configs_accessors_scopes",
        "configs: accessors applies to a quantizer with scopes: composable",
    ),
    "pt2e: configs: validated needs scopes: composable": (
        "pt2e_configs_validated_scopes",
        "configs: validated applies to a quantizer with scopes: composable, whose runtime "
        "reads it; this one has scopes: operators",
    ),
    "pt2e: configs is spec, accessors or validated": (
        "pt2e_configs_unknown",
        "configs must be spec, accessors or validated, got the name 'accessor'",
    ),
    "pt2e: a fused module no pattern fuses into: no invented ATen name": (
        "pt2e_fused_module_unmapped",
        "nni.LinearTanh is a fused module (its root is nn.Linear): torch.export records",
    ),
    "pt2e: a fused module whose fusion the quantizer leaves out": (
        "pt2e_fused_module_uncovered",
        "so nothing covers pattern nni.ConvAdd2d",
    ),
    "quantizer: names no backend of its file": (
        "quantizer_without_backend",
        "quantizer 'xnnpak' names no backend of this file",
    ),
    "quantizer: fields and transforms": ("quantizer_fields", "did you mean 'transform'?"),
    "quantizer: scopes and fx": ("quantizer_inductor_fields", "did you mean 'operators'?"),
    "pt2e: other, when and opt_in": ("pt2e_inductor_settings", "did you mean 'same_shape'?"),
    "pt2e: other without a binary op, source chains of non-callables": (
        "pt2e_inductor_rules",
        "applies to a chain with a binary op (aten.add, aten.sub, aten.mul) after its first op",
    ),
    "pt2e: weight_axis is a channel axis": (
        "pt2e_xnnpack_settings",
        "weight_axis must be a channel axis, 0 or more",
    ),
    "pt2e: any_float is true or false": (
        "pt2e_xnnpack_settings",
        "any_float must be true or false",
    ),
    "pt2e: qparams is first or quantized": (
        "pt2e_xnnpack_settings",
        "qparams must be first or quantized",
    ),
    "pt2e: qparams applies to eager shared ops": (
        "pt2e_xnnpack_rules",
        "applies to shared_observer patterns annotated in order",
    ),
    "pt2e: weight_axis needs a weight": (
        "pt2e_xnnpack_rules",
        "weight_axis applies to a chain whose first op has a weight",
    ),
    "pt2e: reused_weight is match or decline": (
        "pt2e_reused_weight",
        "reused_weight must be match or decline, got the name 'declined'",
    ),
    "pt2e: a quantizer's reused_weight is match or decline": (
        "pt2e_reused_weight_rules",
        "reused_weight must be match or decline, got the name 'skip'",
    ),
    "pt2e: reused_weight needs a weight": (
        "pt2e_reused_weight_rules",
        "reused_weight: decline applies to a chain whose first op has a weight",
    ),
    "pt2e: operator_types lists ATen ops": (
        "pt2e_executorch_keys",
        "operator_types lists ATen ops, like aten.conv2d.default",
    ),
    "pt2e: qat_config is optional, required or required_if_dynamic": (
        "pt2e_executorch_keys",
        "qat_config must be optional, required or required_if_dynamic, got the name 'yes'",
    ),
    "pt2e: scope is all_ops, first_op or none": (
        "pt2e_executorch_keys",
        "scope must be all_ops, first_op or none, got the name 'first'",
    ),
    "pt2e: a quantizer's operator_type is nodes or patterns": (
        "pt2e_executorch_keys",
        "operator_type must be nodes or patterns, got the name 'ops'",
    ),
    "pt2e: operator_types needs operator_type: patterns": (
        "pt2e_executorch_rules",
        "operator_types applies to a quantizer whose set_operator_type selects patterns",
    ),
    "pt2e: a key the quantizer's runtime base does not honour": (
        "pt2e_unhonoured_keys",
        "when applies to a quantizer with scopes: operators, composable, pairs or registry, whose "
        "runtime reads it",
    ),
    "pt2e: qat_config on a base that tries every chain with any config": (
        "pt2e_qat_config_composable",
        "qat_config: required applies to a quantizer with scopes: modules, whose runtime reads it",
    ),
    "pt2e: a class defined twice": (
        "pt2e_classes_duplicate",
        "class 'MyQuantizer' is defined twice in this module",
    ),
    "pt2e: a class record's name that is a keyword": (
        "pt2e_classes_names",
        "class name 'class' is a Python keyword",
    ),
    "pt2e: a constructor parameter named self": (
        "pt2e_classes_names",
        "parameter 'self' is the instance the constructor takes first",
    ),
    "pt2e: a parameter written twice, as Python compares names": (
        "pt2e_classes_names",
        "parameter 'fix' is written twice (as 'ﬁx': Python reads both as 'fix')",
    ),
    "pt2e: a class named like a name the generated module uses": (
        "pt2e_classes_names",
        "class name 'ComposableSpecQuantizer' is a name the generated module binds or reads",
    ),
    "pt2e: a parameter named like a class of the list": (
        "pt2e_classes_names",
        "parameter 'G' is named like class 'G' of the list, which the constructors read",
    ),
    "pt2e: bases Python cannot order": (
        "pt2e_classes_bases",
        "class A's bases have no consistent order (Python's method resolution order)",
    ),
    "pt2e: a base named twice": (
        "pt2e_classes_bases",
        "class C names base torch.fx.Tracer twice",
    ),
    "pt2e: a constructor default that is no finite number": (
        "pt2e_classes_numbers",
        "this number is not finite",
    ),
    "pt2e: a pair class or pairs function named like the generated class": (
        "pt2e_classes_pairs_generated",
        "pairs function 'CQuantizer' is named like the generated class (named after the backend)",
    ),
    "pt2e: a class of pairs derived from a pair class, or the other way": (
        "pt2e_classes_pairs_base",
        "class FromPair derives from Pair, a pair class; a class of pairs derives from classes",
    ),
    "pt2e: a required parameter on the generated class": (
        "pt2e_classes_generated_required",
        "parameter 'device' of the generated class BQuantizer is required, and its getter",
    ),
    "pt2e: an init hook that cannot take what the class passes": (
        "pt2e_classes_calls",
        "init 'torch.fx.passes.tools_common.legalize_graph' does not fit the call the class makes",
    ),
    "pt2e: a pairs function called without a required parameter": (
        "pt2e_classes_calls",
        "pairs function defaults requires is_qat, which Default does not pass",
    ),
    "pt2e: a stage's ops naming an op no rule has": (
        "pt2e_classes_stage_ops",
        "no rule of this quantizer has aten.gelu.default: the stage would annotate nothing there",
    ),
    "pt2e: given: variants in a backend that also makes an FX BackendConfig": (
        "pt2e_given_fx",
        "variants are PT2E's, and this backend also makes an FX BackendConfig",
    ),
    "pt2e: given: in a quantizer whose classes leave out the generated class": (
        "pt2e_given_generated",
        "and the generated class BQuantizer (what the getter returns, and compat checks) is not",
    ),
    "pt2e: a given value of another kind than the parameter's default": (
        "pt2e_given_generated",
        "given: 'bits' is '8', a string; the parameter of class CQuantizer defaults to 8",
    ),
    "pt2e: inputs of scopes: pairs naming an argument that is no tensor": (
        "pt2e_pairs_inputs_tensors",
        "inputs names argument 1 (min) of aten.clamp.default, which is no tensor",
    ),
    "pt2e: inputs of scopes: pairs naming an argument the op does not have": (
        "pt2e_pairs_inputs_tensors",
        "inputs names argument 3, and aten.mul.Tensor takes 2 (0: self, 1: other)",
    ),
    "pt2e: a class record's unknown key": (
        "pt2e_classes_record",
        "unknown class record key 'param'",
    ),
    "pt2e: stages on a class of a base configured by set_global": (
        "pt2e_classes_scopes",
        "stages applies to a class of a quantizer with scopes: composable (its constructor adds",
    ),
    "pt2e: pairs before the list's pair class": (
        "pt2e_classes_pairs",
        "pairs need a pair class earlier in the list, to make each pair",
    ),
    "pt2e: a pair class with other keys": (
        "pt2e_classes_pairs",
        "a pair class takes no params: its constructor is (pattern, quantization_config)",
    ),
    "pt2e: stages on a class of scopes: pairs": (
        "pt2e_classes_pairs",
        "stages are a key of a class of a quantizer with scopes: composable",
    ),
    "pt2e: a pair's qat config without is_qat": (
        "pt2e_classes_pairs",
        "qat is the config when the class's is_qat parameter is true; this one has no is_qat",
    ),
    "pt2e: a list default naming no pairs function": (
        "pt2e_classes_pairs",
        "the default of 'quantizers' names no pairs function of the list: 'default'",
    ),
    "pt2e: a pair's pattern not by dotted path": (
        "pt2e_classes_pairs",
        "a pair's pattern is an object by dotted path",
    ),
    "pt2e: a pairs key on a composable class": (
        "pt2e_classes_pairs_scope",
        "pairs is a key of a class of a quantizer with scopes: pairs",
    ),
    "pt2e: a stage's config naming no parameter": (
        "pt2e_classes_stage_parameter",
        "unknown parameter 'per_tensor_confg' in a stage's config",
    ),
    "pt2e: the composable base's configuration API on another base": (
        "pt2e_api_scopes",
        "api: composable applies to a quantizer with scopes: composable, whose runtime reads "
        "it; this one has scopes: modules",
    ),
    "pt2e: a quantizer field no part of its composition reads, by the pt2e keys' rule": (
        "pt2e_quantizer_fields_unread",
        "outputs: consumers applies to a quantizer with scopes: modules, whose runtime reads it; "
        "this one has scopes: composable",
    ),
    "pt2e: select: on a quantizer whose base is not the registry's": (
        "pt2e_registry_select_scopes",
        "select applies to a quantizer with scopes: registry, whose runtime reads it; this one "
        "has scopes: composable",
    ),
    "pt2e: select: a level that is not one of its words": (
        "pt2e_registry_select_word",
        "select must be node_name, module_name, module_type, submodule, op_set or default",
    ),
    "pt2e: select: default before another level": (
        "pt2e_registry_select_default",
        "select: default takes every node, so the levels after it (node_name) would never",
    ),
    "pt2e: a chain of ops under scopes: registry": (
        "pt2e_registry_chain",
        "a quantizer with scopes: registry annotates node by node, each by its op's entry",
    ),
    "pt2e: a pattern without annotate_node under scopes: registry": (
        "pt2e_registry_no_annotator",
        "pattern aten.relu.default has no annotate_node",
    ),
    "pt2e: a config type for methods the quantizer does not have": (
        "pt2e_config_type_api",
        "config_type says what the api: composable methods take; this quantizer has api: stages",
    ),
    "pt2e: a config type that is not a dotted path": (
        "pt2e_config_type_path",
        "config_type must be a class by dotted path",
    ),
    "pt2e: an affine output required on a base that does not read it": (
        "pt2e_output_qscheme_scopes",
        "output_qscheme: affine applies to a quantizer with scopes: composable",
    ),
    "pt2e: the generated class deriving from an earlier class": (
        "pt2e_classes_generated_parent",
        "class 'BQuantizer' is the generated class itself (named after the backend)",
    ),
    "pt2e: given that is not a record of literal values": (
        "pt2e_given_record",
        "given must be a record of constructor parameters and values",
    ),
    "pt2e: given naming no parameter, a fixed one, or a flag given a number": (
        "pt2e_given_parameter",
        "given: 'explicitt' is no parameter of class BQuantizer",
    ),
    "pt2e: given in a quantizer without classes": (
        "pt2e_given_no_classes",
        "this quantizer has no classes",
    ),
    "pt2e: one pattern twice with givens an instance could have both of": (
        "pt2e_given_overlap",
        "an instance given both {wide: true} and that would have it twice",
    ),
    "pt2e: a pairs anchor key on another base": (
        "pt2e_pairs_keys_base",
        "inputs applies to a quantizer with scopes: pairs, whose runtime reads it",
    ),
    "pt2e: an argument index that is no index": (
        "pt2e_pairs_bad_index",
        "inputs must be an argument index, 0 or more, got the number -1",
    ),
    "pt2e: inputs naming the weight": (
        "pt2e_pairs_inputs_weight",
        "inputs names argument 1, which is the weight of pattern aten.linear.default",
    ),
    "pt2e: a weight key on a pattern without a weight": (
        "pt2e_pairs_key_pattern",
        "none_bias: true applies to a chain whose first op has a weight",
    ),
    "pt2e: keys of one pattern that contradict each other (conflicts)": (
        "pt2e_pairs_conflicts",
        "parameters: float contradicts bias_spec: config of the same pattern",
    ),
    "pt2e: a key on a pattern that only propagates": (
        "pt2e_unhonoured_keys",
        "skip applies to patterns annotated in order; pattern 'view' only propagates",
    ),
    "pt2e: outputs: patterns under scopes: operators": (
        "pt2e_unhonoured_keys",
        "outputs: patterns applies to a quantizer with scopes: modules",
    ),
    "pt2e: a chain matched by ATen ops under scopes: operators": (
        "pt2e_operators_chain",
        "which it would match at the chain's first op alone",
    ),
    "pt2e: a chain found by source partitions that names a type twice": (
        "pt2e_operators_chain_repeats",
        "torchao's find_sequential_partitions takes each type once: nn.ReLU is named twice",
    ),
    "pt2e: a chain found by source partitions with two types torchao counts as one": (
        "pt2e_operators_chain_repeats",
        "nn.ReLU and F.relu are one type to torchao",
    ),
    "pt2e: a weight_axis beyond the weight's rank": (
        "pt2e_weight_axis_rank",
        "weight_axis: 2 is beyond the weight of aten.linear.default, which has 2 dimensions",
    ),
    "pt2e: a hook that does not take what the runtime calls it with": (
        "pt2e_hook_arity",
        "does not fit the call bcfg's runtime makes",
    ),
    "pt2e: scope applies to patterns annotated in order": (
        "pt2e_executorch_rules",
        "scope: none applies to patterns annotated in order",
    ),
    "pt2e: operator_type: patterns needs scopes: modules": (
        "pt2e_executorch_rules",
        "operator_type: patterns applies to a quantizer with scopes: modules",
    ),
    "pt2e: scope needs scopes: modules": (
        "pt2e_executorch_rules",
        "scope: first_op applies to a quantizer with scopes: modules",
    ),
    "quantizer: module names collide": (
        "quantizer_module_collision",
        "would be generated as the module of the quantizer",
    ),
    "syntax: quantizer needs its backend's name": (
        "syntax_quantizer_name",
        "expected the name of a backend of this file after 'quantizer'",
    ),
}

_LOCATION = re.compile(
    r"^(?P<file>[^:\n]+\.bcfg):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning): ", re.MULTILINE
)


def _accept_hint() -> str:
    return f"If the new output is intended, re-accept it with:\n    {ACCEPT_COMMAND}\n(or: python -m pytest tests/test_errors.py --accept)"


@pytest.mark.parametrize("name", CASES)
def test_error_case(name, request):
    got = run_case(name)
    path = expected_path(name)
    if request.config.getoption("--accept"):
        path.write_text(got, encoding="utf-8")
        return
    assert path.is_file(), f"{path.name} is missing.\n{_accept_hint()}"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(
            difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), path.name, f"{name} (now)"
            )
        )
        pytest.fail(
            f"the output for tests/errors/{name} changed:\n{diff}\n{_accept_hint()}", pytrace=False
        )


@pytest.mark.parametrize("name", CASES)
def test_error_case_shape(name):
    """Every case names its check, never shows a traceback, and locates every diagnostic."""
    first = spec_of(name).read_bytes().lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    assert (
        first.startswith(b"# check: ") or name == "input_empty"
    ), "the first line of a case says what it checks"
    text = expected_path(name).read_text(encoding="utf-8")
    assert "Traceback" not in text and "internal error" not in text
    exit_code = int(re.search(r"\[exit (\d)\]\n\Z", text).group(1))
    locations = list(_LOCATION.finditer(text))
    errors = [mt for mt in locations if mt.group("sev") == "error"]
    assert exit_code == (2 if errors else 0)
    body = [
        line
        for line in text.splitlines()[1:-1]
        if (": error: " in line or ": warning: " in line)
        and not line.startswith(("hint: ", "note: ", " "))  # quoted text is no location
    ]
    assert len(body) == len(locations), "every error and warning starts with file:line:col"
    for mt in locations:
        assert mt.group("file").startswith(f"tests/errors/{name}")


def test_every_check_has_a_case():
    for check, (name, fragment) in CHECKS.items():
        assert name in CASES, f"{check}: no case tests/errors/{name}"
        assert fragment in expected_path(name).read_text(
            encoding="utf-8"
        ), f"{check}: {name}.expected does not show {fragment!r}"
    unclaimed = set(CASES) - {name for name, _ in CHECKS.values()}
    assert not unclaimed, f"cases that no check claims: {sorted(unclaimed)}"


def test_library_definitions_are_unused_only_in_a_full_run(tmp_path):
    """A file without backends is a library: compiled alone, its definitions are not 'unused'."""
    from generator.semantics.driver import resolve_specs

    (tmp_path / "lib.bcfg").write_text(
        "dtypes d = {input: quint8, output: quint8}\ndtypes spare = {input: qint8}\n"
    )
    (tmp_path / "b.bcfg").write_text(
        'import "lib.bcfg"\nbackend b {\n    pattern nn.ReLU { dtypes: d }\n}\n'
    )
    assert resolve_specs(tmp_path, [tmp_path / "lib.bcfg"]).warnings == []
    assert resolve_specs(tmp_path, [tmp_path / "b.bcfg"]).warnings == []
    (warning,) = resolve_specs(tmp_path, [tmp_path / "b.bcfg", tmp_path / "lib.bcfg"]).warnings
    assert (
        f"{warning.span}: {warning.message}"
        == "lib.bcfg:2:1: dtype set 'spare' is defined but never used"
    )
