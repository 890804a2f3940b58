"""Inner models the tree pins down though no ``self.<attr> = <Class>(...)`` names them (issue 20 item 4):
a local that names a class, a class passed up to a base's ``__init__``, a factory method that builds a class
attribute or a local class, architecture names given through a local or a nested call, and a base's
``__init__`` that an override never calls up to (its assignments never run). Each fixture is a small tree
of our own in the shape the real one has."""

from __future__ import annotations

from engine_trees import analyze, base_tree, findings
from spec_contract.engine import role_classes
from spec_contract.engine.resolve.index import ClassKey
from test_engine_more_shapes import llava, missing_both
from test_engine_vllm import MODELS, vllm_tree

TEXT_MODELS = """
    class TextModel:
        def forward(self, x):
            return x


    class MoeTextModel:
        def get_embed_and_head(self):
            return None, None

        def set_embed_and_head(self, embed, head):
            pass
"""


def inners(analysis, module: str, cls: str, attr: str) -> list[str]:
    return [k.qualname for k in analysis.index.delegates(ClassKey(module, cls)).get(attr, ())]


def test_a_local_assigned_a_class_and_then_called_builds_that_class(tmp_path):
    root = base_tree(tmp_path, llava("        body_cls = LlamaForCausalLM\n"
                                     "        self.language_model = body_cls(config)\n"))
    assert findings(analyze(root)) == missing_both()


def test_a_local_chosen_between_classes_builds_either(tmp_path):
    files = {"pkg/models/text.py": TEXT_MODELS, **llava(
        "        body_cls = MoeTextModel if config.moe else TextModel\n"
        "        if config.big:\n"
        "            body_cls = LlamaForCausalLM\n"
        "        self.language_model = body_cls(config)\n",
        imports="from pkg.models.llama import LlamaForCausalLM\nfrom pkg.models.text import MoeTextModel, TextModel")}
    analysis = analyze(base_tree(tmp_path, files))
    assert inners(analysis, "pkg.models.llava", "LlavaForConditionalGeneration", "language_model") == [
        "MoeTextModel", "TextModel", "LlamaForCausalLM"]


def test_a_class_passed_up_by_keyword_is_the_inner_of_the_subclass(tmp_path):
    """The Qwen3-Omni thinker shape: ``super().__init__(config, language_model_cls=Qwen3MoeLLMModel)``."""
    models = TEXT_MODELS + """

    class VLBase:
        def __init__(self, config, language_model_cls=TextModel):
            self.model = language_model_cls(config)


    class Thinker(VLBase):
        def __init__(self, config):
            super().__init__(config, language_model_cls=MoeTextModel)


    EntryClass = [VLBase, Thinker]
    """
    analysis = analyze(base_tree(tmp_path, {"pkg/models/vl.py": models}))
    assert inners(analysis, "pkg.models.vl", "VLBase", "model") == ["TextModel"]
    assert inners(analysis, "pkg.models.vl", "Thinker", "model") == ["MoeTextModel"]
    assert [(f[0], f[1], f[2], f[5]) for f in findings(analysis)] == [
        ("SC001", "Thinker", "get_embed_and_head", "MoeTextModel"), ("SC005", "Thinker", "set_embed_and_head", "MoeTextModel")]


def test_an_init_model_factory_builds_the_most_derived_class_attribute(tmp_path):
    """``self.model = self._init_model(config)`` whose ``_init_model`` builds ``self.model_cls`` (or a local
    class): a subclass that sets its own ``model_cls`` gets that one."""
    models = TEXT_MODELS + """

    class Base:
        model_cls = TextModel

        def __init__(self, config):
            self.model = self._init_model(config)

        def _init_model(self, config):
            return self.model_cls(config)


    class Moe(Base):
        model_cls = MoeTextModel


    class Local(Base):
        def _init_model(self, config):
            body_cls = MoeTextModel
            return body_cls(config)


    EntryClass = [Base, Moe, Local]
    """
    analysis = analyze(base_tree(tmp_path, {"pkg/models/init.py": models}))
    assert {cls: inners(analysis, "pkg.models.init", cls, "model") for cls in ("Base", "Moe", "Local")} == {
        "Base": ["TextModel"], "Moe": ["MoeTextModel"], "Local": ["MoeTextModel"]}


def test_an_override_that_never_calls_up_leaves_the_base_assignments_unrun(tmp_path):
    """``super(Base, self).__init__()`` skips ``Base.__init__`` (vLLM's Qwen3-VL-MoE), and an ``__init__`` with
    no call up runs none: the base's language model is not the subclass's."""
    models = TEXT_MODELS + """

    class Base:
        def __init__(self, config):
            self.language_model = MoeTextModel(config)


    class Skips(Base):
        def __init__(self, config):
            super(Base, self).__init__()
            self.language_model = TextModel(config)


    class Calls(Base):
        def __init__(self, config):
            super().__init__(config)
            self.language_model = TextModel(config)


    class Explicit(Base):
        def __init__(self, config):
            Base.__init__(self, config)


    class Silent(Base):
        def __init__(self, config):
            self.config = config


    EntryClass = [Base, Skips, Calls, Explicit, Silent]
    """
    analysis = analyze(base_tree(tmp_path, {"pkg/models/up.py": models}))
    assert {cls: inners(analysis, "pkg.models.up", cls, "language_model")
            for cls in ("Skips", "Calls", "Explicit", "Silent")} == {
        "Skips": ["TextModel"], "Calls": ["TextModel", "MoeTextModel"], "Explicit": ["MoeTextModel"], "Silent": []}
    assert sorted({f[1] for f in findings(analysis)}) == ["Base", "Calls", "Explicit"]


def wrapper(build: str) -> str:
    """A vLLM wrapper whose language model the registry builds from what ``build`` (its ``__init__`` body,
    8-space indented) passes to ``init_vllm_registered_model``."""
    return f"""
import torch.nn as nn

from .utils import init_vllm_registered_model


class Wrapper(nn.Module):
    def __init__(self, *, vllm_config, prefix=""):
        super().__init__()
{build}
"""


def test_architectures_given_through_a_local_list_or_a_nested_config_call(tmp_path):
    """``architectures = [...]`` per branch, then ``architectures=architectures`` (vLLM's GLM-4.1V);
    ``vllm_config.with_hf_config(config, architectures=[...])`` as the config (Kimi-Audio), directly or
    through a local; a literal list passed as any other argument names no architecture."""
    shapes = {
        "branches": "        if vllm_config.moe:\n"
                    "            architectures = ['PlainForCausalLM']\n"
                    "        elif vllm_config.tiny:\n"
                    "            architectures = ['TinyForCausalLM']\n"
                    "        else:\n"
                    "            architectures = None\n"
                    "        self.language_model = init_vllm_registered_model(vllm_config, architectures=architectures)\n",
        "nested": "        self.language_model = init_vllm_registered_model(\n"
                  "            vllm_config=vllm_config.with_hf_config(vllm_config.text, architectures=['TinyForCausalLM']))\n",
        "local": "        vllm_config = vllm_config.with_hf_config(vllm_config.text, architectures=['PlainForCausalLM'])\n"
                 "        self.language_model = init_vllm_registered_model(vllm_config=vllm_config, prefix='lm')\n",
        "other": "        self.language_model = init_vllm_registered_model(vllm_config, skip=['TinyForCausalLM'])\n",
    }
    files = {f"{MODELS}/w_{name}.py": wrapper(build) for name, build in shapes.items()}
    analysis = analyze(vllm_tree(tmp_path, files))
    got = {name: inners(analysis, f"vllm.model_executor.models.w_{name}", "Wrapper", "language_model")
           for name in shapes}
    assert got == {"branches": ["PlainForCausalLM", "TinyForCausalLM"], "nested": ["TinyForCausalLM"],
                   "local": ["PlainForCausalLM"], "other": []}


def test_the_classes_that_can_play_a_role_include_the_language_models_of_registered_ones(tmp_path):
    """``Qwen3_5ForCausalLM`` in no entry class, built by the Qwen3.5 wrappers: a language model with its own
    head is asked the whole contract; a decoder its holder hands members to is asked those; a decoder held
    beside the class's own head, and a vision tower, play no role."""
    models = """
        class Decoder:
            pass


        class Vision:
            def get_embed_and_head(self):
                return None, None


        class TextLM:
            def __init__(self, config):
                self.model = Decoder()
                self.lm_head = object()

            def get_embed_and_head(self):
                return self.model.get_embed_and_head()


        class VLM:
            def __init__(self, config):
                self.vision_tower = Vision()
                self.language_model = TextLM(config)


        class Plain:
            def __init__(self, config):
                self.model = Decoder()
                self.lm_head = object()


        EntryClass = [VLM, Plain]
    """
    analysis = analyze(base_tree(tmp_path, {"pkg/models/vlm.py": models}))
    roles = role_classes(analysis.index, analysis.checked, analysis.config, analysis.contract.members())
    named = [(r.key.qualname, r.wrapper.qualname if r.wrapper else None, r.attr, sorted(r.handed)) for r in roles
             if r.key.module == "pkg.models.vlm"]
    assert named == [("VLM", None, "", []), ("Plain", None, "", []),
                     ("TextLM", "VLM", "language_model", []),
                     ("Decoder", "VLM", "language_model.model", ["get_embed_and_head"])]
