"""The names a wrapper module binds at its top level, for the forwards the stub generator writes into it.

A forward copies the inner member's defaults and annotations, which only work where the wrapper's module has
their names. They are read from the module's ``ast`` once per file (libcst reads only the classes edited), each
with the line of its statement: defaults, and annotations unless ``from __future__ import annotations``
postpones them, are evaluated when the class body runs, so only names bound above the class count for them.
"""

from __future__ import annotations

import ast
import builtins

_BUILTINS = frozenset(dir(builtins))


class Names:
    """Names usable in a wrapper module's class on one line: at run time (defaults), and in annotations."""

    def __init__(self, top: TopLevel, class_line: int) -> None:
        self._top = top
        self._line = class_line

    def at_run_time(self, name: str) -> bool:
        """Whether ``name`` is a builtin or bound above the class when its body runs (not only for type checkers)."""
        return name in _BUILTINS or self._top.first.get(name, self._line) < self._line

    def in_annotations(self, name: str) -> bool:
        """As :meth:`at_run_time`, or, when ``from __future__ import annotations`` postpones annotations, any
        top-level name (also bound below the class, or only for type checkers)."""
        return self.at_run_time(name) or (self._top.future and name in self._top.anywhere)


class TopLevel:
    """What a module's top level binds, walked into ``if``/``try``/``with`` blocks (an import under them is the
    module's too): the first 0-based line each name is bound on at run time (not under ``if TYPE_CHECKING:``),
    and every name bound at all."""

    def __init__(self, tree: ast.Module) -> None:
        self.first: dict[str, int] = {}
        self.anywhere: set[str] = set()
        self.future = False  # from __future__ import annotations
        self._walk(tree.body, False)

    def names(self, class_line: int) -> Names:
        """The names a member of the class on ``class_line`` (0-based) can use."""
        return Names(self, class_line)

    def _walk(self, body: list[ast.stmt], checking: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
                self._walk(stmt.body, True)
                self._walk(stmt.orelse, checking)  # an elif is an ordinary if statement of its own
            elif isinstance(stmt, ast.If):
                self._walk(stmt.body + stmt.orelse, checking)
            elif isinstance(stmt, ast.Try):
                self._walk(stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse + stmt.finalbody,
                           checking)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self._walk(stmt.body, checking)
            else:
                names = {stmt.name} if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    else bound_names(stmt)
                self.future = self.future or _is_future_annotations(stmt)
                self.anywhere |= names
                for name in names if not checking else ():
                    self.first[name] = min(self.first.get(name, stmt.lineno - 1), stmt.lineno - 1)


def bound_names(stmt: ast.stmt) -> set[str]:
    """Names a simple statement binds in its scope (assignments and imports)."""
    if isinstance(stmt, ast.Assign):
        return set().union(*(_target_names(t) for t in stmt.targets))
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return _target_names(stmt.target)
    if isinstance(stmt, ast.Import):  # ``import a.b`` binds ``a``
        return {alias.asname or alias.name.split(".")[0] for alias in stmt.names}
    if isinstance(stmt, ast.ImportFrom) and not any(alias.name == "*" for alias in stmt.names):
        return {alias.asname or alias.name for alias in stmt.names}
    return set()


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in target.elts))
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _is_future_annotations(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
            and any(alias.name == "annotations" for alias in stmt.names))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" and isinstance(test.value, ast.Name)
        and test.value.id == "typing")
