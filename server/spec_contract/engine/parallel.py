"""Sharing a cold run's work with the machine's other cores: scanning files, then checking classes.

A summary depends on its file's text alone, so the files a cold run is sure to need (the workers, the
registered model files) can be summarised side by side; and once every summary the contract needs is made,
each registered class can be checked on its own. The work is cut into items; worker processes claim items
from the front while this process claims them from the back, until the two meet, so no core waits for a
process that is still starting. A claim is one locked step on a counter the processes share, so a worker
never waits for this process to hand it work (this process is busy with its own items). Workers send their
results once, when the items run out.

Workers run the engine's own code on the texts they are given or inherit: they never import or execute
workspace code, and a worker that fails to start or dies only means its items are done here.

``SPEC_CONTRACT_JOBS`` caps the processes in all (``1``: do everything in this process).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext

    Context = ForkContext | ForkServerContext | SpawnContext  # each can start a Process (BaseContext cannot)

from spec_contract.engine.summarise.summary import ModuleSummary

# Below this many items per process, starting a process costs about what it saves. A class's check reads the
# files its inner models come from: more work than scanning one file.
MIN_PER_PROCESS = {"files": 48, "classes": 32}
_BATCH = 6
_WORKER_BYTE = 3  # a worker file's byte costs about three of a model file's to scan (parsed whole, with flow
# records; a model file's classes wait as text): SGLang 0.5.23 0.28 vs 0.087 us, vLLM 0.33.0 0.26 vs 0.077
_MAX_PROCESSES = 8  # claims are serialised by one lock: beyond this, processes wait on it more than they work

T = TypeVar("T")


@dataclass(frozen=True)
class ScanJob:
    path: str
    module: str
    digest: str
    text: str
    worker: bool
    entry_variable: str | None
    registered: tuple[str, ...] = ()  # the classes a model registry names here (see ``scan``)


def _scan_batch(batch: list[ScanJob]) -> list[ModuleSummary]:
    from spec_contract.engine.summarise.scan import scan  # loaded before the workers fork (see ``scan_all``)
    return [scan(j.path, j.module, j.digest, j.text, worker=j.worker, entry_variable=j.entry_variable,
                 registered=j.registered) for j in batch]


def _scan_batch_at(batches: list[list[ScanJob]], i: int) -> list[ModuleSummary]:
    return _scan_batch(batches[i])


def processes_for(items: int, kind: str = "files") -> int:
    """How many processes (this one included) should share ``items`` files to scan or classes to check."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    limit = os.environ.get("SPEC_CONTRACT_JOBS", "")
    if limit.isdigit() and int(limit) > 0:
        cores = min(cores, int(limit))
    return max(1, min(cores, _MAX_PROCESSES, items // MIN_PER_PROCESS[kind]))


def _fork_safe() -> bool:
    # Forking a process that runs other threads (the language server) can leave a lock held forever in the
    # child; macOS system libraries are not fork-safe at all.
    return sys.platform == "linux" and threading.active_count() == 1


def _children_can_run_isolated() -> bool:
    """Whether the interpreters multiprocessing starts (the fork server, spawned workers, the resource
    tracker) can be kept from importing anything from the working directory, usually the user's project.

    Each starts as ``python -c …``, which puts that directory first on ``sys.path`` before its first import
    (``multiprocessing`` itself, ``selectors``, …), unless it runs isolated. multiprocessing passes this
    process's ``-I`` or ``-P`` on to them; otherwise ``PYTHONSAFEPATH`` (Python 3.11+) does the same, set
    while they start (see ``_isolated_starts``). Where neither can work (Python 3.10, or ``-E``, which
    multiprocessing passes on and which ignores the variable) no interpreter is started at all.
    """
    if sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return True
    return sys.version_info >= (3, 11) and not sys.flags.ignore_environment


@contextlib.contextmanager
def _isolated_starts(context: Context) -> Iterator[None]:
    """``PYTHONSAFEPATH`` set while the interpreters ``context`` may start are started, and restored after:
    this process's own later subprocesses (a host program's, a test suite's) get the environment it had."""
    if context.get_start_method() == "fork" or sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        yield
        return
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = before


def _context() -> Context | None:
    """fork is the cheapest start; where it is unsafe a fork server, started fresh, forks the workers; and
    where there is no fork server (Windows), workers are spawned. None: no worker can start safely (see
    ``_children_can_run_isolated``), this process works alone."""
    import multiprocessing

    if _fork_safe():
        return multiprocessing.get_context("fork")
    if not _children_can_run_isolated():
        return None
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def _claims_from_front(bounds: Any, lock: Any) -> Iterator[int]:
    while True:
        with lock:
            i = bounds[0]
            if i >= bounds[1]:
                return
            bounds[0] = i + 1
        yield i


def _claims_from_back(bounds: Any, lock: Any, count: int) -> Iterator[int]:
    """The items this process takes: from the back, until it meets the workers' claims (all, alone)."""
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


def _serve(work: Callable[[int], Any], report: Callable[[], Any] | None, bounds: Any, lock: Any,
           connection: Any, early: int = 0) -> None:
    """A worker process: do items from the front until the claims meet, then send the results (and, with
    ``report``, what else the caller wants to know of this process's run). With ``early``, the results of
    the items before it are sent as soon as the next claim is past it, and the rest at the end."""
    gc.disable()  # what the engine makes is acyclic, see Pipeline.analyze
    # Each result is pickled as soon as it is made, while the process that reads them is still busy with its
    # own items, rather than all at the end, when it would wait for them. One pickler writes them all, so a
    # value several results hold (a module name every class check read, a text) is written and read once
    # (so a result must not change after it is made: a later one holding the same object gets it as written).
    stream = io.BytesIO()
    pickler = pickle.Pickler(stream, pickle.HIGHEST_PROTOCOL)
    made: list[int] = []
    for i in _claims_from_front(bounds, lock):
        if early and i >= early and made:
            connection.send((False, made, stream.getvalue(), None))
            stream = io.BytesIO()
            pickler, made, early = pickle.Pickler(stream, pickle.HIGHEST_PROTOCOL), [], 0
        pickler.dump(work(i))
        made.append(i)
    connection.send((True, made, stream.getvalue(), report() if report is not None else None))
    connection.close()


def _loaded(sent: Any, reports: list[Any] | None) -> Iterator[tuple[int, Any]]:
    """The results in what a worker sent (see :func:`_serve`), in the order written."""
    final, made, pickled, reported = sent
    if final and reports is not None:
        reports.append(reported)
    unpickler = pickle.Unpickler(io.BytesIO(pickled))
    for i in made:
        yield i, unpickler.load()


def _early_slots(started: list[tuple[Any, Any]], waiting: list[bool], finished: list[bool], early: bool) -> None:
    """A slot in ``waiting`` and ``finished`` for each worker started since the last look."""
    for _ in range(len(waiting), len(started)):
        waiting.append(early)
        finished.append(False)


def _early(started: list[tuple[Any, Any]], waiting: list[bool], finished: list[bool], early: bool) -> Iterator[Any]:
    """What the workers sent early (see ``early`` in :func:`_serve`) and this process has not read yet (a
    worker that sent all it made at once, or died, is ``finished``). ``started`` may grow meanwhile (see
    :class:`_Starter`)."""
    _early_slots(started, waiting, finished, early)
    for n, waits in enumerate(waiting):
        if waits:
            receiver = started[n][1]
            try:
                if not receiver.poll(0):
                    continue
                sent = receiver.recv()
            except (EOFError, OSError):  # it died: what it did not send is done here
                sent = None
            waiting[n], finished[n] = False, sent is None or sent[0]
            if sent is not None:
                yield sent


def _received(process: Any, receiver: Any) -> Any:
    """What a worker sent, or None when it died without sending.

    A dead worker's pipe does not always end: a process it left behind (or a fork server that never started
    it) may still hold the sending end, and a plain ``recv`` would then wait for ever. So the wait is in
    short polls, each followed by a look at whether the worker is still alive.
    """
    try:
        while not receiver.poll(0.5):
            if not process.is_alive() and not receiver.poll(0):
                return None
        return receiver.recv()
    except (EOFError, OSError):
        return None


def _claims(context: Context, count: int) -> tuple[Any, Any]:
    """The shared claim counter and its lock (None, None: none could be made, this process works alone)."""
    try:
        return context.RawArray("i", [0, count]), context.Lock()
    except (ImportError, OSError):  # no shared semaphores on this system (some sandboxes): work alone
        return None, None


# Starting a worker (or the fork server) can fail: no more processes allowed (OSError), no usable start method
# (ValueError), a fork server that died before answering (EOFError), or a start from a process that is itself
# still starting, as a spawned worker that re-runs a host program's unguarded main module is (RuntimeError)
_START_FAILURES = (EOFError, OSError, RuntimeError, ValueError)


def _start_one(context: Context, work: Callable[[int], Any], report: Callable[[], Any] | None, bounds: Any,
               lock: Any, early: int) -> tuple[Any, Any] | None:
    """A worker started on the claims, with the pipe to read its results from; None if it could not start."""
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_serve, args=(work, report, bounds, lock, sender, early), daemon=True)
    try:  # whoever did start goes on claiming
        process.start()
    except _START_FAILURES:
        receiver.close()
        return None
    finally:
        sender.close()  # this process's copy: the worker's exit then ends the pipe
    return process, receiver


def _close(started: list[tuple[Any, Any]], stop: bool) -> None:
    """Done with these workers: each is joined (after being stopped, with ``stop``) and its pipe closed."""
    for process, receiver in started:
        if stop and process.is_alive():
            process.terminate()
        process.join()
        receiver.close()


def _fork_server_started() -> bool:
    """Whether the fork server runs (or was started now, under ``_isolated_starts``: the interpreter it
    starts is the one that must not import from the working directory); False: this process works alone."""
    import multiprocessing.forkserver

    try:
        multiprocessing.forkserver.ensure_running()
    except _START_FAILURES:
        return False
    return True


class _Starter:
    """Up to ``count`` workers, started here or, for a fork server, behind this process's back.

    Each start through a fork server waits until the server answers, and the first waits until the server
    has started and imported the engine: about 0.1 s, which this process spends claiming items instead (it
    could not start the first worker sooner). A worker that is still starting when the claims are over has
    nothing left to claim: nobody waits for it; the starting thread stops it and lets it go.
    """

    def __init__(self, start_one: Callable[[], tuple[Any, Any] | None], count: int, behind: bool) -> None:
        self.started: list[tuple[Any, Any]] = []  # (process, connection to read its results from), growing
        self._lock = threading.Lock()
        self._stopped = False
        if behind:
            threading.Thread(target=self._run, args=(start_one, count), name="spec-contract starting workers",
                             daemon=True).start()
        else:  # forked or spawned: the start itself is quick
            self._run(start_one, count)

    def _run(self, start_one: Callable[[], tuple[Any, Any] | None], count: int) -> None:
        for _ in range(count):
            worker = start_one()
            if worker is None:
                return
            with self._lock:
                if not self._stopped:
                    self.started.append(worker)
                    continue
            _close([worker], stop=True)  # started too late: whatever it claims, nobody reads
            return

    def stop(self) -> list[tuple[Any, Any]]:
        """No more starts; the workers started so far, which are the caller's to read and close."""
        with self._lock:
            self._stopped = True
            return list(self.started)


def _shared(count: int, work: Callable[[int], T], processes: int,
            context: Context | None, report: Callable[[], Any] | None = None,
            reports: list[Any] | None = None, early: int = 0) -> Iterator[tuple[int, T]]:
    """``(i, work(i))`` for every item, done by ``processes`` processes (this one included).

    This process's own results come first, as it makes them, from the last item backwards; the workers' when
    the items run out (with what ``report`` returned in each, appended to ``reports``). With ``early``, the
    workers' results of the items before it come as soon as they are sent (see :func:`_serve`), between
    this process's own.
    """
    done = [False] * count
    bounds = lock = starter = None
    if context is not None and processes > 1 and count > 1:
        with _isolated_starts(context):
            bounds, lock = _claims(context, count)
            behind = context.get_start_method() == "forkserver"
            if bounds is not None and (not behind or _fork_server_started()):
                start = partial(_start_one, context, work, report, bounds, lock, early)
                starter = _Starter(start, processes - 1, behind)
    started = starter.started if starter is not None else []
    waiting: list[bool] = []  # an early sending not read yet, from each worker
    finished: list[bool] = []
    try:
        for i in _claims_from_back(bounds, lock, count):
            for sent in _early(started, waiting, finished, bool(early)):
                for k, result in _loaded(sent, reports):
                    done[k] = True
                    yield k, result
            done[i] = True
            yield i, work(i)
        if starter is not None:
            started = starter.stop()
            _early_slots(started, waiting, finished, bool(early))
        for n, (process, receiver) in enumerate(started):
            while not finished[n]:
                sent = _received(process, receiver)
                if sent is None:  # the worker died (killed, out of memory…): its items are done below
                    break
                for i, result in _loaded(sent, reports):
                    done[i] = True
                    yield i, result
                finished[n] = sent[0]
        for i in range(count):
            if not done[i]:
                done[i] = True
                yield i, work(i)
    finally:  # not all done: the reader stopped early, and nobody will read the workers' results
        _close(starter.stop() if starter is not None else [], stop=not all(done))


def scan_all(jobs: list[ScanJob], processes: int) -> Iterator[tuple[ScanJob, ModuleSummary]]:
    """Each job with its summary, made by ``processes`` processes (this one included).

    This process's own summaries come first, as it makes them, from the last job backwards; the workers'
    when the batches run out (those of the worker files they scan first, as soon as they are past them: see
    :func:`_workers_at_both_ends`). So whoever reads the jobs back to front can act on the last ones (the
    worker files) while the other processes are still scanning: the generator is paused meanwhile, they are
    not."""
    import spec_contract.engine.summarise.scan  # noqa: F401  the parser, once, before the workers fork
    ordered, front = _workers_at_both_ends(jobs, processes)
    batches = [ordered[i:i + _BATCH] for i in range(0, len(ordered), _BATCH)]
    # multiprocessing is imported only when workers are about to start: a warm run never needs it
    context = _context() if processes > 1 and len(batches) > 1 else None
    early = -(-front // _BATCH)
    for i, summaries in _shared(len(batches), partial(_scan_batch_at, batches), processes, context, early=early):
        yield from zip(batches[i], summaries)


def _workers_at_both_ends(jobs: list[ScanJob], processes: int) -> tuple[list[ScanJob], int]:
    """The jobs in the order they are shared, and how many come first: a worker file is parsed whole, with
    flow records, and the worker files can be more than this process's share of the scan (SGLang 0.5.23's
    117); the contract is derived from all of them. Then the worker processes scan the worker files this
    process would not get to within its share first (from the front) and send their summaries as soon as
    they are past them, while this process scans the others (the last jobs): the contract is derived while
    the other processes scan models, not after the scan, with the other core waiting."""
    workers = [job for job in jobs if job.worker]
    worker_bytes = sum(len(job.text) for job in workers)
    scan = worker_bytes * (_WORKER_BYTE - 1) + sum(len(job.text) for job in jobs)
    # this process's part if it scanned every worker file: their scan, and the contract derived from them
    # (about a third of it); within its share of the scan, the contract is derived while the others scan
    if processes <= 1 or len(workers) == len(jobs) or worker_bytes * _WORKER_BYTE * 4 / 3 <= scan / processes:
        return jobs, 0
    # the other processes take the worker files this process would not scan (with the contract) within its share
    share, size, front = worker_bytes - scan / processes / (_WORKER_BYTE * 4 / 3), 0, 0
    while front < len(workers) - 1 and size < share:
        size += len(workers[front].text)
        front += 1
    front = min(len(workers) - 1, -(-front // _BATCH) * _BATCH)  # whole batches where it can
    return workers[:front] + [job for job in jobs if not job.worker] + workers[front:], front


def map_forked(count: int, work: Callable[[int], T], processes: int, report: Callable[[], Any], first: int = 0
               ) -> tuple[list[T], list[Any]] | None:
    """``[work(i) for i in range(count)]`` shared with forked processes, and what ``report`` returned at the
    end in each of them; None where forking is unsafe (see ``_fork_safe``), for the caller to work alone.

    A forked process starts as a copy of this one: ``work`` can be any function, and it finds every summary
    and memo made so far. What it adds to its copy (files it read, classes it resolved) stays there, apart
    from the results and the report. So the ``first`` items are done here before any process is forked:
    what most items read (for class checks: the configs, layers and distributed state every model file
    imports), each process then inherits instead of reading it again.
    """
    first = min(first, count)
    if processes <= 1 or count - first < 2 or not _fork_safe():
        return None
    import multiprocessing

    reports: list[Any] = []
    results = {i: work(i) for i in range(first)}
    results.update((first + i, result) for i, result in _shared(
        count - first, lambda i: work(first + i), processes, multiprocessing.get_context("fork"), report, reports))
    return [results[i] for i in range(count)], reports
