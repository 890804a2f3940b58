"""Members no inner model has (the status model's findings, ``check.crashes``): implement by analogy, chains,
severity from evidence of intent, and the hint of a refused algorithm the class could support.

Each tree is SGLang-shaped and written here: a decoder class with ``embed_tokens`` (and, where the shape
needs it, ``layers_to_capture``), a model that holds it in ``self.model`` with its own ``lm_head`` and
implements the members (the model to copy), and the classes that lack them.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from engine_trees import SPEC_INFO, SPEC_INFO_PATH, analyze, make_tree
from spec_contract.engine.config import load_config
from spec_contract.engine.edits.fix import delegation_edits
from spec_contract.engine.project import Project
from spec_contract.engine.text import apply_edits, only_adds_lines

WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_model_runner):
            self.target_worker = target_worker
            self.draft_model_runner = draft_model_runner
            embed, head = self.target_worker.model_runner.model.get_embed_and_head()
            self.draft_model_runner.model.set_embed_and_head(embed, head)
"""

# the EAGLE3 gate, while the model runner starts
RUNNER = """
    class ModelRunner:
        def init_aux_capture(self):
            if self.eagle_use_aux_hidden_state:
                if not hasattr(self.model, "set_eagle3_layers_to_capture"):
                    raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")
                self.model.set_eagle3_layers_to_capture(self.layer_ids)
"""

QWEN = """
    import torch


    class QwenModel(torch.nn.Module):
        def __init__(self, config):
            self.embed_tokens = Embedding(config)
            self.layers_to_capture = []


    class QwenForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = QwenModel(config)
            self.lm_head = Head(config)
            self.capture_aux_hidden_states = False

        def get_embed_and_head(self):
            return self.model.embed_tokens.weight, self.lm_head.weight

        def set_embed_and_head(self, embed, head):
            self.model.embed_tokens.weight = embed
            self.lm_head.weight = head

        def set_eagle3_layers_to_capture(self, layer_ids):
            self.capture_aux_hidden_states = True
            self.model.layers_to_capture = [i + 1 for i in layer_ids]


    class Embedding(torch.nn.Module):
        pass


    class Head(torch.nn.Module):
        pass


    EntryClass = QwenForCausalLM
"""


def _tree(tmp_path, files):
    return make_tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
        "pkg/model_executor/__init__.py": "", "pkg/speculative/eagle_worker.py": WORKER,
        "pkg/models/qwen.py": QWEN, SPEC_INFO_PATH: SPEC_INFO, **files,
    })


# a class that holds the same parts and already has part of EAGLE (it can take the draft's embedding)
GEMMA = """
    import torch

    from pkg.models.qwen import Head, QwenModel


    class GemmaForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = QwenModel(config)
            self.lm_head = Head(config)

        def set_embed_and_head(self, embed, head):
            pass


    EntryClass = GemmaForCausalLM
"""


def _fix(root, analysis, findings):
    """Apply the fix of ``findings`` to the files; returns {path: (before, after)}."""
    fixes = delegation_edits(analysis, findings)
    assert fixes.refused == ()
    changed = {}
    for edit in fixes.edits:
        path = root / edit.path if not edit.path.startswith("/") else edit.path
        before = open(path).read()
        after = apply_edits(before, [e for e in fixes.edits if e.path == edit.path])
        changed[str(path)] = (before, after)
    for path, (_, after) in changed.items():
        with open(path, "w") as out:
            out.write(after)
    return changed


def test_a_class_with_part_of_the_algorithm_that_lacks_a_member_no_inner_has_is_an_error_implemented_like_a_sibling(
        tmp_path):
    root = _tree(tmp_path, {"pkg/models/gemma.py": GEMMA})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "GemmaForCausalLM"]
    assert (finding.code, str(finding.severity), finding.member) == ("SC010", "error", "get_embed_and_head")
    assert "implement it like `QwenForCausalLM.get_embed_and_head`" in finding.message
    assert "eagle_worker.py:5 and crashes there (start-up)" in finding.message
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "GemmaForCausalLM"))
    assert status is not None
    member = next(m for m in status.members if m.member == "get_embed_and_head")
    assert (str(member.provision.how), member.provision.like) == ("implement", "pkg.models.qwen.QwenForCausalLM")

    changed = _fix(root, analysis, [finding])
    ((before, after),) = changed.values()
    assert only_adds_lines(before, after)
    ast.parse(after)
    assert "    def get_embed_and_head(self):\n        return self.model.embed_tokens.weight, self.lm_head.weight\n" \
        in after
    assert [f for f in analyze(root).findings if f.class_name == "GemmaForCausalLM"] == []


def test_when_no_model_fits_the_message_says_which_attribute_is_missing_and_nothing_is_written(tmp_path):
    root = _tree(tmp_path, {"pkg/models/gemma.py": GEMMA.replace("self.lm_head = Head(config)", "self.head = None")})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "GemmaForCausalLM"]
    assert finding.code == "SC010"
    assert "the body reads `self.lm_head`, and `GemmaForCausalLM` has no `lm_head`" in finding.message
    assert finding.implements == () and delegation_edits(analysis, [finding]).edits == ()


def test_a_written_attribute_must_be_one_its_owner_sets_itself(tmp_path):
    """``self.model.layers_to_capture = …`` fits only a decoder that sets ``layers_to_capture`` (its forward
    reads it); ``self.capture_aux_hidden_states = True`` only a class that sets it."""
    decoder = """
        import torch


        class PlainModel(torch.nn.Module):
            def __init__(self, config):
                self.embed_tokens = None
    """
    gemma = GEMMA.replace("from pkg.models.qwen import Head, QwenModel",
                          "from pkg.models.qwen import Head\n    from pkg.models.plain import PlainModel")
    gemma = gemma.replace("QwenModel(config)", "PlainModel(config)").replace(
        "self.lm_head = Head(config)", "self.lm_head = Head(config)\n            self.capture_aux_hidden_states = False")
    ungated = RUNNER.replace('                if not hasattr(self.model, "set_eagle3_layers_to_capture"):\n'
                             '                    raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")\n', "")
    assert "raise" not in ungated
    root = _tree(tmp_path, {"pkg/models/plain.py": decoder, "pkg/models/gemma.py": gemma,
                            "pkg/model_executor/model_runner.py": ungated})
    analysis = analyze(root)
    # no EAGLE3 method of its own: the class is listed on the runner's line, with nothing to implement
    (listed,) = [f for f in analysis.findings if f.code == "SC011"]
    assert [(c.class_name, c.members, c.implements) for c in listed.classes] == [
        ("GemmaForCausalLM", ("set_eagle3_layers_to_capture",), ())]
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "GemmaForCausalLM"))
    assert status is not None
    member = next(m for m in status.members if m.member == "set_eagle3_layers_to_capture")
    assert str(member.provision.how) == "cannot tell"
    assert ("the body sets `self.model.layers_to_capture`, which `PlainModel` never sets itself, so its forward "
            "does not read it") in member.provision.why


def test_a_write_inert_in_the_model_itself_is_no_missing_attribute(tmp_path):
    """``self.model.capture_aux_hidden_states = True`` in a model whose own decoder never sets it is inert there,
    and so here: the body fits a class whose decoder lacks it too, and the fix writes the model's body whole.
    A write the model's own decoder does set stays required (the test above)."""
    vl = QWEN.replace("""        def get_embed_and_head(self):
            return self.model.embed_tokens.weight, self.lm_head.weight

        def set_embed_and_head(self, embed, head):
            self.model.embed_tokens.weight = embed
            self.lm_head.weight = head

""", "").replace("""            self.capture_aux_hidden_states = True
""", """            self.capture_aux_hidden_states = True
            self.model.capture_aux_hidden_states = True
""")
    assert vl.count("capture_aux_hidden_states = True") == 2 and "get_embed_and_head" not in vl
    other = GEMMA.replace("self.lm_head = Head(config)",
                          "self.lm_head = Head(config)\n            self.capture_aux_hidden_states = False")
    root = _tree(tmp_path, {"pkg/models/qwen.py": vl, "pkg/models/gemma.py": other,
                            "pkg/model_executor/model_runner.py": RUNNER})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings
                  if f.class_name == "GemmaForCausalLM" and f.member == "set_eagle3_layers_to_capture"]
    assert "`set_eagle3_layers_to_capture` can be implemented like `QwenForCausalLM`" in finding.message
    ((before, after),) = _fix(root, analysis, [finding]).values()
    assert only_adds_lines(before, after)
    ast.parse(after)
    assert "        self.model.capture_aux_hidden_states = True\n" in after
    assert [f for f in analyze(root).findings
            if f.class_name == "GemmaForCausalLM" and f.member == "set_eagle3_layers_to_capture"] == []
    # a decoder of another family that does not set it either: nothing says the write is inert there
    plain = """
        import torch


        class PlainModel(torch.nn.Module):
            def __init__(self, config):
                self.embed_tokens = None
                self.layers_to_capture = []
    """
    ungated = RUNNER.replace('                if not hasattr(self.model, "set_eagle3_layers_to_capture"):\n'
                             '                    raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")\n', "")
    root = _tree(tmp_path / "plain", {
        "pkg/models/qwen.py": vl, "pkg/models/plain.py": plain, "pkg/model_executor/model_runner.py": ungated,
        "pkg/models/gemma.py": other.replace("from pkg.models.qwen import Head, QwenModel",
                                             "from pkg.models.qwen import Head\n    from pkg.models.plain import PlainModel")
                                    .replace("QwenModel(config)", "PlainModel(config)")})
    analysis = analyze(root)
    status = analysis.status_of(next(k for k in analysis.checked if k.qualname == "GemmaForCausalLM"))
    assert status is not None
    member = next(m for m in status.members if m.member == "set_eagle3_layers_to_capture")
    assert str(member.provision.how) == "cannot tell"
    assert "the body sets `self.model.capture_aux_hidden_states`, which `PlainModel` never sets itself" in \
        member.provision.why


def test_a_wrapper_over_a_language_model_that_lacks_it_too_implements_it_there_and_forwards_it_in_one_edit(tmp_path):
    """A chain across two files: the inner can implement the member by analogy; one fix edits both classes."""
    inner = GEMMA.replace("EntryClass = GemmaForCausalLM", "")
    wrapper = """
        import torch

        from pkg.models.gemma import GemmaForCausalLM


        class GemmaForConditionalGeneration(torch.nn.Module):
            def __init__(self, config):
                self.language_model = GemmaForCausalLM(config)

            def set_embed_and_head(self, embed, head):
                self.language_model.set_embed_and_head(embed, head)


        EntryClass = GemmaForConditionalGeneration
    """
    root = _tree(tmp_path, {"pkg/models/gemma.py": inner, "pkg/models/gemma_mm.py": wrapper})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "GemmaForConditionalGeneration"]
    assert finding.code == "SC010"
    assert ("implement it in `GemmaForCausalLM` like `QwenForCausalLM.get_embed_and_head` and forward it to "
            "`self.language_model`") in finding.message
    changed = _fix(root, analysis, [finding])
    assert sorted(p.rsplit("/", 1)[-1] for p in changed) == ["gemma.py", "gemma_mm.py"]
    for before, after in changed.values():
        assert only_adds_lines(before, after)
        ast.parse(after)
    assert "return self.language_model.get_embed_and_head()" in changed[str(root / "pkg/models/gemma_mm.py")][1]
    assert [f for f in analyze(root).findings if f.class_name.startswith("Gemma")] == []


def test_a_member_the_models_part_has_goes_in_this_class_part_too_and_is_forwarded(tmp_path):
    """The model reads only through its decoder (``return self.model.embed_tokens``) and its decoder has the
    member itself: the fix implements it in this class's decoder, like the model's decoder, and forwards it;
    where the model's decoder lacks it, the class implements it itself, like the model."""
    qwen = QWEN.replace("""            self.layers_to_capture = []
""", """            self.layers_to_capture = []

        def get_input_embeddings(self):
            return self.embed_tokens
""").replace("""        def set_embed_and_head(self, embed, head):
            self.model""", """        def get_input_embeddings(self):
            return self.model.embed_tokens

        def set_embed_and_head(self, embed, head):
            self.model""")
    deep = """
        import torch

        from pkg.models.qwen import Head


        class DeepModel(torch.nn.Module):
            def __init__(self, config):
                self.embed_tokens = None


        class DeepForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.model = DeepModel(config)
                self.lm_head = Head(config)

            def get_embed_and_head(self):
                return self.model.embed_tokens.weight, self.lm_head.weight


        EntryClass = DeepForCausalLM
    """
    worker = WORKER + "            self.target_worker.model_runner.model.get_input_embeddings()\n"
    for decoder_has_it in (True, False):
        where = tmp_path / str(decoder_has_it)
        root = _tree(where, {"pkg/models/deep.py": deep, "pkg/speculative/eagle_worker.py": worker,
                             "pkg/models/qwen.py": qwen if decoder_has_it else qwen.replace(
                                 "def get_input_embeddings(self):\n            return self.embed_tokens", "")})
        analysis = analyze(root)
        (finding,) = [f for f in analysis.findings
                      if f.class_name == "DeepForCausalLM" and f.member == "get_input_embeddings"]
        ((before, after),) = _fix(root, analysis, [finding]).values()
        assert only_adds_lines(before, after)
        ast.parse(after)
        if decoder_has_it:
            assert ("implement it in `DeepModel` like `QwenModel.get_input_embeddings` and forward it to "
                    "`self.model`") in finding.message
            assert "    def get_input_embeddings(self):\n        return self.embed_tokens\n" in after
            assert "return self.model.get_input_embeddings()" in after
        else:
            assert "implement it like `QwenForCausalLM.get_input_embeddings`" in finding.message
            assert "    def get_input_embeddings(self):\n        return self.model.embed_tokens\n" in after
        assert [f for f in analyze(root).findings if f.member == "get_input_embeddings"] == []


def test_classes_that_show_no_support_are_one_warning_on_the_worker_line_listing_each(tmp_path):
    bare = """
        import torch


        class BareForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.lm_head = None


        class OtherForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.lm_head = None


        EntryClass = [BareForCausalLM, OtherForCausalLM]
    """
    root = _tree(tmp_path, {"pkg/models/bare.py": bare})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.code == "SC011"]
    assert str(finding.severity) == "warning" and finding.path.endswith("eagle_worker.py")
    assert finding.span.line + 1 == 5
    assert [(c.class_name, c.members) for c in finding.classes] == [
        ("BareForCausalLM", ("get_embed_and_head",)), ("OtherForCausalLM", ("get_embed_and_head",))]
    assert "no gate refuses EAGLE for the 2 registered classes that lack `get_embed_and_head`" in finding.message
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", "--no-cache", "--format", "json",
                           str(root)], capture_output=True, text=True, check=False)
    (listed,) = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "SC011"]
    assert [(c["path"], c["class"], c["members"]) for c in listed["classes"]] == [
        ("pkg/models/bare.py", "BareForCausalLM", ["get_embed_and_head"]),
        ("pkg/models/bare.py", "OtherForCausalLM", ["get_embed_and_head"])]


def test_a_refused_algorithm_the_class_could_support_is_a_hint_its_fix_enables_and_text_shows_only_when_asked(
        tmp_path):
    gemma = GEMMA.replace("        def set_embed_and_head(self, embed, head):\n            pass\n",
                          "        def set_embed_and_head(self, embed, head):\n            pass\n\n"
                          "        def get_embed_and_head(self):\n            return None, None\n")
    gemma = gemma.replace("self.lm_head = Head(config)",
                          "self.lm_head = Head(config)\n            self.capture_aux_hidden_states = False")
    root = _tree(tmp_path, {"pkg/models/gemma.py": gemma, "pkg/model_executor/model_runner.py": RUNNER})
    analysis = analyze(root)
    (hint,) = [f for f in analysis.findings if f.class_name == "GemmaForCausalLM"]
    assert (hint.code, str(hint.severity), hint.algorithm) == ("SC012", "hint", "EAGLE3")
    assert "`set_eagle3_layers_to_capture` can be implemented like `QwenForCausalLM` (1 member)" in hint.message
    text = subprocess.run([sys.executable, "-m", "spec_contract", "check", "--no-cache", str(root)],
                          capture_output=True, text=True, check=False).stdout
    assert "SC012" not in text
    shown = subprocess.run([sys.executable, "-m", "spec_contract", "check", "--no-cache", "--hints", str(root)],
                           capture_output=True, text=True, check=False).stdout
    assert "SC012" in shown
    changed = _fix(root, analysis, [hint])
    ((before, after),) = changed.values()
    assert only_adds_lines(before, after) and "self.model.layers_to_capture = [i + 1 for i in layer_ids]" in after
    status = analyze(root).status_of(next(k for k in analysis.checked if k.qualname == "GemmaForCausalLM"))
    assert status is not None and str(status.algorithm("EAGLE3").state) == "supported"


def test_the_fix_of_a_worker_line_implements_each_listed_class_a_model_fits(tmp_path):
    """A class holding the parts but none of EAGLE is listed on the line (SC011), with how to implement what it
    lacks; the line's fix (``--fix --select SC011``) writes it into the class's own file."""
    plain = GEMMA.replace("        def set_embed_and_head(self, embed, head):\n            pass\n", "")
    root = _tree(tmp_path, {"pkg/models/gemma.py": plain})
    analysis = analyze(root)
    (line,) = [f for f in analysis.findings if f.code == "SC011"]
    ((listed_member, provision),) = line.classes[0].implements
    assert (line.classes[0].class_name, listed_member, str(provision.how)) == (
        "GemmaForCausalLM", "get_embed_and_head", "implement")
    changed = _fix(root, analysis, [line])
    ((before, after),) = changed.values()
    assert only_adds_lines(before, after) and "return self.model.embed_tokens.weight, self.lm_head.weight" in after
    assert [f for f in analyze(root).findings if f.code == "SC011"] == []


def test_a_class_the_loader_makes_of_every_draft_is_listed_with_the_draft_members_it_lacks(tmp_path):
    """SGLang's loader names MindSporeForCausalLM for every model of a ``--model-impl mindspore`` run, the
    draft's included (the profile's ``draft_classes``): the draft members it lacks crash that run as the
    target's do, so the class is listed on the draft's worker line with them too; a target line lists the
    target's contract only (issue 36, item 5), and a class no rewrite loads as a draft is listed with its
    target member only."""
    models = """
        import torch


        class MindSporeForCausalLM(torch.nn.Module):
            def __init__(self, config):
                arch = self.get_arch(config)
                self.model = arch(config=config)


        class PlainForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.lm_head = None


        EntryClass = [MindSporeForCausalLM, PlainForCausalLM]
    """
    root = _tree(tmp_path, {"pkg/models/mindspore.py": models})
    analysis = analyze(root)
    target, draft = sorted((f for f in analysis.findings if f.code == "SC011"), key=lambda f: f.span.line)
    assert str(target.severity) == "warning" and target.span.line + 1 == 5
    assert target.member == "get_embed_and_head"
    assert [(c.class_name, c.members) for c in target.classes] == [
        ("MindSporeForCausalLM", ("get_embed_and_head",)), ("PlainForCausalLM", ("get_embed_and_head",))]
    assert "the 2 registered classes that lack `get_embed_and_head`" in target.message
    assert (draft.span.line + 1, draft.member) == (6, "set_embed_and_head")
    assert [(c.class_name, c.members) for c in draft.classes] == [("MindSporeForCausalLM", ("set_embed_and_head",))]
    assert not [f for f in analysis.findings if f.code in ("SC001", "SC010")]  # no run is certain to crash here


def test_a_crash_no_model_fits_names_the_decoder_a_fix_must_edit_too_when_other_decoders_have_the_member(
        tmp_path):
    """The Qwen3-Next shape: the class holds a decoder that captures no layers (no ``layers_to_capture``),
    while another class hands ``set_eagle3_layers_to_capture`` to its decoder, which implements it. Nothing
    fits, so nothing is written, but the finding names the decoder as a class the fix edits too (JSON:
    ``implements`` with how "cannot tell", ``in_class`` and why)."""
    moe = """
        import torch

        from pkg.models.qwen import Head


        class MoeModel(torch.nn.Module):
            def __init__(self, config):
                self.layers = []
                self.layers_to_capture = []

            def set_eagle3_layers_to_capture(self, layers_to_capture):
                self.layers_to_capture = layers_to_capture


        class MoeForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.model = MoeModel(config)
                self.lm_head = Head(config)

            def set_eagle3_layers_to_capture(self, layer_ids):
                self.model.set_eagle3_layers_to_capture([i + 1 for i in layer_ids])


        EntryClass = MoeForCausalLM
    """
    nxt = """
        import torch

        from pkg.models.qwen import Head


        class NextModel(torch.nn.Module):
            def __init__(self, config):
                self.layers = []
                self.embed_tokens = None


        class NextForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.config = config
                self.model = NextModel(config)
                self.lm_head = Head(config)

            def get_embed_and_head(self):
                return self.model.embed_tokens.weight, self.lm_head.weight


        EntryClass = NextForCausalLM
    """
    ungated = RUNNER.replace('                if not hasattr(self.model, "set_eagle3_layers_to_capture"):\n'
                             '                    raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")\n', "")
    # the worker takes the target's embedding and head for EAGLE-3 runs alone: a class that has that member means
    # EAGLE-3 (one whose member served EAGLE too would not: support for another algorithm is no sign)
    eagle3_only = WORKER.replace("            embed, head = self.target_worker",
                                 "            if self.spec_algorithm.is_eagle3():\n"
                                 "                embed, head = self.target_worker")
    root = _tree(tmp_path, {"pkg/models/moe.py": moe, "pkg/models/next.py": nxt,
                            "pkg/model_executor/model_runner.py": ungated, "pkg/speculative/eagle_worker.py": eagle3_only})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "NextForCausalLM"
                  and f.member == "set_eagle3_layers_to_capture"]
    assert (finding.code, str(finding.severity)) == ("SC010", "error")  # it has get_embed_and_head: it means EAGLE3
    assert finding.implements == () and finding.delegate == ""  # nothing fits: nothing to write, no forward
    (member, unfit), = finding.unfit
    assert (member, str(unfit.how), unfit.in_class, unfit.delegate) == (
        "set_eagle3_layers_to_capture", "cannot tell", "NextModel", "model")
    assert ("`NextModel` (`self.model`) lacks it too, so a fix edits it as well: "
            "`MoeModel.set_eagle3_layers_to_capture`, which `MoeForCausalLM` hands it to, is the closest model "
            "there, but the body sets `self.layers_to_capture`, which `NextModel` never sets itself, so its forward "
            "does not read it") in finding.message
    assert delegation_edits(analysis, [finding]).edits == ()
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", "--no-cache", "--format", "json",
                           str(root)], capture_output=True, text=True, check=False)
    (listed,) = [f for f in json.loads(done.stdout)["findings"] if f["class"] == "NextForCausalLM"
                 and f["method"] == "set_eagle3_layers_to_capture"]
    (entry,) = listed["implements"]
    assert (entry["how"], entry["in_class"], entry["in_path"]) == ("cannot tell", "NextModel", "pkg/models/next.py")
    assert "lacks it too" in entry["why"]


def test_the_texts_read_for_candidates_find_what_the_line_start_patterns_find():
    """``defined_methods`` and ``top_level_names`` search for a literal and check the line start themselves;
    they must find what the multi-line patterns they replace find, on the edges of those patterns: blank
    lines before a top-level def (``^\\s+`` runs over them), ``async`` on its own line, form feeds and
    other whitespace, a ``def`` inside a word, a first line without a newline before it."""
    import re

    from spec_contract.engine.check.analogy import defined_methods, top_level_names

    defines = re.compile(r"^\s+(?:async\s+)?def\s+(\w+)\s*\(", re.MULTILINE)
    bindings = re.compile(r"^(?:(?:async\s+)?def\s+(\w+)|class\s+(\w+)|(\w+)\s*[:=])", re.MULTILINE)
    imported = re.compile(r"^(?:from\s+\S+\s+)?import\s+([^\n(]*(?:\([^)]*\))?)", re.MULTILINE)
    texts = ["async\n    def f(", "\n\ndef top(", "def first(", " def sp(", "xasync def g(", "  async  def h (",
             "\tasync\tdef i(", "\x0c    def ff(", "\u2003def u(", "class A:\n    async\n    def j(self):",
             "undef k(", "  x = 1\n\n\n  def l(", "a\n=1\nimport x\nfrom . import (a,\n b)\nimport \n\nimport os",
             "import \n(foo\nclass B: pass", "    def m(\n", "\r\n    def crlf(", "\n", "", "x: int = 1\nasync def n():"]
    for text in texts:
        assert defined_methods(text) == set(defines.findall(text)), text
        names = {n for groups in bindings.findall(text) for n in groups if n}
        for found in imported.findall(text):
            for part in found.strip("() \t").replace("\n", " ").split(","):
                words = part.split()
                if words:
                    names.add(words[-1].split(".")[0] if len(words) < 3 else words[-1])
        assert top_level_names(text) == names, text
    assert defined_methods("class A:\n\n    async def f(self):\n        def inner(x): ...\ndef top(): ...") == {"f", "inner"}


def test_intent_is_per_algorithm_a_dflash_capture_method_shows_no_eagle_support(tmp_path):
    """Issue 20, item 5: what makes a crash an error is evidence that the class means to support *that*
    algorithm. A class with EAGLE3's capture method lacks EAGLE's get_embed_and_head: it meant EAGLE and crashes
    (SC010). A class with only DFLASH's capture method shows no EAGLE support: its EAGLE run crashes for want of a
    gate, said once on the worker line (SC011), never an error (it was one while every gate's member counted)."""
    runner = RUNNER + """
            if self.spec_algorithm.is_dflash():
                if not hasattr(self.model, "set_dflash_layers_to_capture"):
                    raise ValueError("DFLASH needs set_dflash_layers_to_capture")
                self.model.set_dflash_layers_to_capture(self.layer_ids)
    """
    models = """
        import torch

        from pkg.models.qwen import Head, QwenModel


        class AuxCaptureForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.model = QwenModel(config)
                self.lm_head = Head(config)

            def set_eagle3_layers_to_capture(self, layer_ids):
                self.model.layers_to_capture = [i + 1 for i in layer_ids]


        class FlashOnlyForCausalLM(torch.nn.Module):
            def __init__(self, config):
                self.model = QwenModel(config)
                self.lm_head = Head(config)

            def set_dflash_layers_to_capture(self, layer_ids):
                self.model.layers_to_capture = [i + 1 for i in layer_ids]


        EntryClass = [AuxCaptureForCausalLM, FlashOnlyForCausalLM]
    """
    root = _tree(tmp_path, {"pkg/model_executor/model_runner.py": runner, "pkg/models/mixed.py": models})
    analysis = analyze(root)
    errors = sorted((f.code, f.class_name, f.member) for f in analysis.findings if str(f.severity) == "error")
    assert ("SC010", "AuxCaptureForCausalLM", "get_embed_and_head") in errors
    assert not any(name == "FlashOnlyForCausalLM" for _, name, _ in errors), errors
    (line,) = [f for f in analysis.findings if f.code == "SC011" and f.member == "get_embed_and_head"]
    assert ("FlashOnlyForCausalLM", ("get_embed_and_head",)) in [(c.class_name, c.members) for c in line.classes]
    assert "AuxCaptureForCausalLM" not in [c.class_name for c in line.classes]
    eagle = analysis.status_of(next(k for k in analysis.checked if k.qualname == "FlashOnlyForCausalLM"))
    assert eagle is not None and not eagle.algorithm("EAGLE").intent


def test_a_model_in_a_file_with_a_form_feed_is_read_at_the_parser_s_lines(tmp_path):
    """A form feed (or another break ``str.splitlines`` knows and the parser does not) above the model to copy
    moves no line: its definition is read where the parser put it, and the fix inserts that body."""
    qwen = QWEN.replace("import torch\n", "import torch  # \x0c page break\n", 1)
    assert "\x0c" in qwen
    root = _tree(tmp_path, {"pkg/models/gemma.py": GEMMA, "pkg/models/qwen.py": qwen})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "GemmaForCausalLM"]
    assert "implement it like `QwenForCausalLM.get_embed_and_head`" in finding.message
    ((before, after),) = _fix(root, analysis, [finding]).values()
    added = "".join(line for line in after.splitlines(keepends=True) if line not in before.splitlines(keepends=True))
    # the one method, not the model's next ones too (a line too early read the rest of the class as its body)
    assert added.strip() == ("def get_embed_and_head(self):\n        "
                             "return self.model.embed_tokens.weight, self.lm_head.weight")


# a decoder whose method requires the sizes, and two classes holding it: one that forgot the member, and one that
# implements it with the sizes optional (the graph runner's call passes none)
DECO = """
    import torch

    from pkg.models.qwen import Head


    class DecoModel(torch.nn.Module):
        def __init__(self, config):
            self.graph_sizes = []

        def set_graph_sizes(self, sizes):
            self.graph_sizes = sizes


    class DecoForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = DecoModel(config)
            self.lm_head = Head(config)


    class TwinForCausalLM(torch.nn.Module):
        def __init__(self, config):
            self.config = config
            self.model = DecoModel(config)
            self.lm_head = Head(config)

        def set_graph_sizes(self, sizes=None):
            self.model.graph_sizes = [1] if sizes is None else sizes


    EntryClass = [DecoForCausalLM, TwinForCausalLM]
"""
CALL_WITHOUT_SIZES = """
    class CudaGraphRunner:
        def capture(self):
            if self.model_runner.eagle_use_aux_hidden_state:
                self.model_runner.model.set_graph_sizes()
"""


def test_a_forward_to_a_method_the_call_leaves_arguments_out_of_is_replaced_by_a_sibling_s_body_that_fits(tmp_path):
    """SGLang 0.5.8's shape (issue 36, item 8: its CUDA-graph runner calls ``set_eagle3_layers_to_capture()``,
    which the decoder's version requires the layers of): forwarding would fail there too; a class holding the
    same decoder implements it with the argument optional, and that body is the fix."""
    root = _tree(tmp_path, {"pkg/models/deco.py": DECO, "pkg/model_executor/cuda_graph_runner.py": CALL_WITHOUT_SIZES})
    analysis = analyze(root)
    (finding,) = [f for f in analysis.findings if f.class_name == "DecoForCausalLM"
                  and f.member == "set_graph_sizes"]
    assert (finding.code, str(finding.severity), finding.delegate) == ("SC001", "error", "")
    assert "does not provide `set_graph_sizes`" in finding.message
    assert "implement it like `TwinForCausalLM.set_graph_sizes`" in finding.message
    changed = _fix(root, analysis, [finding])
    ((before, after),) = changed.values()
    assert only_adds_lines(before, after)
    assert "    def set_graph_sizes(self, sizes=None):\n" in after
    assert "self.model.set_graph_sizes(" not in after


def test_an_edit_gathers_again_only_the_worker_lines_whose_classes_it_changed(tmp_path):
    """An analysis after an edit reports the kept findings as they were where nothing they come from changed:
    the worker line's finding is gathered again only when one of its classes' records changed, and then only
    that class's entry is made again (a keystroke would otherwise gather every line's hundred classes); an edit
    that moves and re-checks nothing reports the same findings. Each is what a fresh analysis of the edited
    text reports."""
    llava = """
        import torch

        from pkg.models.qwen import QwenForCausalLM


        class LlavaForConditionalGeneration(torch.nn.Module):
            def __init__(self, config):
                self.language_model = QwenForCausalLM(config)


        EntryClass = LlavaForConditionalGeneration
    """
    plain = GEMMA.replace("        def set_embed_and_head(self, embed, head):\n            pass\n", "")
    root = _tree(tmp_path, {"pkg/models/gemma.py": plain, "pkg/models/phi.py": plain.replace("Gemma", "Phi"),
                            "pkg/models/llava.py": llava})
    llava_path, gemma_path = (str((root / f"pkg/models/{name}.py").resolve()) for name in ("llava", "gemma"))
    texts = {path: open(path).read() for path in (llava_path, gemma_path)}
    project = Project(root, load_config(root), use_cache=False)

    def edited(path: str, text: str):
        project.set_overlay(path, text)
        texts[path] = text
        fresh = Project(root, load_config(root), use_cache=False)
        for overlay in texts.items():
            fresh.set_overlay(*overlay)
        analysis = project.analyze()
        assert analysis.findings == fresh.analyze().findings
        return analysis

    first = project.analyze()
    (line,) = [f for f in first.findings if f.code == "SC011"]
    assert [c.class_name for c in line.classes] == ["GemmaForCausalLM", "PhiForCausalLM"]
    assert {f.class_name for f in first.findings if f.path == llava_path} == {"LlavaForConditionalGeneration"}

    moved = edited(llava_path, "# a new first line\n" + texts[llava_path])  # Llava's findings move down a line
    assert [f for f in moved.findings if f.code == "SC011"] == [line] and line in moved.findings
    assert next(f for f in moved.findings if f.code == "SC011") is line  # not gathered again
    assert edited(llava_path, texts[llava_path] + "# a comment\n").findings is moved.findings

    regathered = edited(gemma_path, "\n" + texts[gemma_path])  # Gemma's record moves: its line is new
    (again,) = [f for f in regathered.findings if f.code == "SC011"]
    assert again is not line and again.records[0].span.line == line.records[0].span.line + 1
    assert again.classes[0] is not line.classes[0] and again.classes[1] is line.classes[1]  # Phi's entry kept
