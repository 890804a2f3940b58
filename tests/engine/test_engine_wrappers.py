"""Wrapper shapes: what a model class provides itself, what its inner model provides, and what it must forward.

Every tree has the EAGLE worker (target ``get_embed_and_head``, draft ``set_embed_and_head``) and
``LlamaForCausalLM`` providing both; each test adds the wrapper shape it is about.
"""

from __future__ import annotations

from engine_trees import CLEAN_WRAPPER, WORKER, analyze, base_tree, findings, line_of

TARGET_SITE = (WORKER, 5, False)
DRAFT_SITE = (WORKER, 6, False)


def missing_both(cls: str, delegate: str = "language_model", inner: str = "LlamaForCausalLM") -> list[tuple]:
    return [
        ("SC001", cls, "get_embed_and_head", ("target",), delegate, inner, "error", (TARGET_SITE,)),
        ("SC005", cls, "set_embed_and_head", ("draft",), delegate, inner, "warning", (DRAFT_SITE,)),
    ]


def test_worker_lines_are_the_ones_the_expectations_name(tmp_path):
    root = base_tree(tmp_path)
    assert line_of(root, WORKER, "get_embed_and_head") == TARGET_SITE[1]
    assert line_of(root, WORKER, "set_embed_and_head") == DRAFT_SITE[1]


def test_language_model_wrapper_missing_forwards_gets_sc001_per_member(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM

        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = LlavaForConditionalGeneration
    """})
    analysis = analyze(root)
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration")
    finding = analysis.findings[0]
    assert finding.path == str(root.resolve() / "pkg/models/llava.py")
    assert (finding.span.line, finding.span.col, finding.span.end_col) == (2, 6, 6 + len("LlavaForConditionalGeneration"))
    assert finding.provider.class_name == "pkg.models.llama.LlamaForCausalLM"
    assert finding.provider.kind == "method"


def test_wrapper_that_forwards_everything_is_clean(tmp_path):
    root = base_tree(tmp_path, CLEAN_WRAPPER)
    analysis = analyze(root)
    assert findings(analysis) == []
    assert [k.qualname for k in analysis.checked] == ["LlamaForCausalLM", "LlavaForConditionalGeneration"]


def test_class_not_listed_in_entry_class_is_not_checked(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM

        class Unregistered:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = [LlavaForConditionalGeneration]
    """})
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_nn_module_members_in_the_workers_are_not_contract(tmp_path):
    root = base_tree(tmp_path, {"pkg/speculative/other_worker.py": """
        class OtherWorker:
            def run(self, batch):
                model = self.target_worker.model_runner.model
                model.eval()
                for p in model.parameters():
                    pass
                return model.forward(batch)
    """})
    analysis = analyze(root)
    assert {(e.role, e.member) for e in analysis.contract.entries} == {
        ("target", "get_embed_and_head"), ("draft", "set_embed_and_head")}


def test_attribute_read_is_a_non_call_contract_entry_and_a_finding(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/speculative/hot_tokens.py": """
            def hot_tokens(draft_runner):
                return draft_runner.model.hot_token_id
        """,
        "pkg/models/llama_eagle.py": """
            class LlamaForCausalLMEagle:
                def __init__(self, config):
                    self.hot_token_id = None

                def set_embed_and_head(self, embed, head):
                    pass
        """,
        "pkg/models/eagle_wrapper.py": """
            from pkg.models.llama_eagle import LlamaForCausalLMEagle

            class WrappedEagle:
                def __init__(self, config):
                    self.model = LlamaForCausalLMEagle(config)

                def set_embed_and_head(self, embed, head):
                    self.model.set_embed_and_head(embed, head)

            EntryClass = WrappedEagle
        """,
    })
    analysis = analyze(root)
    entry = analysis.contract.get("draft", "hot_token_id")
    assert entry is not None and entry.required and not entry.is_call
    assert [(s.member, s.is_call, s.span.line + 1) for s in entry.call_sites] == [("hot_token_id", False, 2)]
    assert findings(analysis) == [
        ("SC001", "WrappedEagle", "hot_token_id", ("draft",), "model", "LlamaForCausalLMEagle", "error",
         (("pkg/speculative/hot_tokens.py", 2, False),)),
    ]
    assert analysis.findings[0].provider.kind == "instance_attribute"


def test_property_alias_of_the_inner_is_a_provided_member(tmp_path):
    """``model`` is a property returning ``self.language_model``: a worker reading ``.model`` is served."""
    root = base_tree(tmp_path, {
        "pkg/speculative/reader.py": """
            def inner_of(draft_runner):
                return draft_runner.model.model
        """,
        "pkg/models/llava.py": """
            from pkg.models.llama import LlamaForCausalLM

            class LlavaForConditionalGeneration:
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)

                @property
                def model(self):
                    return self.language_model

                def get_embed_and_head(self):
                    return self.language_model.get_embed_and_head()

                def set_embed_and_head(self, embed, head):
                    self.language_model.set_embed_and_head(embed, head)

            EntryClass = LlavaForConditionalGeneration
        """,
        "pkg/models/llama.py": """
            class LlamaForCausalLM:
                def __init__(self, config):
                    self.model = object()

                def get_embed_and_head(self):
                    return None, None

                def set_embed_and_head(self, embed, head):
                    pass
        """,
    })
    analysis = analyze(root)
    assert analysis.contract.get("draft", "model") is not None
    assert findings(analysis) == []


def test_forwarding_getattr_provides_what_the_inner_provides(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/shell.py": """
        from pkg.models.llama import LlamaForCausalLM

        class ShellForCausalLM:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

            def __getattr__(self, name):
                return getattr(self.language_model, name)

        EntryClass = ShellForCausalLM
    """})
    assert findings(analyze(root)) == []


def test_optional_inner_chosen_in_branches_reports_the_candidate_that_provides_it(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/vision_text.py": """
            class VisionTextModel:
                def __init__(self, config):
                    self.config = config
        """,
        "pkg/models/multi.py": """
            from pkg.models.llama import LlamaForCausalLM
            from pkg.models.vision_text import VisionTextModel

            class MultiForConditionalGeneration:
                def __init__(self, config):
                    self.language_model = None
                    if config.use_vision_text:
                        self.language_model = VisionTextModel(config)
                    else:
                        self.language_model = LlamaForCausalLM(config)

            EntryClass = MultiForConditionalGeneration
        """,
    })
    assert findings(analyze(root)) == missing_both("MultiForConditionalGeneration")


def test_inner_one_level_deeper_reports_the_dotted_delegate(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/minicpm_mid.py": """
            from pkg.models.llama import LlamaForCausalLM

            class MiniCPMVBase:
                def __init__(self, config):
                    self.llm = LlamaForCausalLM(config)
        """,
        "pkg/models/minicpmv.py": """
            from pkg.models.minicpm_mid import MiniCPMVBase

            class MiniCPMV:
                def __init__(self, config):
                    self.minicpmv = MiniCPMVBase(config)

            EntryClass = MiniCPMV
        """,
    })
    assert findings(analyze(root)) == missing_both("MiniCPMV", delegate="minicpmv.llm")


def test_bases_from_outside_the_tree_provide_nothing_and_do_not_crash(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/hf_wrapper.py": """
        from torch import nn
        from transformers import PreTrainedModel
        import transformers.modeling_utils as mu

        from pkg.models.llama import LlamaForCausalLM

        class HFWrapper(PreTrainedModel, nn.Module, mu.GenerationMixin):
            def __init__(self, config):
                super().__init__(config)
                self.language_model = LlamaForCausalLM(config)

        EntryClass = HFWrapper
    """})
    assert findings(analyze(root)) == missing_both("HFWrapper")


def test_draft_only_class_is_checked_against_the_draft_role_only(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llama_eagle.py": """
        from pkg.models.llama import LlamaForCausalLM

        class LlamaForCausalLMEagle:
            def __init__(self, config):
                self.model = LlamaForCausalLM(config)

        EntryClass = LlamaForCausalLMEagle
    """})
    assert findings(analyze(root)) == [
        ("SC001", "LlamaForCausalLMEagle", "set_embed_and_head", ("draft",), "model", "LlamaForCausalLM", "error",
         (DRAFT_SITE,)),
    ]


WRAPPER_WITH_COMMENT = """
    from pkg.models.llama import LlamaForCausalLM

    {above}
    class LlavaForConditionalGeneration:{same}
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

    EntryClass = LlavaForConditionalGeneration
"""


def _wrapper(above: str = "", same: str = "") -> dict[str, str]:
    return {"pkg/models/llava.py": WRAPPER_WITH_COMMENT.format(above=above, same=same)}


def test_suppression_of_sc001_on_the_class_line(tmp_path):
    root = base_tree(tmp_path, _wrapper(same="  # spec-contract: ignore[SC001, SC005]"))
    assert findings(analyze(root)) == []


def test_suppression_of_sc001_on_the_line_above(tmp_path):
    root = base_tree(tmp_path, _wrapper(above="# spec-contract: ignore[SC001, SC005]"))
    assert findings(analyze(root)) == []


def test_bare_suppression_ignores_every_code(tmp_path):
    root = base_tree(tmp_path, _wrapper(same="  # spec-contract: ignore"))
    assert findings(analyze(root)) == []


def test_suppression_of_another_code_keeps_sc001(tmp_path):
    root = base_tree(tmp_path, _wrapper(same="  # spec-contract: ignore[SC002]"))
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_suppression_two_lines_above_does_not_count(tmp_path):
    root = base_tree(tmp_path, _wrapper(above="# spec-contract: ignore[SC001, SC005]\n"))
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_suppression_above_the_decorators_of_a_decorated_class(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM
        from pkg.registry import register

        # spec-contract: ignore[SC002, SC001, SC005]
        @register("llava")
        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = LlavaForConditionalGeneration
    """})
    assert findings(analyze(root)) == []


def test_members_bound_as_instance_attribute_or_cached_property_are_provided(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from functools import cached_property

        from pkg.models.llama import LlamaForCausalLM

        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)
                self.get_embed_and_head = self.language_model.get_embed_and_head

            @cached_property
            def set_embed_and_head(self):
                return self.language_model.set_embed_and_head

        EntryClass = LlavaForConditionalGeneration
    """})
    assert findings(analyze(root)) == []


def test_each_missing_member_names_the_branch_candidate_that_provides_it(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/qwen.py": """
            class QwenForCausalLM:
                def get_embed_and_head(self):
                    return None, None
        """,
        "pkg/models/llava.py": """
            from pkg.models.llama import LlamaForCausalLM
            from pkg.models.qwen import QwenForCausalLM

            class LlavaForConditionalGeneration:
                def __init__(self, config):
                    if config.text_model_type == "qwen":
                        self.language_model = QwenForCausalLM(config)
                    else:
                        self.language_model = LlamaForCausalLM(config)

            EntryClass = LlavaForConditionalGeneration
        """,
    })
    assert findings(analyze(root)) == [
        ("SC001", "LlavaForConditionalGeneration", "get_embed_and_head", ("target",), "language_model",
         "QwenForCausalLM", "error", (TARGET_SITE,)),
        ("SC005", "LlavaForConditionalGeneration", "set_embed_and_head", ("draft",), "language_model",
         "LlamaForCausalLM", "warning", (DRAFT_SITE,)),
    ]


REGISTRY_WRAPPER = """\
from pkg.registry import ModelRegistry


class RegistryVLM:
    def __init__(self, config):
        language_model_cls = ModelRegistry.resolve_model_cls(config.text_config.architectures)[0]
        self.language_model = language_model_cls(config.text_config)


EntryClass = [RegistryVLM]
"""


def test_inner_chosen_by_the_model_registry_takes_its_candidates_from_the_profile(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/registry.py": "class ModelRegistry:\n    pass\n",
        "pkg/models/vlm.py": REGISTRY_WRAPPER,
        "pyproject.toml": '[tool.spec-contract]\nregistry_candidates = ["pkg.models.llama.LlamaForCausalLM"]\n',
    })
    analysis = analyze(root)
    assert findings(analysis) == missing_both("RegistryVLM")
    assert all("one of the profile's registry candidates" in f.notes[0] for f in analysis.findings)


def test_inner_chosen_by_the_model_registry_without_candidates_gives_no_finding(tmp_path):
    root = base_tree(tmp_path, {"pkg/registry.py": "class ModelRegistry:\n    pass\n",
                                "pkg/models/vlm.py": REGISTRY_WRAPPER})
    assert findings(analyze(root)) == []


def test_inner_class_passed_as_a_parameter_default_is_that_class(tmp_path):
    """The Qwen3-VL shape: ``def __init__(self, config, language_model_cls=Qwen3LLMModel)``."""
    root = base_tree(tmp_path, {"pkg/models/vlm.py": """\
        from pkg.models.llama import LlamaForCausalLM


        class DefaultVLM:
            def __init__(self, config, language_model_cls=LlamaForCausalLM):
                self.language_model = language_model_cls(config)


        EntryClass = [DefaultVLM]
        """})
    assert findings(analyze(root)) == missing_both("DefaultVLM")


def test_a_forward_to_a_language_model_the_config_may_pick_without_the_member_says_so(tmp_path):
    # InternVL-shaped: the checkpoint's config picks the language model, and one of the classes lacks the member
    root = base_tree(tmp_path, {
        "pkg/models/plain.py": """
            class PlainForCausalLM:
                def __init__(self, config):
                    self.lm_head = None
        """,
        "pkg/models/chat.py": """
            from pkg.models.llama import LlamaForCausalLM
            from pkg.models.plain import PlainForCausalLM

            class ChatModel:
                def __init__(self, config):
                    if config.architectures[0] == "LlamaForCausalLM":
                        self.language_model = LlamaForCausalLM(config)
                    else:
                        self.language_model = PlainForCausalLM(config)

            EntryClass = ChatModel
        """,
    })
    analysis = analyze(root)
    finding = next(f for f in analysis.findings if f.class_name == "ChatModel" and f.member == "get_embed_and_head")
    assert (finding.code, finding.delegate, finding.inner_class) == ("SC001", "language_model", "LlamaForCausalLM")
    assert finding.notes == ("`self.language_model` may also be `PlainForCausalLM`, which lacks `get_embed_and_head`: "
                             "with the forward alone, a checkpoint whose language model is that still fails there; "
                             "add `get_embed_and_head` to it too",)
