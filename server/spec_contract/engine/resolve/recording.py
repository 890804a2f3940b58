"""Which modules an answer of the index depends on, and one memo that keeps that with each answer.

The project re-checks a class only when a module its answers read changed. A memoised answer is read
once but used by many questions, so a memo hit charges the modules its computation read to every
recording open at the time, as if it were computed again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recorder:
    """Nested recordings of the modules read (see :meth:`record`), and memos that replay them."""

    def __init__(self) -> None:
        self._recording: list[set[str]] = []

    def record(self) -> set[str]:
        """Start recording which modules the following questions read; pair with :meth:`stop`."""
        self._recording.append(set())
        return self._recording[-1]

    def stop(self, recorded: set[str]) -> frozenset[str]:
        assert self._recording and self._recording[-1] is recorded, "recordings nest"
        self._recording.pop()
        for outer in self._recording:
            outer |= recorded
        return frozenset(recorded)

    def read(self, module: str) -> None:
        """Charge a module read to every open recording."""
        for recording in self._recording:
            recording.add(module)

    def memoised(self, table: dict[K, tuple[V, frozenset[str]]], key: K, compute: Callable[..., V],
                 *args: object) -> V:
        """``table[key]``'s answer, ``compute(*args)`` (recorded) the first time: a hit charges the modules
        the computation read to every open recording. An answer whose computation raised is not kept.

        ``compute`` and its arguments are passed apart, not as a closure: a closure made per question costs
        the resolution's hot path (hits) for nothing."""
        hit = table.get(key)
        if hit is not None:
            for outer in self._recording:
                outer |= hit[1]
            return hit[0]
        recorded = self.record()
        try:
            value = compute(*args)
        finally:
            modules = self.stop(recorded)
        table[key] = (value, modules)
        return value
