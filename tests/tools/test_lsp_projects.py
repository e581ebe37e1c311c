"""``bcfg lsp`` in projects whose specs name their own modules (issue 24).

The server is the console script an editor starts (``bin/bcfg lsp``), run from
``/`` without PYTHONPATH: what ``bcfg generate`` accepts, it accepts; a user
module edited on disk while the server runs is imported afresh, as the next
``bcfg`` run would import it; two projects with modules of the same name each
see their own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.tools.lsp_client import (
    CACHE,
    close_doc,
    errors,
    make_client,
    open_doc,
    published,
    replace_all,
    uri_of,
)
from tests.tools.projects import ACME, BIN, SPEC, console_env

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the server's client lives on this loop


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> tuple[Path, Path]:
    """Two copies of the vendor project; the second's acme_ops has no fuser."""
    root = tmp_path_factory.mktemp("lsp-projects")
    a, b = root / "a", root / "b"
    shutil.copytree(ACME, a)
    shutil.copytree(ACME, b)
    init = b / "acme_ops" / "__init__.py"
    init.write_text(init.read_text().replace("from .fusers import fuse_linear_gelu\n", ""))
    return a, b


CONFIG = ClientServerConfig(
    server_command=["/bin/sh", "-c", f'cd / && exec "{BIN / "bcfg"}" lsp'],
    client_factory=make_client,
    server_env=console_env(Path(CACHE)) | {"BCFG_CACHE_DIR": CACHE},
)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, projects):
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), root_uri=uri_of(projects[0])
        )
    )
    yield
    await lsp_client.shutdown_session()


def messages(diagnostics) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.message.split("\n")[0] for d in errors(diagnostics)]


async def test_a_spec_naming_the_projects_modules_has_no_errors(client, projects):
    uri = open_doc(client, projects[0] / SPEC)
    assert not (await published(client, uri, version=1)).diagnostics
    close_doc(client, uri)


async def test_a_user_module_edited_while_the_server_runs(client, projects):
    root = projects[0]
    fusers = root / "acme_ops" / "fusers.py"
    original = fusers.read_text()
    text = (root / SPEC).read_text()
    since = len(client.published)
    uri = open_doc(client, root / SPEC, text)
    assert messages((await published(client, uri, version=1, since=since)).diagnostics) == []

    newer = text.replace("acme_ops.fuse_linear_gelu", "acme_ops.fusers.fuse_linear_gelu_v2")
    since = len(client.published)
    replace_all(client, uri, 2, newer)
    assert messages((await published(client, uri, version=2, since=since)).diagnostics) == [
        "unknown symbol 'acme_ops.fusers.fuse_linear_gelu_v2'"
    ]
    try:
        fusers.write_text(original + "\n\nfuse_linear_gelu_v2 = fuse_linear_gelu\n")
        since = len(client.published)
        replace_all(client, uri, 3, newer + "\n")
        assert messages((await published(client, uri, version=3, since=since)).diagnostics) == []
    finally:
        fusers.write_text(original)
    since = len(client.published)
    replace_all(client, uri, 4, newer)
    assert messages((await published(client, uri, version=4, since=since)).diagnostics) == [
        "unknown symbol 'acme_ops.fusers.fuse_linear_gelu_v2'"
    ]
    close_doc(client, uri)


async def test_two_projects_with_modules_of_one_name_each_see_their_own(client, projects):
    a, b = projects
    for _ in range(2):
        since = len(client.published)
        uri = open_doc(client, b / SPEC)
        assert messages((await published(client, uri, version=1, since=since)).diagnostics) == [
            "unknown symbol 'acme_ops.fuse_linear_gelu'"
        ]
        close_doc(client, uri)
        since = len(client.published)
        uri = open_doc(client, a / SPEC)
        found = (await published(client, uri, version=1, since=since)).diagnostics
        assert messages(found) == []
        close_doc(client, uri)
