"""SC015 for a target, and the test a helper makes before the value a state is set from.

A target that shows it means to run the algorithm and lacks a method the worker calls only past an option it
cannot decide crashes when the option is on: an information, naming the option. A state set from a helper's
value stands behind the test the helper makes of the model it is handed (SGLang 0.5.23's
``_configure_target_hidden_projection`` returns False unless ``isinstance(target_model, P)``): a class that
fails it never reaches the uses under the state.
"""

from __future__ import annotations

import pytest
from engine_trees import analyze, make_tree

PACKAGES = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": ""}

# Two targets that mean to run EAGLE (they have its members); one also has the fast path.
MODELS = """
    class FastForCausalLM:
        def get_embed_and_head(self):
            return None, None

        def project_hidden(self, hidden):
            return hidden

        def fast_path(self, hidden):
            return hidden


    class SlowForCausalLM:
        def get_embed_and_head(self):
            return None, None


    EntryClass = [FastForCausalLM, SlowForCausalLM]
"""

WORKER = """
    from typing import Protocol


    class _SupportsProjection(Protocol):
        def project_hidden(self, hidden): ...


    def _configure_projection(*, target_model, enabled):
        if not isinstance(target_model, _SupportsProjection):
            return False
        return enabled


    class EAGLEWorker:
        def __init__(self, target_worker, server_args):
            self.target_worker = target_worker
            self.use_fast = server_args.enable_fast_path
            self.embed, self.head = target_worker.model_runner.model.get_embed_and_head()
            self._projecting = _configure_projection(target_model=target_worker.model_runner.model, enabled=True)

        def step(self, hidden):
            if self.use_fast:
                hidden = self.target_worker.model_runner.model.fast_path(hidden)
            if self._projecting:
                hidden = self.target_worker.model_runner.model.project_hidden(hidden)
            return hidden
"""


# the helper's test as the value it returns, not an early return
RETURNING = WORKER.replace(
    "        if not isinstance(target_model, _SupportsProjection):\n            return False\n        return enabled",
    '        return bool(getattr(target_model, "project_hidden", None))')


def _analysis(tmp_path, worker: str = WORKER):
    return analyze(make_tree(tmp_path, {**PACKAGES, "pkg/models/targets.py": MODELS,
                                        "pkg/speculative/eagle_worker.py": worker}))


def test_a_target_without_a_method_called_past_an_option_gets_the_information(tmp_path):
    analysis = _analysis(tmp_path)
    found = [(f.code, f.severity.value, f.class_name, f.condition) for f in analysis.findings
             if f.member == "fast_path"]
    assert found == [("SC015", "information", "SlowForCausalLM", "use_fast")]


@pytest.mark.parametrize(("worker", "requires"), [(WORKER, ("*",)), (RETURNING, ("project_hidden",))],
                         ids=["isinstance, then an early return", "the value returned"])
def test_a_state_set_from_a_helper_stands_behind_the_helper_s_test_of_the_model(tmp_path, worker, requires):
    """``_projecting`` is true only for a model that passes the helper's test (``isinstance(…,
    _SupportsProjection)``, or the ``getattr`` it returns): the slow target, which lacks ``project_hidden``,
    never reaches the call."""
    assert worker.count("_SupportsProjection") == (2 if worker is WORKER else 1)  # the variant is written
    analysis = _analysis(tmp_path, worker)
    (site,) = [s for e in analysis.contract.entries if e.member == "project_hidden" for s in e.call_sites
               if s.is_call]  # the call under the state (the helper's own getattr is a guarded read)
    assert site.requires == requires
    assert not [f for f in analysis.findings if f.member == "project_hidden"]
    crashing = {crash.member for status in analysis.statuses() if status.name == "SlowForCausalLM"
                for algorithm in status.algorithms for crash in algorithm.crashes}
    assert "project_hidden" not in crashing
