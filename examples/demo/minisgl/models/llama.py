"""A text model that implements everything the workers call."""


class LlamaForCausalLM:
    def __init__(self, config):
        self.config = config
        self.embed_tokens = None
        self.lm_head = None
        self.capture_layers = []

    def forward(self, batch):
        return batch

    def load_weights(self, weights):
        self.weights = list(weights)

    def get_embed_and_head(self):
        return self.embed_tokens, self.lm_head

    def set_embed_and_head(self, embed, head):
        self.embed_tokens = embed
        self.lm_head = head

    def set_eagle3_layers_to_capture(self, layer_ids=None):
        self.capture_layers = list(layer_ids or [])


EntryClass = LlamaForCausalLM
