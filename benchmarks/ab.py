"""The bench's A/B mode: two checkouts timed in turn on one tree, each figure with its ratio A/B.

A machine shared with other work speeds up and slows down while a bench runs, so two builds timed one after
the other compare two moments as much as two builds. Here each round runs the same whole-process
measurements of A and then of B (A B, then B A, so neither always goes first), each build in its own
interpreter, with its own package on the path and its own summary caches. A figure's ratio is the median
of its per-round ratios, which drift between rounds moves far less than either value.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import server_bench
from check_runs import Build, env_with_cache, run_check
from table import Table, seconds, verdict

ENGINE_EDITS = Path(__file__).with_name("engine_edits.py")


@dataclass(frozen=True)
class Baselines:
    """What the goals are measured against, the same for both builds."""

    read: float  # read-all
    floor: float  # the exact cold floor (bench.measure_floor)
    bare: float  # import pygls.lsp.server


# figure → (unit, goal text, goal) in table order; a goal of None is shown, not judged
Goal = Callable[[float, Baselines], bool]
FIGURES: dict[str, tuple[str, str, Goal | None]] = {
    "check cold: wall": ("s", "<= 3x the exact floor", lambda v, b: v <= 3 * b.floor),
    "check cold: engine (stats.seconds)": ("s", "", None),
    "check cold: start-up (wall - engine)": ("s", "", None),
    "check cold: CPU (user+sys)": ("s", "", None),
    "check warm: wall": ("s", "<= 3x read-all", lambda v, b: v <= 3 * b.read),
    "check warm: engine (stats.seconds)": ("s", "", None),
    "check warm: start-up (wall - engine)": ("s", "", None),
    "check warm: CPU (user+sys)": ("s", "", None),
    "edit -> engine analyze p50 (in-process)": ("s", "share of the 20 ms", None),
    "edit -> engine analyze p95 (in-process)": ("s", "share of the 50 ms", None),
    "edit -> engine analyze p50, CPU": ("s", "steadier under load", None),
    "new line -> engine analyze p50 (in-process)": ("s", "share of the 20 ms", None),
    "new line -> engine analyze p95 (in-process)": ("s", "share of the 50 ms", None),
    "new line -> engine analyze p50, CPU": ("s", "steadier under load", None),
    "server start -> initialize result": ("s", "<= 1.3x bare import", lambda v, b: v <= 1.3 * b.bare),
    "first diagnostics, no cache": ("s", "<= 1.0 s", lambda v, b: v <= 1.0),
    "first diagnostics, warm cache": ("s", "<= 1.0 s", lambda v, b: v <= 1.0),
    "edit -> diagnostics p50 (pull)": ("s", "<= 20 ms", lambda v, b: v <= 0.020),
    "edit -> diagnostics p95 (pull)": ("s", "<= 50 ms", lambda v, b: v <= 0.050),
    "new line -> diagnostics p50 (pull)": ("s", "<= 20 ms", lambda v, b: v <= 0.020),
    "new line -> diagnostics p95 (pull)": ("s", "<= 50 ms", lambda v, b: v <= 0.050),
    "server peak RSS (VmHWM)": ("MB", "<= 300 MB", lambda v, b: v <= 300),
}


def one_round(build: Build, tree: Path, scratch: str, args: argparse.Namespace, open_file: Path,
              edit_file: Path | None) -> dict[str, float]:
    """Every figure of one build, each from fresh processes and caches of its own."""
    figures: dict[str, float] = {}
    warm_cache = tempfile.mkdtemp(dir=scratch)
    cold = run_check(tree, None, no_cache=True, build=build)
    run_check(tree, warm_cache, no_cache=False, build=build)  # fills the cache the timed run reads
    for kind, run in (("cold", cold), ("warm", run_check(tree, warm_cache, no_cache=False, build=build))):
        figures[f"check {kind}: wall"] = run.wall
        figures[f"check {kind}: engine (stats.seconds)"] = run.engine
        figures[f"check {kind}: start-up (wall - engine)"] = run.startup
        figures[f"check {kind}: CPU (user+sys)"] = run.cpu
    if edit_file is not None and args.edits > 0:
        command = [build.python, str(ENGINE_EDITS), str(tree), warm_cache, str(edit_file), str(args.edits)]
        child = subprocess.run(command, env=env_with_cache(warm_cache, build), capture_output=True, check=True,
                               timeout=args.timeout)
        timed = json.loads(child.stdout)
        for name, key in (("edit", "edits"), ("new line", "newlines")):
            if timed[key]:
                figures[f"{name} -> engine analyze p50 (in-process)"] = statistics.median(timed[key])
                figures[f"{name} -> engine analyze p95 (in-process)"] = server_bench.percentile(timed[key], 0.95)
                figures[f"{name} -> engine analyze p50, CPU"] = statistics.median(timed[f"{key}_cpu"])
    if args.skip_server or not open_file.is_file():
        return figures
    figures["server start -> initialize result"] = server_bench.time_start(tree, warm_cache, args.timeout, build)
    cold = server_bench.run_session(tree, tempfile.mkdtemp(dir=scratch), open_file, None, 0, args.timeout, build)
    warm = server_bench.run_session(tree, warm_cache, open_file, edit_file, args.edits, args.timeout, build)
    figures["first diagnostics, no cache"] = cold.first_diagnostics
    figures["first diagnostics, warm cache"] = warm.first_diagnostics
    for name, times in (("edit", warm.edits), ("new line", warm.newline_edits)):
        if times:
            figures[f"{name} -> diagnostics p50 (pull)"] = statistics.median(times)
            figures[f"{name} -> diagnostics p95 (pull)"] = server_bench.percentile(times, 0.95)
    peaks = [s.peak_rss_kb for s in (cold, warm) if s.peak_rss_kb is not None]
    if peaks:
        figures["server peak RSS (VmHWM)"] = max(peaks) / 1024
    return figures


def run(args: argparse.Namespace, tree: Path, builds: tuple[Build, Build], baselines: Baselines, open_file: Path,
        edit_file: Path | None) -> Table:
    """``args.rounds`` rounds of both builds; the table of medians, ratios and goals."""
    rounds: dict[str, list[dict[str, float]]] = {b.name: [] for b in builds}
    with tempfile.TemporaryDirectory(prefix="spec-contract-ab-") as scratch:
        for number in range(args.rounds):
            for build in builds if number % 2 == 0 else builds[::-1]:
                print(f"… round {number + 1}/{args.rounds}: {build.name} ({build.checkout})", file=sys.stderr, flush=True)
                rounds[build.name].append(one_round(build, tree, scratch, args, open_file, edit_file))
    a, b = (rounds[build.name] for build in builds)
    table = Table(("figure", "A", "B", "A/B (min-max)", "goal", "A", "B"))
    for figure, (unit, goal, meets) in FIGURES.items():
        if not all(figure in r for r in a + b):
            continue
        ratios = [x[figure] / y[figure] for x, y in zip(a, b) if y[figure]]
        values = [statistics.median(r[figure] for r in side) for side in (a, b)]
        shown = [seconds(v) if unit == "s" else f"{v:.0f} {unit}" for v in values]
        ratio = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else ""
        judged = [verdict(None if meets is None else meets(v, baselines)) for v in values]
        table.add_row(figure, *shown, ratio, goal, *judged)
    return table
