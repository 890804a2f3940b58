"""The EAGLE-3 decoder capture through the server: a class whose decoder records no aux hidden states gets one
quick fix that implements ``set_eagle3_layers_to_capture`` like a sibling and makes the decoder capture them
(``check.capture``), its diagnostic, hover and title saying so in the same words; after the edit, nothing."""

from __future__ import annotations

from lsp_harness import ENCODINGS, apply_edits, edits_for, indexed_diagnostics, initialize, open_document
from lsprotocol import types
from test_features_e2e import applied, code_actions, hover_text

# a decoder that captures, and the model whose set_eagle3_layers_to_capture is the one to copy
QWEN = '''class QwenModel:
    def __init__(self, config):
        self.layers = []
        self.layers_to_capture = []

    def forward(self, hidden_states):
        residual = None
        aux_hidden_states = []
        for i, layer in enumerate(self.layers):
            if i in self.layers_to_capture:
                aux_hidden_states.append(hidden_states + residual)
            hidden_states, residual = layer(hidden_states, residual)
        if len(aux_hidden_states) == 0:
            return hidden_states
        return hidden_states, aux_hidden_states


class QwenForCausalLM:
    def __init__(self, config):
        self.model = QwenModel(config)
        self.capture_aux_hidden_states = False

    def set_eagle3_layers_to_capture(self, layer_ids=None):
        self.capture_aux_hidden_states = True
        self.model.layers_to_capture = [val + 1 for val in layer_ids]


EntryClass = QwenForCausalLM
'''

# the same parts, serving EAGLE already (embedding and head) and meaning EAGLE-3 (it takes the hidden-state norm
# only EAGLE-3 runs hand the draft), capturing nothing
PLAIN = '''class PlainModel:
    def __init__(self, config):
        self.layers = []

    def forward(self, hidden_states):
        residual = None
        for layer in self.layers:
            hidden_states, residual = layer(hidden_states, residual)
        return hidden_states


class PlainForCausalLM:
    def __init__(self, config):
        self.model = PlainModel(config)
        self.embed_tokens = None
        self.lm_head = None

    def forward(self, input_ids, forward_batch):
        hidden_states = self.model(input_ids)
        return self.logits_processor(input_ids, hidden_states, self.lm_head, forward_batch)

    def get_embed_and_head(self):
        return self.embed_tokens, self.lm_head

    def set_embed_and_head(self, embed, head):
        self.embed_tokens = embed
        self.lm_head = head

    def set_hidden_norm(self, norm):
        self.hidden_norm = norm


EntryClass = PlainForCausalLM
'''

# the EAGLE worker hands the target's norm on in EAGLE-3 runs alone
EAGLE3_ONLY = """
        if server_args.speculative_algorithm == "EAGLE3":
            self.target_worker.model_runner.model.set_hidden_norm(None)
"""

ALSO = "(also makes `PlainModel.forward` capture aux hidden states like `QwenModel.forward`)"


async def test_the_decoder_capture_chain_is_one_quick_fix_named_alike_everywhere(client, demo):
    (demo / "minisgl/models/qwen.py").write_text(QWEN)
    worker = demo / "minisgl/speculative/eagle_worker.py"
    worker.write_text(worker.read_text().replace("\n    def draft(self, batch):", EAGLE3_ONLY + "\n    def draft(self, batch):"))
    path = demo / "minisgl/models/plain.py"
    path.write_text(PLAIN)
    await initialize(client, [demo])
    uri = open_document(client, path)
    (diagnostic,) = await indexed_diagnostics(client, uri, 1)
    assert (diagnostic.code, diagnostic.data["member"]) == ("SC010", "set_eagle3_layers_to_capture")
    assert f"implement it like `QwenForCausalLM.set_eagle3_layers_to_capture` {ALSO}" in diagnostic.message
    line = PLAIN.splitlines().index("class PlainForCausalLM:")
    assert f"implement like `QwenForCausalLM` {ALSO}" in await hover_text(client, uri, line, 8)
    actions = await code_actions(client, uri, [diagnostic], line=line)
    implement = next(a for a in actions if a.title.startswith("Implement"))
    assert implement.title == f"Implement `set_eagle3_layers_to_capture` like `QwenForCausalLM` {ALSO}"
    fixed = apply_edits(PLAIN, edits_for(implement.edit, uri), ENCODINGS[client.editor])
    for part in ("        self.layers_to_capture = []\n", "        for i, layer in enumerate(self.layers):\n"
                 "            if i in self.layers_to_capture:\n"
                 "                aux_hidden_states.append(hidden_states + residual)\n",
                 "        if aux_hidden_states:\n            return hidden_states, aux_hidden_states\n",
                 "        self.capture_aux_hidden_states = False\n",
                 "        if self.capture_aux_hidden_states:\n            hidden_states, aux_hidden_states = hidden_states\n",
                 "forward_batch, aux_hidden_states=aux_hidden_states)\n",
                 "        self.model.layers_to_capture = [val + 1 for val in layer_ids]\n"):
        assert part in fixed, part
    _, remaining = await applied(client, uri, PLAIN, implement, [])
    assert [d for d in remaining if d.severity == types.DiagnosticSeverity.Error] == []
