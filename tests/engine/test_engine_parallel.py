"""Cold runs scan files in several processes: the summaries and the findings are those of one process."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from engine_trees import base_tree, contract, findings
from spec_contract.engine import parallel
from spec_contract.engine.check import batch as checking_module
from spec_contract.engine.config import load_config
from spec_contract.engine.parallel import ScanJob, scan_all
from spec_contract.engine.project import Project
from spec_contract.engine.read.files import text_digest
from spec_contract.engine.summarise import summaries as summaries_module

REPO = Path(__file__).resolve().parents[2]


def _jobs() -> list[ScanJob]:
    """This repository's own engine and tests, half as worker files (with flow records)."""
    paths = sorted((REPO / "server" / "spec_contract").rglob("*.py")) + sorted((REPO / "tests").rglob("*.py"))
    jobs = []
    for n, path in enumerate(paths):
        text = path.read_text(encoding="utf-8")
        jobs.append(ScanJob(str(path), path.stem, text_digest(text), text, n % 2 == 0, "EntryClass"))
    return jobs


def _summaries(jobs: list[ScanJob], processes: int) -> list:
    """The summaries in the jobs' order, each job given exactly one."""
    made = {}
    for job, summary in scan_all(jobs, processes):
        assert job not in made
        made[job] = summary
    return [made[job] for job in jobs]


def test_two_processes_make_the_summaries_one_makes():
    jobs = _jobs()
    assert len(jobs) > 40
    alone = _summaries(jobs, 1)
    assert [s.path for s in alone] == [j.path for j in jobs]
    assert _summaries(jobs, 2) == alone


def test_this_process_hands_over_its_own_summaries_first_from_the_last_job_back():
    # What lets the project derive the contract from the worker files (queued last) while others scan. A
    # few worker files: none is shared out first (see the next test), so no other process sends any early,
    # and what comes first is this process's own, however fast the other one runs
    jobs = _models_then_workers(3)
    assert parallel._workers_at_both_ends(jobs, 2) == (jobs, 0)
    order = [job for job, _ in scan_all(jobs, 2)]
    assert jobs[-1] in order[:parallel._BATCH]  # the last batch, scanned first here


def _models_then_workers(workers: int) -> list[ScanJob]:
    """Thirty test files as model files, then ``workers`` of the engine's own as worker files (the order the
    pipeline queues them in: workers last)."""
    engine = sorted((REPO / "server" / "spec_contract").rglob("*.py"))[:workers]
    tests = sorted((REPO / "tests").rglob("*.py"))[:30]
    return [ScanJob(str(path), path.stem, "d", path.read_text(encoding="utf-8"), path in engine, None)
            for path in tests + engine]


def test_the_other_processes_scan_their_share_of_many_worker_files_first():
    # The contract is derived from every worker file: when scanning them would take this process past its
    # share of the scan, the other processes scan their share of them first (and send those summaries at
    # once), so the contract is made while they scan models, not after the scan
    jobs = _models_then_workers(200)
    workers = [job for job in jobs if job.worker]
    ordered, front = parallel._workers_at_both_ends(jobs, 2)
    assert front % parallel._BATCH == 0 and 0 < front < len(workers)
    assert ordered == workers[:front] + jobs[:30] + workers[front:]
    made = dict(scan_all(jobs, 2))
    assert sorted(made, key=jobs.index) == jobs and made == dict(scan_all(jobs, 1))
    # a few worker files this process scans first, and derives the contract from, within its share
    few = _models_then_workers(3)
    assert parallel._workers_at_both_ends(few, 2) == (few, 0)
    assert parallel._workers_at_both_ends(jobs, 1) == (jobs, 0)


def test_a_process_running_other_threads_gets_the_same_summaries():
    # The language server's engine thread: its workers come from a fork server, not a fork of it.
    jobs = _jobs()
    out: list = []
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=True)
    busy.start()
    try:
        runner = threading.Thread(target=lambda: out.append(_summaries(jobs, 2)))
        runner.start()
        runner.join(timeout=120)
    finally:
        stop.set()
    assert out and out[0] == _summaries(jobs, 1)


def _through_a_fork_server(count: int, start: Any, monkeypatch) -> dict[int, int]:
    """``_shared``'s results for ``count`` items in a process running a second thread (as the language server
    does, so workers come from a fork server), each worker started by ``start(real_start, *args)``."""
    real_start = parallel._start_one
    monkeypatch.setattr(parallel, "_start_one", lambda *args: start(real_start, *args))
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=True)
    busy.start()
    try:
        context = parallel._context()
        assert context is not None and context.get_start_method() == "forkserver"
        return dict(parallel._shared(count, os.getpid().__add__, 2, context))
    finally:
        stop.set()


def _within(seconds: float, condition: Any) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (asked every 10 ms)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_this_process_claims_items_while_a_fork_server_starts_its_worker(monkeypatch):
    # A worker's start through a fork server waits until the server has started and imported the engine (about
    # 0.1 s, the language server's first diagnostics); before, this process waited with it, claiming nothing.
    claimed_first: list[bool] = []

    def start_after_a_claim(real_start, context, work, report, bounds, lock, early):
        claimed_first.append(_within(60, lambda: bounds[1] < 400))  # this process claims from the back
        return real_start(context, work, report, bounds, lock, early)

    results = _through_a_fork_server(400, start_after_a_claim, monkeypatch)
    assert _within(60, lambda: claimed_first) and claimed_first == [True]
    assert results == {i: os.getpid() + i for i in range(400)}


def test_a_worker_that_starts_after_the_claims_are_over_is_not_waited_for(monkeypatch):
    order: list[str] = []
    returned = threading.Event()

    def start_late(real_start, context, work, report, bounds, lock, early):
        assert _within(60, lambda: bounds[0] >= bounds[1])  # this process claimed every item
        returned.wait(60)
        order.append("worker started")
        return real_start(context, work, report, bounds, lock, early)

    results = _through_a_fork_server(4, start_late, monkeypatch)
    order.append("results returned")
    returned.set()
    assert results == {i: os.getpid() + i for i in range(4)}  # all made here
    assert _within(60, lambda: len(order) == 2) and order == ["results returned", "worker started"]
    assert _within(60, lambda: not multiprocessing.active_children())  # the late worker was stopped and reaped


def _twelve_wrappers(tmp_path):
    """A tree of twelve registered wrappers over one language model: enough classes to share among processes."""
    return base_tree(tmp_path, {f"pkg/models/m{i}.py": f"""
        from pkg.models.llama import LlamaForCausalLM

        class Wrapper{i}:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = Wrapper{i}
    """ for i in range(12)})


def test_a_cold_project_scanned_in_parallel_reports_what_a_single_process_does(tmp_path, monkeypatch):
    root = _twelve_wrappers(tmp_path)

    def run(jobs: str):
        monkeypatch.setenv("SPEC_CONTRACT_JOBS", jobs)
        return Project(root, load_config(root), use_cache=False).analyze()

    monkeypatch.setitem(parallel.MIN_PER_PROCESS, "files", 2)
    pools = []
    real_scan_all = summaries_module.scan_all
    monkeypatch.setattr(summaries_module, "scan_all", lambda jobs, n: pools.append((len(jobs), n)) or real_scan_all(jobs, n))
    one, several = run("1"), run("2")
    if parallel.processes_for(16) > 1:  # not on a one-core machine
        assert pools == [(16, 2)]  # the workers, llama, llava and the twelve wrappers, in two processes
    assert findings(several) == findings(one) and len(findings(one)) == 24
    assert contract(several) == contract(one)
    assert several.stats.files_parsed == one.stats.files_parsed


def test_jobs_setting_caps_the_processes(monkeypatch):
    monkeypatch.setenv("SPEC_CONTRACT_JOBS", "1")
    assert parallel.processes_for(10_000) == 1
    monkeypatch.delenv("SPEC_CONTRACT_JOBS")
    assert parallel.processes_for(parallel.MIN_PER_PROCESS["files"] - 1) == 1


PARTIAL_START = """
import multiprocessing.context as context
from spec_contract.engine.parallel import ScanJob, scan_all

started = []
real_popen = context.ForkProcess._Popen


def second_start_fails(process):
    started.append(process)
    if len(started) == 2:
        raise OSError(11, "Resource temporarily unavailable")  # fork() at a container's process limit
    return real_popen(process)


context.ForkProcess._Popen = staticmethod(second_start_fails)
jobs = [ScanJob(f"/t/m{i}.py", f"m{i}", "d", f"class A{i}:\\n    pass\\n", False, None) for i in range(200)]
summaries = [s for _, s in sorted(scan_all(jobs, 3), key=lambda made: jobs.index(made[0]))]
print(len(summaries), [s.deferred[0].name for s in summaries[:2]], started[0].is_alive())
"""


def _run_script(tmp_path: Path, source: str) -> list[str]:
    """Run ``source`` in a fresh interpreter (its own start methods, no pytest threads); its output's words."""
    script = tmp_path / "scenario.py"
    script.write_text(source)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO / "server")})
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_workers_that_started_are_stopped_when_another_cannot_start(tmp_path):
    # Left waiting for work, the first worker would hold the interpreter at exit for ever.
    if sys.platform != "linux":
        pytest.skip("the fork start method this scenario breaks is used on Linux only")
    assert _run_script(tmp_path, PARTIAL_START) == ["200", "['A0',", "'A1']", "False"]


WORKER_DIES = """
import os
import time
from spec_contract.engine import parallel
from spec_contract.engine.parallel import ScanJob, scan_all

parent, real_scan_batch = os.getpid(), parallel._scan_batch
scanned_here = []


def dies_in_a_worker(batch):
    if os.getpid() != parent:
        os._exit(9)  # as if killed (out of memory) in the middle of its first batch
    time.sleep(0.02)  # slow here, so that the worker surely claims a batch before this process takes them all
    scanned_here.append(batch)
    return real_scan_batch(batch)


parallel._scan_batch = dies_in_a_worker
jobs = [ScanJob(f"/t/m{i}.py", f"m{i}", "d", f"class A{i}:\\n    pass\\n", False, None) for i in range(200)]
made = dict(scan_all(jobs, 2))
print(len(made), sorted(made[j].deferred[0].name for j in jobs) == sorted(f"A{i}" for i in range(200)),
      jobs[0] in scanned_here[-1])
"""


def test_batches_a_dead_worker_took_are_scanned_here(tmp_path):
    if sys.platform != "linux":
        pytest.skip("the patched scanner reaches the worker through fork, used on Linux only")
    # every job has its summary; the first batch, the worker's, was scanned here, last
    assert _run_script(tmp_path, WORKER_DIES) == ["200", "True", "True"]


WORKER_DIES_PIPE_HELD = """
import os
import signal
import time
from spec_contract.engine import parallel
from spec_contract.engine.parallel import ScanJob, scan_all

parent, real_scan_batch = os.getpid(), parallel._scan_batch
left_behind = os.pipe()


def dies_leaving_its_pipe_open(batch):
    if os.getpid() != parent:
        child = os.fork()
        if child == 0:  # a process the worker leaves behind, holding every descriptor it had but the output
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            time.sleep(600)
            os._exit(0)
        os.write(left_behind[1], f"{child}\\n".encode())
        os._exit(9)
    time.sleep(0.02)
    return real_scan_batch(batch)


parallel._scan_batch = dies_leaving_its_pipe_open
jobs = [ScanJob(f"/t/m{i}.py", f"m{i}", "d", f"class A{i}:\\n    pass\\n", False, None) for i in range(200)]
made = dict(scan_all(jobs, 2))
left = int(os.read(left_behind[0], 64).split()[0])
os.kill(left, 0)  # still there, holding the dead worker's pipe open, while the run went on without it
os.kill(left, signal.SIGKILL)
print(len(made), "done")
"""


def test_a_dead_worker_whose_pipe_stays_open_does_not_stall_the_run(tmp_path):
    if sys.platform != "linux":
        pytest.skip("the patched scanner reaches the worker through fork, used on Linux only")
    # Before, the reader waited for the pipe to end, which took as long as the process left behind lived
    # (ten minutes, past the script's time limit); now it sees that the worker died and scans its batch here.
    assert _run_script(tmp_path, WORKER_DIES_PIPE_HELD) == ["200", "done"]


def test_without_shared_semaphores_this_process_scans_alone(monkeypatch):
    # Some sandboxes have no /dev/shm: creating the lock the claims need fails.
    real_context = parallel._context

    class NoSemaphores:
        def __init__(self):
            self.context = real_context()

        def __getattr__(self, name):
            return getattr(self.context, name)

        def Lock(self):
            raise OSError(38, "Function not implemented")

    monkeypatch.setattr(parallel, "_context", NoSemaphores)
    jobs = _jobs()
    assert _summaries(jobs, 2) == _summaries(jobs, 1)


def _checked_by_one_then_two_processes(root: Path, monkeypatch) -> tuple[Any, Any, list]:
    """The analyses of ``root`` by one process, then two (classes shared from two on), and what each call of
    ``map_forked`` returned, in order (None: the check was not shared)."""
    monkeypatch.setitem(parallel.MIN_PER_PROCESS, "classes", 2)
    shared: list = []
    real_map_forked = checking_module.map_forked
    monkeypatch.setattr(checking_module, "map_forked",
                        lambda *args, **kwargs: shared.append(result := real_map_forked(*args, **kwargs)) or result)

    def run(jobs: str):
        monkeypatch.setenv("SPEC_CONTRACT_JOBS", jobs)
        return Project(root, load_config(root), use_cache=False).analyze()

    return run("1"), run("2"), shared


def test_classes_checked_in_forked_processes_give_the_findings_problems_and_counts_of_one(tmp_path, monkeypatch):
    # Each wrapper's inner model has a file of its own that only the check reads, in whichever process checks
    # that wrapper; one of those files does not parse.
    files = {"pkg/inner/__init__.py": ""}
    for i in range(40):
        files[f"pkg/models/m{i}.py"] = f"""
            from pkg.inner.i{i} import Inner{i}

            class Wrapper{i}:
                def __init__(self, config):
                    self.language_model = Inner{i}(config)

            EntryClass = Wrapper{i}
        """
        files[f"pkg/inner/i{i}.py"] = f"""
            from pkg.models.llama import LlamaForCausalLM

            class Inner{i}(LlamaForCausalLM):
                pass
        """
    files["pkg/inner/i7.py"] = "class Inner7(:\n    pass\n"
    root = base_tree(tmp_path, files)
    one, several, shared = _checked_by_one_then_two_processes(root, monkeypatch)
    if parallel.processes_for(40, "classes") > 1 and parallel._fork_safe():  # two cores, no other threads
        forked = [result for result in shared if result is not None]  # the registered classes' check
        assert len(forked) == 1 and len(forked[0][1]) == 1  # one forked process reported back
    assert findings(several) == findings(one) and len(findings(one)) == 39 * 2
    assert several.problems == one.problems and [Path(p).name for p in one.problems] == ["i7.py"]
    assert several.stats.files_skipped == one.stats.files_skipped == {"syntax-error": 1}
    assert several.stats.files_parsed == one.stats.files_parsed


def test_the_held_classes_found_beside_a_forked_check_are_those_one_process_finds(tmp_path, monkeypatch):
    """A cold check finds what each registered class holds while it checks it, in whichever process checks
    it: the held language models (with the wrapper and path that reach each first) and their findings are
    those of one process doing it all."""
    files = {"pkg/inner/__init__.py": ""}
    for i in range(12):  # checked in the order of their paths
        files[f"pkg/models/m{i:02}.py"] = f"""
            from pkg.inner.lm{i % 4} import TextLM{i % 4}

            class Wrapper{i}:
                def __init__(self, config):
                    self.language_model = TextLM{i % 4}(config)

            EntryClass = Wrapper{i}
        """
    for i in range(4):
        files[f"pkg/inner/lm{i}.py"] = f"""
            class Decoder{i}:
                pass


            class TextLM{i}:
                def __init__(self, config):
                    self.model = Decoder{i}()
                    self.lm_head = object()
        """ + ("""
                def get_embed_and_head(self):
                    return self.model.get_embed_and_head()
        """ if i % 2 else "")
    root = base_tree(tmp_path, files)
    one, several, shared = _checked_by_one_then_two_processes(root, monkeypatch)
    if parallel.processes_for(12, "classes") > 1 and parallel._fork_safe():  # two cores, no other threads
        assert any(found is not None for found in shared)  # two processes shared the registered classes
    assert several.held == one.held
    assert sorted((k.qualname, r.wrapper.qualname, r.attr) for k, r in one.held.items() if r.wrapper) == [
        ("Decoder1", "Wrapper1", "language_model.model"), ("Decoder3", "Wrapper3", "language_model.model"),
        ("TextLM0", "Wrapper0", "language_model"), ("TextLM1", "Wrapper1", "language_model"),
        ("TextLM2", "Wrapper2", "language_model"), ("TextLM3", "Wrapper3", "language_model")]
    assert several.findings == one.findings
    # the language models that forward to a decoder lacking the member crash their wrappers' runs; those that
    # never had it crash only for a missing gate, said once
    assert sorted({(f.code, f.class_name) for f in one.findings}) == [
        ("SC001", f"Wrapper{i}") for i in (1, 11, 3, 5, 7, 9)] + [("SC011", "")]
