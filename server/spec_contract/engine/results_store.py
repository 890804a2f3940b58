"""What the persistent cache (``engine.cache``) keeps for one project: summaries and the last run's results.

Summaries are keyed by the file's text and how it was summarised, so they serve any project; a run's results
(the contract, each class's findings, the digests of what they read) are keyed by the project's root, its
settings and which files have which module names, the only things besides the texts they depend on. Without
a cache (``--no-cache``) nothing is kept, and every question is a miss.

Summaries are written when the whole analysis is done (:meth:`ResultsStore.write_summaries`), not as each is
made: pickling and writing them is a tenth of a cold analysis, and an editor's first, focused analysis of the
open files (whose diagnostics the user waits for) would pay it for every worker file it summarises.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from spec_contract.engine.cache import SummaryCache
from spec_contract.engine.config import Config
from spec_contract.engine.read.files import text_digest
from spec_contract.engine.summarise.summary import ModuleSummary


class ResultsStore:
    def __init__(self, root: Path, config: Config, cache: SummaryCache | None) -> None:
        self.root = root
        self.config = config
        self._cache = cache
        self._unwritten: dict[str, ModuleSummary] = {}  # kept, not yet in the cache

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    # summaries -------------------------------------------------------------------------------------
    def summary_key(self, path: str, digest: str, worker: bool) -> str:
        package = "p" if path.endswith("__init__.py") else "f"  # relative imports read differently in a package
        return f"{digest}-{'w' if worker else 'm'}{package}-{self.config.entry_class_variable}"

    def has_summary(self, key: str) -> bool:
        return self._cache is not None and (key in self._unwritten or self._cache.has(key))

    def summary(self, key: str) -> ModuleSummary | None:
        if self._cache is None:
            return None
        unwritten = self._unwritten.get(key)
        return unwritten if unwritten is not None else self._cache.get(key)

    def keep_summary(self, key: str, summary: ModuleSummary) -> None:
        """Keep ``summary`` for later runs: written by :meth:`write_summaries`."""
        if self._cache is not None:
            self._unwritten[key] = summary

    def write_summaries(self) -> None:
        """Write the summaries kept since the last call to the cache."""
        if self._cache is not None:
            for key, summary in self._unwritten.items():
                self._cache.put(key, summary)
        self._unwritten = {}

    # a run's results -------------------------------------------------------------------------------
    def _results_key(self, layout_fingerprint: str) -> str:
        config = json.dumps(asdict(self.config), sort_keys=True, default=sorted)  # sets sorted: stable across runs
        return text_digest(f"{self.root}\0{config}\0{layout_fingerprint}")

    def restore(self, layout_fingerprint: str) -> dict[str, Any] | None:
        """The results saved for this layout of the tree (``cache.RESULT_KEYS`` at least), or None."""
        if self._cache is None:
            return None
        return self._cache.get_results(self._results_key(layout_fingerprint))

    def save(self, layout_fingerprint: str, results: dict[str, Any]) -> None:
        if self._cache is not None:
            self._cache.put_results(self._results_key(layout_fingerprint), results)
