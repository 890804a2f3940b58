"""Baselines: the findings a team accepted fail no run; a new one does, and line moves change nothing.

Each test runs the command as CI does (a subprocess) on a small SGLang-shaped tree with two wrappers that
forget forwards, so the baseline starts with several entries.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from spec_tree import LLAMA, wrapper

WORKER = """
class EAGLEWorker:
    def __init__(self, target_worker, draft_model_runner):
        embed, head = target_worker.model_runner.model.get_embed_and_head()
        draft_model_runner.model.set_embed_and_head(embed, head)
        target_worker.model_runner.model.set_eagle3_layers_to_capture([1])
"""
@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "sglang"
    files = {
        "__init__.py": "", "srt/__init__.py": "",
        "srt/speculative/eagle_worker.py": WORKER,
        "srt/models/llama.py": LLAMA,
        "srt/models/kimi.py": wrapper("Kimi"),  # forgets all three
        "srt/models/llava.py": wrapper("Llava", "get_embed_and_head", "set_embed_and_head",
                                       "set_eagle3_layers_to_capture"),  # fixed: forwards all three
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(root.parent / "cache")}
    return subprocess.run([sys.executable, "-m", "spec_contract", "check", *args], capture_output=True, text=True,
                          cwd=root, env=env, timeout=120)


def findings(result: subprocess.CompletedProcess) -> list[tuple[str, str, bool]]:
    return sorted((f["class"], f["method"], f["baselined"]) for f in json.loads(result.stdout)["findings"])


def test_a_baseline_passes_old_findings_and_fails_exactly_the_new_one(tmp_path, tree):
    baseline = tmp_path / "baseline.json"
    written = run(tree, "--write-baseline", str(baseline))
    assert written.returncode == 0, written.stderr
    entries = json.loads(baseline.read_text())["findings"]
    assert [(e["class"], e["member"], e["role"]) for e in entries] == [
        ("sglang.srt.models.kimi.Kimi", m, r) for m, r in
        [("get_embed_and_head", "target"), ("set_eagle3_layers_to_capture", "target"), ("set_embed_and_head", "draft")]]
    assert run(tree, "--baseline", str(baseline)).returncode == 0

    # The fixed wrapper loses a forward: that one finding, and only it, fails the run.
    llava = tree / "srt/models/llava.py"
    llava.write_text(wrapper("Llava", "get_embed_and_head", "set_embed_and_head"))
    result = run(tree, "--baseline", str(baseline), "--format", "json")
    assert result.returncode == 1
    assert [f for f in findings(result) if not f[2]] == [("Llava", "set_eagle3_layers_to_capture", False)]
    assert len([f for f in findings(result) if f[2]]) == len(entries)
    text = run(tree, "--baseline", str(baseline))
    codes = [re.match(r"\S+:\d+:\d+: (\w+ SC\d+) ", line) for line in text.stdout.splitlines()]
    assert [m.group(1) for m in codes if m] == ["error SC001"]
    assert "`Llava` does not forward `set_eagle3_layers_to_capture`" in text.stdout
    assert f"Baseline: {len(entries)} finding(s) baselined, 0 baseline entries no longer found" in text.stdout

    # Lines moved everywhere: the baseline still matches, and writing it again gives the same file.
    for model in (tree / "srt/models").glob("*.py"):
        model.write_text("# moved\n" * 50 + model.read_text())
    llava.write_text(wrapper("Llava", "get_embed_and_head", "set_embed_and_head", "set_eagle3_layers_to_capture"))
    assert run(tree, "--baseline", str(baseline)).returncode == 0
    again = tmp_path / "again.json"
    assert run(tree, "--write-baseline", str(again)).returncode == 0
    assert again.read_text() == baseline.read_text()


def test_stale_entries_are_reported_not_errors_and_the_pyproject_key_is_read(tmp_path, tree):
    run(tree, "--write-baseline", "ci-baseline.json")
    (tree / "pyproject.toml").write_text('[tool.spec-contract]\nbaseline = "ci-baseline.json"\n')
    (tree / "srt/models/kimi.py").write_text(wrapper("Kimi", "get_embed_and_head"))  # one entry fixed
    result = run(tree, "srt/models")  # a subfolder: the key is found through discovery
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Baseline: 2 finding(s) baselined, 1 baseline entry no longer found" in result.stdout
    assert "fixed: sglang.srt.models.kimi.Kimi.get_embed_and_head (SC001, target)" in result.stdout
    report = json.loads(run(tree, "--format", "json").stdout)
    assert report["baseline"]["stale"] == [{"code": "SC001", "class": "sglang.srt.models.kimi.Kimi",
                                            "member": "get_embed_and_head", "role": "target",
                                            "path": "srt/models/kimi.py"}]


def test_sarif_and_json_carry_the_same_line_independent_fingerprint(tmp_path, tree):
    before = json.loads(run(tree, "--format", "json").stdout)["findings"]
    sarif = json.loads(run(tree, "--format", "sarif").stdout)["runs"][0]["results"]
    assert [r["partialFingerprints"]["specContract/v1"] for r in sarif] == [f["fingerprint"] for f in before]
    model = tree / "srt/models/kimi.py"
    model.write_text("\n" * 7 + model.read_text())
    after = json.loads(run(tree, "--format", "json").stdout)["findings"]
    assert [f["line"] for f in after] != [f["line"] for f in before]
    assert [f["fingerprint"] for f in after] == [f["fingerprint"] for f in before]


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("", "the file is empty"),
    ('{"version": 2, "findings": []}', "version 2 is not supported"),
    ("{not json", "not JSON"),
    ('{"version": 1, "findings": {}}', "'findings' must be a list"),
    ('{"version": 1, "findings": [{"code": "SC001"}]}', "findings[0] needs string values"),
    ("[1, 2]", "not a spec-contract baseline"),
])
def test_an_unusable_baseline_exits_2_with_one_line(tmp_path, tree, content, message):
    baseline = tmp_path / "baseline.json"
    if content is not None:
        baseline.write_text(content)
    result = run(tree, "--baseline", str(baseline))
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr, result.stderr
