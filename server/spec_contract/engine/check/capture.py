"""EAGLE-3's decoder capture, where a class's decoder does not record aux hidden states yet.

``set_eagle3_layers_to_capture`` (``self.capture_aux_hidden_states = True``, ``self.model.layers_to_capture =
[…]``) changes nothing on a class whose ``forward`` never reads the flag and whose decoder never reads the
list: that body alone would only move the crash (the draft then receives no aux hidden states). Upstream
enabled such classes (SGLang 0.5.9's ``BailingMoEForCausalLM``, 0.5.12's ``Gemma3ForCausalLM``) with the
same three-part change every time, which this module plans as insertions into the source:

* the decoder: ``self.layers_to_capture = []`` at the end of ``__init__``; in ``forward``,
  ``aux_hidden_states = []`` before the layer loop, ``if i in self.layers_to_capture:
  aux_hidden_states.append(<expression>)`` first in each loop body (a ``for layer in self.layers`` loop
  becomes ``for i, layer in enumerate(self.layers)``), and before the final ``return hidden_states``
  ``if aux_hidden_states: return hidden_states, aux_hidden_states``;
* the class: ``self.capture_aux_hidden_states = False`` at the end of ``__init__``; in ``forward``, after
  ``hidden_states = self.<decoder>(…)`` (or a routine handed it, ``general_mm_embed_routine(…,
  language_model=self.model)``), the unpacking (``if self.capture_aux_hidden_states: hidden_states,
  aux_hidden_states = hidden_states``), and ``aux_hidden_states=aux_hidden_states`` passed to each
  ``self.logits_processor(…)`` call;
* the member itself, the candidate's body (:mod:`spec_contract.engine.check.analogy`).

A decoder that captures already (it sets ``layers_to_capture``) needs only the class's part.

``<expression>`` is what a decoder that captures already records (``hidden_states + residual``), taken only
when every name it uses is bound in this decoder's ``forward``. Only the canonical shapes are planned; any
other shape is declined with the reason, which the finding's message then names. The plan is computed from
``ast`` positions on the file's text, so the analysis (does the fix apply?) and the edit (what it inserts)
read one set of rules: the edit re-plans on the text it edits.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from spec_contract.engine.text import LINE_BREAK, lines_with_ends

_INDEX = "i"
T = TypeVar("T")


@dataclass(frozen=True)
class Insert:
    """Text to insert at a 0-based (line, column) of the original file."""

    line: int
    col: int
    text: str


class Declined(ValueError):
    """The shape is not one the change is planned for: the message says what is missing."""


@functools.lru_cache(maxsize=4)
def _lines(text: str) -> tuple[str, ...]:
    """The text's lines with their endings (memoised: the check reads a class, its decoder and both plans from
    the same one or two files in a row, so each file is cut into lines once, not four times)."""
    return tuple(lines_with_ends(text))


def class_node(text: str, line: int) -> ast.ClassDef:
    """The top-level class whose ``class`` keyword is on 0-based ``line``, parsed alone (its extent read from
    the indentation), with the file's line numbers."""
    lines = _lines(text)
    if line >= len(lines) or not lines[line].startswith("class "):
        raise Declined("the class is not defined at the top level of its module")
    end = line + 1
    while end < len(lines):
        stripped = lines[end].strip()
        if stripped and not stripped.startswith("#") and not lines[end][0].isspace():
            break
        end += 1
    try:
        tree = ast.parse("\n" * line + "".join(lines[line:end]))  # blank lines first: the file's line numbers
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise Declined("the class does not parse") from err
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.ClassDef):
        raise Declined("the class does not parse")
    return node


def class_methods(text: str, name: str, defs: dict[str, list[int]]) -> ast.ClassDef:
    """The class ``name`` holding only the methods whose ``def`` lines (0-based) ``defs`` gives, each parsed
    alone at its own indentation, with the file's lines and columns: what the plans ask of a class (its
    ``__init__`` and ``forward``), at a fraction of parsing the whole class."""
    lines = _lines(text)
    body: list[ast.stmt] = []
    for line in sorted(n for found in defs.values() for n in found):
        if line >= len(lines):
            raise Declined(f"`{name}` is not where its summary puts it")
        indent = _indent(lines, line)
        end = _extent(lines, line + 1, len(indent))
        # a signature's closing ``) -> T:`` line stands at the def's indentation: the lines before it leave its
        # bracket open (no statement starts with ``)``), so the lines up to the next such line are tried first,
        # the extent the retries below reach second (black writes most signatures so: each parse tried and
        # failed costs about as much as one that succeeds)
        tree = _parsed(lines, line, _extent(lines, end + 1, len(indent)), indent) \
            if end < len(lines) and lines[end].lstrip().startswith(")") else None
        for _ in range(8 if tree is None else 0):  # each try: to the next line at the def's indentation or less
            end = _extent(lines, end, len(indent))
            tree = _parsed(lines, line, end, indent)
            if tree is not None:
                break
            end += 1
        if tree is None:
            raise Declined(f"a method of `{name}` does not parse alone")
        fn = tree.body[0].body[0] if indent and isinstance(tree.body[0], ast.ClassDef) else tree.body[0]
        if not isinstance(fn, ast.FunctionDef):
            raise Declined(f"a method of `{name}` does not parse alone")
        body.append(fn)
    return ast.ClassDef(name=name, bases=[], keywords=[], body=body, decorator_list=[])


def _extent(lines: Sequence[str], end: int, width: int) -> int:
    """The first line from ``end`` on indented ``width`` or less that is not blank or a comment (or the end)."""
    while end < len(lines):
        line = lines[end]
        code = line.lstrip()
        if code and code[0] != "#" and len(line) - len(line.lstrip(" \t")) <= width:
            break
        end += 1
    return end


def _parsed(lines: Sequence[str], line: int, end: int, indent: str) -> ast.Module | None:
    """``lines[line:end]`` parsed alone (in a class when indented), with the file's line numbers: blank lines
    first (cheaper than renumbering every node after); None when they do not parse."""
    try:
        return ast.parse("\n" * (line - 1) + "class _:\n" + "".join(lines[line:end]) if indent
                         else "\n" * line + "".join(lines[line:end]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def method_or_none(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method ``name`` when ``cls``'s own body defines it once."""
    found = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[0] if len(found) == 1 else None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    found = method_or_none(cls, name)
    if found is None:
        raise Declined(f"`{cls.name}` does not define `{name}` once in its own body")
    return found


@functools.lru_cache(maxsize=512)
def _walk(fn: ast.FunctionDef) -> tuple[ast.AST, ...]:
    """The nodes of ``fn``'s own body (not of functions or classes defined in it, nor the ``Load`` and ``Store``
    contexts of its names, which no plan asks for: a third of the nodes); memoised, as the plans ask each
    forward several questions and the classes parsed are memoised by their analysis."""
    out: list[ast.AST] = []
    pending: list[ast.AST] = list(fn.body)
    while pending:
        node = pending.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            for slot in node._fields:  # ``ast.iter_child_nodes``'s order, without a generator per node
                if slot == "ctx":
                    continue
                child = getattr(node, slot, None)
                if isinstance(child, ast.AST):
                    pending.append(child)
                elif isinstance(child, list):
                    pending.extend(c for c in child if isinstance(c, ast.AST))
    return tuple(out)


@functools.lru_cache(maxsize=512)
def _named(fn: ast.FunctionDef) -> frozenset[str]:
    """The attribute and variable names ``fn``'s own body uses (memoised: each plan asks after several)."""
    return frozenset(n.attr if isinstance(n, ast.Attribute) else n.id for n in _walk(fn)
                     if isinstance(n, (ast.Attribute, ast.Name)))


def _mentions(lines: Sequence[str], fn: ast.FunctionDef, attr: str) -> bool:
    """Whether ``fn``'s own body uses the name ``attr``, its text (``lines``, the file's) asked first: most
    functions asked never hold the word, and reading their lines costs no walk of their nodes (an ``__init__``
    is walked for nothing else)."""
    return attr in "".join(lines[fn.lineno - 1:fn.end_lineno]) and attr in _named(fn)


def is_self_attr(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _bound(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    return names | {n.id for n in _walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def recorded(cls: ast.ClassDef) -> list[ast.expr]:
    """What a decoder that captures records: ``E`` of each ``aux_hidden_states.append(E)`` under an ``if … in
    self.layers_to_capture`` in its ``forward``."""
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        return []
    out = []
    for node in _walk(forward):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
                any(is_self_attr(c, "layers_to_capture") for c in node.test.comparators):
            for stmt in node.body:
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "append" and len(call.args) == 1 and not call.keywords:
                    out.append(call.args[0])
    return out


def fitting_expression(decoder: ast.ClassDef, models: Iterable[tuple[ast.expr, T]]) -> tuple[str, T | None]:
    """Of the models' recorded expressions (each with its decoder), the first whose names the decoder's
    ``forward`` binds; else a decoder with no ``residual`` of its own records ``hidden_states`` (as upstream's
    Gemma 3 does), modelled on no decoder (None). ``models`` is read only up to the first that fits (each
    read may parse a decoder)."""
    bound = _bound(_method(decoder, "forward"))
    seen = []
    for expr, like in models:
        if {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} <= bound:
            return ast.unparse(expr), like
        seen.append(expr)
    if "residual" not in bound and seen:  # no residual stream of its own: the layer's input is the whole state
        return "hidden_states", None
    listed = ", ".join(sorted({f"`{ast.unparse(e)}`" for e in seen})) or "nothing"
    raise Declined(f"no decoder that captures records a value `{decoder.name}.forward` has (they record {listed})")


def _indent(lines: Sequence[str], line: int) -> str:
    text = lines[line]
    return text[: len(text) - len(text.lstrip(" \t"))]


def _unit(lines: Sequence[str], fn: ast.FunctionDef) -> str:
    """One level of indentation as ``fn`` writes it (its body's indentation less its own)."""
    body, own = _indent(lines, fn.body[0].lineno - 1), _indent(lines, fn.lineno - 1)
    return body[len(own):] if body.startswith(own) and len(body) > len(own) else "    "


def _block(lines: Sequence[str], before: ast.stmt, stmts: list[str], nl: str, unit: str) -> Insert:
    """``stmts`` (lines relative to the statement's indentation, a leading tab level per ``\\t``) inserted as
    whole lines before ``before``."""
    indent = _indent(lines, before.lineno - 1)
    text = "".join(indent + s.replace("\t", unit) + nl for s in stmts)
    return Insert(before.lineno - 1, 0, text)


def _after(lines: Sequence[str], fn: ast.FunctionDef, stmt: str, nl: str) -> Insert:
    """``stmt`` as a line of its own after the last statement of ``fn``'s body."""
    last = fn.body[-1]
    assert last.end_lineno is not None
    end = last.end_lineno
    while end < len(lines) and lines[end - 1].rstrip("\r\n").rstrip().endswith("\\"):
        end += 1
    return Insert(end, 0, _indent(lines, fn.body[0].lineno - 1) + stmt + nl)


def _newline(text: str) -> str:
    match = LINE_BREAK.search(text)
    return match.group(0) if match else "\n"


def _layer_loop(node: ast.For) -> tuple[str | None, ast.expr | None] | None:
    """For a loop over the decoder's layers: (its index variable, or None when there is none yet, and the
    target to prefix with one); None for any other statement."""
    if node.orelse:
        return None
    it = node.iter
    if is_self_attr(it, "layers") and isinstance(node.target, ast.Name):
        return None, node.target  # ``for layer in self.layers``
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and not it.keywords:
        if it.func.id == "enumerate" and len(it.args) == 1 and is_self_attr(it.args[0], "layers") and \
                isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2 and \
                isinstance(node.target.elts[0], ast.Name):
            return node.target.elts[0].id, None
        if it.func.id == "range" and isinstance(node.target, ast.Name) and (
                [a.attr for a in it.args if isinstance(a, ast.Attribute)] == ["start_layer", "end_layer"]
                or len(it.args) == 1 and isinstance(it.args[0], ast.Call)
                and isinstance(it.args[0].func, ast.Name) and it.args[0].func.id == "len"
                and len(it.args[0].args) == 1 and is_self_attr(it.args[0].args[0], "layers")):
            return node.target.id, None
    return None


def _final(body: list[ast.stmt]) -> ast.Return | None:
    """The ``return hidden_states`` a forward ends in: its last statement, or the last of the ``else`` that
    ends it (``if not self.pp_group.is_last_rank: return PPProxyTensors(…) else: …; return hidden_states``)."""
    last = body[-1] if body else None
    if isinstance(last, ast.If) and last.orelse:
        return _final(last.orelse)
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == "hidden_states":
        return last
    return None


def _started(forward: ast.FunctionDef) -> ast.Assign | None:
    """``aux_hidden_states = []`` in the forward's own statements when the list is only handed on (to a layer
    that fills it), never appended to or returned here: a list the capture can use."""
    starts = [s for s in forward.body if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == "aux_hidden_states"
              and isinstance(s.value, ast.List) and not s.value.elts]
    if len(starts) != 1:
        return None
    for node in _walk(forward):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "aux_hidden_states":
            return None  # ``aux_hidden_states.append(…)``: it captures already
        if isinstance(node, ast.Return) and node.value is not None and any(
                isinstance(n, ast.Name) and n.id == "aux_hidden_states" for n in ast.walk(node.value)):
            return None
        if isinstance(node, ast.Name) and node.id == "aux_hidden_states" and isinstance(node.ctx, ast.Store) and \
                node is not starts[0].targets[0]:
            return None
    return starts[0]


def decoder_plan(text: str, cls: ast.ClassDef, expression: str) -> list[Insert]:
    """The decoder's part of the change (see the module docstring), or :class:`Declined`."""
    lines = _lines(text)
    nl = _newline(text)
    init, forward = _method(cls, "__init__"), _method(cls, "forward")
    name = f"`{cls.name}.forward`"
    started = _started(forward)  # ``aux_hidden_states = []`` for a capture of another kind (a layer hook)
    if _mentions(lines, init, "layers_to_capture") or _mentions(lines, forward, "layers_to_capture") or \
            (_mentions(lines, forward, "aux_hidden_states") and started is None):
        raise Declined(f"{name} already handles `layers_to_capture` or `aux_hidden_states` in a way of its own")
    last = _final(forward.body)
    if last is None:
        raise Declined(f"{name} does not end in `return hidden_states`, beside which the captured states go")
    loops = [(node, shape) for node in _walk(forward) if isinstance(node, ast.For)
             and (shape := _layer_loop(node)) is not None]
    if not loops:
        raise Declined(f"{name} has no loop over `self.layers` (or `range(self.start_layer, self.end_layer)`) "
                       "to capture in")
    if _INDEX in _bound(forward) and any(index is None for _, (index, _) in loops):
        raise Declined(f"{name} already uses the name `{_INDEX}` that the capture's layer index would take")
    unit = _unit(lines, forward)
    first = min(node.lineno for node, _ in loops)
    top = next(s for s in forward.body if s.lineno <= first <= (s.end_lineno or s.lineno))
    plan = [_after(lines, init, "self.layers_to_capture = []", nl)]
    if started is None:
        plan.append(_block(lines, top, ["aux_hidden_states = []"], nl, unit))
    elif started.lineno > first:
        raise Declined(f"{name} starts its `aux_hidden_states` list after the layer loop")
    for node, (index, target) in loops:
        body = node.body[0]
        if body.lineno == node.lineno:
            raise Declined(f"a layer loop of {name} has its body on the `for` line")
        if target is not None:  # ``for layer in self.layers`` → ``for i, layer in enumerate(self.layers)``
            assert node.iter.end_lineno is not None and node.iter.end_col_offset is not None
            plan += [Insert(target.lineno - 1, target.col_offset, f"{_INDEX}, "),
                     Insert(node.iter.lineno - 1, node.iter.col_offset, "enumerate("),
                     Insert(node.iter.end_lineno - 1, node.iter.end_col_offset, ")")]
        plan.append(_block(lines, body, [f"if {index or _INDEX} in self.layers_to_capture:",
                                          f"\taux_hidden_states.append({expression})"], nl, unit))
    plan.append(_block(lines, last, ["if aux_hidden_states:", "\treturn hidden_states, aux_hidden_states"], nl, unit))
    return plan


def model_plan(text: str, cls: ast.ClassDef, delegate: str) -> list[Insert]:
    """The class's part of the change (see the module docstring), or :class:`Declined`."""
    lines = _lines(text)
    nl = _newline(text)
    init, forward = _method(cls, "__init__"), _method(cls, "forward")
    name = f"`{cls.name}.forward`"
    if _mentions(lines, init, "capture_aux_hidden_states") or _mentions(lines, forward, "capture_aux_hidden_states") \
            or _mentions(lines, forward, "aux_hidden_states"):
        raise Declined(f"{name} already handles `capture_aux_hidden_states` or `aux_hidden_states` in a way of its own")
    calls = [n for n in _walk(forward) if isinstance(n, ast.Call) and is_self_attr(n.func, "logits_processor")]
    if not calls:
        raise Declined(f"{name} makes no `self.logits_processor(…)` call to hand the captured states to")
    decoded = [s for s in _walk(forward) if isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == "hidden_states"
               and isinstance(s.value, ast.Call) and (is_self_attr(s.value.func, delegate) or any(
                   is_self_attr(k.value, delegate) for k in s.value.keywords))]
    if len(decoded) != 1:
        raise Declined(f"{name} does not assign `hidden_states = self.{delegate}(…)` (or a call handed "
                       f"`self.{delegate}`) once, after which the captured states are unpacked")
    after = decoded[0]
    assert after.end_lineno is not None
    if any(c.lineno <= after.end_lineno for c in calls):
        raise Declined(f"{name} calls `self.logits_processor` before it runs `self.{delegate}`")
    if len(lines) <= after.end_lineno or lines[after.end_lineno - 1].rstrip("\r\n").rstrip().endswith("\\"):
        raise Declined(f"{name} continues the `self.{delegate}(…)` line with a backslash")
    indent = _indent(lines, after.lineno - 1)
    unit = _unit(lines, forward)
    plan = [_after(lines, init, "self.capture_aux_hidden_states = False", nl),
            Insert(after.end_lineno, 0, "".join(indent + s + nl for s in (
                "aux_hidden_states = None", "if self.capture_aux_hidden_states:",
                unit + "hidden_states, aux_hidden_states = hidden_states")))]
    for call in calls:
        if len(call.args) != 4 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or \
                not (isinstance(call.args[1], ast.Name) and call.args[1].id == "hidden_states"):
            raise Declined(f"a `self.logits_processor(…)` call of {name} is not the canonical "
                           "`(input_ids, hidden_states, head, forward_batch)` that `aux_hidden_states` follows")
        last = call.args[-1]
        assert last.end_lineno is not None and last.end_col_offset is not None
        plan.append(Insert(last.end_lineno - 1, last.end_col_offset, ", aux_hidden_states=aux_hidden_states"))
    return plan
