"""Settings from the checked tree's ``pyproject.toml`` and the one-line errors for settings that cannot work."""

from __future__ import annotations

import json

import pytest
from engine_trees import WORKER, analyze, base_tree, findings, make_tree
from spec_contract.engine.config import ConfigError, load_config
from spec_contract.engine.results import Role
from spec_contract.engine.rules import BY_CODE, Fix, Severity

WRAPPER = {"pkg/models/llava.py": """
    from pkg.models.llama import LlamaForCausalLM

    class LlavaForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

    EntryClass = LlavaForConditionalGeneration
"""}


def test_pyproject_extends_workers_and_lowers_sc001_to_warning(tmp_path):
    drafting = "pkg/drafting/lookahead.py"
    root = base_tree(tmp_path, {
        **WRAPPER,
        "pyproject.toml": """
            [project]
            name = "pkg"

            [tool.spec-contract]
            extend-workers = ["**/drafting/*.py"]
            severity = {SC001 = "warning"}
        """,
        drafting: """
            def refresh(draft_runner):
                draft_runner.model.set_embed_and_head(None, None)
        """,
    })
    config = load_config(root)
    assert config.workers[-1] == "**/drafting/*.py"
    assert "**/speculative/**/*.py" in config.workers
    assert config.severity["SC001"] == "warning" and config.severity["SC002"] == "information"
    assert findings(analyze(root)) == [
        ("SC001", "LlavaForConditionalGeneration", "get_embed_and_head", ("target",), "language_model",
         "LlamaForCausalLM", "warning", ((WORKER, 5, False),)),
        ("SC005", "LlavaForConditionalGeneration", "set_embed_and_head", ("draft",), "language_model",
         "LlamaForCausalLM", "warning", ((drafting, 2, False), (WORKER, 6, False))),
    ]


def test_pyproject_replacing_workers_drops_the_profile_globs(tmp_path):
    root = base_tree(tmp_path, {**WRAPPER, "pyproject.toml": """
        [tool.spec-contract]
        workers = ["**/nowhere/*.py"]
        model-files = ["**/models/*.py"]
    """})
    config = load_config(root)
    assert config.workers == ("**/nowhere/*.py",)
    assert config.model_files == ("**/models/*.py",)


def test_pyproject_without_the_table_gives_the_default_profile(tmp_path):
    root = make_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert load_config(root) == load_config(tmp_path / "missing-dir")


@pytest.mark.parametrize(("table", "message"), [
    ("colour = 'blue'", "unknown setting 'colour'"),
    ("severity = {SC001 = 'fatal'}", "severity of SC001 must be one of error, warning, information, hint, not 'fatal'"),
    ("severity = {SC099 = 'error'}", "unknown diagnostic code 'SC099' in 'severity'"),
    ("profile = 'vllm-nightly'", "unknown profile 'vllm-nightly' (available: sglang, vllm)"),
    ("extend-workers = '**/x.py'", "'extend-workers' must be a list of strings, got '**/x.py'"),
    ("workers = [1, 2]", "'workers' must be a list of strings"),
    ("select = ['SC001', 'E501']", "unknown diagnostic code 'E501' in 'select'"),
    ("receivers = [{pattern = 'a..b', role = 'target'}]", "receiver pattern 'a..b'"),
    ("receivers = [{pattern = '*.x.model', role = 'verifier'}]", "role must be 'target' or 'draft'"),
    # Wrong types (issue 14, item 11): each names its key, none is a traceback.
    ("select = 5", "'select' must be a list of codes"),
    ("receivers = [{pattern = 5, role = 'target'}]", "receivers[0].pattern must be a string, got 5"),
    ("receivers = [{pattern = 5}]", "receivers[0]: each receiver needs a 'pattern' and a 'role'"),
    ("receivers = [{pattern = '*.x.model', role = 'target', classes = 5}]", "receivers[0].classes must be a list"),
    ("extend-receivers = [5]", "extend-receivers[0] must be a table"),
    ("entry-class-variable = 5", "'entry-class-variable' must be a string, got 5"),
    ("enable = 'no'", "'enable' must be true or false"),
    ("severity = 5", "'severity' must be a table of code = severity"),
    ("profile = 5", "'profile' must be a string"),
    ("baseline = 5", "'baseline' must be a string"),
    ("runners = 5", "'runners' must be a list of tables"),
    ("runners = [{refusals = 'pkg.f'}]", "runners[0] must be a table with 'refusals' and 'files'"),
    ("runners = [{refusals = '', files = ['**/x.py']}]", "runners[0].refusals must be a non-empty string"),
    ("extend-runners = [{refusals = 'pkg.f', files = '**/x.py'}]", "extend-runners[0].files must be a list of globs"),
])
def test_unusable_setting_is_a_config_error_with_a_one_line_message(tmp_path, table, message):
    root = make_tree(tmp_path, {"pyproject.toml": f"[tool.spec-contract]\n{table}\n"})
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    text = str(caught.value)
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize(("content", "message"), [
    (b"tool = 5\n", "'tool' must be a table, got 5"),
    (b"[tool]\nspec-contract = 5\n", "[tool.spec-contract] must be a table, got 5"),
    (b"[tool.spec-contract]\nprofile = '\xff\xfe'\n", "invalid TOML: not UTF-8"),
    (b"[tool.spec-contract]\nworkers = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "invalid TOML: nested too deeply"),
    (bytes(range(256)) * 4, "invalid TOML"),
], ids=["tool", "table", "utf-8", "deep", "binary"])
def test_unreadable_pyproject_is_a_one_line_config_error_naming_the_file(tmp_path, content, message):
    (tmp_path / "pyproject.toml").write_bytes(content)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert message in str(caught.value) and str(tmp_path / "pyproject.toml") in str(caught.value)
    assert "\n" not in str(caught.value)


def test_baseline_key_is_anchored_at_its_pyproject(tmp_path):
    root = make_tree(tmp_path, {"pyproject.toml": "[tool.spec-contract]\nbaseline = 'ci/baseline.json'\n"})
    assert load_config(root).baseline == str(root.resolve() / "ci" / "baseline.json")


def test_invalid_toml_is_a_config_error_naming_the_file(tmp_path):
    root = make_tree(tmp_path, {"pyproject.toml": "[tool.spec-contract\nworkers = \n"})
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    assert str(root / "pyproject.toml") in str(caught.value)
    assert "invalid TOML" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_pyproject_select_and_exclude_narrow_the_report(tmp_path):
    legacy = WRAPPER["pkg/models/llava.py"].replace("LlavaForConditionalGeneration", "LegacyLlava")
    root = base_tree(tmp_path, {
        **WRAPPER,
        "pkg/models/legacy/old_llava.py": legacy,
        "pyproject.toml": """
            [tool.spec-contract]
            select = ["SC002"]
            exclude = ["**/legacy/**"]
        """,
        WORKER: """
            class Worker:
                def run(self):
                    model = self.target_worker.model_runner.model
                    if hasattr(model, "get_embed_and_head"):
                        model.get_embed_and_head()
                    model.set_embed_and_head(None, None)
        """,
    })
    analysis = analyze(root)
    assert findings(analysis) == [
        ("SC002", "LlavaForConditionalGeneration", "get_embed_and_head", ("target",), "language_model",
         "LlamaForCausalLM", "information", ((WORKER, 5, True),)),
    ]
    assert not any("legacy" in key.module for key in analysis.checked)


def test_camel_case_keys_from_editor_settings_are_accepted(tmp_path):
    config = load_config(tmp_path, overrides={"extendDraftOnlyClasses": ["*Speculator*"], "entryClassVariable": "MODELS"})
    assert config.roles_for_class("LlamaSpeculator") == ("draft",)
    assert config.roles_for_class("LlamaForCausalLM") == ("target", "draft")
    assert config.entry_class_variable == "MODELS"


@pytest.mark.parametrize(("pyproject", "config", "message"), [
    (b"[tool.spec-contract]\nselect = 5\n", None, "'select' must be a list of codes"),
    (b"[tool.spec-contract]\nentry-class-variable = 5\n", None, "'entry-class-variable' must be a string, got 5"),
    (b"[tool.spec-contract]\nreceivers = [{pattern = 5}]\n", None, "receivers[0]: each receiver needs"),
    (b"tool = 5\n", None, "'tool' must be a table"),
    (b"[tool.spec-contract]\nprofile = '\xff'\n", None, "not UTF-8"),
    (b"DEEP", None, "nested too deeply"),
    (None, b"BINARY", "invalid TOML"),
], ids=["select", "entry-class-variable", "receivers", "tool", "utf-8", "deep", "binary-config"])
def test_the_command_exits_2_with_one_line_naming_the_key_for_each_configuration_error(
        tmp_path, pyproject, config, message):
    """Issue 14, item 11: wrong types and unreadable files are configuration errors (exit 2), never a traceback."""
    import os
    import subprocess
    import sys

    root = base_tree(tmp_path / "tree", WRAPPER)
    args = []
    pyproject = b"[tool.spec-contract]\nworkers = " + b"[" * 100_000 + b"]" * 100_000 + b"\n" \
        if pyproject == b"DEEP" else pyproject
    config = bytes(range(256)) * 64 if config == b"BINARY" else config
    if pyproject is not None:
        (root / "pyproject.toml").write_bytes(pyproject)
    if config is not None:
        (tmp_path / "binary.toml").write_bytes(config)
        args = ["--config", str(tmp_path / "binary.toml")]
    result = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(root), "--no-cache", *args],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("spec-contract: error: ") and message in result.stderr, result.stderr


def test_severities_and_roles_are_enums_that_read_and_write_as_their_words(tmp_path):
    """Reports, JSON, SARIF and the server's conversions print them, and code outside the engine compares them
    with the plain words: an enum member must stay that word everywhere."""
    root = base_tree(tmp_path, {"pyproject.toml": """
        [tool.spec-contract]
        severity = {SC002 = "HINT"}
    """})
    config = load_config(root)
    level = config.severity["SC002"]
    assert level is Severity.HINT and level == "hint" and {"hint": 1}[level] == 1
    assert (str(level), f"{level}", json.dumps({level: level})) == ("hint", "hint", '{"hint": "hint"}')
    assert config.roles_for_class("LlavaForConditionalGeneration") == ("target", "draft")
    assert config.roles_for_class("LlamaForCausalLMEagle") == (Role.DRAFT,)
    assert [str(role) for role in Role] == ["target", "draft"]
    assert {code: rule.fix for code, rule in BY_CODE.items() if rule.fix is not Fix.FORWARD} == {
        "SC006": Fix.DECLARE, "SC007": Fix.NONE, "SC008": Fix.NONE, "SC009": Fix.NONE, "SC010": Fix.IMPLEMENT,
        "SC011": Fix.IMPLEMENT, "SC012": Fix.IMPLEMENT, "SC013": Fix.NONE, "SC014": Fix.IMPLEMENT,
        "SC015": Fix.IMPLEMENT}
    assert [code for code, rule in BY_CODE.items() if rule.forwards] == ["SC001", "SC002", "SC003", "SC004", "SC005",
                                                                        "SC010", "SC011", "SC012", "SC014", "SC015"]
