"""``bcfg lsp`` on the PT2E-only targets of other runtime bases: specs/arm_tosa.bcfg,
specs/cortex_m.bcfg and specs/cadence.bcfg (``scopes: composable``), as an editor sees them:
diagnostics, hover on their settings and ``pt2e:`` keys (the PT2E key table), definition
of their hooks and groups, completion of settings, keys, words and hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.tools import test_lsp
from tests.tools.lsp_client import close_doc, open_doc, published, uri_of
from tests.tools.test_lsp import doc_id, goto, hover_at, line_of

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the server's client lives on this loop

# test_lsp's fixtures: a copy of the repository's specs, one server for the module.
workspace, client = test_lsp.workspace, test_lsp.client

TARGETS = ("arm_tosa", "cadence", "cortex_m")


async def hover(client, workspace: Path, target: str, needle: str, word: str) -> str | None:
    path = workspace / "specs" / f"{target}.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, needle)
    try:
        return await hover_at(client, uri, i, lines[i].index(word, lines[i].index(needle)) + 1)
    finally:
        close_doc(client, uri)


async def test_each_target_opens_clean_and_a_qat_config_is_an_error_at_its_place(client, workspace):
    for target in TARGETS:
        uri = open_doc(client, workspace / "specs" / f"{target}.bcfg")
        assert list((await published(client, uri, version=1)).diagnostics) == [], target
        close_doc(client, uri)
    path = workspace / "specs" / "cadence.bcfg"
    text = path.read_text().replace(
        "pt2e: {eager: true}\n", "pt2e: {eager: true, qat_config: required}\n", 1
    )
    uri = open_doc(client, path, text, version=2)
    (d,) = (await published(client, uri, version=2)).diagnostics
    i = line_of(text.splitlines(), "qat_config: required")
    assert (d.range.start.line, d.range.start.character) == (i, text.splitlines()[i].index("qat"))
    assert d.message.startswith(
        "qat_config: required applies to a quantizer with scopes: modules, whose runtime reads "
        "it; this one has scopes: pairs"
    )
    close_doc(client, uri)


async def test_hover_on_settings_and_their_words(client, workspace):
    scopes = await hover(client, workspace, "cadence", "scopes: pairs", "scopes")
    assert scopes.startswith("**quantizer setting** `scopes`: modules (the default")
    assert scopes.endswith(
        "values: `modules` (default), `operators`, `composable`, `pairs`, `registry`"
    )
    word = await hover(client, workspace, "cortex_m", "scopes: composable", "composable")
    assert word == (
        "**quantizer setting** `scopes: composable`: the runtime base `ComposableSpecQuantizer`; "
        "`bcfg compat` explains its quantizers op by op"
    )
    configs = await hover(client, workspace, "arm_tosa", "configs: accessors", "configs")
    assert "read under `scopes: composable`" in configs
    accessors = await hover(client, workspace, "arm_tosa", "configs: accessors", "accessors")
    assert accessors.startswith("**quantizer setting** `configs: accessors`: spec: the spec's")
    validated = await hover(client, workspace, "cortex_m", "configs: validated", "validated")
    assert validated.startswith("**quantizer setting** `configs: validated`: spec: the spec's")
    assert "validated: the spec, with the config's specs read through" in validated
    transform = await hover(client, workspace, "cortex_m", "transform: hooks", "transform")
    assert transform.startswith("**quantizer setting** `transform`: graph transforms")


async def test_hover_on_pt2e_keys_in_a_record_and_in_a_for_list(client, workspace):
    when = await hover(client, workspace, "cadence", "pt2e: {when: hooks.tensor_add,", "when")
    assert when.startswith("**PT2E key** `when`: conditions a match meets")
    assert "read under `scopes: operators` and `scopes: composable`" in when
    eager = await hover(client, workspace, "cadence", "pt2e: {eager: true}", "eager")
    assert eager.startswith("**PT2E key** `eager`:") and "values: `true`, `false`" in eager
    # A record a for list hands to pt2e: (cortex_m's transposed conv options).
    axis = await hover(client, workspace, "cortex_m", "weight_axis: 1", "weight_axis")
    assert axis.startswith("**PT2E key** `weight_axis`: the weight's channel axis")
    hook = await hover(client, workspace, "arm_tosa", "when: hooks.relu_fused", "relu_fused")
    assert hook == (
        "`hooks.relu_fused` is a function 'specs.hooks.arm.relu_fused', imported from "
        "`specs.hooks.arm`"
    )


@pytest.mark.parametrize(
    ("target", "needle", "word", "file", "defined"),
    [
        ("cadence", "when: hooks.tensor_add", "tensor_add", "hooks/cadence.py", "def tensor_add("),
        (
            "cortex_m",
            "when: hooks.same_shape}",
            "same_shape",
            "hooks/cortex_m.py",
            "def same_shape(",
        ),
        ("arm_tosa", "when: hooks.relu_fused", "relu_fused", "hooks/arm.py", "def relu_fused("),
        ("cortex_m", "use fusing(", "fusing", "cortex_m.bcfg", "group fusing("),
        ("cadence", "dtypes: [A8W8, A16, A32W8]", "A16", "cadence.bcfg", "dtypes A16 ="),
    ],
)
async def test_definition_of_hooks_groups_and_dtypes(
    client, workspace, target, needle, word, file, defined
):
    path = workspace / "specs" / f"{target}.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, needle)
    loc = await goto(client, uri, i, lines[i].index(word, lines[i].index(needle)) + 1)
    close_doc(client, uri)
    assert loc.uri == uri_of(workspace / "specs" / file)
    there = (workspace / "specs" / file).read_text().splitlines()
    start = loc.range.start
    assert there[start.line].startswith(defined)
    assert there[start.line][start.character :].startswith(word)


async def completions(client, uri: str, lines: list[str], needle: str, col: int) -> set[str]:
    """The labels completion offers on the line of ``needle`` at ``col`` (-1: its end)."""
    i = line_of(lines, needle)
    result = await client.text_document_completion_async(
        lsp.CompletionParams(doc_id(uri), lsp.Position(i, col if col >= 0 else len(lines[i])))
    )
    return {item.label for item in result.items}


async def test_completion_of_settings_keys_words_and_hooks(client, workspace):
    path = workspace / "specs" / "cadence.bcfg"
    text = path.read_text().replace(
        "    scopes: pairs\n", "    scopes: pairs\n    configs: \n    \n"
    )
    text = text.replace(
        "pattern aten._softmax.default { dtypes: A16 }",
        "pattern aten.bmm.default { dtypes: A8W8  pt2e: {eager: true, } }\n"
        "    pattern aten.mm.default { dtypes: A8W8  pt2e: {when: hooks.} }",
    )
    uri = open_doc(client, path, text)
    lines = text.splitlines()

    async def labels(needle: str, col: int) -> set[str]:
        return await completions(client, uri, lines, needle, col)

    assert await labels("    configs: ", -1) == {"spec", "accessors", "validated"}
    settings = {"scopes", "configs", "transform", "fx", "outputs", "operator_type"}
    i = line_of(lines, "    configs: ")
    assert settings <= await labels(lines[i + 1], 4) and "input" not in await labels(
        lines[i + 1], 4
    )
    keys = await labels("eager: true, }", lines[line_of(lines, "eager: true, }")].index(", }") + 2)
    assert {"when", "eager", "weight_axis", "qat_config", "aten"} <= keys and "input" not in keys
    hooks = await labels("when: hooks.}", lines[line_of(lines, "when: hooks.}")].index(".}") + 1)
    assert {"tensor_add", "values_only", "w8a32_gru", "never"} <= hooks and "_shape" not in hooks
    close_doc(client, uri)


async def test_hover_on_class_record_and_stage_keys_and_given(client, workspace):
    name = await hover(client, workspace, "cortex_m", "name: CortexMQuantizer", "name")
    assert name == (
        "**class record key** `name`: the class's name; one named like the generated class is "
        "that class\n\nvalues: a name, like CortexMQuantizer"
    )
    base = await hover(client, workspace, "cortex_m", "base: hooks.Shared", "base")
    assert base.startswith("**class record key** `base`: hook classes mixed in")
    params = await hover(client, workspace, "cortex_m", "params: {", "params")
    assert params.startswith("**class record key** `params`: the constructor's parameters")
    stages = await hover(client, workspace, "cortex_m", "stages: [", "stages")
    assert stages.startswith("**class record key** `stages`: add_stage(config, targets)")
    fixed = await hover(client, workspace, "arm_tosa", "fixed: [use_composable", "fixed")
    assert fixed.startswith("**class record key** `fixed`: parameters of which only")
    init = await hover(client, workspace, "arm_tosa", "init: front.compile_spec", "init")
    assert init.startswith("**class record key** `init`: a function called as init(self")
    # A stage's keys, and a parameter's name (no key of a record bcfg knows: no hover).
    chains = await hover(client, workspace, "cortex_m", "chains: [", "chains")
    assert chains.startswith("**stage key** `chains`: every op of the rules whose chain")
    config = await hover(client, workspace, "cortex_m", "{config: per_tensor_config}", "config")
    assert config.startswith("**stage key** `config`: the stage's quantization config")
    assert await hover(client, workspace, "cortex_m", "use_explicit_layout: false,", "use_") is None
    # The pt2e key that selects patterns by a constructor parameter.
    given = await hover(
        client, workspace, "cortex_m", "given: {use_explicit_layout: true}", "given"
    )
    assert given.startswith("**PT2E key** `given`: constructor parameters of the quantizer's")
    assert "read under `scopes: composable`" in given


async def test_completion_of_class_record_and_stage_keys(client, workspace):
    path = workspace / "specs" / "cortex_m.bcfg"
    text = path.read_text().replace(
        "            name: CortexMQuantizer, base: hooks.Shared,\n",
        "            name: CortexMQuantizer, base: hooks.Shared, \n",
    )
    text = text.replace("{config: per_tensor_config}", "{config: per_tensor_config, }")
    uri = open_doc(client, path, text)
    lines = text.splitlines()

    async def labels(needle: str, col: int) -> set[str]:
        return await completions(client, uri, lines, needle, col)

    record_keys = {"name", "base", "params", "fixed", "init", "stages", "pair", "pairs", "function"}
    line = lines[line_of(lines, "base: hooks.Shared, ")]
    assert await labels("base: hooks.Shared, ", len(line)) == record_keys
    # A new line of the class record, after params: {...},
    i = line_of(lines, "stages: [")
    assert await labels(lines[i], 12) == record_keys
    line = lines[line_of(lines, "per_tensor_config, }")]
    assert await labels("per_tensor_config, }", line.index(", }") + 2) == {
        "config",
        "ops",
        "chains",
    }
    # A pattern's pt2e: record still completes PT2E keys, given among them.
    line = lines[line_of(lines, "pt2e: {when: hooks.same_shape}")]
    keys = await labels("pt2e: {when: hooks.same_shape}", line.index("{when") + 1)
    assert {"given", "when", "weight_axis"} <= keys and "stages" not in keys
    close_doc(client, uri)


async def test_hover_and_completion_of_pair_keys(client, workspace):
    """A pair of a class record's pairs: [...] (scopes: pairs): its keys are the key table's
    PAIR_RECORD rows, the compiler's too."""
    from generator.lang.pt2e_keys import PAIR_RECORD
    from generator.semantics.pt2e.pair_classes import PAIR_KEYS

    assert PAIR_KEYS == tuple(PAIR_RECORD) == ("pattern", "config", "qat")
    pattern = await hover(client, workspace, "cadence", "pattern: [p.AddmmPattern", "pattern")
    assert pattern.startswith("**pair key** `pattern`: the pair's pattern: an object with")
    config = await hover(client, workspace, "cadence", "config: q.qconfig_A8W8sym,", "config")
    assert config.startswith("**pair key** `config`: the pair's quantization config")
    qat = await hover(client, workspace, "cadence", "qat: q.qconfig_A8W8_qat,", "qat")
    assert qat.startswith("**pair key** `qat`: the config taken instead of config")
    # A stage's config is still a stage key; a pair's pattern is no class record key.
    path = workspace / "specs" / "cadence.bcfg"
    text = path.read_text().replace(
        "pairs: [{pattern: p.RmsNormPattern, config: q.qconfig_A8W8}],",
        "pairs: [{pattern: p.RmsNormPattern, config: q.qconfig_A8W8, }],",
    )
    uri = open_doc(client, path, text)
    lines = text.splitlines()
    line = lines[line_of(lines, "q.qconfig_A8W8, }]")]
    got = await completions(client, uri, lines, "q.qconfig_A8W8, }]", line.index(", }") + 2)
    assert got == {"pattern", "config", "qat"}
    # After the pairs list closes, the class record's keys again.
    line = lines[line_of(lines, "name: CadenceRmsNormNopQuantizer,")]
    got = await completions(client, uri, lines, "name: CadenceRmsNormNopQuantizer,", len(line))
    assert "pairs" in got and "pattern" not in got
    close_doc(client, uri)


async def test_hover_on_a_path_bcfg_does_not_check_says_so(client, workspace):
    """Issue 52, also seen: a class record's default or stage config by dotted path is imported
    when the class is constructed; hover said "'executorch' is not an allowed module"."""
    for needle, word in [
        ("config: configs.INT8_PER_CHANNEL_CONFIG", "INT8_PER_CHANNEL_CONFIG"),
        ("per_tensor_config: configs.INT8_PER_TENSOR_CONFIG", "configs"),
    ]:
        text = await hover(client, workspace, "cortex_m", needle, word)
        assert text is not None and "not an allowed module" not in text
        assert "imported when the class is constructed" in text and "bcfg does not check" in text
