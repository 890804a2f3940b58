"""The architectures the engine itself never serves as a generative model, read from its own test.

SGLang decides whether a checkpoint generates with ``is_generation_model(model_architectures, …)`` in
``srt/configs/model_config.py``: a branch whose condition tests ``"BertModel" in model_architectures or …``
returns False, and a model that does not generate gets no speculative worker, so no worker use reaches it as
the target. The profile names that function (``generation-test``, a dotted path read in the engine package);
the architecture names its False branches test are classes never served as the target, as the profile's
``non-target-classes`` globs are. Reading the engine's own list keeps up with it (0.5.23 added
``Qwen3Model``, ``EmbeddingGemma2Model`` and ``Lfm2BidirectionalModel``) where globs guess from names, and
says what no glob can (``MistralModel``, ``CLIPModel``).

The architecture names are the registry's keys, which SGLang takes from the registered classes' names, so
the names are matched as class names, like the globs. The function is read, never run: only its ``def``
statement is parsed, from the file's text.

A tree that holds the function's package (``srt/configs/``) but not the function (renamed, moved, a fork's
own) is a configuration error, as a profile class that names nothing is. A tree without that package (a
partial checkout, a small project shaped like the engine) is checked with the globs alone: a test that cannot
be read only lists more classes, never fewer, so it cannot turn the check into an all-clear.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from spec_contract.engine.config import Config, ConfigError
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.resolve.index import Index


class GenerationTest:
    """The names :func:`non_generative` read, kept with the digest of the file they were read from: a run whose
    file did not change (a warm check, a keystroke elsewhere) takes them without reading it."""

    def __init__(self) -> None:
        self.read: tuple[str, str, frozenset[str]] | None = None  # (path, digest, names); saved with the results

    def names(self, config: Config, index: Index, packages: frozenset[str], sources: Sources) -> frozenset[str]:
        """The names for this analysis (``packages``: the tree's packages, every dotted prefix of a module)."""
        path = _path(config, index)
        if path is not None and self.read is not None and self.read[:2] == (path, sources.digest(path)):
            return self.read[2]
        names = non_generative(config, index, packages, lambda known: sources.text(known)[0])
        self.read = (path, sources.digest(path), names) if path is not None else None
        return names


def _path(config: Config, index: Index) -> str | None:
    if config.generation_test is None:
        return None
    return index.path_of(index.engine_module(config.generation_test.rpartition(".")[0]))


def non_generative(config: Config, index: Index, packages: frozenset[str],
                   text: Callable[[str], str | None]) -> frozenset[str]:
    """The architecture names the profile's generation test answers False for (empty when the profile names
    none, or the tree does not hold the function's package, see the module docstring); a tree that holds the
    package but not the function is a one-line :class:`ConfigError`."""
    dotted = config.generation_test
    if dotted is None:
        return frozenset()
    module, _, name = dotted.rpartition(".")
    package = index.engine_module(module.rpartition(".")[0])
    if package not in packages:
        return frozenset()
    path = _path(config, index)
    source = text(path) if path is not None else None
    statement = _definition(source, name) if source is not None else None
    if statement is None:
        raise ConfigError(f"the generation-test {dotted!r} names no function in this tree (engine package "
                          f"{config.engine_package!r}, profile {config.profile!r}); set 'generation-test' in "
                          "[tool.spec-contract] to the function the engine has, or to \"\" if it has none")
    try:
        parsed = ast.parse(statement).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()  # the file's syntax error is reported with the file
    if len(parsed) != 1 or not isinstance(parsed[0], ast.FunctionDef):
        return frozenset()
    return refused_architectures(parsed[0])


def refused_architectures(function: ast.FunctionDef) -> frozenset[str]:
    """The strings ``S`` of every ``S in <parameter>`` test in the condition of a branch whose body returns
    False (``if "A" in archs or "B" in archs: return False``), at any depth of the function."""
    parameters = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.If) and any(_returns_false(s) for s in node.body):
            names.update(_tested_in(node.test, parameters))
    return frozenset(names)


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


def _definition(text: str, name: str) -> str | None:
    """The module-level ``def name(…)`` statement of ``text``: the lines up to the next one that starts in the
    first column (blank lines, comments and a signature's closing parenthesis do not end it); None if there is
    none."""
    at = text.find(f"def {name}")  # str.find, then the line's shape: a multi-line regex scans 100 KB slowly
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        after = at + 4 + len(name)
        if re.fullmatch(r"(?:async[ \t]+)?", text[start:at]) and text[after:after + 80].lstrip(" \t")[:1] == "(":
            end = _NEXT_STATEMENT.search(text, at)
            return text[start:end.start() + 1 if end else len(text)]
        at = text.find(f"def {name}", at + 1)
    return None


_NEXT_STATEMENT = re.compile(r"\n(?=[^\s#)])")  # a line starting in the first column: the next statement
