"""Which algorithms' runs reach each worker function, read from the worker classes each run builds.

A run of an algorithm builds its own worker: SGLang's ``create_worker`` returns ``DFlashWorkerV2`` under
``if self.is_dflash():`` and ``EAGLEWorkerV2`` under ``elif self.is_eagle():`` (past the earlier returns), vLLM's
model runner builds ``self.drafter = DFlashProposer(...)`` under ``elif self.speculative_config.use_dflash():``.
So a worker class built (or returned) under tests is an *entry* of the algorithms those tests can select, and
its methods, those it inherits included, run in those algorithms' runs only. From there the workers' calls
carry the runs on, narrowed by the tests each call sits under, to a fixed point. A function no entry reaches
and no worker calls is called from outside the workers (the scheduler, the model runner): any run may reach
it. A class of another package that a worker builds under no test that picks runs (the draft's
``TpModelWorker``, its ``ModelRunner``) is the engine's plumbing, which the server builds for every run too. What a line serves is then its function's runs narrowed by the tests it sits under (see
``resolve.algorithms.Selectors``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping

from spec_contract.engine.resolve.algorithms import Selectors, files_of
from spec_contract.engine.resolve.index import ClassKey, FunctionKey, Index
from spec_contract.engine.results import NO_ALGORITHM, Algorithms, Contract
from spec_contract.engine.summarise.selectors import Formula
from spec_contract.engine.summarise.summary import CallFlow, Chain, FunctionFlow

Targets = Mapping[FunctionKey, list[tuple[CallFlow, FunctionKey, int]]]  # a function's calls reaching a worker function
Builds = Callable[[str, Chain], ClassKey | None]  # a class a worker builds, as written in a module: the worker class


def function_runs(functions: Mapping[FunctionKey, FunctionFlow], paths: Mapping[FunctionKey, str], index: Index,
                  owners: Mapping[FunctionKey, ClassKey | None], selectors: Selectors, targets: Targets,
                  built: Builds, routed: Mapping[FunctionKey, frozenset[str]],
                  registered: Iterable[tuple[ClassKey | FunctionKey, Formula]],
                  run_by: Mapping[ClassKey, list[FunctionKey]]) -> dict[FunctionKey, frozenset[str]]:
    """Each worker function → the algorithms whose runs reach it (see the module docstring); ``owners``: the
    worker class each method belongs to; ``targets``: each function's calls that reach a worker function, with the
    function each reaches; ``built`` resolves a class a worker builds to the worker class it is
    (None: not a worker class); ``routed``: the algorithms a routing hands the drafter that runs a method to
    (see ``routed``), which narrow it; ``registered``: the worker classes and functions a table or a call
    registers under an algorithm's name (see ``summarise.registries``): a class is made, a function entered, in
    the runs its formula can be true in; ``run_by``: the worker methods each worker class's instances run.

    A call into a method of a class the workers build (``self.drafter.propose(...)``) runs only on an instance
    some run built: it carries no run that built none (the model runner calls every drafter's ``propose`` from
    one line, but an NGRAM run has built no ``EagleProposer``)."""
    algorithms = selectors.algorithms
    universe = selectors.universe
    methods: dict[ClassKey, list[FunctionKey]] = {}  # a built worker class → the methods its instances run
    # caller → (callee, the tests it sits under, whether it is ``super().m(...)``)
    calls: dict[FunctionKey, list[tuple[FunctionKey, tuple, bool]]] = {}
    builds: dict[FunctionKey, list[tuple[ClassKey, tuple]]] = {}  # builder → (class, the tests it sits under)
    for key, fn in functions.items():
        calls[key] = [(callee, call.selects, call.callee[:2] == ("super", "()")) for call, callee, _ in targets[key]]
        builds[key] = [(cls, selects) for chain, selects in fn.builds if (cls := built(key.module, chain)) is not None]
        for cls, _ in builds[key]:
            if cls not in methods:
                methods[cls] = run_by.get(cls, [])
    tabled: dict[ClassKey | FunctionKey, frozenset[str]] = {}  # a registered one → the runs that pick it
    for chosen, formula in registered:
        tabled[chosen] = tabled.get(chosen, frozenset()) | selectors.may(formula)
        if isinstance(chosen, ClassKey) and chosen not in methods:
            methods[chosen] = run_by.get(chosen, [])
    # a class → the built classes whose instances are one (it or a subclass): what a call into its methods needs
    instances: dict[ClassKey, list[ClassKey]] = {}
    for cls in methods:
        for owner in index.mro(cls):
            instances.setdefault(owner, []).append(cls)
    reached = {target for out in calls.values() for target, _, _ in out} | {m for ms in methods.values() for m in ms} \
        | {chosen for chosen in tabled if isinstance(chosen, FunctionKey)}
    resolved = {cls: frozenset(ms) for cls, ms in methods.items()}
    runs: dict[FunctionKey, frozenset[str]] = {}
    for key in functions:
        declared = files_of(algorithms, paths[key]) if not algorithms.derived else None
        runs[key] = declared if declared is not None else frozenset() if key in reached else universe
    made: dict[ClassKey, frozenset[str]] = dict.fromkeys(methods, frozenset())  # the runs that build each class
    narrowed: dict[tuple, frozenset[str]] = {}

    def under(source: frozenset[str], selects: tuple) -> frozenset[str]:
        if not selects:
            return source
        if selects not in narrowed:
            narrowed[selects] = selectors.runs(selects)
        return source & narrowed[selects]

    def grow(target: FunctionKey, given: frozenset[str]) -> bool:
        before = runs[target]
        if given <= before:
            return False
        runs[target] = before | given
        return True

    for chosen, given in tabled.items():
        if isinstance(chosen, FunctionKey):
            grow(chosen, given)
            continue
        made[chosen] = given
        for method in methods[chosen]:
            grow(method, given)
    # to a fixed point, by a worklist (the sets only grow): a function is visited again only when the runs reaching
    # it grew, or a class its calls dispatch on was built in more runs
    dispatching: dict[ClassKey, set[FunctionKey]] = {}  # a built class → the callers whose calls dispatch on it
    for caller, out in calls.items():
        for target, _, _ in out:
            held_by = owners.get(target)
            for cls in instances.get(held_by, ()) if held_by is not None else ():
                dispatching.setdefault(cls, set()).add(caller)
    pending = deque(functions)
    queued = set(pending)

    def again(key: FunctionKey) -> None:
        if key not in queued:
            queued.add(key)
            pending.append(key)

    while pending:
        key = pending.popleft()
        queued.discard(key)
        for cls, selects in builds[key]:
            # a class of another package built under no test that picks runs is the engine's own plumbing
            # (the draft's TpModelWorker, its ModelRunner): the server builds it for every run too
            plumbing = cls.module.rpartition(".")[0] != key.module.rpartition(".")[0] \
                and under(universe, selects) >= universe
            given = universe if plumbing else under(runs[key], selects)
            if not given <= made[cls]:
                made[cls] = made[cls] | given
                for caller in dispatching.get(cls, ()):
                    again(caller)
            for method in methods[cls]:
                if grow(method, given):
                    again(method)
        source = runs[key]
        for target, selects, to_super in calls[key] if source else ():
            if source <= runs[target]:
                continue  # what the call carries is a part of ``source``: not worth reading its tests for
            given = under(source, selects)
            held_by = owners.get(target)
            if held_by is not None and held_by in instances:
                # a call dispatches on the instance: a built class that overrides the method runs its own
                # (vLLM's DraftModelProposer never runs the base's ``_maybe_share_embeddings``), but one
                # that asks ``super()`` for it
                dispatched = [cls for cls in instances[held_by] if to_super or target in resolved[cls]]
                given = given & frozenset().union(*(made[cls] for cls in dispatched))
            if grow(target, given):
                again(target)
    names = {n.upper(): n for n in algorithms.names}
    for key, picked in routed.items():
        wanted = frozenset(names[p.upper()] for p in picked if p.upper() in names)
        if wanted:
            runs[key] = runs[key] & wanted
    return runs


def served_by(runs: frozenset[str], selectors: Selectors) -> frozenset[str] | None:
    """What a line serves, from the runs that reach it: None when every run may (nothing narrows it), else the
    algorithms (a run without speculative decoding is none of them)."""
    if runs >= selectors.universe:
        return None
    return runs - {NO_ALGORITHM}


class Served:
    """What a line of a worker function serves, from a derived contract and the workers it was derived from
    (for lines read outside the contract's uses: a capability's check, the proposers' reads)."""

    def __init__(self, contract: Contract, functions: Iterable[FunctionFlow]) -> None:
        self._runs = dict(contract.function_runs)
        self._selectors = Selectors(contract.release or Algorithms((), frozenset()), functions)

    def of(self, module: str, qualname: str, selects: tuple) -> frozenset[str] | None:
        runs = self._runs.get((module, qualname), self._selectors.universe)
        return served_by(runs & self._selectors.runs(selects) if selects else runs, self._selectors)
