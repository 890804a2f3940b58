"""Deriving the contract: which members workers use on the target and on the draft model object.

A use ``<receiver>.<member>`` belongs to a role when the receiver, or any expression it may stand for,
matches one of the profile's receiver patterns. "May stand for" is a small may-alias analysis over the
worker files, iterated to a fixed point:

* local assignments and tuple unpacking (``target_runner = self.target_worker.model_runner``),
* ``self.x = ...`` attributes of a worker class, through its bases,
* ``for runner in self.draft_runner_list`` (the loop variable stands for an element),
* parameters of workspace functions and methods, bound by position and keyword at every call site
  (``helper(target_model=target_runner.model)``, ``Worker(target_worker=...)``),
* a local a method returns, as the attribute its class stores the call's value in,
* a method or property that returns a part of its instance (``self._target()``, ``self.target_model``), as
  that part.

A use one attribute further (``self.model.model.set_skip_topk``, through a delegate attribute the profile names)
is of a member of the model's own inner model: ``model.set_skip_topk`` on the model.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import replace
from typing import Any, NamedTuple

from spec_contract.engine.config import Config, ReceiverPattern
from spec_contract.engine.reach import closure
from spec_contract.engine.read.globs import glob_match
from spec_contract.engine.resolve.algorithms import Selectors, declared_algorithms
from spec_contract.engine.resolve.index import ClassKey, FunctionKey, Index, methods_run
from spec_contract.engine.resolve.runners import RunnerRefusals
from spec_contract.engine.results import NO_ALGORITHM, Algorithms, CallSite, Contract, ContractEntry, Phase, Role
from spec_contract.engine.routed import routed_drafts, routed_uses
from spec_contract.engine.runs import function_runs, served_by
from spec_contract.engine.start_up import called_at_start_up, start_up_functions, start_up_named
from spec_contract.engine.state_guards import (
    guards_of,
    local_values,
    required,
    required_past,
    state_guards,
    through_locals,
    validated_flags,
)
from spec_contract.engine.summarise.selectors import Selects, held_by
from spec_contract.engine.summarise.summary import RETURNED, CallFlow, Chain, FunctionFlow, ModuleSummary, Use

_MAX_CHAINS = 64  # per expression: the analysis is a may-alias set, bounded to stay fast on odd code
_MAX_ROUNDS = 8
_MAX_EXPANSION_DEPTH = 5
_NOTHING: frozenset[Chain] = frozenset()
_NO_NAMES: frozenset[str] = frozenset()
_NO_ROLES: frozenset[tuple[Role, bool, str | None]] = frozenset()
_SELF: Chain = ("self",)


class _Flow:
    def __init__(self, workers: list[ModuleSummary], index: Index) -> None:
        self.index = index
        self.functions: dict[FunctionKey, FunctionFlow] = {}
        self.paths: dict[FunctionKey, str] = {}
        self.classes: dict[FunctionKey, ClassKey | None] = {}
        self.class_attrs: dict[ClassKey, dict[str, set[Chain]]] = defaultdict(lambda: defaultdict(set))
        self.locals: dict[FunctionKey, dict[str, set[Chain]]] = {}
        self.bindings: dict[FunctionKey, dict[str, set[Chain]]] = defaultdict(lambda: defaultdict(set))
        # Bindings only grow, so how many chains a function's parameters have gained so far tells whether an
        # expansion inside it may differ from the last one: the fixpoint re-expands only what can change.
        self._grown: dict[FunctionKey, int] = defaultdict(int)
        self._expanded: dict[tuple[FunctionKey, Chain], tuple[int | None, set[Chain]]] = {}
        self._self_attrs: dict[tuple[ClassKey, str], set[Chain]] = {}
        self._reached: dict[tuple[str, Chain], tuple[FunctionKey, int] | None] = {}
        # each function's calls that reach a worker function, in order (see ``resolve_calls``)
        self.targets: dict[FunctionKey, list[tuple[CallFlow, FunctionKey, int]]] = {}
        self._top_names: dict[str, set[str]] = defaultdict(set)  # module → its top-level function/class names
        self._workspace_names: dict[tuple[str, str], bool] = {}  # see ``may_be_workspace_function``
        for summary in workers:
            for fn in summary.functions:
                key = FunctionKey(summary.module, fn.qualname)
                self._top_names[summary.module].add(fn.qualname.split(".")[0])
                self.functions[key] = fn
                self.paths[key] = summary.path
                self.classes[key] = ClassKey(summary.module, fn.class_name) if fn.class_name else None
                local: dict[str, set[Chain]] = defaultdict(set)
                for target, value in fn.aliases:
                    if target[0] == "self" and len(target) == 2 and fn.class_name:
                        self.class_attrs[ClassKey(summary.module, fn.class_name)][target[1]].add(value)
                    elif len(target) == 1:
                        local[target[0]].add(value)
                self.locals[key] = local

    def _self_attr(self, cls: ClassKey | None, attr: str) -> set[Chain]:
        """What ``self.<attr>`` may stand for in ``cls``, from assignments anywhere in its MRO.

        Memoised for the flow's lifetime: class attributes are fixed once the flow is built, and the MRO's
        modules are charged to the one recording that spans the whole derivation the first time.
        """
        if cls is None:
            return set()
        found = self._self_attrs.get((cls, attr))
        if found is None:
            found = set()
            for owner in self.index.mro(cls):
                found |= self.class_attrs.get(owner, {}).get(attr, set())
                if found and attr.endswith("()"):
                    break  # what a method returns: the first definer's, which overrides the bases'
            self._self_attrs[(cls, attr)] = found
        return found

    def expand(self, key: FunctionKey, chain: Chain) -> set[Chain]:
        """Every expression ``chain`` may stand for inside function ``key`` (itself included; do not mutate).

        The answer depends only on the function's parameter bindings among the mutable facts, so it is
        remembered until those grow, or for good (None for ``grown``) when it looked up no parameter's.
        """
        grown = self._grown[key]
        memo = self._expanded.get((key, chain))
        if memo is not None and (memo[0] == grown or memo[0] is None):
            return memo[1]
        seen, bound = self._expand(key, chain)
        self._expanded[(key, chain)] = (grown if bound else None, seen)
        return seen

    def _expand(self, key: FunctionKey, chain: Chain) -> tuple[set[Chain], bool]:
        """What :meth:`expand` remembers, breadth first, and whether it looked up a parameter (whose bindings may
        grow). The alias sets a root reads are walked in place, not copied into a union or a set of new chains
        first: most roots alias nothing, and the chains an expression yields are deduplicated by ``seen`` anyway;
        once it holds :data:`_MAX_CHAINS`, nothing more can be added, so the walk stops."""
        seen = {chain}
        frontier = [chain]
        local = self.locals.get(key, {})
        params = self.bindings.get(key, {})
        parameters = (*self.functions[key].params, *self.functions[key].kwonly)  # the names bindings are of
        bound = False
        cls = self.classes[key]
        for _ in range(_MAX_EXPANSION_DEPTH):
            nxt = []
            for current in frontier:
                root = current[0]
                if root == "self" and len(current) >= 3 and current[2] == "()":  # a method of the instance's
                    groups: tuple[Set[Chain], ...] = (self._self_attr(cls, current[1] + "()"),)  # that returns
                    rest = current[3:]  # one of its parts
                elif root == "self" and len(current) >= 2:
                    groups = (self._self_attr(cls, current[1]),)
                    rest = current[2:]
                else:
                    groups = (local.get(root, _NOTHING), params.get(root, _NOTHING))
                    rest = current[1:]
                    bound = bound or root in parameters
                for sources in groups:
                    for source in sources:
                        value = source + rest
                        if value not in seen:
                            if len(seen) >= _MAX_CHAINS:
                                return seen, bound
                            seen.add(value)
                            nxt.append(value)
            if not nxt:
                break
            frontier = nxt
        return seen, bound

    def may_end_in(self, key: FunctionKey, chain: Chain, lasts: frozenset[str], memo: dict,
                   budget: int = _MAX_EXPANSION_DEPTH) -> bool:
        """Whether ``expand(key, chain)`` may hold an expression ending in one of ``lasts``, without expanding.

        Replacing an expression's root keeps its last segment unless the whole expression is replaced, which
        happens only to a bare name (``runner``), ``self.<attr>`` or ``self.<method>()``; a longer expression can only shrink to
        ``self.<its last segment>`` (alias values start at a name, so never vanish). So only those short
        expressions are followed, through the same few alias sets for every use of a function (memoised in
        ``memo``, for one ``lasts``). The expansion's size bound is ignored: the answer may be yes where
        the expansion holds no such expression, never the other way round.
        """
        if chain[-1] in lasts:
            return True
        if len(chain) == 3 and chain[0] == "self" and chain[2] == "()":  # what a method of the instance returns
            chain = ("self", chain[1] + "()")
        elif len(chain) > 2 or (len(chain) == 2 and chain[0] != "self"):
            chain, budget = ("self", chain[-1]), budget - 1
        if budget <= 0:
            return False
        found = memo.get((key, chain, budget))
        if found is None:
            values: Set[Chain]
            if len(chain) == 2:
                values = self._self_attr(self.classes[key], chain[1])
            else:
                values = self.locals[key].get(chain[0], _NOTHING) | self.bindings.get(key, {}).get(chain[0], _NOTHING)
            found = False
            for value in values:
                if self.may_end_in(key, value, lasts, memo, budget - 1):
                    found = True
                    break
            memo[(key, chain, budget)] = found
        return found

    def resolve_calls(self) -> None:
        """Fill ``targets``: (call, the workspace function it reaches, how many leading parameters it fills
        implicitly), resolved once per caller and callee as written (it reads no binding), for the four walks of
        every call; once the returned locals are bound: a call on a local reaches what the local was built as."""
        for caller, fn in self.functions.items():
            reached: dict[Chain, tuple[FunctionKey, int] | None] = {}
            out = self.targets[caller] = []
            for call in fn.calls:
                if call.callee not in reached:
                    reached[call.callee] = self._reach(caller, call.callee)
                found = reached[call.callee]
                if found is not None:
                    out.append((call, *found))

    def _reach(self, caller: FunctionKey, callee: Chain) -> tuple[FunctionKey, int] | None:
        cls = self.classes[caller]
        if callee[0] == "self" and len(callee) == 2 and cls is not None:
            for owner in self.index.mro(cls):
                key = FunctionKey(owner.module, f"{owner.qualname}.{callee[1]}")
                if key in self.functions:
                    return key, 1
            return None
        if callee[:2] == ("super", "()") and len(callee) == 3 and cls is not None:
            for owner in self.index.mro(cls)[1:]:
                key = FunctionKey(owner.module, f"{owner.qualname}.{callee[2]}")
                if key in self.functions:
                    return key, 1
            return None
        if len(callee) == 2 or (len(callee) == 3 and callee[0] == "self"):
            found = _method_of_instance(self, caller, callee)
            if found is not None:
                return found, 1
        named = (caller.module, callee)
        if named not in self._reached:
            self._reached[named] = self._named_callee(caller.module, callee)
        return self._reached[named]

    def _named_callee(self, module: str, callee: Chain) -> tuple[FunctionKey, int] | None:
        """What a call of a name (``helper(...)``, ``mod.Worker(...)``) in ``module`` reaches, as in :meth:`resolve_calls`.

        Remembered per module and name by the caller: the index answers read nothing new the second time.
        """
        if not self.may_be_workspace_function(module, callee[0]):
            return None  # torch.cat, logger.info, …: no need to load the module they come from
        resolved = self.index.resolve(module, callee)
        if isinstance(resolved, FunctionKey) and resolved in self.functions:
            return resolved, 0
        if isinstance(resolved, ClassKey):
            for owner in self.index.mro(resolved):
                key = FunctionKey(owner.module, f"{owner.qualname}.__init__")
                if key in self.functions:
                    return key, 1
        return None

    def may_be_workspace_function(self, module: str, name: str) -> bool:
        """Whether ``name`` in ``module`` is a worker function or class, or imported from a worker module (or
        from inside one, ``from pkg.worker import helper``): looked up by prefix, not by scanning every module.

        Remembered per module and name (``torch`` of ``torch.cat``, ``torch.zeros``, …), as :meth:`_named_callee`
        is: the index's answers read nothing new the second time."""
        found = self._workspace_names.get((module, name))
        if found is None:
            found = name in self._top_names.get(module, ())
            target = None if found else self.index.import_target(module, name)
            while target is not None and not found:
                found = target in self._top_names
                target = target.rpartition(".")[0] if "." in target else None
            self._workspace_names[(module, name)] = found
        return found

    def propagate(self) -> None:
        """Bind parameters to the expressions passed at every call site, until nothing changes.

        Each round visits the call sites in order, skipping a site whose caller's bindings have not grown since
        its last visit: it would bind the very same chains again.
        """
        sites = []  # (caller, callee, [(parameter's bindings, (parameter,), argument)], "self@Owner" or None)
        for caller, fn in self.functions.items():
            for call, callee, implicit in self.targets[caller]:
                params = self.functions[callee].params
                kwonly = self.functions[callee].kwonly
                positional = params[implicit:]
                pairs = [(positional[i], arg) for i, arg in enumerate(call.args) if arg is not None and i < len(positional)]
                pairs += [(name, arg) for name, arg in call.kwargs if name in params or name in kwonly]
                owner = fn.class_name
                rename = f"self@{owner.rsplit('.', 1)[-1]}" if owner and callee != caller else None
                bindings = self.bindings[callee]
                sites.append((caller, callee, [(bindings[param], (param,), arg) for param, arg in pairs], rename))
        visited: list[int | None] = [None] * len(sites)
        for _ in range(_MAX_ROUNDS):
            changed = False
            for i, (caller, callee, bound_args, rename) in enumerate(sites):
                grown = self._grown[caller]
                if visited[i] == grown:
                    continue
                visited[i] = grown  # before binding: a recursive call may grow its own caller
                for bound, itself, arg in bound_args:
                    before = len(bound)
                    for value in self.expand(caller, arg):
                        if len(bound) >= _MAX_CHAINS:
                            break
                        if rename and value[0] == "self":
                            value = (rename,) + value[1:]  # remember whose self
                        if value != itself:
                            bound.add(value)
                    if len(bound) != before:
                        changed = True
                        self._grown[callee] += len(bound) - before
            if not changed:
                break


def _short_name(chain: Chain) -> str:
    """The name :meth:`_Flow.may_end_in` follows an expression's aliases by: ``m()`` for ``self.m()`` (what the
    method returns), else its last segment (a bare name, the attribute of ``self.<attr>``, and for a longer
    expression that of the ``self.<last>`` it may shrink to)."""
    return chain[1] + "()" if len(chain) == 3 and chain[0] == "self" and chain[2] == "()" else chain[-1]


def _names_ending_in(flow: _Flow, lasts: frozenset[str]) -> frozenset[str]:
    """The short names (see :func:`_short_name`) whose alias values may, through further aliases, stand for an
    expression ending in one of ``lasts``: read over every function's locals and parameters and every class's
    attributes at once, with no depth bound, so whatever :meth:`_Flow.may_end_in` follows in one function is a
    part of it. An expression that ends in none of ``lasts`` and whose short name is none of these is no such
    expression in any function (SGLang 0.5.23: all but a hundred of its 7,200 receivers, out of six names)."""
    found: set[str] = set()
    into: dict[str, set[str]] = defaultdict(set)  # a short name → the names with a value of that short name
    for sets in (*flow.locals.values(), *flow.bindings.values(), *flow.class_attrs.values()):
        for name, values in sets.items():
            for value in values:
                if value[-1] in lasts:
                    found.add(name)
                else:
                    into[_short_name(value)].add(name)
    return frozenset(closure(found, lambda name: into.get(name, ())))


def _method_of_instance(flow: _Flow, caller: FunctionKey, callee: Chain) -> FunctionKey | None:
    """The method a call on an instance of a worker class reaches: ``self.proposer.propose(...)`` or
    ``proposer.propose(...)`` where ``self.proposer = DraftBlockProposer(...)`` (or the local) was built by
    calling that class in the caller's class or function (the first such class that defines it)."""
    cls = flow.classes[caller]
    if callee[0] == "self":
        owners = flow.index.mro(cls) if cls is not None else []
        built = [(owner.module, value) for owner in owners
                 for value in flow.class_attrs.get(owner, {}).get(callee[1], ())]
    else:
        built = [(caller.module, value) for value in flow.locals[caller].get(callee[0], ())]
    for module, value in built:
        if len(value) < 2 or value[-1] != "()" or "()" in value[:-1] or "[]" in value:
            continue
        if not flow.may_be_workspace_function(module, value[0]):
            continue
        resolved = flow.index.resolve(module, value[:-1])
        if isinstance(resolved, ClassKey):
            for owner in flow.index.mro(resolved):
                key = FunctionKey(owner.module, f"{owner.qualname}.{callee[-1]}")
                if key in flow.functions:
                    return key
    return None


def _bind_returned_locals(flow: _Flow) -> None:
    """A local a method returns stands for the attribute its class stores the call's value in: in vLLM's
    ``model = load_dspark_model(...); ...; return model``, which the base's ``self.model =
    self.load_draft_model(...)`` keeps, ``model`` is the draft model before it is stored, so a test or a use
    of it is one of ``self.model``. Only the instance's own methods (``self.<method>(...)``, through its
    bases and subclasses) are followed: their ``self`` is the one whose attribute is set."""
    stored: dict[str, list[tuple[ClassKey, str]]] = defaultdict(list)  # method → (class, attribute) it fills
    for key, fn in flow.functions.items():
        cls = flow.classes[key]
        local = flow.locals[key]
        for target, value in fn.aliases:
            if cls is None or len(target) != 2 or target[0] != "self":
                continue
            for called in {value} | (local.get(value[0], _NOTHING) if len(value) == 1 else _NOTHING):
                if len(called) == 3 and called[0] == "self" and called[2] == "()":
                    stored[called[1]].append((cls, target[1]))
    if not stored:
        return
    for key in flow.functions:
        cls, name = flow.classes[key], key.qualname.rsplit(".", 1)[-1]
        given = flow.locals[key].get(RETURNED[0])
        if cls is None or not given or name not in stored:
            continue
        mro = set(flow.index.mro(cls))
        for owner, attr in stored[name]:
            if owner in mro or cls in flow.index.mro(owner):
                for returned in given:
                    if len(returned) == 1:
                        flow.locals[key][returned[0]].add(("self", attr))


class _Receivers:
    """The profile's receiver patterns, looked up by a chain's last segment instead of tried one by one.

    A pattern of two or more segments can only match a chain ending in its own last segment (``*.model``,
    ``self.model``, ``self@Class.model`` alike); single-segment patterns are tried on every chain.
    """

    def __init__(self, patterns: tuple[ReceiverPattern, ...]) -> None:
        self._by_last: dict[str, list[ReceiverPattern]] = defaultdict(list)
        self._always: list[ReceiverPattern] = []
        for pattern in patterns:
            if len(pattern.segments) >= 2:
                self._by_last[pattern.segments[-1]].append(pattern)
            else:
                self._always.append(pattern)
        # The last segments some chain must end in to match at all; None when any chain may match.
        self.lasts: frozenset[str] | None = None if self._always else frozenset(self._by_last)
        self._memo: dict[tuple[Chain, str | None], frozenset[tuple[Role, bool, str | None]]] = {}

    def roles(self, chain: Chain, class_name: str | None) -> frozenset[tuple[Role, bool, str | None]]:
        """(role, speculative-only, unless) of every pattern ``chain`` matches in a method of ``class_name``."""
        found = self._memo.get((chain, class_name))
        if found is None:
            candidates = self._by_last.get(chain[-1], []) + self._always if chain else self._always
            found = frozenset((p.role, p.speculative, p.unless) for p in candidates if p.matches(chain, class_name))
            self._memo[(chain, class_name)] = found
        return found


class _RolesIn:
    """(role, speculative-only, unless) of every pattern an expression in a worker function may stand for matches:
    what a use's receiver is, and what object a test of a member asks (see ``state_guards``), remembered per
    function and expression."""

    def __init__(self, flow: _Flow, receivers: _Receivers) -> None:
        self._flow = flow
        self._receivers = receivers
        self._ends: dict = {}  # may_end_in's memo for the receivers' last segments
        self._found: dict[tuple[FunctionKey, Chain], frozenset[tuple[Role, bool, str | None]]] = {}
        # the short names that may lead to an expression a pattern can match (when the patterns' last segments
        # are known); made once the parameters are bound, as every question is asked after
        self._leading = _names_ending_in(flow, receivers.lasts) if receivers.lasts is not None else frozenset()

    def __call__(self, key: FunctionKey, receiver: Chain) -> frozenset[tuple[Role, bool, str | None]]:
        lasts = self._receivers.lasts
        if lasts is not None and receiver[-1] not in lasts and _short_name(receiver) not in self._leading:
            return _NO_ROLES  # most uses: nothing they may stand for ends like a pattern, in any function
        found = self._found.get((key, receiver))
        if found is None:
            flow, receivers = self._flow, self._receivers
            if lasts is not None and not flow.may_end_in(key, receiver, lasts, self._ends):
                found = _NO_ROLES  # nothing they may stand for in this function ends like a pattern
            else:
                class_name = flow.functions[key].class_name
                found = frozenset().union(*(receivers.roles(chain, class_name) for chain in flow.expand(key, receiver)))
            self._found[(key, receiver)] = found
        return found


def _reached_by_any_draft_worker(workers: list[ModuleSummary], index: Index,
                                 names: frozenset[str]) -> set[FunctionKey] | None:
    """The methods a worker that takes any registered model as its draft runs: its own, and those it inherits
    without overriding (vLLM's ``DraftModelProposer`` overrides the base proposer's embedding and head sharing
    with no-ops). None when the profile names no such worker: then every draft use may meet any class."""
    if not names:
        return None
    reached: set[FunctionKey] = set()
    found = (ClassKey(summary.module, name) for summary in workers for name in sorted(names))
    for worker in (key for key in found if index.class_summary(key) is not None):
        reached.update(methods_run(index, worker))
    return reached


def _callers(flow: _Flow) -> dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]]:
    """Each worker function the workers' calls reach: the calls that reach it, with the function making each."""
    out: dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]] = defaultdict(list)
    for caller, reached in flow.targets.items():
        for call, callee, _ in reached:
            out[callee].append((caller, call))
    return out


class _Uses(NamedTuple):
    """What the derivation reads of every worker function's uses, gathered in one pass over them: the workers hold
    some 20,000 uses (SGLang 0.5.23), and a pass costs ~5 ms, most of it in reaching each use, however little it
    reads of it."""

    receivers: dict[FunctionKey, set[Chain]]  # each function's uses' receivers
    self_reads: dict[FunctionKey, list[Use]]  # each function's reads (not calls) of a member of ``self`` itself
    elsewhere: frozenset[str]  # the members used on any receiver but ``self`` itself


def _uses(functions: Mapping[FunctionKey, FunctionFlow]) -> _Uses:
    """See :class:`_Uses`."""
    receivers: dict[FunctionKey, set[Chain]] = {}
    self_reads: dict[FunctionKey, list[Use]] = {}
    elsewhere: set[str] = set()
    for key, fn in functions.items():
        found = receivers[key] = set()
        reads = self_reads[key] = []
        for use in fn.uses:
            receiver = use.receiver
            found.add(receiver)
            if receiver != _SELF:
                elsewhere.add(use.member)
            elif not use.is_call:
                reads.append(use)
    return _Uses(receivers, self_reads, frozenset(elsewhere))


def _with_references(calls_into: dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]], flow: _Flow,
                     methods: dict[ClassKey, list[FunctionKey]],
                     self_reads: dict[FunctionKey, list[Use]]) -> dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]]:
    """The calls into each worker method, and the places its instance hands it on as a bound method (``self._sampler
    = self._sample_local if hasattr(self.model, "m") else self._sample_plain``): it runs only where such a value is
    called, so only past the tests around the reference, as past those around a call (see ``_entered_past``).
    ``methods``: the worker methods each worker class's instances run; ``self_reads``: see :class:`_Uses`."""
    out = {key: list(calls) for key, calls in calls_into.items()}
    by_name = {cls: {key.qualname.rpartition(".")[2]: key for key in run} for cls, run in methods.items()}
    for key, reads in self_reads.items():
        cls = flow.classes[key]
        if cls is None:
            continue
        for use in reads:
            target = by_name[cls].get(use.member)
            if target is not None:
                out.setdefault(target, []).append((key, CallFlow(("self", use.member), (), (), use.taken, use.selects,
                                                                 use.vouched)))
    return out


def _entered_under(callers: dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]],
                   flags: frozenset[str]) -> dict[FunctionKey, str]:
    """Worker functions that every call in the workers makes under a test of an off-by-default flag (vLLM's
    ``get_draft_top_tokens``, called only ``if … self.use_local_argmax_reduction``): the flag."""
    if not flags:
        return {}
    under = {key: {min(held_by(call.selects) & flags, default=None) for _, call in calls}
             for key, calls in callers.items()}
    return {key: min(f for f in found if f) for key, found in under.items() if None not in found}


def _called_elsewhere(elsewhere: frozenset[str], entered: Iterable[FunctionKey]) -> frozenset[str]:
    """The public names of the ``entered`` functions that some worker function calls or reads on an object other
    than its own instance (``self.speculator.propose(…)``, ``self.model.compute_draft_logits(…)``; ``elsewhere``:
    see :class:`_Uses`): a worker method of that name may be entered from there, past none of the tests around its
    own instance's calls."""
    return frozenset(name for key in entered
                     if not (name := key.qualname.rpartition(".")[2]).startswith("_") and name in elsewhere)


def _entered_past(callers: dict[FunctionKey, list[tuple[FunctionKey, CallFlow]]], outside: frozenset[str],
                  *held: Callable[[FunctionKey, FunctionKey, CallFlow], frozenset[Any]]
                  ) -> tuple[dict[FunctionKey, frozenset[Any]], ...]:
    """The worker functions that every call in the workers makes past tests: for each of ``held``, what
    ``held(function, caller, call)`` says the tests each call sits past hold (the names of those tests; the members
    of a model they hold present), and what its caller is entered past, common to all the calls.

    A use inside such a helper runs only when those tests hold, as if it were written under them: SGLang
    0.5.23's DFLASH worker reads the target's ``lm_head`` in ``_warm_eager_selector``, which its ``__init__``
    calls only ``if target_dp_enabled and …``, so a plain DFLASH run never reaches that read. Not the names
    ``outside`` holds: those the profile's start-up callers call, and the public ones a worker calls on another
    object (the model runner's ``self.speculator.propose(…)``; see ``_called_elsewhere``). A public method only
    code outside the workers calls (a scheduler) is taken for one entered past its own instance's tests: that
    can hide a crash there, never make one up.

    Every reading follows the same calls, so they are made in one walk: each settles where it would alone (the
    sets only grow, see below), and the calls are sorted and linked once, not once per reading.
    """
    asked = {key: [(caller, tuple(reading(key, caller, call) for reading in held)) for caller, call in calls]
             for key, calls in callers.items()
             if not (name := key.qualname.rpartition(".")[2]).startswith("__") and name not in outside
             and (name.startswith("_") or "." in key.qualname)}  # a public module function: any file may call it
    entered: tuple[dict[FunctionKey, frozenset[Any]], ...] = tuple({} for _ in held)
    nothing: frozenset[Any] = frozenset()
    into: dict[FunctionKey, list[FunctionKey]] = {}  # a caller → the functions it calls
    for key, calls in asked.items():
        for caller, _ in calls:
            into.setdefault(caller, []).append(key)
    # the sets only grow: to the least fixed point, by a worklist (a function again when a caller's set grew)
    pending = deque(_callers_first(asked, into))
    queued = set(asked)
    while pending:
        key = pending.popleft()
        queued.discard(key)
        grew = False
        for i, reading in enumerate(entered):
            found = frozenset.intersection(*(sets[i] | reading.get(caller, nothing) for caller, sets in asked[key]))
            if found != reading.get(key, nothing):
                reading[key] = found
                grew = True
        if grew:
            for callee in into.get(key, ()):
                if callee not in queued:
                    queued.add(callee)
                    pending.append(callee)
    return tuple({key: names for key, names in reading.items() if names} for reading in entered)


def _callers_first(keys: Iterable[FunctionKey], into: dict[FunctionKey, list[FunctionKey]]) -> list[FunctionKey]:
    """``keys``, each after the functions that call it where no calls go round in a cycle (the reverse of the order
    a depth-first walk of the calls leaves them in; iterative: a chain of thousands of helpers is no recursion).
    A worklist taken in this order settles a chain of helpers in one pass: taken callee first, each helper was
    read again whenever its caller's set grew, cubic in a chain's length (11 s at 1,000 helpers)."""
    left: list[FunctionKey] = []
    seen: set[FunctionKey] = set()
    for root in keys:
        if root in seen:
            continue
        seen.add(root)
        walk = [(root, iter(into.get(root, ())))]
        while walk:
            function, callees = walk[-1]
            for callee in callees:
                if callee not in seen:
                    seen.add(callee)
                    walk.append((callee, iter(into.get(callee, ()))))
                    break
            else:
                walk.pop()
                left.append(function)
    left.reverse()
    return left


def derive_contract(workers: Iterable[ModuleSummary], index: Index, config: Config,
                    callers: Iterable[ModuleSummary] = (), algorithms: Algorithms | None = None,
                    runners: RunnerRefusals = ()) -> Contract:
    """The contract of the given worker files (see the module docstring); ``callers``: the profile's
    ``start-up-callers`` files, read for the phase of the workers' entry points (see ``start_up``);
    ``algorithms``: the release's (see ``resolve.algorithms``; None: the profile's ``[[algorithms]]``);
    ``runners``: the tests under which each model runner refuses a launch (see ``resolve.runners``): a function
    in a runner's files serves none of the algorithms it refuses."""
    workers = list(workers)
    flow = _Flow(workers, index)
    _bind_returned_locals(flow)
    flow.resolve_calls()
    flow.propagate()
    algorithms = algorithms or declared_algorithms(config)
    selectors = Selectors(algorithms, flow.functions.values())
    plain = config.speculative_conditions | {"self"}
    receivers = _Receivers(config.receivers)
    roles_in = _RolesIn(flow, receivers)
    held_names = frozenset(config.delegate_names)
    def models(key: FunctionKey, tested: str) -> frozenset[Role]:  # the roles of an object a test asks
        return frozenset(role for role, _, _ in roles_in(key, tuple(tested.split("."))))
    guards = state_guards(flow.functions, index, flow.classes, models, held_names,
                          lambda key, called: _vouched_by_callee(flow, key, called))

    def certain(taken: frozenset[str]) -> bool:  # see ``CallSite.certain``
        return all(word in plain or selectors.selects(word) for word in taken)
    sites: dict[tuple[Role, str], list[CallSite]] = defaultdict(list)
    generic: set[str] = set()  # see ``Contract.generic``
    any_draft = _reached_by_any_draft_worker(workers, index, frozenset(config.any_draft_workers))
    off_by_default = frozenset(config.off_by_default)
    calls_into = _callers(flow)
    # the worker methods each worker class's instances run (each name's first definer along its MRO)
    methods = {cls: [key for key in methods_run(index, cls) if key in flow.functions]
               for cls in {cls for cls in flow.classes.values() if cls is not None}}
    called_from_outside = called_at_start_up(callers, config.start_up_methods)
    start_up = start_up_functions(flow.functions, config.start_up_methods, called_from_outside, flow.targets)
    guarding = guards_of(guards, flow.classes, methods, calls_into)
    validated = validated_flags(guards, flow.functions, methods, start_up, models, calls_into,
                                lambda key: start_up_named(key.qualname, config.start_up_methods))
    validating = guards_of(validated, flow.classes, methods, calls_into)
    locals_of = local_values(guards, flow.functions)
    with_states = through_locals(guarding, locals_of)
    entered_under = _entered_under(calls_into, off_by_default)
    worker_uses = _uses(flow.functions)
    entered_from = _with_references(calls_into, flow, methods, worker_uses.self_reads)
    entered_elsewhere = called_from_outside | _called_elsewhere(worker_uses.elsewhere, entered_from)

    def needed(key: FunctionKey, selects: Selects, role: Role, written: FunctionKey | None = None) -> frozenset[str]:
        """What the ``role`` model must have for a run of ``key`` past the tests ``selects`` (see ``required_past``),
        written in ``written`` (default: ``key``, whose locals they may read): what the state guards of the classes
        that run ``key`` stand for, and once start-up is over, what the start-up checks validated the flags for
        (nothing, without tests or guards: most calls, so their callers' locals are not read)."""
        if not selects:
            return _NO_NAMES
        guarded, validated = guarding(key), {} if key in start_up else validating(key)
        if not (guarded or validated):
            return _NO_NAMES
        values = locals_of(written or key)
        return frozenset((*required_past(guarded, selects, role, values),
                          *required_past(validated, selects, role, values)))

    entered_past, entered_holding, entered_vouched, entered_needs = _entered_past(
        entered_from, entered_elsewhere,
        # the tests every call is past: any word of them makes a use uncertain; what they hold, what it requires
        lambda _, caller, call: with_states(caller, call.taken),
        lambda _, caller, call: with_states(caller, held_by(call.selects)),
        lambda _, caller, call: frozenset((member, role) for receiver, member in call.vouched
                                          if "*" not in (receiver, member)
                                          for role, _, _ in roles_in(caller, tuple(receiver.split(".")))),
        # what every call of a helper needs of each model, read from the callers' own tests (an ``or`` of two
        # states each set behind the same test needs it, though it holds neither word: see ``required_past``)
        # with the guards of the classes that run the helper: one that reaches it by a call not followed here
        # (``Base._helper(self)`` in an override) and gives the state a value without the test makes the test
        # stand for nothing
        lambda key, caller, call: frozenset((member, role) for role in Role
                                            for member in needed(key, call.selects, role, caller)))

    def requirements(key: FunctionKey, selects: Selects, holds: frozenset[str], role: Role) -> tuple[str, ...]:
        """What the ``role`` model must have for a run of ``key`` past the tests ``selects`` to come here (``holds``:
        the words the tests every call of its helper runs past hold, see ``_entered_past``)."""
        found = {*needed(key, selects, role), *required(guarding(key), holds, role),
                 *(member for member, of in entered_needs.get(key, ()) if of == role)}
        if key not in start_up:
            found.update(required(validating(key), holds, role))
        return tuple(sorted(found))

    def is_draft(key: FunctionKey, subject: str) -> bool:  # a routing's class test is of the draft model
        return bool(subject) and any(role == Role.DRAFT for chain in flow.expand(key, tuple(subject.split(".")))
                                     for role, _, _ in receivers.roles(chain, flow.functions[key].class_name))

    worker_classes = {cls for cls in flow.classes.values() if cls is not None}

    def built(module: str, chain: Chain) -> ClassKey | None:  # the worker class a worker builds by that name
        if not flow.may_be_workspace_function(module, chain[0]):
            return None  # torch.Tensor, a model class, an exception
        resolved = index.resolve(module, chain)
        return resolved if isinstance(resolved, ClassKey) and resolved in worker_classes else None

    def named(module: str, chain: Chain) -> ClassKey | FunctionKey | None:
        """A worker class or function as a registration names it, or by its dotted name (a lazy table's pair)."""
        found = index.resolve(module, chain)
        if found is None and len(chain) > 1:
            found = index.resolve_class(index.engine_module(".".join(chain[:-1])), chain[-1:])
        return found if found in worker_classes or found in flow.functions else None

    # the worker classes and functions registered under names that single out some of the algorithms
    registered = [(chosen, picked) for summary in workers for chain, picked in summary.registrations
                  if (chosen := named(summary.module, chain)) is not None
                  and selectors.may(picked) != selectors.universe]
    routed = routed_uses(flow.functions, flow.classes, index, is_draft)
    runs = function_runs(flow.functions, flow.paths, index, flow.classes, selectors, flow.targets, built,
                         {key: picked for key, (_, picked) in routed.items()}, registered, methods)
    for files, tests in runners:
        refused = frozenset().union(*(selectors.must(("&", *conjunction)) for conjunction in tests))
        if refused:
            runs = {key: found - refused if glob_match(flow.paths[key], files) else found
                    for key, found in runs.items()}
    serving = selectors.narrowed(_flag_runs(flow.functions, runs))  # what a line serves, flags as they are set
    # the runs whose proposer takes any registered model as its draft (vLLM's DRAFT_MODEL)
    any_draft_runs = frozenset().union(*(runs[key] for key in any_draft or () if key in runs
                                         and (owner := flow.classes.get(key)) is not None
                                         and owner.qualname in config.any_draft_workers))
    for key, fn in flow.functions.items():
        uses = []
        of_models = _model_receivers(key, worker_uses.receivers[key], roles_in, held_names)
        for use in fn.uses if of_models else ():
            if use.receiver not in of_models or use.member in config.ignored_members or use.member.startswith("__"):
                continue
            found = roles_in(key, use.receiver)
            if not found and len(use.receiver) >= 2 and use.receiver[-1] in held_names:
                # a member of the model's own inner model (``target.model.topk_indices_buffer``): a use of
                # ``model.topk_indices_buffer`` on the model, which a class whose ``.model`` lacks it fails
                found = roles_in(key, use.receiver[:-1])
                if found:
                    use = _held(use)
            if found:
                # A pattern's ``unless`` says the object is replaced (by the language model) on classes with
                # that member, so uses that reach it through another name are skipped there; a use on the
                # pattern's own name (``getattr(target_model, "lm_head", None)`` beside the replacement) is of
                # the object as handed, whatever it provides
                direct = {role for role, _, unless in receivers.roles(use.receiver, fn.class_name) if unless}
                uses.append((use, found, direct))
        # ... unless the function reads the member from the replacement too: then the direct read is its
        # fallback (``getattr(language_model, "lm_head", None) or getattr(target_model, "lm_head", None)``)
        replaced = {use.member for use, found, direct in uses if any(u and r not in direct for r, _, u in found)}
        for use, found, direct in uses:
            direct = set() if use.member in replaced else direct
            # on a speculative path: a test of one of the profile's words, or tests no run without speculative
            # decoding passes (the release's algorithms say so)
            speculative = bool(use.conditions & config.speculative_conditions) or (
                bool(use.selects) and NO_ALGORITHM in selectors.universe
                and NO_ALGORITHM not in selectors.runs(use.selects))
            roles: dict[Role, str | None] = {}  # role → the member whose providers it skips (None: none)
            for role, only_speculative, unless in found:
                if speculative or not only_speculative:  # two patterns that skip different classes skip none
                    unless = None if role in direct else unless
                    roles[role] = unless if roles.get(role, unless) == unless else None
                elif use.is_call:
                    generic.add(use.member)  # the engine calls it on every run's model, not only on speculative ones
            path = flow.paths[key]
            served = served_by(runs[key] & serving.runs(use.selects) if use.selects else runs[key], selectors)
            if served is not None and not served:
                continue  # no speculative run reaches it (``if spec_algorithm.is_none():``, tests that exclude)
            # a use past a test of a flag that is off unless turned on runs only under that rare condition
            # a rare condition only where every run coming here has it (not one operand of an ``or``)
            condition = use.condition or min(held_by(use.selects) & off_by_default, default=None) \
                or entered_under.get(key)
            taken = with_states(key, use.taken) | entered_past.get(key, _NO_NAMES)
            holds = with_states(key, held_by(use.selects)) | entered_holding.get(key, _NO_NAMES)
            for role in sorted(roles):
                sites[(role, use.member)].append(CallSite(
                    path=path, span=use.span, role=role, member=use.member, text=use.text,
                    guarded=use.guarded, is_call=use.is_call, arity=use.arity,
                    gate=use.gate, gate_line=use.gate_line, alternative_of=use.alternative_of, condition=condition,
                    condition_classes=use.condition_classes,
                    algorithm=next(iter(served)) if served is not None and len(served) == 1 else None,
                    algorithms=served,
                    unless=roles[role],
                    any_draft=any_draft is None or flow.classes[key] is None or key in any_draft
                    and (served is None or bool(served & any_draft_runs)),
                    phase=_phase(key in start_up, use.guarded), taken=taken,
                    certain=certain(taken - (guarding(key).keys() & holds)),  # a state it requires
                    loading=key in start_up and runs[key] >= selectors.universe,
                    requires=_with_vouched(requirements(key, use.selects, entered_holding.get(key, _NO_NAMES), role),
                                           use, role,
                                           roles_in, key, entered_vouched.get(key, frozenset())),
                    shared=use.shared, statement=use.statement, only=routed.get(key, ((), frozenset()))[0] if role is Role.DRAFT else ()))
    entries = [ContractEntry(role, member, tuple(sorted(set(found), key=lambda s: (s.path, s.span))))
               for (role, member), found in sites.items()]
    entries.sort(key=lambda e: (e.role is not Role.TARGET, e.member))
    return Contract(tuple(entries), routed_drafts(flow.functions, is_draft),
                    frozenset((key.module, key.qualname) for key in start_up), algorithms,
                    tuple(sorted(((key.module, key.qualname), found) for key, found in runs.items()
                                 if not found >= selectors.universe)), frozenset(generic))



def _model_receivers(key: FunctionKey, receivers: set[Chain], roles_in: _RolesIn, held: frozenset[str]) -> set[Chain]:
    """The ``receivers`` of the uses in ``key`` that may be a model or its own inner model (through a delegate
    attribute ``held`` names), each asked once: a function uses a few receivers many times, and most of them are
    no model, so most functions' uses need not be looked at one by one."""
    return {receiver for receiver in receivers
            if roles_in(key, receiver) or len(receiver) >= 2 and receiver[-1] in held and roles_in(key, receiver[:-1])}


def _flag_runs(functions: Mapping[FunctionKey, FunctionFlow],
               runs: Mapping[FunctionKey, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Each flag → the runs that reach a function giving it a value: a flag is true in those only. Gathered per
    set of runs first: the workers give flags some 13,000 values (SGLang 0.5.23) from functions that share a few
    sets of runs, so a union per value would build as many sets."""
    by_runs: dict[frozenset[str], set[str]] = {}
    for key, fn in functions.items():
        if fn.flags:
            by_runs.setdefault(runs[key], set()).update([name for name, _, _ in fn.flags])
    out: dict[str, frozenset[str]] = {}
    for found, names in by_runs.items():
        for name in names:
            out[name] = out[name] | found if name in out else found
    return out


def _phase(at_start_up: bool, guarded: bool) -> Phase:
    """When a use runs: while the server starts, else in a per-batch method: there an unguarded use of a member
    the class lacks dies at the first request, and a guarded one takes the worker's fallback every step."""
    if at_start_up:
        return Phase.START_UP
    return Phase.EVERY_STEP if guarded else Phase.FIRST_REQUEST


def _vouched_by_callee(flow: _Flow, key: FunctionKey, called: str) -> tuple[str, str]:
    """(member, object as dotted text) the worker function ``key`` calls as ``called`` tests of the argument it
    passes, or of its own instance's attribute when called on ``self`` (``self.model``), before returning
    anything true (see ``FunctionFlow.vouches``); ("", "") when it tests none."""
    chain = tuple(called.split("."))
    # the first call so written: every call of the same name in a function reaches the same function
    found = next(((call, callee, implicit) for call, callee, implicit in flow.targets[key] if call.callee == chain),
                 None)
    if found is None:
        return "", ""
    call, callee, implicit = found
    fn = flow.functions[callee]
    positional = fn.params[implicit:]
    keywords = dict(call.kwargs)
    for tested, member in fn.vouches:
        param, _, rest = tested.partition(".")
        if implicit and param == fn.params[0]:  # the callee's own instance: this one's, when called on ``self``
            if chain[0] == "self" and len(chain) == 2:
                return member, tested
            continue
        at = positional.index(param) if param in positional else len(call.args)
        arg = keywords.get(param) or (call.args[at] if at < len(call.args) else None)
        if arg is not None:
            return member, ".".join(arg) + (f".{rest}" if rest else "")
    return "", ""


def _held(use: Use) -> Use:
    """A use of ``m.<inner>.x`` as the use of ``<inner>.x`` on ``m``: its fallback is ``m``'s (the code after ``if
    hasattr(m, "x"): return m.x()``), its gate the inner's members."""
    name = use.receiver[-1]
    return replace(use, member=f"{name}.{use.member}", receiver=use.receiver[:-1], alternative_of=use.above,
                   gate=tuple(f"{name}.{member}" for member in use.gate))


def _with_vouched(required: tuple[str, ...], use: Use, role: Role, roles_in: _RolesIn, key: FunctionKey,
                  entered: frozenset[tuple[str, Role]]) -> tuple[str, ...]:
    """``required`` and the other members of the same role's model that the tests enclosing ``use`` hold present,
    or those a private helper is entered past (``entered``, see ``_entered_past``): ``if hasattr(model, "a"):
    model.b`` meets only models with ``a``, as ``if self._a: model.b`` does where only ``hasattr(model, "a")`` sets
    ``self._a`` (see ``state_guards``). The use's own member is its guard, not a requirement (an optional use:
    SC002), and a test of another object (``hasattr(config, "a")``) says nothing of the model."""
    vouched = {member for receiver, member in use.vouched
               if member not in ("*", use.member) and receiver != "*"
               and any(found == role for found, _, _ in roles_in(key, tuple(receiver.split("."))))}
    vouched.update(member for member, held in entered if held == role and member != use.member)
    return tuple(sorted(vouched.union(required))) if vouched else required
