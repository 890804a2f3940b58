"""How ``check --fix`` grows with the classes it fixes in one file, against the goal of issue 38 (``--fix`` on
one file with 500 wrappers within 5x the check of that file): a script, not a test.

It builds the reliability tests' small SGLang-shaped tree (``tests/spec_tree.py``: one worker, one inner
model) in a temporary folder, with one model file holding N wrappers that forward nothing the worker calls,
then times, for each N, the check of that file and the fix of it (``--fix --select SC001,SC002,SC005``: three
forwards per class), each a fresh ``python -m spec_contract`` process without a cache, the fix on a fresh copy
of the tree each time; best of ``--repeat``. It prints N, both times and the ratio fix / check, in wall time and in CPU time (user + system
of the child: steadier than wall time on a loaded machine; a cold check scans on every core, so its CPU may
exceed its wall time).

    python benchmarks/fix_bench.py                      # N = 30, 120, 500
    python benchmarks/fix_bench.py --sizes 30 60 120 --repeat 1
    PYTHONPATH=/path/to/other/checkout/server python benchmarks/fix_bench.py   # another checkout's engine
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the reliability tests' small tree
from spec_tree import write_tree  # noqa: E402

GOAL = 5.0  # --fix on 500 wrappers within 5x the check of that file
SELECT = "SC001,SC002,SC005"


def model_file(n: int) -> str:
    """One file with ``n`` wrappers of the inner model, each with a docstring and two methods of its own."""
    classes = "".join(
        f'\n\nclass Wrapper{i}ForConditionalGeneration:\n    """Wrapper {i}."""\n\n'
        f"    def __init__(self, config):\n        self.config = config\n"
        f"        self.language_model = LlamaForCausalLM(config)\n\n"
        f"    def forward(self, input_ids, positions):\n"
        f"        return self.language_model.forward(input_ids, positions)\n"
        for i in range(n))
    names = ", ".join(f"Wrapper{i}ForConditionalGeneration" for i in range(n))
    return f"from sglang.srt.models.llama import LlamaForCausalLM\n{classes}\n\nEntryClass = [{names}]\n"


def build(root: Path, n: int) -> Path:
    return write_tree(root, {"srt/models/wrappers.py": model_file(n)})


def timed(tree: Path, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``check`` of the wrappers' file in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", "srt/models/wrappers.py", "--no-cache",
                           *args], cwd=tree, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        raise SystemExit(f"check {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(n: int, repeat: int, scratch: Path) -> tuple[tuple[float, float], tuple[float, float], str]:
    """The best (wall, CPU) of the check and of the fix for ``n`` wrappers, and whether the fix left the file
    clean."""
    source = build(scratch / f"n{n}", n)
    checks, fixes, said = [], [], ""
    for i in range(repeat):
        checks.append(timed(source))
        copy = scratch / f"n{n}-fix{i}"
        shutil.copytree(source.parent, copy)
        fixes.append(timed(copy / "sglang", "--fix", "--select", SELECT))
        after = subprocess.run([sys.executable, "-m", "spec_contract", "check", "srt/models/wrappers.py",
                                "--no-cache", "--select", SELECT], cwd=copy / "sglang", capture_output=True,
                               text=True, timeout=3600)
        said = "clean after the fix" if after.returncode == 0 else f"NOT clean after the fix: {after.stdout[-500:]}"
        shutil.rmtree(copy)
    return ((min(w for w, _ in checks), min(c for _, c in checks)),
            (min(w for w, _ in fixes), min(c for _, c in fixes)), said)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 120, 500], help="wrappers in the file")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each kind, the best is kept (default 3)")
    args = parser.parse_args()
    print(f"{'wrappers':>8}  {'check s':>8}  {'--fix s':>8}  {'ratio':>6}  {'check CPU':>9}  {'--fix CPU':>9}  "
          f"{'ratio':>6}  goal (500: fix <= {GOAL:g}x check)")
    with tempfile.TemporaryDirectory(prefix="fix-bench-") as scratch:
        for n in args.sizes:
            print(f"building and timing {n} wrappers ...", file=sys.stderr)
            check, fix, said = measure(n, args.repeat, Path(scratch))
            wall, cpu = fix[0] / check[0], fix[1] / check[1]
            verdict = ("pass" if wall <= GOAL else "FAIL") if n >= 500 else ""
            print(f"{n:>8}  {check[0]:>8.2f}  {fix[0]:>8.2f}  {wall:>5.2f}x  {check[1]:>9.2f}  {fix[1]:>9.2f}  "
                  f"{cpu:>5.2f}x  {verdict}  ({said})", flush=True)


if __name__ == "__main__":
    main()
