"""Tests that may select a speculative algorithm, kept as small formulas for the contract to evaluate.

Which algorithms a worker line serves is decided by the tests it sits under (``if spec_algorithm.is_eagle3():``,
``if is_dspark and hasattr(model, "x"):``, ``elif self.speculative_config.method == "eagle3":``, the early
``if not self.use_aux_hidden_state_outputs: return``). A file's summary cannot know what ``is_dspark`` means:
that is read from the release (:mod:`spec_contract.engine.resolve.algorithms`). So each test is kept as a
formula over the words that may decide it, and the contract evaluates it once the release's algorithms are
known. A formula is a nested tuple (hashable, picklable, shared by every use under the same test):

* ``("n", word)``: a name, an attribute or a call with no arguments (``is_eagle3``, ``dflash_use_aux_hidden_state``);
* ``("=", value)``: a comparison with a string or an enum member (``method == "eagle3"``,
  ``algorithm == SpeculativeAlgorithm.EAGLE``);
* ``("!", f)``, ``("&", f, g, ...)``, ``("|", f, g, ...)`` (``ALWAYS`` and ``NEVER`` are the empty ones: a
  constant ``True``, ``False`` or ``None``).

Anything else (``hasattr(m, "x")``, ``x is None``, a call with arguments) cannot select an algorithm: it is
``UNKNOWN``, ``("?",)``, which may be true or false in any run (so ``not (is_dspark and hasattr(m, "x"))`` can
hold in a DSPARK run too). A test with nothing but unknowns is None: it says nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar, cast

Formula = tuple  # see the module docstring
Selects = tuple[Formula, ...]  # the tests a line sits under, all of them true there
UNKNOWN: Formula = ("?",)
ALWAYS: Formula = ("&",)  # true in every run (an empty conjunction)
NEVER: Formula = ("|",)  # true in none (an empty disjunction)
_T = TypeVar("_T")


def formula(test: ast.expr) -> Formula | None:
    """The formula of ``test`` (None: nothing in it may select an algorithm). A name and an attribute, most of
    the values a worker passes by keyword, are read here as ``_formula`` reads them, without its call."""
    if type(test) is ast.Name:
        return ("n", test.id)
    if type(test) is ast.Attribute:
        return ("n", test.attr)
    found = _formula(test)
    return None if found == UNKNOWN else found


def _formula(test: ast.expr) -> Formula:
    # ``type(x) is``: parsed nodes are never subclassed, and a cold scan reads every test and assigned value
    if type(test) is ast.Name:
        return ("n", test.id)
    if type(test) is ast.Attribute:
        return ("n", test.attr)
    if type(test) is ast.Call:
        if test.args or test.keywords:  # ``getattr(self, "_local", None)``: the attribute, or nothing true
            return ("n", cast(ast.Constant, test.args[1]).value) if _reads_optional(test) else UNKNOWN
        func = test.func
        if type(func) is ast.Attribute:
            return ("n", func.attr)
        return ("n", func.id) if type(func) is ast.Name else UNKNOWN
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return negate(_formula(test.operand))
    if type(test) is ast.BoolOp:
        parts = tuple([_formula(value) for value in test.values])
        if parts.count(UNKNOWN) == len(parts):
            return UNKNOWN
        return ("&" if type(test.op) is ast.And else "|", *parts)
    if type(test) is ast.Compare and len(test.ops) == 1:
        return _comparison(test.left, test.ops[0], test.comparators[0])
    if type(test) is ast.Constant:
        return ALWAYS if test.value else NEVER
    if type(test) is ast.IfExp:  # ``is_dflash() if algorithm is not None else False``
        test_, body, orelse = _formula(test.test), _formula(test.body), _formula(test.orelse)
        if (body, orelse) == (UNKNOWN, UNKNOWN):
            return UNKNOWN
        found = ("|", ("&", test_, body), ("&", negate(test_), orelse))
        return UNKNOWN if _larger_than(found, _MOST_PARTS) else found
    return UNKNOWN


# The parts a formula may have (counted as a tree: a part it holds twice counts twice). A conditional expression
# holds its test twice, so ``a if (b if (c if …) else …) else …`` doubles with each level, and every reading of
# the formula walks it whole; a chain of arms (``a if c else b if d else …``) nests as deep as it is long, past
# the interpreter's depth for the readings that recurse. No test that selects an algorithm comes near this size:
# a larger one may be true or false in any run, as if it named nothing
_MOST_PARTS = 64


def _larger_than(f: Formula, most: int) -> bool:
    """Whether ``f`` has more than ``most`` parts; walks at most that many."""
    pending = [f]
    while pending:
        most -= 1
        if most < 0:
            return True
        current = pending.pop()
        if current[0] in ("&", "|", "!"):
            pending.extend(current[1:])
    return False


def _reads_optional(call: ast.Call) -> bool:
    """``getattr(obj, "name", <a falsy constant>)``: true exactly when ``obj.name`` is."""
    args = call.args
    return type(call.func) is ast.Name and call.func.id == "getattr" and len(args) == 3 and not call.keywords \
        and type(args[1]) is ast.Constant and isinstance(args[1].value, str) \
        and type(args[2]) is ast.Constant and not args[2].value


def negate(f: Formula) -> Formula:
    if f == UNKNOWN:
        return f
    return f[1] if f[0] == "!" else ("!", f)


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr) -> Formula:
    if type(op) is ast.Is or type(op) is ast.IsNot:
        if type(right) is ast.Constant and right.value is None \
                and (type(left) is ast.Name or type(left) is ast.Attribute
                     or type(left) is ast.Call and _reads_optional(left)
                     and cast(ast.Constant, left.args[2]).value is None):  # ``self._state is not None``: set, true
            held = _formula(left)
            return held if type(op) is ast.IsNot else negate(held)
        if type(right) is ast.Attribute and (named := value_of(right)) is not None:
            # ``self is SpeculativeAlgorithm.NONE``: a registry's members are singletons
            return ("=", named) if type(op) is ast.Is else ("!", ("=", named))
        return UNKNOWN
    if type(op) is ast.Eq or type(op) is ast.NotEq:
        value = value_of(left)
        if value is None:
            value = value_of(right)
            if value is None:
                return UNKNOWN
        return ("=", value) if type(op) is ast.Eq else ("!", ("=", value))
    if type(op) is ast.In or type(op) is ast.NotIn:
        values = _values(right)
        if not values:
            return UNKNOWN
        found: Formula = ("=", values[0]) if len(values) == 1 else ("|", *(("=", v) for v in values))
        return found if type(op) is ast.In else ("!", found)
    return UNKNOWN


def value_of(node: ast.expr) -> str | None:
    """What a comparison may name an algorithm by: a string, or an upper-case enum member (``Algo.EAGLE3``)."""
    if type(node) is ast.Constant:
        return node.value if isinstance(node.value, str) else None
    if type(node) is ast.Attribute and node.attr.isupper():
        return node.attr
    return None


def _values(node: ast.expr) -> list[str]:
    """``("a", "b")``, ``[Algo.A, Algo.B]``, ``{…}`` (or ``frozenset(…)`` of one), or ``get_args(SomeLiteral)``
    (written ``@SomeLiteral``: the release's reader knows the aliases' strings)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in COLLECTION_CALLS \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [value_of(e) for e in node.elts]
        return [v for v in values if v is not None] if all(v is not None for v in values) else []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_args" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
        return ["@" + node.args[0].id]
    return []


COLLECTION_CALLS = frozenset({"frozenset", "set", "tuple", "list"})  # a call whose one argument is the collection


def returned(body: list[ast.stmt]) -> Formula | None:
    """The formula a predicate returns: a body that is (after a docstring) one ``return <test>``, or that
    ends so after guards returning a false constant and assignments (``if self.method != "mtp": return False``,
    ``layers = getattr(...)``, ``return min(layers, n) > 1``): then it holds only where no guard fired, whatever
    the rest says (vLLM's ``use_multi_module_mtp``: MTP runs only)."""
    statements = []
    for stmt in body:  # any other statement (a call, a loop) makes it no predicate: most bodies stop at the first
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant:
            continue
        if type(stmt) not in _PREDICATE_STATEMENTS:
            return None
        statements.append(stmt)
    if not statements or not isinstance(statements[-1], ast.Return) or statements[-1].value is None:
        return None
    guards: list[Formula] = []
    for stmt in statements[:-1]:
        if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and _returns_false(stmt.body[0]):
            guards.append(negate(_formula(stmt.test)))
        elif not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            return None
    value = statements[-1].value
    if not guards:
        return None if isinstance(value, ast.Constant) else formula(value)
    parts = (*guards, _formula(value))
    return None if all(part == UNKNOWN for part in parts) else ("&", *parts)


_PREDICATE_STATEMENTS = frozenset({ast.If, ast.Assign, ast.AnnAssign, ast.Return})  # what ``returned`` reads


def _returns_false(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) and (stmt.value is None or isinstance(stmt.value, ast.Constant)
                                             and not stmt.value.value)


def held(f: Formula) -> frozenset[str]:
    """The words every run past the test holds true, where :func:`words` gives any word that may decide it: both
    words of an ``and``, only those every operand of an ``or`` holds (past ``if self._local is not None or n > 0:``
    ``_local`` may be unset), and under a ``not``, by De Morgan. What a line needs the model to have (a state a
    test stands behind, see ``state_guards``) is read the same way, through :func:`held_as`. None for a test nested
    past the interpreter's depth (a conditional expression of hundreds of arms)."""
    return held_as(f, _word)


def held_as(f: Formula, leaf: Callable[[str], frozenset[_T]]) -> frozenset[_T]:
    """What every run past the test holds, each word read as ``leaf`` says (:func:`held`: the word itself): the
    union over an ``and``, what every operand of an ``or`` holds, De Morgan under a ``not``. Read per word before
    the ``or`` is met, two different words may hold the same thing: past ``if self._local or self._local_fn:``
    where each is set only behind ``hasattr(self.model, "m")``, neither word is held but ``m`` is (see
    ``state_guards.required_past``)."""
    try:
        return _held(f, leaf)
    except RecursionError:
        return frozenset()


def _word(word: str) -> frozenset[str]:
    return frozenset((word,))


def _held(f: Formula, leaf: Callable[[str], frozenset[_T]]) -> frozenset[_T]:
    kind = f[0]
    if kind == "n":
        return leaf(f[1])
    if kind == "&":
        return frozenset().union(*(_held(part, leaf) for part in f[1:]))
    if kind == "|":  # the operands no run can pass hold anything: only the others count
        parts = [_held(part, leaf) for part in f[1:] if not _never(part)]
        return frozenset.intersection(*parts) if parts else frozenset()
    if kind == "!" and f[1][0] in ("&", "|") and len(f[1]) > 1:
        return _held(("|" if f[1][0] == "&" else "&", *(negate(part) for part in f[1][1:])), leaf)
    return frozenset()


def _never(f: Formula) -> bool:
    """Whether no run passes the test: a false constant, an ``and`` holding one, an ``or`` of only such."""
    return f == NEVER or f == ("!", ALWAYS) or f[0] == "&" and any(_never(part) for part in f[1:]) \
        or f[0] == "|" and len(f) > 1 and all(_never(part) for part in f[1:])


@lru_cache(maxsize=4096)
def held_by(selects: Selects) -> frozenset[str]:
    """:func:`held` of every test a line runs past (remembered: the lines of one branch share their tests)."""
    return frozenset().union(*(held(f) for f in selects))


def words(f: Formula) -> frozenset[str]:
    """The words of the tests a line runs past, by name: ``is_dspark`` of ``is_dspark and hasattr(m, "x")``, each
    word of an ``or`` (a use past ``if use_fast or use_turbo:`` runs only when one of them is on: neither makes it
    certain), and under a ``not``, those its negation names (past ``if self._local is None or n == 0: return``,
    ``_local`` is set)."""
    kind = f[0]
    if kind == "n":
        return frozenset((f[1],))
    if kind in ("&", "|"):
        return frozenset().union(*[words(part) for part in f[1:]])
    if kind == "!" and f[1][0] in ("&", "|") and len(f[1]) > 1:  # De Morgan: ``not (a or b)`` is ``not a and not b``
        return words(("|" if f[1][0] == "&" else "&", *(negate(part) for part in f[1][1:])))
    return frozenset()
