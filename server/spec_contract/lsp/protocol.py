"""The JSON-RPC side of the server: pygls's protocol, plus the answers JSON-RPC and LSP require.

It also writes the server's log lines (``window/logMessage``): the protocol is what talks to the client, and
what reports a message it could not handle.
"""

from __future__ import annotations

import traceback
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCNotification, RPCRequest


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

    def __init__(self, server: LanguageServer, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self.initialize_received = False

    def log(self, message: str, level: types.MessageType = types.MessageType.Log) -> None:
        """A ``window/logMessage`` line for whoever debugs the client."""
        try:
            self.notify(types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=level, message=message))
        except Exception:  # no writer yet / connection gone: nothing to tell
            pass

    def log_exception(self, where: str, exc: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.log(f"spec-contract: {where} failed: {exc}\n{detail}", types.MessageType.Error)

    def receive(self, data: Any) -> None:
        """Handle one decoded JSON value read from the client."""
        problem = _not_a_message(data)
        if problem is not None:
            msg_id, why = problem
            if msg_id is not _NO_ANSWER:
                self.send_error(msg_id, JsonRpcInvalidRequest(f"Invalid Request: {why}"))
            self.log(f"spec-contract: ignored a message from the client: {why}", types.MessageType.Warning)
            return
        try:
            self.handle_message(self.structure_message(data))
        except Exception as exc:  # as pygls's own loop does: log it and go on with the next message
            self.log_exception(f"handling {data.get('method', 'a response')}", exc)

    def parse_error(self, why: str) -> None:
        self.send_error(None, JsonRpcParseError(f"Parse error: {why}"))
        self.log(f"spec-contract: {why}", types.MessageType.Warning)

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
                    self.log(f"ignored {data['method']} notification: {cause}", types.MessageType.Warning)
                    return ANSWERED
                error = JsonRpcInvalidParams(message=f"Invalid params for {data['method']}: {cause}")
                self._send_response(data["id"], error=error.to_response_error())
                self.log(f"rejected {data['method']} request {data['id']}: {cause}", types.MessageType.Warning)
                return ANSWERED
            raise

    def handle_message(self, message):
        if message is ANSWERED:
            return None
        method = getattr(message, "method", None)
        if isinstance(message, RPCRequest):
            refusal: JsonRpcException | None = None
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
