"""Fixes the engine declines, as values with their words: the one place a front end learns that, and why, a
fix cannot be made, instead of reading meaning into a missing edit.

The file-level refusals (the file does not parse, or nests code deeper than the stub generator can walk)
are known from ``ast`` alone, before libcst is loaded, so the language server can leave such a fix out of
the actions it lists instead of offering one that resolves to nothing.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from spec_contract.engine.results import Finding, TextEdit

# libcst's visitors recurse several frames per level of nesting and give up between 100 and 300 levels,
# depending on the shape (nested calls and lists first). SGLang's deepest file nests 47 levels.
MAX_DEPTH = 100
UNREAD = "the file could not be read"
LIBCST = "the stub generator (libcst) cannot read the file"


@dataclass(frozen=True)
class Refusal:
    """A class whose fix is not made (its file does not parse, is nested too deeply, …), and why."""

    path: str
    class_name: str
    why: str

    def __str__(self) -> str:
        return f"{self.class_name}: {self.why}"


@dataclass(frozen=True)
class Added:
    """A member an edit adds to a class, and the finding it answers (for a member forwarded past a capability
    gate, the capability finding)."""

    path: str
    class_name: str
    member: str
    delegate: str
    finding: Finding


@dataclass(frozen=True)
class Fixes:
    """The edits of a fix, what they add, and the classes it leaves alone: a class is fixed or refused, never
    silently neither."""

    edits: tuple[TextEdit, ...] = ()
    refused: tuple[Refusal, ...] = ()
    added: tuple[Added, ...] = ()

    @property
    def why(self) -> str:
        """The refusals in one line (empty when there are none)."""
        return "; ".join(str(r) for r in self.refused)


@functools.lru_cache(maxsize=8)  # listing actions asks again on every cursor move over the same text
def file_refusal(source: str) -> str | None:
    """Why no generated code can go into this file, or None when the stub generator may try."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        return f"the file does not parse: {getattr(err, 'msg', err)}"
    if too_deep(tree):
        return f"the file nests expressions deeper than {MAX_DEPTH} levels; it is left alone"
    return None


def too_deep(tree: ast.AST) -> bool:
    """Whether any node of ``tree`` is nested more than ``MAX_DEPTH`` levels deep (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
