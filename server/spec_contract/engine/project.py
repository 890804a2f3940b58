"""One checked tree: its files, their summaries, and analyses that reuse everything that did not change.

The CLI makes a :class:`Project`, calls :meth:`Project.analyze` once and prints the result; the language
server keeps one per workspace folder, feeds it editor buffers (:meth:`Project.set_overlay`) and file events
(:meth:`Project.invalidate`) and re-analyses: only the files that changed are read and summarised again. A
file that stops parsing keeps its last good summary, so half-typed code never produces spurious findings.

``Project`` only wires three parts together: the source store (``sources``: editor buffers, reads, digests,
stat signatures), the results store (``results_store``: what the persistent cache keeps) and the pipeline
(``pipeline``: layout, summaries, contract, checks).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from spec_contract.engine.cache import SummaryCache
from spec_contract.engine.config import Config
from spec_contract.engine.pipeline import Pipeline
from spec_contract.engine.queries import Analysis
from spec_contract.engine.read.listing import Listings
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.results_store import ResultsStore


class Project:
    def __init__(self, root: Path | str, config: Config, *, python: str | None = None, use_cache: bool = True,
                 cache_dir: Path | None = None, listings: Listings | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.python = python
        self._sources = Sources()
        self._store = ResultsStore(self.root, config, SummaryCache(cache_dir) if use_cache else None)
        # ``listings``: the folders a run (the CLI's) listed while finding the project, for its first walk
        self._pipeline = Pipeline(self.root, config, python, self._sources, self._store, listings)

    def set_overlay(self, path: str, text: str) -> None:
        """Analyse ``text`` (an editor buffer) for ``path`` instead of the file, until :meth:`clear_overlay`."""
        if self._sources.set_overlay(path, text):
            self._pipeline.changed(path, exists=True)  # a buffer for a file the last walk did not see: walk again

    def clear_overlay(self, path: str) -> None:
        if self._sources.clear_overlay(path):
            self._pipeline.changed(path)

    def invalidate(self, path: str) -> None:
        """The file at ``path`` changed on disk, appeared or disappeared."""
        self._sources.touch(path)
        # a .py file created or deleted: walk again
        self._pipeline.changed(path, exists=os.path.isfile(path) if path.endswith(".py") else None)

    def analyze(self, focus: Iterable[str] | None = None) -> Analysis:
        """The analysis of the whole tree; with ``focus``, only the model classes of those files are checked.

        A focused analysis answers first for the files an editor has open (the contract is complete either
        way, and the findings of a focused file are the ones the whole analysis will report); it leaves the
        inputs marked as changed, so the next whole analysis still does all the work it has to. The summaries it
        made are not written to the cache yet (:meth:`write_summaries`), so that it answers sooner.
        """
        if focus is not None:
            return self._pipeline.analyze(frozenset(focus))
        try:
            return self._pipeline.analyze(None)
        finally:
            self.write_summaries()  # also those a failed analysis made: each is right for its text

    def write_summaries(self) -> None:
        """Write to the cache the summaries analyses made and did not write (a focused one's): a whole
        analysis writes its own, and a server calls this once the focused one's diagnostics are out."""
        self._store.write_summaries()

    def relative(self, path: str) -> str:
        """Paths in messages: relative to the root, or to the engine's root for engine files."""
        return self._pipeline.relative(path)
