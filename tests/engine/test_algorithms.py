"""The release's algorithms, read from its code (``resolve.algorithms``, ``runs``): one rule per test, each on a
tree written here in the shape the rule reads (an Enum and its predicates, a Literal and its aliases, a flag set
under a predicate, a worker built under a test), never a name or a release the profile lists."""

from __future__ import annotations

import pytest
from engine_trees import SPEC_INFO, SPEC_INFO_PATH, analyze, make_tree

PACKAGES = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
            "pkg/model_executor/__init__.py": ""}
LLAMA = """
    class LlamaForCausalLM:
        def get_embed_and_head(self):
            return None, None

    EntryClass = LlamaForCausalLM
"""


def _served(analysis, member: str) -> list[frozenset[str] | None]:
    return [site.algorithms for entry in analysis.contract.entries if entry.member == member
            for site in entry.call_sites]


def test_the_algorithms_are_the_enum_s_members_and_a_compared_then_reassigned_spelling_is_an_alias(tmp_path):
    server_args = """
        def resolve(speculative_algorithm):
            if speculative_algorithm == "NEXTN":
                return "EAGLE"
            return speculative_algorithm
    """
    root = make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
                                "pkg/srt/server_args.py": server_args, "pkg/speculative/eagle_worker.py": """
        class EAGLEWorker:
            def __init__(self, target_worker):
                target_worker.model_runner.model.get_embed_and_head()
    """})
    release = analyze(root).contract.release
    assert release is not None and release.derived
    assert release.names == ("EAGLE", "EAGLE3", "DFLASH", "DSPARK", "FROZEN_KV_MTP")  # NONE is no algorithm
    assert release.name_of("nextn") == "EAGLE" and release.name_of("dflash") == "DFLASH"
    assert release.name_of("MEDUSA") is None


@pytest.mark.parametrize("body, family", [
    ("return self in _EAGLE_FAMILY", "_EAGLE_FAMILY = frozenset({SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3})"),
    ("return self in frozenset((SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3))", ""),
    ("return self in {SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3}", ""),
], ids=["a family the module names", "a frozenset of a tuple", "a set"])
def test_a_predicate_over_a_family_of_members_selects_those(tmp_path, body, family):
    """``is_eagle`` written over a family of the enum's members selects those runs, wherever the family is
    written: a line only its true branch holds serves EAGLE and EAGLE3, not every run."""
    info = SPEC_INFO.replace("return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)", body)
    root = make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: info + f"\n    {family}\n", "pkg/models/llama.py": LLAMA,
                                "pkg/speculative/spec_utils.py": """
        def share(target_worker, spec_algorithm):
            if spec_algorithm.is_eagle():
                target_worker.model_runner.model.get_embed_and_head()
    """})
    assert _served(analyze(root), "get_embed_and_head") == [frozenset({"EAGLE", "EAGLE3"})]


@pytest.mark.parametrize("changed", ["_EAGLE_FAMILY = _EAGLE_FAMILY | {SpeculativeAlgorithm.EAGLE3}",
                                     "_EAGLE_FAMILY.add(SpeculativeAlgorithm.EAGLE3)"], ids=["bound again", "added to"])
def test_a_family_the_module_changes_after_its_first_value_selects_nothing_for_certain(tmp_path, changed):
    info = SPEC_INFO.replace("return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)",
                             "return self in _EAGLE_FAMILY")
    info += f"\n    _EAGLE_FAMILY = {{SpeculativeAlgorithm.EAGLE}}\n    {changed}\n"
    root = make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: info, "pkg/models/llama.py": LLAMA,
                                "pkg/speculative/spec_utils.py": """
        def share(target_worker, spec_algorithm):
            if spec_algorithm.is_eagle():
                target_worker.model_runner.model.get_embed_and_head()
    """})
    assert _served(analyze(root), "get_embed_and_head") == [None]


def test_a_literal_s_strings_nested_aliases_included_and_get_args_spellings_fold(tmp_path):
    speculative = """
        from typing import Literal, get_args

        MTPTypes = Literal["deepseek_mtp", "mtp"]
        Method = Literal["eagle", "eagle3", MTPTypes]


        class SpeculativeConfig:
            def __post_init__(self):
                if self.method in get_args(MTPTypes) and self.method != "mtp":
                    self.method = "mtp"

            def use_eagle(self):
                return self.method in ("eagle", "eagle3", "mtp")
    """
    root = make_tree(tmp_path, {**PACKAGES, "pkg/models/llama.py": LLAMA, "pkg/config/speculative.py": speculative,
                                "pkg/speculative/eagle_worker.py": """
        class EAGLEWorker:
            def __init__(self, target_worker):
                target_worker.model_runner.model.get_embed_and_head()
    """, "pyproject.toml": """
        [tool.spec-contract]
        algorithm-names = ["pkg.config.speculative.Method"]
        algorithm-option = "method"
        algorithm-option-files = ["pkg/config/*.py"]
    """})
    release = analyze(root).contract.release
    assert release is not None and release.names == ("EAGLE", "EAGLE3", "MTP")
    assert release.name_of("deepseek_mtp") == "MTP"


def test_a_predicate_whose_guard_returns_false_first_holds_only_where_the_guard_lets_it(tmp_path):
    """vLLM's ``use_multi_module_mtp``: ``if self.method != "mtp": return False``, an assignment, then a return
    of something no test of the release decides. It holds in MTP runs only, so the speculator it builds, and the
    helper that speculator's method calls, serve MTP, not every run (NGRAM's built no such speculator)."""
    speculative = """
        from typing import Literal

        Method = Literal["eagle", "mtp", "ngram"]


        class SpeculativeConfig:
            def use_multi_module_mtp(self):
                if self.method != "mtp" or self.draft_model_config is None:
                    return False
                layers = getattr(self.draft_model_config.hf_config, "num_nextn_predict_layers", 1)
                return min(layers, self.num_speculative_tokens) > 1
    """
    root = make_tree(tmp_path, {**PACKAGES, "pkg/models/llama.py": LLAMA, "pkg/config/speculative.py": speculative,
                                "pkg/speculative/factory.py": """
        from pkg.speculative.helpers import load_head


        class MultiModuleSpeculator:
            def load(self, target_worker):
                return load_head(target_worker.model_runner.model)


        def init_speculator(config):
            if config.use_multi_module_mtp():
                return MultiModuleSpeculator()
    """, "pkg/speculative/helpers.py": """
        def load_head(model):
            return model.lm_head
    """, "pyproject.toml": """
        [tool.spec-contract]
        algorithm-names = ["pkg.config.speculative.Method"]
        algorithm-option = "method"
        algorithm-option-files = ["pkg/config/*.py"]
    """})
    analysis = analyze(root)
    assert _served(analysis, "lm_head") == [frozenset({"MTP"})]


def test_a_flag_set_only_under_a_predicate_selects_those_runs_and_a_branch_admits_only_its_own(tmp_path):
    runner = """
        class ModelRunner:
            def capture(self):
                if self.dflash_use_aux_hidden_state:
                    if self.is_dspark and hasattr(self.model, "set_dspark_layers_to_capture"):
                        self.model.set_dspark_layers_to_capture([1])
                    elif hasattr(self.model, "set_dflash_layers_to_capture"):
                        self.model.set_dflash_layers_to_capture([1])
                    else:
                        raise ValueError("no capture method")
    """
    analysis = analyze(make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
                                            "pkg/model_executor/model_runner.py": runner}))
    assert _served(analysis, "set_dflash_layers_to_capture") == [frozenset({"DFLASH", "DSPARK"})]
    assert _served(analysis, "set_dspark_layers_to_capture") == [frozenset({"DSPARK"})]


def test_a_worker_built_under_a_test_runs_for_those_runs_only_and_plumbing_for_every_run(tmp_path):
    files = {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/dflash_worker.py": """
            from pkg.managers.tp_worker import TpWorker


            class DFlashWorker:
                def __init__(self, target_worker):
                    self.draft = TpWorker()
                    target_worker.model_runner.model.get_input_embeddings()
        """,
        "pkg/managers/__init__.py": "",
        "pkg/managers/tp_worker.py": """
            class TpWorker:
                def __init__(self, target_worker=None):
                    target_worker.model_runner.model.get_embed_and_head()
        """,
        "pyproject.toml": """
            [tool.spec-contract]
            extend-workers = ["pkg/managers/tp_worker.py"]
        """,
    }
    analysis = analyze(make_tree(tmp_path, files))
    assert _served(analysis, "get_input_embeddings") == [frozenset({"DFLASH"})]
    # the DFLASH worker builds a worker of another package under no test: the server builds that one for every
    # run too, so it serves every run
    assert _served(analysis, "get_embed_and_head") == [None]


@pytest.mark.parametrize(("override", "served"), [
    ("pass", frozenset({"EAGLE", "EAGLE3"})),
    ("super()._share(target_worker)", frozenset({"EAGLE", "EAGLE3", "DFLASH"})),
])
def test_a_method_a_built_worker_overrides_runs_its_own_not_the_base_s(tmp_path, override, served):
    """A call dispatches on the instance: the base's ``load`` calls ``self._share(...)``, which reads the
    target's member; the DFLASH worker overrides ``_share`` (vLLM's DraftModelProposer makes its
    ``_maybe_share_embeddings`` a no-op), so a DFLASH run never reaches the base's read, unless the override
    asks ``super()`` for it."""
    files = {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/base_worker.py": """
            class BaseWorker:
                def __init__(self, target_worker):
                    self._share(target_worker)

                def _share(self, target_worker):
                    target_worker.model_runner.model.get_embed_and_head()
        """,
        "pkg/speculative/eagle_worker.py": """
            from pkg.speculative.base_worker import BaseWorker


            class EAGLEWorker(BaseWorker):
                def propose(self):
                    return None
        """,
        "pkg/speculative/dflash_worker.py": f"""
            from pkg.speculative.base_worker import BaseWorker


            class DFlashWorker(BaseWorker):
                def _share(self, target_worker):
                    {override}
        """,
    }
    analysis = analyze(make_tree(tmp_path, files))
    assert _served(analysis, "get_embed_and_head") == [served]


FLAG_SET_IN_A_HELPER = """
    class BaseWorker:
        def __init__(self, target_worker):
            self._share = False
            self._setup(target_worker)

        def _setup(self, target_worker):
            self._share = target_worker.server_args.share_heads

        def step(self, target_worker):
            if self._share:
                target_worker.model_runner.model.get_embed_and_head()
"""


# two workers on the base above: the EAGLE one inherits ``_setup``, the DFLASH one overrides it
SETUP_OVERRIDDEN_BY_DFLASH = {
    "pkg/speculative/eagle_worker.py": """
        from pkg.speculative.base_worker import BaseWorker


        class EAGLEWorker(BaseWorker):
            def propose(self):
                return None
    """,
    "pkg/speculative/dflash_worker.py": """
        from pkg.speculative.base_worker import BaseWorker


        class DFlashWorker(BaseWorker):
            def _setup(self, target_worker):
                return None
    """,
}


def test_a_flag_only_a_method_some_runs_reach_sets_is_false_in_the_others(tmp_path):
    """``self._share`` starts False and only ``_setup`` gives it a value that may be true; the DFLASH worker
    overrides ``_setup``, so in a DFLASH run the flag stays False and the use under it is never reached there
    (vLLM's ``_share_mtp_indices``, set in the base proposer's ``_maybe_share_lm_head``, which the DRAFT_MODEL
    proposer overrides)."""
    files = {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/base_worker.py": FLAG_SET_IN_A_HELPER,
        **SETUP_OVERRIDDEN_BY_DFLASH,
    }
    analysis = analyze(make_tree(tmp_path, files))
    assert _served(analysis, "get_embed_and_head") == [frozenset({"EAGLE", "EAGLE3"})]


def test_a_draft_use_no_run_of_an_any_draft_worker_reaches_never_meets_a_model_that_is_no_draft_head(tmp_path):
    """The worker that takes any registered model as its draft (``any-draft-workers``) inherits ``step`` but
    never sets the flag it tests, so the draft use there serves only EAGLE runs, whose drafts are heads: a
    wrapper that forgets the forward is no draft of any run that reaches it (before, an SC005 said it crashes
    if a draft checkpoint names it)."""
    files = {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/models/llava.py": """
            from pkg.models.llama import LlamaForCausalLM


            class LlavaForConditionalGeneration:
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)


            EntryClass = LlavaForConditionalGeneration
        """,
        "pkg/speculative/base_worker.py": FLAG_SET_IN_A_HELPER.replace(
            "target_worker.model_runner.model.get_embed_and_head()",
            "self.draft_model_runner.model.get_embed_and_head()"),
        **SETUP_OVERRIDDEN_BY_DFLASH,
        "pyproject.toml": """
            [tool.spec-contract]
            any-draft-workers = ["DFlashWorker"]
        """,
    }
    analysis = analyze(make_tree(tmp_path, files))
    (site,) = [site for entry in analysis.contract.entries if entry.member == "get_embed_and_head" for site in entry.call_sites]
    assert (site.algorithms, site.any_draft) == (frozenset({"EAGLE", "EAGLE3"}), False)
    assert [f for f in analysis.findings if f.class_name == "LlavaForConditionalGeneration"] == []


def test_a_use_only_runs_without_speculative_decoding_reach_is_no_contract(tmp_path):
    worker = """
        class EAGLEWorker:
            def __init__(self, target_worker, spec_algorithm):
                if spec_algorithm.is_none():
                    target_worker.model_runner.model.warm_plain_path()
                target_worker.model_runner.model.get_embed_and_head()
    """
    spec_info = SPEC_INFO.replace("        def is_eagle(self):", "        def is_none(self):\n"
                                  "            return self == SpeculativeAlgorithm.NONE\n\n        def is_eagle(self):")
    analysis = analyze(make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: spec_info, "pkg/models/llama.py": LLAMA,
                                            "pkg/speculative/eagle_worker.py": worker}))
    assert {entry.member for entry in analysis.contract.entries} == {"get_embed_and_head"}


# vLLM's shape: one method sets ``self._local = hasattr(self.model, "compute_local")``, another reads the model's
# ``logits_processor`` only ``if self._local:``, in place, past an early return, or in a private helper it calls only
# then; the in-method analogue tests ``hasattr`` where it reads
SAMPLE_IN_PLACE = """
            def sample(self, hidden):
                if self._local:
                    return self.draft_model_runner.model.logits_processor(hidden)
                return self.draft_model_runner.model.compute_logits(hidden)
"""
SAMPLE_IN_A_HELPER = """
            def sample(self, hidden):
                if self._local:
                    return self._sample_local(hidden)
                return self.draft_model_runner.model.compute_logits(hidden)

            def _sample_local(self, hidden):
                return self.draft_model_runner.model.logits_processor(hidden)
"""
SAMPLE_IF_SET = SAMPLE_IN_PLACE.replace("if self._local:", "if self._local is not None:")
SAMPLE_PAST_AN_EARLY_RETURN = """
            def sample(self, hidden):
                if not self._local:
                    return self.draft_model_runner.model.compute_logits(hidden)
                out = self.draft_model_runner.model.compute_local(hidden)
                return self.draft_model_runner.model.logits_processor.scale * out
"""
SAMPLE_UNDER_HASATTR = """
            def sample(self, hidden):
                model = self.draft_model_runner.model
                if hasattr(model, "compute_local"):
                    return model.logits_processor(model.compute_local(hidden))
                return model.compute_logits(hidden)
"""
SAMPLE_IN_A_HELPER_UNDER_HASATTR = SAMPLE_IN_A_HELPER.replace(
    "if self._local:", 'if hasattr(self.draft_model_runner.model, "compute_local"):')
SAMPLE_PAST_A_HASATTR_RETURN = """
            def sample(self, hidden):
                if not hasattr(self.draft_model_runner.model, "compute_local"):
                    return self.draft_model_runner.model.compute_logits(hidden)
                return self.draft_model_runner.model.logits_processor(hidden)
"""


SET_BY_HASATTR = """
            def load_model(self):
                self._local = hasattr(self.draft_model_runner.model, "compute_local")
"""
SET_BY_AN_AND = """
            def load_model(self, config):
                self._local = config.local_sampling and hasattr(self.draft_model_runner.model, "compute_local")
"""
SET_BY_GETATTR = """
            def load_model(self):
                self._local = getattr(self.draft_model_runner.model, "compute_local", None)
"""
SET_IN_A_HELPER = """
            def load_model(self):
                self._local = False
                self._enable_local()

            def _enable_local(self):
                if hasattr(self.draft_model_runner.model, "compute_local"):
                    self._local = True
"""
SET_BY_A_CONDITIONAL_EXPRESSION = """
            def load_model(self):
                model = self.draft_model_runner.model
                self._local = model.compute_local if hasattr(model, "compute_local") else None
"""
SET_THROUGH_A_LOCAL = """
            def load_model(self):
                self._local = None
                self._try_enable_local()

            def _try_enable_local(self):
                found = getattr(self.draft_model_runner.model, "compute_local", None)
                if found is None:
                    return
                self._local = found
"""
NOT_SET = ""


@pytest.mark.parametrize(("setter", "sample"), [
    (SET_BY_HASATTR, SAMPLE_IN_PLACE), (SET_BY_HASATTR, SAMPLE_IN_A_HELPER), (SET_BY_AN_AND, SAMPLE_IN_PLACE),
    (SET_BY_GETATTR, SAMPLE_IF_SET), (SET_BY_HASATTR, SAMPLE_PAST_AN_EARLY_RETURN), (SET_IN_A_HELPER, SAMPLE_IN_PLACE),
    (SET_BY_A_CONDITIONAL_EXPRESSION, SAMPLE_IF_SET), (SET_THROUGH_A_LOCAL, SAMPLE_IF_SET),
    (NOT_SET, SAMPLE_UNDER_HASATTR), (NOT_SET, SAMPLE_PAST_A_HASATTR_RETURN), (NOT_SET, SAMPLE_IN_A_HELPER_UNDER_HASATTR)],
    ids=["in-place", "in-a-private-helper", "set-by-an-and", "set-by-getattr", "past-an-early-return",
         "set-in-a-private-helper", "set-by-a-conditional-expression", "set-through-a-local", "in-method-hasattr",
         "in-method-past-a-hasattr-return", "in-a-private-helper-under-hasattr"])
def test_a_use_under_an_attribute_only_a_test_of_the_model_sets_meets_only_models_with_that_member(tmp_path, setter,
                                                                                                   sample):
    """A head without ``compute_local`` never reaches the read (it takes the other path), so it is no crash there,
    nor a missing forward on a wrapper whose inner model has the read member; a head with it and without the read
    member is a crash. In a helper, every call to which stands past the test, the read needs ``compute_local`` as if
    it were written under it (only private helpers: a public method could be called from outside the workers); an
    attribute set to ``flag and hasattr(...)``, to ``getattr(m, "x", None)``, to ``m.x if hasattr(m, "x") else
    None``, to a local holding such a value, or set at all only under ``hasattr``, is true only with it too; and so
    is the test written in the reading method itself (``if hasattr(model, "compute_local"): model.logits_processor``)
    or in the one that calls the private helper reading it."""
    worker = """
        class Proposer:
            def __init__(self, draft_model_runner):
                self.draft_model_runner = draft_model_runner
""" + setter + sample
    heads = """
        class PlainNextN:
            def compute_logits(self, hidden):
                return hidden


        class LocalNextN:
            def compute_local(self, hidden):
                return hidden

            def compute_logits(self, hidden):
                return hidden


        class Predictor:
            def __init__(self):
                self.logits_processor = object()


        class WrappedNextN:
            def __init__(self):
                self.model = Predictor()

            def compute_logits(self, hidden):
                return hidden


        EntryClass = [PlainNextN, LocalNextN, WrappedNextN]
    """
    analysis = analyze(make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
                                            "pkg/models/heads.py": heads, "pkg/speculative/proposer.py": worker}))
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    assert site.requires == ("compute_local",)
    crashing = {status.name: {crash.member for a in status.algorithms for crash in a.crashes}
                for status in analysis.statuses() if status.name in ("PlainNextN", "LocalNextN", "WrappedNextN")}
    assert crashing == {"PlainNextN": set(), "LocalNextN": {"logits_processor"}, "WrappedNextN": set()}
    assert not [f for f in analysis.findings
                if f.class_name in ("PlainNextN", "WrappedNextN") and f.member == "logits_processor"]


def test_flags_set_under_each_other_in_a_long_loop_are_solved_once_each(tmp_path, monkeypatch):
    """Flags defined through each other (each set under a test of the next, the last under the first) form one
    group, solved to its fixed point in a few rounds: computed on demand, each word was computed again on
    every path to it, twice per word here (``x or not x`` reads it twice), which never ended on SGLang
    0.5.23's workers."""
    from spec_contract.engine.resolve.algorithms import Selectors

    size = 40
    steps = "".join(f"""
            def step_{i}(self):
                if self.flag_{(i + 1) % size} or not self.flag_{(i + 1) % size}:
                    self.flag_{i} = self.spec_algorithm.is_dflash()
    """ for i in range(size))
    runner = f"""
        class ModelRunner:{steps}
            def capture(self):
                if self.flag_0:
                    self.model.set_dflash_layers_to_capture([1])
    """
    evaluated = []
    evaluate = Selectors._evaluate
    monkeypatch.setattr(Selectors, "_evaluate", lambda self, *a: evaluated.append(a) or evaluate(self, *a))
    analysis = analyze(make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
                                            "pkg/model_executor/model_runner.py": runner}))
    assert _served(analysis, "set_dflash_layers_to_capture") == [frozenset({"DFLASH"})]
    assert len(evaluated) <= 3 * size * 4  # a few rounds of the group, for each Selectors the analysis builds


def test_an_attribute_set_from_a_test_of_another_object_guards_no_use_of_the_model(tmp_path):
    """Only a test of the model a use is made on conditions it: an attribute set from a config's optional read
    (``getattr(hf_config, "x", False)``), from a read whose default is true (``getattr(model, "x", True)`` holds
    without ``x``), or from a test of the other role's model says nothing of whether the draft has a member, so
    every head meets the uses under it."""
    worker = """
        class Proposer:
            def __init__(self, draft_model_runner, target_worker, hf_config):
                self.draft_model_runner = draft_model_runner
                self.target_worker = target_worker
                self._share = getattr(hf_config, "share_indices", False)
                self._from_anchor = getattr(self.draft_model_runner.model, "from_anchor", True)
                self._target_local = hasattr(self.target_worker.model_runner.model, "compute_local")

            def sample(self, hidden):
                if self._share:
                    self.draft_model_runner.model.compact_indices(hidden)
                if self._from_anchor:
                    self.draft_model_runner.model.anchor_logits(hidden)
                if self._target_local:
                    self.draft_model_runner.model.draft_logits(hidden)
    """
    heads = """
        class PlainNextN:
            def compute_logits(self, hidden):
                return hidden


        EntryClass = [PlainNextN]
    """
    analysis = analyze(make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
                                            "pkg/models/heads.py": heads, "pkg/speculative/proposer.py": worker}))
    uses = ("compact_indices", "anchor_logits", "draft_logits")
    assert {e.member: [s.requires for s in e.call_sites] for e in analysis.contract.entries if e.member in uses} \
        == dict.fromkeys(uses, [()])
    (head,) = [status for status in analysis.statuses() if status.name == "PlainNextN"]
    assert {crash.member for a in head.algorithms for crash in a.crashes} == set(uses)


@pytest.mark.parametrize("declared", [
    'SpeculativeAlgorithm = Enum("SpeculativeAlgorithm", ["EAGLE", "EAGLE3", "DFLASH", "NONE"])',
    'SpeculativeAlgorithm = enum.IntEnum("SpeculativeAlgorithm", "EAGLE EAGLE3, DFLASH NONE")',
    'SpeculativeAlgorithm = Enum("SpeculativeAlgorithm", [("EAGLE", 1), ("EAGLE3", 2), ("DFLASH", 3), ("NONE", 4)])',
], ids=["list", "string", "pairs"])
def test_an_enum_made_by_the_functional_api_has_its_members_as_the_algorithms(tmp_path, declared):
    spec_info = f"""
        import enum
        from enum import Enum

        {declared}
    """
    root = make_tree(tmp_path, {**PACKAGES, SPEC_INFO_PATH: spec_info, "pkg/models/llama.py": LLAMA,
                                "pkg/speculative/eagle_worker.py": """
        class EAGLEWorker:
            def __init__(self, target_worker, algorithm):
                if algorithm == SpeculativeAlgorithm.DFLASH:
                    target_worker.model_runner.model.get_embed_and_head()
    """})
    analysis = analyze(root)
    release = analysis.contract.release
    assert release is not None and release.derived and release.names == ("EAGLE", "EAGLE3", "DFLASH")
    assert _served(analysis, "get_embed_and_head") == [frozenset({"DFLASH"})]


def test_a_worker_built_under_a_match_case_runs_for_the_algorithms_its_pattern_names(tmp_path):
    files = {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/factory.py": """
            from pkg.speculative.spec_info import SpeculativeAlgorithm


            class FlashWorker:
                def __init__(self, target_worker):
                    target_worker.model_runner.model.get_flash_head()


            class SparkOrFrozenWorker:
                def __init__(self, target_worker):
                    target_worker.model_runner.model.get_spark_head()


            class OtherWorker:
                def __init__(self, target_worker):
                    target_worker.model_runner.model.get_other_head()


            def make_worker(algorithm, target_worker):
                match algorithm:
                    case SpeculativeAlgorithm.DFLASH:
                        return FlashWorker(target_worker)
                    case SpeculativeAlgorithm.DSPARK | SpeculativeAlgorithm.FROZEN_KV_MTP:
                        return SparkOrFrozenWorker(target_worker)
                    case _:
                        return OtherWorker(target_worker)
        """,
    }
    analysis = analyze(make_tree(tmp_path, files))
    assert _served(analysis, "get_flash_head") == [frozenset({"DFLASH"})]
    assert _served(analysis, "get_spark_head") == [frozenset({"DSPARK", "FROZEN_KV_MTP"})]
    assert _served(analysis, "get_other_head") == [frozenset({"EAGLE", "EAGLE3"})]
