"""What one analysis read: the files it parsed, took from the cache or skipped, and how long it took.

Its own module because both ends hold it: the pipeline fills it in and :class:`~.queries.Analysis` carries
it to the front ends (the CLI's summary line, the benchmarks).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Stats:
    """What an analysis read. Each file counts once, whichever process read it (see ``parallel``)."""

    files_seen: int = 0
    seconds: float = 0.0
    parsed: set[str] = field(default_factory=set)
    from_cache: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)  # path → why

    @property
    def files_parsed(self) -> int:
        return len(self.parsed)

    @property
    def files_from_cache(self) -> int:
        return len(self.from_cache)

    @property
    def files_skipped(self) -> Counter[str]:
        return Counter(self.skipped.values())

    def add(self, other: Stats) -> None:
        self.parsed |= other.parsed
        self.from_cache |= other.from_cache
        self.skipped.update(other.skipped)
