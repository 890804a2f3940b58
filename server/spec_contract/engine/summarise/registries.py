"""Worker classes a module registers under an algorithm's name, at module level, instead of building them under a
test: which algorithm's runs make each one.

A release may pick its worker from a table rather than an ``if``/``elif`` chain::

    _SPECULATORS = {"eagle3": EagleSpeculator, "dspark": DSparkSpeculator}
    _LAZY = {"dflash": ("pkg.dflash.speculator", "DFlashSpeculator")}   # imported when picked

    @register_speculator("mtp")
    class MTPSpeculator(BaseSpeculator): ...

Each entry is kept as the class as written (a dotted name for a ``(module, class)`` pair) and the formula of the
test that picks it: ``("=", "dspark")``, the comparison the chain would have made (an enum member as key,
``SpeculativeAlgorithm.EAGLE``, is its upper-case name). The contract keeps only the entries whose formula
singles out some of the release's algorithms: a table keyed by anything else (layer names, dtypes) says nothing
of runs.
"""

from __future__ import annotations

import ast

from spec_contract.engine.summarise.selectors import Formula, value_of
from spec_contract.engine.summarise.summary import Chain
from spec_contract.engine.summarise.syntax import chain_of

Registration = tuple[Chain, Formula]  # (the class as written, the test that picks it)


def registrations(stmt: ast.stmt) -> list[Registration]:
    """What one module-level statement registers: a dict display assigned to a name whose keys all name an
    algorithm and whose values are all classes, or a class under a decorator call whose positional arguments all
    name one."""
    if isinstance(stmt, ast.ClassDef):
        named: Chain = (stmt.name,)
        return [(named, found) for deco in stmt.decorator_list
                if isinstance(deco, ast.Call) and (found := _picked(deco.args)) is not None][:1]
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Dict) or not value.keys:
        return []
    out = []
    for key, item in zip(value.keys, value.values):
        picked = _picked([key]) if key is not None else None
        cls = _class(item)
        if picked is None or cls is None:
            return []
        out.append((cls, picked))
    return out


def _picked(args: list[ast.expr]) -> Formula | None:
    """The test that picks what ``args`` name: each a string or an enum member (None: one is something else)."""
    names = [value_of(arg) for arg in args]
    if not names or any(name is None for name in names):
        return None
    return ("=", names[0]) if len(names) == 1 else ("|", *(("=", name) for name in names))


def _class(node: ast.expr) -> Chain | None:
    """A class as a table's value names it: a (dotted) name whose last part is capitalised, or a ``(module,
    class)`` pair of strings, as the dotted name of the class."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2 \
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        module, name = (e.value for e in node.elts)  # type: ignore[attr-defined]
        chain: Chain | None = (*module.split("."), name) if module and name.isidentifier() else None
    else:
        chain = chain_of(node)
    if chain is None or not chain[-1][:1].isupper() or "()" in chain or "[]" in chain:
        return None
    return chain
