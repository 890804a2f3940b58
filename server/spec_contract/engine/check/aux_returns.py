"""Whether a model's ``forward`` hands on the auxiliary hidden states EAGLE-3 asks for.

Once a run sets the aux layers, vLLM's holder (the decoder that is an ``EagleModelMixin``) returns
``(hidden_states, aux_hidden_states)`` and the model runner unpacks that pair from the top-level model's
output. So every ``forward`` between the runner and the holder must return what it got from the model it
calls as it is (or build a pair itself), and the holder's own ``forward`` must build the pair. A forward that
returns only the hidden states breaks the unpack at the first forward of the run.

The engine's summaries keep no function bodies of model classes, so this reads the method's own text (cut
from the file at the line its member span gives) with ``ast``, and walks it once (:class:`_Body`): a decoder's
forward is long, and each question below used to walk it again. Every answer is one of three: *passes*,
*drops* (with the return that drops), or *unknown* (a helper call, a name bound from a call the reading cannot
see into): only *drops* is ever reported.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache

Chain = tuple[str, ...]
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# the pipeline-parallel path of a non-last rank hands its tensors on: never the run's output
_PIPELINE = "IntermediateTensors"


@dataclass(frozen=True)
class Verdict:
    kind: str  # "passes", "drops" or "unknown"
    line: int = -1  # 0-based line in the file of the return that drops
    text: str = ""  # that return, as written
    hop: Chain = ()  # the call whose result passes on (``("self", "language_model")``), for "passes"


UNKNOWN = Verdict("unknown")


# Bounded: each entry keeps a file's text alive, and an editor buffer is a new text at every keystroke
@lru_cache(maxsize=64)
def function_at(text: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` on ``line`` (0-based; the summary's member span) and its body, cut from the file by
    indentation and parsed alone, with line numbers of ``text``: a model class is often hundreds of lines and
    only one or two of its methods are asked about. None when it does not parse alone."""
    lines = _lines(text)
    if not 0 <= line < len(lines):
        return None
    # parsed behind as many blank lines as precede it, so its nodes carry the file's line numbers as parsed
    # (renumbering them after walked every node of a long forward once more)
    source = "\n" * line + textwrap.dedent("\n".join(lines[line:_block_end(lines, line, _indent(lines[line]))]))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # a string or bracket past the cut: say nothing rather than guess
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


@lru_cache(maxsize=16)
def _lines(text: str) -> list[str]:
    """The file's lines as Python counts them (``str.splitlines`` also breaks at form feeds and other
    separators, which would move every line number below one); a plain split when only ``\\n`` ends them."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after the statement that starts at ``start`` with ``indent``: the first line past it that is
    code at that indentation or less (a closing bracket there still belongs to its header)."""
    end = start + 1
    while end < len(lines):
        stripped = lines[end].lstrip()
        if stripped and _indent(lines[end]) <= indent and not stripped.startswith(("#", ")", "]", "}")):
            break
        end += 1
    return end


def _chain(node: ast.AST) -> Chain:
    """``self.language_model.model`` → ("self", "language_model", "model"); () for anything else."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(names))
    return ()


def _hop_of(node: ast.AST | None, hops: frozenset[Chain]) -> Chain | None:
    """The hop ``node`` calls (``self.model(...)`` or ``self.model.forward(...)``), if it is such a call."""
    if not isinstance(node, ast.Call):
        return None
    chain = _chain(node.func)
    if chain in hops:
        return chain
    if chain[-1:] == ("forward",) and chain[:-1] in hops:
        return chain[:-1]
    return None


def _is_pipeline(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _chain(node.func)[-1:] == (_PIPELINE,)


@dataclass(frozen=True, eq=False)
class _Body:
    """What the questions below read of one function, gathered in one walk of it (nested functions
    included, as a walk sees them, except for the returns, which are the function's own)."""

    calls: tuple[ast.Call, ...]
    words: frozenset[str]  # the names, attributes, keywords and parameters it speaks of
    returns: tuple[ast.Return, ...]  # its own returns of a value (``return None`` aside), in line order
    # name → (value, unpacked) of every plain assignment to it; ``unpacked`` when the name is one element
    # of a tuple target (``hidden_states, _ = ...``)
    bindings: dict[str, list[tuple[ast.expr, bool]]]
    blocks: tuple[list[ast.stmt], ...]  # every statement list (bodies, else branches, handlers)


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@lru_cache(maxsize=256)  # a base class's forward is asked about for each of its subclasses
def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> _Body:
    calls: list[ast.Call] = []
    words: set[str] = set()
    returns: list[ast.Return] = []
    bindings: dict[str, list[tuple[ast.expr, bool]]] = {}
    blocks: list[list[ast.stmt]] = []
    stack: list[tuple[ast.AST, bool]] = [(fn, False)]  # (node, inside a function nested in ``fn``)
    while stack:
        node, nested = stack.pop()
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, (ast.keyword, ast.arg)):
            if node.arg:
                words.add(node.arg)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bindings.setdefault(target.id, []).append((node.value, False))
                elif isinstance(target, (ast.Tuple, ast.List)):
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            bindings.setdefault(element.id, []).append((node.value, True))
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name) and node.value is not None:
                bindings.setdefault(node.target.id, []).append((node.value, False))
        elif isinstance(node, ast.Return):
            if not nested and node.value is not None \
                    and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                returns.append(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                blocks.append(block)
        inner = nested or (node is not fn and isinstance(node, _NESTED))
        # the children as ``ast.iter_child_nodes`` gives them, without its two generators per node
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, ast.AST):
                        stack.append((child, inner))
            elif isinstance(value, ast.AST):
                stack.append((value, inner))
    return _Body(tuple(calls), frozenset(words), tuple(sorted(returns, key=lambda r: r.lineno)), bindings,
                 tuple(blocks))


def _deciding_returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Return, ast.expr]]:
    """The returns a verdict reads, with their values: a pipeline stage's hand-on decides nothing."""
    return [(ret, ret.value) for ret in _body(fn).returns if ret.value is not None and not _is_pipeline(ret.value)]


def _verdict(kind: str, ret: ast.Return, hop: Chain = ()) -> Verdict:
    return Verdict(kind, ret.lineno - 1, ast.unparse(ret).strip(), hop)


@lru_cache(maxsize=256)  # a base class's forward is asked about for each of its subclasses
def hands_on(fn: ast.FunctionDef | ast.AsyncFunctionDef, hops: frozenset[Chain]) -> Verdict:
    """Whether ``fn`` (a forward between the runner and the holder) returns the result of calling one of
    ``hops`` as it is: *drops* when every return is derived from it (indexed, an attribute of it, passed
    through another layer, unpacked) and none passes it on or builds a pair."""
    body = _body(fn)
    called = {hop for node in body.calls if (hop := _hop_of(node, hops)) is not None}
    if len(called) != 1:
        return UNKNOWN  # it calls none of them (a helper does), or more than one: not followed
    hop = next(iter(called))
    bindings = body.bindings
    carriers: set[str] = set()  # names bound to the call's result as it is (or to another such name)
    grown = True
    while grown:
        before = len(carriers)
        carriers |= {name for name, values in bindings.items()
                     if any(not unpacked and _carries(value, hops, carriers) for value, unpacked in values)}
        grown = len(carriers) > before

    def mentions(node: ast.expr) -> bool:
        return any(isinstance(n, ast.Name) and n.id in carriers or _hop_of(n, hops) is not None
                   for n in ast.walk(node))

    def derived(binding: tuple[ast.expr, bool]) -> bool:
        value, unpacked = binding
        return mentions(value) and (unpacked or not _carries(value, hops, carriers))

    dropping = []
    for ret, value in _deciding_returns(fn):
        if isinstance(value, ast.Name):
            last = _last_binding(fn, ret, value.id)
            values = [last] if last is not None else bindings.get(value.id, [])
            if last is not None and not last[1] and _carries(last[0], hops, carriers) or \
                    last is None and value.id in carriers:
                return _verdict("passes", ret, hop)
            if values and all(derived(binding) for binding in values):
                dropping.append(ret)
                continue
            return UNKNOWN
        if isinstance(value, (ast.Tuple, ast.List)) or _hop_of(value, hops) is not None:
            return _verdict("passes", ret, hop)
        if mentions(value):
            dropping.append(ret)
            continue
        return UNKNOWN
    return _verdict("drops", dropping[0]) if dropping else UNKNOWN


def _carries(value: ast.expr, hops: frozenset[Chain], carriers: set[str]) -> bool:
    """``value`` is the hop's result as it is: the call itself or a name already bound to it."""
    return _hop_of(value, hops) is not None or isinstance(value, ast.Name) and value.id in carriers


def self_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The attributes ``fn`` calls on ``self`` (``self.norm(...)`` → "norm")."""
    return frozenset(node.func.attr for node in _body(fn).calls
                     if isinstance(node.func, ast.Attribute) and _chain(node.func.value) == ("self",))


def _reads_aux(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether any name, attribute or keyword in ``fn`` speaks of the aux outputs (``aux_hidden_states``,
    ``self.aux_hidden_state_layers``, ``self._maybe_add_hidden_state``)."""
    return any("aux" in word or word == "_maybe_add_hidden_state" for word in _body(fn).words)


@lru_cache(maxsize=256)  # a base class's forward is asked about for each of its subclasses
def builds_pair(fn: ast.FunctionDef | ast.AsyncFunctionDef, layers: frozenset[str] = frozenset()) -> Verdict:
    """Whether ``fn`` (the holder's own forward) can return ``(hidden, aux)``: *drops* when every return is
    a plain value (an expression that is not a call, or a name last bound to one or unpacked from a tuple)
    and none builds a tuple or returns what a call returned (``super().forward(...)``, a helper).

    ``layers`` names the attributes of ``self`` that are submodules, not methods: a forward that never
    speaks of the aux outputs and binds what it returns from one of them (``hidden_states =
    self.norm(hidden_states)``) returns a layer's output, which knows nothing of the aux layers."""
    bindings = _body(fn).bindings
    layers = frozenset() if _reads_aux(fn) else layers

    def plain(node: ast.expr) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in layers \
                and _chain(node.func.value) == ("self",):
            return True
        return not isinstance(node, (ast.Call, ast.Tuple, ast.List, ast.Name, ast.Await, ast.IfExp))

    dropping = []
    for ret, value in _deciding_returns(fn):
        if isinstance(value, (ast.Tuple, ast.List)):
            return _verdict("passes", ret)
        if isinstance(value, ast.Name):
            last = _last_binding(fn, ret, value.id)
            values = [last] if last is not None else bindings.get(value.id, [])
            if values and all(unpacked or plain(bound) for bound, unpacked in values):
                dropping.append(ret)
                continue
        elif plain(value):
            dropping.append(ret)
            continue
        return UNKNOWN
    return _verdict("drops", dropping[0]) if dropping else UNKNOWN


def _last_binding(fn: ast.FunctionDef | ast.AsyncFunctionDef, ret: ast.Return, name: str) \
        -> tuple[ast.expr, bool] | None:
    """The assignment to ``name`` closest before ``ret`` in the statement list that holds ``ret``, as
    (value, unpacked)."""
    for block in _body(fn).blocks:
        if ret not in block:
            continue
        for stmt in reversed(block[:block.index(ret)]):
            targets: list[ast.expr]
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            elif isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id == name:
                    return value, False
                if isinstance(target, (ast.Tuple, ast.List)) and \
                        any(isinstance(e, ast.Name) and e.id == name for e in target.elts):
                    return value, True
        return None
    return None


@lru_cache(maxsize=256)  # a base class's forward is asked about for each of its subclasses
def returned_chain(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Chain | None:
    """The one ``self`` attribute chain every return of ``fn`` returns (``return self`` → ("self",),
    ``return self.language_model`` → ("self", "language_model")); None when it returns anything else."""
    chains = {_chain(ret.value) for ret in _body(fn).returns if ret.value is not None}
    chain = chains.pop() if len(chains) == 1 else ()
    return chain if chain[:1] == ("self",) else None

