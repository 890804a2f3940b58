"""The spec-contract language server: the connection to the client, and the process around it.

:class:`SpecContractServer` is pygls's server with a guarded reader (:mod:`spec_contract.lsp.framing`) and the
protocol's stricter answers (:mod:`spec_contract.lsp.protocol`). It keeps no analysis state: that is the
:class:`~spec_contract.lsp.session.Session`'s, which it serves as the :class:`~spec_contract.lsp.session.Editor`
(open documents, diagnostics, progress, log lines and requests to the client); :mod:`spec_contract.lsp.handlers`
turns protocol messages into session calls.

Start-up stays cheap: this module imports only pygls, lsprotocol and the server's own modules; the engine
(and through it libcst) is imported on the engine thread when the first folder is indexed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO, NoReturn

import cattrs
from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.workspace import PositionCodec, TextDocument

from spec_contract import __version__
from spec_contract.lsp import framing, handlers
from spec_contract.lsp.data import converter_factory
from spec_contract.lsp.indexing import client_answer
from spec_contract.lsp.protocol import SpecContractProtocol
from spec_contract.lsp.session import Session


class SpecContractServer(LanguageServer):
    """pygls's server, reading with the guarded reader, and the session's way to the client."""

    protocol: SpecContractProtocol
    exit_code = 0

    def __init__(self) -> None:
        super().__init__(
            "spec-contract",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=SpecContractProtocol,
            converter_factory=converter_factory,
        )
        self.session = Session(self)

    # -- transport ------------------------------------------------------------------------------------
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

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log protocol-level errors instead of pygls's default pop-up: they are for whoever debugs."""
        self.log(f"spec-contract: {source.__name__}: {error}", types.MessageType.Error)

    # -- the session's editor: documents and encoding ---------------------------------------------------
    @property
    def documents(self) -> Mapping[str, TextDocument]:
        return self.workspace.text_documents

    @property
    def codec(self) -> PositionCodec:
        return self.workspace.position_codec

    @property
    def converter(self) -> cattrs.Converter:
        return self.protocol._converter

    # -- the session's editor: messages to the client --------------------------------------------------
    def log(self, message: str, level: types.MessageType = types.MessageType.Log) -> None:
        self.protocol.log(message, level)

    def log_exception(self, where: str, exc: BaseException) -> None:
        self.protocol.log_exception(where, exc)

    def warn_user(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        self.log(message, types.MessageType.Warning)

    def publish_diagnostics(self, uri: str, items: list[types.Diagnostic], version: int | None) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
        )

    def refresh_diagnostics(self) -> None:
        self.workspace_diagnostic_refresh(None)

    # -- the session's editor: requests to the client ---------------------------------------------------
    async def configuration(self, scope_uri: str, section: str) -> Sequence[Any]:
        return await self.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(scope_uri=scope_uri, section=section)])
        )

    async def watch_files(self, globs: Sequence[str]) -> None:
        """Register file watchers; a client that refuses (or never answers) is logged, not waited for."""
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in globs]
        )
        registration = types.Registration(
            id=f"spec-contract-watch-{uuid.uuid4()}",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await client_answer(
                self.client_register_capability_async(types.RegistrationParams(registrations=[registration])))
        except Exception as exc:
            self.log(f"spec-contract: the client refused the file watcher: {exc}", types.MessageType.Warning)

    async def begin_progress(self, title: str, message: str) -> str | None:
        """Create a work-done progress token and begin it; None when the client does not take it."""
        token = f"spec-contract-index-{uuid.uuid4()}"
        try:
            await client_answer(self.work_done_progress.create_async(token))
        except Exception as exc:
            self.log(f"spec-contract: no progress reporting: {exc}")
            return None
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message, percentage=0))
        return token

    def report_progress(self, token: str, message: str, percentage: int) -> None:
        self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message, percentage=percentage))

    def end_progress(self, token: str, message: str) -> None:
        self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))


def create_server() -> SpecContractServer:
    server = SpecContractServer()
    handlers.register(server, server.session)
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
    from spec_contract.arguments import OneLineParser

    parser = OneLineParser(prog="spec-contract serve", description="run the spec-contract language server")
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
        server.session.engine.shutdown(wait=False, cancel_futures=True)
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
