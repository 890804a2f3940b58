"""The architectures the engine itself never serves as a generative model, read from its own test.

SGLang decides whether a checkpoint generates with ``is_generation_model(model_architectures, …)`` in
``srt/configs/model_config.py``: a branch whose condition tests ``"BertModel" in model_architectures or …``
returns False, and a model that does not generate gets no speculative worker, so no worker use reaches it as
the target. The profile names that function (``generation-test``, a dotted path read in the engine package);
the architecture names its False branches test are classes never served as the target, as the profile's
``non-target-classes`` globs are. Reading the engine's own list keeps up with it (0.5.23 added
``Qwen3Model``, ``EmbeddingGemma2Model`` and ``Lfm2BidirectionalModel``) where globs guess from names, and
says what no glob can (``MistralModel``, ``CLIPModel``).

vLLM's ``is_text_generation_model(model)`` in ``model_executor/models/interfaces_base.py`` returns
``isinstance(model, VllmModelForTextGeneration)``, a runtime-checkable Protocol: ``ModelConfig`` refuses
``--runner generate`` for an architecture whose class fails it, before any weight loads. That shape names the
Protocol (``protocols``); which registered classes have its members is the index's to say
(``resolve.role_facts``).

The architecture names are the registry's keys, which SGLang takes from the registered classes' names, so
the names are matched as class names, like the globs. The function is read, never run: only its ``def``
statement is parsed, from the file's text (``resolve.source_defs``).

A tree that holds the function's module (``srt/configs/model_config.py``) but not the function (renamed, a
fork's own) is a configuration error, as a profile class that names nothing is. A tree without that module (a
partial checkout, a small project shaped like the engine, whose ``model_executor/models/`` holds models and
no ``interfaces_base.py``) is checked with the globs alone: a test that cannot be read only lists more
classes, never fewer, so it cannot turn the check into an all-clear.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NamedTuple

from spec_contract.engine.config import Config, ConfigError
from spec_contract.engine.resolve.index import Index
from spec_contract.engine.resolve.source_defs import definition_starts, module_constant, parse_statement
from spec_contract.engine.summarise.selectors import COLLECTION_CALLS


class GenerationRead(NamedTuple):
    """What the engine's generation test says, read from its text."""

    refused: frozenset[str]  # the architectures its False branches test
    protocols: tuple[str, ...]  # the ``P`` of each ``return isinstance(<parameter>, P)``, as written there


NOTHING_READ = GenerationRead(frozenset(), ())


def generation_test_path(config: Config, index: Index) -> str | None:
    """The file the profile's generation test is in, when the tree has it."""
    if config.generation_test is None:
        return None
    return index.path_of(index.engine_module(config.generation_test.rpartition(".")[0]))


def read_generation_test(config: Config, index: Index, text: Callable[[str], str | None]) -> GenerationRead:
    """What the profile's generation test says (nothing when the profile names none, or the tree does not hold
    the function's module, see the module docstring); a tree that holds the module but not the function is a
    one-line :class:`ConfigError`."""
    dotted = config.generation_test
    path = generation_test_path(config, index)
    if dotted is None or path is None:
        return NOTHING_READ
    name = dotted.rpartition(".")[2]
    source = text(path)
    starts = definition_starts(source, name) if source is not None else []
    if source is None or not starts:
        raise ConfigError(f"the generation-test {dotted!r} names no function in this tree (engine package "
                          f"{config.engine_package!r}, profile {config.profile!r}); set 'generation-test' in "
                          "[tool.spec-contract] to the function the engine has, or to \"\" if it has none")
    refused: set[str] = set()
    protocols: list[str] = []
    # each ``@overload`` stub too (they test nothing); a statement that does not parse says nothing (the file's
    # syntax error is reported with the file)
    module = source
    for start in starts:
        function = parse_statement(source, start)
        if function is not None:
            refused |= refused_architectures(function, lambda name: module_constant(module, name))
            protocols += [p for p in isinstance_protocols(function) if p not in protocols]
    return GenerationRead(frozenset(refused), tuple(protocols))


def refused_architectures(function: ast.FunctionDef | ast.AsyncFunctionDef,
                          constant: Callable[[str], ast.expr | None] = lambda name: None) -> frozenset[str]:
    """The architectures the condition of a branch whose body returns False tests the parameter for, at any
    depth of the function: ``if "A" in archs or "B" in archs: return False``, or the same list grown into a
    collection, written in place or at the module's top (``constant`` reads it): ``any(a in _NOT_GENERATIVE for
    a in archs)``, ``archs[0] in _NOT_GENERATIVE``, ``set(archs) & _NOT_GENERATIVE``."""
    parameters = _parameters(function)
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.If) and any(_returns_false(s) for s in node.body):
            names.update(_tested_in(node.test, parameters, constant))
    return frozenset(names)


def isinstance_protocols(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The dotted ``P`` of every ``return isinstance(<parameter>, P)`` in the function, at any depth."""
    parameters = _parameters(function)
    out = []
    for node in ast.walk(function):
        call = node.value if isinstance(node, ast.Return) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance" \
                and len(call.args) == 2 and isinstance(call.args[0], ast.Name) and call.args[0].id in parameters:
            written = _dotted(call.args[1])
            if written is not None and written not in out:
                out.append(written)
    return out


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _returns_false(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant) \
        and statement.value.value is False


def _tested_in(test: ast.expr, parameters: set[str], constant: Callable[[str], ast.expr | None]) -> list[str]:
    """The architectures the terms of an ``or``/``and`` condition test the parameter for (see
    ``refused_architectures``; a ``not``, or any other shape, tests nothing)."""
    if isinstance(test, ast.BoolOp):
        return [name for value in test.values for name in _tested_in(value, parameters, constant)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Constant) and isinstance(left.value, str) and _is_parameter(right, parameters):
            return [left.value]  # "X" in archs
        if isinstance(left, ast.Subscript) and _is_parameter(left.value, parameters):
            return _strings(right, constant)  # archs[0] in {...}
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "any" \
            and len(test.args) == 1 and isinstance(test.args[0], ast.GeneratorExp):
        generator = test.args[0]  # any(a in {...} for a in archs)
        loop, element = generator.generators[0], generator.elt
        if len(generator.generators) == 1 and _is_parameter(loop.iter, parameters) \
                and isinstance(loop.target, ast.Name) and isinstance(element, ast.Compare) \
                and len(element.ops) == 1 and isinstance(element.ops[0], ast.In) \
                and isinstance(element.left, ast.Name) and element.left.id == loop.target.id:
            return _strings(element.comparators[0], constant)
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.BitAnd):
        for side, other in ((test.left, test.right), (test.right, test.left)):  # set(archs) & {...}
            if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id in ("set", "frozenset") \
                    and len(side.args) == 1 and _is_parameter(side.args[0], parameters):
                return _strings(other, constant)
    return []


def _is_parameter(node: ast.expr, parameters: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in parameters


def _strings(node: ast.expr | None, constant: Callable[[str], ast.expr | None], depth: int = 0) -> list[str]:
    """The strings of a collection written in place (``{"A", "B"}``, ``frozenset([...])``) or named at the
    module's top; nothing for any other value."""
    if node is None or depth > 3:
        return []
    if isinstance(node, ast.Name):
        return _strings(constant(node.id), constant, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in COLLECTION_CALLS \
            and len(node.args) == 1:
        return _strings(node.args[0], constant, depth + 1)
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []
