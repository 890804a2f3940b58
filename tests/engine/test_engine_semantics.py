"""What a missing forward costs decides the finding's kind: gates, fallbacks, rare conditions and roles.

Each tree is SGLang-shaped and small: a model runner that configures aux hidden-state capture behind
capability gates, algorithm workers (``speculative/dflash_worker.py`` is DFLASH by the profile's file globs,
``speculative/dspark_worker.py`` DSPARK, gated by DFLASH), the Llama inner model that provides everything,
and one wrapper per test. Every test compares codes, severities and members, and the messages where the
message is the point.
"""

from __future__ import annotations

import pytest
from engine_trees import EAGLE_WORKER, SPEC_INFO, SPEC_INFO_PATH, analyze, forward_findings, make_tree
from spec_contract.engine.check.status import algorithm_status
from spec_contract.engine.config import ConfigError
from spec_contract.engine.edits.fix import delegation_edits
from spec_contract.engine.text import apply_edits

RUNNER = "pkg/model_executor/model_runner.py"
DFLASH = "pkg/speculative/dflash_worker.py"
DSPARK = "pkg/speculative/dspark_worker.py"
EAGLE = "pkg/speculative/eagle_worker.py"

GATED_RUNNER = """
    class ModelRunner:
        def init_attention_backends(self):
            if self.eagle_use_aux_hidden_state:
                if not hasattr(self.model, "set_eagle3_layers_to_capture"):
                    raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")
                self.model.set_eagle3_layers_to_capture(self.layer_ids)
            if self.dflash_use_aux_hidden_state:
                if self.is_dspark and hasattr(self.model, "set_dspark_layers_to_capture"):
                    self.model.set_dspark_layers_to_capture(self.layer_ids)
                elif hasattr(self.model, "set_dflash_layers_to_capture"):
                    self.model.set_dflash_layers_to_capture(self.layer_ids)
                else:
                    raise ValueError("DFLASH needs a capture method")
"""

DFLASH_WORKER = """
    class DFlashWorker:
        def __init__(self, target_worker):
            self.target_worker = target_worker

        def embed(self):
            return self.target_worker.model_runner.model.get_input_embeddings()
"""

LLAMA = """
    class LlamaForCausalLM:
        def get_embed_and_head(self):
            return None, None

        def set_embed_and_head(self, embed, head):
            pass

        def set_eagle3_layers_to_capture(self, layer_ids):
            pass

        def set_dflash_layers_to_capture(self, layer_ids):
            pass

        def get_input_embeddings(self):
            return None

        def logits_processor(self, hidden):
            return hidden

    EntryClass = LlamaForCausalLM
"""


def wrapper(body: str = "", name: str = "LlavaForConditionalGeneration") -> str:
    """A wrapper holding the Llama model in ``self.language_model``, with ``body`` (4-space methods)."""
    return f"""
from pkg.models.llama import LlamaForCausalLM


class {name}:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)
{body}

EntryClass = {name}
"""


def tree(tmp_path, files: dict[str, str]):
    return make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
        "pkg/model_executor/__init__.py": "", "pkg/models/llama.py": LLAMA, SPEC_INFO_PATH: SPEC_INFO, **files,
    })


def kinds(analysis) -> list[tuple[str, str, str]]:
    """(code, severity, member) of every finding on the wrapper(s)."""
    return sorted((f.code, f.severity, f.member) for f in forward_findings(analysis) if f.class_name != "LlamaForCausalLM")


def only(analysis):
    (finding,) = [f for f in forward_findings(analysis) if f.class_name != "LlamaForCausalLM"]
    return finding


# capability gates ------------------------------------------------------------------------------------------

def test_a_hasattr_then_raise_gate_after_the_load_is_a_missing_forward_naming_the_check(tmp_path):
    # the check tests the loaded model: failing it costs the load, as a crash does (an error, not a warning)
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, "pkg/models/llava.py": wrapper("""
    def set_dflash_layers_to_capture(self, layer_ids):
        self.language_model.set_dflash_layers_to_capture(layer_ids)
""")})
    finding = only(analyze(root))
    assert (finding.code, finding.severity, finding.member, finding.algorithm) == (
        "SC001", "error", "set_eagle3_layers_to_capture", "EAGLE3")
    assert "the engine's check at pkg/model_executor/model_runner.py:4 refuses the run only after loading the " \
           "weights" in finding.message


def test_a_gate_that_neither_the_class_nor_its_inner_passes_reports_nothing(tmp_path):
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, "pkg/models/llama.py": """
        class LlamaForCausalLM:
            def get_input_embeddings(self):
                return None

        EntryClass = LlamaForCausalLM
    """, DFLASH: DFLASH_WORKER, "pkg/models/llava.py": wrapper()})
    assert kinds(analyze(root)) == []


def test_gate_chain_is_a_disjunction_and_any_member_passes_it(tmp_path):
    passes = wrapper("""
    def set_dspark_layers_to_capture(self, layer_ids):
        pass

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)
""")
    # the DSPARK branch admits DSPARK runs only: a DFLASH run still needs the DFLASH member, which the inner has
    root = tree(tmp_path / "a", {RUNNER: GATED_RUNNER, "pkg/models/llava.py": passes})
    finding = only(analyze(root))
    assert (finding.code, finding.member, finding.algorithm) == ("SC001", "set_dflash_layers_to_capture", "DFLASH")
    fails = wrapper("""
    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)
""")
    root = tree(tmp_path / "b", {RUNNER: GATED_RUNNER, "pkg/models/llava.py": fails})
    finding = only(analyze(root))
    # the inner provides only the DFLASH member of the disjunction: that is the one to forward, for both runs
    assert (finding.code, finding.member) == ("SC001", "set_dflash_layers_to_capture")
    assert finding.algorithm is None and finding.call_sites[0].algorithms == {"DFLASH", "DSPARK"}


def test_getattr_then_raise_is_a_required_gate_and_getattr_then_degrade_stays_optional(tmp_path):
    worker = """
        class DFlashWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def init_gate(self):
                head = getattr(self.target_worker.model_runner.model, "get_embed_and_head", None)
                if head is None or self.other is None:
                    raise ValueError("DFLASH needs the target's get_embed_and_head")

            def degrade(self):
                fn = getattr(self.target_worker.model_runner.model, "get_input_embeddings", None)
                if fn is None:
                    return None
                return fn()
    """
    root = tree(tmp_path, {DFLASH: worker, "pkg/models/llava.py": wrapper()})
    analysis = analyze(root)
    entries = {(e.member, e.required) for e in analysis.contract.entries}
    assert entries == {("get_embed_and_head", True), ("get_input_embeddings", False)}
    gate = next(e for e in analysis.contract.entries if e.member == "get_embed_and_head").call_sites[0]
    assert gate.gate == ("get_embed_and_head",) and gate.algorithm == "DFLASH"
    assert kinds(analysis) == [("SC001", "error", "get_embed_and_head")]


def test_members_past_a_failed_gate_are_listed_in_the_gate_s_finding(tmp_path):
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, DFLASH: DFLASH_WORKER, "pkg/models/llava.py": wrapper("""
    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)
""")})
    finding = only(analyze(root))
    assert (finding.code, finding.member) == ("SC001", "set_dflash_layers_to_capture")
    assert [f.member for f in finding.also] == ["get_input_embeddings"]
    assert finding.message.endswith("past that check the run also needs `get_input_embeddings`")


def test_a_class_that_passes_the_gate_gets_an_error_for_what_it_still_lacks(tmp_path):
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, DFLASH: DFLASH_WORKER, "pkg/models/llava.py": wrapper("""
    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)

    def set_dflash_layers_to_capture(self, layer_ids):
        self.language_model.set_dflash_layers_to_capture(layer_ids)
""")})
    finding = only(analyze(root))
    assert (finding.code, finding.severity, finding.member, finding.algorithm) == (
        "SC001", "error", "get_input_embeddings", "DFLASH")


def test_an_algorithm_whose_runs_pass_another_s_check_stops_there_too(tmp_path):
    dspark = """
        class DSparkWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def hook(self):
                self.target_worker.model_runner.model.logits_processor(None)
    """
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, DSPARK: dspark, "pkg/models/llava.py": wrapper("""
    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)
""")})
    # DSPARK runs set the DFLASH capture flag (see SPEC_INFO): they meet its check first
    finding = only(analyze(root))
    assert (finding.code, finding.member, [f.member for f in finding.also]) == (
        "SC001", "set_dflash_layers_to_capture", ["logits_processor"])


# fallbacks and rare conditions -----------------------------------------------------------------------------

def test_a_fallback_read_is_not_asked_of_a_class_whose_inner_has_the_primary(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def embed(self):
                target = self.target_worker.model_runner.model
                if hasattr(target, "get_input_embeddings"):
                    return target.get_input_embeddings()
                return target.model.get_input_embeddings()
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llava.py": wrapper("""
    @property
    def model(self):
        return self.language_model
""", name="PlainWrapper")})
    analysis = analyze(root)
    site = next(e for e in analysis.contract.entries if e.member == "model").call_sites[0]
    assert site.alternative_of == ("get_input_embeddings",)
    # only the guarded primary is reported; the fallback `model` is there anyway
    assert kinds(analysis) == [("SC002", "information", "get_input_embeddings")]


def test_an_except_attribute_error_fallback_is_a_rare_condition(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def share(self):
                target = self.target_worker.model_runner.model
                try:
                    return target.get_embed_and_head()
                except AttributeError:
                    if not self.pipeline_stage_lacks_embedding(target):
                        raise
                    return None, target.logits_processor
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llama.py": LLAMA.replace(
        "def get_embed_and_head(self):\n            return None, None", "def unrelated(self):\n            pass"),
        "pkg/models/llava.py": wrapper()})
    finding = only(analyze(root))
    assert (finding.code, finding.member) == ("SC004", "logits_processor")
    assert finding.condition == "`get_embed_and_head` raised AttributeError"


def test_an_environment_flag_makes_the_use_a_rare_condition(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def maybe(self):
                if envs.SGLANG_EXPERIMENTAL_HOOK.get():
                    self.target_worker.model_runner.model.logits_processor(None)
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llava.py": wrapper()})
    finding = only(analyze(root))
    assert (finding.code, finding.severity, finding.condition) == (
        "SC004", "information", "envs.SGLANG_EXPERIMENTAL_HOOK.get()")
    assert finding.message.endswith("only when `envs.SGLANG_EXPERIMENTAL_HOOK.get()`")


def test_a_method_that_is_false_unless_a_flag_is_set_makes_what_follows_its_early_return_rare(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def _eligible(self):
                \"\"\"Only with the experimental flag.\"\"\"
                if not os.environ.get("SGLANG_DEFER"):
                    return False
                return self.other_checks()

            def build(self):
                if not self._eligible():
                    return None
                self.target_worker.model_runner.model.logits_processor(None)
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llava.py": wrapper()})
    finding = only(analyze(root))
    assert (finding.code, finding.condition) == ("SC004", 'os.environ.get("SGLANG_DEFER")')


def test_a_model_type_test_makes_the_use_a_rare_condition_and_its_else_branch_stays_required(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def pick(self, config):
                model = self.target_worker.model_runner.model
                if config.model_type == "exotic":
                    return model.logits_processor(None)
                return model.get_input_embeddings()
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llava.py": wrapper()})
    assert kinds(analyze(root)) == [("SC001", "error", "get_input_embeddings"),
                                   ("SC004", "information", "logits_processor")]


# roles ----------------------------------------------------------------------------------------------------

# An EAGLE worker that uses only the target's get_embed_and_head (the resolution shapes below need no more)
TARGET_ONLY_WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker):
            self.target_worker = target_worker
            self.target_worker.model_runner.model.get_embed_and_head()
"""


def test_draft_members_are_errors_on_draft_heads_and_warnings_elsewhere(tmp_path):
    root = tree(tmp_path, {EAGLE: EAGLE_WORKER, "pkg/models/llava.py": wrapper(),
                           "pkg/models/eagle.py": wrapper(name="LlamaForCausalLMEagle")})
    analysis = analyze(root)
    found = sorted((f.class_name, f.code, f.severity, f.member) for f in analysis.findings)
    assert found == [
        ("LlamaForCausalLMEagle", "SC001", "error", "set_embed_and_head"),
        ("LlavaForConditionalGeneration", "SC001", "error", "get_embed_and_head"),
        ("LlavaForConditionalGeneration", "SC005", "warning", "set_embed_and_head"),
    ]
    sc005 = next(f for f in analysis.findings if f.code == "SC005")
    assert sc005.message.endswith("that crashes only if a draft checkpoint names this class")


def test_classification_and_reward_models_are_never_targets(tmp_path):
    root = tree(tmp_path, {EAGLE: EAGLE_WORKER,
                           "pkg/models/reward.py": wrapper(name="LlavaForSequenceClassification")})
    assert kinds(analyze(root)) == [("SC005", "warning", "set_embed_and_head")]


# fixes and status -----------------------------------------------------------------------------------------

def test_the_capability_fix_forwards_the_gate_member_and_the_members_past_it_and_rechecks_clean(tmp_path):
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, DFLASH: DFLASH_WORKER, "pkg/models/llava.py": wrapper("""
    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)
""")})
    analysis = analyze(root)
    (edit,) = delegation_edits(analysis, analysis.findings).edits
    path = root / "pkg/models/llava.py"
    before = path.read_text()
    path.write_text(apply_edits(before, [edit]))
    after = path.read_text()
    assert "def set_dflash_layers_to_capture(self, layer_ids):" in after
    assert "return self.language_model.get_input_embeddings()" in after
    assert kinds(analyze(root)) == []


def test_algorithm_status_says_supported_or_crashes_a_failed_check_after_the_load_included(tmp_path):
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, DFLASH: DFLASH_WORKER, "pkg/models/llava.py": wrapper("""
    def set_dflash_layers_to_capture(self, layer_ids):
        self.language_model.set_dflash_layers_to_capture(layer_ids)
""")})
    analysis = analyze(root)
    (key,) = [k for k in analysis.checked if k.qualname == "LlavaForConditionalGeneration"]
    status = {s.algorithm: (s.state, s.members) for s in algorithm_status(analysis.index, key, analysis.contract,
                                                                         analysis.config)}
    assert status == {
        "EAGLE3": ("crashes", ("set_eagle3_layers_to_capture",)),  # its check refuses it, after the load
        "DFLASH": ("crashes", ("get_input_embeddings",)),
        "DSPARK": ("supported", ()),  # the DFLASH member passes its check, and no worker of its own asks more
    }


# an empty contract ----------------------------------------------------------------------------------------

def test_an_empty_contract_is_a_configuration_error_that_says_what_to_set(tmp_path):
    root = make_tree(tmp_path / "bare", {"pkg/__init__.py": "", "pkg/models/__init__.py": "",
                                         "pkg/models/llama.py": LLAMA, "pkg/models/llava.py": wrapper()})
    with pytest.raises(ConfigError, match="has no worker files"):
        analyze(root)
    misplaced = tree(tmp_path / "misplaced", {EAGLE: EAGLE_WORKER, "pyproject.toml": """
        [tool.spec-contract]
        receivers = []
    """})
    with pytest.raises(ConfigError, match=r"a \[\[receivers\]\] table belongs under \[tool.spec-contract\]"):
        analyze(misplaced)


# flow and resolution shapes -------------------------------------------------------------------------------

def test_a_target_passed_into_a_method_of_another_worker_class_is_contract_there(tmp_path):
    worker = """
        class Proposer:
            def propose(self, *, target_model, bs):
                return target_model.get_input_embeddings()

        class DSparkWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self._proposer = Proposer()

            def step(self):
                target_model = self.target_worker.model_runner.model
                return self._proposer.propose(target_model=target_model, bs=1)
    """
    root = tree(tmp_path, {DSPARK: worker, "pkg/models/llava.py": wrapper()})
    analysis = analyze(root)
    (entry,) = analysis.contract.entries
    assert (entry.role, entry.member, entry.required) == ("target", "get_input_embeddings", True)
    assert [(s.text, s.algorithm) for s in entry.call_sites] == [
        ("return target_model.get_input_embeddings()", "DSPARK")]


SHELL = """
    from pkg.models.llama import LlamaForCausalLM

    class V1:
        def __init__(self, config):
            self.llm = LlamaForCausalLM(config)

    class V2:
        def __init__(self, config):
            self.llm = LlamaForCausalLM(config)

        def get_embed_and_head(self):
            return self.llm.get_embed_and_head()

    _VERSIONS = {(1, 0): V1, (2, 0): V2}

    class Shell:
        def __init__(self, config):
            instance_class = _VERSIONS.get(config.version)
            inner = instance_class(config)
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

    class ShellV2(Shell):
        pass

    EntryClass = [Shell, ShellV2]
"""


def test_a_getattr_shell_over_a_dict_of_version_classes_lacks_what_one_version_lacks(tmp_path):
    worker = TARGET_ONLY_WORKER
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/shell.py": SHELL})
    findings = analyze(root).findings
    found = sorted((f.class_name, f.code, f.member, f.delegate, f.inner_class) for f in findings)
    # V1 lacks it though its llm has it: a shell built for version 1 crashes, one built for version 2 does not,
    # and the checkpoint chooses: a crash under that condition (SC004, which names it), not one of every run; the
    # forward goes past the shell
    assert found == [("Shell", "SC004", "get_embed_and_head", "inner.llm", "LlamaForCausalLM"),
                     ("ShellV2", "SC004", "get_embed_and_head", "inner.llm", "LlamaForCausalLM")]
    assert {f.condition for f in findings} == {
        "the checkpoint makes `self.inner` a `V1` (its `__getattr__` forwards there; `V2` has it)"}
    every_version = SHELL.replace("_VERSIONS = {(1, 0): V1, (2, 0): V2}", "_VERSIONS = {(2, 0): V2}")
    root = tree(tmp_path / "v2", {EAGLE: worker, "pkg/models/shell.py": every_version})
    assert analyze(root).findings == ()


def test_a_subclass_passing_its_own_class_default_to_super_init_has_that_inner(tmp_path):
    models = """
        class TextModel:
            def forward(self, x):
                return x

        class MoeTextModel:
            def get_embed_and_head(self):
                return None, None

        class VLBase:
            def __init__(self, config, language_model_cls=TextModel):
                self.model = language_model_cls(config)

        class VLMoe(VLBase):
            def __init__(self, config, language_model_cls=MoeTextModel):
                super().__init__(config, language_model_cls)

        EntryClass = [VLBase, VLMoe]
    """
    worker = TARGET_ONLY_WORKER
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/vl.py": models})
    found = [(f.class_name, f.code, f.member, f.inner_class) for f in forward_findings(analyze(root))]
    assert found == [("VLMoe", "SC001", "get_embed_and_head", "MoeTextModel")]


def test_fixing_a_base_and_its_registered_subclass_together_forwards_once_in_the_base(tmp_path):
    worker = TARGET_ONLY_WORKER
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/shell.py": SHELL})
    analysis = analyze(root)
    assert sorted(f.class_name for f in analysis.findings) == ["Shell", "ShellV2"]
    (edit,) = delegation_edits(analysis, analysis.findings).edits
    path = root / "pkg/models/shell.py"
    path.write_text(apply_edits(path.read_text(), [edit]))
    assert path.read_text().count("def get_embed_and_head(self):") == 2  # V2's own, and the shell's
    assert analyze(root).findings == ()


def test_a_statement_nested_past_the_recursion_limit_loses_only_itself(tmp_path):
    deep = "x if y else " * 2500 + "x"
    worker = f"""
        class EAGLEWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                value = {deep}
                self.target_worker.model_runner.model.get_embed_and_head()
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/models/llava.py": wrapper()})
    assert kinds(analyze(root)) == [("SC001", "error", "get_embed_and_head")]


def test_a_config_class_condition_is_not_reported_on_a_class_whose_config_can_never_meet_it(tmp_path):
    worker = """
        class Worker:
            def __init__(self, target_worker):
                self.target_worker = target_worker

            def pick(self, config):
                if isinstance(config, ExoticConfig):
                    self.target_worker.model_runner.model.logits_processor(None)
    """
    configs = """
        class ExoticConfig:
            pass

        class DerivedExoticConfig(ExoticConfig):
            pass

        class PlainConfig:
            pass
    """
    models = """
        from pkg.configs import DerivedExoticConfig, PlainConfig
        from pkg.models.llama import LlamaForCausalLM

        class PlainWrapper:
            def __init__(self, config: PlainConfig):
                self.language_model = LlamaForCausalLM(config)

        class ExoticWrapper:
            def __init__(self, config: "DerivedExoticConfig"):
                self.language_model = LlamaForCausalLM(config)

        class UnannotatedWrapper:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = [PlainWrapper, ExoticWrapper, UnannotatedWrapper]
    """
    root = tree(tmp_path, {EAGLE: worker, "pkg/configs.py": configs, "pkg/models/wrappers.py": models})
    found = sorted((f.class_name, f.code, f.condition) for f in analyze(root).findings)
    assert found == [("ExoticWrapper", "SC004", "isinstance(config, ExoticConfig)"),
                     ("UnannotatedWrapper", "SC004", "isinstance(config, ExoticConfig)")]


@pytest.mark.parametrize("char", ["\x0c", "\x1c", "\x0b"], ids=["form-feed", "x1c", "x0b"])
def test_a_character_str_splitlines_breaks_at_above_and_inside_the_class_leaves_the_fix_in_place(tmp_path, char):
    """``check --fix``'s path: :func:`delegation_edits`, applied by the product's ``apply_edits``. The parser
    breaks lines only at CR LF, CR and LF; were a form feed (``\\x1c``, ``\\x0b``) above the class or inside it
    counted as a line break, the forwards would land a line early, inside ``helper``."""
    above = "\x0c" if char == "\x0c" else f"# {char}"  # a form feed may stand on a line of its own
    source = wrapper(f"""
    def helper(self):  # a {char} inside
        return '{char}'
""").replace("\n\n\nclass ", f"\n# a {char} above\n{above}\n\n\nclass ", 1)
    root = tree(tmp_path, {EAGLE: TARGET_ONLY_WORKER, "pkg/models/llava.py": source})
    analysis = analyze(root)
    assert [f.member for f in analysis.findings] == ["get_embed_and_head"]
    path = root / "pkg/models/llava.py"
    source = path.read_text()  # as written: dedented
    fixed = apply_edits(source, delegation_edits(analysis, analysis.findings).edits)
    end_of_helper = source.index(f"return '{char}'\n") + len(f"return '{char}'\n")
    assert fixed[:end_of_helper] == source[:end_of_helper]
    assert fixed[end_of_helper:] == (
        "\n    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n"
        + source[end_of_helper:])
    path.write_text(fixed)
    assert analyze(root).findings == ()


# when a run fails ------------------------------------------------------------------------------------------

def test_each_message_says_when_the_run_fails_start_up_or_first_request(tmp_path):
    """Issue 20, item 6: a missing forward reached from a start-up method (``__init__``) fails while the server
    starts, after the weights load; one reached only from a per-batch method fails at the first request; a
    capability gate refuses the run then too, only after the load. The message, the call sites and the status
    say the same phase."""
    worker = """
        class EAGLEWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                embed, head = self.target_worker.model_runner.model.get_embed_and_head()

            def forward_batch_speculative_generation(self, batch):
                return self.target_worker.model_runner.model.logits_processor(batch)
    """
    root = tree(tmp_path, {RUNNER: GATED_RUNNER, EAGLE: worker, "pkg/models/llava.py": wrapper()})
    analysis = analyze(root)
    said = {(f.code, f.member): f.message.split("; ", 1)[-1] for f in forward_findings(analysis)
            if f.class_name != "LlamaForCausalLM"}
    assert said[("SC001", "get_embed_and_head")] == (
        "the target model's contract calls it at pkg/speculative/eagle_worker.py:4 (start-up)")
    assert said[("SC001", "logits_processor")] == (
        "the target model's contract calls it at pkg/speculative/eagle_worker.py:7 (first request)")
    refused = sorted(f.message.split(", and ", 1)[-1] for f in forward_findings(analysis) if f.member in (
        "set_eagle3_layers_to_capture", "set_dflash_layers_to_capture"))
    assert refused == [
        "the engine's check at pkg/model_executor/model_runner.py:4 refuses the run only after loading the weights "
        "without it",
        "the engine's check at pkg/model_executor/model_runner.py:8 refuses the run only after loading the weights "
        "without it"]
    assert {(s.member, str(s.phase)) for e in analysis.contract.entries for s in e.call_sites
            if s.path.endswith("eagle_worker.py")} == {("get_embed_and_head", "start-up"),
                                                       ("logits_processor", "first request")}
