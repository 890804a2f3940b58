"""Does the summary cache change what ``check`` reports?  Exit 1 if it does for any tree.

For each tree, in a fresh cache directory: ``check --no-cache``, then ``check`` twice (the first fills the
cache, the second reads it). The findings and the contract (everything in the JSON report but ``stats``)
of the cached runs must equal the uncached one. Usage::

    python benchmarks/compare_results.py /work/scratch/sglang-0.5.{8,9,10,23}/sglang
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from check_runs import run_check

REPO = Path(__file__).resolve().parent.parent


def comparable(result: dict) -> dict:
    """The report without ``stats`` (timings and cache counters legitimately differ)."""
    return {key: value for key, value in result.items() if key != "stats"}


def differences(expected: dict, actual: dict) -> list[str]:
    """One line per finding / contract entry present on only one side."""
    lines = []
    for key in ("findings", "contract"):
        before = {json.dumps(item, sort_keys=True) for item in expected.get(key, [])}
        after = {json.dumps(item, sort_keys=True) for item in actual.get(key, [])}
        lines += [f"  {key} only without cache: {item}" for item in sorted(before - after)]
        lines += [f"  {key} only with cache:    {item}" for item in sorted(after - before)]
    if not lines and expected != actual:  # same sets, other order or other top-level keys
        lines.append("  same entries, but the reports differ in order or in other keys")
    return lines


def compare(tree: Path) -> bool:
    with tempfile.TemporaryDirectory(prefix="spec-contract-cache-") as cache_dir:
        cold = run_check(tree, cache_dir, no_cache=True)
        filling = run_check(tree, cache_dir, no_cache=False)
        warm = run_check(tree, cache_dir, no_cache=False)
    reference = comparable(cold.result)
    same = True
    for label, run in (("cache-filling run", filling), ("warm-cache run", warm)):
        diff = differences(reference, comparable(run.result))
        if diff:
            same = False
            print(f"{tree}: {label} differs from --no-cache:")
            print("\n".join(diff))
    stats = warm.result["stats"]
    print(
        f"{'same' if same else 'DIFFERENT'}: {tree} — {len(reference['findings'])} finding(s), "
        f"{len(reference['contract'])} contract entr(ies); warm run read {stats['files_from_cache']} of "
        f"{stats['files_seen']} files from the cache; engine {cold.engine:.2f} s uncached, {warm.engine:.2f} s warm"
    )
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path, default=[REPO / "examples" / "demo"])
    args = parser.parse_args(argv)
    results = [compare(tree) for tree in args.trees]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
