"""Runs one model; with EAGLE-3 it asks the target model to capture auxiliary hidden states."""


class ModelRunner:
    def __init__(self, model, spec_algorithm, aux_layer_ids):
        self.model = model
        self.spec_algorithm = spec_algorithm
        self.eagle_use_aux_hidden_state = spec_algorithm == "EAGLE3"
        self.aux_layer_ids = aux_layer_ids

    def load_model(self, weights):
        self.model.load_weights(weights)
        if self.eagle_use_aux_hidden_state:
            self.model.set_eagle3_layers_to_capture(self.aux_layer_ids)

    def forward(self, batch):
        return self.model.forward(batch)
