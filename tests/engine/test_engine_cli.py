"""The ``spec-contract`` command as CI runs it: a subprocess, its exit code, and the fixed JSON schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_trees import CLEAN_WRAPPER, EAGLE_WORKER, LLAMA, base_tree, make_tree

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"


def run(*args: str, cwd: Path | None = None, cache: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cache)}
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def test_demo_json_report_has_the_fixed_schema_and_exit_code_1(tmp_path):
    result = run("check", str(DEMO), "--format", "json", "--no-cache", cache=tmp_path)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"version", "root", "findings", "contract", "stats"}  # root: additive (issue 13)
    assert report["root"] == str(DEMO)
    assert report["version"] == 1
    assert {"files_seen", "files_parsed", "seconds"} <= set(report["stats"])
    fixed_keys = {"code", "severity", "path", "line", "column", "end_line", "end_column", "class", "method",
                  "role", "delegate", "inner_class", "call_sites"}
    assert all(fixed_keys <= set(f) for f in report["findings"])
    assert [(f["code"], f["severity"], f["path"], f["line"], f["column"], f["end_line"], f["end_column"],
             f["class"], f["method"], f["role"], f["delegate"], f["inner_class"], f["call_sites"])
            for f in report["findings"]] == [
        ("SC001", "error", "minisgl/models/llava.py", 6, 7, 6, 36, "LlavaForConditionalGeneration",
         "get_embed_and_head", "target", "language_model", "LlamaForCausalLM",
         [{"path": "minisgl/speculative/eagle_worker.py", "line": 11, "guarded": False, "phase": "start-up"}]),
        ("SC001", "error", "minisgl/models/llava.py", 6, 7, 6, 36, "LlavaForConditionalGeneration",
         "set_eagle3_layers_to_capture", "target", "language_model", "LlamaForCausalLM",
         [{"path": "minisgl/model_executor/model_runner.py", "line": 14, "guarded": False, "phase": "start-up",
           "algorithm": "EAGLE3"}]),  # algorithm, phase: additive (the contract semantics of issues 12 and 20)
    ]
    assert report["findings"][1]["algorithm"] == "EAGLE3"
    assert all(set(e) == {"role", "method", "required", "call_sites"} for e in report["contract"])
    assert {(e["role"], e["method"], e["required"]) for e in report["contract"]} >= {
        ("target", "get_embed_and_head", True), ("target", "set_eagle3_layers_to_capture", True),
        ("draft", "set_embed_and_head", True)}


def test_demo_reports_the_same_without_the_cache_and_with_it_cold_and_warm(tmp_path):
    reports = []
    for extra in (["--no-cache"], [], []):  # then the run that fills the cache, then one that reads it
        report = json.loads(run("check", str(DEMO), "--format", "json", *extra, cache=tmp_path / "cache").stdout)
        reports.append({key: value for key, value in report.items() if key != "stats"})
    assert reports[0] == reports[1] == reports[2]
    assert [f["method"] for f in reports[0]["findings"]] == ["get_embed_and_head", "set_eagle3_layers_to_capture"]


def test_demo_contract_subcommand_lists_the_same_contract(tmp_path):
    check = json.loads(run("check", str(DEMO), "--format", "json", "--no-cache", cache=tmp_path).stdout)
    result = run("contract", str(DEMO), "--format", "json", "--no-cache", cache=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"version": 1, "contract": check["contract"]}


def test_clean_tree_exits_0(tmp_path):
    root = base_tree(tmp_path / "tree", CLEAN_WRAPPER)
    result = run("check", str(root), "--format", "json", "--no-cache", cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["findings"] == []


def test_only_warning_findings_exit_0(tmp_path):
    root = base_tree(tmp_path / "tree", {
        "pkg/models/llava.py": CLEAN_WRAPPER["pkg/models/llava.py"].replace("def get_embed_and_head", "def other"),
        "pyproject.toml": '[tool.spec-contract]\nseverity = {SC001 = "warning"}\n',
    })
    result = run("check", str(root), "--format", "json", "--no-cache", cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert [(f["code"], f["severity"], f["method"]) for f in json.loads(result.stdout)["findings"]] == [
        ("SC001", "warning", "get_embed_and_head")]


def test_path_defaults_to_the_working_directory(tmp_path):
    root = base_tree(tmp_path / "tree", CLEAN_WRAPPER)
    result = run("check", "--format", "json", "--no-cache", cwd=root, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["stats"]["files_seen"] == 7


@pytest.mark.parametrize("args", [
    ("check", "{missing}"),
    ("check", "{demo}", "--select", "SC001,XY999"),
    ("check", "{demo}", "--profile", "no-such-engine"),
    ("check", "{demo}", "--format", "yaml"),
    ("check", "{demo}", "--config", "{missing}"),
    ("check", "{bad_config}"),
    ("frobnicate",),
])
def test_usage_or_configuration_error_exits_2_with_one_line(tmp_path, args):
    bad = make_tree(tmp_path / "bad", {"pyproject.toml": "[tool.spec-contract]\ncolour = 'blue'\n"})
    values = {"missing": str(tmp_path / "missing"), "demo": str(DEMO), "bad_config": str(bad)}
    result = run(*(a.format(**values) for a in args), cache=tmp_path / "cache")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("spec-contract: error: ")


OUT_OF_TREE_MODELS = {"mymodels/__init__.py": "", "mymodels/llava.py": """
    from sglang.srt.models.llama import LlamaForCausalLM

    class MyLlava:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)
"""}


def test_out_of_tree_models_take_the_contract_from_the_installed_engine(tmp_path):
    """A package of models with no workers: the engine on ``--python``'s path supplies contract and inner classes."""
    site = make_tree(tmp_path / "site", {
        "sglang/__init__.py": "",
        "sglang/srt/speculative/eagle_worker.py": EAGLE_WORKER,
        "sglang/srt/models/llama.py": LLAMA,
    })
    mine = make_tree(tmp_path / "mine", OUT_OF_TREE_MODELS)
    result = run("check", str(mine), "--format", "json", "--no-cache", "--python", sys.executable,
                 cache=tmp_path / "cache", pythonpath=site)
    assert result.returncode == 1, result.stderr
    worker = "sglang/srt/speculative/eagle_worker.py"
    assert [(f["class"], f["method"], f["path"], f["inner_class"], f["call_sites"])
            for f in json.loads(result.stdout)["findings"]] == [
        ("MyLlava", "get_embed_and_head", "mymodels/llava.py", "LlamaForCausalLM",
         [{"path": worker, "line": 5, "guarded": False, "phase": "start-up"}]),
        ("MyLlava", "set_embed_and_head", "mymodels/llava.py", "LlamaForCausalLM",
         [{"path": worker, "line": 6, "guarded": False, "phase": "start-up"}]),
    ]


def test_out_of_tree_models_without_an_installed_engine_is_a_one_line_error(tmp_path):
    mine = make_tree(tmp_path / "mine", OUT_OF_TREE_MODELS)
    result = run("check", str(mine), "--format", "json", "--no-cache", cache=tmp_path / "cache",
                 pythonpath=tmp_path / "empty-site")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"spec-contract: error: {mine} has no worker files (profile 'sglang')")


def test_unusable_python_for_the_engine_exits_2(tmp_path):
    mine = make_tree(tmp_path / "mine", OUT_OF_TREE_MODELS)
    result = run("check", str(mine), "--no-cache", "--python", str(tmp_path / "no-python"), cache=tmp_path / "cache")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("spec-contract: error: ")
