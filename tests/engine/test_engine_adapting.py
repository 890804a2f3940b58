"""A model's body adapted to a class that holds the same parts under other names (``check.adapting``): a
multimodal wrapper whose decoder sits in ``self.language_model``, built from ``config.text_config``, and whose
head is tied to the embedding (no ``lm_head``). The fix writes the model's body with this class's paths, and
the fit still refuses a body that reads what the renamed part lacks, naming it.

The trees are SGLang-shaped and written here: ``QwenModel`` captures aux hidden states, ``QwenForCausalLM``
implements ``get_embed_and_head`` and ``set_eagle3_layers_to_capture``; ``MultiForConditionalGeneration``
holds a ``PlainModel`` that captures nothing yet.
"""

from __future__ import annotations

import ast

from engine_trees import analyze, make_tree
from spec_contract.engine.edits.fix import delegation_edits
from spec_contract.engine.text import apply_edits, only_adds_lines
from test_engine_capture import PLAIN, RUNNER
from test_engine_capture import QWEN as CAPTURING_QWEN

WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker):
            embed, head = target_worker.model_runner.model.get_embed_and_head()
"""

# the capture tests' model, given a head and a body that reads the configuration
QWEN = CAPTURING_QWEN.replace("""            self.model = QwenModel(config)
            self.capture_aux_hidden_states = False

        def set_eagle3_layers_to_capture(self, layer_ids):
            self.capture_aux_hidden_states = True
            self.model.layers_to_capture = [val + 1 for val in layer_ids]
""", """            self.model = QwenModel(config)
            self.lm_head = None
            self.capture_aux_hidden_states = False

        def get_embed_and_head(self):
            return self.model.embed_tokens.weight, self.lm_head.weight

        def set_eagle3_layers_to_capture(self, layer_ids=None):
            self.capture_aux_hidden_states = True
            if layer_ids is None:
                num_layers = self.config.num_hidden_layers
                self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]
            else:
                self.model.layers_to_capture = [val + 1 for val in layer_ids]
""")
assert "get_embed_and_head" in QWEN

# the capture tests' decoder that captures nothing yet, held by a multimodal wrapper with a tied head
MULTI = PLAIN[:PLAIN.index("    class PlainForCausalLM")] + """    def general_mm_embed_routine(input_ids, forward_batch, language_model):
        return language_model(input_ids, None, forward_batch)


    class MultiForConditionalGeneration(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.language_model = PlainModel(config.text_config)
            self.logits_processor = None

        def forward(self, input_ids, positions, forward_batch):
            hidden_states = general_mm_embed_routine(input_ids=input_ids, forward_batch=forward_batch,
                                                     language_model=self.language_model)
            return self.logits_processor(input_ids, hidden_states, self.language_model.embed_tokens, forward_batch)


    EntryClass = MultiForConditionalGeneration
"""


def _analyze(tmp_path, multi=MULTI):
    root = make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/model_executor/__init__.py": "",
        "pkg/speculative/__init__.py": "", "pkg/speculative/eagle_worker.py": WORKER,
        "pkg/model_executor/model_runner.py": RUNNER, "pkg/models/qwen.py": QWEN, "pkg/models/multi.py": multi})
    return root, analyze(root)


def _provisions(analysis):
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "MultiForConditionalGeneration"))
    assert status is not None
    return {m.member: m.provision for m in status.members}


def test_a_wrapper_with_its_decoder_elsewhere_and_a_tied_head_gets_the_models_body_with_its_own_paths(tmp_path):
    root, analysis = _analyze(tmp_path)
    provisions = _provisions(analysis)
    assert {m: (str(p.how), p.like) for m, p in provisions.items()} == {
        "get_embed_and_head": ("implement", "pkg.models.qwen.QwenForCausalLM"),
        "set_eagle3_layers_to_capture": ("implement", "pkg.models.qwen.QwenForCausalLM")}
    capture = provisions["set_eagle3_layers_to_capture"].capture
    assert capture is not None and (capture.delegate, capture.decoder) == ("language_model", "PlainModel")
    findings = [f for f in analysis.findings if f.class_name == "MultiForConditionalGeneration"] + [
        f for f in analysis.findings for c in (f.classes or ()) if c.class_name == "MultiForConditionalGeneration"]
    fixes = delegation_edits(analysis, findings)
    assert fixes.refused == ()
    path = root / "pkg/models/multi.py"
    before = path.read_text()
    after = apply_edits(before, [e for e in fixes.edits if str(path).endswith(e.path)])
    ast.parse(after)
    assert only_adds_lines(before, after)
    for line in ("return self.language_model.embed_tokens.weight, self.language_model.embed_tokens.weight",
                 "num_layers = self.config.text_config.num_hidden_layers",
                 "self.language_model.layers_to_capture = [2, num_layers // 2, num_layers - 3]",
                 "self.language_model.layers_to_capture = [val + 1 for val in layer_ids]",
                 "self.capture_aux_hidden_states = False", "hidden_states, aux_hidden_states = hidden_states",
                 "self.layers_to_capture = []", "aux_hidden_states.append(hidden_states + residual)"):
        assert line in after, line
    assert "self.model" not in after and "self.lm_head" not in after
    path.write_text(after)
    again = analyze(root)
    assert [f for f in again.findings if f.class_name == "MultiForConditionalGeneration"] == []


def test_a_renamed_part_that_lacks_what_the_body_reads_is_still_refused_naming_it(tmp_path):
    _, analysis = _analyze(tmp_path, MULTI.replace("            self.embed_tokens = None\n", "            self.embed = None\n")
                           .replace("self.language_model.embed_tokens, forward_batch", "self.head, forward_batch")
                           .replace("self.logits_processor = None", "self.logits_processor = None\n            self.head = None"))
    provision = _provisions(analysis)["get_embed_and_head"]
    assert str(provision.how) == "cannot tell"
    assert "`self.language_model.embed_tokens`, and `PlainModel` has no `embed_tokens`" in provision.why
