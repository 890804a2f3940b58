"""A multimodal wrapper around LlamaForCausalLM that forgets two of the forwards the workers need."""

from minisgl.models.llama import LlamaForCausalLM


class LlavaForConditionalGeneration:
    def __init__(self, config):
        self.vision_tower = None
        self.language_model = LlamaForCausalLM(config.text_config)

    def forward(self, batch):
        return self.language_model.forward(batch)

    def load_weights(self, weights):
        self.language_model.load_weights(weights)

    def set_embed_and_head(self, embed, head):
        return self.language_model.set_embed_and_head(embed, head)


EntryClass = LlavaForConditionalGeneration
