"""A cold index large enough to be scanned by several processes, through the real server.

The language server runs the engine on a thread, so its scanning processes come from a fork server; whatever
they do, the JSON-RPC stream on the server's stdout must stay intact and the findings be those of one process.
(On a one-core machine the server scans in its own process, and this is a plain large-workspace test.)
"""

from __future__ import annotations

import os
import shutil

import pytest_lsp
from conftest import DEMO, SERVER_COMMAND, as_editor
from lsp_harness import initialize, make_client, members, open_document, until
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

COPIES = 120  # with the worker: over twice MIN_PER_PROCESS["files"], so two processes scan on two cores


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client,
                                              server_env={**os.environ, "SPEC_CONTRACT_JOBS": "2"}))
async def vscode(lsp_client: LanguageClient):
    async for started in as_editor(lsp_client, "vscode-1.139.1"):
        yield started


async def test_many_wrappers_scanned_in_parallel_each_get_their_findings(vscode, tmp_path):
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__"))
    wrapper = (root / "minisgl/models/llava.py").read_text()
    for i in range(COPIES):
        (root / f"minisgl/models/llava_{i}.py").write_text(wrapper)
    await initialize(vscode, [root])
    await until(lambda: any("finding(s);" in m.message for m in vscode.log_messages), "the end of indexing", 120)
    summary = next(m.message for m in vscode.log_messages if "finding(s);" in m.message)
    assert f": {2 * (COPIES + 1)} finding(s);" in summary
    uri = open_document(vscode, root / f"minisgl/models/llava_{COPIES - 1}.py")
    report = await vscode.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert members(list(report.items)) == ["get_embed_and_head", "set_eagle3_layers_to_capture"]
