"""How fast is spec-contract on a tree, next to what merely reading and parsing that tree costs?

Prints one table: figure, value, ratio, goal, pass/fail (the goals of issues 5 and 25). Baselines are measured in
this process on the same files: ``read-all`` reads every ``.py`` file's bytes, ``parse-all`` runs
``ast.parse`` on each. The CLI and the language server run as separate processes from this checkout, with
the summary cache in a temporary directory. Usage::

    python benchmarks/bench.py                                   # the bundled examples/demo
    python benchmarks/bench.py /work/scratch/sglang-0.5.23/sglang --open srt/models/kimi_k25.py

Wall times on a shared machine move with its load; the CPU rows (user + system time of the child) move
less. Timings are best-of-``--repeat`` where a figure is cheap enough to repeat.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ab
import engine_edits
import server_bench
from check_runs import REPO, Build, children_cpu, run_check
from table import Table, seconds

sys.path.insert(0, str(REPO / "server"))  # this checkout's engine, as the subprocesses get through PYTHONPATH

if TYPE_CHECKING:
    from spec_contract.engine.queries import Analysis

DEFAULT_OPEN = {"demo": "minisgl/models/llava.py"}


def python_files(tree: Path) -> list[Path]:
    return sorted(Path(d) / f for d, _, files in os.walk(tree) for f in files if f.endswith(".py"))


def read_all(paths: list[Path]) -> tuple[float, list[bytes]]:
    started = time.perf_counter()
    data = [p.read_bytes() for p in paths]
    return time.perf_counter() - started, data


def parse_all(data: list[bytes]) -> tuple[float, int]:
    """Seconds to ``ast.parse`` every file, and how many did not parse (they still count in the time)."""
    failed = 0
    started = time.perf_counter()
    for source in data:
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            failed += 1
    return time.perf_counter() - started, failed


def one_process_cold(tree: Path) -> tuple[Analysis, float, float]:
    """A cold analysis in this process alone (``SPEC_CONTRACT_JOBS=1``, no cache): the analysis, its CPU
    seconds, and how many of them went to ``ast.parse`` (every parse the engine does goes through it)."""
    from spec_contract.engine.config import load_config
    from spec_contract.engine.project import Project

    parsing = [0.0]
    real_parse = ast.parse

    def timed_parse(*args, **kwargs):
        started = time.process_time()
        try:
            return real_parse(*args, **kwargs)
        finally:
            parsing[0] += time.process_time() - started

    for module in [m for name, m in sys.modules.items() if name.startswith("spec_contract.")]:
        for value in vars(module).values():  # the engine's memos by text: an earlier run here filled them
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    jobs = os.environ.get("SPEC_CONTRACT_JOBS")
    os.environ["SPEC_CONTRACT_JOBS"] = "1"
    ast.parse = timed_parse
    try:
        project = Project(tree, load_config(tree), use_cache=False)
        started = time.process_time()
        analysis = project.analyze()
        return analysis, time.process_time() - started, parsing[0]
    finally:
        ast.parse = real_parse
        if jobs is None:
            del os.environ["SPEC_CONTRACT_JOBS"]
        else:
            os.environ["SPEC_CONTRACT_JOBS"] = jobs


def parse_floor(tree: Path, analysis: Analysis, repeat: int) -> tuple[float, float, int, int]:
    """What a cold check cannot do without, timed in this process: ``ast.parse`` of every worker file and of
    every registered model class statement (the classes a check reports on: each must be parsed whole to
    know its members), best of ``repeat``. Returns (seconds, megabytes, worker files, classes); the files the
    check follows further (bases, inner models) and all the rest of its work come on top.
    """
    from spec_contract.engine.read.files import discover, glob_match

    config = analysis.config
    by_module = {source.module: source.path for source in analysis.models}
    texts = [Path(f.path).read_text(encoding="utf-8", errors="replace")
             for f in discover(tree, config.include, config.exclude) if glob_match(f.rel, config.workers)]
    workers = len(texts)
    wanted: dict[str, set[str]] = {}
    for key in analysis.checked:
        wanted.setdefault(by_module[key.module], set()).add(key.qualname)
    for path, names in wanted.items():
        source = Path(path).read_text(encoding="utf-8", errors="replace")
        texts += [ast.get_source_segment(source, node) or "" for node in ast.parse(source).body
                  if isinstance(node, ast.ClassDef) and node.name in names]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            ast.parse(text)
        best = min(best, time.perf_counter() - started)
    return best, sum(map(len, texts)) / 1e6, workers, len(texts) - workers


# One of ``cores`` processes: wait for the common start time, parse a text ``rounds`` times, print when it ended
_PARSE_ROUNDS = """
import ast, sys, time
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
start_at, rounds = float(sys.argv[2]), int(sys.argv[3])
time.sleep(max(0.0, start_at - time.time()))
for _ in range(rounds):
    ast.parse(text)
print(time.time())
"""


def throughput(sample: Path, cores: int, repeat: int, timeout: float) -> float:
    """How many times one process's work ``cores`` processes get done in the same wall time, on this machine:
    the same parse loop (about a third of a second) alone, then in ``cores`` processes at once, all started
    before a common start time so that no interpreter start is timed; the median of ``repeat`` such pairs.
    A perfect split is ``cores``; two hyper-threads of one core, a busy host, or memory traffic the cores
    share (parsing a large file allocates much) give less."""
    if cores <= 1:
        return 1.0
    text = sample.read_text(encoding="utf-8", errors="replace")
    started = time.perf_counter()
    ast.parse(text)
    rounds = max(1, round(0.3 / max(time.perf_counter() - started, 1e-4)))

    def span(processes: int) -> float:
        start_at = time.time() + 0.5
        runs = [subprocess.Popen([sys.executable, "-c", _PARSE_ROUNDS, str(sample), str(start_at), str(rounds)],
                                 stdout=subprocess.PIPE, text=True) for _ in range(processes)]
        ends = [float(run.communicate(timeout=timeout)[0]) for run in runs]
        return max(ends) - start_at

    ratios = []
    for _ in range(repeat):
        alone = span(1)
        ratios.append(cores * alone / span(cores))
    return statistics.median(ratios)


@dataclass
class Floor:
    """What no exact cold check can skip (``parse_floor``), and this checkout's one-process cold analysis."""

    start: float  # a bare interpreter's start and exit, best of N
    parse: float  # ast.parse of the worker files and registered class statements, one core
    megabytes: float
    workers: int
    classes: int
    cores: int
    engine_cpu: float  # CPU of a cold one-process analysis (SPEC_CONTRACT_JOBS=1)
    parse_cpu: float  # the part of it inside ast.parse

    @property
    def total(self) -> float:
        """Start, then that parse split over the cores."""
        return self.start + self.parse / self.cores


def measure_floor(tree: Path, repeat: int, timeout: float) -> Floor:
    """The floor, best of ``repeat``, and beside it the one-process cold analysis, best of up to three: a
    moment of a busy host in either would move the ratios between them."""
    analysis, engine_cpu, parse_cpu = min((one_process_cold(tree) for _ in range(min(repeat, 3))),
                                          key=lambda run: run[1])
    parse, megabytes, workers, classes = parse_floor(tree, analysis, repeat)
    start = min(server_bench.time_python("pass", timeout) for _ in range(repeat))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return Floor(start, parse, megabytes, workers, classes, cores, engine_cpu, parse_cpu)


def time_pyright(pyright: str, tree: Path, timeout: float) -> tuple[float | None, float, str]:
    """Wall and CPU seconds of ``pyright --outputjson TREE``, or None and why it could not run."""
    try:
        version = subprocess.run([pyright, "--version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, 0.0, f"`{pyright} --version` failed: {exc}"
    if version.returncode != 0:
        return None, 0.0, f"`{pyright} --version` exited {version.returncode}: {version.stderr.strip()[-200:]}"
    before = children_cpu()
    started = time.perf_counter()
    try:
        run = subprocess.run([pyright, "--outputjson", str(tree)], capture_output=True, timeout=timeout, cwd=tree)
    except subprocess.TimeoutExpired:
        return None, 0.0, f"pyright did not finish within {timeout:.0f} s (--pyright-timeout)"
    elapsed = time.perf_counter() - started
    if run.returncode not in (0, 1):  # 1: it found type errors, which is expected on real code
        return None, 0.0, f"pyright exited {run.returncode}: {run.stderr.decode(errors='replace').strip()[-200:]}"
    return elapsed, children_cpu() - before, version.stdout.strip()


def largest_model_file(tree: Path) -> Path | None:
    """The longest ``**/models/**/*.py`` file: the kind of file a model author edits all day."""
    candidates = [p for p in tree.glob("**/models/**/*.py") if p.is_file()]
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p.read_bytes().count(b"\n"), str(p)))


def compile_package(checkout: Path = REPO, python: str = sys.executable) -> None:
    """Byte-compile a checkout's package with its interpreter, as ``pip install`` does for an installed one.

    An editable checkout is compiled on first import, unless ``PYTHONDONTWRITEBYTECODE`` is set (some
    sandboxes set it), in which case every timed process would compile the whole package from source.
    """
    package = checkout / "server" / "spec_contract"
    subprocess.run([python, "-m", "compileall", "-q", str(package)], check=True, stdout=subprocess.DEVNULL)
    print(f"… {package} byte-compiled, as an installed package is", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=REPO / "examples" / "demo")
    parser.add_argument("--open", help="file (relative to the tree) whose first diagnostics are timed")
    parser.add_argument("--edit-file", help="file (relative to the tree) to edit; default: largest models/ file")
    parser.add_argument("--edits", type=int, default=100, help="number of timed edits (default 100)")
    parser.add_argument("--repeat", type=int, default=5, help="best of N for the cheap figures (default 5)")
    parser.add_argument("--skip-pyright", action="store_true")
    parser.add_argument("--pyright", default=shutil.which("pyright"), help="pyright executable (default: on PATH)")
    parser.add_argument("--pyright-timeout", type=float, default=3600.0, help="seconds (default 3600)")
    parser.add_argument("--skip-server", action="store_true", help="only the file, parse and CLI figures")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a step counts as hung")
    parser.add_argument("--vs", type=Path, metavar="CHECKOUT",
                        help="A/B mode: time this checkout (A) against CHECKOUT (B), alternated, with the ratios")
    parser.add_argument("--vs-python", metavar="PYTHON",
                        help="B's interpreter (its venv; default: CHECKOUT/.venv/bin/python if there, else this one)")
    parser.add_argument("--rounds", type=int, default=3, help="A/B mode: rounds of A and B (default 3)")
    args = parser.parse_args(argv)

    tree = args.tree.resolve()
    paths = python_files(tree)
    if not paths:
        parser.error(f"no .py files under {tree}")
    if args.vs is not None:
        return ab_main(parser, args, tree, paths)
    compile_package()
    table = Table()

    # 1, 2: what touching every file costs, in one process (best of N: the page cache is warm for all)
    read, data = min((read_all(paths) for _ in range(args.repeat)), key=lambda r: r[0])
    megabytes = sum(map(len, data)) / 1e6
    table.add("read-all", seconds(read), goal=f"baseline: {len(paths)} files, {megabytes:.1f} MB")
    parse, failed = parse_all(data)
    table.add("parse-all (ast.parse)", seconds(parse), f"{parse / read:.1f}x read-all",
              f"baseline{f'; {failed} files do not parse' if failed else ''}")
    del data

    with tempfile.TemporaryDirectory(prefix="spec-contract-bench-") as scratch:
        warm_cache = os.path.join(scratch, "warm")
        # 3: cold check (no summary cache at all), best of up to three like the floor it is measured against
        cold = min((run_check(tree, None, no_cache=True) for _ in range(min(args.repeat, 3))), key=lambda r: r.wall)
        stats = cold.result["stats"]
        table.add("check cold: wall", seconds(cold.wall), f"{cold.wall / read:.1f}x read-all", "<= 10x read-all",
                  cold.wall <= 10 * read)
        table.add("check cold: wall vs parse-all", seconds(cold.wall), f"{cold.wall / parse:.3f}x parse-all",
                  "<= 1/15 (0.067x) parse-all", cold.wall <= parse / 15)
        table.add("check cold: engine (stats.seconds)", seconds(cold.engine), f"{cold.engine / read:.1f}x read-all",
                  f"{stats['files_parsed']} of {stats['files_seen']} files parsed")
        table.add("check cold: start-up (wall - engine)", seconds(cold.startup))
        table.add("check cold: CPU (user+sys)", seconds(cold.cpu), f"{cold.cpu / read:.1f}x read-all")
        # How close the cold figure is to what no exact check can skip, with the same parser and cores
        floor = measure_floor(tree, args.repeat, args.timeout)
        engine_cpu, parse_cpu, cores = floor.engine_cpu, floor.parse_cpu, floor.cores
        table.add("floor: bare interpreter start", seconds(floor.start), f"{floor.start / read:.1f}x read-all")
        table.add("floor: ast.parse of workers + registered classes", seconds(floor.parse),
                  f"{floor.megabytes:.1f} MB", f"{floor.workers} worker files, {floor.classes} class statements")
        table.add(f"floor: start + that parse on {cores} core(s)", seconds(floor.total),
                  f"{floor.total / read:.1f}x read-all, {floor.total / parse:.3f}x parse-all",
                  f"check cold = {cold.wall / floor.total:.1f}x this (<= 3x)", cold.wall <= 3 * floor.total)
        # Where a cold check's CPU goes, against what each cold goal leaves for it on this machine's cores
        table.add("cold, one process: engine CPU", seconds(engine_cpu),
                  f"ast.parse {seconds(parse_cpu)} ({parse_cpu / engine_cpu:.0%}), the rest {seconds(engine_cpu - parse_cpu)}",
                  "SPEC_CONTRACT_JOBS=1, in this process")
        speed_up = throughput(largest_model_file(tree) or Path(__file__), cores, args.repeat, args.timeout)
        table.add(f"cores: {cores} processes at once", f"{speed_up:.2f}x one process",
                  f"of {cores}x for a perfect split", "the same parse loop alone, then in each process at once")
        perfect, measured = (cores, "cores: a perfect split"), (speed_up, "the row above")
        for label, goal_wall, (share, how) in (("cold goal of issue 5 as engine CPU", min(10 * read, parse / 15), perfect),
                                               ("cold goal (3x floor) as engine CPU", 3 * floor.total, perfect),
                                               ("… on the cores as measured", 3 * floor.total, measured)):
            budget = (goal_wall - cold.startup) * share
            table.add(label, seconds(max(budget, 0.0)),
                      f"ast.parse alone = {parse_cpu / budget:.2f}x this, leaving {seconds(max(budget - parse_cpu, 0.0))} "
                      f"for the rest ({seconds(engine_cpu - parse_cpu)} above)" if budget > 0 else "no time left after start-up",
                      f"(goal wall - start-up) x {how}")
        # 8: the tool a user would otherwise run
        if args.skip_pyright:
            table.add("pyright TREE", "skipped (--skip-pyright)")
        elif not args.pyright:
            table.add("pyright TREE", "skipped: no pyright on PATH (pip install pyright)")
        else:
            elapsed, cpu, note = time_pyright(args.pyright, tree, args.pyright_timeout)
            if elapsed is None:
                table.add("pyright TREE", f"skipped: {note}")
            else:
                table.add("pyright TREE (--outputjson): wall", seconds(elapsed),
                          f"check cold = {cold.wall / elapsed:.4f}x pyright", note)
                table.add("pyright TREE (--outputjson): CPU", seconds(cpu),
                          f"check cold CPU = {cold.cpu / cpu:.4f}x pyright CPU")
        # 4: warm check (second run on a filled cache)
        run_check(tree, warm_cache, no_cache=False)
        # best of --repeat, like the read-all it is measured against: one run is a fifth of a second, and a
        # single one moved from 2.7x to 3.3x read-all between runs of this bench an hour apart
        warm = min((run_check(tree, warm_cache, no_cache=False) for _ in range(args.repeat)), key=lambda r: r.wall)
        stats = warm.result["stats"]
        table.add("check warm: wall", seconds(warm.wall), f"{warm.wall / read:.1f}x read-all", "<= 3x read-all",
                  warm.wall <= 3 * read)
        table.add("check warm: engine (stats.seconds)", seconds(warm.engine), f"{warm.engine / read:.1f}x read-all",
                  f"of {stats['files_seen']} files: {stats['files_parsed']} parsed, "
                  f"{stats['files_from_cache']} from the summary cache")
        table.add("check warm: start-up (wall - engine)", seconds(warm.startup))
        table.add("check warm: CPU (user+sys)", seconds(warm.cpu), f"{warm.cpu / read:.1f}x read-all")
        edit_file = tree / args.edit_file if args.edit_file else largest_model_file(tree)
        if edit_file is not None and args.edits > 0:
            engine_figures(tree, warm_cache, edit_file, args.edits, table)
        if not args.skip_server:
            server_figures(args, tree, warm_cache, os.path.join(scratch, "cold"), edit_file, table)

    print(f"spec-contract benchmark: {tree} ({sys.executable}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})")
    print(table.render())
    return 0


def ab_main(parser: argparse.ArgumentParser, args: argparse.Namespace, tree: Path, paths: list[Path]) -> int:
    """``--vs CHECKOUT``: this checkout (A) and CHECKOUT (B), each in its own interpreter, alternated."""
    other = args.vs.resolve()
    if not (other / "server" / "spec_contract").is_dir():
        parser.error(f"--vs {other}: not a spec-contract checkout (no server/spec_contract)")
    venv = other / ".venv" / "bin" / "python"
    python = args.vs_python or (str(venv) if venv.exists() else sys.executable)
    builds = (Build("A", REPO, sys.executable), Build("B", other, python))
    for build in builds:
        compile_package(build.checkout, build.python)
    read = min(read_all(paths)[0] for _ in range(args.repeat))
    floor = measure_floor(tree, args.repeat, args.timeout)  # the tree's, measured with A's analysis
    bare = min(server_bench.time_python("import pygls.lsp.server", args.timeout) for _ in range(args.repeat))
    edit_file = tree / args.edit_file if args.edit_file else largest_model_file(tree)
    open_rel = args.open or DEFAULT_OPEN.get(tree.name) or "srt/models/kimi_k25.py"
    table = ab.run(args, tree, builds, ab.Baselines(read, floor.total, bare), tree / open_rel, edit_file)
    print(f"spec-contract A/B benchmark: {tree} ({args.rounds} rounds; A {REPO} with {sys.executable}, "
          f"B {other} with {python}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})")
    print(f"read-all {seconds(read)}, exact floor {seconds(floor.total)} (start {seconds(floor.start)} + ast.parse "
          f"of {floor.workers} workers and {floor.classes} classes {seconds(floor.parse)} / {floor.cores} cores), "
          f"bare pygls import {seconds(bare)}")
    print(table.render())
    return 0


def engine_figures(tree: Path, cache_dir: str, edit_file: Path, edits: int, table: Table) -> None:
    """The engine's part of the edit latency, without a server (same edits, same warm cache)."""
    timed = engine_edits.engine_edit_times(tree, cache_dir, edit_file, edits)
    lines = edit_file.read_bytes().count(b"\n")
    table.add("engine analyze, warm cache (in-process)", seconds(timed.first), "", "no goal; cf. check warm engine")
    for name, times, cpu in (("edit", timed.edits, timed.edits_cpu), ("new line", timed.newlines, timed.newlines_cpu)):
        if not times:
            continue
        table.add(f"{name} -> engine analyze p50 (in-process)", seconds(statistics.median(times)),
                  f"{edit_file.relative_to(tree)}, {lines} lines, {len(times)} edits; CPU {seconds(statistics.median(cpu))}",
                  "share of the 20 ms")
        table.add(f"{name} -> engine analyze p95 (in-process)", seconds(server_bench.percentile(times, 0.95)),
                  f"max {seconds(max(times))}; CPU {seconds(server_bench.percentile(cpu, 0.95))}", "share of the 50 ms")


def server_figures(args: argparse.Namespace, tree: Path, warm_cache: str, cold_cache: str, edit_file: Path | None,
                   table: Table) -> None:
    """Steps 5-7: start-up against a bare pygls import, first diagnostics, edit latency, peak RSS."""
    from spec_contract.lsp.settings import DEFAULT_DEBOUNCE_MS

    open_rel = args.open or DEFAULT_OPEN.get(tree.name) or "srt/models/kimi_k25.py"
    open_file = tree / open_rel
    if not open_file.is_file():
        table.add("server", f"skipped: {open_file} does not exist (--open)")
        return
    bare = min(server_bench.time_python("import pygls.lsp.server", args.timeout) for _ in range(args.repeat))
    start = min(server_bench.time_start(tree, warm_cache, args.timeout) for _ in range(args.repeat))
    table.add("import pygls.lsp.server (bare)", seconds(bare), goal="baseline")
    table.add("server start -> initialize result", seconds(start), f"{start / bare:.2f}x bare import",
              "<= 1.3x bare import", start <= 1.3 * bare)

    cold = server_bench.run_session(tree, cold_cache, open_file, None, 0, args.timeout)
    table.add(f"first diagnostics, no cache ({open_rel})", seconds(cold.first_diagnostics),
              f"{cold.first_count} diagnostic(s)", "<= 1.0 s after initialize", cold.first_diagnostics <= 1.0)
    warm = server_bench.run_session(tree, warm_cache, open_file, edit_file, args.edits, args.timeout)
    table.add(f"first diagnostics, warm cache ({open_rel})", seconds(warm.first_diagnostics),
              f"{warm.first_count} diagnostic(s)", "<= 1.0 s after initialize", warm.first_diagnostics <= 1.0)
    if warm.edits and edit_file is not None:  # a session times edits only when given a file to edit
        lines = edit_file.read_bytes().count(b"\n")
        p50 = statistics.median(warm.edits)
        p95 = server_bench.percentile(warm.edits, 0.95)
        where = f"{edit_file.relative_to(tree)}, {lines} lines, {len(warm.edits)} edits"
        table.add("edit -> diagnostics p50 (pull)", seconds(p50), where, "<= 20 ms", p50 <= 0.020)
        table.add("edit -> diagnostics p95 (pull)", seconds(p95), f"max {seconds(max(warm.edits))}", "<= 50 ms",
                  p95 <= 0.050)
    if warm.newline_edits:
        p50 = statistics.median(warm.newline_edits)
        p95 = server_bench.percentile(warm.newline_edits, 0.95)
        table.add("new line -> diagnostics p50 (pull)", seconds(p50),
                  f"{len(warm.newline_edits)} new lines, top to bottom", "<= 20 ms", p50 <= 0.020)
        table.add("new line -> diagnostics p95 (pull)", seconds(p95), f"max {seconds(max(warm.newline_edits))}",
                  "<= 50 ms", p95 <= 0.050)
    table.add("debounce (didChange, push clients)", f"{DEFAULT_DEBOUNCE_MS} ms default",
              "set to 0 via initializationOptions", "not in the pull latency above")
    peaks = {name: s.peak_rss_kb for name, s in (("no cache", cold), ("warm", warm)) if s.peak_rss_kb is not None}
    if not peaks:
        table.add("server peak RSS (VmHWM)", "skipped: no /proc/<pid>/status here")
        return
    peak = max(peaks.values()) / 1024
    table.add("server peak RSS (VmHWM)", f"{peak:.0f} MB",
              ", ".join(f"{name} {kb / 1024:.0f} MB" for name, kb in peaks.items()), "<= 300 MB", peak <= 300)


if __name__ == "__main__":
    sys.exit(main())
