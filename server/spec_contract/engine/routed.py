"""The draft classes each worker method's draft uses can meet, when the workers route draft models to drafter
classes by their class (see :mod:`~spec_contract.engine.summarise.routes`).

A drafter the routing returns under ``isinstance(model, C)`` is handed instances of ``C`` only; the default of
an algorithm is handed what that algorithm's class gate lets through (``not isinstance(draft_model, G)`` then
``raise``), or any draft when nothing gates it. A drafter returned under a test of the draft config's
architectures is handed the class the engine's registry loads for them (the name itself where no registry
says), and the one returned after such tests any draft but those. A method's draft uses meet the classes handed
to the drafters that run it (the drafter itself, or one that inherits it without overriding): when each of
those is handed named classes only, a class that is none of them never meets the use. A worker class no
routing returns that runs the method may be handed any draft (vLLM's ``DSparkSpeculator`` inherits from the
routed ``DFlashSpeculator``). Without routing, nothing is narrowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from spec_contract.engine.resolve.index import ClassKey, FunctionKey, Index
from spec_contract.engine.summarise.summary import FunctionFlow

Meets = tuple[tuple[str, ...], tuple[str, ...]]  # (is one of these, and none of those): classes by name


class _Drafter(NamedTuple):
    meets: list[Meets] | None  # None: any draft
    algorithms: set[str]  # the algorithms whose runs pick it (empty: cannot tell)


_ANY = _Drafter(None, set())  # a drafter handed any draft, by runs the routing does not tell

DraftTest = Callable[[FunctionKey, str], bool]  # whether the dotted expression stands for the draft model there


def _handed(functions: dict[FunctionKey, FunctionFlow], is_draft: DraftTest,
            loaded_as: Callable[[str], str]) -> dict[str, _Drafter]:
    """Drafter name → the classes it is handed, and the algorithms that pick it; ``loaded_as``: the class name
    an architecture is loaded as."""
    routes = [route for fn in functions.values() for route in fn.routes]
    gates: dict[str, set[str]] = {}
    for key, fn in functions.items():
        for kind, tested, subject, algorithms in fn.routes:
            if kind != "gate" or not is_draft(key, subject):
                continue  # a class test of the target is no draft gate
            for algorithm in algorithms:
                gates.setdefault(algorithm, set()).update(tested)
    handed: dict[str, _Drafter] = {}
    for kind, tested, drafter, algorithms in routes:
        if kind == "gate":
            continue
        found = handed.setdefault(drafter, _Drafter([], set()))
        found.algorithms.update(algorithms)
        if found.meets is None:
            continue
        but: tuple[str, ...] = ()
        if kind == "arch":
            tested = tuple(loaded_as(name) for name in tested)
        elif kind == "rest":  # any draft but those the architectures before it pick
            tested, but = ("*",), tuple(loaded_as(name) for name in tested)
        elif kind == "default":
            if not all(a in gates for a in algorithms):
                handed[drafter] = found._replace(meets=None)  # a default nothing gates takes any draft
                continue
            tested = tuple(sorted({name for a in algorithms for name in gates[a]}))
            # the classes routed to another drafter first, under the same algorithm or any, never get here
            but = tuple(sorted({name for k, names, other, where in routes if k == "route" and other != drafter
                                and (not where or set(where) & set(algorithms)) for name in names}))
        found.meets.append((tested, but))
    return handed


def routed_drafts(functions: dict[FunctionKey, FunctionFlow], is_draft: DraftTest) -> tuple[str, ...]:
    """The class names the routing tests to pick a drafter for, and those a draft must be of: draft models,
    never served as targets."""
    return tuple(sorted({name for key, fn in functions.items() for kind, names, subject, _ in fn.routes
                         if kind == "route" or kind == "gate" and is_draft(key, subject) for name in names}))


def routed_uses(functions: dict[FunctionKey, FunctionFlow], classes: dict[FunctionKey, ClassKey | None],
                index: Index, is_draft: DraftTest) -> dict[FunctionKey, tuple[tuple[Meets, ...], frozenset[str]]]:
    """Worker method → the draft classes its draft uses can meet (empty: any), and the algorithms whose runs
    reach it (empty: cannot tell), for the methods some routed drafter runs."""
    handed = _handed(functions, is_draft, index.loaded_as)
    if not handed:
        return {}
    workers = {key.qualname.rsplit(".", 1)[-1]: key for key in set(classes.values()) if key is not None}
    # a worker class no routing returns may run a routed one's methods with any draft (see the docstring)
    drafters = [(index.mro(key), handed.get(name, _ANY)) for name, key in sorted(workers.items())]
    instances: dict[ClassKey, list[tuple[tuple[ClassKey, ...], _Drafter]]] = {}  # a class → the drafters that are one
    for mro, got in drafters:
        for cls in mro:
            instances.setdefault(cls, []).append((mro, got))
    out: dict[FunctionKey, tuple[tuple[Meets, ...], frozenset[str]]] = {}
    for key in functions:
        owner = classes[key]
        if owner is None or all(got is _ANY for _, got in instances.get(owner, ())):
            continue  # no routed drafter can run it
        method = key.qualname.rsplit(".", 1)[-1]
        running: list[_Drafter] = []
        for mro, got in instances[owner]:
            first = next((c for c in mro if FunctionKey(c.module, f"{c.qualname}.{method}") in functions), None)
            if first == owner:  # the drafter runs this very method: no class before it overrides it
                running.append(got)
        if all(got is _ANY for got in running):  # no routed drafter runs it (or none at all)
            continue
        meets = () if any(got.meets is None for got in running) else tuple(
            dict.fromkeys(m for got in running for m in got.meets or ()))
        algorithms = frozenset().union(*(got.algorithms for got in running))
        out[key] = (meets, algorithms if all(got.algorithms for got in running) else frozenset())
    return out
