"""Which architectures an algorithm's draft can have, where the engine's config rewrites every other one.

vLLM's ``SpeculativeConfig.__post_init__`` (0.25.1 on) gives a DSPARK run the draft class it loads itself
unless the checkpoint already names a DSPARK head::

    if self.method == "dspark" and "DSparkDraftModel" in archs and model_type == "qwen3":
        archs = ["Qwen3DSparkModel"]
    elif self.method == "dspark" and ("Qwen3DSparkModel" not in archs and "K3DSparkModel" not in archs):
        archs = ["DSparkV41DraftModel" if v41 else "DSparkDraftModel"]

After that chain a DSPARK run's draft is one of the architectures written in its branches or one of those the
rewriting branch's ``not in`` tests let through: an MTP head, an EAGLE head or any other draft model is never
a DSPARK draft, so a use only DSPARK runs make is never asked of it.

Read for a branch of an ``if``/``elif`` chain whose test is the option's comparison with the algorithm
(``== "dspark"``, ``in ("dspark", …)``, or the branch sits inside ``if self.method == "dspark":``) and ``"A" not
in x.architectures`` tests alone (``x.architectures`` or a local bound to it), if any, writing a literal list to
``….architectures``; every earlier branch the
algorithm may take must write one too (a run taking it keeps nothing of its checkpoint's), and no later
statement of the function may write the architectures of the algorithm's runs in any other way. Constants
named at the module's top level (``_OMNI_ARCHITECTURE = "…"``) are read as their strings.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from itertools import accumulate

from spec_contract.engine.resolve.source_defs import module_constant, parse_statement
from spec_contract.engine.summarise.syntax import chain_of

_KEY = "architectures"

Constants = Callable[[str], str | None]  # a module-level constant's string


def restricted_drafts(text: str, option: str) -> dict[str, tuple[frozenset[str], int]]:
    """The option's value as written (``"dspark"``) → the architectures a run of it can load as its draft, and
    the 0-based line of the branch that rewrites every other, for the values whose drafts a chain rewrites
    (see the module docstring). Only the functions that write ``….architectures`` are parsed, each alone: the
    file is large."""
    constants: dict[str, str | None] = {}

    def constant(name: str) -> str | None:
        if name not in constants:
            value = module_constant(text, name)
            constants[name] = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
        return constants[name]

    found: dict[str, tuple[frozenset[str], int]] = {}
    for start, function in _writing_functions(text):
        aliases = frozenset(target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                            and (read := chain_of(node.value)) is not None and read[-1] == _KEY
                            for target in node.targets if isinstance(target, ast.Name))
        for chain, later, pinned, every in _chains(function.body, [], option, None):
            for value, (names, line) in _chain_drafts(chain, option, constant, pinned, aliases, every).items():
                if value not in found and not any(_rewrites(s, option, value) for s in later):
                    found[value] = (names, start + line - 1)
    return found


def _writing_functions(text: str) -> Iterator[tuple[int, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The functions whose bodies write ``….architectures = …``, each parsed alone (``source_defs``), with the
    0-based line of its ``def``."""
    writes, compares = f".{_KEY} =", f".{_KEY} =="
    if writes not in text:  # most files: no line to look for
        return
    lines = text.splitlines(keepends=True)
    offsets = [0, *accumulate(map(len, lines))]
    seen: set[int] = set()
    for number, line in enumerate(lines):
        if writes not in line or compares in line:
            continue
        depth = _indent(line)
        start = next((n for n in range(number - 1, -1, -1) if lines[n].lstrip().startswith(("def ", "async def "))
                      and _indent(lines[n]) < depth), None)
        if start is None or start in seen:
            continue
        seen.add(start)
        function = parse_statement(text, offsets[start])
        if function is not None:  # a part that does not parse alone says nothing
            yield start, function


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _chains(body: list[ast.stmt], after: list[ast.stmt], option: str, pinned: str | None,
            every: bool = True) -> Iterator[tuple[ast.If, list[ast.stmt], str | None, bool]]:
    """Each ``if``/``elif`` chain of a body, at any depth, with the statements that run after it (those after
    it in its block, then those after each enclosing statement), the option's value an enclosing branch
    pins (``if self.method == "dspark":`` around it), if one does, and whether every run of that value reaches
    it: a chain of the body's top level (or of a ``with``, or of a branch that pins the value), before any
    statement that may leave the function; not one under another test, in a loop or in a ``try``."""
    for j, stmt in enumerate(body):
        later = body[j + 1:] + after
        if isinstance(stmt, ast.If):
            yield stmt, later, pinned, every
            branch: ast.If | None = stmt
            while branch is not None:
                value = _pinned(branch.test, option)
                yield from _chains(branch.body, later, option, value or pinned, every and value is not None)
                orelse = branch.orelse
                branch = orelse[0] if len(orelse) == 1 and isinstance(orelse[0], ast.If) else None
                if branch is None:
                    yield from _chains(orelse, later, option, pinned, False)
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _chains(getattr(stmt, field, []), later, option, pinned,
                                   every and isinstance(stmt, ast.With))
        if any(isinstance(node, (ast.Return, ast.Raise)) for node in ast.walk(stmt)):
            every = False  # a run may leave here: what comes after reaches only some runs


def _pinned(test: ast.expr, option: str) -> str | None:
    """The one value a test's ``option == "v"`` conjunct pins, if it has one."""
    return next((found[1][0] for part in _conjuncts(test) if (found := _option_compare(part, option)) is not None
                 and len(found[1]) == 1), None)


def _chain_drafts(chain: ast.If, option: str, constants: Constants, pinned: str | None,
                  aliases: frozenset[str], every: bool) -> dict[str, tuple[frozenset[str], int]]:
    """The values whose drafts this ``if``/``elif`` chain restricts, with the architectures they can have and
    the line of the branch that rewrites every other (1-based, in the parsed function); a value ``pinned``
    around the chain holds in each of its tests; ``aliases``: the function's local names for
    ``….architectures``; ``every``: whether every run of a value reaches the chain (a branch that rewrites every
    draft, with no ``not in`` test, restricts only then)."""
    branches: list[ast.If] = [chain]
    while len(branches[-1].orelse) == 1 and isinstance(branches[-1].orelse[0], ast.If):
        branches.append(branches[-1].orelse[0])
    out: dict[str, tuple[frozenset[str], int]] = {}
    values = {v for b in branches for v in _compared(b.test, option)} | ({pinned} if pinned else set())
    for value in sorted(values):
        taking = [b for b in branches if _may_take(b.test, option, value)]
        written = [_written(b.body, constants) for b in taking]
        for k, branch in enumerate(taking):
            let_through = _let_through(branch.test, option, value, constants, value == pinned, aliases)
            if let_through is None or written[k] is None or any(w is None for w in written[:k]) \
                    or not let_through and not every:
                continue  # a rewrite of every draft of the value, which some of its runs never reach
            out[value] = (frozenset(let_through).union(*(w for w in written if w is not None)), branch.lineno)
            break
    return out


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [part for value in test.values for part in _conjuncts(value)]
    return [test]


def _option_compare(node: ast.expr, option: str) -> tuple[str, tuple[str, ...]] | None:
    """("==", values) or ("in", values) for ``x.<option> == "v"`` or ``x.<option> in ("v", …)``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    chain = chain_of(node.left)
    if chain is None or chain[-1] != option:
        return None
    right = node.comparators[0]
    items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
    strings = tuple(v.value for v in items if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if len(strings) != len(items):
        return None
    if isinstance(node.ops[0], ast.Eq) and len(strings) == 1:
        return "==", strings
    return ("in", strings) if isinstance(node.ops[0], ast.In) else None


def _compared(test: ast.expr, option: str) -> list[str]:
    return [v for part in _conjuncts(test) if (found := _option_compare(part, option)) for v in found[1]]


def _may_take(test: ast.expr, option: str, value: str) -> bool:
    """Whether a run of ``value`` may pass ``test``: no conjunct compares the option with other values only."""
    return all(found is None or value in found[1] for found in (_option_compare(p, option) for p in _conjuncts(test)))


def _let_through(test: ast.expr, option: str, value: str, constants: Constants, pinned: bool,
                 aliases: frozenset[str]) -> list[str] | None:
    """The architectures a ``value`` run failing ``test`` must hold: the ``not in`` tests' strings, when the
    test is ``option == value`` or ``option in (value, …)`` (or the value is ``pinned`` around it) and those
    alone; none when it is the comparison alone, which every such run passes (None: failing it says nothing of
    the architectures)."""
    parts = _conjuncts(test)
    if not pinned and not any((found := _option_compare(p, option)) is not None and value in found[1]
                              for p in parts):
        return None
    names: list[str] = []
    for part in parts:
        if _option_compare(part, option) is not None:
            continue
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.NotIn)):
            return None
        name = _string(part.left, constants)
        chain = chain_of(part.comparators[0])
        if name is None or chain is None or chain[-1] != _KEY and chain not in [(alias,) for alias in aliases]:
            return None
        names.append(name)
    return names


def _written(body: list[ast.stmt], constants: Constants) -> frozenset[str] | None:
    """The architectures a branch writes (``x.architectures = [...]`` at its top level), None when it writes
    none or writes something not read as strings."""
    found: set[str] = set()
    wrote = False
    for stmt in body:
        if not isinstance(stmt, ast.Assign) and any(  # a write some runs of the branch make: not every draft's
                isinstance(node, ast.Assign) and any(_is_architectures(t) or isinstance(t, ast.Attribute)
                                                     and t.attr == "hf_config" for t in node.targets)
                for node in ast.walk(stmt)):
            return None
        if isinstance(stmt, ast.Assign) and any(_is_architectures(t) for t in stmt.targets):
            names = _strings(stmt.value, constants)
            if names is None:
                return None
            found |= names
            wrote = True
    return frozenset(found) if wrote else None


def _rewrites(stmt: ast.stmt, option: str, value: str) -> bool:
    """Whether a later statement may write the architectures (or the whole config) of a ``value`` run: an
    assignment to ``….architectures`` or ``….hf_config`` not under a test that excludes ``value``."""
    if isinstance(stmt, ast.If):
        return _may_take(stmt.test, option, value) and any(_rewrites(s, option, value) for s in stmt.body) \
            or any(_rewrites(s, option, value) for s in stmt.orelse)
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(t, ast.Attribute) and t.attr in (_KEY, "hf_config") for t in targets)
    return any(_rewrites(s, option, value) for field in ("body", "orelse", "finalbody", "handlers")
               for s in getattr(stmt, field, []) or [] if isinstance(s, ast.stmt))


def _is_architectures(target: ast.expr) -> bool:
    return isinstance(target, ast.Attribute) and target.attr == _KEY


def _strings(value: ast.expr, constants: Constants) -> frozenset[str] | None:
    """A list of architectures as written: ``["A"]``, ``["A" if x else "B"]``, ``["A"] if x else ["B"]``."""
    if isinstance(value, ast.IfExp):
        body, orelse = _strings(value.body, constants), _strings(value.orelse, constants)
        return body | orelse if body is not None and orelse is not None else None
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        found: set[str] = set()
        for item in value.elts:
            if isinstance(item, ast.IfExp):
                names = [_string(item.body, constants), _string(item.orelse, constants)]
            else:
                names = [_string(item, constants)]
            if any(n is None for n in names):
                return None
            found.update(n for n in names if n is not None)
        return frozenset(found)
    return None


def _string(node: ast.expr, constants: Constants) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return constants(node.id) if isinstance(node, ast.Name) else None
