"""Deriving the contract: which uses in worker code reach a role's model object, and which are guarded.

Each test writes its own worker file(s) over the base tree and compares the whole contract (role, member,
required, is-call, call sites with 1-based lines and the guarded flag); guard tests also check the finding's
code and severity on a wrapper that lacks the member.
"""

from __future__ import annotations

import pytest
from engine_trees import WORKER, analyze, base_tree, contract, forward_findings, line_of
from spec_contract.engine.config import ConfigError
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import Phase

BARE_WRAPPER = {"pkg/models/llava.py": """
    from pkg.models.llama import LlamaForCausalLM

    class LlavaForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

    EntryClass = LlavaForConditionalGeneration
"""}


def worker_tree(tmp_path, worker: str, extra: dict[str, str] | None = None):
    return base_tree(tmp_path, {WORKER: worker, **BARE_WRAPPER, **(extra or {})})


def only_target_entry(root, guarded: bool, is_call: bool = True, needle: str = "model.get_embed_and_head"):
    line = line_of(root, WORKER, needle)
    return [("target", "get_embed_and_head", not guarded, is_call, ((WORKER, line, guarded),))]


def sole_finding(analysis) -> tuple[str, str]:
    (finding,) = forward_findings(analysis)
    assert (finding.class_name, finding.member, finding.delegate) == (
        "LlavaForConditionalGeneration", "get_embed_and_head", "language_model")
    return finding.code, finding.severity


# guards -------------------------------------------------------------------------------------------

def test_hasattr_guard_makes_the_call_optional_and_the_finding_sc002_information(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if hasattr(model, "get_embed_and_head"):
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=True)
    assert sole_finding(analysis) == ("SC002", "information")


def test_getattr_with_default_is_an_optional_read(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                fn = getattr(self.target_worker.model_runner.model, "get_embed_and_head", None)
                if fn is not None:
                    return fn()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=True, is_call=False, needle="getattr(")
    assert sole_finding(analysis) == ("SC002", "information")


def test_callable_getattr_guard_makes_the_call_optional(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if callable(getattr(model, "get_embed_and_head", None)):
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    line_get = line_of(root, WORKER, "callable(")
    line_call = line_of(root, WORKER, "return model.get_embed_and_head")
    assert contract(analysis) == [
        ("target", "get_embed_and_head", False, True, ((WORKER, line_get, True), (WORKER, line_call, True)))]
    assert sole_finding(analysis) == ("SC002", "information")


def test_try_except_attribute_error_pass_makes_the_call_optional(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                try:
                    self.target_worker.model_runner.model.get_embed_and_head()
                except AttributeError:
                    pass
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=True)
    assert sole_finding(analysis) == ("SC002", "information")


def test_hasattr_negated_with_early_return_makes_the_call_optional(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if not hasattr(model, "get_embed_and_head"):
                    return None
                return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=True, needle="return model.get_embed_and_head")
    assert sole_finding(analysis) == ("SC002", "information")


def test_hasattr_negated_then_raise_leaves_the_call_required(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def init_heads(self):  # a start-up method: its gate refuses before the first request
                model = self.target_worker.model_runner.model
                if not hasattr(model, "get_embed_and_head"):
                    raise RuntimeError("the target model must share its embedding")
                return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False, needle="return model.get_embed_and_head")
    # required, behind a capability gate: a class without the member is refused at the gate, after the load
    assert sole_finding(analysis) == ("SC001", "error")


def test_a_check_in_another_method_is_where_a_run_without_the_member_stops(tmp_path):
    """A validation the worker runs while it starts (``_validate``: ``if not hasattr(m, "x"): raise``) and a
    use in a method a request runs: a class without the member is refused at the check, after the load, not at
    the first request (issue 36, item 4: vLLM's ``_validate_local_argmax_reduction``)."""
    root = worker_tree(tmp_path, """
        class Worker:
            def init_heads(self):  # a start-up method
                self._validate()

            def _validate(self):
                if not hasattr(self.target_worker.model_runner.model, "get_embed_and_head"):
                    raise ValueError("the target model must share its embedding")

            def forward_batch(self):
                return self.target_worker.model_runner.model.get_embed_and_head()
    """)
    analysis = analyze(root)
    check = line_of(root, WORKER, "if not hasattr(")
    use = line_of(root, WORKER, "return self.target_worker")
    (entry,) = analysis.contract.entries
    sites = sorted((s.span.line + 1, s.gate, s.phase) for s in entry.call_sites)
    assert sites == [(check, ("get_embed_and_head",), Phase.START_UP), (use, (), Phase.FIRST_REQUEST)]
    (finding,) = forward_findings(analysis)
    assert (finding.code, str(finding.severity)) == ("SC001", "error")
    assert f"the engine's check at {WORKER}:{check} refuses the run only after loading the weights" in finding.message


def test_except_attribute_error_that_reraises_leaves_the_call_required(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                try:
                    self.target_worker.model_runner.model.get_embed_and_head()
                except AttributeError:
                    raise
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False)
    assert sole_finding(analysis) == ("SC001", "error")


def test_guard_on_a_different_name_leaves_the_call_required_of_the_models_that_pass_it(tmp_path):
    """The call is not optional, but only a model with the tested member comes here: a wrapper that lacks both has
    no finding at that line, one that has the tested member and does not forward the call keeps its error."""
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if hasattr(model, "load_lm_head_from_target"):
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False)
    assert not forward_findings(analysis)
    (site,) = analysis.contract.entries[0].call_sites
    assert site.requires == ("load_lm_head_from_target",)
    (root / "pkg/models/llava.py").write_text((root / "pkg/models/llava.py").read_text().replace(
        "class LlavaForConditionalGeneration:", "class LlavaForConditionalGeneration:\n    load_lm_head_from_target = True\n"))
    assert sole_finding(analyze(root)) == ("SC001", "error")


def test_getattr_is_not_none_guard_makes_the_call_optional(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if getattr(model, "get_embed_and_head", None) is not None:
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == [("target", "get_embed_and_head", False, True, (
        (WORKER, line_of(root, WORKER, "if getattr("), True), (WORKER, line_of(root, WORKER, "return model."), True)))]
    assert sole_finding(analysis) == ("SC002", "information")


def test_hasattr_negated_then_raise_with_the_call_in_the_else_branch_stays_required(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def init_heads(self):  # a start-up method: its gate refuses before the first request
                model = self.target_worker.model_runner.model
                if not hasattr(model, "get_embed_and_head"):
                    raise RuntimeError("the target model must share its embedding")
                else:
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False, needle="return model.get_embed_and_head")
    # required, behind a capability gate: a class without the member is refused at the gate, after the load
    assert sole_finding(analysis) == ("SC001", "error")


def test_assert_hasattr_leaves_the_call_required(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                assert hasattr(model, "get_embed_and_head")
                return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False, needle="return model.get_embed_and_head")
    assert sole_finding(analysis) == ("SC001", "error")  # asserts vanish under ``python -O``: not a gate


def test_one_unguarded_use_makes_the_member_required(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                model = self.target_worker.model_runner.model
                if hasattr(model, "get_embed_and_head"):
                    model.get_embed_and_head()  # guarded
                model.get_embed_and_head()  # unguarded
    """)
    analysis = analyze(root)
    assert contract(analysis) == [("target", "get_embed_and_head", True, True, (
        (WORKER, line_of(root, WORKER, "# guarded"), True), (WORKER, line_of(root, WORKER, "# unguarded"), False)))]
    assert sole_finding(analysis) == ("SC001", "error")


# flow ---------------------------------------------------------------------------------------------

def test_an_assignment_expression_as_a_receiver_and_inside_a_hasattr_test(tmp_path):
    """``(model := …).get_embed_and_head()`` is a use of the model; ``if hasattr(model := …, "x"): model.x()`` is
    the guarded use the two-statement form is."""
    used = worker_tree(tmp_path / "used", """
        class Worker:
            def run(self):
                return (model := self.target_worker.model_runner.model).get_embed_and_head()
    """)
    assert sole_finding(analyze(used)) == ("SC001", "error")
    guarded = worker_tree(tmp_path / "guarded", """
        class Worker:
            def run(self):
                if hasattr(model := self.target_worker.model_runner.model, "get_embed_and_head"):
                    return model.get_embed_and_head()
    """)
    assert [(e.member, [s.guarded for s in e.call_sites]) for e in analyze(guarded).contract.entries
            if e.role.value == "target"] == [("get_embed_and_head", [True])]


def test_a_model_bound_in_a_test_by_an_assignment_expression(tmp_path):
    """``if (model := …model_runner.model) is not None:`` binds ``model`` as an assignment does."""
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                if (model := self.target_worker.model_runner.model) is not None:
                    return model.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False, needle="return model.get_embed_and_head")
    assert sole_finding(analysis) == ("SC001", "error")


@pytest.mark.parametrize("getter, read", [
    ("def target_model(self):", "self.target_model()"),
    ("@property\n            def target_model(self):", "self.target_model"),
    ("@functools.cached_property\n            def target_model(self):", "self.target_model"),
], ids=["a method", "a property", "a cached property"])
def test_a_method_or_property_of_the_worker_that_returns_the_model_stands_for_it(tmp_path, getter, read):
    """``self.target_model()`` (or the property ``self.target_model``) is the target model where the method
    returns ``self.target_worker.model_runner.model``."""
    root = worker_tree(tmp_path, f"""
        import functools


        class Worker:
            {getter}
                return self.target_worker.model_runner.model

            def run(self):
                return {read}.get_embed_and_head()
    """)
    analysis = analyze(root)
    assert contract(analysis) == only_target_entry(root, guarded=False, needle=f"return {read}.get_embed_and_head")
    assert sole_finding(analysis) == ("SC001", "error")


@pytest.mark.parametrize("getter", [
    "class Base:\n            def model(self):\n                return self.target_worker.model_runner.model\n\n\n"
    "        class Worker(Base):\n            def model(self):\n                return self.draft_model_runner.model",
    "class Worker:\n            def model(self):\n                def target():\n"
    "                    return self.target_worker.model_runner.model\n"
    "                return self.draft_model_runner.model",
], ids=["a subclass overrides the base's getter", "a function nested in the getter returns the target"])
def test_a_getter_stands_for_what_its_own_body_returns_for_that_class(tmp_path, getter):
    """A draft-only use through ``self.model()`` is asked of the draft alone: the override is what a ``Worker``
    runs, and a nested function's return is not the getter's."""
    root = worker_tree(tmp_path, f"""
        {getter}

            def run(self):
                return self.model().set_embed_and_head(None, None)
    """)
    assert [str(e.role) for e in analyze(root).contract.entries] == ["draft"]


def test_runner_alias_in_a_local(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                target_runner = self.target_worker.model_runner
                return target_runner.model.get_embed_and_head()
    """)
    assert contract(analyze(root)) == only_target_entry(root, guarded=False)


@pytest.mark.parametrize("decorator", ["@triton.jit", "@triton.jit(do_not_specialize=['n'])", "@jit"])
def test_a_jit_kernels_body_is_no_worker_code(tmp_path, decorator):
    """A kernel compiled for the device takes tensors and pointers: whatever its body names is no use of a model
    object, while the same body in a plain function is one."""
    root = worker_tree(tmp_path, f"""
        import triton
        from numba import jit

        class Worker:
            def run(self):
                self.kernel()
                self.helper()

            {decorator}
            def kernel(self):
                return self.target_worker.model_runner.model.get_embed_and_head()  # in a kernel

            def helper(self):
                return self.target_worker.model_runner.model.get_embed_and_head()
    """)
    (entry,) = contract(analyze(root))
    helper = line_of(root, WORKER, "def helper") + 1
    assert entry == ("target", "get_embed_and_head", True, True, ((WORKER, helper, False),))


def test_worker_attribute_set_from_the_target_worker_parameter_is_the_target(tmp_path):
    """NGRAMWorker: ``self.model_runner = target_worker.model_runner``, then ``self.model_runner.model.m()``."""
    root = worker_tree(tmp_path, """
        class NGRAMWorker:
            def __init__(self, server_args, target_worker):
                self.target_worker = target_worker
                self.model_runner = target_worker.model_runner

            def run(self):
                return self.model_runner.model.get_embed_and_head()
    """)
    assert contract(analyze(root)) == only_target_entry(root, guarded=False)


def test_worker_attribute_set_from_self_target_worker_is_the_target(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.model_runner = self.target_worker.model_runner

            def run(self):
                return self.model_runner.model.get_embed_and_head()
    """)
    assert contract(analyze(root)) == only_target_entry(root, guarded=False)


def test_tuple_unpacking_binds_each_element(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self):
                t, d = self.target_worker.model_runner, self.draft_model_runner
                embed, head = t.model.get_embed_and_head()
                d.model.set_embed_and_head(embed, head)
    """)
    analysis = analyze(root)
    assert contract(analysis) == [
        ("target", "get_embed_and_head", True, True, ((WORKER, line_of(root, WORKER, "t.model."), False),)),
        ("draft", "set_embed_and_head", True, True, ((WORKER, line_of(root, WORKER, "d.model."), False),)),
    ]


def test_loop_over_draft_runner_list(tmp_path):
    root = worker_tree(tmp_path, """
        class Worker:
            def run(self, embed, head):
                for runner in self.draft_runner_list:
                    runner.model.set_embed_and_head(embed, head)
    """)
    assert contract(analyze(root)) == [
        ("draft", "set_embed_and_head", True, True, ((WORKER, line_of(root, WORKER, "runner.model."), False),))]


HELPERS = "pkg/speculative/spec_utils.py"


def test_keyword_argument_flows_into_a_helper_in_another_worker_module(tmp_path):
    root = worker_tree(tmp_path, """
        from pkg.speculative.spec_utils import share_embed

        class Worker:
            def run(self):
                return share_embed(target_model=self.target_worker.model_runner.model)
    """, {HELPERS: """
        def share_embed(target_model):
            return target_model.get_embed_and_head()
    """})
    assert contract(analyze(root)) == [
        ("target", "get_embed_and_head", True, True, ((HELPERS, 2, False),))]


def test_positional_argument_flows_into_a_helper_through_a_module_alias(tmp_path):
    root = worker_tree(tmp_path, """
        from pkg.speculative import spec_utils

        class Worker:
            def run(self):
                runner = self.target_worker.model_runner
                return spec_utils.share_embed(1, runner.model)
    """, {HELPERS: """
        def share_embed(step, target_model):
            return target_model.get_embed_and_head()
    """})
    assert contract(analyze(root)) == [
        ("target", "get_embed_and_head", True, True, ((HELPERS, 2, False),))]


def test_constructor_flow_without_a_role_value_adds_nothing(tmp_path):
    root = worker_tree(tmp_path, """
        from pkg.speculative.spec_utils import DraftHelper

        class Worker:
            def __init__(self, tp_worker):
                self.helper = DraftHelper(target_worker=tp_worker.model_runner)

            def run(self):
                return self.helper.share()
    """, {HELPERS: """
        class DraftHelper:
            def __init__(self, target_worker):
                self.runner = target_worker

            def share(self):
                return self.runner.model.get_embed_and_head()
    """})
    # ``tp_worker.model_runner`` is not a role receiver: the constructor flow alone must not invent one, and
    # an empty contract is a configuration problem to state, never an all-clear.
    with pytest.raises(ConfigError, match="the contract is empty"):
        analyze(root)


def test_worker_class_constructed_with_the_target_worker_passes_its_role(tmp_path):
    root = worker_tree(tmp_path, """
        from pkg.speculative.spec_utils import DraftHelper

        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.helper = DraftHelper(target_worker=self.target_worker)
    """, {HELPERS: """
        class DraftHelper:
            def __init__(self, target_worker):
                self.embed, self.head = target_worker.model_runner.model.get_embed_and_head()
    """})
    assert contract(analyze(root)) == [
        ("target", "get_embed_and_head", True, True, ((HELPERS, 3, False),))]


def test_function_not_reached_by_any_role_value_is_not_contract(tmp_path):
    root = worker_tree(tmp_path, """
        def share_embed(model):
            return model.get_embed_and_head()

        class Worker:
            def run(self, other):
                return share_embed(other.model)
    """)
    with pytest.raises(ConfigError, match="the contract is empty"):
        analyze(root)


# the model runner ---------------------------------------------------------------------------------

RUNNER = "pkg/model_executor/model_runner.py"


def test_model_runner_self_model_under_a_speculative_if_is_target_contract(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/model_executor/__init__.py": "",
        RUNNER: """
            class ModelRunner:
                def load_model(self, weights):
                    self.model.load_weights(weights)
                    if self.eagle_use_aux_hidden_state:
                        self.model.set_eagle3_layers_to_capture(self.layer_ids)
                    if self.spec_algorithm.is_eagle3():
                        self.model.capture_aux_hidden_states()
                    self.model.forward(None)
        """,
    })
    analysis = analyze(root)
    assert [e for e in contract(analysis) if e[4][0][0] == RUNNER] == [
        ("target", "capture_aux_hidden_states", True, True, ((RUNNER, 7, False),)),
        ("target", "set_eagle3_layers_to_capture", True, True, ((RUNNER, 5, False),)),
    ]
    assert analysis.contract.get("target", "load_weights") is None


def test_self_model_under_a_speculative_if_outside_model_runner_is_not_contract(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/model_executor/__init__.py": "",
        RUNNER: """
            class CudaGraphRunner:
                def capture(self):
                    if self.eagle_use_aux_hidden_state:
                        self.model.set_eagle3_layers_to_capture(self.layer_ids)
        """,
    })
    assert analyze(root).contract.get("target", "set_eagle3_layers_to_capture") is None


def test_model_runner_outside_the_worker_globs_is_not_scanned(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/model_executor/__init__.py": "",
        "pkg/model_executor/forward_batch_info.py": """
            class ModelRunner:
                def load_model(self):
                    if self.eagle_use_aux_hidden_state:
                        self.model.set_eagle3_layers_to_capture(self.layer_ids)
        """,
    })
    assert analyze(root).contract.get("target", "set_eagle3_layers_to_capture") is None


def test_draft_runner_returned_by_mtp_model_runner_call(tmp_path):
    root = worker_tree(tmp_path, """
        class MultiLayerEagleWorker:
            def init(self, embed, head):
                for i in range(self.num_layers):
                    self.mtp_model_runner(i).model.set_embed_and_head(embed, head)
    """)
    assert contract(analyze(root)) == [
        ("draft", "set_embed_and_head", True, True, ((WORKER, line_of(root, WORKER, ".model.set_embed"), False),))]


def test_model_runner_passes_self_model_to_a_component_helper_that_calls_under_speculative_flags(tmp_path):
    """SGLang 0.5.23 moved the aux-hidden-state calls out of ``ModelRunner`` into a helper it calls with
    ``model=self.model``; the helper's uses are contract when they sit under speculative conditions."""
    helper = "pkg/model_executor/model_runner_components/aux_capture.py"
    root = base_tree(tmp_path, {
        "pkg/model_executor/__init__.py": "",
        RUNNER: """
            from pkg.model_executor.model_runner_components.aux_capture import configure_capture

            class ModelRunner:
                def init_backends(self):
                    configure_capture(model=self.model, eagle_use_aux_hidden_state=self.eagle_aux, is_dflash=self.dflash)
                    self.model.post_init()
        """,
        helper: """
            def configure_capture(*, model, eagle_use_aux_hidden_state, is_dflash):
                if eagle_use_aux_hidden_state:
                    if not hasattr(model, "set_eagle3_layers_to_capture"):
                        raise ValueError("needs set_eagle3_layers_to_capture")
                    model.set_eagle3_layers_to_capture([1, 2])
                if is_dflash and hasattr(model, "set_dflash_layers_to_capture"):
                    model.set_dflash_layers_to_capture([3])
                model.tie_weights()
        """,
    })
    analysis = analyze(root)
    assert [e for e in contract(analysis) if e[4][0][0] == helper] == [
        ("target", "set_dflash_layers_to_capture", False, True, ((helper, 7, True),)),
        ("target", "set_eagle3_layers_to_capture", True, True, ((helper, 5, False),)),
    ]
    assert analysis.contract.get("target", "post_init") is None
    assert analysis.contract.get("target", "tie_weights") is None


@pytest.mark.parametrize("graph_runner", [
    "pkg/model_executor/cuda_graph_runner.py", "pkg/model_executor/runner/decode_cuda_graph_runner.py",
], ids=["beside the model runner", "moved into a runner package (SGLang 0.5.16)"])
def test_cuda_graph_runner_model_runner_model_under_a_speculative_if_is_target_contract(tmp_path, graph_runner):
    root = base_tree(tmp_path, {
        "pkg/model_executor/__init__.py": "",
        "pkg/model_executor/runner/__init__.py": "",
        graph_runner: """
            class CudaGraphRunner:
                def __init__(self, model_runner):
                    self.model_runner = model_runner
                    if model_runner.spec_algorithm.is_eagle3() and model_runner.eagle_use_aux_hidden_state:
                        self.model_runner.model.set_eagle3_layers_to_capture()
                    self.model_runner.model.prepare_graph_inputs()
        """,
    })
    analysis = analyze(root)
    assert analysis.contract.get("target", "prepare_graph_inputs") is None
    assert contract(analysis) == [
        ("target", "get_embed_and_head", True, True, ((WORKER, 5, False),)),
        ("target", "set_eagle3_layers_to_capture", True, True, ((graph_runner, 5, False),)),
        ("draft", "set_embed_and_head", True, True, ((WORKER, 6, False),)),
    ]


CAPTURE_CHAIN = """
    class Worker:
        def __init__(self, ids):
            model = self.target_worker.model_runner.model
            if hasattr(model, "set_dspark_layers_to_capture"):
                model.set_dspark_layers_to_capture(ids)
            elif hasattr(model, "set_dflash_layers_to_capture"):
                model.set_dflash_layers_to_capture(ids)
            else:
                raise ValueError("the target cannot capture aux hidden states")
"""
CAPTURE_GETATTR_OR = """
    class Worker:
        def __init__(self, ids):
            model = self.target_worker.model_runner.model
            setter = (getattr(model, "set_dspark_layers_to_capture", None)
                      or getattr(model, "set_dflash_layers_to_capture", None))
            if setter is None:
                raise ValueError("the target cannot capture aux hidden states")
            setter(ids)
"""


def test_a_gate_over_alternatives_read_by_getattr_or_is_the_hasattr_chain_s(tmp_path):
    """``setter = getattr(m, "a", None) or getattr(m, "b", None)`` then ``if setter is None: raise``: one check
    that either member passes, as the ``hasattr`` chain ending in ``raise`` is; a class with neither is refused
    there after the load, not left out as if both reads were optional."""
    def gates(worker: str, where: str):
        analysis = analyze(worker_tree(tmp_path / where, worker))
        return (sorted((e.member, s.gate, s.guarded) for e in analysis.contract.entries for s in e.call_sites),
                [(f.code, f.member, f.message) for f in analysis.findings])

    both = ("set_dflash_layers_to_capture", "set_dspark_layers_to_capture")
    chain, by_getattr = gates(CAPTURE_CHAIN, "chain"), gates(CAPTURE_GETATTR_OR, "getattr")
    assert by_getattr[0] == [(member, both, False) for member in both]
    assert by_getattr == chain and chain[1]


def test_an_or_of_optional_reads_of_two_models_is_no_gate_of_either(tmp_path):
    """``getattr(target, "a", None) or getattr(draft, "a", None)`` then ``raise``: a target without ``a`` runs on
    with a draft that has it, so neither read is a check the target fails alone."""
    worker = CAPTURE_GETATTR_OR.replace('getattr(model, "set_dflash_layers_to_capture", None)',
                                        'getattr(self.draft_model_runner.model, "set_dspark_layers_to_capture", None)')
    analysis = analyze(worker_tree(tmp_path, worker))
    assert {(e.member, s.gate, s.guarded) for e in analysis.contract.entries for s in e.call_sites} == {
        ("set_dspark_layers_to_capture", (), True)}


def test_an_optional_read_of_a_member_named_at_run_time_is_no_gate(tmp_path):
    """``getattr(model, name, None)`` names no member the reading can know: the ``raise`` after it checks nothing
    the contract holds, and the read beside it stays the optional one it is."""
    worker = CAPTURE_GETATTR_OR.replace('getattr(model, "set_dspark_layers_to_capture", None)',
                                        "getattr(model, self.setter_name, None)")
    analysis = analyze(worker_tree(tmp_path, worker))
    assert sorted((e.member, s.gate, s.guarded) for e in analysis.contract.entries for s in e.call_sites) == [
        ("set_dflash_layers_to_capture", (), True)]


def test_a_gate_in_a_per_request_method_is_a_first_request_crash_not_a_refusal(tmp_path):
    """A getattr-then-raise in a decode step lets the server start, then fails the first request: the use is a
    crash point (SC001, an error), and a start-up gate on the same member is conditional, so refuses nothing."""
    root = worker_tree(tmp_path, """
        class Worker:
            def __init__(self, domino):
                if domino:
                    head = getattr(self.target_worker.model_runner.model, "get_embed_and_head", None)
                    if head is None:
                        raise ValueError("Domino needs the target's get_embed_and_head")

            def forward_batch_generation(self):
                head = getattr(self.target_worker.model_runner.model, "get_embed_and_head", None)
                if head is None:
                    raise RuntimeError("the target model must share its embedding")
                return head()
    """)
    analysis = analyze(root)
    phases = {site.span.line: str(site.phase) for entry in analysis.contract.entries for site in entry.call_sites}
    assert sorted(phases.values()) == ["first request", "start-up"]
    assert sole_finding(analysis) == ("SC001", "error")
    # where a plain run dies: the decode step's read, not the Domino-only one at start-up
    line = line_of(root, WORKER, 'raise RuntimeError') - 2
    assert forward_findings(analysis)[0].message.endswith(
        f"reads it at {WORKER}:{line}, and the engine's check at {WORKER}:{line} refuses the run only at the first "
        "request without it")


def test_a_private_helper_called_only_under_a_test_is_not_where_every_run_dies(tmp_path):
    """``_warm_eager_selector`` reads the target's member, but ``__init__`` calls it only ``if dp_attention``:
    a plain run reaches that read never, and dies at the decode step's instead, at the first request. The
    helper's use is still in the contract (a run with DP attention reaches it at start-up)."""
    root = worker_tree(tmp_path, """
        class Worker:
            def __init__(self, dp_attention):
                if dp_attention:
                    self._warm_eager_selector()

            def _warm_eager_selector(self):
                self.target_worker.model_runner.model.get_embed_and_head()

            def forward_batch_generation(self):
                return self.target_worker.model_runner.model.get_embed_and_head()
    """)
    analysis = analyze(root)
    sites = [(s.span.line + 1, str(s.phase)) for e in analysis.contract.entries for s in e.call_sites]
    warm, step = line_of(root, WORKER, "def _warm_eager_selector") + 1, line_of(root, WORKER, "return self.target")
    assert sites == [(warm, "start-up"), (step, "first request")]
    assert sole_finding(analysis) == ("SC001", "error")
    assert forward_findings(analysis)[0].message.endswith(f"calls it at {WORKER}:{step} (first request)")
    (crash,) = analysis.status_of(ClassKey("pkg.models.llava", "LlavaForConditionalGeneration")).algorithm(
        "EAGLE").crashes
    assert (crash.site.span.line + 1, crash.phase, crash.certain) == (step, Phase.FIRST_REQUEST, True)
