"""Scanning many files at once on the machine's other cores: what a cold run spends most of its time on.

A summary depends on its file's text alone, so the files a cold run is sure to need (the workers, the
registered model files) can be summarised side by side. This process reads the texts and queues them in
small batches; worker processes take batches from the front while this process scans from the back, until
the two meet, so no core waits for a process that is still starting. Workers run the same scanner on the
text they are given: they never import or execute workspace code, and a worker that fails only means its
batches are scanned here.

``SPEC_CONTRACT_JOBS`` caps the processes in all (``1``: scan everything in this process).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

from spec_contract.engine.scan import scan
from spec_contract.engine.summary import ModuleSummary

MIN_FILES_PER_PROCESS = 48  # below this, starting a process costs about what it saves
_BATCH = 6
_MAX_PROCESSES = 8  # the queue is fed and drained by one process: more workers than this wait on it


@dataclass(frozen=True)
class ScanJob:
    path: str
    module: str
    digest: str
    text: str
    worker: bool
    entry_variable: str | None


def _scan_batch(batch: list[ScanJob]) -> list[ModuleSummary]:
    return [scan(j.path, j.module, j.digest, j.text, worker=j.worker, entry_variable=j.entry_variable)
            for j in batch]


def processes_for(files: int) -> int:
    """How many processes (this one included) should scan ``files`` files."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    limit = os.environ.get("SPEC_CONTRACT_JOBS", "")
    if limit.isdigit() and int(limit) > 0:
        cores = min(cores, int(limit))
    return max(1, min(cores, _MAX_PROCESSES, files // MIN_FILES_PER_PROCESS))


def _context() -> "multiprocessing.context.BaseContext":
    """fork is the cheapest start; but forking a process that runs other threads (the language server) can
    leave a lock held forever in the child, so there a fork server, started fresh, forks the workers; and
    where there is no fork server (Windows), workers are spawned."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and threading.active_count() == 1:  # macOS system libraries are not fork-safe
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def _stop_started(pool: "ProcessPoolExecutor") -> None:
    """Workers that did start when a later one could not would wait for work forever, and hold up this
    process's exit: stop them (the executor keeps them in a private table; there is no public handle)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
        process.join(5)


def scan_all(jobs: list[ScanJob], processes: int) -> list[ModuleSummary]:
    """The summaries of ``jobs``, in order, made by ``processes`` processes (this one included)."""
    batches = [jobs[i:i + _BATCH] for i in range(0, len(jobs), _BATCH)]
    if processes <= 1 or len(batches) < 2:
        return [summary for batch in batches for summary in _scan_batch(batch)]
    # Imported here, when a pool is about to start: a warm run never needs them.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # Starting workers can fail: no more processes allowed (OSError), no usable start method (ValueError), a
    # worker that died while starting (BrokenProcessPool), or a start from a process that is itself still
    # starting, as a worker that re-runs a host program's unguarded main module is (RuntimeError).
    cannot_start = (BrokenProcessPool, OSError, RuntimeError, ValueError)
    results: list[list[ModuleSummary] | None] = [None] * len(batches)
    try:
        # gc off in the workers: summaries are acyclic, see Project.analyze
        pool = ProcessPoolExecutor(processes - 1, mp_context=_context(), initializer=gc.disable)
    except cannot_start:
        pool = None
    if pool is not None:
        with pool:
            try:
                futures = [pool.submit(_scan_batch, batch) for batch in batches]
            except cannot_start:
                _stop_started(pool)  # what the workers did not do is done below, in this process
                futures = []
            for i in reversed(range(len(futures))):
                if not futures[i].cancel():
                    break  # a worker has it: every batch before it is taken or about to be
                results[i] = _scan_batch(batches[i])
            for i, future in enumerate(futures):
                if results[i] is None:
                    try:
                        results[i] = future.result()
                    except (BrokenProcessPool, OSError):  # a worker was killed (out of memory…)
                        pass
    for i, batch in enumerate(batches):
        if results[i] is None:
            results[i] = _scan_batch(batch)
    return [summary for batch in results for summary in batch]
