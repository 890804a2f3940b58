"""The engine's share of the edit latency: the same edits applied to a ``Project`` in this process.

Set beside the server's edit → diagnostics time, this splits the latency into re-analysis (here) and what
the server adds on top (protocol, event loop, turning findings into diagnostics). The same session's edits:
comment edits, then new lines from the top of the file to the bottom. Each is timed as wall and as CPU time
of this process: on a loaded machine the CPU time still says what the edit costs.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from server_bench import edited_texts, newline_texts


@dataclass
class EngineEdits:
    first: float  # seconds of the first analyze() on the warm cache
    edits: list[float] = field(default_factory=list)  # wall seconds per comment edit
    edits_cpu: list[float] = field(default_factory=list)
    newlines: list[float] = field(default_factory=list)  # wall seconds per new line
    newlines_cpu: list[float] = field(default_factory=list)


def engine_edit_times(tree: Path, cache_dir: str, edit_file: Path, edits: int) -> EngineEdits:
    """The first ``analyze()`` (on the given cache), then ``analyze()`` after each edit and each new line."""
    from spec_contract.engine.config import load_config
    from spec_contract.engine.project import Project

    project = Project(tree, load_config(tree), cache_dir=Path(cache_dir))
    started = time.perf_counter()
    project.analyze()
    timed = EngineEdits(time.perf_counter() - started)
    path = str(edit_file)
    comment_edits = edited_texts(edit_file.read_text(encoding="utf-8"), edits)
    series = [(comment_edits, timed.edits, timed.edits_cpu),
              (newline_texts(comment_edits[-1], edits) if comment_edits else [], timed.newlines, timed.newlines_cpu)]
    for texts, times, cpu in series:
        for text in texts:
            started, started_cpu = time.perf_counter(), time.process_time()
            project.set_overlay(path, text)
            project.analyze()
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
    return timed


def main(argv: list[str]) -> None:
    """``python engine_edits.py TREE CACHE_DIR EDIT_FILE EDITS``: the figures as JSON on stdout, so the
    bench's A/B mode can time another checkout's engine in that checkout's own interpreter."""
    tree, cache_dir, edit_file, edits = argv
    print(json.dumps(asdict(engine_edit_times(Path(tree), cache_dir, Path(edit_file), int(edits)))))


if __name__ == "__main__":
    main(sys.argv[1:])
