"""Worker classes a module registers under an algorithm's name, at module level, instead of building them under a
test: which algorithm's runs make each one.

A release may pick its worker from a table rather than an ``if``/``elif`` chain::

    _SPECULATORS = {"eagle3": EagleSpeculator, "dspark": DSparkSpeculator}
    _LAZY = {"dflash": ("pkg.dflash.speculator", "DFlashSpeculator")}   # imported when picked

    @register_speculator("mtp")
    class MTPSpeculator(BaseSpeculator): ...

    register_speculative_algorithm("EAGLE3", worker_cls=_create_eagle_worker, flags=("EAGLE", "EAGLE3"))

(the last is SGLang 0.5.6's: a call whose first argument is the name registers each class or function it passes,
here the factory that builds the EAGLE workers). Each entry is kept as the class or function as written (a dotted
name for a ``(module, class)`` pair) and the formula of the test that picks it: ``("=", "dspark")``, the comparison the chain would have made (an enum member as key,
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
    algorithm and whose values are all classes, a class under a decorator call whose positional arguments all
    name one, or each name a call passes after a first argument that names one."""
    if isinstance(stmt, ast.ClassDef):
        named: Chain = (stmt.name,)
        return [(named, found) for deco in stmt.decorator_list
                if isinstance(deco, ast.Call) and (found := _picked(deco.args)) is not None][:1]
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
    if isinstance(value, ast.Call):
        picked = _picked(value.args[:1])
        given = (*value.args[1:], *(keyword.value for keyword in value.keywords))
        return [(chain, picked) for arg in given if picked is not None and (chain := chain_of(arg)) is not None
                and "()" not in chain and "[]" not in chain]
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
