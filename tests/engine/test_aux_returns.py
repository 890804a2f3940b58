"""Reading a model's forward for EAGLE-3's aux hidden states: each shape a forward between the runner and the
holder, or the holder's own, may take, and the answer (passes, drops, unknown). Written in the style of vLLM's
model files for these tests."""

from __future__ import annotations

import textwrap

import pytest
from spec_contract.engine.check.aux_returns import builds_pair, function_at, hands_on, returned_chain

HOPS = frozenset({("self", "language_model"), ("self", "language_model", "model")})


def forward(body: str, name: str = "forward", above: str = "") -> str:
    """A model file whose class ``Wrapper`` (after ``above``) has ``def name`` with ``body``."""
    return above + "class Wrapper(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n" \
        f"    def {name}(self, input_ids, positions, intermediate_tensors=None):\n" \
        + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


def read(body: str, name: str = "forward", above: str = ""):
    text = forward(body, name, above)
    fn = function_at(text, def_line(text, name))
    assert fn is not None
    return fn


def def_line(text: str, name: str) -> int:
    """0-based line of ``def name`` (where the summary's member span puts it)."""
    return next(i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith(f"def {name}("))


@pytest.mark.parametrize("body, kind", [
    ("return self.language_model(input_ids, positions)", "passes"),
    ("return self.language_model.model.forward(input_ids, positions)", "passes"),
    ("outputs = self.language_model.model(input_ids, positions)\nreturn outputs", "passes"),
    ("outputs = self.language_model(input_ids, positions)\nhidden = outputs\nreturn hidden", "passes"),
    ("""
     outputs = self.language_model(input_ids, positions)
     if isinstance(outputs, tuple):
         hidden, aux = outputs
         return hidden * 2, aux
     return outputs * 2
     """, "passes"),
    ("return self.language_model(input_ids, positions)[0]", "drops"),
    ("return self.norm(self.language_model.model(input_ids, positions))", "drops"),
    ("outputs = self.language_model(input_ids, positions)\nreturn outputs.last_hidden_state", "drops"),
    ("hidden, _ = self.language_model(input_ids, positions)\nreturn hidden", "drops"),
    ("""
     hidden = self.language_model.model(input_ids, positions)
     if intermediate_tensors is not None:
         return IntermediateTensors({"hidden_states": hidden})
     hidden = hidden / self.scale
     return hidden
     """, "drops"),
    # what the reading cannot see through, or a forward that calls none or both of the hops
    ("return self._decode(input_ids, positions)", "unknown"),
    ("hidden = self.language_model(input_ids, positions)\nreturn self._finish(hidden, other)", "drops"),
    ("hidden = self._decode(input_ids)\nreturn hidden[0]", "unknown"),
    ("a = self.language_model(input_ids, positions)\nb = self.language_model.model(a)\nreturn b[0]", "unknown"),
    ("outputs = self.language_model(input_ids, positions)\nreturn other", "unknown"),
])
def test_a_forward_between_the_runner_and_the_holder(body, kind):
    assert hands_on(read(body), HOPS).kind == kind


def test_a_dropping_return_is_named_with_its_line_in_the_file():
    above = '"""A model file."""\n\nimport torch.nn as nn\n\n\n'
    verdict = hands_on(read("hidden = self.language_model(input_ids, positions)\nreturn hidden[0]", above=above), HOPS)
    assert (verdict.kind, verdict.text, verdict.line) == ("drops", "return hidden[0]", 11)  # 0-based


@pytest.mark.parametrize("body, kind", [
    ("""
     hidden, residual, aux = self.embed(input_ids), None, []
     for layer in self.layers:
         hidden, residual = layer(positions, hidden, residual)
     if aux:
         return hidden, aux
     return hidden
     """, "passes"),
    ("""
     hidden, residual = self.embed(input_ids), None
     for layer in self.layers:
         hidden, residual = layer(positions, hidden, residual)
     if not self.last_rank:
         return IntermediateTensors({"hidden_states": hidden, "residual": residual})
     hidden = hidden + residual
     return hidden
     """, "drops"),
    ("hidden, _ = self.norm(self.embed(input_ids), None)\nreturn hidden", "drops"),
    ("return super().forward(input_ids, positions, intermediate_tensors)", "unknown"),
    ("hidden = self._run_layers(input_ids)\nreturn hidden", "unknown"),
    ("return self.norm(self.embed(input_ids))", "unknown"),
])
def test_the_holders_own_forward(body, kind):
    assert builds_pair(read(body)).kind == kind


@pytest.mark.parametrize("body, chain", [
    ("return self", ("self",)),
    ("return self.language_model", ("self", "language_model")),
    ("if self.cached is None:\n    return self.text\nreturn self.text", ("self", "text")),
    ("if self.cached is None:\n    return self.text\nreturn self.vision", None),
    ("return _language_model_of(self)", None),
])
def test_what_a_get_language_model_override_returns(body, chain):
    assert returned_chain(read(body, "get_language_model")) == chain


def test_a_method_that_does_not_parse_alone_says_nothing():
    # a string at column 0 inside the method ends the cut early: the reading gives up rather than guess
    text = forward("return self.language_model(input_ids)[0]").replace(
        "        return", '        doc = """\nleft at column 0\n"""\n        return')
    assert function_at(text, def_line(text, "forward")) is None
    assert function_at("x = 1\n", 0) is None  # not a def
    assert function_at("x = 1\n", 5) is None  # past the end


def test_a_multi_line_signature_is_part_of_the_cut():
    text = forward("return self.language_model(input_ids)[0]").replace(
        "    def forward(self, input_ids, positions, intermediate_tensors=None):\n",
        "    def forward(\n        self,\n        input_ids,\n    ) -> torch.Tensor:\n")
    fn = function_at(text, def_line(text, "forward"))
    assert fn is not None and hands_on(fn, HOPS).kind == "drops"


def test_lines_are_counted_as_python_counts_them():
    # a form feed (a page break some files keep between sections) is no line break for Python
    text = "x = 1\f\n\n" + forward("return self.language_model(input_ids)[0]")
    fn = function_at(text, 6)
    assert fn is not None and fn.name == "forward" and fn.lineno == 7
