"""Which roles a class can play comes from the engine's code where the code says it (issue 36, item 6), and every
front end gives the same answer: the worker-line finding (SC011), hover's status, the support matrix.

* draft heads the engine's draft-config rewrite names (SGLang's ``ModelConfig._config_draft_model``), or its
  registry registers only as draft models (vLLM's ``_SPECULATIVE_DECODING_MODELS``), and registered classes
  made from a registered draft head, are drafts only; the profile's globs, which stand in for the rest, match a
  head's name in any capitalisation where a word begins;
* registered classes the engine's generation test refuses are never targets (vLLM's
  ``is_text_generation_model``: ``isinstance`` on a Protocol whose ``compute_logits`` the class lacks), and a
  class it accepts is a target whatever a glob says (a note says which glob the code contradicts);
* registered classes whose ``__init__`` always raises are never built: not checked, listed or counted.

The trees are small and written here: an SGLang-shaped one (``spec_tree``: its worker asks the target for
``get_embed_and_head``) and a vLLM-shaped one whose proposer asks the target for ``get_input_embeddings``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_trees import make_tree
from spec_contract.engine import Analysis, support_matrix
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_tree import check, write_tree
from test_engine_vllm import INTERFACES

# -- SGLang-shaped: the draft rewrite, draft heads by name, a stub -----------------------------------------------

SGLANG_MODELS = """\
class ToyForCausalLMLookahead:
    def __init__(self, config):
        self.layers = []


class ToyRewrittenA:
    pass


class ToyRewrittenB:
    pass


class ToyRewrittenC:
    pass


class ToyRewrittenElsewhere:
    pass


class Qwen9DSparkModel:
    pass


class ToyDsparkDraftModel:
    pass


class DFLASHToyHead:
    pass


class StormtpForCausalLM:
    pass


class ToyPlainModel:
    pass


class ToyCpuStub:
    \"\"\"Registered where the model does not run.\"\"\"

    def __init__(self, config):
        super().__init__()
        raise NotImplementedError("ToyCpuStub does not run on this platform")


class ToyPickyModel:
    def __init__(self, config):
        if config is None:
            raise ValueError("a config is required")
        self.layers = []


class ToyInheritsTheStub(ToyCpuStub):
    pass


class ToyGlimmerAssistant(DFLASHToyHead):  # a checkpoint's own name for the head
    pass


class ToyDsparkMixin:  # not registered: a part, whatever its name
    pass


class ToyMixedModel(ToyDsparkMixin):
    pass


EntryClass = [ToyForCausalLMLookahead, ToyRewrittenA, ToyRewrittenB, ToyRewrittenC, ToyRewrittenElsewhere,
              Qwen9DSparkModel, ToyDsparkDraftModel, DFLASHToyHead, StormtpForCausalLM, ToyPlainModel, ToyCpuStub,
              ToyPickyModel, ToyInheritsTheStub, ToyGlimmerAssistant, ToyMixedModel]
"""
# the rewrite in the shapes SGLang and vLLM write it; the same shape in another method rewrites a target's
MODEL_CONFIG = """\
class ModelConfig:
    def __init__(self, hf_config, is_draft_model=False):
        self.hf_config = hf_config
        self.is_draft_model = is_draft_model

    def _config_draft_model(self):
        is_draft_model = self.is_draft_model
        if is_draft_model and self.hf_config.architectures[0] == "ToyForCausalLM":
            self.hf_config.architectures[0] = "ToyForCausalLMLookahead"
        if is_draft_model and self.hf_config.architectures[0] == "ToyOther":
            architecture = (
                "ToyRewrittenA" if self.hf_config.flag else "ToyRewrittenB"
            )
            self.hf_config.update({"architectures": [architecture]})
        heads = {"toy": "ToyRewrittenC"}
        overrides = {}
        overrides["architectures"] = [heads[self.hf_config.model_type]]

    def _config_target_model(self):
        self.hf_config.architectures[0] = "ToyRewrittenElsewhere"


def is_generation_model(model_architectures, is_embedding=False):
    return not is_embedding
"""
CONFIG_PATH = "srt/configs/model_config.py"
DRAFT_ONLY = {"ToyForCausalLMLookahead", "ToyRewrittenA", "ToyRewrittenB", "ToyRewrittenC", "Qwen9DSparkModel",
              "ToyDsparkDraftModel", "DFLASHToyHead", "ToyGlimmerAssistant"}
TARGETS = {"ToyRewrittenElsewhere", "StormtpForCausalLM", "ToyPlainModel", "ToyPickyModel", "ToyMixedModel"}


def sglang_tree(tmp_path: Path, model_config: str = MODEL_CONFIG) -> Path:
    return write_tree(tmp_path, {"srt/models/toys.py": SGLANG_MODELS, CONFIG_PATH: model_config})


def roles_seen(analysis: Analysis) -> dict[str, str]:
    """Each checked class's role as the matrix and hover's status show it: the first role it serves, "none"
    for a class no run serves (the matrix leaves it out); where the two disagree, both answers."""
    matrix = support_matrix(analysis)
    rows = {row.class_name: str(row.role) for row in matrix.rows} | dict.fromkeys(matrix.left_out, "none")
    out = {}
    for key in analysis.checked:
        status = analysis.status_of(key)
        hover = "no status" if status is None else str(status.serves[0]) if status.serves else "none"
        row = rows.get(key.qualname, "no row")
        out[key.qualname] = row if row == hover else f"matrix {row}, hover {hover}"
    return out


def listed(analysis: Analysis) -> set[str]:
    """The classes the worker-line finding (SC011) lists: the targets that lack the member the line uses."""
    return {c.class_name for f in analysis.findings if f.code == "SC011" for c in f.classes}


def test_draft_heads_the_rewrite_names_and_heads_of_any_capitalisation_are_drafts_only(tmp_path):
    analysis = Project(sglang_tree(tmp_path), load_config(tmp_path / "sglang"), use_cache=False).analyze()
    # the draft heads are never targets in the matrix or hover, nor listed where a target's missing
    # get_embed_and_head crashes the run; the stubs are nowhere
    assert roles_seen(analysis) == {**dict.fromkeys(DRAFT_ONLY, "draft"), **dict.fromkeys(TARGETS, "target"),
                                    "LlamaForCausalLM": "target"}
    assert listed(analysis) == TARGETS
    assert not {"ToyCpuStub", "ToyInheritsTheStub"} & {key.qualname for key in analysis.checked}
    assert analysis.notes == ()


@pytest.mark.parametrize("written", ["_LOOKAHEAD[arch]", "_LOOKAHEAD.get(arch, arch)"],
                         ids=["an item of a module's table", "the table's get"])
def test_a_rewrite_grown_into_a_module_level_table_names_its_heads_too(tmp_path, written):
    """A chain of ``if``s refactored into a table at the module's top level: its values are still the heads the
    engine loads a draft checkpoint as."""
    chain = ('        if is_draft_model and self.hf_config.architectures[0] == "ToyForCausalLM":\n'
             '            self.hf_config.architectures[0] = "ToyForCausalLMLookahead"\n')
    table = MODEL_CONFIG.replace(chain, "        arch = self.hf_config.architectures[0]\n"
                                        "        if is_draft_model and arch in _LOOKAHEAD:\n"
                                        f"            self.hf_config.architectures[0] = {written}\n")
    table = '_LOOKAHEAD = {"ToyForCausalLM": "ToyForCausalLMLookahead"}\n\n\n' + table
    assert chain in MODEL_CONFIG and chain not in table
    analysis = Project(sglang_tree(tmp_path, table), load_config(tmp_path / "sglang"), use_cache=False).analyze()
    assert roles_seen(analysis)["ToyForCausalLMLookahead"] == "draft"
    assert listed(analysis) == TARGETS


def test_a_class_never_built_is_not_checked_and_a_tree_without_the_rewrite_module_uses_the_globs(tmp_path):
    root = write_tree(tmp_path, {"srt/models/toys.py": SGLANG_MODELS})  # no srt/configs/ at all: nothing to read
    listed = sc011(root)
    assert listed == {"ToyForCausalLMLookahead", "ToyRewrittenA", "ToyRewrittenB", "ToyRewrittenC"} | TARGETS


def test_a_rewrite_the_tree_lacks_is_a_note_and_the_globs_stand_in(tmp_path):
    renamed = MODEL_CONFIG.replace("def _config_draft_model(", "def _configure_the_draft(")
    result = check(tmp_path, "--format", "json", "--no-cache", sglang_tree(tmp_path, renamed).name)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["stats"]["notes"] == [
        "the draft rewrite 'sglang.srt.configs.model_config.ModelConfig._config_draft_model' names no function in "
        "this tree: draft heads are told by 'draft-only-classes' alone; set 'draft-rewrites' in [tool.spec-contract] "
        "to the functions that rewrite a draft checkpoint's architecture, or to [] if there are none"]


def sc011(root: Path, cache: bool = False) -> set[str]:
    """The classes the worker-line finding says crash as the target, from ``check --format json``."""
    result = check(root.parent, "--format", "json", *([] if cache else ["--no-cache"]), root.name)
    assert result.returncode in (0, 1), result.stderr
    return {c["class"] for f in json.loads(result.stdout)["findings"] if f["code"] == "SC011" for c in f["classes"]}


def test_edits_of_the_rewrite_and_of_a_constructor_change_the_roles_in_an_editor_and_on_a_warm_cache(tmp_path):
    root = sglang_tree(tmp_path)
    cached = sc011(root, cache=True)
    assert cached == sc011(root, cache=True) == sc011(root) == TARGETS  # warm = cold
    config_path, models_path = root / CONFIG_PATH, root / "srt/models/toys.py"
    named_plain = MODEL_CONFIG.replace('"ToyRewrittenC"', '"ToyPlainModel"')
    stubbed = SGLANG_MODELS.replace('            raise ValueError("a config is required")\n',
                                    '            pass\n        raise ValueError("never")\n')
    project = Project(root, load_config(root), use_cache=False)

    def crashing() -> set[str]:
        return listed(project.analyze())

    assert crashing() == TARGETS
    project.set_overlay(str(config_path.resolve()), named_plain)
    assert crashing() == TARGETS - {"ToyPlainModel"} | {"ToyRewrittenC"}
    project.set_overlay(str(models_path.resolve()), stubbed)
    assert crashing() == TARGETS - {"ToyPlainModel", "ToyPickyModel"} | {"ToyRewrittenC"}
    # the same edits on disk, read by a run that starts from the saved results
    config_path.write_text(named_plain, encoding="utf-8")
    models_path.write_text(stubbed, encoding="utf-8")
    assert sc011(root, cache=True) == sc011(root) == TARGETS - {"ToyPlainModel", "ToyPickyModel"} | {"ToyRewrittenC"}


# -- vLLM-shaped: the generation Protocol, the draft table, a per-platform stub ---------------------------------

MODELS = "vllm/model_executor/models"
INTERFACES_BASE = """
    from typing import Generic, Protocol, TypeVar, overload, runtime_checkable

    T = TypeVar("T")


    class VllmModel(Protocol[T]):
        def embed_input_ids(self, input_ids):
            ...


    class VllmModelForPooling(VllmModel[T], Protocol[T]):
        is_pooling_model = True


    class LogitsFromGeneric(Generic[T]):
        def compute_logits(self, hidden_states):
            return hidden_states


    @runtime_checkable
    class VllmModelForTextGeneration(VllmModel[T], Protocol[T]):
        def compute_logits(self, hidden_states):
            ...


    @overload
    def is_text_generation_model(model: type) -> bool: ...


    @overload
    def is_text_generation_model(model: object) -> bool: ...


    def is_text_generation_model(model):
        if isinstance(model, type):
            return isinstance(model, VllmModelForTextGeneration)
        return isinstance(model, VllmModelForTextGeneration)
"""
VLLM_REGISTRY = """
    _TEXT_GENERATION_MODELS = {
        "ToyForCausalLM": ("toy", "ToyForCausalLM"),
        "ToyEncoderModel": ("toy", "ToyEncoderModel"),
        "ToyForSequenceClassification": ("toy", "ToyForSequenceClassification"),
        "Eagle9VLForConditionalGeneration": ("toy", "Eagle9VLForConditionalGeneration"),
        "ToyMadeModel": ("toy", "ToyMadeModel"),
        "ToyPlatformModel": ("toy_platform", "ToyPlatformModel"),
        "ToyPoolingModel": ("toy", "ToyPoolingModel"),
        "ToyGenericModel": ("toy", "ToyGenericModel"),
    }
    _SPECULATIVE_DECODING_MODELS = {
        "ToyLookaheadModel": ("toy_heads", "ToyLookahead"),
        "ToyForCausalLMAsDraft": ("toy", "ToyForCausalLM"),
    }
"""
TOY = """
    import torch.nn as nn

    from .interfaces_base import LogitsFromGeneric, VllmModelForPooling
    from .utils import make_base


    class ToyForCausalLM(nn.Module):
        def compute_logits(self, hidden_states):
            return hidden_states

        def get_input_embeddings(self):
            return None


    class ToyEncoderModel(nn.Module):
        pass


    class ToyForSequenceClassification(nn.Module):
        def compute_logits(self, hidden_states):
            return hidden_states


    class Eagle9VLForConditionalGeneration(nn.Module):
        def compute_logits(self, hidden_states):
            return hidden_states


    class ToyMadeModel(make_base()):
        pass


    class ToyPoolingModel(nn.Module, VllmModelForPooling[int]):
        pass


    class ToyGenericModel(nn.Module, LogitsFromGeneric[int]):
        pass
"""
HEADS = """
    import torch.nn as nn


    class ToyLookahead(nn.Module):
        def compute_logits(self, hidden_states):
            return hidden_states
"""
PLATFORM_PACKAGE = """
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        from .cpu import ToyPlatformModel
    else:
        from .gpu import ToyPlatformModel
"""
PLATFORM_GPU = """
    import torch.nn as nn


    class ToyPlatformModel(nn.Module):
        def compute_logits(self, hidden_states):
            return hidden_states
"""
PLATFORM_CPU = """
    import torch.nn as nn


    class ToyPlatformModel(nn.Module):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            raise NotImplementedError("ToyPlatformModel is not implemented on CPU.")
"""
PROPOSER = """
    class EagleProposer:
        def load_model(self, target_model):
            self.embeddings = target_model.get_input_embeddings()
"""


def vllm_roles_tree(root: Path) -> Path:
    return make_tree(root, {
        "vllm/__init__.py": "", "vllm/model_executor/__init__.py": "", f"{MODELS}/__init__.py": "",
        f"{MODELS}/interfaces.py": INTERFACES, f"{MODELS}/interfaces_base.py": INTERFACES_BASE,
        f"{MODELS}/registry.py": VLLM_REGISTRY,
        f"{MODELS}/utils.py": "def make_base():\n    return object\n", f"{MODELS}/toy.py": TOY,
        f"{MODELS}/toy_heads.py": HEADS, f"{MODELS}/toy_platform/__init__.py": PLATFORM_PACKAGE,
        f"{MODELS}/toy_platform/gpu.py": PLATFORM_GPU, f"{MODELS}/toy_platform/cpu.py": PLATFORM_CPU,
        "vllm/v1/__init__.py": "", "vllm/v1/spec_decode/__init__.py": "", "vllm/v1/spec_decode/eagle.py": PROPOSER,
    })


def test_the_engines_generation_protocol_and_draft_table_decide_the_roles_before_the_globs(tmp_path):
    root = vllm_roles_tree(tmp_path)
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    assert load_config(root).profile == "vllm"
    assert roles_seen(analysis) == {
        "ToyForCausalLM": "target",  # registered as a draft too, but not only
        "ToyEncoderModel": "none",  # no compute_logits: `--runner generate` refuses it
        "ToyForSequenceClassification": "target",  # a non-target glob's shape, but the Protocol accepts it
        "Eagle9VLForConditionalGeneration": "target",  # a draft head's shape, but the Protocol accepts it
        "ToyMadeModel": "target",  # its base is made at run time: the Protocol cannot tell, it stays a target
        "ToyPoolingModel": "none",  # its bases' type arguments hide VllmModel from the MRO, which lacks it too
        "ToyGenericModel": "target",  # its compute_logits comes from a base written with type arguments
        "ToyLookahead": "draft",  # registered only as a draft model
        "ToyPlatformModel": "target",  # the GPU's: the CPU's constructor raises, it is never built
    }
    # each target but ToyForCausalLM lacks get_input_embeddings
    assert listed(analysis) == {"ToyForSequenceClassification", "Eagle9VLForConditionalGeneration", "ToyMadeModel",
                                "ToyPlatformModel", "ToyGenericModel"}
    assert [key.module.rsplit(".", 1)[1] for key in analysis.checked if key.qualname == "ToyPlatformModel"] == ["gpu"]
    assert analysis.notes == (
        "'draft-only-classes' names Eagle9VLForConditionalGeneration, but the engine's generation test accepts it "
        "as a model it serves: checked as the target too",
        "'non-target-classes' names ToyForSequenceClassification, but the engine's generation test accepts it as a "
        "model it serves: checked as the target too")


def test_an_edit_that_gives_a_class_the_protocols_member_makes_it_a_target_in_an_editor_and_on_a_warm_cache(
        tmp_path):
    root = vllm_roles_tree(tmp_path)
    targets = {"ToyForSequenceClassification", "Eagle9VLForConditionalGeneration", "ToyMadeModel", "ToyPlatformModel",
               "ToyGenericModel"}
    assert sc011(root, cache=True) == sc011(root, cache=True) == sc011(root) == targets
    toy = root / MODELS / "toy.py"
    generating = toy.read_text(encoding="utf-8").replace(
        "class ToyEncoderModel(nn.Module):\n    pass\n",
        "class ToyEncoderModel(nn.Module):\n    def compute_logits(self, hidden_states):\n        return None\n")
    project = Project(root, load_config(root), use_cache=False)

    def crashing() -> set[str]:
        return listed(project.analyze())

    assert crashing() == targets
    project.set_overlay(str(toy.resolve()), generating)
    assert crashing() == targets | {"ToyEncoderModel"}
    toy.write_text(generating, encoding="utf-8")
    assert sc011(root, cache=True) == sc011(root) == targets | {"ToyEncoderModel"}


def test_an_edit_that_judges_no_class_again_keeps_the_roles_read_and_one_that_changes_a_verdict_reads_them_again(
        tmp_path):
    """The roles are made from every class's verdict: an analysis after an edit that judges no class again (a
    comment: the editor's usual keystroke) keeps them as they were, without making them again; one after an
    edit that gives a class the Protocol's member makes them again, with the class a target."""
    root = vllm_roles_tree(tmp_path)
    toy = (root / MODELS / "toy.py").resolve()
    text = toy.read_text(encoding="utf-8")
    project = Project(root, load_config(root), use_cache=False)
    project.set_overlay(str(toy), text)  # open in the editor
    first = project.analyze().config.read_roles
    assert first is not None and "ToyEncoderModel" in first.never_targets

    project.set_overlay(str(toy), text + "# a comment\n")
    assert project.analyze().config.read_roles is first

    project.set_overlay(str(toy), text.replace(
        "class ToyEncoderModel(nn.Module):\n    pass\n",
        "class ToyEncoderModel(nn.Module):\n    def compute_logits(self, hidden_states):\n        return None\n"))
    again = project.analyze().config.read_roles
    assert again is not None and "ToyEncoderModel" in again.targets and "ToyEncoderModel" not in again.never_targets
