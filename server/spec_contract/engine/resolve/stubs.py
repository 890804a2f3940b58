"""Registered classes that can never be built: their ``__init__`` always raises.

An engine registers a stand-in where a model does not run on a platform (vLLM 0.32.0's
``models/deepseek_v4/cpu/mtp.py``: ``DeepSeekV4MTP.__init__`` raises ``NotImplementedError("… not implemented
on CPU.")``; ``vl_stub.py`` does the same for the vision model after ``super().__init__()``). A launch that
names one dies in the constructor, whatever the class lacks: no worker ever calls a member of it, so it plays
no role, and the check neither lists nor counts it. The class that runs on the other platforms has the same
name and is checked as usual.

The ``__init__`` the class's instances run (its own, or the first along its MRO) is read from its ``def``
statement (``resolve.source_defs``), and only when that statement's text holds ``raise``. It always raises when
a statement of its body's top level is a ``raise`` (or an ``if`` whose branches both always raise) and no
statement before it can return: what comes before (``super().__init__()``, a log line) runs and then the
constructor raises. A ``raise`` under a condition (``if not supported: raise``) is a refusal of some
configurations, not a stub.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.source_defs import definition_at


def never_built(index: Index, key: ClassKey, text: Callable[[str], str | None]) -> bool:
    """Whether every construction of the class raises (see the module docstring)."""
    found = index.provision(key, "__init__")
    if found is None or found.member is None:
        return False
    path = index.path_of(found.owner.module)
    source = text(path) if path is not None else None
    function = definition_at(source, found.member.span.line, holding="raise") if source is not None else None
    return function is not None and function.name == "__init__" and _always_raises(function.body)


def _always_raises(body: list[ast.stmt]) -> bool:
    for statement in body:
        if isinstance(statement, ast.Raise):
            return True
        if isinstance(statement, ast.If) and statement.orelse and _always_raises(statement.body) \
                and _always_raises(statement.orelse):
            return True
        if any(isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) for node in ast.walk(statement)):
            return False
    return False
