"""A class whose language model is of a class the tree cannot tell (``self.model = arch(config)``, ``arch``
looked up in a package outside the tree, as SGLang's MindSpore backend does): what the inner has is unknown,
so how to provide a member is, but a member the class itself lacks (no forwarding ``__getattr__``) crashes the
run whatever the inner holds. Such a class is listed on the worker line where its run crashes (SC011), never
an error (what to forward is unknown) and never a hint (how it could pass a gate is unknown)."""

from __future__ import annotations

from engine_trees import SPEC_INFO, SPEC_INFO_PATH, analyze, make_tree
from test_engine_implement import QWEN, RUNNER, WORKER

OUTSIDE = """
    import torch
    from pkg.models.qwen import Head
    from pkg.models.registry import import_model_classes


    def _arch(config):
        return import_model_classes("outside_package.models")[config.architectures[0]]


    class OutsideForCausalLM(torch.nn.Module):
        def __init__(self, config):
            arch = self.get_arch(config)
            self.model = arch(config=config)
            self.lm_head = Head(config)

        def get_arch(self, config):
            return _arch(config)

        def load_weights(self, weights):
            self.model.load_weights(weights)
    {extra}

    EntryClass = [OutsideForCausalLM]
"""
REGISTRY = """
    def import_model_classes(package):
        return {}
"""
SET_EMBED = """
        def set_embed_and_head(self, embed, head):
            self.model.set_embed_and_head(embed, head)
"""


def _tree(tmp_path, extra: str = ""):
    return make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
        "pkg/model_executor/__init__.py": "", "pkg/model_executor/model_runner.py": RUNNER,
        "pkg/speculative/eagle_worker.py": WORKER, "pkg/models/qwen.py": QWEN, SPEC_INFO_PATH: SPEC_INFO,
        "pkg/models/registry.py": REGISTRY, "pkg/models/outside.py": OUTSIDE.replace("{extra}", extra),
    })


def test_a_class_over_an_unknown_inner_that_shows_no_support_is_listed_where_its_run_crashes(tmp_path):
    analysis = analyze(_tree(tmp_path))
    assert _listed(analysis) == {
        ("EAGLE", "get_embed_and_head"): [("OutsideForCausalLM", ("get_embed_and_head",))],
        # EAGLE3 is refused at the runner's check, after the load: listed there too; how the class could pass it
        # is unknown, so no hint either
        ("EAGLE3", "set_eagle3_layers_to_capture"): [("OutsideForCausalLM", ("set_eagle3_layers_to_capture",))]}
    assert [f.code for f in analysis.findings if f.class_name == "OutsideForCausalLM"] == []


def _listed(analysis) -> dict:
    """(algorithm, member) of each worker-line finding → the classes it lists, with their members."""
    return {(f.algorithm, f.member): [(c.class_name, c.members) for c in f.classes]
            for f in analysis.findings if f.code == "SC011"}


def test_with_part_of_the_algorithm_it_is_still_listed_never_an_error(tmp_path):
    """What to forward is unknown (the inner may have the member), so no error claims the class means to support
    the algorithm: it stays on the worker line's list."""
    analysis = analyze(_tree(tmp_path, SET_EMBED))
    assert _listed(analysis)[("EAGLE", "get_embed_and_head")] == [("OutsideForCausalLM", ("get_embed_and_head",))]
    assert [f.code for f in analysis.findings if f.class_name == "OutsideForCausalLM"] == []
