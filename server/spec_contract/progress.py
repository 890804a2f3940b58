"""A progress indicator on standard error for a run that takes more than a second, when a person watches.

A cold check of a large tree reads and summarises thousands of files before it prints anything; without
this, the terminal sits silent for twenty seconds. The indicator is one line, rewritten in place and erased
when the run ends, so the output that follows is exactly what a non-terminal run prints; it is never shown
when standard error is not a terminal (CI logs, pipes, editors).

It draws from an interval timer's signal (``SIGALRM``) on the main thread, not from a thread of its own: the
engine shares a cold run with forked processes only while it is the process's one thread (forking a process
that runs others can leave a lock held forever in the child), so with a drawing thread a check in a terminal
scanned through a fork server and checked every class on one core (twice the wall time of a piped run on
SGLang's tree). Where there is no such timer, or the signal is already someone else's, a thread draws.
"""

from __future__ import annotations

import signal
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
        self._ticking = False  # drawing from SIGALRM (see the module's docstring)
        self._started = 0.0
        self._frame = 0

    def __enter__(self) -> Progress:
        if not _is_terminal(self.stream):
            return self
        self._started = time.monotonic()
        if _timer_is_free():
            signal.signal(signal.SIGALRM, self._tick)
            self._ticking = True
            signal.setitimer(signal.ITIMER_REAL, max(self.delay, 1e-6), self.interval)  # 0 would disarm it
        else:
            self._thread = threading.Thread(target=self._run, name="spec-contract-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        if self._ticking:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            if self.shown:
                self._draw("")
        if self._thread is not None:
            self._thread.join()

    def _tick(self, signum: int, frame: object) -> None:
        if not self._done.is_set():
            self._draw(self._line())

    def _line(self) -> str:
        self._frame += 1
        return f"spec-contract: {self.what} {_FRAMES[(self._frame - 1) % len(_FRAMES)]} {time.monotonic() - self._started:.0f}s"

    def _run(self) -> None:
        if self._done.wait(self.delay):
            return
        while True:
            self._draw(self._line())
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
        except RuntimeError:  # the signal came while the run itself wrote to the stream: this frame is skipped
            pass


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _timer_is_free() -> bool:
    """Whether this run may draw from ``SIGALRM``: an interval timer exists (not on Windows), this is the main
    thread (the only one signals are handled on), and no host program handles the signal itself."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL)
