"""A speculative-decoding worker: it knows the models only by duck typing."""


class EAGLEWorker:
    def __init__(self, server_args, target_worker, draft_model_runner):
        self.target_worker = target_worker
        self.draft_model_runner = draft_model_runner
        self.hot_token_id = None

        # Share the target's embedding and LM head with the draft model.
        embed, head = self.target_worker.model_runner.model.get_embed_and_head()
        if (
            hasattr(self.draft_model_runner.model, "load_lm_head_from_target")
            and self.draft_model_runner.model.load_lm_head_from_target
        ):
            self.draft_model_runner.model.set_embed_and_head(embed, head)
        else:
            self.draft_model_runner.model.set_embed_and_head(embed, head)

    def draft(self, batch):
        return self.draft_model_runner.forward(batch)
