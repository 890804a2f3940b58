"""The support matrix's HTML page in a real browser: headless Chromium runs its script, and the DOM it
leaves shows the coloured cells, the tooltip of a pinned cell, and the search and filters a link carries.

A screenshot is written beside the page (and copied to ``$SPEC_CONTRACT_SCREENSHOTS`` when set) to be looked
at by eye. Without Chromium the test skips locally and fails under ``CI=true`` (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from browser import FLAGS, LIMIT_S, chromium, dom
from launch_trees import engine_tree
from spec_contract.cli import main


def test_the_page_renders_filters_and_explains_cells_in_chromium(tmp_path, capsys):
    browser = chromium()
    page = tmp_path / "matrix.html"
    assert main(["matrix", "--no-cache", "--engine", str(engine_tree(tmp_path)), "--format", "html", "-o", str(page)]) == 0
    capsys.readouterr()
    everything = dom(page)
    assert everything.count("<tr data-architecture=") == 3 and "3 of 3 architectures" in everything
    assert '<td class="cell crashes" tabindex="0" data-state="crashes" data-algorithm="EAGLE3">crashes' in everything
    assert '<td class="cell refused" tabindex="0" data-state="refused" data-algorithm="DFLASH">refused' in everything
    # a link's search box and state filter leave the one crashing row; its pinned cell shows reason and fix
    view = "search=tower&state=crashes&pin=TowerForConditionalGeneration/EAGLE3"
    narrowed = dom(page, view)
    assert narrowed.count("<tr data-architecture=") == 1 and "1 of 3 architectures" in narrowed
    assert 'class="cell crashes pinned"' in narrowed
    assert "<b>fix:</b> forward <code>get_embed_and_head</code> to <code>self.language_model</code>" in narrowed
    assert 'data-algorithm="DFLASH" style="opacity:.25"' in narrowed  # refused: outside the state filter, dimmed
    only = dom(page, "algorithm=DFLASH")
    assert 'data-algorithm="EAGLE3"' not in only and only.count('data-algorithm="DFLASH"') == 3
    shot = tmp_path / "matrix.png"
    result = subprocess.run([browser, *FLAGS, f"--screenshot={shot}", f"{page.as_uri()}#{view}"],
                            capture_output=True, text=True, timeout=LIMIT_S)
    assert result.returncode == 0 and shot.stat().st_size > 10_000, result.stderr[-2000:]
    if os.environ.get("SPEC_CONTRACT_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["SPEC_CONTRACT_SCREENSHOTS"]) / "matrix-page.png")
