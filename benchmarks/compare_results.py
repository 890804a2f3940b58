"""Does the cache change what ``check`` reports?  Exit 1 if it does for any tree.

For each tree, in a fresh cache directory: ``check --no-cache``, then ``check`` twice (the first fills the
cache, the second reads it). The findings and the contract (everything in the JSON report but ``stats``)
of the cached runs must equal the uncached one.

A warm run on an unchanged tree may restore the last results wholesale, which says nothing about the
incremental path. So each tree is also copied (its ``.py`` files) to a temporary directory, checked to fill
a cache, then edited on disk — the inner class of a reported finding loses that method (its ``def`` is
renamed), which changes findings — and checked again with that cache; the result must equal ``--no-cache`` on
the edited copy. Usage::

    python benchmarks/compare_results.py /work/scratch/sglang-0.5.{8,9,10,23}/sglang
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
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


def _rename_def(path: Path, method: str) -> bool:
    text = path.read_text(encoding="utf-8")
    needle = f"def {method}("
    if needle not in text:
        return False
    path.write_text(text.replace(needle, f"def {method}_renamed(", 1), encoding="utf-8")
    return True


def edit_copy(copy: Path, findings: list[dict]) -> str:
    """Make an inner model lose a contract method; return what was edited, for the log.

    Preferably the method of a reported finding, in the file that defines the finding's inner class (so the
    findings change); else ``get_embed_and_head`` in the first model file that defines it.
    """
    for finding in findings[:5]:  # the first that works; each try reads the whole tree
        inner, method = finding.get("inner_class"), finding.get("method")
        if not isinstance(inner, str) or not isinstance(method, str):  # a finding on no inner model's method
            continue
        for path in sorted(copy.glob("**/*.py")):
            text = path.read_text(encoding="utf-8")
            if re.search(rf"^\s*class {re.escape(inner)}\b", text, re.M) and _rename_def(path, method):
                return f"renamed {inner}.{method} in {path.relative_to(copy)}"
    for path in sorted(copy.glob("**/models/**/*.py")):
        if _rename_def(path, "get_embed_and_head"):
            return f"renamed get_embed_and_head in {path.relative_to(copy)}"
    path = min(copy.glob("**/*.py"))
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    return f"appended a comment to {path.relative_to(copy)}"


def compare_after_edit(tree: Path) -> bool:
    """Cache filled before an on-disk edit, read after it, against ``--no-cache`` on the edited copy."""
    with tempfile.TemporaryDirectory(prefix="spec-contract-edit-") as scratch:
        copy = Path(scratch) / tree.name
        shutil.copytree(tree, copy, ignore=lambda d, names: [
            n for n in names if not n.endswith(".py") and not (Path(d) / n).is_dir()])
        cache_dir = str(Path(scratch) / "cache")
        before = run_check(copy, cache_dir, no_cache=False)
        what = edit_copy(copy, before.result["findings"])
        after = run_check(copy, cache_dir, no_cache=False)
        fresh = run_check(copy, None, no_cache=True)
    diff = differences(comparable(fresh.result), comparable(after.result))
    if diff:
        print(f"{tree} after an edit ({what}): the cached run differs from --no-cache:")
        print("\n".join(diff))
    stats = after.result["stats"]
    print(
        f"{'same' if not diff else 'DIFFERENT'}: {tree} after an edit ({what}) — "
        f"{len(before.result['findings'])} -> {len(fresh.result['findings'])} finding(s); the cached run parsed "
        f"{stats['files_parsed']} and read {stats['files_from_cache']} summaries from the cache"
    )
    return not diff


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
        f"{len(reference['contract'])} contract entr(ies); of {stats['files_seen']} files the warm run parsed "
        f"{stats['files_parsed']} and read {stats['files_from_cache']} summaries from the cache; "
        f"engine {cold.engine:.2f} s uncached, {warm.engine:.2f} s warm"
    )
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path, default=[REPO / "examples" / "demo"])
    args = parser.parse_args(argv)
    results = [check(tree) for tree in args.trees for check in (compare, compare_after_edit)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
