"""LSP method handlers: thin ``async`` adapters from protocol messages to the session and the engine.

Each handler is a module-level function of the :class:`~spec_contract.lsp.session.Session` and the message's
params; :func:`register` binds them to a pygls server. Every handler but the command is wrapped by
:func:`_guarded`: an unexpected exception is logged with ``window/logMessage`` and a request is answered with an
internal-error response (a notification has no answer), so one bad message never takes the server down.

Pull diagnostics are registered while ``initialize`` is handled, and only for clients that can be told to
re-pull (see :class:`~spec_contract.lsp.features.ClientFeatures`): pygls computes the server's capabilities
from the features registered once the ``initialize`` handler returns.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from spec_contract.lsp import actions, commands, diagnostics, hover, indexing, settings
from spec_contract.lsp.context import RequestContext
from spec_contract.lsp.convert import ParserLinesWorkspace, path_of
from spec_contract.lsp.data import CodeActionData, DiagnosticData, FindingKey
from spec_contract.lsp.features import ClientFeatures
from spec_contract.lsp.session import Session
from spec_contract.lsp.workspace import initial_folders

if TYPE_CHECKING:
    from spec_contract.engine import Fixes

P = TypeVar("P")
Handler = Callable[[Session, Any], Awaitable[Any]]


def _guarded(
    session: Session, fn: Callable[[Session, P], Awaitable[Any]], name: str | None = None
) -> Callable[[P], Awaitable[Any]]:
    """``fn`` bound to the session; its unexpected exception is logged and becomes an error response."""
    what = name if name is not None else str(getattr(fn, "__name__", "a handler"))

    async def handler(params: P) -> Any:  # first parameter not ``ls``: pygls passes the params alone
        try:
            return await fn(session, params)
        except JsonRpcException:
            raise
        except Exception as exc:
            session.editor.log_exception(what, exc)
            raise JsonRpcInternalError(message=f"spec-contract: {what} failed: {exc}") from exc

    return handler


# -- lifecycle ----------------------------------------------------------------------------------------------
async def initialize(server: LanguageServer, session: Session, params: types.InitializeParams) -> None:
    """Decide features from the client's capabilities, and register those that depend on them, before pygls
    computes the server's capabilities."""
    ParserLinesWorkspace.recast(server.workspace)
    session.features = ClientFeatures.of(params.capabilities, params.client_info)
    session.client_pid = params.process_id
    session.init_options = settings.section_of(params.initialization_options)
    if session.features.pull_diagnostics:
        server.feature(
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            types.DiagnosticOptions(
                identifier=diagnostics.SOURCE, inter_file_dependencies=True, workspace_diagnostics=True
            ),
        )(_guarded(session, document_diagnostic))
        server.feature(types.WORKSPACE_DIAGNOSTIC)(_guarded(session, workspace_diagnostic))
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=session.features.resolves_edits),
    )(_guarded(session, code_action))
    for uri, name in initial_folders(params):
        session.folders.add(uri, name)
    if session.folders:
        # The engine loads on its own thread while the client reads this answer and opens its files.
        session.engine.submit(indexing.load_engine)


async def initialized(server: LanguageServer, session: Session, params: types.InitializedParams) -> None:
    encoding = server.workspace.position_encoding
    session.editor.log(
        f"spec-contract {server.version}: {len(session.folders)} folder(s), "
        f"{'pull' if session.features.pull_diagnostics else 'push'} diagnostics, "
        f"position encoding {getattr(encoding, 'value', encoding)}"
    )
    session.spawn(indexing.start(session), "indexing the workspace")


async def shutdown(session: Session, params: None) -> None:
    session.shutdown()


# -- documents ------------------------------------------------------------------------------------------------
async def did_open(session: Session, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    folder = session.folders.for_uri(uri)
    if folder is None:  # no workspace folder, or none that can be analysed: the project discovery finds
        path = path_of(uri)
        if path is not None and path.endswith(".py"):
            session.spawn(indexing.adopt_document(session, Path(path)), f"finding the project of {uri}")
        return
    if folder.project is None:
        return  # indexing applies the overlays of every open document when the project is built
    await session.apply_overlay(uri, folder)
    await session.refresh(folder)


async def did_change(session: Session, params: types.DidChangeTextDocumentParams) -> None:
    folder = session.folders.for_uri(params.text_document.uri)
    if folder is not None and folder.project is not None:
        session.schedule_change(params.text_document.uri, folder)


async def did_close(session: Session, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    session.cancel_change(uri)
    folder = session.folders.for_uri(uri)
    if folder is not None and folder.project is not None:
        await session.apply_overlay(uri, folder)  # the document is gone from the workspace: back to disk
        await session.refresh(folder)


async def did_save(session: Session, params: types.DidSaveTextDocumentParams) -> None:
    await indexing.files_changed(session, [params.text_document.uri])


async def did_change_watched_files(session: Session, params: types.DidChangeWatchedFilesParams) -> None:
    await indexing.files_changed(session, [change.uri for change in params.changes])


# -- workspace --------------------------------------------------------------------------------------------------
async def did_change_configuration(session: Session, params: types.DidChangeConfigurationParams) -> None:
    if not session.features.configuration:
        session.pushed_settings = settings.section_of(params.settings)
    session.spawn(indexing.reconfigure(session), "applying new settings")


async def did_change_workspace_folders(session: Session, params: types.DidChangeWorkspaceFoldersParams) -> None:
    for removed in params.event.removed:
        folder = session.folders.remove(removed.uri)
        if folder is not None:
            async with folder.lock:
                folder.project = None
                await session.clear(folder)
    added = [f for f in (session.folders.add(a.uri, a.name) for a in params.event.added) if f is not None]
    if added:
        session.spawn(indexing.index(session, added), "indexing added folders")


# -- diagnostics (pull) ---------------------------------------------------------------------------------------
async def document_diagnostic(
    session: Session, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
    context = await session.context(params.text_document.uri)
    if context is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    return diagnostics.document_report(context.folder.reports.get(context.path), params.previous_result_id)


async def workspace_diagnostic(
    session: Session, params: types.WorkspaceDiagnosticParams
) -> types.WorkspaceDiagnosticReport:
    previous = {item.uri: item.value for item in params.previous_result_ids}
    versions = {uri: doc.version for uri, doc in session.editor.documents.items() if doc.version is not None}
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    reported: set[str] = set()
    for folder in session.folders:
        await session.fresh(folder)
        folder_items = diagnostics.workspace_items(folder, previous, versions)
        items += folder_items
        reported |= {item.uri for item in folder_items}
    # Results the client still holds for files no folder reports on any more: clear them.
    for uri in sorted(set(previous) - reported):
        items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=versions.get(uri), items=[]))
    return types.WorkspaceDiagnosticReport(items=items)


# -- code actions ------------------------------------------------------------------------------------------------
def _data_key(diagnostic: types.Diagnostic, session: Session) -> FindingKey | None:
    if diagnostic.source != diagnostics.SOURCE:
        return None
    data = DiagnosticData.from_wire(diagnostic.data, session.editor.converter)
    return data.key if data is not None else None


async def code_action(session: Session, params: types.CodeActionParams) -> list[types.CodeAction]:
    context = await session.context(params.text_document.uri)
    if context is None:
        return []
    if context.path in context.analysis.problems:
        # A half-typed buffer: the findings' positions are those of its last text that parsed, and no
        # edit can be computed on the text there now.
        return []
    findings = await session.on_engine(context.analysis.findings_for, context.path)
    keys = [k for k in (_data_key(d, session) for d in params.context.diagnostics) if k is not None]
    planned = actions.plan(findings, (params.range.start.line, params.range.end.line), keys, params.context.only)
    by_key = {}
    report = context.folder.reports.get(context.path)
    for diagnostic in list(report.diagnostics if report else []) + list(params.context.diagnostics):
        key = _data_key(diagnostic, session)
        if key is not None:
            by_key[key] = diagnostic
    declined: list[str | None] = [None] * len(planned)
    if context.features.resolves_edits:  # what the engine declines before editing is not offered to resolve
        declined = await session.on_engine(actions.declined_before, context.analysis, planned)
    result = []
    untold = []
    for item, why in zip(planned, declined):
        edit = None
        if why is None and not context.features.resolves_edits:
            fixes = await session.on_engine(actions.engine_edits, context.analysis, item.action, list(item.findings))
            edit = _workspace_edit(session, context, fixes)
            if edit is None:
                why = fixes.why or None
                if why is None:  # nothing left to add
                    continue
        if why is not None:
            if context.features.disabled_actions:
                result.append(actions.to_code_action(item, context.uri, by_key, None, disabled=why))
            elif why not in untold:
                untold.append(why)
            continue
        result.append(actions.to_code_action(item, context.uri, by_key, edit))
    if untold:  # a client that cannot show a disabled action is told once per text of the document
        session.tell_once(context.uri, actions.not_fixed("; ".join(untold)))
    return result


async def code_action_resolve(session: Session, action: types.CodeAction) -> types.CodeAction:
    data = CodeActionData.from_wire(action.data, session.editor.converter)
    if data is None:
        raise JsonRpcInvalidParams(message="codeAction/resolve: this code action was not made by spec-contract")
    context = await session.context(data.uri)
    if context is None:
        return action
    findings = actions.find(await session.on_engine(context.analysis.findings_for, context.path), data.findings)
    problem = context.analysis.problems.get(context.path)
    if problem is not None:  # a half-typed buffer: no edit can be computed on its text now
        session.editor.warn_user(actions.not_fixed(problem))
    elif not findings:
        session.editor.warn_user(actions.not_fixed(actions.STALE))
    else:
        fixes = await session.on_engine(actions.engine_edits, context.analysis, data.action, list(findings))
        action.edit = _workspace_edit(session, context, fixes)
        if fixes.refused:  # known only now (the text changed since the list, libcst's own limits): say why
            session.editor.warn_user(actions.not_fixed(fixes.why))
    return action


def _workspace_edit(session: Session, context: RequestContext, fixes: Fixes) -> types.WorkspaceEdit | None:
    if not fixes.edits:
        return None
    return actions.workspace_edit(
        fixes.edits, context.lines, context.codec, context.features.document_changes, session.version_of
    )


# -- hover, implementation and the contract view ----------------------------------------------------------------
async def on_hover(session: Session, params: types.HoverParams) -> types.Hover | None:
    context = await session.context(params.text_document.uri)
    if context is None:
        return None
    line, col = context.engine_position(params.position)
    return await session.on_engine(
        hover.hover_for, context.analysis, context.path, line, col,
        hover.Places(context.folder.relative, context.features.hover_links and context.features.markdown_hover),
        context.lines, context.codec,
        context.features.markdown_hover,
    )


async def implementation(session: Session, params: types.ImplementationParams) -> list[types.Location] | None:
    context = await session.context(params.text_document.uri)
    if context is None:
        return None
    line, col = context.engine_position(params.position)
    return await session.on_engine(
        hover.implementations_for, context.analysis, context.path, line, col, context.lines, context.codec
    ) or None


async def contract(session: Session) -> dict[str, Any]:
    """The derived contract of every folder, for the editor's contract view."""
    analyses = []
    for folder in list(session.folders):
        analysis = await session.fresh(folder)
        if analysis is not None:
            analyses.append((folder.uri, analysis))
    return await session.on_engine(commands.contract_payload, analyses, session.editor.codec)


HANDLERS: dict[str, Handler] = {
    types.SHUTDOWN: shutdown,
    types.TEXT_DOCUMENT_DID_OPEN: did_open,
    types.TEXT_DOCUMENT_DID_CHANGE: did_change,
    types.TEXT_DOCUMENT_DID_CLOSE: did_close,
    types.TEXT_DOCUMENT_DID_SAVE: did_save,
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: did_change_watched_files,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: did_change_configuration,
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: did_change_workspace_folders,
    types.CODE_ACTION_RESOLVE: code_action_resolve,
    types.TEXT_DOCUMENT_HOVER: on_hover,
    types.TEXT_DOCUMENT_IMPLEMENTATION: implementation,
}


def register(server: LanguageServer, session: Session) -> None:
    """Bind every handler to ``server``; the client-dependent ones are registered by :func:`initialize`."""
    server.feature(types.INITIALIZE)(_guarded(session, functools.partial(initialize, server), "initialize"))
    server.feature(types.INITIALIZED)(_guarded(session, functools.partial(initialized, server), "initialized"))
    for method, fn in HANDLERS.items():
        server.feature(method)(_guarded(session, fn))

    @server.command(commands.CONTRACT)
    async def contract_command(*args: Any) -> dict[str, Any]:
        return await contract(session)
