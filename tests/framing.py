"""The language server over raw stdio: Content-Length frames, and a server process driven byte by byte.

Tests that must send what no well-behaved client sends (broken frames, requests out of order) or that start the
server exactly as an editor does use this instead of pytest-lsp, which only speaks correct JSON-RPC.

The framing here is the one copy outside the server: the replay test, the recording proxy and the benchmark
client (``benchmarks/lsp_client.py``) import it too, so it stays standard library only.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

# As the shipped editor configurations start it: `-I` keeps the working directory (the user's workspace) off
# sys.path, so nothing there can shadow a module of the server or of the standard library.
SERVER = [sys.executable, "-I", "-m", "spec_contract", "serve", "--stdio"]
WAIT_SECONDS = 90.0  # generous: CI machines are shared and slow; nothing here asserts a time


def header(length: int) -> bytes:
    """The header block of a frame whose body is ``length`` bytes (any length: abuse tests lie with it)."""
    return b"Content-Length: %d\r\n\r\n" % length


def frame_body(body: bytes) -> bytes:
    """An already encoded message body with its header, e.g. one a proxy forwards unchanged."""
    return header(len(body)) + body


def message_body(message: dict[str, Any]) -> bytes:
    """A JSON-RPC 2.0 message encoded as a frame's body (``jsonrpc`` added when missing), without its header."""
    return json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")


def frame(message: dict[str, Any]) -> bytes:
    """One JSON-RPC 2.0 message with its Content-Length header (``jsonrpc`` added when missing)."""
    return frame_body(message_body(message))


def _content_length(header_line: bytes, length: int | None) -> int | None:
    """``length`` updated by one header line (names are case-insensitive; other headers are ignored)."""
    name, _, value = header_line.decode("ascii").partition(":")
    return int(value) if name.strip().lower() == "content-length" else length


def _body_length(length: int | None) -> int:
    if length is None:
        raise ValueError("a message without Content-Length")
    return length


def read_body(stream: IO[bytes]) -> bytes | None:
    """The next frame's body as sent, or None at the end of the stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if not line.strip():
            return stream.read(_body_length(length))
        length = _content_length(line, length)


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message a server wrote to ``stream``, or None at the end of the stream."""
    body = read_body(stream)
    return None if body is None else json.loads(body)


async def read_message_async(stream: asyncio.StreamReader) -> dict[str, Any] | None:
    """:func:`read_message` for an asyncio stream (a server started with ``asyncio.create_subprocess_exec``)."""
    length = None
    while True:
        line = await stream.readline()
        if not line:
            return None
        if not line.strip():
            return json.loads(await stream.readexactly(_body_length(length)))
        length = _content_length(line, length)


def initialize_params(root: Path | None, process_id: int | None = None, capabilities: dict | None = None) -> dict:
    return {
        "processId": process_id,
        "rootUri": root.as_uri() if root else None,
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None,
        "capabilities": capabilities or {},
    }


class RawServer:
    """A server process fed raw bytes; everything it writes is collected by a reader thread.

    Requests the server makes (configuration, registrations) are answered with null at once, so that it never
    waits on the test, unless ``answer_requests`` is False (the test answers them, or not, itself).
    """

    def __init__(self, command: list[str] | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None, stderr: Any = subprocess.DEVNULL,
                 answer_requests: bool = True) -> None:
        self.answer_requests = answer_requests
        self.process = subprocess.Popen(command or SERVER, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr)
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        self._input: IO[bytes] = self.process.stdin
        self._output: IO[bytes] = self.process.stdout
        self.received: list[dict[str, Any]] = []
        self.closed = False  # the server closed its output
        self._changed = threading.Condition()
        self._write = threading.Lock()
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read_all, name="raw-server-reader", daemon=True)
        self._reader.start()

    def _read_all(self) -> None:
        try:
            while (message := read_message(self._output)) is not None:
                if "method" in message and "id" in message and self.answer_requests:
                    self.send(frame({"id": message["id"], "result": None}))
                with self._changed:
                    self.received.append(message)
                    self._changed.notify_all()
        except (ValueError, OSError):
            pass
        finally:
            with self._changed:
                self.closed = True
                self._changed.notify_all()

    # -- sending ------------------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        with self._write:
            try:
                self._input.write(data)
                self._input.flush()
            except (BrokenPipeError, ValueError):  # it exited (or we closed its input): the waits will say so
                pass

    def notify(self, method: str, params: Any = None) -> None:
        self.send(frame({"method": method, "params": params}))

    def request(self, method: str, params: Any = None) -> int:
        """Send a request; its id (for :meth:`response`)."""
        self._next_id += 1
        self.send(frame({"id": self._next_id, "method": method, "params": params}))
        return self._next_id

    def close_input(self) -> None:
        with self._write:
            try:
                self._input.close()
            except BrokenPipeError:
                pass

    # -- waiting ------------------------------------------------------------------------------------------
    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], what: str,
                 timeout: float = WAIT_SECONDS, start: int = 0) -> dict[str, Any]:
        """The first message received (or still to come) from the ``start``-th on that ``predicate`` accepts."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = next((m for m in self.received[start:] if predicate(m)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    state = "exited" if self.closed else "is still running"
                    raise AssertionError(f"no {what} from the server (it {state}); it sent: {self.received!r}"[:4000])
                self._changed.wait(left)

    def response(self, request_id: Any, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        return self.wait_for(lambda m: "method" not in m and m.get("id") == request_id and
                             ("result" in m or "error" in m), f"response to {request_id!r}", timeout)

    def call(self, method: str, params: Any = None, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    def initialize(self, root: Path | None, **kwargs: Any) -> dict[str, Any]:
        answer = self.call("initialize", initialize_params(root, **kwargs))
        assert "result" in answer, answer
        self.notify("initialized", {})
        return answer["result"]

    def exit_code(self, timeout: float = WAIT_SECONDS) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        """Ask politely, then make sure: no server outlives its test."""
        if self.process.poll() is None:
            self.close_input()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=30)

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
