"""An analysis leaves no cyclic garbage, and neither does dropping it: reference counting frees both.

The pipeline pauses the cyclic collector while it analyses, and after a large analysis freezes what is left
without a collection (a collection would walk every object it made: a fifth of a second on SGLang's tree,
before the editor's first diagnostics). That is sound only while the engine makes no reference cycles that
it then drops: a frozen cycle is never freed. A recursive closure is the usual culprit (it refers to
itself through its own cell), one per statement read; so are objects that hold each other (the index and the
collaborators that ask it back), which a server drops with every analysis an edit replaces.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "examples" / "demo", ROOT / "tests" / "fixtures" / "kimi_k25"]


@contextmanager
def cyclic_garbage() -> Iterator[Counter[str]]:
    """Counts, by type, the unreachable objects in reference cycles that the body leaves behind (the
    collector is paused in the body, as the CLI pauses it, so the pipeline neither collects nor freezes)."""
    found: Counter[str] = Counter()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield found
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            found.update(type(o).__qualname__ if not callable(o) else getattr(o, "__qualname__", type(o).__name__)
                         for o in gc.garbage)
        finally:
            gc.garbage.clear()
            gc.set_debug(0)
            if enabled:
                gc.enable()


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_a_cold_analysis_and_an_edit_leave_no_cyclic_garbage(tree: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPEC_CONTRACT_JOBS", "1")  # this process does all the work the census can see
    project = Project(tree, load_config(tree), cache_dir=tmp_path)
    with cyclic_garbage() as cold:
        first = project.analyze()
    assert first.findings and first.stats.files_parsed, "the tree was analysed"
    assert not cold, f"a cold analysis left reference cycles behind: {cold.most_common(5)}"

    model = next(str(m.path) for m in first.models)
    text = Path(model).read_text(encoding="utf-8")
    with cyclic_garbage() as edit:
        project.set_overlay(model, "\n" + text + "\n# edited\n")  # a new line above everything, as typing makes
        second = project.analyze()
    assert second.generation > first.generation
    assert not edit, f"an edit's analysis left reference cycles behind: {edit.most_common(5)}"

    with cyclic_garbage() as dropped:  # the server drops the analysis an edit replaced: its index goes with it
        del first
    assert not dropped, f"a dropped analysis is held in reference cycles: {dropped.most_common(5)}"
