"""``bcfg lsp`` driven by a real LSP client over stdio (pytest-lsp): what an editor sees.

One server for the module, on a copy of the repository's specs. The tests edit
buffers, not files: what the server reports comes from the buffers it was sent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from tests.support import REPO
from tests.tools.lsp_client import (
    apply_edits,
    change,
    close_doc,
    errors,
    open_doc,
    published,
    quiet,
    replace_all,
    server_config,
    uri_of,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the server's client lives on this loop


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    for name in ("specs",):
        subprocess.run(["cp", "-r", str(REPO / name), str(root / name)], check=True)
    (root / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    return root


@pytest_lsp.fixture(scope="module", config=server_config())
async def client(lsp_client: LanguageClient, workspace: Path):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=uri_of(workspace)
        )
    )
    yield
    await lsp_client.shutdown_session()


def doc_id(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def hover_at(client, uri: str, line: int, col: int) -> str | None:
    h = await client.text_document_hover_async(
        lsp.HoverParams(doc_id(uri), lsp.Position(line, col))
    )
    return h.contents.value if h else None


async def goto(client, uri: str, line: int, col: int):
    return await client.text_document_definition_async(
        lsp.DefinitionParams(doc_id(uri), lsp.Position(line, col))
    )


def line_of(lines: list[str], needle: str) -> int:
    return next(i for i, s in enumerate(lines) if needle in s)


# ------------------------------------------------------------------ diagnostics


async def test_diagnostics_on_open_and_on_every_change(client, workspace):
    path = workspace / "specs" / "my_backend.bcfg"
    text = path.read_text()
    uri = open_doc(client, path)
    assert errors((await published(client, uri, version=1)).diagnostics) == []

    lines = text.splitlines()
    i = line_of(lines, "pattern nn.Linear {")
    col = lines[i].index("Linear") + len("Linear")
    since = len(client.published)
    change(client, uri, 2, (i, col), (i, col), "r")  # nn.Linearr, unsaved
    (err,) = errors((await published(client, uri, version=2, since=since)).diagnostics)
    assert err.message.startswith(
        "unknown symbol 'torch.nn.Linearr'\nhint: did you mean 'nn.Linear'?"
    )
    assert err.source == "bcfg"
    assert (err.range.start.line, err.range.start.character) == (i, lines[i].index("nn.Linear"))
    assert (err.range.end.line, err.range.end.character) == (i, col + 1)

    since = len(client.published)
    change(client, uri, 3, (i, col), (i, col + 1), "")
    assert errors((await published(client, uri, version=3, since=since)).diagnostics) == []
    close_doc(client, uri)


async def test_a_syntax_error_is_reported_at_its_place(client, workspace):
    path = workspace / "specs" / "x86.bcfg"
    text = path.read_text().replace(
        "backend x86 {", "backend x86 {\n    pattern nn.ReLU { dtypes: }", 1
    )
    uri = open_doc(client, path, text)
    (err,) = errors((await published(client, uri, version=1)).diagnostics)
    lines = text.splitlines()
    i = line_of(lines, "pattern nn.ReLU { dtypes: }")
    assert err.message.startswith("expected a dtype set after 'dtypes:', found '}'")
    assert (err.range.start.line, err.range.start.character) == (i, lines[i].index("}"))
    assert (err.range.end.line, err.range.end.character) == (i, lines[i].index("}") + 1)
    close_doc(client, uri)


async def test_the_same_messages_as_bcfg_generate_and_warnings_as_warnings(client, tmp_path):
    text = (REPO / "tests" / "errors" / "unused_definition.bcfg").read_text()
    path = tmp_path / "unused_definition.bcfg"
    path.write_text(text)
    uri = open_doc(client, path)
    diags = (await published(client, uri, version=1)).diagnostics
    cli = subprocess.run(
        [sys.executable, "-m", "generator", "generate", path.name, "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    warnings = [ln for ln in cli.stderr.splitlines() if ": warning: " in ln]
    assert len(warnings) == 4
    assert [d.severity for d in diags] == [lsp.DiagnosticSeverity.Warning] * 4
    for d, w in zip(diags, warnings):
        where, message = w.split(": warning: ")
        line, col = map(int, where.split(":")[1:])
        assert d.message.split("\n")[0] == message
        assert (d.range.start.line, d.range.start.character) == (line - 1, col - 1)
    close_doc(client, uri)


async def test_an_unsaved_import_is_read_from_its_buffer(client, tmp_path):
    (tmp_path / "lib.bcfg").write_text("dtypes ds = {input: quint8, output: quint8}\n")
    main_text = 'import "lib.bcfg"\n\nbackend b {\n    pattern nn.ReLU { dtypes: ds }\n}\n'
    (tmp_path / "main.bcfg").write_text(main_text)
    main = open_doc(client, tmp_path / "main.bcfg")
    assert errors((await published(client, main, version=1)).diagnostics) == []

    since = len(client.published)
    lib = open_doc(client, tmp_path / "lib.bcfg")
    await published(client, lib, version=1, since=since)
    await published(client, main, since=since)  # main imports lib: re-checked
    since = len(client.published)
    change(client, lib, 2, (0, 7), (0, 9), "dz")  # renamed in the buffer only
    p = await published(client, main, since=since)
    (err,) = errors(p.diagnostics)
    assert err.message.startswith("unknown name 'ds'") or "'ds'" in err.message
    assert err.range.start.line == 3 and p.version == 1

    # A syntax error in the import is reported in the import, once, and not in main.
    since = len(client.published)
    change(client, lib, 3, (0, 0), (0, 0), "}")
    p_lib = await published(client, lib, version=3, since=since)
    p_main = await published(client, main, since=since)
    assert len(errors(p_lib.diagnostics)) == 1 and errors(p_main.diagnostics) == []

    # Closed: main sees the file on disk again, lib's diagnostics are cleared.
    since = await quiet(client)
    close_doc(client, lib)
    assert not (await published(client, lib, since=since)).diagnostics
    assert errors((await published(client, main, since=since)).diagnostics) == []
    close_doc(client, main)


async def test_a_buffer_whose_file_does_not_exist(client, tmp_path):
    """A new, never saved spec importing another unsaved one."""
    lib = open_doc(
        client, tmp_path / "new_lib.bcfg", "dtypes q = {input: quint8, output: quint8}\n"
    )
    await published(client, lib, version=1)
    text = 'import "new_lib.bcfg"\nbackend n {\n    pattern nn.ReLU { dtypes: q }\n}\n'
    main = open_doc(client, tmp_path / "new_main.bcfg", text)
    assert errors((await published(client, main, version=1)).diagnostics) == []
    since = len(client.published)
    replace_all(client, main, 2, text.replace("dtypes: q", "dtypes: qq"))
    (err,) = errors((await published(client, main, version=2, since=since)).diagnostics)
    assert "qq" in err.message and err.range.start.line == 2
    close_doc(client, main)
    close_doc(client, lib)


async def test_utf16_positions_after_an_emoji(client, tmp_path):
    text = "# caf\u00e9 \U0001f600\ndtypes d = {input: quint8, output: quint8}  # \U0001f600 x\n"
    path = tmp_path / "u.bcfg"
    path.write_text(text)
    uri = open_doc(client, path, text)
    await published(client, uri, version=1)
    line1 = text.splitlines()[1]
    col16 = len(line1[: line1.index("x")].encode("utf-16-le")) // 2
    since = len(client.published)
    change(client, uri, 2, (1, col16), (1, col16 + 1), "y }")  # inside the comment: still fine
    assert errors((await published(client, uri, version=2, since=since)).diagnostics) == []
    since = len(client.published)
    change(client, uri, 3, (1, 0), (1, 0), "dtypes \U0001f600e = {input: quint9}\n")
    (err,) = errors((await published(client, uri, version=3, since=since)).diagnostics)
    assert err.message.startswith("unexpected character")
    assert (err.range.start.line, err.range.start.character) == (1, 7)
    assert err.range.end.character == 9  # the emoji is two UTF-16 units
    close_doc(client, uri)


# ------------------------------------------------------------------ hover


async def test_hover_on_definitions_torch_names_and_words(client, workspace):
    path = workspace / "specs" / "fbgemm.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, "use conv(weighted_int8)")
    ds = await hover_at(client, uri, i, lines[i].index("weighted_int8") + 2)
    assert ds.startswith("**dtype set** `weighted_int8` (specs/common.bcfg:8)")
    assert (
        "dtypes weighted_int8 = {input: quint8, output: quint8, weight: qint8, bias: float}" in ds
    )
    group = await hover_at(client, uri, i, lines[i].index("conv") + 1)
    assert group.startswith("**group** `conv` (specs/common.bcfg:130)")
    assert "use conv_fusions(ds, n)" in group
    assert "- `use conv(ds=weighted_int8)` at specs/fbgemm.bcfg:5:5:" in group
    assert (await hover_at(client, uri, i, lines[i].index("use"))).startswith("**keyword** `use`")
    close_doc(client, uri)

    path = workspace / "specs" / "my_backend.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, "root: nn.Linear")
    assert (await hover_at(client, uri, i, lines[i].index("root"))).startswith(
        "**pattern field** `root`"
    )
    linear = await hover_at(client, uri, i, lines[i].index("Linear") + 1)
    assert linear == "`nn.Linear` is a module class 'torch.nn.Linear', imported from `torch.nn`"
    assert await hover_at(client, uri, i, lines[i].index("nn")) == "`nn` is a module 'torch.nn'"
    i = line_of(lines, "dtypes weighted_int8")
    assert (
        await hover_at(client, uri, i, lines[i].index("quint8"))
        == "**dtype** `torch.quint8`, range [0, 255]"
    )
    assert "**dtype config key** `weight`" in await hover_at(
        client, uri, i, lines[i].index("weight:")
    )
    i = line_of(lines, "backend my_backend {")
    backend = await hover_at(client, uri, i, lines[i].index("my_backend") + 1)
    assert backend == (
        "**backend** `my_backend`: 3 pattern configs\n\n"
        "`bcfg generate` writes `generated/my_backend.py` with `get_my_backend_backend_config()`"
    )
    close_doc(client, uri)

    # A PT2E-only target (fx: false): its quantizer module, no BackendConfig.
    path = workspace / "specs" / "x86_inductor.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, "backend x86_inductor {")
    backend = await hover_at(client, uri, i, lines[i].index("x86_inductor") + 1)
    assert backend == (
        "**backend** `x86_inductor`: 36 pattern configs\n\n"
        "PT2E only (its quantizer says `fx: false`): `bcfg generate` writes "
        "`generated/x86_inductor_quantizer.py` with `get_x86_inductor_quantizer()`, "
        "no BackendConfig"
    )
    close_doc(client, uri)


async def test_hover_expands_a_constraint_and_a_dtype_set_built_from_one(client, tmp_path):
    text = (
        "constraint fx = quint8 {quant_min: 0, quant_max: 255, scale: 1.0 / 256.0, zero_point: 0}\n"
        "dtypes base = {input: quint8, output: quint8}\n"
        "dtypes fixed = constrain(base, fx)\n"
    )
    uri = open_doc(client, tmp_path / "c.bcfg", text)
    await published(client, uri, version=1)
    c = await hover_at(client, uri, 0, text.index("fx") + 1)
    assert c == (
        "**constraint** `fx` (c.bcfg:1)\n"
        "```bcfg\nconstraint fx = quint8 {quant_min: 0, quant_max: 255, scale: 1.0 / 256.0, zero_point: 0}\n```\n"
        "means\n"
        "```bcfg\nconstraint fx = quint8 {quant_min: 0, quant_max: 255, scale: 2 ** -8, zero_point: 0}\n```"
    )
    d = await hover_at(client, uri, 2, len("dtypes f"))
    assert d == (
        "**dtype set** `fixed` (c.bcfg:3)\n"
        "```bcfg\ndtypes fixed = constrain(base, fx)\n```\n"
        "means\n"
        "```bcfg\ndtypes fixed = {input: fx, output: fx}\n"
        "constraint fx = quint8 {quant_min: 0, quant_max: 255, scale: 2 ** -8, zero_point: 0}\n```"
    )
    close_doc(client, uri)


async def test_hover_on_a_pattern_shows_its_configs_per_backend(client, workspace):
    path = workspace / "specs" / "common.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, "pattern (nn.Conv${n}d, relu)")
    h = await hover_at(client, uri, i, lines[i].index("Conv") + 1)
    first = h.split("\n")[0]
    assert first.startswith("`nn.Conv${n}d`: a name filled in")
    assert "configs** in " in h and "fbgemm" in h and "x86" in h
    assert (
        "via use conv(ds=weighted_int8), for n = 1, use conv_fusions(ds=weighted_int8, n=1), for relu = nn.ReLU"
        in h
    )
    assert (
        "```bcfg\npattern (nn.Conv1d, nn.ReLU) {\n    dtypes: {input: quint8, output: quint8, weight: qint8, bias: float}"
        in h
    )
    close_doc(client, uri)


# ------------------------------------------------------------------ definition


async def test_definition_across_files_and_of_local_names(client, workspace):
    path = workspace / "specs" / "fbgemm.bcfg"
    uri = open_doc(client, path)
    lines = path.read_text().splitlines()
    i = line_of(lines, "use conv(weighted_int8)")
    loc = await goto(client, uri, i, lines[i].index("weighted_int8") + 3)
    common = (workspace / "specs" / "common.bcfg").read_text().splitlines()
    assert loc.uri == uri_of(workspace / "specs" / "common.bcfg")
    j = line_of(common, "dtypes weighted_int8 =")
    assert (loc.range.start.line, loc.range.start.character, loc.range.end.character) == (j, 7, 20)
    loc = await goto(client, uri, i, lines[i].index("conv") + 1)
    assert (loc.range.start.line, loc.range.start.character) == (
        line_of(common, "group conv(ds) {"),
        6,
    )
    loc = await goto(client, uri, line_of(lines, 'import "common.bcfg"'), 10)
    assert loc.uri.endswith("/specs/common.bcfg") and loc.range.start.line == 0
    assert await goto(client, uri, i, lines[i].index("use")) is None
    close_doc(client, uri)

    cpath = workspace / "specs" / "common.bcfg"
    uri = open_doc(client, cpath)
    i = line_of(common, "pattern (nn.Conv${n}d, relu)")
    loc = await goto(client, uri, i, common[i].index("relu)") + 1)  # the loop variable
    assert loc.uri == uri and common[loc.range.start.line].lstrip().startswith("for relu in")
    loc = await goto(
        client, uri, i, common[i].index("${n}") + 2
    )  # n in a ${} hole: the group's parameter
    assert common[loc.range.start.line].startswith("group conv_fusions(ds, n)")
    assert loc.range.start.character == common[loc.range.start.line].index(", n") + 2
    close_doc(client, uri)


async def test_a_buffer_with_syntax_errors_still_has_hover_and_definitions(client, workspace):
    path = workspace / "specs" / "onednn.bcfg"
    text = path.read_text()
    lines = text.splitlines()
    i = next(i for i, s in enumerate(lines) if s.startswith("backend "))
    broken = text.replace(lines[i], lines[i] + "\n    pattern nn.ReLU { dtypes: ", 1)  # unclosed
    uri = open_doc(client, path, broken)
    assert errors((await published(client, uri, version=1)).diagnostics)
    blines = broken.splitlines()
    k = next(k for k, s in enumerate(blines) if s.startswith("dtypes "))  # a declaration before it
    name = blines[k].split()[1]
    j = next(j for j, s in enumerate(blines) if j > k and name in s and not s.startswith("dtypes"))
    h = await hover_at(client, uri, j, blines[j].index(name) + 1)
    assert h is not None and h.startswith(f"**dtype set** `{name}`")
    loc = await goto(client, uri, j, blines[j].index(name) + 1)
    assert loc.uri == uri and loc.range.start.line == k
    close_doc(client, uri)


# ------------------------------------------------------------------ formatting


async def format_edits(client, uri: str):
    return await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(
            doc_id(uri), lsp.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )


async def test_formatting_equals_bcfg_fmt(client, workspace, tmp_path):
    canonical = (workspace / "specs" / "my_backend.bcfg").read_text()
    messy = canonical.replace("        root: nn.Linear\n", "        root:nn.Linear ")
    messy = messy.replace("dtypes weighted_int8 = {", "dtypes   weighted_int8={")
    messy = messy.replace("        qat: nnqat.Linear\n", "        qat: nnqat.Linear\n\n\n")
    assert messy != canonical
    uri = open_doc(client, workspace / "specs" / "messy.bcfg", messy)
    result = apply_edits(messy, await format_edits(client, uri))
    assert result == canonical
    copy = tmp_path / "messy.bcfg"
    copy.write_text(messy)
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [sys.executable, "-m", "generator", "fmt", str(copy)], cwd=tmp_path, env=env, check=True
    )
    assert copy.read_text() == result
    close_doc(client, uri)

    uri = open_doc(client, workspace / "specs" / "native.bcfg")
    assert not await format_edits(client, uri)  # already formatted
    close_doc(client, uri)
    uri = open_doc(client, workspace / "specs" / "broken.bcfg", "backend b { pattern }\n")
    assert not await format_edits(client, uri)  # does not parse: the diagnostics say why
    close_doc(client, uri)


# ------------------------------------------------------------------ completion


async def test_completion_by_context(client, workspace):
    text = (
        'import "common.bcfg"\n'  # 0
        "backend t {\n"  # 1
        "    pattern nn.ReLU {\n"  # 2
        "        \n"  # 3: a field
        "        dtypes: {input: }\n"  # 4: a dtype or a constraint
        "        observation: \n"  # 5: an observation word
        "    }\n"  # 6
        "    use \n"  # 7: a group
        "    \n"  # 8: an item
        "}\n"  # 9
        "\n"  # 10: a declaration
        "alias q = nnq\n"  # 11
        "dtypes z = [q.]\n"  # 12: after 'q.': names under torch.ao.nn.quantized
    )
    uri = open_doc(client, workspace / "specs" / "t.bcfg", text)

    async def labels(line: int, col: int) -> set[str]:
        result = await client.text_document_completion_async(
            lsp.CompletionParams(doc_id(uri), lsp.Position(line, col))
        )
        return {i.label for i in result.items}

    assert {"observation", "dtypes", "root", "reference", "qat", "fuser", "fused"} <= await labels(
        3, 8
    )
    assert {"quint8", "qint8", "float16"} <= await labels(4, 24)
    assert any(n.startswith("act_") or "qint8" in n for n in await labels(4, 24))
    assert await labels(5, 21) == {"different_observer", "shared_observer", "not_observed"}
    assert {"conv", "linear", "rnn"} <= await labels(7, 8)
    assert await labels(8, 4) == {"pattern", "override", "use", "for"}
    assert {"import", "dtypes", "group", "backend"} <= await labels(10, 0)
    assert {"Linear", "Conv2d"} <= await labels(12, 14)
    close_doc(client, uri)


# ------------------------------------------------------------------ encodings


@pytest_lsp.fixture(scope="module", config=server_config())
async def utf8_client(lsp_client: LanguageClient):
    """A client that prefers UTF-8 positions, as Neovim does."""
    caps = client_capabilities("visual-studio-code")
    caps.general.position_encodings = [
        lsp.PositionEncodingKind.Utf8,
        lsp.PositionEncodingKind.Utf16,
    ]
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == lsp.PositionEncodingKind.Utf8
    yield
    await lsp_client.shutdown_session()


async def test_positions_follow_the_negotiated_encoding(utf8_client, tmp_path):
    line = 'backend b "\U0001f600 \u00e9" { pattern nn.Linearr { dtypes: {input: quint8} } }'
    path = tmp_path / "e.bcfg"
    path.write_text(line + "\n")
    uri = open_doc(utf8_client, path)
    (err,) = errors((await published(utf8_client, uri, version=1)).diagnostics)
    at = line.index("nn.Linearr")
    assert err.range.start.character == len(line[:at].encode("utf-8"))
    assert err.range.end.character == len(line[: at + len("nn.Linearr")].encode("utf-8"))
    h = await utf8_client.text_document_hover_async(
        lsp.HoverParams(
            doc_id(uri), lsp.Position(0, len(line[: line.index("quint8")].encode("utf-8")))
        )
    )
    assert h.contents.value.startswith("**dtype** `torch.quint8`")
    close_doc(utf8_client, uri)


async def test_edits_back_to_back_end_with_the_last_versions_diagnostics(client, tmp_path):
    """Edits sent while checks run (the first right after opening): older results are dropped,
    the last version is always checked and published."""
    path = tmp_path / "burst.bcfg"
    text = "dtypes d = {input: quint8, output: quint8}\n"
    since = len(client.published)
    uri = open_doc(client, path, text)
    for v in range(2, 12):
        change(client, uri, v, (0, 0), (0, 0), "# typing\n")
    change(client, uri, 12, (0, 0), (0, 0), "dtypes e = {input: quint9}\n")
    (err,) = errors((await published(client, uri, version=12, since=since)).diagnostics)
    assert "quint9" in err.message and err.range.start.line == 0
    close_doc(client, uri)


async def test_crlf_and_cr_line_ends(client, tmp_path):
    """CR, CRLF and LF all end a line, for bcfg as for LSP: ranges count lines the same way."""
    lines = [
        "# line ends",
        "dtypes d = {input: quint8, output: quint8}",
        "dtypes e = {input: quint9}",
    ]
    for i, end in enumerate(["\r\n", "\r"]):
        text = end.join(lines) + end
        uri = open_doc(client, tmp_path / f"ends{i}.bcfg", text)
        (err,) = errors((await published(client, uri, version=1)).diagnostics)
        assert "quint9" in err.message
        assert (err.range.start.line, err.range.start.character) == (2, lines[2].index("quint9"))
        h = await hover_at(client, uri, 1, lines[1].index("quint8") + 1)
        assert h.startswith("**dtype** `torch.quint8`")
        close_doc(client, uri)
    messy = "dtypes   d={input: quint8}\r\n"
    uri = open_doc(client, tmp_path / "crlf.bcfg", messy)
    assert apply_edits(messy, await format_edits(client, uri)) == "dtypes d = {input: quint8}\n"
    close_doc(client, uri)
