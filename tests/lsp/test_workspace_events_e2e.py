"""Changes the editor reports about the workspace: files on disk, pyproject, settings, foreign requests."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lsp_harness import initialize, is_pull, members, open_document, pull, settle, until, wait_for_diagnostics
from lsprotocol import types
from pygls.exceptions import JsonRpcException


async def test_file_changed_on_disk_updates_the_wrapper(client, demo):
    llava, llama = demo / "minisgl/models/llava.py", demo / "minisgl/models/llama.py"
    await initialize(client, [demo])
    wrapper = open_document(client, llava)
    if is_pull(client):
        assert len((await pull(client, wrapper)).items) == 2
    else:
        await wait_for_diagnostics(client, wrapper, lambda d: len(d) == 2, "two diagnostics")
    refreshes = client.diagnostic_refresh_count
    llama.write_text(
        llama.read_text().replace("    def set_eagle3_layers_to_capture(self, layer_ids=None):\n"
                                  "        self.capture_layers = list(layer_ids or [])\n", "")
    )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=llama.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    # the inner model no longer has the capture: the wrapper's forward is no longer due (SC001 goes), and a run
    # of EAGLE3 with it crashes at the model runner's line, which the wrapper's file shows for it (SC011)
    after = [("SC001", "get_embed_and_head"), ("SC011", "set_eagle3_layers_to_capture")]
    if is_pull(client):
        await until(lambda: client.diagnostic_refresh_count > refreshes, "workspace/diagnostic/refresh")
        assert coded((await pull(client, wrapper)).items) == after
    else:
        await wait_for_diagnostics(client, wrapper, lambda d: coded(d) == after, "the forward's SC001 gone")


def coded(items: list[types.Diagnostic]) -> list[tuple[str, str]]:
    return sorted((d.code, d.data["member"]) for d in items)


async def test_pyproject_change_reloads_the_configuration(neovim, demo):
    await initialize(neovim, [demo])
    wrapper = open_document(neovim, demo / "minisgl/models/llava.py")
    await wait_for_diagnostics(neovim, wrapper, lambda d: len(d) == 2, "two diagnostics")
    pyproject = demo / "pyproject.toml"
    pyproject.write_text('[tool.spec-contract]\nseverity = { SC001 = "warning" }\n')
    neovim.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    items = await wait_for_diagnostics(
        neovim, wrapper, lambda d: d and all(x.severity == types.DiagnosticSeverity.Warning for x in d), "warnings"
    )
    assert members(items) == ["get_embed_and_head", "set_eagle3_layers_to_capture"]


async def test_disabled_folder_is_silent_until_enabled(neovim, demo):
    await initialize(neovim, [demo], {"specContract": {"enable": False}})
    wrapper = open_document(neovim, demo / "minisgl/models/llava.py")
    await settle(neovim, wrapper)
    assert wrapper not in neovim.diagnostics
    hover = await neovim.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=wrapper), position=types.Position(5, 10))
    )
    assert hover is None
    neovim.set_configuration({"enable": True}, section="specContract")
    neovim.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_for_diagnostics(neovim, wrapper, lambda d: len(d) == 2, "diagnostics once enabled")


async def test_resolving_a_foreign_code_action_is_an_invalid_params_error(neovim, demo):
    await initialize(neovim, [demo])
    with pytest.raises(JsonRpcException) as raised:
        await neovim.code_action_resolve_async(types.CodeAction(title="not ours", data={"from": "another server"}))
    assert raised.value.code == -32602


def test_server_start_does_not_import_the_analysis():
    """Editors start the server often; libcst and the engine load only when a folder is indexed."""
    probe = (
        "import sys; from spec_contract.lsp.server import create_server; create_server(); "
        "print(sorted(m for m in ('libcst', 'spec_contract.engine.project') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


async def test_pyproject_can_disable_the_tree(neovim, demo):
    (demo / "pyproject.toml").write_text("[tool.spec-contract]\nenable = false\n")
    await initialize(neovim, [demo])
    wrapper = open_document(neovim, demo / "minisgl/models/llava.py")
    await settle(neovim, wrapper)
    assert wrapper not in neovim.diagnostics
    await until(lambda: any("enable = false" in m.message for m in neovim.log_messages), "a log line saying why")
