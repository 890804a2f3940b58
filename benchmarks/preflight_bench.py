"""How long ``spec-contract preflight`` takes, cold and warm, against the goals of issue 22 (≤ 10 s cold,
≤ 2 s warm on the 2-core machine): a script, not a test.

Each run is a fresh ``python -m spec_contract preflight … --format json`` process, as a user runs it. Cold:
an empty summary cache of its own (``SPEC_CONTRACT_CACHE_DIR``), so the engine's whole source is read and
summarised; warm: the same cache again. Wall and CPU (user + system of the child, less disturbed by other
load on a shared machine) are printed for each, with the median and its ratio to the goal.

    python benchmarks/preflight_bench.py --python /path/venv/bin/python --model TARGET_DIR --draft DRAFT_DIR
    python benchmarks/preflight_bench.py --engine /path/sglang --model … --algorithm EAGLE3 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

GOALS = {"cold": 10.0, "warm": 2.0}


def run(argv: list[str], cache: str) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "spec_contract", "preflight", "--format", "json", *argv],
                          capture_output=True, text=True, env={**os.environ, "SPEC_CONTRACT_CACHE_DIR": cache},
                          timeout=600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"preflight exited {done.returncode}: {done.stderr.strip()}")
    return wall, cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--python", help="the interpreter whose installed engine is read")
    where.add_argument("--engine", help="the engine's package folder")
    parser.add_argument("--model", required=True)
    parser.add_argument("--draft")
    parser.add_argument("--algorithm", default="EAGLE3")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each kind (default 5)")
    args = parser.parse_args()
    argv = ["--python", args.python] if args.python else ["--engine", args.engine]
    argv += ["--model", args.model, "--algorithm", args.algorithm] + (["--draft", args.draft] if args.draft else [])
    figures: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    verdict = None
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="preflight-bench-") as cache:
            wall, cpu, result = run(argv, cache)
            figures["cold"].append((wall, cpu))
            wall, cpu, result = run(argv, cache)
            figures["warm"].append((wall, cpu))
        verdict = result
        print(f"round {i + 1}: cold {figures['cold'][-1][0]:.2f} s, warm {figures['warm'][-1][0]:.2f} s", file=sys.stderr)
    assert verdict is not None
    members = [p["member"] for v in verdict["verdicts"] for p in v["problems"]]
    print(f"verdict: {verdict['state']} (exit {verdict['exit_code']}); problems: {', '.join(map(str, members)) or 'none'};"
          f" launch checks: {len(verdict['launch_checks'])}")
    print(f"{'figure':<12}{'median wall':>12}{'median cpu':>12}{'goal':>8}{'ratio':>8}  result")
    for kind, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        goal = GOALS[kind]
        print(f"{kind:<12}{wall:>11.2f}s{cpu:>11.2f}s{goal:>7.0f}s{wall / goal:>8.2f}  {'pass' if wall <= goal else 'FAIL'}")


if __name__ == "__main__":
    main()
