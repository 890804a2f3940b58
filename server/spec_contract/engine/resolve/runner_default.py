"""Which model runner a class's runs get unless the user picks one, read from the engine's function that says so.

vLLM runs a launch on its V1 or its V2 model runner (``VLLM_USE_V2_MODEL_RUNNER`` picks one; without it,
``VllmConfig._is_default_v2_model_runner_model`` does), and what that function says differs by release:

* 0.24.0: ``return any(arch in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES for arch in architectures)``: six text
  architectures;
* 0.25.1: ``return False`` first for hybrid and attention-free models, then ``any(…) or not
  model_config.is_moe``: every dense model.

So a crash that only the V2 runner meets is an error on one release and an opt-in's crash on the other. The
profile names the function (a runner's ``default``); it is read from its ``def`` alone, as a test of the class:

* an architecture set, ``any(a in NAME for a in architectures)`` or ``NAME & set(architectures)``: one of the
  architectures the registry registers the class under is among the strings of ``NAME`` (a module-level
  literal beside the function);
* a word of the model config (``model_config.is_moe``, ``getattr(model_config, "is_hybrid", False)``), which
  the check answers from the class (see ``check.shares``); ``runner_type`` compared with ``"generate"`` is true,
  as every class checked as a target generates, and ``model_config is None`` false;
* ``not``, ``and``, ``or``, and ``if <test>: return False`` before the last ``return``.

Anything else cannot be told, nor can a word the check cannot answer: then the class's default is not known, and
a crash only the V2 runner meets is said as one that needs it, never as an error.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import Index
from spec_contract.engine.resolve.source_defs import definition_starts, module_constant, parse_statement, split_dotted
from spec_contract.engine.runner_choice import RunnerDefault, Test

_UNKNOWN: Test = ("?",)


def read_default(config: Config, index: Index, text_of: Callable[[str], str | None]) -> RunnerDefault | None:
    """The first ``default`` function of the profile's runners the tree defines, read (None: none)."""
    for runner in config.runners:
        if not runner.default:
            continue
        module, qualname = split_dotted(runner.default)
        path = index.path_of(index.engine_module(module))
        source = text_of(path) if path is not None else None
        for start in definition_starts(source, qualname) if source is not None else ():
            function = parse_statement(source or "", start)
            if function is not None:
                return _reading(function, qualname.rpartition(".")[2], functools.partial(module_constant, source or ""))
    return None


def default_modules(config: Config, index: Index) -> list[str]:
    """The modules the runners' default functions are in (a change there derives the contract again)."""
    return [index.engine_module(split_dotted(r.default)[0]) for r in config.runners if r.default]


def _reading(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
             constant: Callable[[str], ast.expr | None]) -> RunnerDefault:
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    refusing: list[Test] = []
    for stmt in body[:-1]:
        if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and _returns(stmt.body[0], False):
            refusing.append(_test(stmt.test, constant))
        elif not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            refusing.append(_UNKNOWN)  # a statement it does not follow may return anything
    last = body[-1] if body else None
    returned = _test(last.value, constant) if isinstance(last, ast.Return) and last.value is not None else _UNKNOWN
    return RunnerDefault(name, tuple(refusing), returned)


def _returns(stmt: ast.stmt, value: bool) -> bool:
    return isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Constant) and stmt.value.value is value


def _test(node: ast.expr, constant: Callable[[str], ast.expr | None]) -> Test:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _test(node.operand, constant)
        return _UNKNOWN if inner == _UNKNOWN else ("!", inner)
    if isinstance(node, ast.BoolOp):
        return ("&" if isinstance(node.op, ast.And) else "|", *(_test(v, constant) for v in node.values))
    if isinstance(node, ast.Attribute):
        return ("word", node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        return ("word", node.args[1].value)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compared(node, constant)
    named = _architecture_set(node, constant)
    return named if named is not None else _UNKNOWN


def _compared(node: ast.Compare, constant: Callable[[str], ast.expr | None]) -> Test:
    """``<config>.runner_type != "generate"`` (true for a generating class, which every target is), and ``<config>
    is None`` (false: a served model has its config)."""
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
        return ("|",) if isinstance(op, ast.Is) else ("&",)
    if isinstance(left, ast.Attribute) and left.attr == "runner_type" and isinstance(right, ast.Constant) \
            and isinstance(op, (ast.Eq, ast.NotEq)):
        generates: Test = ("&",) if right.value == "generate" else ("|",)
        return generates if isinstance(op, ast.Eq) else ("!", generates)
    return _UNKNOWN


def _architecture_set(node: ast.expr, constant: Callable[[str], ast.expr | None]) -> Test | None:
    """``any(a in NAME for a in …architectures)`` or ``NAME & set(…architectures)``, NAME a literal of strings."""
    name = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "any" and node.args \
            and isinstance(node.args[0], ast.GeneratorExp):
        element = node.args[0].elt
        if isinstance(element, ast.Compare) and isinstance(element.ops[0], ast.In) \
                and isinstance(element.comparators[0], ast.Name):
            name = element.comparators[0].id
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        name = next((side.id for side in (node.left, node.right) if isinstance(side, ast.Name)), None)
    value = constant(name) if name else None
    if isinstance(value, ast.Call) and value.args:  # ``frozenset({…})``
        value = value.args[0]
    if not isinstance(value, (ast.Set, ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return None
    return ("in", frozenset(e.value for e in value.elts), name)  # type: ignore[attr-defined]
