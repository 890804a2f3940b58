"""Language models no registry names (``resolve.roles``), checked for the members their wrapper hands them:
the worker holds the wrapper, whose forward lands in the held class, so a member the held class lacks crashes
the wrapper's run there. Each fixture is a small tree of our own, in the shape of SGLang's
``Qwen3NextForCausalLM`` handing ``set_eagle3_layers_to_capture`` to the decoder in ``self.model``."""

from __future__ import annotations

import textwrap

from engine_trees import WORKER, analyze, base_tree, findings
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_contract.engine.resolve.index import ClassKey


def chain(forward: str = "        return self.model.get_embed_and_head()\n", deep: bool = True) -> dict[str, str]:
    """A registered wrapper handing the worker's member to its decoder (``Decoder``, held in ``self.model``),
    which lacks it and holds in its own ``self.model`` a class that has it (``deep``) or nothing that does."""
    forward = "".join(f"    {line}\n" for line in forward.splitlines())  # to the template's indentation
    has = "\n        def get_embed_and_head(self):\n            return None, None\n" if deep else ""
    return {"pkg/models/chain.py": f"""
    class Stack:
        def __init__(self, config):
            self.config = config
{has}

    class Decoder:
        def __init__(self, config):
            self.model = Stack(config)


    class ChainForCausalLM:
        def __init__(self, config):
            self.model = Decoder(config)

        def get_embed_and_head(self):
{forward}
        def set_embed_and_head(self, embed, head):
            pass


    EntryClass = [ChainForCausalLM]
    """}


def test_a_held_decoder_that_lacks_a_handed_member_gets_the_error_naming_its_wrapper(tmp_path):
    """The wrapper has the member (every ``hasattr`` passes) and hands it to ``Decoder``, which lacks it and
    holds a stack that has it: the fix is a forward in ``Decoder``, so the one error is there, saying whose run
    crashes; the wrapper's forward to nowhere (SC013) is the same crash and is not said again."""
    analysis = analyze(base_tree(tmp_path, chain()))
    assert findings(analysis) == [
        ("SC001", "Decoder", "get_embed_and_head", ("target",), "model", "Stack", "error", ((WORKER, 5, False),))]
    message = analysis.findings[0].message
    assert message.startswith("`Decoder` does not forward `get_embed_and_head` to `self.model` (Stack)")
    assert message.endswith("(in a run of `ChainForCausalLM`, which hands `get_embed_and_head` to it in `self.model`)")


def test_a_forward_the_wrapper_tests_first_asks_nothing_of_the_held_decoder(tmp_path):
    """``if hasattr(self.model, m)`` with a fallback never crashes on a decoder without it: nothing at all."""
    forward = ("        if hasattr(self.model, \"get_embed_and_head\"):\n"
               "            return self.model.get_embed_and_head()\n"
               "        return None, None\n")
    assert findings(analyze(base_tree(tmp_path, chain(forward)))) == []


def test_a_held_decoder_nothing_can_fix_leaves_the_crash_its_error_on_the_wrapper(tmp_path):
    """Nothing below the decoder has the member and the held class shows no support of its own: its finding
    would be weaker than the crash, so the wrapper's SC013 error stays and the held class adds nothing."""
    analysis = analyze(base_tree(tmp_path, chain(deep=False)))
    assert [(f.code, f.class_name, f.severity) for f in analysis.findings] == [
        ("SC013", "ChainForCausalLM", "error")]
    assert ClassKey("pkg.models.chain", "Decoder") not in analysis.checked  # checked, but not a registered one


def test_the_status_model_covers_the_held_decoder_for_what_it_is_handed(tmp_path):
    """Hover and the reports read the status: the held decoder's run of EAGLE crashes on the handed member
    (forward it to ``self.model``), and no other contract member is asked of it."""
    analysis = analyze(base_tree(tmp_path, chain()))
    status = analysis.status_of(ClassKey("pkg.models.chain", "Decoder"))
    assert status is not None and [m.member for m in status.members] == ["get_embed_and_head"]
    (eagle,) = [a for a in status.algorithms if a.algorithm == "EAGLE"]
    assert (str(eagle.state), eagle.members) == ("crashes", ("get_embed_and_head",))
    assert [str(c.provision.how) for c in eagle.crashes] == ["forward"]
    assert "pkg.models.chain.Decoder" in {s.qualname for s in analysis.statuses()}


def test_an_edit_to_one_wrapper_checks_again_what_it_holds_and_keeps_the_rest(tmp_path):
    """After an edit, only the edited wrapper's check finds (and checks) what it holds again; the held class
    of the other wrapper keeps its check. Both come out as a fresh analysis of the edited tree gives them."""
    root = base_tree(tmp_path, {"pkg/models/a.py": chain()["pkg/models/chain.py"],
                                "pkg/models/b.py": chain()["pkg/models/chain.py"]})
    project = Project(root, load_config(root), use_cache=False)
    before = project.analyze()
    assert sorted(f.path.rsplit("/", 1)[-1] for f in before.findings) == ["a.py", "b.py"]  # each Decoder
    fixed = chain()["pkg/models/chain.py"].replace(  # a's decoder forwards the member to its stack
        "    class Decoder:\n", "    class Decoder:\n        def get_embed_and_head(self):\n"
        "            return self.model.get_embed_and_head()\n\n")
    path = str(root / "pkg/models/a.py")
    project.set_overlay(path, textwrap.dedent(fixed))
    after = project.analyze()
    fresh = Project(root, load_config(root), use_cache=False)
    fresh.set_overlay(path, textwrap.dedent(fixed))
    expected = fresh.analyze()
    assert [f.path.rsplit("/", 1)[-1] for f in after.findings] == ["b.py"]
    assert after.findings == expected.findings and after.held == expected.held
    assert {key.module for key in after.held} == {"pkg.models.a", "pkg.models.b"}
