"""Helpers for the end-to-end tests: client capability sets, session start, and waiting on conditions."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.workspace import PositionCodec
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from spec_contract.engine import Span, TextEdit, lines_with_ends
from spec_contract.engine import apply_edits as engine_apply_edits

REPO = Path(__file__).resolve().parents[2]
CLIENT_DIR = REPO / "protocol-fixtures" / "clients"
TIMEOUT = 30.0  # generous: CI has two cores and the first analysis imports the engine


def vscode_capabilities() -> types.ClientCapabilities:
    """VS Code 1.139.1's initialize capabilities, recorded from code-server."""
    data = json.loads((CLIENT_DIR / "vscode-1.139.1.json").read_text())
    return get_converter().structure(data, types.InitializeParams).capabilities


CLIENTS: dict[str, Callable[[], types.ClientCapabilities]] = {
    "neovim-0.11": lambda: client_capabilities("neovim@v0.11"),
    "emacs-29.1": lambda: client_capabilities("emacs"),
    "vscode-1.139.1": vscode_capabilities,
}
ENCODINGS = {"neovim-0.11": "utf-8", "emacs-29.1": "utf-32", "vscode-1.139.1": "utf-16"}


def client_info(editor: str) -> types.ClientInfo | None:
    """The clientInfo the editor sent when its initialize was recorded (None: a made-up client, none recorded)."""
    recorded = CLIENT_DIR / f"{ {'neovim-0.11': 'neovim-0.11.0'}.get(editor, editor)}.json"
    if not recorded.is_file():
        return None
    return get_converter().structure(json.loads(recorded.read_text())["clientInfo"], types.ClientInfo)


def make_client() -> LanguageClient:
    """pytest-lsp's client plus the client-side requests our server sends that it does not answer."""
    client = pytest_lsp.make_test_lsp_client()
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(ls, params: types.RegistrationParams):
        ls.registrations.extend(params.registrations)

    return client


async def as_editor(lsp_client: LanguageClient, editor: str) -> AsyncIterator[LanguageClient]:
    """The body of a client fixture: the client as ``editor``, shut down after the test if initialised."""
    lsp_client.editor = editor
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


def editor_fixture(*editors: str) -> Any:
    """A client fixture for a test module outside ``tests/lsp`` (whose conftest has its own): the server
    started as ``spec-contract serve --stdio``, and a client pretending to be each of ``editors`` in turn."""

    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "spec_contract", "serve",
                                                                  "--stdio"], client_factory=make_client),
                        params=list(editors))
    async def client(lsp_client: LanguageClient, request: Any) -> AsyncIterator[LanguageClient]:
        async for started in as_editor(lsp_client, request.param):
            yield started

    return client


async def code_actions(client: LanguageClient, uri: str, text: str,
                       only: list[str] | None = None) -> list[types.CodeAction]:
    """The code actions the server lists over the whole of ``text`` (``only``: the kinds asked for)."""
    answer = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(0, 0), end=types.Position(len(lines_with_ends(text)), 0)),
        context=types.CodeActionContext(diagnostics=[], only=only)))
    return [a for a in answer or [] if isinstance(a, types.CodeAction)]


async def until(predicate: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    """Wait until ``predicate()`` is truthy (checked as messages arrive), or fail saying what we waited for."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.01)


async def initialize(
    client: LanguageClient,
    folders: list[Path],
    initialization_options: Any = None,
    capabilities: types.ClientCapabilities | None = None,
) -> types.InitializeResult:
    caps = capabilities or CLIENTS[client.editor]()
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            root_uri=folders[0].as_uri() if folders else None,
            initialization_options=initialization_options,
            client_info=client_info(client.editor),
        )
    )
    client.init_result = result
    return result


def is_pull(client: LanguageClient) -> bool:
    return client.init_result.capabilities.diagnostic_provider is not None


def open_document(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text if text is not None else path.read_text()
            )
        )
    )
    return uri


def replace_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """A full-text change (the server accepts full and incremental changes)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def pull(client: LanguageClient, uri: str, previous: str | None = None):
    return await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
        )
    )


async def diagnostics_now(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """Pull clients: the server's answer. Push clients: what was published (after the server is idle)."""
    if is_pull(client):
        return list((await pull(client, uri)).items)
    await settle(client, uri)
    return list(client.diagnostics.get(uri, []))


async def settle(client: LanguageClient, uri: str) -> None:
    """Make the server apply every pending edit: any request on a document analyses first, and publishes
    what changed before answering, so once the answer is here every resulting notification is too."""
    await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0))
    )


async def wait_for_diagnostics(
    client: LanguageClient, uri: str, predicate: Callable[[list[types.Diagnostic]], bool], what: str
) -> list[types.Diagnostic]:
    """Pushed diagnostics for ``uri`` that satisfy ``predicate`` (push clients only)."""
    await until(lambda: uri in client.diagnostics and predicate(list(client.diagnostics[uri])), what)
    return list(client.diagnostics[uri])


async def indexed_diagnostics(client: LanguageClient, uri: str, count: int) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once the first index is there: pulled, or ``count`` of them pushed."""
    if is_pull(client):
        return await diagnostics_now(client, uri)
    return await wait_for_diagnostics(client, uri, lambda d: len(d) == count, f"{count} diagnostics")


def members(items: list[types.Diagnostic]) -> list[str]:
    return sorted(d.data["member"] for d in items)


def apply_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP text edits (in the given position encoding) as an editor does, through the product's own
    applier: lines broken where the parser breaks them, every position taken from the original text."""
    lines = lines_with_ends(text)
    codec = PositionCodec(encoding)

    def at(position: types.Position) -> tuple[int, int]:
        point = codec.position_from_client_units(lines, types.Position(position.line, position.character))
        return point.line, point.character

    located = [TextEdit("", Span(*at(e.range.start), *at(e.range.end)), e.new_text) for e in edits]
    return engine_apply_edits(text, located)


def edits_for(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))


def column(line: str, index: int, encoding: str) -> int:
    """A code-point index in ``line`` expressed in the encoding's units."""
    prefix = line[:index]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)
