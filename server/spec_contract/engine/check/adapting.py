"""A model's body adapted to a class that holds the same parts under other names.

A candidate body (:mod:`spec_contract.engine.check.analogy`) reads its parts by their names in its own class
(``self.model.embed_tokens``, ``self.lm_head``, ``self.config.num_hidden_layers``). A class may hold the same
parts elsewhere, which its own ``__init__`` and ``forward`` say:

* its decoder in another attribute: the part ``forward`` runs for the hidden states (``hidden_states =
  self.language_model(…)``, or a routine handed it, ``general_mm_embed_routine(…,
  language_model=self.language_model)``) stands for the candidate's ``self.model``, when the class has no
  ``model``;
* a head tied to the embedding: the head ``forward`` hands every ``self.logits_processor(input_ids,
  hidden_states, <head>, …)`` call (``self.language_model.embed_tokens``) stands for ``self.lm_head``, when
  the class has no ``lm_head`` and the body only reads it (a body that writes the head would write the
  embedding twice);
* the decoder's configuration: a decoder built from ``config.text_config`` while ``self.config = config`` has
  its ``self.config.<x>`` at ``self.config.text_config.<x>``, when the candidate's own decoder is built from
  its ``config`` itself.

The adapted body is then fitted like any other (every path it uses must exist here), so a name mapped to a
part that lacks what the body reads is still refused, with the attribute that is missing.
"""

from __future__ import annotations

import ast
import textwrap

from spec_contract.engine.check.capture import is_self_attr, method_or_none
from spec_contract.engine.text import lines_with_ends

Renames = dict[str, str]  # the candidate's attribute after ``self.`` → this class's path for it


def decoder_attribute(forward: ast.FunctionDef | None) -> str | None:
    """The attribute of the part ``forward`` runs for the hidden states, when exactly one is."""
    if forward is None:
        return None
    found = set()
    for node in ast.walk(forward):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                node.targets[0].id == "hidden_states" and isinstance(node.value, ast.Call):
            call = node.value
            for part in [call.func, *(k.value for k in call.keywords)]:
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    found.add(part.attr)
    return found.pop() if len(found) == 1 else None


def tied_head(forward: ast.FunctionDef | None) -> str | None:
    """The ``self.<path>`` every ``self.logits_processor(…)`` call of ``forward`` hands as its head (its third
    argument), without ``self.``; None when they differ or it is not such a path."""
    if forward is None:
        return None
    heads = {ast.unparse(call.args[2]) for call in ast.walk(forward) if isinstance(call, ast.Call)
             and is_self_attr(call.func, "logits_processor") and len(call.args) >= 3}
    head = heads.pop() if len(heads) == 1 else ""
    return head[len("self."):] if head.startswith("self.") and head.replace(".", "").replace("_", "").isalnum() \
        else None


def decoder_config(init: ast.FunctionDef | None, attr: str) -> str | None:
    """What ``__init__`` builds ``self.<attr>`` from: ``""`` for the configuration itself (``X(config, …)``
    where ``self.config = config``), ``"text_config"`` for ``X(config.text_config, …)``; None otherwise."""
    if init is None:
        return None
    params = [a.arg for a in init.args.args[1:]]
    config = next((n.value.id for n in init.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                   and is_self_attr(n.targets[0], "config") and isinstance(n.value, ast.Name)), None)
    if config is None or config not in params:
        return None
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and is_self_attr(node.targets[0], attr) and \
                isinstance(node.value, ast.Call):
            call = node.value
            given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "config"), None)
            if isinstance(given, ast.Name) and given.id == config:
                return ""
            if isinstance(given, ast.Attribute) and isinstance(given.value, ast.Name) and given.value.id == config:
                return given.attr
            return None
    return None


def statement(text: str, line: int) -> ast.stmt | None:
    """The statement on 0-based ``line`` of ``text``, parsed alone (dedented; the lines after it added until it
    parses, for a call split over lines): a class's assignment read without parsing its methods."""
    lines = lines_with_ends(text)  # numbered as the parser numbers ``line``
    for end in range(line + 1, min(line + 12, len(lines)) + 1):
        try:
            body = ast.parse(textwrap.dedent("".join(lines[line:end]))).body
        except (SyntaxError, ValueError):
            continue
        return body[0] if len(body) == 1 else None
    return None


def built_from_own_config(model_line: ast.stmt | None, config_line: ast.stmt | None) -> bool:
    """Whether ``self.model = X(config, …)`` and ``self.config = config`` (each parsed alone): the decoder is
    built from the class's configuration itself."""
    if not (isinstance(config_line, ast.Assign) and isinstance(config_line.value, ast.Name) and
            isinstance(model_line, ast.Assign) and isinstance(model_line.value, ast.Call)):
        return False
    call = model_line.value
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "config"), None)
    return isinstance(given, ast.Name) and given.id == config_line.value.id


def renames(cls: ast.ClassDef, has: set[str]) -> Renames:
    """How the parts a candidate names are named in ``cls`` (its ``__init__`` and ``forward`` parsed), of the
    names it lacks (``has``: which of ``model`` and ``lm_head`` it provides); see the module docstring. The
    ``config`` entry is the decoder's configuration path, for :func:`adapt` to apply where the candidate's
    own decoder is built from its configuration itself."""
    forward, init = method_or_none(cls, "forward"), method_or_none(cls, "__init__")
    out: Renames = {}
    decoder = decoder_attribute(forward)
    if "model" not in has and decoder is not None and decoder != "model":
        out["model"] = decoder
        inner = decoder_config(init, decoder)
        if inner:
            out["config"] = f"config.{inner}"
    head = tied_head(forward)
    if "lm_head" not in has and head is not None and head != "lm_head":
        out["lm_head"] = head
    return out


def adapt(text: str, names: Renames) -> str:
    """The definition ``text`` with each ``self.<old>`` of ``names`` written as ``self.<new>``."""
    lines = [line.encode() for line in lines_with_ends(text)]
    spots = sorted(((n.lineno - 1, n.col_offset, n.end_col_offset, names[n.attr])
                    for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Attribute) and n.attr in names
                    and isinstance(n.value, ast.Name) and n.value.id == "self" and n.end_lineno == n.lineno),
                   reverse=True)
    for line, start, end, new in spots:
        assert end is not None
        lines[line] = lines[line][:start] + f"self.{new}".encode() + lines[line][end:]
    return b"".join(lines).decode()
