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

from engine_trees import CLEAN_WRAPPER, LLAMA, analyze, make_tree
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


def test_a_configured_engine_package_that_names_nothing_in_the_tree_is_one_line_naming_the_layouts(tmp_path):
    # issue 37 item 8: the layout's package is used, and the line says which was configured and which is used
    fork = fork_tree(tmp_path)
    plain = check(fork, tmp_path / "cache")
    for configured in ("nosuch", "vllm"):  # a typo; the profile's own name, which the fork renamed
        (fork / "pyproject.toml").write_text(f'[tool.spec-contract]\nengine-package = "{configured}"\n',
                                             encoding="utf-8")
        config = load_config(fork)
        assert (config.profile, config.engine_package) == ("vllm", "forky")
        result = check(fork, tmp_path / "cache")
        assert result.stderr == (
            f"spec-contract: profile 'vllm', engine package 'forky': engine-package '{configured}' "
            f"({fork / 'pyproject.toml'}) names nothing in the tree, so the layout's is used: forky/ has vLLM's "
            "layout (v1/spec_decode, model_executor/models/registry.py)\n")
        # the findings of the tree left as it was (the last line is the run's time)
        assert (result.returncode, result.stdout.splitlines()[:-1]) == (
            plain.returncode, plain.stdout.splitlines()[:-1])
    # a package the tree has is taken as configured, without a word
    (fork / "pyproject.toml").write_text('[tool.spec-contract]\nengine-package = "forky"\n', encoding="utf-8")
    assert load_config(fork).engine_package == "forky"
    assert "names nothing" not in check(fork, tmp_path / "cache").stderr


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


README = Path(__file__).resolve().parents[2] / "README.md"


def _recipe() -> str:
    """The README's receivers recipe for a fork whose workers name the models differently (the toml block
    after its heading), so the test checks the text a user copies."""
    text = README.read_text(encoding="utf-8")
    after = text.split("**A fork whose workers name the models differently.**", 1)[1]
    return after.split("```toml\n", 1)[1].split("```", 1)[0]


SPEED_FACTORY = """
    def share_embed_and_head(model_runner, draft_model):
        embed, head = model_runner.model.get_embed_and_head()
        draft_model.set_embed_and_head(embed, head)
"""


def test_the_readme_recipe_checks_a_fork_with_its_own_receivers(tmp_path):
    # An SGLang-style fork with its own layout and receiver names: with the README's few lines (its package
    # named), the wrapper that forgets a forward is reported; without them there is no contract at all
    files = {
        "speedy/__init__.py": "", "speedy/runtime/__init__.py": "", "speedy/runtime/execution/__init__.py": "",
        "speedy/runtime/execution/drafter/__init__.py": "", "speedy/runtime/models/__init__.py": "",
        "speedy/runtime/execution/factory.py": SPEED_FACTORY,
        "speedy/runtime/models/llama.py": LLAMA,
        "speedy/runtime/models/llava.py": CLEAN_WRAPPER["pkg/models/llava.py"].replace(
            "pkg.models.llama", "speedy.runtime.models.llama").replace(
            "        def get_embed_and_head(self):\n            return self.language_model.get_embed_and_head()\n\n", ""),
    }
    root = make_tree(tmp_path / "speedy-checkout", files)
    bare = check(root, tmp_path / "cache")
    assert bare.returncode == 2 and "no worker files" in bare.stderr, bare.stderr
    recipe = _recipe().replace('engine-package = "tokenspeed"', 'engine-package = "speedy"')
    (root / "pyproject.toml").write_text(recipe, encoding="utf-8")
    result = check(root, tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    assert "SC001 `LlavaForConditionalGeneration` does not forward `get_embed_and_head`" in result.stdout


def test_a_renamed_copy_whose_code_imports_the_engine_keeps_the_engines_package(tmp_path):
    # vllm_copy/ is vLLM's tree under another folder name, its imports still `from vllm.…`: the engine package
    # stays vllm (the index answers those imports from the copy), and the findings are the original's
    original = vllm_tree(tmp_path / "original")
    copy = tmp_path / "copy" / "vllm_copy"
    for path in (original / "vllm").rglob("*.py"):
        target = copy / path.relative_to(original / "vllm")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    proposer = copy / "v1/spec_decode/eagle.py"  # as vLLM's proposers do, it imports the engine by its name
    proposer.write_text("from vllm.model_executor.models.interfaces import supports_eagle3\n\n\n"
                        + proposer.read_text(encoding="utf-8"), encoding="utf-8")
    config = load_config(copy)
    assert (config.profile, config.engine_package) == ("vllm", "vllm")
    assert codes(analyze(copy)) == codes(analyze(original)) != []
