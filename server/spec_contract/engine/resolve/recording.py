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
    """Nested recordings of the modules read (see :meth:`record`), and memos that replay them.

    A module read is charged to the innermost recording only; stopping one charges what it holds to the one
    around it. Each recording's set is read only when it stops, innermost first, so it then holds all it
    would hold were every read charged to every open recording, at one set update per read instead of one
    per open recording (memo hits, nested a dozen deep, were a tenth of a cold check's resolution). A memo
    hit charges its modules to a recording once: a class's check asks the same MROs and delegates thousands
    of times, and each set charged again would be merged for nothing.
    """

    def __init__(self) -> None:
        self._recording: list[set[str]] = []
        self._charged: list[set[frozenset[str]]] = []  # per open recording, the memo answers' sets merged in

    def record(self) -> set[str]:
        """Start recording which modules the following questions read; pair with :meth:`stop`."""
        self._recording.append(set())
        self._charged.append(set())
        return self._recording[-1]

    def stop(self, recorded: set[str]) -> frozenset[str]:
        assert self._recording and self._recording[-1] is recorded, "recordings nest"
        self._recording.pop()
        self._charged.pop()
        if self._recording:
            self._recording[-1] |= recorded
        return frozenset(recorded)

    def read(self, module: str) -> None:
        """Charge a module read to every open recording (see the class docstring)."""
        if self._recording:
            self._recording[-1].add(module)

    def memoised(self, table: dict[K, tuple[V, frozenset[str]]], key: K, compute: Callable[..., V],
                 *args: object) -> V:
        """``table[key]``'s answer, ``compute(*args)`` (recorded) the first time: a hit charges the modules
        the computation read to every open recording. An answer whose computation raised is not kept.

        ``compute`` and its arguments are passed apart, not as a closure: a closure made per question costs
        the resolution's hot path (hits) for nothing."""
        hit = table.get(key)
        if hit is not None:
            if self._recording and hit[1] not in self._charged[-1]:
                self._charged[-1].add(hit[1])
                self._recording[-1] |= hit[1]
            return hit[0]
        recorded = self.record()
        try:
            value = compute(*args)
        finally:
            modules = self.stop(recorded)
        table[key] = (value, modules)
        return value
