"""A class's contract status (hover's) is computed by the check's own lookups: hover (``Analysis.class_at``)
answers with it, the states below are those hover gave when it walked the members on its own, and it never
disagrees with the findings.

The tree has one class per member state and delegate shape: a wrapper that forwards one member and lacks the
others, one that reaches its inner model one level deeper, one that has its members itself with no inner
model, a draft head, and a model runner with capability gates so that each algorithm state shows up.
"""

from __future__ import annotations

import dataclasses

from engine_trees import EAGLE_WORKER, SPEC_INFO, SPEC_INFO_PATH, analyze, forward_findings, make_tree
from spec_contract.engine.check.lookup import MemberState
from spec_contract.engine.check.status import class_status
from test_engine_semantics import DFLASH_WORKER, GATED_RUNNER, LLAMA

MODELS = {
    "pkg/models/llama.py": LLAMA,
    "pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM

        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

            def get_embed_and_head(self):
                return self.language_model.get_embed_and_head()

            def set_dflash_layers_to_capture(self, layer_ids):
                self.language_model.set_dflash_layers_to_capture(layer_ids)

        EntryClass = LlavaForConditionalGeneration
    """,
    "pkg/models/minicpm.py": """
        from pkg.models.llava import LlavaForConditionalGeneration

        class MiniCPMV:
            def __init__(self, config):
                self.minicpmv = LlavaForConditionalGeneration(config)
                self.vision = object()

        EntryClass = MiniCPMV
    """,
    "pkg/models/own.py": """
        class OwnForCausalLM:
            def get_embed_and_head(self):
                return None, None

            def set_embed_and_head(self, embed, head):
                pass

        EntryClass = OwnForCausalLM
    """,
    "pkg/models/llama_eagle.py": """
        from pkg.models.llama import LlamaForCausalLM

        class LlamaForCausalLMEagle:
            def __init__(self, config):
                self.model = LlamaForCausalLM(config)

        EntryClass = LlamaForCausalLMEagle
    """,
}


def _tree(root, files=None):
    return make_tree(root, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
        "pkg/model_executor/__init__.py": "",
        "pkg/speculative/eagle_worker.py": EAGLE_WORKER,
        "pkg/speculative/dflash_worker.py": DFLASH_WORKER,
        "pkg/model_executor/model_runner.py": GATED_RUNNER, SPEC_INFO_PATH: SPEC_INFO,
        **MODELS, **(files or {}),
    })


def _statuses(analysis):
    """Each checked class's status, as hover asks for it (the cursor on the class name) and by its key."""
    out = {}
    for key in analysis.checked:
        cls = analysis.index.class_summary(key)
        path = analysis.index.path_of(key.module)
        hover = analysis.class_at(path, cls.span.line, cls.span.col)
        out[key.qualname] = (hover, analysis.status_of(key))
    return out


def test_hover_answers_with_the_class_status_of_every_checked_class(tmp_path):
    analysis = analyze(_tree(tmp_path))
    statuses = _statuses(analysis)
    assert set(statuses) == {"LlamaForCausalLM", "LlavaForConditionalGeneration", "MiniCPMV", "OwnForCausalLM",
                             "LlamaForCausalLMEagle"}
    for qualname, (hover, mine) in statuses.items():
        assert hover is not None and mine is not None, qualname
        assert dataclasses.asdict(mine) == dataclasses.asdict(hover), qualname
    # what hover shows at the class name: every state the tree has
    states = {(q, m.member): (m.status, m.delegate, m.inner_class) for q, (h, _) in statuses.items() for m in h.members}
    assert states[("LlavaForConditionalGeneration", "get_embed_and_head")] == (
        "forwarded", "language_model", "LlamaForCausalLM")
    assert states[("LlavaForConditionalGeneration", "set_embed_and_head")] == (
        "missing", "language_model", "LlamaForCausalLM")
    assert states[("MiniCPMV", "set_embed_and_head")] == ("missing", "minicpmv.language_model", "LlamaForCausalLM")
    assert states[("MiniCPMV", "get_embed_and_head")] == ("missing", "minicpmv", "LlavaForConditionalGeneration")
    assert states[("OwnForCausalLM", "get_embed_and_head")] == ("provided", None, None)
    assert ("LlamaForCausalLMEagle", "get_embed_and_head") not in states  # a draft head: the draft role only
    assert states[("LlamaForCausalLMEagle", "set_embed_and_head")] == ("missing", "model", "LlamaForCausalLM")
    algorithms = {(q, a.algorithm): a.state for q, (h, _) in statuses.items() for a in h.algorithms}
    assert algorithms[("LlavaForConditionalGeneration", "EAGLE3")] == "crashes"  # its check, after the load
    assert algorithms[("LlavaForConditionalGeneration", "DFLASH")] == "crashes"
    assert algorithms[("LlamaForCausalLM", "DFLASH")] == "supported"


def test_a_member_the_check_reports_missing_is_missing_in_the_status_and_the_other_way_round(tmp_path):
    analysis = analyze(_tree(tmp_path))
    reported = {(f.class_name, member) for f in forward_findings(analysis)
                for member in (f.member, *(a.member for a in f.also))}
    missing = set()
    for key in analysis.checked:
        status = class_status(analysis.index, key, analysis.contract, analysis.config)
        assert status is not None
        # (a member no inner model has is the status model's own findings', SC010-SC012)
        missing |= {(key.qualname, m.member) for m in status.members
                    if m.status is MemberState.MISSING and m.inner_class is not None}
    # members past a failed capability gate count with the gate's finding (its ``also``)
    assert reported == missing
    assert ("MiniCPMV", "get_input_embeddings") in reported and len(reported) == 9


def test_with_restricted_delegates_the_status_follows_the_check_not_any_attribute(tmp_path):
    """``restrict-delegates``: a helper attribute is no inner model, for the check and the status alike."""
    root = _tree(tmp_path, {
        "pyproject.toml": """
            [tool.spec-contract]
            restrict-delegates = true
        """,
        "pkg/models/helper.py": """
            from pkg.models.llama import LlamaForCausalLM

            class WithHelper:
                def __init__(self, config):
                    self.sampler = LlamaForCausalLM(config)

            EntryClass = WithHelper
        """,
    })
    analysis = analyze(root)
    (key,) = [k for k in analysis.checked if k.qualname == "WithHelper"]
    status = class_status(analysis.index, key, analysis.contract, analysis.config)
    # the helper is no inner model: nothing to forward, only the members a run lacks (no inner has them)
    assert status is not None and all(m.delegate is None and m.provision.how == "cannot tell" for m in status.members)
    assert [f for f in forward_findings(analysis) if f.class_name == "WithHelper"] == []


def test_the_status_model_says_where_and_when_a_run_crashes_and_how_to_provide_each_member(tmp_path):
    """Per algorithm: crashes (each member with its worker line, phase and provision: forward when an inner model
    has it, cannot tell when none does; the engine's own check, after the load, first) or supported;
    OwnForCausalLM has its own embedding members (intent for EAGLE) and fails DFLASH's capture check, past which
    the run would also want what DFLASH's embed step uses."""
    analysis = analyze(_tree(tmp_path))
    statuses = {s.name: s for s in analysis.statuses()}
    own = statuses["OwnForCausalLM"]
    assert str(own.algorithm("EAGLE").state) == "supported"
    dflash = own.algorithm("DFLASH")
    assert dflash is not None and str(dflash.state) == "crashes"
    check = dflash.crashes[0]
    assert check.refused and check.site.path.endswith("model_runner.py") and str(check.phase) == "start-up"
    assert [c.member for c in dflash.crashes if c.past] == ["get_input_embeddings"]
    llava = statuses["LlavaForConditionalGeneration"].algorithm("DFLASH")
    assert llava is not None and str(llava.state) == "crashes" and llava.intent
    (crash,) = llava.crashes
    assert (crash.member, str(crash.phase), str(crash.provision.how), crash.provision.delegate) == (
        "get_input_embeddings", "first request", "forward", "language_model")
    minicpm = statuses["MiniCPMV"].algorithm("EAGLE")
    assert minicpm is not None and str(minicpm.state) == "crashes"
    assert {(c.member, str(c.phase)) for c in minicpm.crashes} >= {("get_embed_and_head", "start-up")}
