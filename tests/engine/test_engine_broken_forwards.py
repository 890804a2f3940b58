"""Forwards that land on an inner model lacking the member (SC013): the class has the member, so every
``hasattr`` passes, but its body hands it to ``self.model`` of a class that does not have it. The shape is
SGLang's Qwen3-VL (``set_dflash_layers_to_capture`` handed to a decoder a subclass-chosen default builds);
each fixture is a small tree of our own."""

from __future__ import annotations

from engine_trees import WORKER, analyze, base_tree, findings, line_of
from spec_contract.engine.resolve.index import ClassKey

GATED_WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_model_runner):
            model = target_worker.model_runner.model
            if not hasattr(model, "get_embed_and_head"):
                raise ValueError("the target cannot share its embedding")
            embed, head = model.get_embed_and_head()
"""


def vl(body: str = "        return self.model.get_embed_and_head()\n", inner: str = "TextDecoder") -> dict[str, str]:
    """A base whose ``language_model_cls`` default has the member and forwards it, and a registered subclass
    that passes a decoder of its own (``inner``) up to it."""
    body = "".join(f"    {line}\n" for line in body.splitlines())  # to the template's indentation
    return {"pkg/models/vl.py": f"""
    from pkg.models.llama import LlamaForCausalLM
    from outside.models import ExternalModel


    class TextDecoder:
        def __init__(self, config):
            self.config = config


    class VLBase:
        def __init__(self, config, language_model_cls=LlamaForCausalLM):
            self.model = language_model_cls(config)

        def get_embed_and_head(self):
{body}
        def set_embed_and_head(self, embed, head):
            self.model.set_embed_and_head(embed, head)

    class Dense(VLBase):
        def __init__(self, config):
            super().__init__(config, language_model_cls={inner})


    EntryClass = [VLBase, Dense]
    """}


def test_a_subclass_whose_inner_lacks_the_forwarded_member_crashes_in_the_forward(tmp_path):
    """The target's member is handed to a decoder without it: an error. The draft's is too, but the class is
    no draft by shape, and a draft checkpoint naming it is not this shape's crash: nothing."""
    root = base_tree(tmp_path, vl())
    analysis = analyze(root)
    assert findings(analysis) == [
        ("SC013", "Dense", "get_embed_and_head", ("target",), "model", "TextDecoder", "error",
         ((WORKER, 5, False),))]
    message = analysis.findings[0].message
    assert message.startswith("`Dense` hands `get_embed_and_head` to `self.model` (TextDecoder), which does not "
                              f"have it; a run of EAGLE or EAGLE3 calls it at {WORKER}:5 (start-up) and crashes in "
                              f"`VLBase.get_embed_and_head` (pkg/models/vl.py:{line_of(root, 'pkg/models/vl.py', 'def get_embed_and_head')})")


def test_a_gate_the_class_passes_does_not_stop_the_run_reaching_the_forward(tmp_path):
    root = base_tree(tmp_path, {WORKER: GATED_WORKER, **vl()})
    assert [f[:3] for f in findings(analyze(root))] == [("SC013", "Dense", "get_embed_and_head")]


def test_a_forward_the_method_tests_first_is_not_broken(tmp_path):
    body = ("        if not hasattr(self.model, \"get_embed_and_head\"):\n"
            "            raise ValueError(\"no shared embedding\")\n"
            "        return self.model.get_embed_and_head()\n")
    assert [f for f in findings(analyze(base_tree(tmp_path, vl(body)))) if f[0] == "SC013"] == []


def test_an_inner_that_has_the_member_or_is_unknown_says_nothing(tmp_path):
    for inner in ("LlamaForCausalLM", "ExternalModel"):
        root = base_tree(tmp_path / inner, vl(inner=inner))
        assert [f for f in findings(analyze(root)) if f[0] == "SC013"] == [], inner


def test_the_status_model_says_the_algorithm_crashes_there_and_guesses_no_implementation(tmp_path):
    """Hover, preflight and the matrix read the status: they must not call the class supported while the check
    reports the crash, nor offer to implement a member the class already has."""
    analysis = analyze(base_tree(tmp_path, vl()))
    (eagle,) = [a for a in analysis.status_of(ClassKey("pkg.models.vl", "Dense")).algorithms if a.algorithm == "EAGLE"]
    assert (str(eagle.state), eagle.members) == ("crashes", ("get_embed_and_head",))
    (crash,) = [c for c in eagle.crashes if c.member == "get_embed_and_head"]
    assert (str(crash.provision.how), crash.provision.why) == (
        "cannot tell", "the class hands it to `self.model` (`TextDecoder`), which lacks it: add it to that class")
    assert [f.code for f in analysis.findings] == ["SC013"]  # not an SC010 to implement it again


def test_an_inner_with_a_base_from_outside_the_tree_may_have_it(tmp_path):
    """transformers' ``PreTrainedModel`` has ``get_input_embeddings``: a base the tree cannot read may provide
    the member, so nothing is said; torch's ``nn.Module`` has no contract member, so it does not stop the check."""
    for base, expected in (("PreTrainedModel", []), ("nn.Module", ["SC013"])):
        files = vl()
        files["pkg/models/vl.py"] = files["pkg/models/vl.py"].replace(
            "class TextDecoder:", f"class TextDecoder({base}):").replace(
            "from outside.models import ExternalModel",
            "from outside.models import ExternalModel\n    from torch import nn\n    from transformers import PreTrainedModel")
        assert [f[0] for f in findings(analyze(base_tree(tmp_path / base, files)))] == expected, base


def test_a_subclass_that_calls_torchs_init_past_its_base_builds_only_its_own_inner(tmp_path):
    """SGLang's DeepseekV4 NextN and vLLM's Qwen3.5 shape: ``nn.Module.__init__(self)`` instead of
    ``super().__init__()``, so the base's ``__init__`` (and its ``self.model``) never runs; the inherited forward
    lands on the subclass's own inner model only."""
    files = vl()
    files["pkg/models/vl.py"] = files["pkg/models/vl.py"].replace(
        "class VLBase:", "class VLBase(nn.Module):").replace(
        "        super().__init__(config, language_model_cls={inner})".format(inner="TextDecoder"),
        "        nn.Module.__init__(self)\n            self.model = TextDecoder(config)").replace(
        "from outside.models import ExternalModel", "from outside.models import ExternalModel\n    from torch import nn")
    analysis = analyze(base_tree(tmp_path, files))
    assert [k.qualname for k in analysis.index.delegates(ClassKey("pkg.models.vl", "Dense"))["model"]] == ["TextDecoder"]
    assert [f[:3] for f in findings(analysis)] == [("SC013", "Dense", "get_embed_and_head")]


def test_a_forward_inside_a_try_that_catches_attribute_error_is_not_broken(tmp_path):
    body = ("        try:\n"
            "            return self.model.get_embed_and_head()\n"
            "        except AttributeError:\n"
            "            return None, None\n")
    assert [f for f in findings(analyze(base_tree(tmp_path, vl(body)))) if f[0] == "SC013"] == []
