"""The draft heads the engine names itself: the architectures its draft-config rewrites load a draft checkpoint
as, and the classes its registry registers only as draft models.

SGLang's ``ModelConfig._config_draft_model`` turns a draft checkpoint's ``DeepseekV3ForCausalLM`` into
``DeepseekV3ForCausalLMNextN`` (``self.hf_config.architectures[0] = "…NextN"``) and a DeepSeek-V4 one into
``DeepseekV4ForCausalLMDSpark``; vLLM's ``SpeculativeConfig.hf_config_override`` does the same with
``hf_config.update({"architectures": ["DeepSeekMTPModel"]})``, and its registry keeps the draft models in a
dict of their own (``_SPECULATIVE_DECODING_MODELS``). A class the engine names only there is loaded only as a
draft: it is never the target model, whatever its name looks like. The profile says where to look
(``draft-rewrites``, ``draft-tables``); the names are read, never guessed, and the profile's
``draft-only-classes`` globs stand in only for heads no code names (EAGLE heads a checkpoint names itself).

A rewrite writes a string, a list of strings, a conditional between them (``"A" if v32 else "B"``), or a name
bound to one of these or to a dict whose values are (``mtp_arch_maps[arch]``, ``_DRAFT_ARCHS.get(arch, arch)``),
in the function or at the module's top level (a chain of ``if``s grown into a table); an architecture computed
any other way (``f"Eagle{arch}"``) is not read. The functions are read from their ``def`` statements alone
(``resolve.source_defs``), as the generation test is; a tree that holds a function's module but not the
function gets a note, a tree without the module is read without it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from spec_contract.engine.resolve.index import Index
from spec_contract.engine.resolve.source_defs import definition_starts, module_constant, parse_statement, split_dotted

_KEY = "architectures"


def rewrite_path(dotted: str, index: Index) -> str | None:
    """The file the draft rewrite ``dotted`` is in, when the tree has it."""
    return index.path_of(_split(dotted, index)[0])


def read_rewrite(dotted: str, index: Index, text: Callable[[str], str | None]) -> tuple[frozenset[str], str | None]:
    """The architectures the draft rewrite ``dotted`` writes (none when the tree does not hold its module), and
    a note when the tree holds the module but not the function: the draft heads are then told by the globs
    alone, which a fork that renamed it should know."""
    module, qualname = _split(dotted, index)
    path = index.path_of(module)
    if path is None:
        return frozenset(), None
    source = text(path)
    starts = definition_starts(source, qualname) if source is not None else []
    if source is None or not starts:
        return frozenset(), (f"the draft rewrite {dotted!r} names no function in this tree: draft heads are told "
                             "by 'draft-only-classes' alone; set 'draft-rewrites' in [tool.spec-contract] to the "
                             "functions that rewrite a draft checkpoint's architecture, or to [] if there are none")
    names: set[str] = set()
    module = source
    for start in starts:
        function = parse_statement(source, start)
        names |= written_architectures(function, lambda name: module_constant(module, name)) \
            if function is not None else set()
    return frozenset(names), None


def _split(dotted: str, index: Index) -> tuple[str, str]:
    """A dotted function or method as (the engine's module, qualname in it): see ``source_defs.split_dotted``."""
    module, qualname = split_dotted(dotted)
    return index.engine_module(module), qualname


def written_architectures(function: ast.FunctionDef | ast.AsyncFunctionDef,
                          constant: Callable[[str], ast.expr | None] = lambda name: None) -> frozenset[str]:
    """Every architecture ``function`` writes, in the shapes the module docstring lists; ``constant``: the value of
    a name the module binds at its top level."""
    bound = _Bound(constant)
    writes: list[ast.AST] = []  # the nodes that may write one, read once every local name's bindings are known
    for node in ast.walk(function):  # one walk: SGLang 0.5.23's rewrite has 1,100 nodes, a millisecond a walk
        if isinstance(node, ast.Assign):  # what each local name is bound to, anywhere in the function
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        if isinstance(node, (ast.Assign, ast.Dict, ast.Call)):
            writes.append(node)
    names: set[str] = set()
    for node in writes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if _names_architectures(target):
                    names |= _strings(node.value, bound, 0)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == _KEY:
                    names |= _strings(value, bound, 0)
        elif isinstance(node, ast.Call):
            names.update(n for k in node.keywords if k.arg == _KEY for n in _strings(k.value, bound, 0))
    return frozenset(names)


def _names_architectures(target: ast.expr) -> bool:
    """``….architectures``, ``….architectures[0]`` or ``…["architectures"]``."""
    if isinstance(target, ast.Subscript):
        key = target.slice
        if isinstance(key, ast.Constant) and key.value == _KEY:
            return True
        target = target.value
    return isinstance(target, ast.Attribute) and target.attr == _KEY


class _Bound(dict[str, list[ast.expr]]):
    """The values a function binds each local name to; a name it never binds, the module's (if any)."""

    def __init__(self, constant: Callable[[str], ast.expr | None]) -> None:
        super().__init__()
        self._constant = constant

    def __missing__(self, name: str) -> list[ast.expr]:
        found = self._constant(name)
        self[name] = [found] if found is not None else []
        return self[name]


def _strings(value: ast.expr, bound: _Bound, depth: int) -> set[str]:
    if depth > 4:
        return set()
    if isinstance(value, ast.Constant):
        return {value.value} if isinstance(value.value, str) else set()
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return {s for e in value.elts for s in _strings(e, bound, depth + 1)}
    if isinstance(value, ast.IfExp):
        return _strings(value.body, bound, depth + 1) | _strings(value.orelse, bound, depth + 1)
    if isinstance(value, ast.Name):
        return {s for v in bound[value.id] for s in _strings(v, bound, depth + 1)}
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):  # an item of a dict: its values
        return _values(bound[value.value.id], bound, depth)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
            and isinstance(value.func.value, ast.Name) and 1 <= len(value.args) <= 2 and not value.keywords:
        # ``table.get(arch, default)``: an item, or the default (``arch`` itself: the checkpoint's own, not read)
        return _values(bound[value.func.value.id], bound, depth) | (
            _strings(value.args[1], bound, depth + 1) if len(value.args) == 2 else set())
    return set()


def _values(values: list[ast.expr], bound: _Bound, depth: int) -> set[str]:
    """The strings the dicts among ``values`` hold as values."""
    return {s for v in values if isinstance(v, ast.Dict) for item in v.values for s in _strings(item, bound, depth + 1)}
