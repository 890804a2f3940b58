"""Guards that live in other methods (issue 36, item 4): a read of the draft's ``logits_processor`` that a run
reaches only after a test of the draft's ``compute_draft_logits_local`` passed somewhere else.

vLLM-shaped speculators: the base samples ``if self._local is not None:`` through a helper that reads the draft's
``logits_processor``; only the DSPARK subclass gives ``_local`` a value, ``getattr(self.model,
"compute_draft_logits_local", None)``, and the base gives it None. A run of either class reaches the read only
with a draft that has ``compute_draft_logits_local``. So does a run whose state was set by a method of the
speculator that tests its model, or whose sampler was picked as a bound method under the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from engine_trees import analyze
from test_engine_returned_model import HEADS, speculator_tree

BASE = """
    class BaseSpeculator:
        {body}
        def __init__(self, vllm_config, device):
            {init}

        def load_draft_model(self, target_model):
            return load_model(target_model)

        def load_model(self, target_model):
            self.model = self.load_draft_model(target_model)

        def propose(self, hidden):
            return self._sample(hidden)
{sample}"""

SAMPLE = """
        def _sample(self, hidden):
            if self._local is not None:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)

        def _sample_local(self, hidden):
            return self.model.logits_processor.gather(self._local(hidden))
"""

DSPARK = """
    from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator


    class DSparkSpeculator(BaseSpeculator):
        def load_model(self, target_model):
            super().load_model(target_model)
            self._try_enable_local()

        def _try_enable_local(self):
            {enable}
"""

TESTED = 'self._local = getattr(self.model, "compute_draft_logits_local", None)'


def _speculators(tmp_path, enable: str = TESTED, body: str = "", init: str = "self._local = None",
                 sample: str = SAMPLE, validating: bool = False, heads: str = HEADS):
    """The tree: the base speculator of ``body``, ``init`` and ``sample`` (``validating``: its ``load_model`` calls
    ``self._validate()`` once the draft is loaded), and the DSPARK one that runs ``enable`` after loading."""
    root = speculator_tree(tmp_path, heads, DSPARK.replace("{enable}", enable), ("TinyMTP",))
    base = BASE.replace("{body}", body).replace("{init}", init).replace("{sample}", sample)
    if validating:
        base = base.replace("self.model = self.load_draft_model(target_model)",
                            "self.model = self.load_draft_model(target_model)\n            self._validate()")
    (root / "vllm/v1/worker/gpu/spec_decode/speculator.py").write_text(textwrap.dedent(base))
    return root


def _site_and_errors(root) -> tuple:
    """The draft's ``logits_processor`` read, and the head's findings for it."""
    analysis = analyze(root)
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    errors = [f.code for f in analysis.findings if f.class_name == "TinyMTP" and f.member == "logits_processor"]
    return site, errors


def _analysis(tmp_path, enable: str = TESTED, body: str = "", init: str = "self._local = None",
              sample: str = SAMPLE):
    return _site_and_errors(_speculators(tmp_path, enable, body, init, sample))


@pytest.mark.parametrize("init", ["self._local = None", "self.device = device"],
                         ids=["the base sets it None", "the base never sets it"])
def test_a_state_only_a_subclass_sets_from_a_test_guards_the_base_methods_use(tmp_path, init):
    site, errors = _analysis(tmp_path, init=init)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


def test_speculators_moved_out_of_the_gpu_package_are_still_workers(tmp_path):
    """A release that moves ``v1/worker/gpu/spec_decode/`` up to ``v1/worker/spec_decode/``: the same state
    guards the same read."""
    root = _speculators(tmp_path)
    old, new = root / "vllm/v1/worker/gpu/spec_decode", root / "vllm/v1/worker/spec_decode"
    old.rename(new)
    for path in new.rglob("*.py"):
        path.write_text(path.read_text().replace("vllm.v1.worker.gpu.spec_decode", "vllm.v1.worker.spec_decode"))
    site, errors = _site_and_errors(root)
    assert site.requires == ("compute_draft_logits_local",) and "/worker/spec_decode/" in site.path
    assert errors == []


@pytest.mark.parametrize("enable", [
    "self._local = make_local(self.model)",
    'if hasattr(self.model, "compute_draft_logits_local"):\n                self._local = True\n'
    "            self._local = make_local(self.model)",
], ids=["set without a test", "also set past the test"])
def test_a_subclass_that_sets_the_state_without_the_test_leaves_the_use_required(tmp_path, enable):
    """The DSPARK speculator runs the base's sampling with ``_local`` set whatever its draft has: its MTP head
    meets the read, which its predictor answers (a forward the head lacks)."""
    site, errors = _analysis(tmp_path, enable)
    assert site.requires == ()
    assert errors == ["SC001"]


def test_a_state_the_class_body_gives_a_value_is_not_known_false_on_the_base(tmp_path):
    """``_local = staticmethod(…)`` in the base's body: the base's own runs may test it true, with any draft."""
    site, errors = _analysis(tmp_path, body="_local = staticmethod(lambda hidden: hidden)\n", init="pass")
    assert site.requires == ()
    assert errors == ["SC001"]


SUPPORTS = """
        def _supports_local(self):
            {body}
"""


@pytest.mark.parametrize("enable, body", [
    ("self._local = self._supports_local()", 'return hasattr(self.model, "compute_draft_logits_local")'),
    ("if self._supports_local():\n                self._local = self.model.compute_logits",
     'if not hasattr(self.model, "compute_draft_logits_local"):\n                return False\n'
     "            return True"),
], ids=["set from a method that returns the test", "set under a test that calls it"])
def test_a_method_of_the_instance_that_tests_its_model_vouches_for_the_state(tmp_path, enable, body):
    """The test of the draft sits in a method of the speculator itself, asking ``self.model``: the state set from
    its value, or under a test that calls it, stands behind that test as if it were written in place."""
    site, errors = _analysis(tmp_path, enable + SUPPORTS.replace("{body}", body))
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []



def test_a_state_given_the_model_member_itself_stands_behind_it(tmp_path):
    """``self._local = self.model.compute_draft_logits_local`` in a ``try`` whose ``except AttributeError`` leaves it
    None: a draft without the member raises at the read, so a true ``_local`` means the draft has it."""
    enable = ("try:\n                self._local = self.model.compute_draft_logits_local\n"
              "            except AttributeError:\n                self._local = None")
    site, errors = _analysis(tmp_path, enable)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


PICKED = """
    from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator


    class DSparkSpeculator(BaseSpeculator):
        def load_model(self, target_model):
            super().load_model(target_model)
            {pick}

        def _sample(self, hidden):
            return self._sampler(hidden)

        def _sample_plain(self, hidden):
            return self.model.compute_logits(hidden)

        def _sample_local(self, hidden):
            local = self.model.compute_draft_logits_local(hidden)
            return self.model.logits_processor.gather(local)
"""


@pytest.mark.parametrize("pick, requires, errors", [
    ('self._sampler = self._sample_local if hasattr(self.model, "compute_draft_logits_local") '
     "else self._sample_plain", ("compute_draft_logits_local",), []),
    ('self._sampler = self._sample_plain\n            if hasattr(self.model, "compute_draft_logits_local"):\n'
     "                self._sampler = self._sample_local", ("compute_draft_logits_local",), []),
    ("self._sampler = self._sample_local", (), ["SC001"]),
], ids=["picked by a conditional expression", "picked under an if", "picked whatever the draft"])
def test_a_method_handed_on_as_a_bound_method_runs_only_past_the_tests_around_it(tmp_path, pick, requires, errors):
    """The speculator picks its sampler once, as a bound method, and calls whichever it picked: the local one runs
    only in runs whose draft passed the test that picked it."""
    root = speculator_tree(tmp_path, HEADS, PICKED.replace("{pick}", pick), ("TinyMTP",))
    analysis = analyze(root)
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    assert site.requires == requires
    assert [f.code for f in analysis.findings if f.class_name == "TinyMTP" and f.member == "logits_processor"] == errors


@pytest.mark.parametrize("enable", [
    'if not hasattr(self.model, "compute_draft_logits_local"):\n                return\n'
    "            self._local = make_local(self.model)",
    'if self.use_argmax and hasattr(self.model, "compute_draft_logits_local"):\n'
    "                self._local = make_local(self.model)",
], ids=["set past an early return", "set under a flag and the test"])
def test_a_state_set_past_or_under_the_test_in_a_try_enable_method_guards_the_base(tmp_path, enable):
    site, errors = _analysis(tmp_path, enable)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


@pytest.mark.parametrize("enable", [
    'self._local = getattr(self.model, "compute_draft_logits_local", None) is not None',
    'self._local = bool(getattr(self.model, "compute_draft_logits_local", None))',
], ids=["is not None", "bool of it"])
def test_a_state_set_from_a_comparison_or_truth_of_the_optional_read_stands_behind_it(tmp_path, enable):
    site, errors = _analysis(tmp_path, enable)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


LOCAL = """
        def _sample_local(self, hidden):
            return self.model.logits_processor.gather(self._local(hidden))
"""


@pytest.mark.parametrize("sample", [
    """
        def _sample(self, hidden):
            if self._local is None or hidden is None:
                return self.model.compute_logits(hidden)
            return self._sample_local(hidden)
""",
    """
        def _sample(self, hidden):
            use_local = self._local is not None and hidden is not None
            if use_local:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""",
    """
        def _sample(self, hidden):
            if getattr(self, "_local", None) is not None:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""",
], ids=["past an early return of an or", "under a local that holds the test", "under getattr of the attribute"])
def test_the_ways_a_method_tests_the_state_before_the_use_each_guard_it(tmp_path, sample):
    """Past ``if self._local is None or …: return``, ``_local`` is set: neither operand of the ``or`` held. A
    local given only ``self._local is not None and …`` is that test where it is tested; ``getattr(self, "_local",
    None)`` reads the attribute."""
    site, errors = _analysis(tmp_path, sample=sample + LOCAL)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


@pytest.mark.parametrize("sample", [
    """
        def _sample(self, hidden):
            if self._local is not None or hidden is None:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""",
    """
        def _sample(self, hidden):
            use_local = self._local is not None or hidden is None
            if use_local:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""",
    """
        def _sample(self, hidden):
            if not (self._local is None and hidden is not None):
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""",
], ids=["under an or", "under a local given an or", "under a not of an and"])
def test_a_test_of_the_state_in_one_operand_of_an_or_guards_nothing(tmp_path, sample):
    """``if self._local is not None or hidden is None:`` also runs its body with ``_local`` unset: the MTP head
    that lacks the member meets the read (a run with ``hidden`` None), so the state stands behind nothing there,
    whether tested in place, through a local, or as a ``not`` of an ``and`` (De Morgan)."""
    site, errors = _analysis(tmp_path, sample=sample + LOCAL)
    assert site.requires == ()
    assert errors == ["SC001"]


def test_a_state_set_under_an_or_with_the_instances_own_test_stands_behind_nothing(tmp_path):
    """``if self._supports_local() or self.eager:`` sets the state for an eager run whatever its draft has."""
    enable = "if self._supports_local() or self.eager:\n                self._local = True"
    body = 'return hasattr(self.model, "compute_draft_logits_local")'
    site, errors = _analysis(tmp_path, enable + SUPPORTS.replace("{body}", body))
    assert site.requires == ()
    assert errors == ["SC001"]


def test_a_local_whose_other_value_is_false_still_stands_for_the_state(tmp_path):
    """``use_local = self._local is not None if hidden is not None else False``: the false arm reaches no use."""
    sample = """
        def _sample(self, hidden):
            use_local = self._local is not None if hidden is not None else False
            if use_local:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
"""
    site, errors = _analysis(tmp_path, sample=sample + LOCAL)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


def test_a_conditional_expression_hundreds_of_arms_deep_loses_nothing_else(tmp_path):
    """A test nested past the interpreter's depth holds nothing known; the analysis goes on."""
    arms = " ".join(f"hidden if n == {i} else" for i in range(400))
    sample = f"""
        def _sample(self, hidden, n):
            use_local = {arms} False
            if self._local is not None:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
"""
    site, errors = _analysis(tmp_path, sample=sample + LOCAL)
    assert site.requires == ("compute_draft_logits_local",)


def test_an_off_by_default_flag_in_one_operand_of_an_or_is_no_rare_condition(tmp_path):
    """Past ``if self.use_local_argmax_reduction or hidden is None:`` a run with the flag off comes too."""
    sample = """
        def _sample(self, hidden):
            if self.use_local_argmax_reduction or hidden is None:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
"""
    site, errors = _analysis(tmp_path, enable="pass", sample=sample + LOCAL)
    assert (site.condition, errors) == (None, ["SC001"])


PUBLIC = SAMPLE.replace("_sample_local", "sample_local")

RUNNER = """
    class ModelRunner:
        def propose_draft(self, hidden):
            return self.speculator.sample_local(hidden)
"""


@pytest.mark.parametrize("called_elsewhere", [False, True], ids=["only by its instance", "also by the runner"])
def test_a_public_method_only_its_own_instance_calls_runs_past_the_tests_around_those_calls(tmp_path,
                                                                                             called_elsewhere):
    """vLLM's speculators name their hooks without an underscore (``sample_draft``, ``get_draft_top_tokens``). One
    no worker calls on another object is entered only where its own instance calls it, past ``if self._local is
    not None:``; once the model runner calls it on its speculator, that call passes no such test."""
    root = _speculators(tmp_path, sample=PUBLIC)
    if called_elsewhere:
        (root / "vllm/v1/worker/gpu/model_runner.py").write_text(textwrap.dedent(RUNNER))
    site, errors = _site_and_errors(root)
    assert (site.requires, errors) == (((), ["SC001"]) if called_elsewhere else (("compute_draft_logits_local",), []))


VALIDATING = """
        def _sample(self, hidden):
            if self.{flag}:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)

        def _sample_local(self, hidden):
            return self.model.logits_processor.gather(self.model.compute_draft_logits_local(hidden))

        def _validate(self):
            {validate}
"""
RAISES_UNLESS = 'if not hasattr(self.model, "compute_draft_logits_local"):\n{indent}raise ValueError("no")'


def _validated(tmp_path, validate: str, enable: str = "pass", flag: str = "use_local", heads: str = HEADS):
    """The base speculator copies ``flag`` from the config and runs ``_validate`` (``validate``) while it loads."""
    return _speculators(tmp_path, enable, init=f"self.{flag} = vllm_config.speculative_config.{flag}",
                        sample=VALIDATING.replace("{flag}", flag).replace("{validate}", validate), validating=True,
                        heads=heads)


@pytest.mark.parametrize("validate", [
    'if self.use_local and not hasattr(self.model, "compute_draft_logits_local"):\n                raise ValueError("no")',
    "if not self.use_local:\n                return\n            " + RAISES_UNLESS.replace("{indent}", " " * 16),
    "if self.use_local:\n                " + RAISES_UNLESS.replace("{indent}", " " * 20),
], ids=["flag and not hasattr", "past an early return", "nested"])
def test_a_flag_a_start_up_check_validates_guards_its_later_tests(tmp_path, validate):
    """The speculator raises while it loads unless a draft has ``compute_draft_logits_local`` when ``use_local`` is
    on: a later ``if self.use_local:`` runs only with such a draft (a launch with another was refused), so the
    MTP head never meets the processor read there. The flag still decides whether the line runs at all."""
    site, errors = _site_and_errors(_validated(tmp_path, validate))
    assert site.requires == ("compute_draft_logits_local",) and not site.certain
    assert errors == []


@pytest.mark.parametrize("enable", [
    "pass",
    "self.use_local = True",
], ids=["no check", "a subclass sets the flag after start-up"])
def test_a_flag_no_check_validates_for_every_instance_guards_nothing(tmp_path, enable):
    """Without the check, or with a DSPARK speculator that sets the flag again past start-up (in its
    ``_try_enable_local``, read here as run per request), a run with the flag on meets the read whatever its
    draft."""
    validate = "pass" if enable == "pass" else \
        "if not self.use_local:\n                return\n            " + RAISES_UNLESS.replace("{indent}", " " * 16)
    root = _validated(tmp_path, validate, enable.replace("self.use_local = True",
                                                              "pass\n\n        def step(self):\n"
                                                              "            self.use_local = True"))
    site, errors = _site_and_errors(root)
    assert site.requires == ()
    assert errors == ["SC001"]


def test_a_subclass_that_overrides_the_check_away_leaves_the_base_method_unguarded(tmp_path):
    """vLLM's draft-model proposer makes the base's checking method a no-op: the base's sampling, which both run,
    stands behind no check on the draft-model runs."""
    validate = "if not self.use_local:\n                return\n            " + RAISES_UNLESS.replace("{indent}", " " * 16)
    site, errors = _site_and_errors(_validated(tmp_path, validate, "pass\n\n        def _validate(self):\n"
                                                                    "            pass"))
    assert site.requires == ()
    assert errors == ["SC001"]


@pytest.mark.parametrize("form", ["past an early return", "flag and not hasattr", "nested", "two tests and not hasattr"])
def test_a_forward_must_fit_the_calls_the_validated_flag_leads_to(tmp_path, form):
    """The head's predictor has ``compute_draft_logits_local()`` without arguments; the sampling passes one. The
    head never meets that call while it lacks the member, but a forward would bring it there: the check's finding
    says the forward would fail, and offers none. The check is the same refusal after loading in each form."""
    heads = HEADS.replace("            self.logits_processor = LogitsProcessor()",
                          "            self.logits_processor = LogitsProcessor()\n\n"
                          "        def compute_draft_logits_local(self):\n            return None")
    flag = "use_local_argmax_reduction"  # off by default in the built-in profile: the check's refusal is reported
    validate = {
        "past an early return": f"if not self.{flag}:\n                return\n            "
                                + RAISES_UNLESS.replace("{indent}", " " * 16),
        "flag and not hasattr": f'if self.{flag} and not hasattr(self.model, "compute_draft_logits_local"):\n'
                                '                raise ValueError("no")',
        "nested": f"if self.{flag}:\n                " + RAISES_UNLESS.replace("{indent}", " " * 20),
        "two tests and not hasattr": f'if self.{flag} and self.eager and not hasattr(self.model, '
                                     '"compute_draft_logits_local"):\n                raise ValueError("no")',
    }[form]
    root = _validated(tmp_path, validate, flag=flag, heads=heads)
    (finding,) = [f for f in analyze(root).findings if f.class_name == "TinyMTP"
                  and f.member == "compute_draft_logits_local"]
    assert "refuses the run only after loading the weights without it" in finding.message
    assert "it takes 0 argument(s) and the call at line" in finding.message
    assert finding.delegate == ""


def test_the_calls_a_fix_must_fit_are_those_of_the_runs_that_load_the_class(tmp_path):
    """The DSPARK speculator calls the validated member with two arguments, but the engine's config loads its own
    head as every DSPARK draft: the MTP head never meets that call, with or without the member, so the forward
    to its predictor (which takes one) is offered as it is."""
    heads = HEADS.replace("            self.logits_processor = LogitsProcessor()",
                          "            self.logits_processor = LogitsProcessor()\n\n"
                          "        def compute_draft_logits_local(self, hidden):\n            return hidden")
    flag = "use_local_argmax_reduction"
    validate = f"if not self.{flag}:\n                return\n            " + RAISES_UNLESS.replace("{indent}", " " * 16)
    dspark_only = ("pass\n\n        def propose_spark(self, hidden):\n"
                   f"            if self.{flag}:\n"
                   "                return self.model.compute_draft_logits_local(hidden, hidden)")
    root = _validated(tmp_path, validate, dspark_only, flag=flag, heads=heads)
    config = root / "vllm/config/speculative.py"
    config.write_text(config.read_text() + textwrap.dedent("""
        def __post_init__(self):
            if self.method == "dspark":
                self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]
    """).replace("\n", "\n    "))
    (finding,) = [f for f in analyze(root).findings if f.class_name == "TinyMTP"
                  and f.member == "compute_draft_logits_local"]
    assert "forward" in finding.message and "a forward would fail there too" not in finding.message


TWO_STATES = ("self._local = getattr(self.model, \"compute_draft_logits_local\", None)\n"
              "            if {test}:\n                self._local_fn = self._local")
TWO_INIT = "self._local = None\n            self._local_fn = None"
EITHER = """
        def _sample(self, hidden):
            if self._local is not None or self._local_fn is not None:
                return {local}
            return self.model.compute_logits(hidden)
"""
IN_HELPER = EITHER.replace("{local}", "self._sample_local(hidden)") + LOCAL


@pytest.mark.parametrize("sample", [
    IN_HELPER,
    EITHER.replace("{local}", "self.model.logits_processor.gather(hidden)"),
    """
        def _sample(self, hidden):
            if self._local is None and self._local_fn is None:
                return self.model.compute_logits(hidden)
            return self._sample_local(hidden)
""" + LOCAL,
], ids=["in a helper it calls", "in place", "past an early return of an and of nots"])
def test_an_or_of_two_states_each_set_behind_the_same_test_guards_the_use(tmp_path, sample):
    """``_local`` and ``_local_fn`` are each given a true value only past a test of the draft's
    ``compute_draft_logits_local``: past ``if self._local is not None or self._local_fn is not None:`` one of
    them is set, so either way the draft passed that test. The ``or`` holds neither word, but both require the
    same member."""
    enable = TWO_STATES.replace("{test}", 'hasattr(self.model, "compute_draft_logits_local")')
    site, errors = _analysis(tmp_path, enable, init=TWO_INIT, sample=sample)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


@pytest.mark.parametrize("enable", [
    TWO_STATES.replace("{test}", 'hasattr(self.model, "get_top_tokens")'),
    TWO_STATES.replace("{test}", "self.eager"),
], ids=["the other behind a test of another member", "the other behind no test of the draft"])
def test_an_or_of_two_states_behind_different_tests_guards_nothing(tmp_path, enable):
    """When ``_local_fn`` stands behind a test of another member (``get_top_tokens``), or behind none, a run past
    the ``or`` may have passed only that one: the MTP head, which lacks ``compute_draft_logits_local``, meets the
    read."""
    site, errors = _analysis(tmp_path, enable, init=TWO_INIT, sample=IN_HELPER)
    assert site.requires == ()
    assert errors == ["SC001"]


EAGER = """


    class EagerSpeculator(BaseSpeculator):
        def load_model(self, target_model):
            super().load_model(target_model)
            self._local = make_local(self.model)

        def _sample(self, hidden):
            return BaseSpeculator._sample_local(self, hidden)
"""
PICKS_EAGER = """
    def init_speculator(vllm_config, device):
        if vllm_config.speculative_config.method == "dspark":
            from vllm.v1.worker.gpu.spec_decode.dspark.speculator import DSparkSpeculator
            return DSparkSpeculator(vllm_config, device)
        if vllm_config.speculative_config.method == "mtp":
            from vllm.v1.worker.gpu.spec_decode.dspark.speculator import EagerSpeculator
            return EagerSpeculator(vllm_config, device)
        from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator
        return BaseSpeculator(vllm_config, device)
"""


def test_a_helper_entered_past_a_state_test_needs_what_the_state_means_in_every_class_that_runs_it(tmp_path):
    """``_sample_local`` is entered past ``if self._local is not None:`` in the base, where only the DSPARK
    speculator gives ``_local`` a true value, behind its test of the draft. But the MTP run's speculator gives
    ``_local`` a value without any test and reaches the helper by a call not followed here (an explicit base-class
    call): in that class the state stands for nothing, and its MTP head meets the read."""
    root = _speculators(tmp_path, TESTED + EAGER)
    (root / "vllm/v1/worker/gpu/spec_decode/__init__.py").write_text(textwrap.dedent(PICKS_EAGER))
    site, errors = _site_and_errors(root)
    assert site.requires == ()
    assert errors == ["SC001"]


EITHER_LOCAL = """
        def _sample(self, hidden):
            use_local = self._local is not None or self._local_fn is not None
            if use_local:
                return {local}
            return self.model.compute_logits(hidden)
"""


@pytest.mark.parametrize("sample", [
    EITHER_LOCAL.replace("{local}", "self._sample_local(hidden)") + LOCAL,
    EITHER_LOCAL.replace("{local}", "self.model.logits_processor.gather(hidden)"),
], ids=["in a helper it calls", "in place"])
def test_a_local_given_an_or_of_two_states_each_set_behind_the_same_test_guards_the_use(tmp_path, sample):
    """``use_local = self._local is not None or self._local_fn is not None`` then ``if use_local:`` is the test
    written in place: the local holds neither word, but it needs what its formula needs, and each word needs
    ``compute_draft_logits_local``."""
    enable = TWO_STATES.replace("{test}", 'hasattr(self.model, "compute_draft_logits_local")')
    site, errors = _analysis(tmp_path, enable, init=TWO_INIT, sample=sample)
    assert site.requires == ("compute_draft_logits_local",)
    assert errors == []


ELSE_LOCAL = """
        def _sample(self, hidden):
            if hidden is not None:
                use_local = self._local is not None or self._local_fn is not None
            else:
                use_local = hidden is None
            if use_local:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""" + LOCAL


@pytest.mark.parametrize("enable, sample", [
    (TWO_STATES.replace("{test}", 'hasattr(self.model, "compute_draft_logits_local")'), ELSE_LOCAL),
    (TWO_STATES.replace("{test}", 'hasattr(self.model, "get_top_tokens")'),
     EITHER_LOCAL.replace("{local}", "self._sample_local(hidden)") + LOCAL),
    (TWO_STATES.replace("{test}", 'hasattr(self.model, "compute_draft_logits_local")'),
     ELSE_LOCAL.replace("use_local = hidden is None", "use_local = use_local or hidden is None")),
], ids=["another value that needs nothing", "the other state behind a test of another member",
        "another value naming the local itself"])
def test_a_local_that_may_be_true_without_the_test_guards_nothing(tmp_path, enable, sample):
    """A local the function also gives a value that needs nothing (``use_local = hidden is None``) needs only what
    every value needs; an ``or`` of states behind tests of different members needs neither member. A value that
    names the local itself is read without it (no endless reading): ``or hidden is None`` needs nothing."""
    site, errors = _analysis(tmp_path, enable, init=TWO_INIT, sample=sample)
    assert site.requires == ()
    assert errors == ["SC001"]


def test_a_chain_of_locals_each_naming_the_last_twice_is_read_once_each(tmp_path):
    """``v1 = v0 and v0``, ``v2 = v1 and v1``, …: what ``v40`` needs is what ``v0`` needs, read once per local (read
    per mention, it is 2**40 readings: the check never ends). The command runs in a process of its own, so that a
    run that does not end fails the test, after a limit no machine needs, rather than hanging the suite."""
    chain = "\n".join(f"            v{i} = v{i - 1} and v{i - 1}" for i in range(1, 41))
    sample = f"""
        def _sample(self, hidden):
            v0 = self._local is not None or self._local_fn is not None
{chain}
            if v40:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)
""" + LOCAL
    root = _speculators(tmp_path, TWO_STATES.replace("{test}", 'hasattr(self.model, "compute_draft_logits_local")'),
                        init=TWO_INIT, sample=sample)
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(root), "--format", "json", "--no-cache"],
                          capture_output=True, text=True, timeout=600, check=False)
    findings = json.loads(done.stdout)["findings"]
    assert not [f for f in findings if f["class"] == "TinyMTP" and f["method"] == "logits_processor"]
