"""Registered classes that can never be built: their ``__init__`` always raises.

An engine registers a stand-in where a model does not run on a platform (vLLM 0.32.0's
``models/deepseek_v4/cpu/mtp.py``: ``DeepSeekV4MTP.__init__`` raises ``NotImplementedError("… not implemented
on CPU.")``; ``vl_stub.py`` does the same for the vision model after ``super().__init__()``). A launch that
names one dies in the constructor, whatever the class lacks: no worker ever calls a member of it, so it plays
no role, and the check neither lists nor counts it. The class that runs on the other platforms has the same
name and is checked as usual.

The ``__init__`` the class's instances run (its own, or the first along its MRO) is read from its ``def``
statement (``resolve.source_defs``), and parsed only when a line of its body's top level starts with
``raise``. It always raises when a statement of its body's top level is a ``raise`` and no statement before
it can return: what comes before (``super().__init__()``, a log line) runs and then the constructor raises. A
``raise`` under a condition (``if not supported: raise``) is a refusal of some configurations, not a stub.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.source_defs import parse_statement, statement_at
from spec_contract.engine.summarise.deferred import unread
from spec_contract.engine.summarise.summary import ModuleSummary


def never_built(index: Index, key: ClassKey, text: Callable[[str], str | None]) -> bool:
    """Whether every construction of the class raises (see the module docstring).

    Asked of every registered class before any is checked, so it reads their texts before their bodies: along
    the MRO (read from the class statements' headers), a class whose text lacks ``__init__`` defines none, and
    one whose text lacks ``raise`` has no ``__init__`` that raises. Only a class whose text holds both is
    parsed (the check parses a registered one anyway); its ``__init__`` statement alone is parsed again, cut
    out of the class statement's text when the summary kept it (a model file's class, parsed since or not):
    searched for from the top of the file instead, it cost a tenth of the roles' reading (SGLang 0.5.23)."""
    for owner in _owners(index, key):
        summary = index.summary(owner.module)
        words = unread(summary, owner.qualname) if summary is not None else None
        if words is not None and "__init__" not in words.words:
            continue
        if words is not None and "raise" not in words.words:
            return False  # an ``__init__`` here never raises (without one, a base's might: not told)
        member = index.defines(owner, "__init__")
        if member is None:
            continue
        kept = _kept_statement(summary, owner.qualname) if summary is not None else None
        source: str | None
        if kept is not None:
            first_line, source = kept
        else:
            path = index.path_of(owner.module)
            first_line, source = 0, text(path) if path is not None else None
        if source is None:
            return False
        found = statement_at(source, member.span.line - first_line, "__init__")
        if found is None or not _raises_at_top(found[1]):
            return False
        function = parse_statement(source, *found)
        return function is not None and _always_raises(function.body)
    return False


def _kept_statement(summary: ModuleSummary, qualname: str) -> tuple[int, str] | None:
    """(first line, text) of the top-level class statement ``qualname`` as the summary kept it, when it is the
    class's one statement: a slice of the file from the start of a line to the start of the next statement, so
    a method's statement cut out of it is the one cut out of the file."""
    if "." in qualname or any(cls.qualname == qualname for cls in summary.classes):
        return None
    found = [(statement.first_line, statement.text) for statement in summary.deferred if statement.name == qualname]
    return found[0] if len(found) == 1 else None


def _owners(index: Index, key: ClassKey) -> Iterator[ClassKey]:
    """The class, then the rest of its MRO: most classes define their own ``__init__``, and their bases are then
    not resolved here (this runs before the check, on one core; the check resolves them on all)."""
    yield key
    yield from index.mro(key)[1:]


def _raises_at_top(statement: str) -> bool:
    """Whether a line of the body's top level (the least deep below the ``def``) starts with ``raise``: only
    then is the statement parsed."""
    if "raise" not in statement:  # most constructors: no line to look for
        return False
    lines = [(len(line) - len(line.lstrip(" \t")), line.strip()) for line in statement.splitlines()[1:]]
    def_depth = len(statement) - len(statement.lstrip(" \t"))
    depths = [depth for depth, text in lines if text and not text.startswith("#") and depth > def_depth]
    top = min(depths, default=-1)
    return any(depth == top and text.startswith("raise") for depth, text in lines)


def _always_raises(body: list[ast.stmt]) -> bool:
    """Whether a statement of the body's top level is a ``raise`` that no statement before it can return
    before."""
    for statement in body:
        if isinstance(statement, ast.Raise):
            return True
        if any(isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) for node in ast.walk(statement)):
            return False
    return False
