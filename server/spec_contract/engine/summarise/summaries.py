"""Each file's summary, made once per text and kept while the text stays.

A summary comes from the last analysis when the file was not touched, else from the persistent cache, else
from a scan (made ahead, on all cores, when a cold run is sure to need many; see ``parallel``). A file that
stops parsing keeps its last good summary, so half-typed code never produces spurious findings. The parser
(``scan``) is imported when a file is first parsed: a warm run whose summaries all come from the cache, or
are not needed, never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from spec_contract.engine.config import Config
from spec_contract.engine.parallel import ScanJob, processes_for, scan_all
from spec_contract.engine.read.files import SourceFile
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.resolve.index import Index
from spec_contract.engine.results_store import ResultsStore
from spec_contract.engine.stats import Stats
from spec_contract.engine.summarise.summary import ModuleSummary


@dataclass
class _Entry:
    digest: str
    summary: ModuleSummary | None  # None: the file has no usable text (binary, undecodable, too large)
    worker: bool = False  # summarised with the flow records workers need
    problem: str | None = None  # why the current text was not summarised (the previous summary may stay)


class Summaries:
    def __init__(self, sources: Sources, store: ResultsStore, config: Config) -> None:
        self._sources = sources
        self._store = store
        self._config = config
        self._entries: dict[str, _Entry] = {}
        self._scanned: dict[str, ModuleSummary] = {}  # made ahead by parallel scanning, until asked for

    def summary(self, source: SourceFile, worker: bool, stats: Stats) -> ModuleSummary | None:
        """The summary of ``source``'s current text (with flow records for a worker), or the last good one
        when the text does not parse; None when the file has no usable text."""
        path = source.path
        previous = self._entries.get(path)
        kept = previous.summary if previous is not None and (previous.worker or not worker) else None
        if kept is not None and path not in self._sources.dirty:
            return kept
        text, digest, problem = self._sources.text(path)
        if text is None:
            stats.skipped[path] = problem or "unreadable"
            self._entries[path] = _Entry(digest, None, worker, problem)
            return None
        if kept is not None and previous is not None and previous.digest == digest and not previous.problem:
            return kept
        key = self._store.summary_key(path, digest, worker)
        scanned = self._scanned.pop(path, None)
        # An editor buffer is summarised whole, with its statement memo, and never written to the cache: the
        # cache holds no summary of the text being typed (a lookup per keystroke that can only miss, a disk
        # read of a cache folder on a machine short of page cache) and would answer an unchanged buffer with
        # the file's lazy summary.
        buffer = path in self._sources.overlays
        summary = self._store.summary(key) if scanned is None and not buffer else None
        if summary is not None:
            stats.from_cache.add(path)
            summary = summary.moved(path, source.module)
        else:
            from spec_contract.engine.summarise.scan import scan  # the parser, loaded by the first file to parse
            summary = scanned if scanned is not None and scanned.digest == digest and scanned.module == source.module \
                else scan(path, source.module, digest, text, worker=worker,
                          entry_variable=self._config.entry_class_variable, memo=self._sources.memo(path))
            stats.parsed.add(path)
            if summary.error is None and not buffer:
                self._store.keep_summary(key, summary)  # not editor buffers: no disk write per keystroke
        if summary.error is not None:
            stats.skipped[path] = "syntax-error"
            if previous is not None and previous.summary is not None:  # keep the last good one
                self._entries[path] = _Entry(previous.digest, previous.summary, previous.worker, summary.error)
                return previous.summary
            self._entries[path] = _Entry(digest, summary, worker, summary.error)
            return summary
        self._entries[path] = _Entry(digest, summary, worker)
        return summary

    def unchanged(self, index: Index, touched: list[SourceFile]) -> tuple[set[str], list[tuple[str, int, int]]]:
        """Modules whose text changed but whose summary did not: what depends on them needs no new answer;
        and the files among them whose summary only moved, as (path, first line moved, lines added).

        Most keystrokes in an editor (inside a method body, a comment, a string) change no member, delegate,
        import or position a summary holds; the contract and every finding stay as they are, and the analysis
        only re-reads the file. Only files summarised before are compared (a file read for the first time has
        nothing to compare with, and may not be needed at all).
        """
        unchanged: set[str] = set()
        moves: list[tuple[str, int, int]] = []
        for source in touched:
            entry = self._entries.get(source.path)
            before = entry.summary if entry is not None and not entry.problem else None
            if before is None:
                continue
            after = index.summary(source.module)
            if after is None:
                continue
            after = replace(after, digest=before.digest)
            if after == before:
                unchanged.add(source.module)
                continue
            from spec_contract.engine.summarise.scan import moved_by  # the parser's (see the module docstring)
            if (moved := moved_by(before, after)) is not None:  # a line added or removed above
                moves.append((source.path, *moved))
                unchanged.add(source.module)
        return unchanged, moves

    def scan_ahead(self, sources: list[tuple[SourceFile, bool]], out_of_tree: bool,
                   then: Callable[[], None], registered: dict[str, tuple[str, ...]] | None = None) -> bool:
        """Summarise at once, on all cores, the files a cold analysis is sure to read (see ``parallel``);
        ``then`` runs as soon as every worker file among them is summarised, while the other processes go
        on. Returns whether it ran. ``registered``: the classes an engine's model registry names in each
        module, parsed where the file is scanned (see ``scan``).

        Model files without the registry variable are left out (the cheap filter of
        ``Registered.registered_in``), and so are files already summarised, open in an editor or in the
        summary cache.
        """
        entry = self._config.entry_class_variable
        jobs = []
        for source, worker in sources:
            path = source.path
            if path in self._entries or path in self._sources.overlays:
                continue
            text, digest, _ = self._sources.text(path)
            # searched from the end, where a model file registers its classes (as ``registered_in`` does)
            if text is None or (not worker and not out_of_tree and entry and text.rfind(entry) < 0):
                continue
            if self._store.has_summary(self._store.summary_key(path, digest, worker)):
                continue
            jobs.append(ScanJob(path, source.module, digest, text, worker, entry,
                                (registered or {}).get(source.module, ())))
        processes = processes_for(len(jobs))
        if processes <= 1:  # each file is scanned when first asked for, as on warm runs
            return False
        waiting, ran = sum(job.worker for job in jobs), False
        for job, summary in scan_all(jobs, processes):
            self._scanned[job.path] = summary
            if job.worker:
                waiting -= 1
                if not waiting:
                    then()
                    ran = True
        return ran

    def forget_scanned(self) -> None:
        """Summaries made ahead for an analysis and never asked for are not kept."""
        self._scanned = {}

    def problems(self, stats: Stats) -> dict[str, str]:
        """Files that could not be read or parsed, among those read so far, with why."""
        problems = {p: e.problem for p, e in self._entries.items() if e.problem}
        for path, entry in self._entries.items():  # a class statement parsed on demand that did not parse
            error = entry.summary.deferred_error() if entry.summary is not None and not entry.problem else None
            if error:
                problems[path] = error
                stats.skipped[path] = "syntax-error"
        return problems

