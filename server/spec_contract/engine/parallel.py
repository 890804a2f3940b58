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
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from spec_contract.engine.scan import scan
from spec_contract.engine.summary import ModuleSummary

MIN_FILES_PER_PROCESS = 48  # below this, starting a process costs about what it saves
_BATCH = 6
# Starting workers can fail: no processes allowed (OSError), no usable start method (ValueError), or a host
# program whose main module starts work on import, which spawned workers would re-run (RuntimeError).
_CANNOT_START = (BrokenProcessPool, OSError, RuntimeError, ValueError)


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
    return max(1, min(cores, files // MIN_FILES_PER_PROCESS))


def _context() -> multiprocessing.context.BaseContext:
    """fork is the cheapest start; but forking a process that runs other threads (the language server) can
    leave a lock held forever in the child, so there a fork server, started fresh, forks the workers."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def scan_all(jobs: list[ScanJob], processes: int) -> list[ModuleSummary]:
    """The summaries of ``jobs``, in order, made by ``processes`` processes (this one included)."""
    batches = [jobs[i:i + _BATCH] for i in range(0, len(jobs), _BATCH)]
    if processes <= 1 or len(batches) < 2:
        return [summary for batch in batches for summary in _scan_batch(batch)]
    results: list[list[ModuleSummary] | None] = [None] * len(batches)
    try:
        # gc off in the workers: summaries are acyclic, see Project.analyze
        with ProcessPoolExecutor(processes - 1, mp_context=_context(), initializer=gc.disable) as pool:
            futures: list[Future] = [pool.submit(_scan_batch, batch) for batch in batches]
            for i in reversed(range(len(batches))):
                if not futures[i].cancel():
                    break  # a worker has it: every batch before it is taken or about to be
                results[i] = _scan_batch(batches[i])
            for i, future in enumerate(futures):
                if results[i] is None:
                    try:
                        results[i] = future.result()
                    except (BrokenProcessPool, OSError):  # a worker was killed (out of memory…)
                        pass
    except _CANNOT_START:
        pass  # no worker processes here: what they did not do is done below, in this process
    for i, batch in enumerate(batches):
        if results[i] is None:
            results[i] = _scan_batch(batch)
    return [summary for batch in results for summary in batch]
