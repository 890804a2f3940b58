"""The engine's share of the edit latency: the same edits applied to a ``Project`` in this process.

Set beside the server's edit → diagnostics time, this splits the latency into re-analysis (here) and what
the server adds on top (protocol, event loop, turning findings into diagnostics).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from server_bench import edited_texts


def engine_edit_times(tree: Path, cache_dir: str, edit_file: Path, edits: int) -> tuple[float, list[float]]:
    """Seconds of the first ``analyze()`` (on the given cache) and of ``analyze()`` after each edit."""
    from spec_contract.engine.config import load_config
    from spec_contract.engine.project import Project

    project = Project(tree, load_config(tree), cache_dir=Path(cache_dir))
    started = time.perf_counter()
    project.analyze()
    first = time.perf_counter() - started
    path = str(edit_file)
    times = []
    for text in edited_texts(edit_file.read_text(encoding="utf-8"), edits):
        started = time.perf_counter()
        project.set_overlay(path, text)
        project.analyze()
        times.append(time.perf_counter() - started)
    return first, times


def main(argv: list[str]) -> None:
    """``python engine_edits.py TREE CACHE_DIR EDIT_FILE EDITS``: the figures as JSON on stdout, so the
    bench's A/B mode can time another checkout's engine in that checkout's own interpreter."""
    tree, cache_dir, edit_file, edits = argv
    first, times = engine_edit_times(Path(tree), cache_dir, Path(edit_file), int(edits))
    print(json.dumps({"first": first, "times": times}))


if __name__ == "__main__":
    main(sys.argv[1:])
