"""A class the engine's config never loads as an algorithm's draft is not counted for that algorithm.

vLLM's ``SpeculativeConfig.__post_init__`` hands a DSPARK run its own draft class unless the checkpoint names a
DSPARK head already: an MTP head is never a DSPARK draft, so a member only the DSPARK speculator reads is not
asked of it. The tree is vLLM-shaped and small, written for these tests (see ``test_engine_vllm``).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from engine_trees import analyze, rel
from spec_contract.engine import VerdictState
from test_engine_vllm import MODELS, REGISTRY, vllm_tree

SPECULATIVE = """
    from typing import Literal

    SpeculativeMethod = Literal["eagle", "mtp", "dflash", "dspark"]

    _BUNDLED = "BundledSparkModel"


    class SpeculativeConfig:
        def __post_init__(self):
            if self.method == "dspark" and "SparkDraftModel" in self.draft_model_config.architectures and self.qwen:
                self.draft_model_config.hf_config.architectures = ["QwenSparkModel"]
            elif self.method == "dspark" and (
                "QwenSparkModel" not in self.draft_model_config.architectures
                and _BUNDLED not in self.draft_model_config.architectures
            ):
                draft_hf_config = self.draft_model_config.hf_config
                draft_hf_config.architectures = ["SparkV2DraftModel" if self.v2 else "SparkDraftModel"]
            if self.method in ("dspark", "mtp"):
                self.parallel_drafting = self.method == "dspark"
"""

SPECULATORS = """
    class DFlashSpeculator:
        def combine(self, hidden):
            return self.model.combine_hidden_states(hidden)


    class DSparkSpeculator(DFlashSpeculator):
        def propose(self, hidden):
            return self.model.markov_embed(hidden)


    class MTPSpeculator:
        def propose(self, hidden):
            return self.model.compute_logits(hidden)


    def init_speculator(vllm_config):
        speculative_config = vllm_config.speculative_config
        if speculative_config.method == "dspark":
            return DSparkSpeculator()
        if speculative_config.method == "dflash":
            return DFlashSpeculator()
        if speculative_config.method == "mtp":
            return MTPSpeculator()
        raise NotImplementedError(speculative_config.method)
"""

HEADS = """
    import torch.nn as nn


    class SparkForCausalLM(nn.Module):
        def compute_logits(self, hidden):
            return hidden


    class BundledSparkForCausalLM(nn.Module):
        def markov_embed(self, hidden):
            return hidden


    class TinyMTP(nn.Module):
        def compute_logits(self, hidden):
            return hidden
"""


def _tree(root, speculative: str = SPECULATIVE, heads: str = HEADS):
    registry = REGISTRY.replace('''        "EagleTinyForCausalLM": ("tiny_eagle", "EagleTinyForCausalLM"),''', '''
        "SparkDraftModel": ("heads", "SparkForCausalLM"),
        "BundledSparkModel": ("heads", "BundledSparkForCausalLM"),
        "TinyMTPModel": ("heads", "TinyMTP"),''')
    return vllm_tree(root, {f"{MODELS}/registry.py": registry, f"{MODELS}/heads.py": heads,
                            "vllm/config/speculative.py": speculative,
                            "vllm/v1/worker/gpu/__init__.py": "", "vllm/v1/worker/gpu/spec_decode/__init__.py": SPECULATORS})


def _lacking(analysis, member: str, algorithm: str = "DSPARK") -> list[str]:
    """The heads whose status for ``algorithm`` (what the matrix, hover and preflight say) crashes on ``member``."""
    return sorted(status.name for status in analysis.statuses() for each in status.algorithms
                  if each.algorithm == algorithm and member in {crash.member for crash in each.crashes})


def test_a_use_only_an_algorithm_with_rewritten_drafts_makes_meets_only_the_drafts_it_can_load(tmp_path):
    analysis = analyze(_tree(tmp_path))
    ((name, architectures, (path, line)),) = analysis.contract.release.drafts
    assert (name, architectures) == ("DSPARK", ("BundledSparkModel", "QwenSparkModel", "SparkDraftModel",
                                                 "SparkV2DraftModel"))
    assert rel(tmp_path, path) == "vllm/config/speculative.py"
    assert Path(path).read_text().splitlines()[line].strip() == 'elif self.method == "dspark" and ('
    # the MTP head is never a DSPARK draft; the DSPARK head the rewrite loads lacks the member
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM"]
    # a line DFLASH and DSPARK runs share (a method DSparkSpeculator inherits): the MTP head meets it in DFLASH
    # runs only
    assert _lacking(analysis, "combine_hidden_states", "DFLASH") == [
        "BundledSparkForCausalLM", "SparkForCausalLM", "TinyMTP"]
    assert _lacking(analysis, "combine_hidden_states") == ["BundledSparkForCausalLM", "SparkForCausalLM"]


NESTED = """
    from typing import Literal

    SpeculativeMethod = Literal["eagle", "mtp", "dflash", "dspark"]

    _BUNDLED = "BundledSparkModel"


    class SpeculativeConfig:
        def __post_init__(self):
            if self.method == "dspark":
                archs = self.draft_model_config.architectures
                if "SparkDraftModel" in archs and self.qwen:
                    self.draft_model_config.hf_config.architectures = ["QwenSparkModel"]
                elif "QwenSparkModel" not in archs and _BUNDLED not in archs:
                    self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]
"""


def test_a_rewrite_under_the_algorithm_s_own_branch_restricts_it_too(tmp_path):
    """The same chain written inside ``if self.method == "dspark":`` (its tests then name only the
    architectures, here through a local)."""
    analysis = analyze(_tree(tmp_path, NESTED))
    assert [(name, architectures) for name, architectures, _ in analysis.contract.release.drafts] == [
        ("DSPARK", ("BundledSparkModel", "QwenSparkModel", "SparkDraftModel"))]
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM"]


@pytest.mark.parametrize("test", ['self.method == "dspark"', 'self.method in ("dspark", "dflash")'],
                         ids=["the comparison alone", "one of several values"])
def test_a_rewrite_every_run_of_the_algorithm_takes_restricts_it(tmp_path, test):
    """``if self.method == "dspark": ….architectures = ["SparkDraftModel"]`` rewrites every DSPARK draft, with no
    ``not in`` test to let a checkpoint's own head through; so does a branch that several algorithms take."""
    unconditional = f"""
    from typing import Literal

    SpeculativeMethod = Literal["eagle", "mtp", "dflash", "dspark"]


    class SpeculativeConfig:
        def __post_init__(self):
            if {test}:
                self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]
"""
    analysis = analyze(_tree(tmp_path, unconditional))
    assert [(name, architectures) for name, architectures, _ in analysis.contract.release.drafts] == (
        [("DSPARK", ("SparkDraftModel",))] if "==" in test else
        [("DFLASH", ("SparkDraftModel",)), ("DSPARK", ("SparkDraftModel",))])
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM"]


@pytest.mark.parametrize("body", [
    'if self.qwen:\n    if self.method == "dspark":\n        self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]',
    'if self.mtp_checkpoint:\n    return\nif self.method == "dspark":\n'
    '    self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]',
    'if self.method == "dspark":\n    own = self.draft_model_config.architectures\n'
    '    self.draft_model_config.hf_config.architectures = ["SparkDraftModel"]\n'
    '    if self.keep_own:\n        self.draft_model_config.hf_config.architectures = own',
], ids=["under another test", "past an early return", "undone in the branch"])
def test_a_rewrite_only_some_runs_of_the_algorithm_take_restricts_nothing(tmp_path, body):
    """A DSPARK run that skips the rewrite keeps its checkpoint's head (an MTP head meets ``markov_embed``)."""
    header = ('\n    from typing import Literal\n\n    SpeculativeMethod = Literal["eagle", "mtp", "dflash", "dspark"]\n\n\n'
              "    class SpeculativeConfig:\n        def __post_init__(self):\n")
    analysis = analyze(_tree(tmp_path, header + textwrap.indent(body, " " * 12) + "\n"))
    assert analysis.contract.release.drafts == ()
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM", "TinyMTP"]


def test_a_rewrite_a_later_statement_may_undo_restricts_nothing(tmp_path):
    undone = SPECULATIVE + """
            if self.method != "eagle":
                self.draft_model_config.hf_config = self.load_other()
"""
    analysis = analyze(_tree(tmp_path, undone))
    assert analysis.contract.release.drafts == ()
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM", "TinyMTP"]


def test_a_rewrite_with_another_test_beside_the_architectures_restricts_nothing(tmp_path):
    # failing ``dspark and "A" not in archs and self.legacy`` says nothing of the architectures
    loose = SPECULATIVE.replace("and _BUNDLED not in self.draft_model_config.architectures",
                                "and _BUNDLED not in self.draft_model_config.architectures and self.legacy")
    analysis = analyze(_tree(tmp_path, loose))
    assert analysis.contract.release.drafts == ()
    assert _lacking(analysis, "markov_embed") == ["SparkForCausalLM", "TinyMTP"]


def test_the_matrix_hover_and_preflight_say_a_head_is_never_the_algorithm_s_draft(tmp_path):
    """One truth in each front end: the matrix cell, the class's hover line and preflight name the draft
    architectures the config loads instead, and where it says so; the DSPARK head stays a DSPARK draft."""
    from spec_contract.engine import Engine, Launch, Role, VerdictState, preflight, support_matrix
    from spec_contract.lsp.hover import class_markdown
    from spec_contract.report.preflight import render_text

    analysis = analyze(_tree(tmp_path))
    matrix = support_matrix(analysis)
    cells = {row.class_name: dict(zip(matrix.algorithms, row.cells)) for row in matrix.rows}
    mtp = cells["TinyMTP"]["DSPARK"]
    assert mtp.state is VerdictState.NOT_ITS_DRAFT
    assert mtp.problems[0].message == (
        "a DSPARK run never loads this class as its draft: the engine's config loads one of `BundledSparkModel`, "
        "`QwenSparkModel`, `SparkDraftModel` and 1 more instead (vllm/config/speculative.py:12)")
    assert cells["TinyMTP"]["MTP"].state is VerdictState.SUPPORTED
    spark = cells["SparkForCausalLM"]["DSPARK"]  # a DSPARK draft, which lacks markov_embed
    assert spark.state is VerdictState.SUPPORTED and any("the draft lacks `markov_embed`" in n for n in spark.notes)
    (status,) = [s for s in analysis.statuses() if s.name == "TinyMTP"]
    hover = class_markdown(status, lambda path, line: f"{rel(tmp_path, path)}:{line + 1}")
    assert "never its draft — the engine's config loads one of `BundledSparkModel`, `QwenSparkModel`, " \
           "`SparkDraftModel` and 1 more instead (vllm/config/speculative.py:12)" in hover
    launch = Launch("vllm", str(_checkpoint(tmp_path / "target", "TinyForCausalLM")), "dspark",
                    str(_checkpoint(tmp_path / "head", "TinyMTPModel")))
    result = preflight(launch, Engine("vllm", tmp_path / "vllm"), analysis, {})
    (draft,) = [v for v in result.verdicts if v.role is Role.DRAFT]
    assert draft.state is VerdictState.NOT_ITS_DRAFT and draft.problems[0].message == mtp.problems[0].message
    assert "the algorithm (config): not-its-draft at vllm/config/speculative.py:12\n" \
           '      elif self.method == "dspark" and (\n' in render_text(result)


INNER = """

    class SparkInner(nn.Module):
        def markov_embed(self, hidden):
            return hidden

        def combine_hidden_states(self, hidden):
            return hidden
"""
HOLDS_INNER = """
        def __init__(self):
            super().__init__()
            self.model = SparkInner()
"""


@pytest.mark.parametrize("wrapped, state, exit_code", [
    ((), VerdictState.SUPPORTED, 0),
    (("SparkForCausalLM",), VerdictState.UNKNOWN, 2),
    (("SparkForCausalLM", "BundledSparkForCausalLM"), VerdictState.CRASHES, 1),
], ids=["none fails", "one fails", "every one fails"])
def test_preflight_checks_the_drafts_the_config_loads_instead_of_one_it_never_loads(tmp_path, wrapped, state,
                                                                                       exit_code):
    """A DSPARK launch with an MTP head as its draft runs one of the DSPARK heads the config writes instead: each
    registered one is checked as the draft. Which one depends on the checkpoint, so the launch fails when every one
    fails, and cannot be told when only some do; those the release does not register are named."""
    from spec_contract.engine import Engine, Launch, Role, preflight
    from spec_contract.report.preflight import render_json, render_text

    heads = HEADS
    for name in wrapped:  # a wrapper that forwards neither member to the inner model that has them
        heads = heads.replace(f"    class {name}(nn.Module):\n", f"    class {name}(nn.Module):{HOLDS_INNER}\n")
    analysis = analyze(_tree(tmp_path, heads=heads + INNER))
    launch = Launch("vllm", str(_checkpoint(tmp_path / "target", "TinyForCausalLM")), "dspark",
                    str(_checkpoint(tmp_path / "head", "TinyMTPModel")))
    result = preflight(launch, Engine("vllm", tmp_path / "vllm"), analysis, {})
    (draft,) = [v for v in result.verdicts if v.role is Role.DRAFT]
    assert draft.state is VerdictState.NOT_ITS_DRAFT
    failing = {VerdictState.CRASHES} if wrapped else set()
    assert [(v.architecture, v.class_name, v.role, v.state in failing) for v in result.instead] == [
        ("BundledSparkModel", "BundledSparkForCausalLM", Role.DRAFT, "BundledSparkForCausalLM" in wrapped),
        ("SparkDraftModel", "SparkForCausalLM", Role.DRAFT, "SparkForCausalLM" in wrapped)]
    assert (result.state, result.exit_code) == (state, exit_code)
    assert "the engine's config may load QwenSparkModel, SparkV2DraftModel instead, which this release does not " \
           "register: not checked" in result.notes
    text = render_text(result)
    assert "\n  SparkDraftModel → SparkForCausalLM: " in text
    assert ("This launch will fail: first" in text) is (exit_code == 1)
    assert [v["class"] for v in json.loads(render_json(result))["instead"]] == [
        "BundledSparkForCausalLM", "SparkForCausalLM"]


def _checkpoint(folder: Path, architecture: str) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}), encoding="utf-8")
    return folder
