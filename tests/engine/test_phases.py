"""When a finding's worker line runs, derived from which worker entry point reaches it, never asserted: a
capability check (vLLM's ``supports_eagle3``) and the proposers' reads take the phase of their function as any
worker use does, and a worker function no worker calls runs at start-up when a start-up method of a
``start-up-callers`` file calls it (tokenspeed's executor wiring its drafter in ``__init__``); a guarded use
in a per-step method takes the worker's fallback every step.
"""

from __future__ import annotations

from engine_trees import analyze, make_tree
from spec_contract.engine.results import Phase
from test_engine_vllm import RUNNER, vllm_tree

PER_STEP_RUNNER = RUNNER.replace("self.setup_aux()", "pass").replace("def setup_aux(self):", "def execute_model(self):")


def test_a_capability_check_a_start_up_method_reaches_runs_at_start_up(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    (gated,) = analysis.capabilities
    assert [(s.span.line + 1, s.phase) for s in gated.sites] == [(10, Phase.START_UP)]
    assert [s.phase for s in gated.reads] == [Phase.START_UP]  # the proposer's load_model
    assert "a EAGLE3 run is refused only after loading the weights by the check at" in next(
        f.message for f in analysis.findings if f.code == "SC006")


def test_a_capability_check_in_a_per_step_method_runs_at_the_first_request(tmp_path):
    analysis = analyze(vllm_tree(tmp_path, {"vllm/v1/worker/gpu_model_runner.py": PER_STEP_RUNNER}))
    (gated,) = analysis.capabilities
    assert [(s.span.line + 1, s.phase) for s in gated.sites] == [(10, Phase.FIRST_REQUEST)]
    assert "a EAGLE3 run is refused only at the first request by the check at" in next(
        f.message for f in analysis.findings if f.code == "SC006")


DRAFTER = """
    class Drafter:
        def wire_target(self, target_model):
            self.embed = target_model.get_input_embeddings()

        def propose(self, target_model):
            return target_model.lm_head

        def step(self, target_model):
            return self.propose(target_model)

        def verify(self, target_model):
            return target_model.get_top_tokens()

        def score(self, target_model):
            if hasattr(target_model, "get_scores"):
                target_model.get_scores()
"""
EXECUTOR = """
    from fork.runtime.drafter import Drafter


    class Executor:
        def __init__(self, model_runner):
            self.drafter = pick_drafter()
            self._wire(model_runner)

        def _wire(self, model_runner):
            self.drafter.wire_target(model_runner.model)
            self.drafter.propose(model_runner.model)  # a warm-up of what the workers call per step

        def execute(self, model_runner):
            self.drafter.verify(model_runner.model)
            self.drafter.score(model_runner.model)
"""
CONFIG = """
    [tool.spec-contract]
    workers = ["**/drafter.py"]
    model-files = ["**/models/*.py"]
    {callers}

    [[tool.spec-contract.receivers]]
    pattern = "target_model"
    role = "target"
"""
MODEL = """
    class ToyForCausalLM:
        def get_input_embeddings(self):
            return None


    EntryClass = ToyForCausalLM
"""


def phases(tmp_path, callers: str) -> dict[str, Phase]:
    root = make_tree(tmp_path, {
        "pyproject.toml": CONFIG.format(callers=callers), "fork/__init__.py": "", "fork/runtime/__init__.py": "",
        "fork/runtime/drafter.py": DRAFTER, "fork/runtime/executor.py": EXECUTOR, "fork/models/toy.py": MODEL,
    })
    analysis = analyze(root)
    return {entry.member: site.phase for entry in analysis.contract.entries for site in entry.call_sites}


def test_an_entry_point_a_start_up_caller_calls_runs_at_start_up(tmp_path):
    assert phases(tmp_path / "bare", "") == {"get_input_embeddings": Phase.FIRST_REQUEST,
                                             "lm_head": Phase.FIRST_REQUEST, "get_top_tokens": Phase.FIRST_REQUEST,
                                             "get_scores": Phase.EVERY_STEP}
    # wire_target: an entry point the executor's __init__ reaches; propose: the workers call it per step, so the
    # executor's warm-up call does not move it; verify: the executor calls it per request
    assert phases(tmp_path / "callers", 'start-up-callers = ["**/executor.py"]') == {
        "get_input_embeddings": Phase.START_UP, "lm_head": Phase.FIRST_REQUEST,
        "get_top_tokens": Phase.FIRST_REQUEST, "get_scores": Phase.EVERY_STEP}


def test_a_form_feed_above_the_capability_check_moves_no_line(tmp_path):
    """Lines are counted as the parser and editors count them: a form feed in a comment (one line for both,
    two for ``str.splitlines``) leaves the check's site on the line an editor shows it on."""
    runner = RUNNER.replace("    from vllm", "    # \x0c section\n    from vllm", 1)
    analysis = analyze(vllm_tree(tmp_path, {"vllm/v1/worker/gpu_model_runner.py": runner}))
    (gated,) = analysis.capabilities
    assert [(s.span.line + 1, s.span.col) for s in gated.sites] == [(11, 15)]
