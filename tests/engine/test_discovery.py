"""Project discovery: from any file or folder to the project it belongs to, and the CLI on a subset of it.

The trees are laid out like an SGLang checkout: ``repo/python/sglang/srt/…`` with ``srt/models`` a namespace
package (no ``__init__.py``), as in the real releases.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from engine_trees import EAGLE_WORKER, LLAMA, make_tree
from spec_contract.engine.config import ConfigError, load_config
from spec_contract.engine.read.discovery import find_project

PROFILE = load_config(None)


def wrapper(name: str, forwards: bool = False) -> str:
    """A wrapper of Llama; with ``forwards``, it forwards ``get_embed_and_head`` (not ``set_embed_and_head``)."""
    forward = ("\n    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n"
               if forwards else "")
    return (f"from sglang.srt.models.llama import LlamaForCausalLM\n\n\nclass {name}:\n"
            f"    def __init__(self, config):\n        self.language_model = LlamaForCausalLM(config)\n"
            f"{forward}\n\nEntryClass = {name}\n")


def checkout(root: Path, extra: dict[str, str] | None = None) -> Path:
    """``root`` as a git checkout with SGLang's layout; returns the package folder ``python/sglang``."""
    make_tree(root, {
        ".git/HEAD": "ref: refs/heads/main\n",
        "python/pyproject.toml": "[project]\nname = 'sglang'\n",  # SGLang's own: no [tool.spec-contract]
        "python/sglang/__init__.py": "",
        "python/sglang/srt/__init__.py": "",
        "python/sglang/srt/speculative/eagle_worker.py": EAGLE_WORKER,
        "python/sglang/srt/models/llama.py": LLAMA,
        "python/sglang/srt/models/kimi_k25.py": wrapper("KimiK25ForConditionalGeneration"),
        "python/sglang/srt/models/llava.py": wrapper("LlavaForConditionalGeneration"),
        **(extra or {}),
    })
    return root / "python" / "sglang"


def found(path: Path) -> tuple[Path, str]:
    result = find_project(path, PROFILE.workers, PROFILE.exclude)
    return result.root, result.reason


def test_a_file_in_a_namespace_folder_belongs_to_the_package_that_holds_the_workers(tmp_path):
    package = checkout(tmp_path)
    for start in (package / "srt/models/kimi_k25.py", package / "srt/models", package, package / "srt"):
        assert found(start) == (package, "workers"), start


def test_the_nearest_pyproject_with_the_table_wins(tmp_path):
    package = checkout(tmp_path, {"pyproject.toml": "[tool.spec-contract]\nselect = ['SC001']\n"})
    assert found(package / "srt/models/kimi_k25.py") == (tmp_path, "pyproject")


def test_a_sibling_package_takes_the_folder_above_the_package(tmp_path):
    checkout(tmp_path, {"python/sglang_router/__init__.py": "", "python/sglang_router/launch.py": ""})
    assert found(tmp_path / "python/sglang_router/launch.py") == (tmp_path / "python", "workers")


def test_without_workers_the_repository_root_then_out_of_tree(tmp_path):
    make_tree(tmp_path / "repo", {".git/HEAD": "", "pkg/__init__.py": "", "pkg/models/m.py": ""})
    assert found(tmp_path / "repo/pkg/models/m.py") == (tmp_path / "repo", "repository")
    make_tree(tmp_path / "loose", {"mymodels/__init__.py": "", "mymodels/llava.py": ""})
    assert found(tmp_path / "loose/mymodels/llava.py") == (tmp_path / "loose/mymodels", "out-of-tree")
    assert found(tmp_path / "loose") == (tmp_path / "loose", "out-of-tree")


def test_an_environment_folder_is_never_the_project_of_a_package_installed_in_it(tmp_path):
    """``site-packages/mymodels/llava.py`` next to an installed ``sglang``: analysing all of site-packages
    would take minutes; the package alone is checked out-of-tree, against that installed engine."""
    site = tmp_path / "venv/lib/python3.11/site-packages"
    make_tree(site, {"sglang/__init__.py": "", "sglang/srt/speculative/eagle_worker.py": EAGLE_WORKER,
                     "mymodels/__init__.py": "", "mymodels/llava.py": ""})
    assert found(site / "mymodels/llava.py") == (site / "mymodels", "out-of-tree")
    assert found(site / "sglang/srt/speculative") == (site / "sglang", "workers")


def test_a_broken_pyproject_that_names_the_table_is_a_config_error_and_others_are_not_read(tmp_path):
    package = checkout(tmp_path, {"python/sglang/srt/pyproject.toml": "not toml at all ["})
    assert found(package / "srt/models/kimi_k25.py") == (package, "workers")  # it does not mention the tool
    (package / "srt/pyproject.toml").write_text("[tool.spec-contract\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        found(package / "srt/models/kimi_k25.py")


# -- the CLI on a subset -----------------------------------------------------------------------------------

def run(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def reported(result: subprocess.CompletedProcess) -> list[str]:
    """The file and class of each text finding line."""
    lines = [re.match(r"(\S+?):\d+:\d+: (?:error|warning|information|hint) SC\d+ `([^`]+)`", line)
             for line in result.stdout.splitlines()]
    return [f"{m.group(1)} {m.group(2)}" for m in lines if m]


@pytest.mark.parametrize(("cwd", "args", "shown"), [
    ("python/sglang", ["srt/models/kimi_k25.py"], "srt/models/kimi_k25.py"),
    ("python/sglang", ["srt/models"], None),
    ("python/sglang/srt/models", [], None),
    ("python", ["sglang/srt/models/kimi_k25.py"], "sglang/srt/models/kimi_k25.py"),
])
def test_check_reports_only_the_given_paths_with_paths_relative_to_the_working_directory(tmp_path, cwd, args, shown):
    checkout(tmp_path / "repo")
    result = run("check", *args, cwd=tmp_path / "repo" / cwd, cache=tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    classes = reported(result)
    if shown is not None:
        assert set(classes) == {f"{shown} KimiK25ForConditionalGeneration"}
    else:
        prefix = "srt/models/" if args else ""
        assert set(classes) == {f"{prefix}kimi_k25.py KimiK25ForConditionalGeneration",
                                f"{prefix}llava.py LlavaForConditionalGeneration"}
    assert result.stderr == f"spec-contract: project {tmp_path / 'repo/python/sglang'} (holds the profile's workers)\n"


def test_json_names_the_root_and_keeps_paths_relative_to_it(tmp_path):
    package = checkout(tmp_path / "repo")
    result = run("check", "models/kimi_k25.py", "--format", "json", cwd=package / "srt", cache=tmp_path / "c")
    report = json.loads(result.stdout)
    assert report["root"] == str(package)
    assert {f["path"] for f in report["findings"]} == {"srt/models/kimi_k25.py"}
    assert {s["path"] for f in report["findings"] for s in f["call_sites"]} == {"srt/speculative/eagle_worker.py"}


def test_paths_in_two_projects_each_get_their_own(tmp_path):
    first, second = checkout(tmp_path / "a"), checkout(tmp_path / "b")
    (second / "srt/models/kimi_k25.py").write_text(wrapper("KimiK25ForConditionalGeneration", forwards=True))
    result = run("check", str(first / "srt/models/kimi_k25.py"), str(second / "srt/models"), "--format", "json",
                 cwd=tmp_path, cache=tmp_path / "c")
    report = json.loads(result.stdout)
    assert sorted((f["class"], f["method"]) for f in report["findings"]) == [
        ("KimiK25ForConditionalGeneration", "get_embed_and_head"),  # a/: kimi only
        ("KimiK25ForConditionalGeneration", "set_embed_and_head"),
        ("KimiK25ForConditionalGeneration", "set_embed_and_head"),  # b/: its kimi forwards one of the two
        ("LlavaForConditionalGeneration", "get_embed_and_head"),  # b/: llava, in the given folder
        ("LlavaForConditionalGeneration", "set_embed_and_head"),
    ]
    assert {f["path"] for f in report["findings"]} == {"srt/models/kimi_k25.py", "srt/models/llava.py"}
    assert len(result.stderr.splitlines()) == 2


def test_fix_changes_only_the_given_files(tmp_path):
    package = checkout(tmp_path)
    llava_before = (package / "srt/models/llava.py").read_text()
    result = run("check", "--fix", "srt/models/kimi_k25.py", cwd=package, cache=tmp_path / "c")
    assert "Fixed 1 file: added 1 member to 1 class." in result.stdout, result.stdout + result.stderr
    fixed = (package / "srt/models/kimi_k25.py").read_text()
    assert "def get_embed_and_head" in fixed
    assert "def set_embed_and_head" not in fixed  # a warning: fixed only when its code is asked for
    assert (package / "srt/models/llava.py").read_text() == llava_before
    assert run("check", "srt/models/kimi_k25.py", cwd=package, cache=tmp_path / "c").returncode == 0


def test_enable_false_skips_the_project_and_says_so(tmp_path):
    package = checkout(tmp_path, {"pyproject.toml": "[tool.spec-contract]\nenable = false\n"})
    result = run("check", "srt/models", cwd=package, cache=tmp_path / "c")
    assert result.returncode == 0
    assert f"spec-contract: skipped {tmp_path}: enable = false in its [tool.spec-contract]" in result.stderr
    assert " SC0" not in result.stdout


def test_help_states_the_discovery_rule(tmp_path):
    result = run("check", "--help", cwd=tmp_path, cache=tmp_path / "c")
    text = " ".join(result.stdout.split())
    assert "nearest pyproject.toml with a [tool.spec-contract] table" in text
    assert "only the classes defined in the given paths are reported" in text
