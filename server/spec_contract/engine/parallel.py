"""Scanning many files at once on the machine's other cores: what a cold run spends most of its time on.

A summary depends on its file's text alone, so the files a cold run is sure to need (the workers, the
registered model files) can be summarised side by side. The texts are cut into small batches; worker
processes claim batches from the front while this process claims them from the back, until the two meet,
so no core waits for a process that is still starting. A claim is one locked step on a counter the
processes share, so a worker never waits for this process to hand it work (this process is busy scanning
its own batches). Workers send their summaries once, when the batches run out.

Workers run the same scanner on the text they are given: they never import or execute workspace code, and
a worker that fails to start or dies only means its batches are scanned here.

``SPEC_CONTRACT_JOBS`` caps the processes in all (``1``: scan everything in this process).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import multiprocessing.context

from spec_contract.engine.scan import scan
from spec_contract.engine.summary import ModuleSummary

MIN_FILES_PER_PROCESS = 48  # below this, starting a process costs about what it saves
_BATCH = 6
_MAX_PROCESSES = 8  # claims are serialised by one lock: beyond this, processes wait on it more than they scan


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


def _claim_from_front(batches: list[list[ScanJob]], bounds: Any, lock: Any, connection: Any) -> None:
    """A worker process: scan batches from the front until the claims meet, then send what it made."""
    gc.disable()  # summaries are acyclic, see Project.analyze
    made = []
    while True:
        with lock:
            i = bounds[0]
            if i >= bounds[1]:
                break
            bounds[0] = i + 1
        made.append((i, _scan_batch(batches[i])))
    connection.send(made)
    connection.close()


def _claims_from_back(bounds: Any, lock: Any, count: int) -> Iterator[int]:
    """The batches this process takes: from the back, until it meets the workers' claims (all, alone)."""
    if lock is None:
        yield from reversed(range(count))
        return
    while True:
        with lock:
            i = bounds[1] - 1
            if i < bounds[0]:
                return
            bounds[1] = i
        yield i


def scan_all(jobs: list[ScanJob], processes: int) -> Iterator[tuple[ScanJob, ModuleSummary]]:
    """Each job with its summary, made by ``processes`` processes (this one included).

    This process's own summaries come first, as it makes them, from the last job backwards; the workers'
    when the batches run out. So whoever reads the jobs back to front can act on the last ones (the worker
    files) while the other processes are still scanning: the generator is paused meanwhile, they are not.
    """
    batches = [jobs[i:i + _BATCH] for i in range(0, len(jobs), _BATCH)]
    done = [False] * len(batches)
    started: list[tuple[Any, Any]] = []  # (process, connection to read its summaries from)
    bounds = lock = None
    if processes > 1 and len(batches) > 1:
        context = _context()  # imports multiprocessing here, when workers are about to start: a warm run never does
        try:
            bounds, lock = context.RawArray("i", [0, len(batches)]), context.Lock()
        except (ImportError, OSError):  # no shared semaphores on this system (some sandboxes): scan alone
            bounds = lock = None
        for _ in range(processes - 1 if lock is not None else 0):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_claim_from_front, args=(batches, bounds, lock, sender), daemon=True)
            # Starting can fail: no more processes allowed (OSError), no usable start method (ValueError), or a
            # start from a process that is itself still starting, as a spawned worker that re-runs a host
            # program's unguarded main module is (RuntimeError). Whoever did start goes on claiming.
            try:
                process.start()
            except (OSError, RuntimeError, ValueError):
                receiver.close()
                break
            finally:
                sender.close()  # this process's copy: the worker's exit then ends the pipe
            started.append((process, receiver))
    try:
        for i in _claims_from_back(bounds, lock, len(batches)):
            done[i] = True
            yield from zip(batches[i], _scan_batch(batches[i]))
        for process, receiver in started:
            try:
                made = receiver.recv()
            except (EOFError, OSError):  # the worker died (killed, out of memory…): its batches are done below
                continue
            for i, summaries in made:
                done[i] = True
                yield from zip(batches[i], summaries)
        for i, batch in enumerate(batches):
            if not done[i]:
                done[i] = True
                yield from zip(batch, _scan_batch(batch))
    finally:
        for process, receiver in started:
            receiver.close()
            if process.is_alive() and not all(done):  # the reader stopped early: nobody will read its summaries
                process.terminate()
            process.join()
