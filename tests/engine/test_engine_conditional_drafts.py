"""SC015: a draft head lacks a method its own algorithm's worker calls only past a test the tool does not decide.

vLLM's DSpark speculator calls ``self.model.compute_confidence(...)`` only ``if self.use_confidence_head:``, set
from ``enable_adaptive_verification and …``: a DSpark head without it crashes only when adaptive verification is
on (vLLM 0.30.0's AMD and Kimi-K3 heads; 0.31.0 added it). Before, such a crash was nowhere but a matrix note.
Only a head that shows it is that algorithm's draft (a member only DSPARK runs use) meets it: an MTP head never
loads as a DSPARK draft.
"""

from __future__ import annotations

import os
import subprocess
import sys

from engine_trees import analyze
from spec_contract.engine.launch.matrix import support_matrix
from spec_contract.lsp.hover import class_markdown
from test_engine_returned_model import speculator_tree

HEADS = """
    import torch.nn as nn


    class TinyMTP(nn.Module):
        def compute_logits(self, hidden):
            return hidden


    class ConfidentDSpark(nn.Module):
        def compute_logits(self, hidden):
            return hidden

        def markov_embed(self, tokens):
            return tokens

        def compute_confidence(self, hidden):
            return hidden


    class PlainDSpark(nn.Module):
        def compute_logits(self, hidden):
            return hidden

        def markov_embed(self, tokens):
            return tokens
"""

DSPARK = """
    from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator


    class DSparkSpeculator(BaseSpeculator):
        def __init__(self, vllm_config, device):
            self.enable_adaptive_verification = vllm_config.speculative_config.enable_adaptive_verification
            self.use_confidence_head = False

        def load_draft_model(self, target_model):
            model = load_dspark(target_model)
            self.use_confidence_head = self.enable_adaptive_verification and model.has_confidence
            return model

        def _sample(self, hidden):
            embed = self.model.markov_embed(hidden)
            if self.use_confidence_head:
                self.confidence = self.model.compute_confidence(embed)
            return super()._sample(embed)
"""

def _analysis(tmp_path):
    return analyze(_tree(tmp_path))


def _tree(tmp_path):
    return speculator_tree(tmp_path, HEADS, DSPARK, ("TinyMTP", "ConfidentDSpark", "PlainDSpark"))


def test_a_dspark_head_without_a_method_called_past_an_option_gets_the_information(tmp_path):
    analysis = _analysis(tmp_path)
    found = [(f.code, f.severity.value, f.class_name, f.member, f.condition, f.algorithm) for f in analysis.findings
             if f.member == "compute_confidence"]
    assert found == [("SC015", "information", "PlainDSpark", "compute_confidence", "use_confidence_head", "DSPARK")]
    (finding,) = [f for f in analysis.findings if f.code == "SC015"]
    assert "dspark/speculator.py:17 only past a test of `use_confidence_head`" in finding.message


def test_a_head_that_shows_no_sign_of_being_that_algorithms_draft_meets_nothing(tmp_path):
    """The MTP head lacks ``markov_embed`` and ``compute_confidence`` alike, but has no member only DSPARK runs
    use: nothing says a DSPARK run loads it, so neither is reported for it."""
    analysis = _analysis(tmp_path)
    assert not [f for f in analysis.findings if f.class_name == "TinyMTP"]


def test_the_matrix_notes_the_conditional_crash_as_check_reports_it(tmp_path):
    """The matrix and check agree: the run is supported, and the cell says when it crashes."""
    analysis = _analysis(tmp_path)
    matrix = support_matrix(analysis)
    (row,) = [r for r in matrix.rows if r.architecture == "PlainDSpark"]
    (cell,) = [c for c in row.cells if c.algorithm == "DSPARK"]
    assert cell.state.value == "supported"
    assert [note for note in cell.notes if "`compute_confidence`" in note] == [
        "the draft lacks `compute_confidence`, used only when use_confidence_head: the run crashes then"]
    # and hover says the same of the class's DSPARK runs
    (status,) = [s for s in analysis.statuses() if s.name == "PlainDSpark"]
    text = class_markdown(status, lambda path, line: f"{path.rsplit('/', 1)[-1]}:{line + 1}",
                          [f for f in analysis.findings if f.class_name == "PlainDSpark"])
    (dspark,) = [line for line in text.split("\n- ") if line.startswith("DSPARK:")]
    assert [line.strip() for line in dspark.splitlines() if "`compute_confidence`" in line] == [
        "- lacks `compute_confidence`, which speculator.py:17 uses (first request); used only when "
        "use_confidence_head: the run crashes then"]


def test_the_fix_implements_it_like_the_head_that_has_it(tmp_path):
    root = _tree(tmp_path)
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", "--fix", "--select", "SC015", str(root)],
                          capture_output=True, text=True, cwd=root, timeout=120,
                          env={**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert "`compute_confidence` implemented like `ConfidentDSpark`" in done.stdout
    assert not [f for f in analyze(root).findings if f.code == "SC015"]
