"""The spec-contract language server: lifecycle, the engine executor, indexing, and publishing.

Engine calls (``Project.analyze`` is not thread-safe; fix edits run libcst) go to one worker thread the
server owns, awaited from ``async`` handlers. pygls's own thread pool is left alone because it also reads
stdin: a long analysis there would stall reading, and with it cancellation and ``exit``.

Start-up stays cheap: this module imports only pygls, lsprotocol and the server's own modules; the engine
(and through it libcst/jedi) is imported on the executor thread when the first folder is indexed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import socket
import sys
import threading
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCNotification, RPCRequest

from spec_contract import __version__
from spec_contract.lsp import diagnostics, framing, settings, workspace
from spec_contract.lsp.convert import SourceLines, path_of, uri_of
from spec_contract.lsp.workspace import Folder, Folders

PARENT_CHECK_SECONDS = 2.0
CLIENT_REQUEST_TIMEOUT = 10.0  # a client that never answers our requests must not stall indexing
WATCHED_GLOBS = ("**/*.py", "**/pyproject.toml")


class _Answered:
    """A request that was already answered with an error while it was being decoded."""


ANSWERED = _Answered()


class SpecContractProtocol(LanguageServerProtocol):
    """pygls's protocol, plus the answers JSON-RPC and LSP require where pygls stays silent or answers wrongly.

    - A request whose params do not decode gets -32602 (pygls only logs it: the client waits forever).
    - A body that is not JSON gets -32700 and a value that is no JSON-RPC message -32600, with id null when it
      has none (pygls logs both; see :mod:`spec_contract.lsp.framing` for what reaches this far).
    - Before ``initialize``, requests get -32002 and notifications but ``exit`` are dropped (pygls serves
      them as if initialised); a second ``initialize`` gets -32600; after ``shutdown`` every request gets
      -32600 (pygls drops them, and the client hangs waiting for the answer).
    """

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.initialize_received = False

    def receive(self, data: Any) -> None:
        """Handle one decoded JSON value read from the client."""
        problem = _not_a_message(data)
        if problem is not None:
            msg_id, why = problem
            if msg_id is not _NO_ANSWER:
                self.send_error(msg_id, JsonRpcInvalidRequest(f"Invalid Request: {why}"))
            self._server.log(f"spec-contract: ignored a message from the client: {why}", types.MessageType.Warning)
            return
        try:
            self.handle_message(self.structure_message(data))
        except Exception as exc:  # as pygls's own loop does: log it and go on with the next message
            self._server.log_exception(f"handling {data.get('method', 'a response')}", exc)

    def parse_error(self, why: str) -> None:
        self.send_error(None, JsonRpcParseError(f"Parse error: {why}"))
        self._server.log(f"spec-contract: {why}", types.MessageType.Warning)

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        """An error response; written as a plain object so that a null id is sent as ``"id": null``."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": error.message}})

    def structure_message(self, data: dict[str, Any]):
        """pygls's decoding; params that do not decode get -32602 for a request and a log line for a notification."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "method" in data:
                cause = exc.__cause__ or exc
                if "id" not in data:  # a notification: nobody to answer
                    self._server.log(f"ignored {data['method']} notification: {cause}", types.MessageType.Warning)
                    return ANSWERED
                error = JsonRpcInvalidParams(message=f"Invalid params for {data['method']}: {cause}")
                self._send_response(data["id"], error=error.to_response_error())
                self._server.log(f"rejected {data['method']} request {data['id']}: {cause}", types.MessageType.Warning)
                return ANSWERED
            raise

    def handle_message(self, message):
        if message is ANSWERED:
            return None
        method = getattr(message, "method", None)
        if isinstance(message, RPCRequest):
            refusal = None
            if method == types.INITIALIZE:
                if self.initialize_received:
                    refusal = JsonRpcInvalidRequest("initialize may only be sent once")
                self.initialize_received = True
            elif not self.initialize_received:
                refusal = JsonRpcServerNotInitialized(f"{method} before initialize: the server is not initialized")
            elif self._shutdown:
                refusal = JsonRpcInvalidRequest(f"{method} after shutdown: the server is shutting down")
            if refusal is not None:
                self.send_error(message.id, refusal)
                return None
        elif isinstance(message, RPCNotification) and method != types.EXIT:
            if not self.initialize_received or self._shutdown:
                return None
            if method == types.CANCEL_REQUEST and not isinstance(getattr(message.params, "id", None), (int, str)):
                return None  # pygls would fail on it: it names no request
        return super().handle_message(message)


_NO_ANSWER = object()


def _not_a_message(data: Any) -> tuple[Any, str] | None:
    """(the id to answer with, or _NO_ANSWER; what is wrong) when ``data`` is no JSON-RPC 2.0 message, else None.

    Requests are answered (with id null when their id is unusable), so the client stops waiting; notifications
    and responses with a problem are only logged: there is nobody to answer.
    """
    if not isinstance(data, dict):
        return None, f"a message is a JSON object, not {type(data).__name__}"
    msg_id = data.get("id")
    if "id" in data and not (msg_id is None or isinstance(msg_id, str) or type(msg_id) is int):
        return (None if "method" in data else _NO_ANSWER), f"an id is a string or an integer, not {msg_id!r}"[:200]
    if "method" in data:
        answer = msg_id if "id" in data else _NO_ANSWER
    elif "id" in data and ("result" in data or "error" in data):
        answer = _NO_ANSWER  # a (broken) response: answering it would only confuse the client
    else:
        return msg_id, "neither a request, a notification nor a response"
    if data.get("jsonrpc") != "2.0":
        return answer, 'the "jsonrpc" member must be "2.0"'
    if "method" in data and not isinstance(data["method"], str):
        return answer, "the method must be a string"
    return None


def load_engine() -> None:
    """Import the engine (on the executor thread): the expensive part of start-up, done while the client
    reads the initialize answer and opens its files."""
    from spec_contract.engine import config, project  # noqa: F401  (the import is the work)


def _build_project(root: Path, overrides: dict[str, Any]):
    """Load the folder's config (editor overrides over pyproject) and create its engine Project.

    Runs on the executor thread: importing the engine is the expensive part of start-up.
    Returns the project and a warning when the editor settings were rejected and dropped.
    """
    from spec_contract.engine.config import ConfigError, load_config

    warning = None
    try:
        config = load_config(root, overrides=overrides or None)
    except ConfigError as exc:
        if not overrides:
            raise
        warning = f"spec-contract: {exc} (folder {root.name}); using the defaults instead of the editor settings"
        config = load_config(root)
    project, problem = workspace.build_project(root, config)
    return project, warning or problem


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SpecContractServer(LanguageServer):
    """Language server state: folders with their projects, the engine thread, pending edits, tasks."""

    def __init__(self) -> None:
        super().__init__(
            "spec-contract",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=SpecContractProtocol,
        )
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spec-contract-engine")
        self.folders = Folders()
        self.init_options: dict[str, Any] = {}
        self.pushed_settings: dict[str, Any] = {}  # didChangeConfiguration payload, for clients without pull
        self.pull = False
        self.pending: dict[str, asyncio.Task] = {}  # uri -> debounced overlay update
        self.background: set[asyncio.Task] = set()

    # -- transport ------------------------------------------------------------------------------------
    exit_code = 0

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio loop, with the guarded reader of :mod:`spec_contract.lsp.framing`, keeping exit's code.

        pygls's ``exit`` handler raises ``SystemExit(1)`` when no ``shutdown`` came first, and its own loop
        swallows it; here the code is kept for :func:`main` to return.
        """
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = framing.FrameReader(stdin or sys.stdin.buffer)
        protocol = self.protocol
        try:
            asyncio.run(framing.read_messages(
                reader, self.thread_pool, self._stop_event.is_set, protocol.receive, protocol.parse_error,
                self.report_skipped,
            ))
        except BrokenPipeError:
            logging.getLogger(__name__).error("the client closed its end of the connection")
        except KeyboardInterrupt:
            pass
        except SystemExit as exc:
            self.exit_code = exc.code if isinstance(exc.code, int) else 1
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """One client over TCP, read by the same guarded loop as stdio (pygls's TCP loop has the faults
        :mod:`spec_contract.lsp.framing` describes); the server ends with that client, as pygls's does."""
        with socket.create_server((host, port)) as listener:
            logging.getLogger(__name__).info("listening on %s:%s", host, port)
            connection, _ = listener.accept()
        with connection, connection.makefile("rb") as incoming, connection.makefile("wb") as outgoing:
            self.start_io(incoming, outgoing)

    def report_skipped(self, frame: framing.Frame) -> None:
        """Input the reader had to drop, for whoever debugs the client."""
        parts = [f"skipped {frame.skipped} byte(s) that were not a message"] if frame.skipped else []
        self.log("spec-contract: input error: " + "; ".join(parts + frame.problems), types.MessageType.Warning)

    # -- plumbing -------------------------------------------------------------------------------------
    def cap(self, field: str, default: Any = None) -> Any:
        return get_capability(self.client_capabilities, field, default)

    async def on_engine(self, fn, *args, **kwargs):
        """Run ``fn`` on the engine thread and await it from the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.engine, functools.partial(fn, *args, **kwargs))

    def spawn(self, coro, what: str) -> asyncio.Task:
        """A background task whose failure is logged, not lost."""
        task = asyncio.create_task(coro)
        self.background.add(task)

        def done(t: asyncio.Task) -> None:
            self.background.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self.log_exception(what, t.exception())

        task.add_done_callback(done)
        return task

    def log(self, message: str, level: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=level, message=message))
        except Exception:  # no writer yet / connection gone: nothing to tell
            pass

    def log_exception(self, where: str, exc: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.log(f"spec-contract: {where} failed: {exc}\n{detail}", types.MessageType.Error)

    def warn_user(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        self.log(message, types.MessageType.Warning)

    def report_server_error(self, error: Exception, source) -> None:
        """Log protocol-level errors instead of pygls's default pop-up: they are for whoever debugs."""
        self.log(f"spec-contract: {source.__name__}: {error}", types.MessageType.Error)

    def resolves_edits(self) -> bool:
        properties = self.cap("text_document.code_action.resolve_support.properties", []) or []
        return "edit" in properties

    def version_of(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    def open_paths(self) -> set[str]:
        return {p for p in (path_of(uri) for uri in self.workspace.text_documents) if p}

    # -- lifecycle -------------------------------------------------------------------------------------
    async def start(self) -> None:
        """After ``initialized``: watch the parent, register file watchers, index every folder."""
        if self.process_id:
            self.spawn(self.watch_parent(self.process_id), "watching the client process")
        await self.register_watchers()
        await self.index(list(self.folders))

    async def watch_parent(self, pid: int) -> None:
        """Exit when the editor died without closing our stdin (else we would be an orphan forever)."""
        while True:
            await asyncio.sleep(PARENT_CHECK_SECONDS)
            if not _alive(pid):
                self.engine.shutdown(wait=False, cancel_futures=True)
                os._exit(0)

    async def register_watchers(self) -> None:
        if not self.cap("workspace.did_change_watched_files.dynamic_registration", False):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_GLOBS]
        )
        registration = types.Registration(
            id=f"spec-contract-watch-{uuid.uuid4()}",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await asyncio.wait_for(
                self.client_register_capability_async(types.RegistrationParams(registrations=[registration])),
                CLIENT_REQUEST_TIMEOUT,
            )
        except Exception as exc:
            self.log(f"spec-contract: the client refused the file watcher: {exc}", types.MessageType.Warning)

    # -- settings and projects ---------------------------------------------------------------------------
    async def load_settings(self, folder: Folder) -> None:
        """initializationOptions, then (per folder) workspace/configuration; problems shown once."""
        raw_folder: Any = None
        if self.cap("workspace.configuration", False):
            try:
                result = await asyncio.wait_for(
                    self.workspace_configuration_async(
                        types.ConfigurationParams(
                            items=[types.ConfigurationItem(scope_uri=folder.uri, section=settings.SECTION)]
                        )
                    ),
                    CLIENT_REQUEST_TIMEOUT,
                )
                raw_folder = result[0] if result else None
            except Exception as exc:
                self.log(f"spec-contract: workspace/configuration failed: {exc}", types.MessageType.Warning)
        merged = settings.merge(
            self.init_options, self.pushed_settings, raw_folder if isinstance(raw_folder, dict) else None
        )
        parsed, problems = settings.parse(merged)
        if problems and tuple(problems) != folder.shown_problems:
            self.warn_user("spec-contract settings: " + "; ".join(problems))
        folder.shown_problems = tuple(problems)
        folder.settings = parsed

    async def reload(self, folder: Folder, reread_settings: bool = True) -> None:
        """(Re)create the folder's project from its settings and analyse it."""
        folder.problem = None  # until the analysis below says otherwise
        if reread_settings:
            await self.load_settings(folder)
        if not folder.settings.enable:
            await self.disable(folder, "specContract.enable is false")
            return
        if await workspace.hand_over(self, folder):
            return
        try:
            project, warning = await self.on_engine(_build_project, folder.root, folder.settings.overrides())
        except Exception as exc:
            self.warn_user(f"spec-contract: cannot analyse {folder.name}: {exc}")
            folder.ready.set()
            return
        if warning:
            self.warn_user(warning)
        if not getattr(project.config, "enable", True):
            await self.disable(folder, "enable = false in its pyproject.toml")
            return
        async with folder.lock:
            folder.project = project
            folder.analysis = None
            folder.dirty = True
            for uri, document in list(self.workspace.text_documents.items()):
                path = path_of(uri)
                if self.folders.for_path(path) is folder:
                    await self.on_engine(project.set_overlay, path, document.source)
        opened = {p for p in self.open_paths() if self.folders.for_path(p) is folder}
        try:
            if opened:
                await self.first_pass(folder, opened)
            await self.refresh(folder)
        except Exception as exc:
            if not workspace.unanalysable(exc):
                raise
            await workspace.cannot_analyse(self, folder, str(exc))
            return
        folder.ready.set()

    async def first_pass(self, folder: Folder, opened: set[str]) -> None:
        """Diagnostics for the open files before the whole tree is analysed.

        A focused analysis checks only the open files' classes; their findings are final (the whole
        analysis reports the same for them), so the user sees them seconds earlier on a large tree.
        """
        async with folder.lock:
            try:
                analysis = await self.on_engine(folder.project.analyze, opened)
            except Exception as exc:
                if workspace.unanalysable(exc):
                    raise  # the tree cannot be analysed at all: reload() hands its files to discovery
                self.log_exception(f"first pass over {folder.name}", exc)
                return
            folder.analysis = analysis
            await self.publish(folder, analysis)
        folder.early.set()

    async def disable(self, folder: Folder, why: str) -> None:
        async with folder.lock:
            folder.project = None
            folder.analysis = None
            await self.clear(folder)
        folder.ready.set()
        self.log(f"spec-contract: not analysing {folder.name}: {why}")

    async def index(self, folders: list[Folder], title: str = "Indexing") -> None:
        """Analyse folders in the background with work-done progress; folders with open files first."""
        open_paths = self.open_paths()
        folders.sort(key=lambda f: not any(f.contains(p) for p in open_paths))
        token = None
        if folders and self.cap("window.work_done_progress", False):
            token = f"spec-contract-index-{uuid.uuid4()}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), CLIENT_REQUEST_TIMEOUT)
            except Exception as exc:
                self.log(f"spec-contract: no progress reporting: {exc}")
                token = None
        if token is not None:
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=f"spec-contract: {title}", message=f"{len(folders)} folder(s)", percentage=0
                ),
            )
        for i, folder in enumerate(folders):
            if token is not None:
                self.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{folder.name}: workers and model classes", percentage=i * 100 // len(folders)
                    ),
                )
            try:
                await self.reload(folder)
            except Exception as exc:
                self.log_exception(f"indexing {folder.name}", exc)
                folder.ready.set()
        if token is not None:
            found = sum(len(f.analysis.findings) for f in folders if f.analysis is not None)
            self.work_done_progress.end(
                token, types.WorkDoneProgressEnd(message=f"{found} finding(s) in {len(folders)} folder(s)")
            )
        for folder in folders:
            if folder.analysis is not None:
                stats = folder.analysis.stats
                self.log(
                    f"spec-contract: {folder.name}: {len(folder.analysis.findings)} finding(s); "
                    f"{stats.files_seen} files seen, {stats.files_parsed} parsed in {stats.seconds:.2f}s"
                )
                for note in folder.analysis.notes:  # an incomplete analysis must not look like a clean one
                    self.warn_user(f"spec-contract: {folder.name}: {note}")

    # -- analysis and publishing -------------------------------------------------------------------------
    async def refresh(self, folder: Folder):
        """Bring the folder's analysis up to date with its inputs; publish or refresh what changed."""
        async with folder.lock:
            if folder.project is None:
                return None
            if not folder.dirty and folder.analysis is not None:
                return folder.analysis
            folder.dirty = False
            try:
                analysis = await self.on_engine(folder.project.analyze)
            except BaseException:
                folder.dirty = True
                raise
            previous = folder.analysis
            folder.analysis = analysis
            if previous is None or previous.generation != analysis.generation:
                await self.publish(folder, analysis)
            return analysis

    async def publish(self, folder: Folder, analysis) -> None:
        """Recompute every affected file's report; push changed ones, or ask pull clients to re-pull."""
        paths = set(folder.reports) | {f.path for f in analysis.findings if folder.shows(f.path)}
        related = self.cap(
            "text_document.diagnostic.related_information"
            if self.pull
            else "text_document.publish_diagnostics.related_information",
            False,
        )
        folder.reports, changed = await self.on_engine(
            diagnostics.compute_reports,
            folder.reports,
            analysis,
            sorted(paths),
            SourceLines(analysis),
            self.workspace.position_codec,
            bool(related),
            self.protocol._converter,
        )
        if self.pull:
            if any(changed.values()) and self.cap("workspace.diagnostics.refresh_support", False):
                self.workspace_diagnostic_refresh(None)
            return
        open_paths = self.open_paths()
        for path in sorted(changed, key=lambda p: (p not in open_paths, p)):
            if changed[path]:
                self.push(path, folder.reports[path].diagnostics, analysis.source(path))

    def push(self, path: str, items: list[types.Diagnostic], analysed_text: str | None) -> None:
        uri = uri_of(path)
        document = self.workspace.text_documents.get(uri)
        # The version only when the diagnostics describe exactly that buffer state.
        version = document.version if document is not None and document.source == analysed_text else None
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
        )

    async def clear(self, folder: Folder) -> None:
        """Withdraw every diagnostic of a folder (disabled or removed)."""
        paths = [p for p, r in folder.reports.items() if r.diagnostics]
        folder.reports = {}
        if not paths:
            return
        if self.pull:
            if self.cap("workspace.diagnostics.refresh_support", False):
                self.workspace_diagnostic_refresh(None)
            return
        for path in paths:
            self.push(path, [], None)

    # -- edits from the editor -----------------------------------------------------------------------------
    async def apply_overlay(self, uri: str, folder: Folder) -> None:
        document = self.workspace.text_documents.get(uri)
        path = path_of(uri)
        if folder.project is None or path is None:
            return
        if document is None:
            await self.on_engine(folder.project.clear_overlay, path)
        else:
            await self.on_engine(folder.project.set_overlay, path, document.source)
        folder.dirty = True

    def schedule_change(self, uri: str, folder: Folder) -> None:
        """Debounce: only the last of a burst of keystrokes reaches the engine."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = self.spawn(self._debounced(uri, folder), f"re-analysing after an edit of {uri}")

    async def _debounced(self, uri: str, folder: Folder) -> None:
        await asyncio.sleep(folder.settings.debounce_ms / 1000)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        await self.apply_overlay(uri, folder)
        await self.refresh(folder)

    async def fresh(self, folder: Folder):
        """The folder's analysis including every edit made so far (pending debounces applied now)."""
        await folder.ready.wait()
        for uri, task in list(self.pending.items()):
            if self.folders.for_uri(uri) is folder:
                task.cancel()
                self.pending.pop(uri, None)
                await self.apply_overlay(uri, folder)
        return await self.refresh(folder)

    async def context(self, uri: str):
        """(folder, analysis, path) for a request on ``uri``, or None when nothing analyses it."""
        path = path_of(uri)
        folder = self.folders.for_path(path)
        if folder is None:
            return None
        if not folder.ready.is_set() and path in self.open_paths():
            # A first pass over the open files may answer before the whole analysis: wait for whichever is first.
            waits = [asyncio.ensure_future(folder.ready.wait()), asyncio.ensure_future(folder.early.wait())]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            early = folder.analysis
            if not folder.ready.is_set() and early is not None and early.focus is not None and path in early.focus:
                return folder, early, path  # the first pass covered this file; the whole analysis still runs
        analysis = await self.fresh(folder)
        if analysis is None:
            return None
        return folder, analysis, path


def create_server() -> SpecContractServer:
    from spec_contract.lsp import handlers

    server = SpecContractServer()
    handlers.register(server)
    return server


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """The JSON-RPC streams, moved off file descriptors 0 and 1.

    Anything else that writes to standard output (a library's ``print``, the processes a cold analysis scans
    with, which inherit this process's descriptors) would corrupt the protocol; with the streams on
    descriptors of their own, 0 reads nothing and 1 is the log (standard error).
    """
    stdin, stdout = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    return stdin, stdout


def main(argv: list[str] | None = None) -> int:
    """``spec-contract serve [--stdio] [--tcp|--ws] [--host H] [--port P]``; stdio is the default.

    ``--stdio`` is accepted and changes nothing: editor clients (vscode-languageclient, …) append it.
    Returns only on a usage error: when serving ends, so does the process (see :func:`_exit_now`).
    """
    parser = argparse.ArgumentParser(prog="spec-contract serve", description="run the spec-contract language server")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--tcp", action="store_true", help="listen for one client on a TCP port")
    transport.add_argument("--ws", action="store_true", help="listen on a WebSocket (needs pygls[ws])")
    parser.add_argument("--host", default="127.0.0.1", help="address for --tcp/--ws (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="port for --tcp/--ws (default: 2087)")
    parser.add_argument("--log-file", help="also write the server's own log (pygls and spec-contract) to this file")
    try:
        args = parser.parse_args(argv or [])
    except SystemExit as exc:  # usage errors: argparse has printed the message
        return exc.code if isinstance(exc.code, int) else 2
    if args.log_file:
        logging.basicConfig(
            filename=args.log_file, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s"
        )
    server = create_server()
    try:
        if args.tcp:
            server.start_tcp(args.host, args.port)
        elif args.ws:
            server.start_ws(args.host, args.port)
        else:
            server.start_io(*_protocol_streams())
    finally:
        server.engine.shutdown(wait=False, cancel_futures=True)
    _exit_now(server.exit_code)


def _exit_now(code: int) -> NoReturn:
    """End the process at once, without waiting for the engine thread.

    The interpreter's normal exit joins every executor thread, so an analysis still running (seconds on a large
    tree) would keep the process alive after the client's ``exit`` or disconnect, and clients wait for the
    process, then kill it. Nothing is lost: cache entries are written atomically, and the log is flushed here.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
