"""Odd but valid code that once made the analysis hang, run for minutes, crash or drop uses without a word.

Each shape is scaled past where the old code took hours (or raised ``RecursionError``), and the command runs in a
process of its own with a limit no machine needs, so a shape that hangs again fails its test instead of hanging
the suite. Each test also checks that the analysis still says what it says of the small shape.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from engine_trees import base_tree, line_of

SHAPE = "pkg/speculative/shape.py"


def _run(root: Path, command: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "spec_contract", command, str(root), "--format", "json",
                           "--no-cache"], capture_output=True, text=True, timeout=600, check=False)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return json.loads(done.stdout)


def _draft_members(root: Path) -> dict[str, list[int]]:
    """The draft role's contract members, each with the lines of the shape file that call it."""
    return {entry["method"]: [site["line"] for site in entry["call_sites"] if site["path"] == SHAPE]
            for entry in _run(root, "contract")["contract"] if entry["role"] == "draft"}


def _worker(tmp_path: Path, step: str, init: str = "") -> Path:
    text = textwrap.dedent("""
        class Shape:
            def __init__(self, draft_model_runner):
                self.draft_model_runner = draft_model_runner
        {init}
            def step(self, a, b, c):
        {step}
    """).format(init=textwrap.indent(init, "    "), step=textwrap.indent(step, "        "))
    return base_tree(tmp_path, {SHAPE: text})


def test_a_conditional_expression_nested_in_its_own_test(tmp_path):
    """``if (a if (b if (…) else …) else …):``: the formula of a conditional expression holds its test twice, so read
    as a tree it doubled per level (2**40 parts here). Past a size no test that selects an algorithm comes near,
    it selects nothing, and the use under it is still the draft model's."""
    test = "self.f40"
    for i in range(39, -1, -1):
        test = f"(self.f{i} if {test} else self.g{i})"
    root = _worker(tmp_path, f"if {test}:\n    self.draft_model_runner.model.fused_step()\n")
    assert _draft_members(root)["fused_step"] == [line_of(root, SHAPE, "fused_step")]


def test_a_long_chain_of_conditional_arms_given_to_a_flag(tmp_path):
    """``self.fast = f0 if c0 else f1 if c1 else …`` nests as deep as it is long: reading the flag's formula
    recursed past the interpreter's depth at 340 arms, and the command died with a traceback."""
    arms = " ".join(f"a{i} if c{i} else" for i in range(600)) + " None"
    init = f"\ndef configure(self, {', '.join(f'a{i}, c{i}' for i in range(600))}):\n    self.fast = {arms}\n"
    root = _worker(tmp_path, "if self.fast:\n    self.draft_model_runner.model.fused_step()\n", init)
    assert _draft_members(root)["fused_step"] == [line_of(root, SHAPE, "fused_step")]


def test_every_arm_of_a_long_elif_chain_is_read(tmp_path):
    """A thousand ``elif`` arms: each arm is the ``else`` of the one before, and walking them by recursion passed
    the interpreter's depth at about 320, dropping every later arm's uses without a word."""
    arms = "".join(f"{'if' if i == 0 else 'elif'} a == {i}:\n    self.draft_model_runner.model.step_{i}()\n"
                   for i in range(1000))
    root = _worker(tmp_path, arms)
    first = line_of(root, SHAPE, "step_0()")
    members = _draft_members(root)
    assert [members.get(f"step_{i}") for i in range(1000)] == [[first + 2 * i] for i in range(1000)]


def _ladder(levels: int) -> str:
    """``A0``, ``B0``, then ``A{k}(A{k-1}, B{k-1})`` and ``B{k}(A{k-1}, B{k-1})``: 2**levels paths from the top to
    ``A0``, which has the members."""
    lines = ["class A0:",
             "    def get_embed_and_head(self):\n        return None, None\n",
             "    def set_embed_and_head(self, embed, head):\n        pass\n",
             "class B0:\n    pass\n"]
    lines += [f"class {name}{k}(A{k - 1}, B{k - 1}):\n    pass\n" for k in range(1, levels + 1) for name in "AB"]
    return "\n".join(lines + [f"EntryClass = [A{levels}, B{levels // 2}]\n"])


def test_a_ladder_of_diamonds_is_walked_once_per_class(tmp_path):
    """Each class's MRO was walked again on every path to it: 2**n walks for a ladder n diamonds high (an hour at
    25). The top class inherits the members from ``A0``: no finding."""
    root = base_tree(tmp_path, {"pkg/models/ladder.py": _ladder(40)})
    assert _run(root, "check")["findings"] == []


def test_a_use_after_a_long_word_on_a_line_that_is_not_ascii(tmp_path):
    """A use's column on a line that is not ASCII is read back from its end to the start of its name; read with a
    pattern searched forwards, it was tried at every place in a run of word characters before it (quadratic: a
    minute and a half at 80,000)."""
    key = "deadbeef" * 40_000
    root = _worker(tmp_path, f'key = "{key}"; self.draft_model_runner.model.fused_step(key)  # clé\n')
    assert _draft_members(root)["fused_step"] == [line_of(root, SHAPE, "fused_step")]


def test_a_long_chain_of_helpers_each_called_past_a_test(tmp_path):
    """``_h0`` calls ``_h1`` past a test, ``_h1`` calls ``_h2``, …, written callee first: what each is entered past
    was read again whenever its caller's set grew (cubic: 100 s at 2,000 helpers). The first helper's use is still
    the draft model's (the flow follows the model a few calls deep, not four thousand)."""
    helpers = "".join(f"\ndef _h{i}(self, model):\n    model.m{i % 50}()\n    if self.c{i}:\n"
                      f"        {f'self._h{i + 1}(model)' if i + 1 < 4000 else 'pass'}\n" for i in range(3999, -1, -1))
    root = _worker(tmp_path, "if self.start:\n    self._h0(self.draft_model_runner.model)\n", helpers)
    assert _draft_members(root)["m0"] == [line_of(root, SHAPE, "def _h0(") + 1]
