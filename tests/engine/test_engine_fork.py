"""Engines found by their layout, not their package's name: a fork keeps vLLM's layout under its own package
(aphrodite-engine's ``aphrodite``), gets the vllm profile with its own package as the engine package, and
every dotted class the profile names is read there; one that names nothing is a one-line configuration error
(exit 2), never a check that quietly finds nothing.

The fork is the small vLLM-shaped tree of ``test_engine_vllm`` with ``vllm`` renamed ``forky`` (its folders and
its imports, as a fork renames them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine_trees import analyze
from spec_contract.engine.config import load_config
from test_engine_vllm import INTERFACES, MODELS, codes, vllm_tree


def fork_tree(root: Path, interfaces: str = INTERFACES) -> Path:
    """The vLLM-shaped tree with every ``vllm`` in its paths and texts renamed ``forky``."""
    source = vllm_tree(root / "original", {f"{MODELS}/interfaces.py": interfaces})
    fork = root / "fork"
    for path in source.rglob("*.py"):
        target = fork / path.relative_to(source).as_posix().replace("vllm", "forky")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8").replace("vllm", "forky"), encoding="utf-8")
    return fork


def check(root: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "spec_contract", "check", str(root)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_fork_with_vllms_layout_gets_the_vllm_profile_under_its_own_package(tmp_path):
    fork = fork_tree(tmp_path)
    for where, shown in ((fork, "forky/"), (fork / "forky", "the tree")):  # a checkout, an installed package
        config = load_config(where)
        assert (config.profile, config.engine_package) == ("vllm", "forky")
        assert config.chosen == f"{shown} has vLLM's layout (v1/spec_decode, model_executor/models/registry.py)"
        assert config.capabilities[0].protocol == "forky.model_executor.models.interfaces.SupportsEagle3"
    # the same findings as on the tree it was forked from
    assert codes(analyze(fork)) == codes(analyze(tmp_path / "original")) != []


def test_one_line_says_which_profile_the_fork_got_and_why(tmp_path):
    result = check(fork_tree(tmp_path), tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ("spec-contract: profile 'vllm', engine package 'forky': forky/ has vLLM's layout "
                             "(v1/spec_decode, model_executor/models/registry.py)\n")
    assert "SC006" in result.stdout


def test_a_profile_class_the_fork_does_not_have_is_a_one_line_configuration_error(tmp_path):
    # the fork renamed the Protocol: the capability check would check nothing and pass every class
    renamed = INTERFACES.replace("class SupportsEagle3(", "class SupportsEagleThree(").replace(
        "isinstance(model, SupportsEagle3)", "isinstance(model, SupportsEagleThree)")
    result = check(fork_tree(tmp_path, renamed), tmp_path / "cache")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        "spec-contract: error: the capability EAGLE3's protocol "
        "'forky.model_executor.models.interfaces.SupportsEagle3' names no class in this tree (engine package "
        "'forky', profile 'vllm'); set 'capabilities' in [tool.spec-contract] to the class the engine has\n")


def test_a_tree_named_after_no_engine_and_shaped_like_none_keeps_the_default(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    config = load_config(tmp_path)
    assert (config.profile, config.engine_package, config.chosen) == ("sglang", "sglang", None)
