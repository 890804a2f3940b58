"""A minimal JSON-RPC client for a language server over stdio, for timing it from outside.

Written here rather than taken from pytest-lsp or pygls's client so that what is timed is only the server:
one reader thread stamps each message with ``time.perf_counter()`` the moment its frame is complete, and
requests the server sends us (``workspace/diagnostic/refresh`` and the like) are answered with ``null`` right
there, so the server never waits on the benchmark.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

# The Content-Length framing is the tests' (tests/framing.py, standard library only): one copy of it outside
# the server. The benchmarks run as scripts from the repository root, so tests/ is put on sys.path here.
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))
from framing import frame, read_message  # noqa: E402


class ServerError(RuntimeError):
    """The server answered with an error, died, or did not answer in time."""


class LspClient:
    def __init__(self, command: list[str], env: dict[str, str] | None = None, stderr_path: str = os.devnull) -> None:
        self._stderr = open(stderr_path, "wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        self._input: IO[bytes] = self.process.stdin
        self._output: IO[bytes] = self.process.stdout
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._responses: dict[int, queue.Queue] = {}
        self._responses_lock = threading.Lock()
        self.notifications: queue.Queue = queue.Queue()  # (received_at, message)
        self.log: list[str] = []  # window/logMessage and showMessage texts, for when something goes wrong
        self._reader = threading.Thread(target=self._read_loop, name="lsp-reader", daemon=True)
        self._reader.start()

    # -- wire -----------------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> float:
        data = frame(message)
        with self._write_lock:
            sent = time.perf_counter()
            self._input.write(data)
            self._input.flush()
        return sent

    def _read_loop(self) -> None:
        while True:
            try:
                message = read_message(self._output)
            except (ValueError, OSError):
                message = None
            received = time.perf_counter()
            if message is None:
                self.notifications.put((received, None))
                with self._responses_lock:
                    for waiting in self._responses.values():
                        waiting.put((received, None))
                return
            if "method" in message and "id" in message:  # a request from the server: answer at once
                self._send({"id": message["id"], "result": None})
            elif "method" in message:
                if message["method"] in ("window/logMessage", "window/showMessage"):
                    self.log.append(message.get("params", {}).get("message", ""))
                self.notifications.put((received, message))
            else:
                answered = message.get("id")  # our ids are ints; anything else answers nothing we asked
                with self._responses_lock:
                    asker = self._responses.get(answered) if isinstance(answered, int) else None
                if asker is not None:
                    asker.put((received, message))

    # -- API ------------------------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float) -> tuple[float, float, Any]:
        """Send a request; return (sent_at, answered_at, result)."""
        with self._responses_lock:
            self._next_id += 1
            request_id = self._next_id
            waiting: queue.Queue = queue.Queue()
            self._responses[request_id] = waiting
        sent = self._send({"id": request_id, "method": method, "params": params})
        try:
            received, message = waiting.get(timeout=timeout)
        except queue.Empty:
            raise ServerError(f"no answer to {method} within {timeout:.0f} s; server log: {self.log[-5:]}") from None
        finally:
            with self._responses_lock:
                self._responses.pop(request_id, None)
        if message is None:
            raise ServerError(f"the server exited while answering {method}; server log: {self.log[-5:]}")
        if "error" in message:
            raise ServerError(f"{method} failed: {message['error']}")
        return sent, received, message.get("result")

    def notify(self, method: str, params: Any) -> float:
        return self._send({"method": method, "params": params})

    def wait_notification(self, method: str, match, timeout: float) -> tuple[float, dict[str, Any]]:
        """The first notification ``method`` whose params satisfy ``match``; others are dropped."""
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise ServerError(f"no {method} within {timeout:.0f} s")
            try:
                received, message = self.notifications.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise ServerError(f"the server exited while we waited for {method}")
            if message["method"] == method and match(message.get("params")):
                return received, message

    def peak_rss_kb(self) -> int | None:
        """VmHWM (the resident-set high-water mark) of the server process, from /proc; None elsewhere."""
        try:
            with open(f"/proc/{self.process.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def close(self, timeout: float = 10.0) -> None:
        """shutdown + exit, and make sure the process is gone."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
                self.process.wait(timeout=timeout)
        except (ServerError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._stderr.close()
