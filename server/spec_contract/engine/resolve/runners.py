"""The algorithms each model runner refuses, read from the engine's own list of what the runner does not support.

vLLM has two model runners, each with its own speculative code: V1's (``v1/worker/gpu_model_runner.py`` and the
proposers of ``v1/spec_decode/``) and V2's (``v1/worker/gpu/``). ``VllmConfig._get_v1_model_runner_unsupported_
features`` lists what V1 cannot run (``if self.speculative_config.method == "dspark": unsupported.append(...)``),
and the config refuses such a launch on V1 before any weight loads, so a DSPARK run never reaches a V1 line: a
proposer's use there is no use of DSPARK's, and a V1 check's refusal is not where a DSPARK run stops. The profile
says where each runner's code is and which function lists what it refuses (``runners``); the algorithms are read
from the function, never written down.

An append or an extend of the list, under tests that certainly hold for every run of an algorithm (a comparison
of the algorithm option, a predicate of the release; the profile's speculative words, such as
``speculative_config``, hold for every speculative run), refuses that algorithm; one under any other test (a
feature flag, ``parallel_drafting and method not in (…)``) refuses nothing for certain. The function is read
from its ``def`` statement alone (``resolve.source_defs``); a tree without it reads as refusing nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import Index
from spec_contract.engine.resolve.source_defs import definition_starts, parse_statement, split_dotted
from spec_contract.engine.summarise.selectors import ALWAYS, UNKNOWN, Formula, formula

# (the runner's file globs, the tests under which it refuses: each a conjunction of formulas)
RunnerRefusals = tuple[tuple[tuple[str, ...], tuple[tuple[Formula, ...], ...]], ...]


def refusal_modules(config: Config, index: Index) -> list[str]:
    """The modules the runners' refusal functions are in (a change there derives the contract again)."""
    return [index.engine_module(split_dotted(runner.refusals)[0]) for runner in config.runners]


def read_runners(config: Config, index: Index, text_of: Callable[[str], str | None]) -> RunnerRefusals:
    """Each runner's files, and the tests under which its refusal function lists something it does not run."""
    out = []
    for runner in config.runners:
        module, qualname = split_dotted(runner.refusals)
        path = index.path_of(index.engine_module(module))
        source = text_of(path) if path is not None else None
        tests: list[tuple[Formula, ...]] = []
        if source is not None:
            for start in definition_starts(source, qualname):
                function = parse_statement(source, start)
                if function is not None:
                    tests += _refusing(function.body, (), config.speculative_conditions)
        out.append((runner.files, tuple(tests)))
    return tuple(out)


def _refusing(body: list[ast.stmt], under: tuple[Formula, ...], plain: frozenset[str]) -> Iterator[tuple[Formula, ...]]:
    """The tests (``under`` and those of the enclosing ``if``\\ s) under which ``body`` grows the list."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = formula(stmt.test) or UNKNOWN  # a test that selects no algorithm may be false in any run
            if test[0] == "n" and test[1] in plain:
                test = ALWAYS  # a speculative run's own test (``if self.speculative_config:``) holds for all
            yield from _refusing(stmt.body, (*under, test), plain)
        elif under and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("append", "extend"):
            yield under
