"""Fixes the engine declines, as values with their words: the one place a front end learns that, and why, a
fix cannot be made, instead of reading meaning into a missing edit.

What ``ast`` alone tells (the file does not parse, the class is not in it, the class nests code deeper than
libcst can walk) is known here before libcst is loaded; the stub generator adds what only libcst can tell.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
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
    delegate: str  # a forward: the attribute path it forwards to; an implementation: empty
    finding: Finding
    like: str | None = None  # an implementation: the dotted name of the class whose member it is modelled on


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


class StubError(ValueError):
    """The wrapper source does not parse, the class is not in it, or libcst cannot edit it (code nested
    deeper than its recursive visitors go, an expression longer than its parser takes)."""


@functools.lru_cache(maxsize=2)  # a wrapper file and the inner file it forwards to; a tree is large (about 1 KB a line)
def parsed(source: str) -> ast.Module | str:
    """The file's tree, or why there is none."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        return f"the file does not parse: {getattr(err, 'msg', err)}"


def file_refusal(source: str) -> str | None:
    """Why no generated code can go into this file as libcst rewrites it whole (a Protocol declared on a class
    and imported), or None when it may try."""
    tree = parsed(source)
    if isinstance(tree, str):
        return tree
    if too_deep(tree):
        return f"the file nests expressions deeper than {MAX_DEPTH} levels; it is left alone"
    return None


def class_node(source: str, dotted: str) -> ast.ClassDef:
    """The class ``A.B`` of a module, also under ``if``/``try``/``with``, or :class:`StubError`: of a name
    defined twice, the last definition (the one the runtime uses, as ``deferred.find_class`` takes it), so
    that the forwards and the suppression comment land in the class the check reads."""
    classes = _classes(source)
    if isinstance(classes, str):
        raise StubError(classes)
    found = classes.get(dotted)
    if found is None:
        raise StubError(f"class {dotted} not found")
    return found


@functools.lru_cache(maxsize=2)  # listing actions asks again on every cursor move over the same text
def _classes(source: str) -> dict[str, ast.ClassDef] | str:
    """Every class of a module by its dotted name in it (see :func:`class_node`), or why the module does not
    parse: listed once per text, not once per class looked up in it."""
    tree = parsed(source)
    if isinstance(tree, str):
        return tree
    out: dict[str, ast.ClassDef] = {}

    def index(body: list[ast.stmt], prefix: str) -> None:
        last = {cls.name: cls for cls in _class_defs(body)}
        for name, cls in last.items():
            out[prefix + name] = cls
            index(cls.body, f"{prefix}{name}.")

    index(tree.body, "")
    return out


def _class_defs(body: list[ast.stmt]) -> Iterable[ast.ClassDef]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [handler.body for handler in getattr(stmt, "handlers", [])]
            for block in blocks:
                yield from _class_defs(block)


def too_deep(tree: ast.AST) -> bool:
    """Whether any node of ``tree`` is nested more than ``MAX_DEPTH`` levels deep (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
