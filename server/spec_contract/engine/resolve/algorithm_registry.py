"""The algorithms of a release that registers them at import time instead of enumerating them.

SGLang 0.5.6's ``SpeculativeAlgorithm`` is a plain class with a registry, not an ``Enum``: its names exist only
as the module-level calls that register them, and its predicates test tags given there::

    class SpeculativeAlgorithm:
        @classmethod
        def register(cls, name, *, aliases=None): ...
        def is_eagle3(self):
            return self._has_flag("EAGLE3")

    def register_speculative_algorithm(name, worker_cls, *, aliases=None, flags=None):
        algorithm = SpeculativeAlgorithm.register(name, aliases=aliases)
        ...

    SpeculativeAlgorithm.register("NONE")
    register_speculative_algorithm("EAGLE3", worker_cls=_create_eagle_worker, flags=("EAGLE", "EAGLE3"))

A *registration* is a module-level call, on the class (``Cls.<method>``) or to a function of the module whose
body names the class, whose first argument is a string: that string names an algorithm. Every other string the
call passes in a tuple or list (its tags: ``flags``, ``aliases``) tags it. A predicate of the class that returns
``self.<method>("TAG")`` is then true for the algorithms tagged ``TAG`` (a tag no registration gives selects
nothing it can tell: any run). Nothing is run; a fork that registers its own algorithm the same way gets it read
the same way.
"""

from __future__ import annotations

import ast

from spec_contract.engine.summarise.selectors import Formula


def registered_names(tree: ast.Module, name: str) -> tuple[list[str], dict[str, list[str]]]:
    """(names, tag → the names it tags) of the registrations of the class ``name`` in ``tree`` (see the module
    docstring); no names when it has none."""
    registrars = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                  and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))}
    names: list[str] = []
    tags: dict[str, list[str]] = {}
    for node in tree.body:
        call = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not isinstance(call, ast.Call) or not call.args or not _registers(call.func, name, registrars):
            continue
        first = call.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value):
            continue
        registered = first.value
        if registered not in names:
            names.append(registered)
        for value in (*call.args[1:], *(keyword.value for keyword in call.keywords)):
            for tag in _strings(value):
                if registered not in tags.setdefault(tag.upper(), []):
                    tags[tag.upper()].append(registered)
    return names, tags


def tag_predicate(method: ast.FunctionDef, tags: dict[str, list[str]]) -> Formula | None:
    """The formula of a predicate whose body (after a docstring) is ``return self.<m>("TAG")``: the algorithms
    registered with that tag (None: another body, or a tag no registration gives)."""
    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    value = body[0].value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"
            and len(value.args) == 1 and not value.keywords
            and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str)):
        return None
    tagged = tags.get(value.args[0].value.upper())
    if not tagged:
        return None
    return ("=", tagged[0]) if len(tagged) == 1 else ("|", *(("=", name) for name in tagged))


def _registers(func: ast.expr, name: str, registrars: set[str]) -> bool:
    """Whether a call of ``func`` registers on the class ``name``: ``Cls.<method>(…)`` or a registrar's call."""
    if isinstance(func, ast.Attribute):
        return isinstance(func.value, ast.Name) and func.value.id == name
    return isinstance(func, ast.Name) and func.id in registrars


def _strings(value: ast.expr) -> list[str]:
    """The strings of a tuple, list or set of string constants (none for anything else)."""
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)) and value.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return [e.value for e in value.elts]  # type: ignore[attr-defined]
    return []
