"""The support matrix's HTML page in a real browser: headless Chromium runs its script, and the DOM it
leaves shows the coloured cells, the tooltip of a pinned cell, and the search and filters a link carries;
driven by playwright-core as a person uses it, its headers sort, its boxes filter, a hovered cell says why.

A screenshot is written beside the page (and copied to ``$SPEC_CONTRACT_SCREENSHOTS`` when set) to be looked
at by eye. Without Chromium the test skips locally and fails under ``CI=true`` (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from browser import FLAGS, LIMIT_S, chromium, dom, drive
from launch_trees import engine_tree
from spec_contract.cli import main

WHEEL_VERSION = "__version__ = version = '0.5.99'\n"  # what a wheel build writes into _version.py


def page_of(tmp_path: Path, capsys) -> Path:
    page = tmp_path / "matrix.html"
    engine = engine_tree(tmp_path, {"_version.py": WHEEL_VERSION})
    assert main(["matrix", "--no-cache", str(engine), "--format", "html", "-o", str(page)]) == 0
    capsys.readouterr()
    return page


def test_the_page_renders_filters_and_explains_cells_in_chromium(tmp_path, capsys):
    browser = chromium()
    page = page_of(tmp_path, capsys)
    everything = dom(page)
    assert everything.count("<tr data-architecture=") == 3 and "3 of 3 architectures" in everything
    assert '<td class="cell crashes" tabindex="0" data-state="crashes" data-algorithm="EAGLE3">crashes' in everything
    # the DFLASH worker's check refuses the tower only after the load: a crash for the person waiting
    assert '<td class="cell crashes" tabindex="0" data-state="crashes" data-algorithm="DFLASH">crashes' in everything
    # a link's search box and state filter leave the one crashing row; its pinned cell shows reason and fix
    view = "search=tower&state=crashes&pin=TowerForConditionalGeneration/EAGLE3"
    narrowed = dom(page, view)
    assert narrowed.count("<tr data-architecture=") == 1 and "1 of 3 architectures" in narrowed
    assert 'class="cell crashes pinned"' in narrowed
    assert "<b>fix:</b> forward <code>get_embed_and_head</code> to <code>self.language_model</code>" in narrowed
    supported = dom(page, "search=llama&state=supported")
    assert supported.count("<tr data-architecture=") == 2 and 'style="opacity:.25"' not in supported
    only = dom(page, "algorithm=DFLASH")
    assert 'data-algorithm="EAGLE3"' not in only and only.count('data-algorithm="DFLASH"') == 3
    shot = tmp_path / "matrix.png"
    result = subprocess.run([browser, *FLAGS, f"--screenshot={shot}", f"{page.as_uri()}#{view}"],
                            capture_output=True, text=True, timeout=LIMIT_S)
    assert result.returncode == 0 and shot.stat().st_size > 10_000, result.stderr[-2000:]
    if os.environ.get("SPEC_CONTRACT_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["SPEC_CONTRACT_SCREENSHOTS"]) / "matrix-page.png")


def test_a_person_sorts_by_a_column_filters_and_reads_a_cells_reason(tmp_path, capsys):
    """Issue 37.4: the page names the engine and its release, says each state in words, sorts by any column
    (click its header; again, the other way) and a hovered cell says why, when, and for which algorithm."""
    page = page_of(tmp_path, capsys)
    tower, llama, eagle3 = "TowerForConditionalGeneration", "LlamaForCausalLM", "LlamaForCausalLMEagle3"
    opened, by_eagle3, reversed_, by_name, crashes_only, no_eagle, hovered = drive(page, [
        {"click": "th[data-column=EAGLE3]"},
        {"click": "th[data-column=EAGLE3]"},
        {"click": "th[data-column=architecture]"},
        {"uncheck": "input[name=state][value=supported]"},
        {"uncheck": "input[name=algorithm][value=EAGLE]"},
        {"hover": f"tr[data-architecture={tower}] td.cell[data-algorithm=DSPARK]"},
    ])
    assert opened["title"] == opened["heading"] == "spec-contract support matrix: sglang 0.5.99"
    assert [line.split()[0] for line in opened["legend"]] == ["crashes", "refused", "cannot-tell", "degraded",
                                                              "supported", "not-its-draft"]
    assert "after the weights load, or at the first request" in opened["legend"][0]
    assert opened["rows"] == [llama, tower, eagle3]  # the engine's order: targets, then drafts
    assert [h["column"] for h in opened["headers"]] == ["architecture", "class", "role", "EAGLE", "EAGLE3", "DFLASH",
                                                        "DSPARK"]
    assert by_eagle3["rows"][0] == tower  # worst first
    assert {h["column"]: h["sort"] for h in by_eagle3["headers"]}["EAGLE3"] == "ascending"
    assert reversed_["rows"][-1] == tower
    assert {h["column"]: h["sort"] for h in reversed_["headers"]}["EAGLE3"] == "descending"
    assert by_name["rows"] == [llama, eagle3, tower]
    assert crashes_only["rows"] == [tower] and crashes_only["shown"] == "1 of 3 architectures"
    assert no_eagle["cells"] == [f"{tower}/{a}" for a in ("EAGLE3=crashes", "DFLASH=crashes", "DSPARK=crashes")]
    [tip] = hovered["tips"]
    assert tip.startswith(f"{tower} × DSPARK: crashes")
    # the cell's own run: the model runner's capture check, which a DSPARK run's flag selects, after the load
    assert "the target lacks set_dflash_layers_to_capture" in tip.replace("`", "")
    assert "srt/model_executor/model_runner.py" in tip and "refuses DFLASH" not in tip
    # a link carries the sort too; a column the page does not have leaves the engine's order
    linked = dom(page, "sort=-architecture")
    assert re.findall(r'<tr data-architecture="([^"]+)"', linked) == [tower, eagle3, llama]
    assert re.findall(r'<tr data-architecture="([^"]+)"', dom(page, "sort=nosuchcolumn")) == opened["rows"]
