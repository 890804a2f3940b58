"""The EAGLE-3 decoder capture (``check.capture``): a class whose decoder does not capture aux hidden states
is implemented like a sibling only together with the change that makes its decoder capture them, in one fix;
any other shape is declined and the message says why (the member alone would only move the crash).

The trees are SGLang-shaped and written here: ``QwenModel`` captures (``hidden_states + residual``),
``QwenForCausalLM`` implements ``set_eagle3_layers_to_capture``; ``PlainModel`` and ``PlainForCausalLM``
hold the same parts and capture nothing yet.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from engine_trees import analyze, make_tree
from spec_contract.engine.edits.fix import delegation_edits
from spec_contract.engine.text import apply_edits, only_adds_lines

RUNNER = """
    class ModelRunner:
        def init_aux_capture(self):
            if self.eagle_use_aux_hidden_state:
                self.model.set_eagle3_layers_to_capture(self.layer_ids)
"""

QWEN = """
    import torch


    class QwenModel(torch.nn.Module):
        def __init__(self, config):
            self.embed_tokens = None
            self.layers = []
            self.layers_to_capture = []

        def forward(self, input_ids, positions, forward_batch):
            hidden_states, residual = self.embed_tokens(input_ids), None
            aux_hidden_states = []
            for i, layer in enumerate(self.layers):
                if i in self.layers_to_capture:
                    aux_hidden_states.append(hidden_states + residual)
                hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)
            if len(aux_hidden_states) == 0:
                return hidden_states
            return hidden_states, aux_hidden_states


    class QwenForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = QwenModel(config)
            self.capture_aux_hidden_states = False

        def set_eagle3_layers_to_capture(self, layer_ids):
            self.capture_aux_hidden_states = True
            self.model.layers_to_capture = [val + 1 for val in layer_ids]


    EntryClass = QwenForCausalLM
"""

PLAIN = """
    import torch


    class PlainModel(torch.nn.Module):
        def __init__(self, config):
            self.embed_tokens = None
            self.layers = []

        def forward(self, input_ids, positions, forward_batch):
            hidden_states, residual = self.embed_tokens(input_ids), None
            for layer in self.layers:
                hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)
            return hidden_states


    class PlainForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = PlainModel(config)
            self.logits_processor = None

        def forward(self, input_ids, positions, forward_batch):
            hidden_states = self.model(input_ids, positions, forward_batch)
            return self.logits_processor(input_ids, hidden_states, self.model.embed_tokens, forward_batch)


    EntryClass = PlainForCausalLM
"""


def _analyze(tmp_path, plain=PLAIN):
    root = make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/model_executor/__init__.py": "",
        "pkg/model_executor/model_runner.py": RUNNER, "pkg/models/qwen.py": QWEN, "pkg/models/plain.py": plain})
    return root, analyze(root)


def _plain_findings(analysis):
    return [f for f in analysis.findings for c in (f.classes or ()) if c.class_name == "PlainForCausalLM"] + \
        [f for f in analysis.findings if f.class_name == "PlainForCausalLM"]


def _provision(analysis):
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "PlainForCausalLM"))
    return next(m for m in status.members if m.member == "set_eagle3_layers_to_capture").provision


def _fixed(root, analysis):
    fixes = delegation_edits(analysis, _plain_findings(analysis))
    assert fixes.refused == ()
    path = root / "pkg/models/plain.py"
    before = path.read_text()
    after = apply_edits(before, [e for e in fixes.edits if str(path).endswith(e.path)])
    path.write_text(after)
    return before, after


def test_a_class_whose_decoder_does_not_capture_is_implemented_with_the_capture_in_one_fix(tmp_path):
    root, analysis = _analyze(tmp_path)
    provision = _provision(analysis)
    assert str(provision.how) == "implement" and provision.capture is not None
    assert provision.capture.expression == "hidden_states + residual"  # as QwenModel records it
    assert provision.capture.words() == (" (also makes `PlainModel.forward` capture aux hidden states like "
                                         "`QwenModel.forward`)")
    before, after = _fixed(root, analysis)
    ast.parse(after)
    assert only_adds_lines(before, after)
    for line in ("self.layers_to_capture = []", "aux_hidden_states = []",
                 "for i, layer in enumerate(self.layers):", "if i in self.layers_to_capture:",
                 "aux_hidden_states.append(hidden_states + residual)", "return hidden_states, aux_hidden_states",
                 "self.capture_aux_hidden_states = False", "hidden_states, aux_hidden_states = hidden_states",
                 "forward_batch, aux_hidden_states=aux_hidden_states)",
                 "self.model.layers_to_capture = [val + 1 for val in layer_ids]"):
        assert line in after, line
    again = analyze(root)
    assert _plain_findings(again) == [] or all(
        "set_eagle3_layers_to_capture" not in c.members for f in _plain_findings(again) for c in f.classes)
    assert delegation_edits(again, _plain_findings(again)).edits == ()  # applying it twice adds nothing


def test_a_loop_over_the_layer_range_captures_by_its_own_index(tmp_path):
    plain = PLAIN.replace("for layer in self.layers:", "for i in range(self.start_layer, self.end_layer):\n"
                          "                layer = self.layers[i]")
    root, analysis = _analyze(tmp_path, plain)
    before, after = _fixed(root, analysis)
    ast.parse(after)
    assert only_adds_lines(before, after) and "enumerate" not in after
    assert "            if i in self.layers_to_capture:\n                aux_hidden_states.append" in after


def test_a_decoder_without_a_residual_records_its_hidden_states(tmp_path):
    plain = PLAIN.replace("hidden_states, residual = self.embed_tokens(input_ids), None",
                          "hidden_states = self.embed_tokens(input_ids)").replace(
        "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)",
        "hidden_states = layer(positions, hidden_states, forward_batch)")
    _, analysis = _analyze(tmp_path, plain)
    capture = _provision(analysis).capture
    assert capture.expression == "hidden_states" and capture.like == ""  # QwenModel records what it lacks
    assert capture.words() == (" (also makes `PlainModel.forward` capture aux hidden states: its `hidden_states` "
                               "before each captured layer)")


def _declined(tmp_path, plain, why):
    root, analysis = _analyze(tmp_path, plain)
    provision = _provision(analysis)
    assert str(provision.how) == "cannot tell" and provision.capture is None
    assert "and making it capture them does not apply here: " in provision.why and why in provision.why
    assert delegation_edits(analysis, _plain_findings(analysis)).edits == ()


def test_a_decoder_that_does_not_end_in_return_hidden_states_is_declined(tmp_path):
    _declined(tmp_path, PLAIN.replace("            return hidden_states\n", "            return hidden_states, None\n"),
              "`PlainModel.forward` does not end in `return hidden_states`")


def test_a_decoder_without_a_layer_loop_is_declined(tmp_path):
    _declined(tmp_path, PLAIN.replace("for layer in self.layers:", "for layer in self.blocks:"),
              "`PlainModel.forward` has no loop over `self.layers`")


def test_a_decoder_that_handles_aux_hidden_states_its_own_way_is_declined(tmp_path):
    _declined(tmp_path, PLAIN.replace("            for layer in self.layers:",
                                      "            aux_hidden_states = []\n            for layer in self.layers:\n"
                                      "                aux_hidden_states.append(hidden_states)"),
              "`PlainModel.forward` already handles `layers_to_capture` or `aux_hidden_states`")


def test_a_list_handed_to_the_layers_is_reused_and_a_final_else_return_wrapped(tmp_path):
    """SGLang 0.5.8's Bailing shape: ``aux_hidden_states = []`` only handed to each layer, and the forward ends
    in ``if not last rank: return …`` / ``else: …; return hidden_states``."""
    plain = PLAIN.replace(
        "            for layer in self.layers:\n"
        "                hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)\n"
        "            return hidden_states\n",
        "            aux_hidden_states = []\n"
        "            for layer in self.layers:\n"
        "                hidden_states, residual = layer(positions, hidden_states, forward_batch, residual,\n"
        "                                                captured=aux_hidden_states)\n"
        "            if self.last:\n"
        "                return hidden_states, residual\n"
        "            else:\n"
        "                return hidden_states\n")
    root, analysis = _analyze(tmp_path, plain)
    before, after = _fixed(root, analysis)
    ast.parse(after)
    assert only_adds_lines(before, after) and after.count("aux_hidden_states = []") == 1
    assert ("            if aux_hidden_states:\n                return hidden_states, aux_hidden_states\n"
            "            return hidden_states\n") in after


def test_a_logits_call_that_is_not_canonical_is_declined(tmp_path):
    _declined(tmp_path, PLAIN.replace("self.logits_processor(input_ids, hidden_states, self.model.embed_tokens, "
                                      "forward_batch)", "self.logits_processor(hidden_states, forward_batch)"),
              "is not the canonical `(input_ids, hidden_states, head, forward_batch)`")


def test_a_class_that_does_not_run_its_decoder_once_is_declined(tmp_path):
    _declined(tmp_path, PLAIN.replace("hidden_states = self.model(input_ids, positions, forward_batch)",
                                      "hidden_states = self.run(input_ids)"),
              "does not assign `hidden_states = self.model(…)` (or a call handed `self.model`) once")




def test_the_json_report_names_the_decoder_the_fix_edits_too(tmp_path):
    """A CI tool reading ``--format json`` sees every class the fix changes: the finding is on the class, and
    its ``implements`` entry carries the decoder whose forward the fix makes capture."""
    root, _ = _analyze(tmp_path / "tree")
    out = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(root / "pkg"), "--format", "json",
                          "--no-cache"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")})
    entries = [i for f in json.loads(out.stdout)["findings"]
               for i in f.get("implements", []) + [j for c in f.get("classes", []) for j in c["implements"]]
               if i["in_class"] == "PlainForCausalLM" and i["method"] == "set_eagle3_layers_to_capture"]
    assert entries, out.stdout + out.stderr
    assert all(e["capture"] == {"decoder": "PlainModel", "decoder_path": "models/plain.py",
                                "like": "pkg.models.qwen.QwenModel", "delegate": "model"} for e in entries), entries
