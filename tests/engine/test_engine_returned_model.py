"""A local a speculator's loading method returns is the model its base stores the value in.

vLLM's V2 speculators load the draft in ``load_draft_model`` (``model = load_…(target_model); …; return model``),
and the base keeps it (``self.model = self.load_draft_model(target_model)``). A test or a read of ``model``
there is one of the draft: a state set from ``hasattr(model, "m")`` guards the later uses under it (issue 36,
item 4), and ``model.model.x`` is a use of the draft's ``.model`` (item 5).
"""

from __future__ import annotations

import pytest
from engine_trees import analyze
from test_engine_vllm import MODELS, vllm_tree

# An MTP head whose predictor has the logits processor, and a head that also computes logits locally.
HEADS = """
    import torch.nn as nn


    class LogitsProcessor(nn.Module):
        pass


    class HeadPredictor(nn.Module):
        def __init__(self):
            super().__init__()
            self.logits_processor = LogitsProcessor()


    class TinyMTP(nn.Module):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = HeadPredictor()

        def compute_logits(self, hidden):
            return hidden
"""

INIT = """
    def init_speculator(vllm_config, device):
        if vllm_config.speculative_config.method == "dspark":
            from vllm.v1.worker.gpu.spec_decode.dspark.speculator import DSparkSpeculator
            return DSparkSpeculator(vllm_config, device)
        from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator
        return BaseSpeculator(vllm_config, device)
"""

BASE = """
    class BaseSpeculator:
        def load_draft_model(self, target_model):
            return load_model(target_model)

        def load_model(self, target_model):
            self.model = self.load_draft_model(target_model)

        def propose(self, hidden):
            return self._sample(hidden)

        def _sample(self, hidden):
            return self.model.compute_logits(hidden)
"""

DSPARK = """
    from vllm.v1.worker.gpu.spec_decode.speculator import BaseSpeculator


    class DSparkSpeculator(BaseSpeculator):
        def __init__(self, vllm_config, device):
            self.use_local = False

        def load_draft_model(self, target_model):
            model = load_dspark(target_model)
            {test}
            return model

        def _sample(self, hidden):
            if self.use_local:
                return self._sample_local(hidden)
            return self.model.compute_logits(hidden)

        def _sample_local(self, hidden):
            local = self.model.compute_draft_logits_local(hidden)
            return self.model.logits_processor.gather(local)
"""

REGISTERED = '"EagleTinyForCausalLM": ("tiny_eagle", "EagleTinyForCausalLM"),'


def speculator_tree(tmp_path, heads: str, dspark: str, drafts: tuple[str, ...]):
    """A vLLM-shaped tree whose V2 speculators are ``BASE`` and the DSPARK one ``dspark``, with the draft heads of
    ``heads`` (``models/heads.py``) registered as drafts by the names ``drafts``."""
    root = vllm_tree(tmp_path, {
        f"{MODELS}/heads.py": heads,
        "vllm/v1/worker/gpu/__init__.py": "",
        "vllm/v1/worker/gpu/spec_decode/__init__.py": INIT,
        "vllm/v1/worker/gpu/spec_decode/speculator.py": BASE,
        "vllm/v1/worker/gpu/spec_decode/dspark/__init__.py": "",
        "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py": dspark,
    })
    registry = root / f"{MODELS}/registry.py"
    registered = "".join(f'\n        "{name}": ("heads", "{name}"),' for name in drafts)
    registry.write_text(registry.read_text().replace(REGISTERED, REGISTERED + registered))
    config = root / "vllm/config/speculative.py"
    config.write_text(config.read_text().replace('"ngram"]', '"ngram", "dspark"]'))
    return root


def _tree(tmp_path, test: str):
    return speculator_tree(tmp_path, HEADS, DSPARK.replace("{test}", test), ("TinyMTP",))


@pytest.mark.parametrize("test", [
    'self.use_local = hasattr(model, "compute_draft_logits_local")',
    'if hasattr(model, "compute_draft_logits_local"):\n                self.use_local = True',
    'self.model = model\n            self.use_local = hasattr(self.model, "compute_draft_logits_local")',
    'if (local := getattr(model, "compute_draft_logits_local", None)) is not None:\n                self.use_local = True',
], ids=["state from a test of the returned local", "state set under that test", "stored first", "walrus test"])
def test_a_state_set_from_a_test_of_the_returned_draft_guards_the_uses_under_it(tmp_path, test):
    """The MTP head has no ``compute_draft_logits_local``, so a run never reaches the processor read: no
    missing forward, though its predictor has ``logits_processor``."""
    analysis = analyze(_tree(tmp_path, test))
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    assert site.requires == ("compute_draft_logits_local",) and site.algorithms == frozenset({"DSPARK"})
    assert not [f for f in analysis.findings if f.class_name == "TinyMTP" and f.member == "logits_processor"]
    # nor does hover list it among the head's members as one it fails to forward: no run of it gets there
    (head,) = [status for status in analysis.statuses() if status.name == "TinyMTP"]
    assert "logits_processor" not in {member.member for member in head.members}


def test_the_state_guards_a_module_function_entered_only_past_it(tmp_path):
    """The read sits in a module-level helper the speculator calls only under ``if self.use_local:``: the
    helper's uses need what the callers' state stands for, as the method's own would."""
    root = _tree(tmp_path, 'self.use_local = hasattr(model, "compute_draft_logits_local")')
    speculator = root / "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py"
    text = speculator.read_text()
    assert "return self.model.logits_processor.gather(local)" in text
    text = text.replace("return self.model.logits_processor.gather(local)", "return _gather(self.model, local)")
    speculator.write_text(text + "\n\ndef _gather(model, local):\n    return model.logits_processor.gather(local)\n")
    analysis = analyze(root)
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    assert site.requires == ("compute_draft_logits_local",) and site.certain
    assert not [f for f in analysis.findings if f.class_name == "TinyMTP" and f.member == "logits_processor"]


def test_a_test_of_a_local_the_method_does_not_return_guards_nothing(tmp_path):
    """A local the method only builds and drops is no model any worker keeps: the state says nothing of the
    draft, so the MTP head meets the read (its predictor has it: a forward it lacks)."""
    test = 'probe = load_probe(target_model)\n            self.use_local = hasattr(probe, "compute_draft_logits_local")'
    analysis = analyze(_tree(tmp_path, test))
    (site,) = [s for e in analysis.contract.entries if e.member == "logits_processor" for s in e.call_sites]
    assert site.requires == ()
    assert [f.code for f in analysis.findings if f.class_name == "TinyMTP" and f.member == "logits_processor"] \
        == ["SC001"]


def test_a_read_through_the_returned_local_is_a_use_of_the_draft(tmp_path):
    """``model.model.confidence_head``, before the base stores ``model``, reads the draft's ``.model``."""
    analysis = analyze(_tree(tmp_path, "self.confident = model.model.confidence_head is not None"))
    (entry,) = [e for e in analysis.contract.entries if e.member == "model" and e.role.value == "draft"]
    assert [(s.path.rsplit("/", 2)[-2], s.algorithms) for s in entry.call_sites] == [("dspark", frozenset({"DSPARK"}))]
