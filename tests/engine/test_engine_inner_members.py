"""A member of the model's own inner model is a contract use: ``target.model.topk_buffer`` is ``model.topk_buffer``.

Workers read through the model to its decoder (vLLM's ``target_language_model.model.topk_indices_buffer``, the MTP
speculators' ``self.model.model.set_skip_topk(...)``): a class whose ``.model`` lacks the member fails there, one
whose ``.model`` has it, or is not known here, does not. Tests of the inner model guard as tests of the model do
(issue 36, items 4 and 5).
"""

from __future__ import annotations

from engine_trees import analyze, make_tree

PACKAGES = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": ""}

# Three targets: a decoder with the buffer, one without, and a decoder built by a factory nobody can follow.
MODELS = """
    class BufferedDecoder:
        def __init__(self):
            self.topk_buffer = []

        def set_skip_topk(self, skip):
            self.skip = skip

        def compact_topk_indices(self, indices):
            return indices


    class PlainDecoder:
        def __init__(self):
            self.layers = []

        def set_skip_topk(self, skip):
            self.skip = skip


    class BufferedForCausalLM:
        def __init__(self, config):
            self.model = BufferedDecoder()

        def get_embed_and_head(self):
            return None, None


    class PlainForCausalLM:
        def __init__(self, config):
            self.model = PlainDecoder()

        def get_embed_and_head(self):
            return None, None


    class FactoryForCausalLM:
        def __init__(self, config):
            self.model = build_decoder(config)

        def get_embed_and_head(self):
            return None, None


    EntryClass = [BufferedForCausalLM, PlainForCausalLM, FactoryForCausalLM]
"""


def _analysis(tmp_path, worker: str):
    return analyze(make_tree(tmp_path, {**PACKAGES, "pkg/models/decoders.py": MODELS,
                                        "pkg/speculative/eagle_worker.py": worker}))


def _lacking(analysis, member: str) -> set[str]:
    """The classes whose status says a run crashes for want of ``member``."""
    return {status.name for status in analysis.statuses() for algorithm in status.algorithms
            for crash in algorithm.crashes if crash.member == member}


def test_a_read_of_the_inner_models_member_fails_where_the_inner_model_lacks_it(tmp_path):
    analysis = _analysis(tmp_path, """
        class EAGLEWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.buffer = target_worker.model_runner.model.model.topk_buffer
    """)
    (entry,) = [e for e in analysis.contract.entries if e.member == "model.topk_buffer"]
    assert entry.role.value == "target"
    assert _lacking(analysis, "model.topk_buffer") == {"PlainForCausalLM"}
    listed = [c.class_name for f in analysis.findings for c in f.classes if "model.topk_buffer" in c.members]
    assert listed == ["PlainForCausalLM"]


def test_tests_of_the_inner_model_in_another_method_guard_the_uses_under_them(tmp_path):
    """The state is true only when the decoder has both methods: the plain decoder, which has only the first,
    never reaches either call."""
    analysis = _analysis(tmp_path, """
        class EAGLEWorker:
            def __init__(self, target_worker, draft_model_runner):
                self.target_worker = target_worker
                self.draft_model_runner = draft_model_runner
                model = target_worker.model_runner.model
                self.share = (getattr(model.config, "share_topk", False) and hasattr(model.model, "set_skip_topk")
                              and hasattr(model.model, "compact_topk_indices"))

            def step(self, indices):
                if self.share:
                    self.target_worker.model_runner.model.model.set_skip_topk(True)
                    self.target_worker.model_runner.model.model.compact_topk_indices(indices)
    """)
    requires = {site.requires for e in analysis.contract.entries if e.member.startswith("model.")
                for site in e.call_sites}
    assert requires == {("model.compact_topk_indices", "model.set_skip_topk")}
    assert not _lacking(analysis, "model.compact_topk_indices")


def test_a_read_past_a_test_of_the_model_runs_only_for_models_without_the_tested_member(tmp_path):
    """``if hasattr(m, "get_input_embeddings"): return m.get_input_embeddings()`` before ``m.model.…``: a class with
    the method never reaches the inner model's read."""
    analysis = _analysis(tmp_path, """
        class EAGLEWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.buffer = self._buffer(target_worker.model_runner.model)

            def _buffer(self, model):
                if hasattr(model, "get_embed_and_head"):
                    return model.get_embed_and_head()
                return model.model.topk_buffer
    """)
    (site,) = [s for e in analysis.contract.entries if e.member == "model.topk_buffer" for s in e.call_sites]
    assert site.alternative_of == ("get_embed_and_head",)
    assert not _lacking(analysis, "model.topk_buffer")
