"""Further shapes from the design card's list, beyond the basic one per feature: variants of delegates,
guards and flow that real wrappers and workers use."""

from __future__ import annotations

from engine_trees import WORKER, analyze, base_tree, contract, findings, line_of
from spec_contract.engine.config import load_config
from spec_contract.engine.edits.fix import delegation_edits
from spec_contract.engine.project import Project

TARGET_SITE = (WORKER, 5, False)
DRAFT_SITE = (WORKER, 6, False)


def missing_both(cls: str = "LlavaForConditionalGeneration", delegate: str = "language_model",
                 inner: str = "LlamaForCausalLM") -> list[tuple]:
    return [
        ("SC001", cls, "get_embed_and_head", ("target",), delegate, inner, "error", (TARGET_SITE,)),
        ("SC005", cls, "set_embed_and_head", ("draft",), delegate, inner, "warning", (DRAFT_SITE,)),
    ]


def llava(init_body: str, extra: str = "", imports: str = "from pkg.models.llama import LlamaForCausalLM") -> dict:
    """A wrapper whose ``__init__`` body (8-space indented lines) and further class body vary."""
    return {"pkg/models/llava.py": f"""
{imports}


class LlavaForConditionalGeneration:
    def __init__(self, config):
{init_body}
{extra}

EntryClass = LlavaForConditionalGeneration
"""}


# delegates ----------------------------------------------------------------------------------------

def test_annotated_optional_delegate_assigned_later_in_another_method(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model: Optional[LlamaForCausalLM] = None\n",
        "    def init_language_model(self, config):\n"
        "        self.language_model: LlamaForCausalLM = LlamaForCausalLM(config)\n",
        imports="from typing import Optional\n\nfrom pkg.models.llama import LlamaForCausalLM"))
    assert findings(analyze(root)) == missing_both()


def test_delegate_assigned_by_a_conditional_expression(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = LlamaForCausalLM(config) if config.has_text else None\n"))
    assert findings(analyze(root)) == missing_both()


def test_delegate_of_unknown_class_gives_no_finding(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = AutoModel.from_config(config.text_config)\n",
        imports="from transformers import AutoModel"))
    assert findings(analyze(root)) == []


def test_delegate_built_by_a_factory_method_is_followed(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = self.build_language_model(config)\n",
        "    def build_language_model(self, config):\n"
        "        model = LlamaForCausalLM(config)\n"
        "        return model\n"))
    assert findings(analyze(root)) == missing_both()


def test_factory_method_overridden_in_the_registered_subclass_decides_the_inner(tmp_path):
    """MiniCPM's shape: the base's __init__ calls self.init_llm(), each version overrides it."""
    root = base_tree(tmp_path, {"pkg/models/llava.py": """\
        from pkg.models.llama import LlamaForCausalLM


        class Base:
            def __init__(self, config):
                self.language_model = self.init_llm(config)

            def init_llm(self, config):
                return None


        class LlavaForConditionalGeneration(Base):
            def init_llm(self, config):
                return LlamaForCausalLM(config)


        EntryClass = [LlavaForConditionalGeneration]
        """})
    assert findings(analyze(root)) == missing_both()


def test_member_provided_as_a_class_attribute_counts(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = LlamaForCausalLM(config)\n",
        "    get_embed_and_head = LlamaForCausalLM.get_embed_and_head\n"
        "    set_embed_and_head = LlamaForCausalLM.set_embed_and_head\n"))
    assert findings(analyze(root)) == []


def test_getattr_that_tries_super_first_then_forwards_to_the_inner(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = LlamaForCausalLM(config)\n",
        "    def __getattr__(self, name):\n"
        "        try:\n"
        "            return super().__getattr__(name)\n"
        "        except AttributeError:\n"
        "            return getattr(self.language_model, name)\n"))
    assert findings(analyze(root)) == []


def test_getattr_that_only_raises_provides_nothing(tmp_path):
    root = base_tree(tmp_path, llava(
        "        self.language_model = LlamaForCausalLM(config)\n",
        "    def __getattr__(self, name):\n"
        "        raise AttributeError(name)\n"))
    assert findings(analyze(root)) == missing_both()


def test_wrapper_subclassing_its_inner_class_provides_everything(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM

        class LlavaForConditionalGeneration(LlamaForCausalLM):
            def __init__(self, config):
                super().__init__(config)
                self.language_model = LlamaForCausalLM(config)

        EntryClass = LlavaForConditionalGeneration
    """})
    assert findings(analyze(root)) == []


def test_delegate_set_in_a_base_class_of_the_wrapper(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/vlm_base.py": """
            from pkg.models.llama import LlamaForCausalLM

            class VLMBase:
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)
        """,
        "pkg/models/llava.py": """
            from pkg.models.vlm_base import VLMBase

            class LlavaForConditionalGeneration(VLMBase):
                pass

            EntryClass = LlavaForConditionalGeneration
        """,
    })
    assert findings(analyze(root)) == missing_both()


def test_a_forward_the_call_s_arguments_do_not_fit_is_not_offered_and_stays_one_sc001(tmp_path):
    """The inner's method takes no argument and the worker passes one: a forward would fail there too, so the
    finding says so and offers no edit (item 8 of issue 36), and no model's body takes the argument either; the
    run still crashes at that line, so it stays the one SC001."""
    root = base_tree(tmp_path, {
        WORKER: """
            class EAGLEWorker:
                def __init__(self, target_worker, draft_model_runner):
                    self.target_worker = target_worker
                    self.draft_model_runner = draft_model_runner
                    embed, head = self.target_worker.model_runner.model.get_embed_and_head(True)
                    self.draft_model_runner.model.set_embed_and_head(embed, head)
        """,
        **llava("        self.language_model = LlamaForCausalLM(config)\n"),
    })
    analysis = analyze(root)
    expected = missing_both()
    assert findings(analysis) == [(*expected[0][:4], "", *expected[0][5:]), expected[1]]
    unfit, forward = analysis.findings
    assert unfit.notes == (
        "pkg/speculative/eagle_worker.py:5 passes 1 argument(s); LlamaForCausalLM.get_embed_and_head takes 0",)
    assert "`LlavaForConditionalGeneration` does not provide `get_embed_and_head`" in unfit.message
    assert "so a forward would fail there too" in unfit.message
    assert forward.notes == ()
    edits = delegation_edits(analysis, analysis.findings)
    assert [(a.member, a.delegate) for a in edits.added] == [("set_embed_and_head", "language_model")]


# guards and flow ----------------------------------------------------------------------------------

BARE = llava("        self.language_model = LlamaForCausalLM(config)\n")


def test_hasattr_on_another_receiver_does_not_guard_the_call(tmp_path):
    root = base_tree(tmp_path, {**BARE, WORKER: """
        class Worker:
            def run(self):
                if hasattr(self.draft_model_runner.model, "get_embed_and_head"):
                    return self.target_worker.model_runner.model.get_embed_and_head()
    """})
    analysis = analyze(root)
    line = line_of(root, WORKER, "return self.target_worker")
    assert contract(analysis) == [("target", "get_embed_and_head", True, True, ((WORKER, line, False),))]


def test_hasattr_and_call_in_one_condition(tmp_path):
    root = base_tree(tmp_path, {**BARE, WORKER: """
        class Worker:
            def run(self):
                model = self.draft_model_runner.model
                if hasattr(model, "load_lm_head_from_target") and model.load_lm_head_from_target:
                    return 1
    """})
    analysis = analyze(root)
    line = line_of(root, WORKER, "if hasattr(")
    assert contract(analysis) == [("draft", "load_lm_head_from_target", False, False, ((WORKER, line, True),))]
    assert findings(analysis) == []  # the inner does not have it either: nothing to forward


def test_conditional_expression_receiver_has_both_roles(tmp_path):
    root = base_tree(tmp_path, {**BARE, WORKER: """
        class Worker:
            def run(self, is_draft):
                model = self.draft_model_runner.model if is_draft else self.target_worker.model_runner.model
                return model.get_embed_and_head()
    """})
    analysis = analyze(root)
    line = line_of(root, WORKER, "return model.")
    assert contract(analysis) == [
        ("target", "get_embed_and_head", True, True, ((WORKER, line, False),)),
        ("draft", "get_embed_and_head", True, True, ((WORKER, line, False),)),
    ]
    assert [(f.member, f.roles) for f in analysis.findings] == [("get_embed_and_head", ("target", "draft"))]


def test_positional_argument_into_a_method_of_the_same_worker(tmp_path):
    root = base_tree(tmp_path, {**BARE, WORKER: """
        class Worker:
            def run(self):
                return self._share(self.target_worker.model_runner.model)

            def _share(self, model):
                return model.get_embed_and_head()
    """})
    line = line_of(root, WORKER, "return model.")
    assert contract(analyze(root)) == [("target", "get_embed_and_head", True, True, ((WORKER, line, False),))]


def test_keyword_only_parameter_of_a_helper_imported_relatively(tmp_path):
    helpers = "pkg/speculative/spec_utils.py"
    root = base_tree(tmp_path, {**BARE, WORKER: """
        from .spec_utils import share

        class Worker:
            def run(self):
                return share(1, draft_model=self.draft_model_runner.model)
    """, helpers: """
        def share(step, *, draft_model):
            draft_model.set_embed_and_head(None, None)
    """})
    assert contract(analyze(root)) == [("draft", "set_embed_and_head", True, True, ((helpers, 2, False),))]


def test_parameter_flows_through_two_helpers(tmp_path):
    helpers = "pkg/speculative/spec_utils.py"
    root = base_tree(tmp_path, {**BARE, WORKER: """
        from pkg.speculative.spec_utils import outer

        class Worker:
            def run(self):
                return outer(model=self.target_worker.model_runner.model)
    """, helpers: """
        def outer(model):
            return inner(model)

        def inner(m):
            return m.get_embed_and_head()
    """})
    assert contract(analyze(root)) == [("target", "get_embed_and_head", True, True, ((helpers, 5, False),))]


def test_subclass_worker_sees_the_base_workers_self_attributes(tmp_path):
    root = base_tree(tmp_path, {**BARE, WORKER: """
        class BaseWorker:
            def __init__(self, target_worker):
                self.runner = target_worker.model_runner

        class ChildWorker(BaseWorker):
            def run(self):
                return self.runner.model.get_embed_and_head()
    """})
    line = line_of(root, WORKER, "return self.runner")
    assert contract(analyze(root)) == [("target", "get_embed_and_head", True, True, ((WORKER, line, False),))]


def test_overlay_of_a_new_unsaved_model_file_before_the_first_analysis(tmp_path):
    root = base_tree(tmp_path)
    project = Project(root, load_config(root), use_cache=False)
    project.set_overlay(str(root.resolve() / "pkg/models/llava.py"), BARE["pkg/models/llava.py"])
    assert findings(project.analyze()) == missing_both()


def test_overlay_of_a_new_unsaved_model_file_after_an_analysis(tmp_path):
    root = base_tree(tmp_path)
    project = Project(root, load_config(root), use_cache=False)
    assert findings(project.analyze()) == []
    project.set_overlay(str(root.resolve() / "pkg/models/llava.py"), BARE["pkg/models/llava.py"])
    assert findings(project.analyze()) == missing_both()
