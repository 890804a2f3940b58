"""Diagnostics end to end on the demo workspace, through the pull (VS Code) and push (Neovim, Emacs) paths."""

from __future__ import annotations

import shutil
from pathlib import Path

from lsp_harness import (
    diagnostics_now,
    indexed_diagnostics,
    initialize,
    is_pull,
    members,
    open_document,
    pull,
    replace_document,
    settle,
    until,
    wait_for_diagnostics,
)
from lsprotocol import types

EXPECTED = ["get_embed_and_head", "set_eagle3_layers_to_capture"]
KIMI = Path(__file__).resolve().parents[1] / "fixtures" / "kimi_k25"


def paths(demo):
    return (
        demo / "minisgl/models/llava.py",
        demo / "minisgl/models/llama.py",
        demo / "minisgl/speculative/eagle_worker.py",
    )


async def test_wrapper_gets_two_sc001_on_its_class_name(client, demo):
    llava, _, _ = paths(demo)
    await initialize(client, [demo])
    uri = open_document(client, llava)
    if is_pull(client):
        report = await pull(client, uri)
        items = list(report.items)
        assert report.result_id
        unchanged = await pull(client, uri, previous=report.result_id)
        assert isinstance(unchanged, types.RelatedUnchangedDocumentDiagnosticReport)
        assert unchanged.result_id == report.result_id
    else:
        items = await wait_for_diagnostics(client, uri, lambda d: len(d) == 2, "two diagnostics on llava.py")
    assert members(items) == EXPECTED
    line = llava.read_text().splitlines().index("class LlavaForConditionalGeneration:")
    for diagnostic in items:
        assert diagnostic.range == types.Range(types.Position(line, 6), types.Position(line, 35))
        assert (diagnostic.source, diagnostic.code) == ("spec-contract", "SC001")
        assert diagnostic.severity == types.DiagnosticSeverity.Error
        assert diagnostic.data["delegate"] == "language_model"
        assert diagnostic.data["classQualname"] == "minisgl.models.llava.LlavaForConditionalGeneration"
        assert "does not forward" in diagnostic.message
    related = {d.data["member"]: d.related_information for d in items}
    if client.editor == "emacs-29.1":  # relatedInformation: false in its capabilities
        assert related == {m: None for m in EXPECTED}
    else:
        uris = {m: [r.location.uri for r in infos] for m, infos in related.items()}
        assert uris["get_embed_and_head"] == [
            (demo / "minisgl/speculative/eagle_worker.py").as_uri(),
            (demo / "minisgl/models/llama.py").as_uri(),
        ]
        call_site = related["get_embed_and_head"][0].location.range
        assert call_site == types.Range(types.Position(10, 60), types.Position(10, 78))
        assert related["get_embed_and_head"][1].message == \
            "`LlamaForCausalLM` (`self.language_model`) has `get_embed_and_head`"


async def test_indexing_reports_progress(client, demo):
    await initialize(client, [demo])
    token, reports = await until(
        lambda: next(
            ((t, r) for t, r in client.progress_reports.items() if r and isinstance(r[-1], types.WorkDoneProgressEnd)),
            None,
        ),
        "an ended work-done progress",
    )
    assert str(token).startswith("spec-contract-index-")
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == "spec-contract: Indexing"
    assert any(isinstance(r, types.WorkDoneProgressReport) for r in reports)
    assert reports[-1].message == "2 finding(s) in 1 folder(s)"


async def test_broken_file_keeps_its_findings_until_repaired(client, demo):
    llava, _, _ = paths(demo)
    await initialize(client, [demo])
    text = llava.read_text()
    uri = open_document(client, llava, text)
    assert members(await indexed_diagnostics(client, uri, 2)) == EXPECTED
    before = list(client.diagnostics.get(uri, []))
    broken = text.replace("    def load_weights(self, weights):", "    def load_weights(self, weights:\n        def get_embed_and_head(sel")
    replace_document(client, uri, broken, 2)
    assert members(await diagnostics_now(client, uri)) == EXPECTED
    if not is_pull(client):
        assert list(client.diagnostics[uri]) == before  # nothing new was published while the file was broken
    other_uris = [p.as_uri() for p in paths(demo)[1:]]
    assert all(not client.diagnostics.get(u) for u in other_uris)
    repaired = text.replace(
        "    def load_weights(self, weights):",
        "    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n\n"
        "    def load_weights(self, weights):",
    )
    replace_document(client, uri, repaired, 3)
    if is_pull(client):
        assert members(await diagnostics_now(client, uri)) == ["set_eagle3_layers_to_capture"]
    else:
        await wait_for_diagnostics(
            client, uri, lambda d: members(d) == ["set_eagle3_layers_to_capture"], "one diagnostic after the repair"
        )


async def test_removing_the_inner_method_clears_the_wrappers_diagnostic(client, demo):
    """An edit in llama.py alone updates llava.py's diagnostics: nothing is sent for llava.py after opening."""
    llava, llama, _ = paths(demo)
    await initialize(client, [demo])
    wrapper = open_document(client, llava)
    await indexed_diagnostics(client, wrapper, 2)
    inner = open_document(client, llama)
    refreshes = client.diagnostic_refresh_count
    text = llama.read_text()
    without = text.replace(
        "    def get_embed_and_head(self):\n        return self.embed_tokens, self.lm_head\n\n", ""
    )
    assert without != text
    replace_document(client, inner, without, 2)
    # the forward is gone; with no inner model to forward to, the wrapper now lacks a member nobody has (an
    # implement finding, SC010, since it forwards the draft's half of EAGLE)
    expected = [("SC001", "set_eagle3_layers_to_capture"), ("SC010", "get_embed_and_head")]
    if is_pull(client):
        await until(lambda: client.diagnostic_refresh_count > refreshes, "workspace/diagnostic/refresh")
        report = await pull(client, wrapper, previous=None)
        assert coded(report.items) == expected
    else:
        await wait_for_diagnostics(client, wrapper, lambda d: coded(d) == expected, "the wrapper's update")


def coded(items: list[types.Diagnostic]) -> list[tuple[str, str]]:
    return sorted((str(d.code), d.data["member"]) for d in items)


async def test_new_contract_call_in_a_worker_flags_the_wrapper(client, demo):
    llava, llama, worker = paths(demo)
    llama.write_text(
        llama.read_text().replace(
            "\n\nEntryClass", "\n    def get_hot_token_id(self):\n        return None\n\n\nEntryClass"
        )
    )
    await initialize(client, [demo])
    wrapper = open_document(client, llava)
    await indexed_diagnostics(client, wrapper, 2)
    refreshes = client.diagnostic_refresh_count
    text = worker.read_text()
    worker_uri = open_document(client, worker, text)
    added = text.replace(
        "        self.hot_token_id = None\n",
        "        self.hot_token_id = self.target_worker.model_runner.model.get_hot_token_id()\n",
    )
    replace_document(client, worker_uri, added, 2)
    expected = ["get_embed_and_head", "get_hot_token_id", "set_eagle3_layers_to_capture"]
    if is_pull(client):
        await until(lambda: client.diagnostic_refresh_count > refreshes, "workspace/diagnostic/refresh")
        assert members((await pull(client, wrapper)).items) == expected
    else:
        await wait_for_diagnostics(client, wrapper, lambda d: members(d) == expected, "a third diagnostic")


async def test_severity_setting_applies_after_did_change_configuration(client, demo):
    llava, _, _ = paths(demo)
    await initialize(client, [demo])
    uri = open_document(client, llava)
    await indexed_diagnostics(client, uri, 2)
    client.set_configuration({"severity": {"SC001": "warning"}}, section="specContract")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"specContract": {"severity": {"SC001": "warning"}}}))
    if is_pull(client):
        refreshes = client.diagnostic_refresh_count
        await until(lambda: client.diagnostic_refresh_count > refreshes, "a refresh after the new settings")
        items = (await pull(client, uri)).items
    else:
        items = await wait_for_diagnostics(
            client, uri, lambda d: d and all(x.severity == types.DiagnosticSeverity.Warning for x in d), "warnings"
        )
    assert [d.severity for d in items] == [types.DiagnosticSeverity.Warning] * 2


async def test_unknown_profile_is_shown_and_defaults_used(neovim, demo):
    llava, _, _ = paths(demo)
    await initialize(neovim, [demo], {"specContract": {"profile": "no-such-engine"}})
    uri = open_document(neovim, llava)
    message = await until(
        lambda: next((m for m in neovim.messages if "no-such-engine" in m.message), None), "a profile warning"
    )
    assert message.type == types.MessageType.Warning
    assert members(await wait_for_diagnostics(neovim, uri, lambda d: len(d) == 2, "defaults in use")) == EXPECTED


async def test_workspace_folders_added_and_removed(client, demo, tmp_path):
    second = tmp_path / "second"
    shutil.copytree(demo, second)
    await initialize(client, [demo])
    first_uri = open_document(client, demo / "minisgl/models/llava.py")
    await indexed_diagnostics(client, first_uri, 2)
    refreshes = client.diagnostic_refresh_count
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")],
                removed=[types.WorkspaceFolder(uri=demo.as_uri(), name=demo.name)],
            )
        )
    )
    second_uri = (second / "minisgl/models/llava.py").as_uri()
    if is_pull(client):
        await until(lambda: client.diagnostic_refresh_count > refreshes, "a refresh after the folder change")
        assert members((await pull(client, second_uri)).items) == EXPECTED
        assert list((await pull(client, first_uri)).items) == []
        report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert {item.uri for item in report.items if item.items} == {second_uri}
    else:
        await wait_for_diagnostics(client, second_uri, lambda d: len(d) == 2, "the added folder's findings")
        await wait_for_diagnostics(client, first_uri, lambda d: d == [], "the removed folder's findings cleared")
    await settle(client, second_uri)


async def test_closing_an_unsaved_buffer_goes_back_to_the_disk_content(client, demo):
    llava, _, _ = paths(demo)
    await initialize(client, [demo])
    text = llava.read_text()
    edited = text.replace(
        "    def load_weights(self, weights):",
        "    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n\n"
        "    def load_weights(self, weights):",
    )
    uri = open_document(client, llava, edited)
    if is_pull(client):
        assert members(await diagnostics_now(client, uri)) == ["set_eagle3_layers_to_capture"]
    else:
        await wait_for_diagnostics(client, uri, lambda d: len(d) == 1, "the unsaved buffer's one diagnostic")
    refreshes = client.diagnostic_refresh_count
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    if is_pull(client):
        await until(lambda: client.diagnostic_refresh_count > refreshes, "a refresh after closing")
        assert members((await pull(client, uri)).items) == EXPECTED
    else:
        await wait_for_diagnostics(client, uri, lambda d: members(d) == EXPECTED, "the file on disk's two")


async def test_the_most_severe_finding_is_the_one_each_editor_shows_first(client, tmp_path):
    """Issue 23, item 3 and issue 37, item 6: the Kimi class has two errors, a warning and an information on its
    name. VS Code's hover, Emacs and Neovim's diagnostics float list a line's diagnostics in the order sent, so
    the errors go first, for every client. (Neovim's sign and virtual text, which show a line's last diagnostic
    unless sorted, are sorted by the configurations in editors/neovim: tests/editors/test_neovim.py.) Within a
    severity the engine's order stands."""
    kimi = tmp_path / "kimi_k25"
    shutil.copytree(KIMI, kimi)
    await initialize(client, [kimi])
    uri = open_document(client, kimi / "sglang/srt/models/kimi_k25.py")
    found = await indexed_diagnostics(client, uri, 4)
    expected = [types.DiagnosticSeverity.Error] * 2 + [types.DiagnosticSeverity.Warning,
                                                       types.DiagnosticSeverity.Information]
    assert [d.severity for d in found] == expected, [(d.code, d.severity) for d in found]
