"""Which worker class a routing function hands each draft model to, read from its tests of the model's class.

An SGLang-shaped fork (tokenspeed 0.1.1) picks the drafter for a loaded draft model in one function:
``if isinstance(model, InklingForConditionalGenerationNextN): return Mtp``, else the algorithm's default
from a literal table (``{"EAGLE3": Eagle, "DFLASH": DFlash, …}[spec_algo]``), and elsewhere refuses a draft
of some algorithms that is not of a class (``if spec_algo in ("DFLASH", "DSPARK"): if not
isinstance(draft_model, TargetCaptureConfigurator): raise``). A drafter's uses of its draft model then only
ever meet the classes routed to it, so :mod:`~spec_contract.engine.contract` asks them of those only.

vLLM's V2 model runner picks some speculators by the draft checkpoint's architecture instead: under ``method ==
"dflash"``, ``if "DFlash2DraftModel" in config.draft_model_config.architectures: return DFlash2Speculator(…)``,
then ``return DFlashSpeculator(…)`` for the rest. Such a speculator is handed only the class its architecture
names (kind "arch"), and the one returned after those tests every draft but theirs (kind "rest").

Everything is kept by name, as written (``Mtp``, ``InklingForConditionalGenerationNextN``, ``DFlash2DraftModel``):
the routing function imports them inside its body, a class is matched by the names along its MRO, and an
architecture by the class the engine's registry names for it (see ``routed``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import cast

from spec_contract.engine.summarise.syntax import chain_of

# (kind, classes tested, the drafter returned (for a gate: the object tested, dotted), algorithms of the
# enclosing tests), where kind is "route" (isinstance → return drafter), "default" (the literal table's entry),
# "gate" (not isinstance → raise), "arch" (architectures tested → return drafter) or "rest" (the drafter returned
# after "arch" routes in the same block; "classes" are the architectures they tested)
Route = tuple[str, tuple[str, ...], str, tuple[str, ...]]


def routes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Route, ...]:
    """The routes, defaults and class gates of one function (nothing for most functions: only statements
    are walked, and only an ``if`` whose test calls ``isinstance`` or a table returned by subscript counts)."""
    found = list(_walk(node.body, ()))
    tables = dict(_tables(node.body))
    for stmt in ast.walk(node) if tables else ():
        if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Subscript) \
                and isinstance(stmt.value.value, ast.Name) and stmt.value.value.id in tables:
            found += [("default", (), drafter, (algorithm,)) for algorithm, drafter in tables[stmt.value.value.id]]
    return tuple(dict.fromkeys(found))


def _walk(body: list[ast.stmt], tests: tuple[ast.expr, ...]) -> Iterator[Route]:
    """The routes and gates under ``tests`` (the enclosing ``if`` tests, read for algorithms only when one is
    found: most functions have none, and most tests name none)."""
    by_architecture: list[str] = []  # the architectures routed so far in this block
    for stmt in body:
        if isinstance(stmt, ast.Return) and by_architecture and (drafter := _returned(stmt)) is not None:
            yield "rest", tuple(by_architecture), drafter, _algorithms(tests)
        if isinstance(stmt, ast.If):
            tested, negated = _isinstance_test(stmt.test)
            returned = _returned(stmt.body[-1]) if stmt.body else None
            if tested and not negated and returned is not None:
                yield "route", tested, returned, _algorithms(tests + (stmt.test,))
            elif returned is not None and not stmt.orelse and (named := _architectures_test(stmt.test)):
                yield "arch", named, returned, _algorithms(tests + (stmt.test,))
                by_architecture += named
            elif tested and negated and stmt.body and isinstance(stmt.body[-1], ast.Raise):
                subject = chain_of(cast(ast.Call, cast(ast.UnaryOp, stmt.test).operand).args[0])
                yield "gate", tested, ".".join(subject or ()), _algorithms(tests)
            yield from _walk(stmt.body, tests + (stmt.test,))
            yield from _walk(stmt.orelse, tests)
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _walk(getattr(stmt, field, []), tests)


def _returned(stmt: ast.stmt) -> str | None:
    """The drafter a ``return`` hands back: a class (``return Multi``) or one built (``return Multi(config)``)."""
    if not isinstance(stmt, ast.Return):
        return None
    value = stmt.value.func if isinstance(stmt.value, ast.Call) else stmt.value
    return value.id if isinstance(value, ast.Name) else None


def _architectures_test(test: ast.expr) -> tuple[str, ...]:
    """The architectures ``"A" in x.architectures`` names (``and``-ed with tests of anything else): a draft
    config's architectures, when the chain says so (``draft_model_config.architectures``)."""
    values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return tuple(node.left.value for node in values
                 if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
                 and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                 and (chain := chain_of(node.comparators[0])) is not None and chain[-1] == "architectures"
                 and any("draft" in part for part in chain))


def _isinstance_test(test: ast.expr) -> tuple[tuple[str, ...], bool]:
    """The class names an ``isinstance(x, C)`` (or ``not isinstance(...)``) test names, and whether negated."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):  # ``algo == "MTP" and isinstance(m, C)``
        found = [_isinstance_test(value) for value in test.values]
        return next(((names, False) for names, negated in found if names and not negated), ((), False))
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"
            and len(call.args) == 2):
        return (), False
    kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
    names = tuple(k.attr if isinstance(k, ast.Attribute) else k.id for k in kinds
                  if isinstance(k, (ast.Name, ast.Attribute)))
    return names, negated


def _algorithms(tests: tuple[ast.expr, ...]) -> tuple[str, ...]:
    """The strings ``x == "DFLASH"`` or ``x in ("DFLASH", "DSPARK")`` tests (or ``and`` of them) name."""
    out: list[str] = []
    for node in (node for test in tests for node in ast.walk(test)):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.In)):
            right = node.comparators[0]
            values = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
            out += [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return tuple(out)


def _tables(body: list[ast.stmt]) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Locals assigned a dict literal of string keys and class names: ``{"DFLASH": DFlash, …}``."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Dict):
            pairs = [(k.value, v.id) for k, v in zip(stmt.value.keys, stmt.value.values)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name)]
            if pairs and len(pairs) == len(stmt.value.keys):
                yield stmt.targets[0].id, pairs
