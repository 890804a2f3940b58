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
from spec_contract.engine.resolve.source_defs import definition_starts, parse_statement


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
    for start in starts:
        function = parse_statement(source, start)
        if function is not None:
            refused |= refused_architectures(function)
            protocols += [p for p in isinstance_protocols(function) if p not in protocols]
    return GenerationRead(frozenset(refused), tuple(protocols))


def refused_architectures(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The strings ``S`` of every ``S in <parameter>`` test in the condition of a branch whose body returns
    False (``if "A" in archs or "B" in archs: return False``), at any depth of the function."""
    parameters = _parameters(function)
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.If) and any(_returns_false(s) for s in node.body):
            names.update(_tested_in(node.test, parameters))
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


def _tested_in(test: ast.expr, parameters: set[str]) -> list[str]:
    """``"X" in archs`` terms of an ``or``/``and`` condition (a ``not``, or any other shape, tests nothing)."""
    if isinstance(test, ast.BoolOp):
        return [name for value in test.values for name in _tested_in(value, parameters)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
            and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str) \
            and isinstance(test.comparators[0], ast.Name) and test.comparators[0].id in parameters:
        return [test.left.value]
    return []
