"""A small SGLang-shaped engine and checkpoint folders for the preflight and matrix tests.

The engine is written for these tests (no SGLang source): an EAGLE worker that uses one member on each
role's model at start-up, a model runner that captures EAGLE-3 layers on the target, a DFLASH worker that
gates its algorithm, the start-up refusal of a draft whose context is shorter than the target's (and the
context keys it reads), a Llama model that has every member, its EAGLE-3 head, a wrapper that forwards
nothing (the Kimi-K2.5 shape in 0.5.9) and one that forwards everything (0.5.10).
"""

from __future__ import annotations

import json
from pathlib import Path

from engine_trees import SPEC_INFO, make_tree

ENGINE = {
    "__init__.py": "",
    "srt/__init__.py": "",
    "srt/speculative/__init__.py": "",
    "srt/speculative/spec_info.py": SPEC_INFO.replace("from pkg.speculative.", "from sglang.srt.speculative."),
    "srt/speculative/eagle_worker.py": """
        class EAGLEWorker:
            def __init__(self, server_args, target_worker, draft_model_runner):
                self.target_worker = target_worker
                self.draft_model_runner = draft_model_runner
                embed, head = self.target_worker.model_runner.model.get_embed_and_head()
                self.draft_model_runner.model.set_embed_and_head(embed, head)
    """,
    "srt/speculative/dflash_worker.py": """
        class DFlashWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                if not hasattr(self.target_worker.model_runner.model, "set_dflash_layers_to_capture"):
                    raise ValueError("DFLASH needs set_dflash_layers_to_capture on the target")
                self.target_worker.model_runner.model.set_dflash_layers_to_capture([1, 2])
    """,
    "srt/model_executor/__init__.py": "",
    "srt/model_executor/model_runner.py": """
        class ModelRunner:
            def load_model(self):
                if self.eagle_use_aux_hidden_state:
                    self.model.set_eagle3_layers_to_capture()
                if self.dflash_use_aux_hidden_state:
                    if not hasattr(self.model, "set_dflash_layers_to_capture"):
                        raise ValueError("the target model cannot capture aux hidden states")
                    self.model.set_dflash_layers_to_capture([1, 2])
    """,
    "srt/configs/__init__.py": "",
    "srt/configs/model_config.py": """
        import os


        def is_generation_model(model_architectures, is_embedding=False):
            return not is_embedding


        class ModelConfig:
            def _config_draft_model(self):
                if self.is_draft_model and self.hf_config.architectures[0] == "DeepseekV3ForCausalLM":
                    self.hf_config.architectures[0] = "DeepseekV3ForCausalLMNextN"

            def _derive_context_length(self, context_length, derived):
                if context_length is not None and context_length > derived:
                    if os.environ.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
                        self.context_len = context_length
                    else:
                        raise ValueError(
                            f"{context_length} > {derived}; set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
                        )
    """,
    "srt/utils/__init__.py": "",
    "srt/utils/hf_transformers_utils.py": """
        CONTEXT_LENGTH_KEYS = ["max_sequence_length", "max_position_embeddings"]
    """,
    "srt/models/__init__.py": "",
    "srt/models/llama.py": """
        class LlamaForCausalLM:
            def __init__(self, config):
                self.config = config

            def get_embed_and_head(self):
                return None, None

            def set_embed_and_head(self, embed, head):
                pass

            def set_eagle3_layers_to_capture(self, layers=None):
                pass

            def set_dflash_layers_to_capture(self, layers):
                pass

        EntryClass = LlamaForCausalLM
    """,
    "srt/models/llama_eagle3.py": """
        from sglang.srt.models.llama import LlamaForCausalLM


        class LlamaForCausalLMEagle3(LlamaForCausalLM):
            pass

        EntryClass = [LlamaForCausalLMEagle3]
    """,
    "srt/models/tower.py": """
        from sglang.srt.models.llama import LlamaForCausalLM


        class TowerForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = [TowerForConditionalGeneration]
    """,
}

FORWARDING_TOWER = """
    from sglang.srt.models.llama import LlamaForCausalLM


    class TowerForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

        def get_embed_and_head(self):
            return self.language_model.get_embed_and_head()

        def set_embed_and_head(self, embed, head):
            self.language_model.set_embed_and_head(embed, head)

        def set_eagle3_layers_to_capture(self, layers=None):
            self.language_model.set_eagle3_layers_to_capture(layers)

        def set_dflash_layers_to_capture(self, layers):
            self.language_model.set_dflash_layers_to_capture(layers)

    EntryClass = [TowerForConditionalGeneration]
"""


def engine_tree(root: Path, files: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> Path:
    """The engine under ``root/sglang`` (its package folder, as ``--engine`` takes it)."""
    tree = {path: text for path, text in {**ENGINE, **(files or {})}.items() if path not in drop}
    return make_tree(root / "sglang", tree)


def checkpoint(folder: Path, architecture: str, **config: object) -> Path:
    """A checkpoint folder holding only its ``config.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture], **config}), encoding="utf-8")
    return folder


def kimi_like(root: Path) -> tuple[Path, Path]:
    """A target naming the wrapper with a 262144-position text context, and an EAGLE-3 draft with 131072."""
    target = checkpoint(root / "target", "TowerForConditionalGeneration",
                        text_config={"max_position_embeddings": 262144,
                                     "rope_scaling": {"factor": 64.0, "original_max_position_embeddings": 4096}})
    draft = checkpoint(root / "draft", "LlamaForCausalLMEagle3", max_position_embeddings=131072)
    return target, draft
