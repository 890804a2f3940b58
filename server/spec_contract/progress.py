"""A progress indicator on standard error for a run that takes more than a second, when a person watches.

A cold check of a large tree reads and summarises thousands of files before it prints anything; without
this, the terminal sits silent for twenty seconds. The indicator is one line, rewritten in place and erased
when the run ends, so the output that follows is exactly what a non-terminal run prints; it is never shown
when standard error is not a terminal (CI logs, pipes, editors).
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TextIO

DELAY = 1.0  # seconds before the indicator appears: a quick run shows nothing
_FRAMES = "|/-\\"


class Progress:
    """``with Progress(sys.stderr, "checking …"):`` shows ``spec-contract: checking … 3s`` while the block runs."""

    def __init__(self, stream: TextIO, what: str, delay: float = DELAY, interval: float = 0.1) -> None:
        self.stream = stream
        self.what = what
        self.delay = delay
        self.interval = interval
        self.shown = False  # whether a line was drawn (and so must be erased)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if _is_terminal(self.stream):
            self._thread = threading.Thread(target=self._run, name="spec-contract-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        started = time.monotonic()
        if self._done.wait(self.delay):
            return
        frame = 0
        while True:
            elapsed = time.monotonic() - started
            self._draw(f"spec-contract: {self.what} {_FRAMES[frame % len(_FRAMES)]} {elapsed:.0f}s")
            frame += 1
            if self._done.wait(self.interval):
                break
        self._draw("")

    def _draw(self, line: str) -> None:
        try:
            self.stream.write(f"\r\x1b[K{line}")  # back to the line's start, erase it, write the new one
            self.stream.flush()
            self.shown = True
        except (OSError, ValueError):  # the terminal went away: the run goes on without the indicator
            self._done.set()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
