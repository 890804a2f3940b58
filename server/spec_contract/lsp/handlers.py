"""LSP method handlers: thin ``async`` adapters from protocol messages to the server's state and the engine.

Every handler is wrapped by :func:`guarded`: an unexpected exception is logged with ``window/logMessage``
and a request is answered with an internal-error response (a notification has no answer), so one bad
message never takes the server down.
"""

from __future__ import annotations

import functools
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from spec_contract.lsp import actions, commands, diagnostics, hover, settings
from spec_contract.lsp.convert import ParserLinesWorkspace, SourceLines, from_position, lines_of, path_of
from spec_contract.lsp.server import SpecContractServer, load_engine
from spec_contract.lsp.workspace import adopt, initial_folders


def guarded(fn):
    """Log a handler's unexpected exception and turn it into an error response instead of a crash."""

    @functools.wraps(fn)
    async def wrapper(ls: SpecContractServer, params):
        try:
            return await fn(ls, params)
        except JsonRpcException:
            raise
        except Exception as exc:
            ls.log_exception(fn.__name__, exc)
            raise JsonRpcInternalError(message=f"spec-contract: {fn.__name__} failed: {exc}") from exc

    return wrapper


def _data_key(diagnostic: types.Diagnostic) -> tuple[str, str, str] | None:
    data = diagnostic.data
    if diagnostic.source != diagnostics.SOURCE or not isinstance(data, dict):
        return None
    try:
        return (str(data["code"]), str(data["classQualname"]), str(data["member"]))
    except KeyError:
        return None


def register(server: SpecContractServer) -> None:
    feature = server.feature

    @feature(types.INITIALIZE)
    @guarded
    async def initialize(ls: SpecContractServer, params: types.InitializeParams) -> None:
        """Decide features from the client's capabilities before pygls computes ours."""
        ParserLinesWorkspace.recast(ls.workspace)
        ls.init_options = settings.section_of(params.initialization_options)
        # Pull only when the client can also be told to re-pull: this server's findings change when
        # *other* files change, and a pull client without refresh would keep stale diagnostics.
        ls.pull = bool(ls.cap("text_document.diagnostic")) and bool(
            ls.cap("workspace.diagnostics.refresh_support", False)
        )
        if not ls.pull:
            ls.protocol.fm.features.pop(types.TEXT_DOCUMENT_DIAGNOSTIC, None)
            ls.protocol.fm.features.pop(types.WORKSPACE_DIAGNOSTIC, None)
        ls.protocol.fm.feature_options[types.TEXT_DOCUMENT_CODE_ACTION].resolve_provider = ls.resolves_edits()
        for uri, name in initial_folders(params):
            ls.folders.add(uri, name)
        if ls.folders:
            # The engine loads on its own thread while the client reads this answer and opens its files.
            ls.engine.submit(load_engine)

    @feature(types.INITIALIZED)
    @guarded
    async def initialized(ls: SpecContractServer, params: types.InitializedParams) -> None:
        encoding = ls.workspace.position_encoding
        ls.log(
            f"spec-contract {ls.version}: {len(ls.folders)} folder(s), "
            f"{'pull' if ls.pull else 'push'} diagnostics, position encoding {getattr(encoding, 'value', encoding)}"
        )
        ls.spawn(ls.start(), "indexing the workspace")

    @feature(types.SHUTDOWN)
    @guarded
    async def shutdown(ls: SpecContractServer, params: None) -> None:
        for task in list(ls.background):
            task.cancel()
        ls.engine.shutdown(wait=False, cancel_futures=True)

    # -- documents ----------------------------------------------------------------------------------------
    @feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded
    async def did_open(ls: SpecContractServer, params: types.DidOpenTextDocumentParams) -> None:
        folder = ls.folders.for_uri(params.text_document.uri)
        if folder is None:  # no workspace folder, or none that can be analysed: the project discovery finds
            path = path_of(params.text_document.uri)
            if path is not None and path.endswith(".py"):
                ls.spawn(adopt(ls, Path(path)), f"finding the project of {params.text_document.uri}")
            return
        if folder.project is None:
            return  # indexing applies the overlays of every open document when the project is built
        await ls.apply_overlay(params.text_document.uri, folder)
        await ls.refresh(folder)

    @feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded
    async def did_change(ls: SpecContractServer, params: types.DidChangeTextDocumentParams) -> None:
        folder = ls.folders.for_uri(params.text_document.uri)
        if folder is not None and folder.project is not None:
            ls.schedule_change(params.text_document.uri, folder)

    @feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded
    async def did_close(ls: SpecContractServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        folder = ls.folders.for_uri(uri)
        if folder is not None and folder.project is not None:
            await ls.apply_overlay(uri, folder)  # the document is gone from the workspace: back to disk
            await ls.refresh(folder)

    @feature(types.TEXT_DOCUMENT_DID_SAVE)
    @guarded
    async def did_save(ls: SpecContractServer, params: types.DidSaveTextDocumentParams) -> None:
        await _files_changed(ls, [params.text_document.uri])

    @feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded
    async def did_change_watched_files(ls: SpecContractServer, params: types.DidChangeWatchedFilesParams) -> None:
        await _files_changed(ls, [change.uri for change in params.changes])

    # -- workspace ------------------------------------------------------------------------------------------
    @feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded
    async def did_change_configuration(
        ls: SpecContractServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if not ls.cap("workspace.configuration", False):
            ls.pushed_settings = settings.section_of(params.settings)
        ls.spawn(_reconfigure(ls), "applying new settings")

    @feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    @guarded
    async def did_change_workspace_folders(
        ls: SpecContractServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        for removed in params.event.removed:
            folder = ls.folders.remove(removed.uri)
            if folder is not None:
                async with folder.lock:
                    folder.project = None
                    await ls.clear(folder)
        added = [f for f in (ls.folders.add(a.uri, a.name) for a in params.event.added) if f is not None]
        if added:
            ls.spawn(ls.index(added), "indexing added folders")

    # -- diagnostics (pull) -----------------------------------------------------------------------------
    @feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=diagnostics.SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
        ),
    )
    @guarded
    async def document_diagnostic(ls: SpecContractServer, params: types.DocumentDiagnosticParams):
        context = await ls.context(params.text_document.uri)
        if context is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        folder, _analysis, path = context
        return diagnostics.document_report(folder.reports.get(path), params.previous_result_id)

    @feature(types.WORKSPACE_DIAGNOSTIC)
    @guarded
    async def workspace_diagnostic(ls: SpecContractServer, params: types.WorkspaceDiagnosticParams):
        previous = {item.uri: item.value for item in params.previous_result_ids}
        versions = {uri: doc.version for uri, doc in ls.workspace.text_documents.items() if doc.version is not None}
        items: list = []
        reported: set[str] = set()
        for folder in ls.folders:
            await ls.fresh(folder)
            folder_items = diagnostics.workspace_items(folder, previous, versions)
            items += folder_items
            reported |= {item.uri for item in folder_items}
        # Results the client still holds for files no folder reports on any more: clear them.
        for uri in sorted(set(previous) - reported):
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=versions.get(uri), items=[]))
        return types.WorkspaceDiagnosticReport(items=items)

    # -- code actions --------------------------------------------------------------------------------------
    @feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=False),
    )
    @guarded
    async def code_action(ls: SpecContractServer, params: types.CodeActionParams):
        context = await ls.context(params.text_document.uri)
        if context is None:
            return []
        folder, analysis, path = context
        if path in analysis.problems:
            # A half-typed buffer: the findings' positions are those of its last text that parsed, and no
            # edit can be computed on the text there now.
            return []
        uri = params.text_document.uri
        findings = await ls.on_engine(analysis.findings_for, path)
        keys = [k for k in (_data_key(d) for d in params.context.diagnostics) if k is not None]
        planned = actions.plan(
            findings, (params.range.start.line, params.range.end.line), keys, params.context.only
        )
        by_key = {}
        report = folder.reports.get(path)
        for diagnostic in list(report.diagnostics if report else []) + list(params.context.diagnostics):
            key = _data_key(diagnostic)
            if key is not None:
                by_key[key] = diagnostic
        lazy = ls.resolves_edits()
        result = []
        for item in planned:
            edit = None
            if not lazy:
                edit = await _edit(ls, analysis, item.action, item.findings)
                if edit is None:
                    continue
            result.append(actions.to_code_action(item, uri, by_key, edit))
        return result

    @feature(types.CODE_ACTION_RESOLVE)
    @guarded
    async def code_action_resolve(ls: SpecContractServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data
        if not (
            isinstance(data, dict)
            and isinstance(data.get("uri"), str)
            and data.get("action") in ("delegate", "delegateAll", "fixAll", "declare", "ignore")
            and isinstance(data.get("findings"), list)
        ):
            raise JsonRpcInvalidParams(message="codeAction/resolve: this code action was not made by spec-contract")
        context = await ls.context(data["uri"])
        if context is None:
            return action
        _folder, analysis, path = context
        findings = actions.find(await ls.on_engine(analysis.findings_for, path), data["findings"])
        if findings and path not in analysis.problems:  # the buffer parses again: an edit can be made
            action.edit = await _edit(ls, analysis, data["action"], findings)
        return action

    # -- hover and implementation ----------------------------------------------------------------------------
    @feature(types.TEXT_DOCUMENT_HOVER)
    @guarded
    async def on_hover(ls: SpecContractServer, params: types.HoverParams):
        at = await _cursor(ls, params)
        if at is None:
            return None
        folder, analysis, path, line, col = at
        formats = ls.cap("text_document.hover.content_format", None) or [types.MarkupKind.Markdown]
        return await ls.on_engine(
            hover.hover_for,
            analysis,
            path,
            line,
            col,
            folder.relative,
            SourceLines(analysis),
            ls.workspace.position_codec,
            types.MarkupKind.Markdown in formats,
        )

    @server.command(commands.CONTRACT)
    async def contract(ls: SpecContractServer, *args) -> dict:
        """The derived contract of every folder, for the editor's contract view."""
        analyses = []
        for folder in list(ls.folders):
            analysis = await ls.fresh(folder)
            if analysis is not None:
                analyses.append((folder.uri, analysis))
        return await ls.on_engine(commands.contract_payload, analyses, ls.workspace.position_codec)

    @feature(types.TEXT_DOCUMENT_IMPLEMENTATION)
    @guarded
    async def implementation(ls: SpecContractServer, params: types.ImplementationParams):
        at = await _cursor(ls, params)
        if at is None:
            return None
        _folder, analysis, path, line, col = at
        return await ls.on_engine(
            hover.implementations_for, analysis, path, line, col, SourceLines(analysis), ls.workspace.position_codec
        ) or None


async def _cursor(ls: SpecContractServer, params):
    """(folder, analysis, path, line, column) of a position request, in engine units; None outside a folder."""
    context = await ls.context(params.text_document.uri)
    if context is None:
        return None
    folder, analysis, path = context
    line, col = from_position(params.position, lines_of(analysis.source(path)), ls.workspace.position_codec)
    return folder, analysis, path, line, col


async def _edit(ls: SpecContractServer, analysis, action: str, findings) -> types.WorkspaceEdit | None:
    edits = await ls.on_engine(actions.engine_edits, analysis, action, list(findings))
    edits = [e for e in edits if e is not None]
    if not edits:
        return None
    return actions.workspace_edit(
        edits,
        SourceLines(analysis),
        ls.workspace.position_codec,
        bool(ls.cap("workspace.workspace_edit.document_changes", False)),
        ls.version_of,
    )


async def _files_changed(ls: SpecContractServer, uris: list[str]) -> None:
    """Saved or watched files changed on disk: reload config for pyproject, else invalidate and re-check."""
    touched = []
    for uri in uris:
        path = path_of(uri)
        folder = ls.folders.for_path(path)
        if folder is None or path is None:
            continue
        if Path(path).name == "pyproject.toml":
            if Path(path).parent == folder.root:
                ls.spawn(ls.reload(folder), f"reloading the configuration of {folder.name}")
            continue
        if folder.project is not None and path.endswith(".py"):
            await ls.on_engine(folder.project.invalidate, path)
            folder.dirty = True
            if folder not in touched:
                touched.append(folder)
    for folder in touched:
        await ls.refresh(folder)


async def _reconfigure(ls: SpecContractServer) -> None:
    """Re-read every folder's settings; rebuild the project only when what the engine sees changed."""
    for folder in ls.folders:
        before = folder.settings
        await ls.load_settings(folder)
        after = folder.settings
        if after.enable != before.enable or after.overrides() != before.overrides() or folder.project is None:
            await ls.reload(folder, reread_settings=False)

