"""A degraded run said honestly (SC014): a worker calls a draft member only when the model has it, a draft head
lacks it, and a sibling holding the same parts implements it. Nothing crashes, so it is a hint, never an error
or warning; the message names the guarded call site, what the run goes without, and the model to copy.

The tree is SGLang-shaped and written here: the EAGLE worker shares the target's head with the draft, and then
its whole ``lm_head`` module where the draft can take it (``hasattr`` first).
"""

from __future__ import annotations

from engine_trees import SPEC_INFO, SPEC_INFO_PATH, analyze, make_tree, rel
from spec_contract.engine.text import only_adds_lines
from test_engine_implement import _fix

WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_runner):
            self.target_worker = target_worker
            self.draft_runner = draft_runner
            embed, head = self.target_worker.model_runner.model.get_embed_and_head()
            self.draft_runner.model.set_embed_and_head(embed, head)
            target_lm_head = self.target_worker.model_runner.model.lm_head
            if hasattr(self.draft_runner.model, "set_lm_head_from_target"):
                self.draft_runner.model.set_lm_head_from_target(target_lm_head)
            if hasattr(self.draft_runner.model, "get_hidden_size"):
                self.hidden = self.draft_runner.model.get_hidden_size()
            self.tied = (
                self.draft_runner.model.get_tied_head()
                if hasattr(self.draft_runner.model, "get_tied_head")
                else None
            )
"""

TARGET = """
    import torch


    class LlamaForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.lm_head = torch.nn.Linear(1, 1)

        def get_embed_and_head(self):
            return None, self.lm_head.weight


    EntryClass = LlamaForCausalLM
"""

# the sibling that implements both guarded members, and two draft heads holding the same parts that lack them
DRAFTS = """
    import torch


    class QwenForCausalLMMTP(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.lm_head = torch.nn.Linear(1, 1)

        def set_embed_and_head(self, embed, head):
            self.lm_head.weight = head

        def set_lm_head_from_target(self, target_lm_head):
            if self.config.tie_word_embeddings:
                return
            self.lm_head = target_lm_head

        def get_hidden_size(self):
            return self.config.hidden_size

        def get_tied_head(self):
            return self.lm_head


    class NemoForCausalLMMTP(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.lm_head = torch.nn.Linear(1, 1)

        def set_embed_and_head(self, embed, head):
            self.lm_head.weight = head


    class FastDFlashDraftModel(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.lm_head = torch.nn.Linear(1, 1)

        def set_embed_and_head(self, embed, head):
            self.lm_head.weight = head


    EntryClass = [QwenForCausalLMMTP, NemoForCausalLMMTP, FastDFlashDraftModel]
"""

# a DFLASH worker of its own, which never reads the guarded member
DFLASH_WORKER = """
    class DFlashWorker:
        def __init__(self, draft_runner):
            self.draft_runner = draft_runner
            self.draft_runner.model.set_embed_and_head(None, None)
"""


def _tree(tmp_path):
    return make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
        "pkg/speculative/eagle_worker.py": WORKER, "pkg/speculative/dflash_worker.py": DFLASH_WORKER,
        "pkg/models/llama.py": TARGET, "pkg/models/drafts.py": DRAFTS, SPEC_INFO_PATH: SPEC_INFO,
    })


def test_a_draft_head_lacking_a_member_its_worker_calls_only_when_present_gets_a_hint_naming_the_model(tmp_path):
    """The head that lacks ``set_lm_head_from_target`` gets one SC014 hint: the guarded call site, that it keeps
    its own ``lm_head``, and the sibling to copy; a guarded call whose value the worker uses has its own path
    (no finding), even when its line alone reads as a call statement (``get_tied_head``, the first line of
    vLLM's ``m.get_language_model() if hasattr(...) else m``), and a DFLASH head never meets the EAGLE worker
    (no finding)."""
    root = _tree(tmp_path)
    analysis = analyze(root)
    found = [f for f in analysis.findings if f.code == "SC014"]
    assert [(f.class_name, f.member, str(f.severity), f.roles) for f in found] == [
        ("NemoForCausalLMMTP", "set_lm_head_from_target", "hint", ("draft",))]
    (hint,) = found
    assert [f for f in analysis.findings if f.class_name == "NemoForCausalLMMTP"] == [hint]
    (site,) = hint.call_sites
    assert (rel(root, site.path), site.span.line + 1, site.guarded) == ("pkg/speculative/eagle_worker.py", 9, True)
    assert "calls it at pkg/speculative/eagle_worker.py:9 only when the model has it" in hint.message
    assert "keeps its own `self.lm_head`" in hint.message
    assert "implement it like `QwenForCausalLMMTP.set_lm_head_from_target`" in hint.message
    ((member, provision),) = hint.implements
    assert (member, str(provision.how), provision.like) == (
        "set_lm_head_from_target", "implement", "pkg.models.drafts.QwenForCausalLMMTP")
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "NemoForCausalLMMTP"))
    assert status is not None and "set_lm_head_from_target" in status.algorithm("EAGLE").degraded


def test_the_fix_of_a_degraded_run_implements_the_member_and_the_hint_goes(tmp_path):
    root = _tree(tmp_path)
    analysis = analyze(root)
    (hint,) = [f for f in analysis.findings if f.code == "SC014"]
    ((before, after),) = _fix(root, analysis, [hint]).values()
    assert only_adds_lines(before, after)
    assert after.count("def set_lm_head_from_target") == 2
    assert [f for f in analyze(root).findings if f.code == "SC014"] == []
