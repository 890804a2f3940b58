"""The classes the engine's own generation test never serves are never targets: the profile names the function
(``generation-test``), the engine reads the architectures its False branch tests, statically, and a path that
names no function of the tree is a one-line configuration error.

The tree is the small SGLang-shaped one of ``spec_tree`` (its worker asks the target for
``get_embed_and_head``) with two registered encoders that lack it, and a ``model_config.py`` of its own whose
``is_generation_model`` names one of them in the shape SGLang writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_tree import check, write_tree

ENCODERS = """\
class ToyEncoderModel:
    def __init__(self, config):
        self.layers = []


class ToyScorer:
    def __init__(self, config):
        self.layers = []


EntryClass = [ToyEncoderModel, ToyScorer]
"""
MODEL_CONFIG = '''\
import os


def is_generation_model_before(model_architectures):  # another function, whose name only starts the same
    if "ToyScorer" in model_architectures:
        return False


def is_generation_model(
    model_architectures: list[str], is_embedding: bool = False
):
    # the architecture decides, then the server argument
# a comment in the first column does not end the function
    if (
        "ToyEncoderModel" in model_architectures
        or "NotInThisTree" in model_architectures
    ):
        return False
    if "ToyScorer" not in model_architectures and os.environ.get("X"):  # no False branch: tests nothing
        return True
    else:
        return not is_embedding


def is_multimodal_model(model_architectures):
    if "ToyScorer" in model_architectures:
        return False
    return True
'''
CONFIG_PATH = "srt/configs/model_config.py"


def listed(root: Path, cache: bool = False) -> set[str]:
    """The classes the worker-line finding (SC011) says crash at the target's ``get_embed_and_head``."""
    result = check(root.parent, "--format", "json", *([] if cache else ["--no-cache"]), root.name)
    assert result.returncode in (0, 1), result.stderr
    return {c["class"] for f in json.loads(result.stdout)["findings"] if f["code"] == "SC011"
            for c in f["classes"]}


def test_the_classes_the_generation_test_refuses_are_never_targets(tmp_path):
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: MODEL_CONFIG})
    assert load_config(root).generation_test == "sglang.srt.configs.model_config.is_generation_model"
    # ToyScorer is in a False branch of another function only, and in a test whose branch returns True
    assert listed(root) == {"ToyScorer"}


@pytest.mark.parametrize("test", [
    "any(architecture in _NOT_GENERATIVE for architecture in model_architectures)",
    "model_architectures[0] in _NOT_GENERATIVE",
    "set(model_architectures) & _NOT_GENERATIVE",
    'model_architectures[0] in {"ToyEncoderModel", "NotInThisTree"}',
], ids=["any of a module's collection", "the first in it", "an intersection with it", "the first in a set"])
def test_the_list_grown_into_a_collection_still_names_the_refused(tmp_path, test):
    """SGLang's chain of ``"A" in model_architectures or …`` (sixteen names in 0.5.16) written over a
    collection, in place or at the module's top: its names are still the architectures never served."""
    chain = ('        "ToyEncoderModel" in model_architectures\n'
             '        or "NotInThisTree" in model_architectures\n')
    config = MODEL_CONFIG.replace(chain, f"        {test}\n").replace(
        "import os\n", 'import os\n\n_NOT_GENERATIVE = frozenset({"ToyEncoderModel", "NotInThisTree"})\n')
    assert chain in MODEL_CONFIG and chain not in config
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: config})
    assert listed(root) == {"ToyScorer"}


def test_without_the_function_the_encoder_is_a_target_again(tmp_path):
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: MODEL_CONFIG})
    (tmp_path / "pyproject.toml").write_text('[tool.spec-contract]\ngeneration-test = ""\n', encoding="utf-8")
    assert listed(root) == {"ToyEncoderModel", "ToyScorer"}


def test_a_generation_test_its_package_lacks_is_a_one_line_configuration_error(tmp_path):
    renamed = MODEL_CONFIG.replace("def is_generation_model(", "def is_generative(")
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: renamed})
    result = check(tmp_path, root.name)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        "spec-contract: error: the generation-test 'sglang.srt.configs.model_config.is_generation_model' names "
        "no function in this tree (engine package 'sglang', profile 'sglang'); set 'generation-test' in "
        "[tool.spec-contract] to the function the engine has, or to \"\" if it has none\n")


def test_an_edit_of_the_generation_test_checks_every_class_again(tmp_path):
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: MODEL_CONFIG})
    project = Project(root, load_config(root), use_cache=False)

    def crashing() -> set[str]:
        return {c.class_name for f in project.analyze().findings if f.code == "SC011"
                for c in f.classes}

    assert crashing() == {"ToyScorer"}
    path = str((root / CONFIG_PATH).resolve())
    project.set_overlay(path, MODEL_CONFIG.replace('"NotInThisTree"', '"ToyScorer"'))
    assert crashing() == set()
    project.set_overlay(path, MODEL_CONFIG.replace('"ToyEncoderModel" in', '"Other" in'))
    assert crashing() == {"ToyEncoderModel", "ToyScorer"}


def test_a_tree_without_the_functions_package_is_checked_with_the_globs_alone(tmp_path):
    # a partial checkout: no srt/configs/ at all, so nothing to read and nothing moved
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS})
    assert listed(root) == {"ToyEncoderModel", "ToyScorer"}


def test_a_cached_run_after_the_function_changed_on_disk_checks_every_class_again(tmp_path):
    # the saved results were checked with the old names: the next run compares them and checks again
    root = write_tree(tmp_path, {"srt/models/encoders.py": ENCODERS, CONFIG_PATH: MODEL_CONFIG})
    assert listed(root, cache=True) == listed(root, cache=True) == {"ToyScorer"}
    (root / CONFIG_PATH).write_text(MODEL_CONFIG.replace('"NotInThisTree"', '"ToyScorer"'), encoding="utf-8")
    assert listed(root, cache=True) == set()
    (root / CONFIG_PATH).write_text(MODEL_CONFIG.replace('"ToyEncoderModel" in', '"Other" in'), encoding="utf-8")
    assert listed(root, cache=True) == {"ToyEncoderModel", "ToyScorer"}
