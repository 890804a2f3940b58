"""Deriving the contract: which members workers use on the target and on the draft model object.

A use ``<receiver>.<member>`` belongs to a role when the receiver, or any expression it may stand for,
matches one of the profile's receiver patterns. "May stand for" is a small may-alias analysis over the
worker files, iterated to a fixed point:

* local assignments and tuple unpacking (``target_runner = self.target_worker.model_runner``),
* ``self.x = ...`` attributes of a worker class, through its bases,
* ``for runner in self.draft_runner_list`` (the loop variable stands for an element),
* parameters of workspace functions and methods, bound by position and keyword at every call site
  (``helper(target_model=target_runner.model)``, ``Worker(target_worker=...)``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from spec_contract.engine.config import Config
from spec_contract.engine.resolve import ClassKey, FunctionKey, Index
from spec_contract.engine.results import CallSite, Contract, ContractEntry
from spec_contract.engine.summary import CallFlow, Chain, FunctionFlow, ModuleSummary

_MAX_CHAINS = 64  # per expression: the analysis is a may-alias set, bounded to stay fast on odd code
_MAX_ROUNDS = 8
_MAX_EXPANSION_DEPTH = 5


class _Flow:
    def __init__(self, workers: list[ModuleSummary], index: Index) -> None:
        self.index = index
        self.functions: dict[FunctionKey, FunctionFlow] = {}
        self.paths: dict[FunctionKey, str] = {}
        self.class_attrs: dict[ClassKey, dict[str, set[Chain]]] = defaultdict(lambda: defaultdict(set))
        self.locals: dict[FunctionKey, dict[str, set[Chain]]] = {}
        self.bindings: dict[FunctionKey, dict[str, set[Chain]]] = defaultdict(lambda: defaultdict(set))
        self._by_module: dict[str, list[FunctionKey]] = defaultdict(list)
        for summary in workers:
            for fn in summary.functions:
                key = FunctionKey(summary.module, fn.qualname)
                self._by_module[summary.module].append(key)
                self.functions[key] = fn
                self.paths[key] = summary.path
                local: dict[str, set[Chain]] = defaultdict(set)
                for target, value in fn.aliases:
                    if target[0] == "self" and len(target) == 2 and fn.class_name:
                        self.class_attrs[ClassKey(summary.module, fn.class_name)][target[1]].add(value)
                    elif len(target) == 1:
                        local[target[0]].add(value)
                self.locals[key] = local

    def _class_of(self, key: FunctionKey) -> ClassKey | None:
        fn = self.functions[key]
        return ClassKey(key.module, fn.class_name) if fn.class_name else None

    def _self_attr(self, cls: ClassKey | None, attr: str) -> set[Chain]:
        if cls is None:
            return set()
        out: set[Chain] = set()
        for owner in self.index.mro(cls):
            out |= self.class_attrs.get(owner, {}).get(attr, set())
        return out

    def expand(self, key: FunctionKey, chain: Chain) -> set[Chain]:
        """Every expression ``chain`` may stand for inside function ``key`` (itself included)."""
        seen = {chain}
        frontier = [chain]
        local = self.locals.get(key, {})
        params = self.bindings.get(key, {})
        cls = self._class_of(key)
        for _ in range(_MAX_EXPANSION_DEPTH):
            nxt = []
            for current in frontier:
                root = current[0]
                values: set[Chain] = set()
                if root == "self" and len(current) >= 2:
                    values = {v + current[2:] for v in self._self_attr(cls, current[1])}
                else:
                    values = {v + current[1:] for v in local.get(root, set()) | params.get(root, set())}
                for value in values:
                    if value not in seen and len(seen) < _MAX_CHAINS:
                        seen.add(value)
                        nxt.append(value)
            if not nxt:
                break
            frontier = nxt
        return seen

    def _callee(self, caller: FunctionKey, call: CallFlow) -> tuple[FunctionKey, int] | None:
        """The workspace function a call reaches, and how many leading parameters the call fills implicitly."""
        callee = call.callee
        cls = self._class_of(caller)
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
        if not self._may_be_workspace_function(caller.module, callee[0]):
            return None  # torch.cat, logger.info, …: no need to load the module they come from
        resolved = self.index.resolve(caller.module, callee)
        if isinstance(resolved, FunctionKey) and resolved in self.functions:
            return resolved, 0
        if isinstance(resolved, ClassKey):
            for owner in self.index.mro(resolved):
                key = FunctionKey(owner.module, f"{owner.qualname}.__init__")
                if key in self.functions:
                    return key, 1
        return None

    def _may_be_workspace_function(self, module: str, name: str) -> bool:
        if any(key.module == module and key.qualname.split(".")[0] == name for key in self._by_module.get(module, ())):
            return True
        target = self.index.import_target(module, name)
        return target is not None and any(target == m or target.startswith(m + ".") for m in self._by_module)

    def propagate(self) -> None:
        """Bind parameters to the expressions passed at every call site, until nothing changes."""
        calls = [(key, call, target) for key, fn in self.functions.items() for call in fn.calls
                 if (target := self._callee(key, call)) is not None]
        for _ in range(_MAX_ROUNDS):
            changed = False
            for caller, call, (callee, implicit) in calls:
                fn = self.functions[callee]
                positional = fn.params[implicit:]
                pairs = [(positional[i], arg) for i, arg in enumerate(call.args) if arg is not None and i < len(positional)]
                pairs += [(name, arg) for name, arg in call.kwargs if name in fn.params or name in fn.kwonly]
                owner = self.functions[caller].class_name
                for param, arg in pairs:
                    bound = self.bindings[callee][param]
                    before = len(bound)
                    for value in self.expand(caller, arg):
                        if len(bound) >= _MAX_CHAINS:
                            break
                        if value[0] == "self" and owner and callee != caller:
                            value = (f"self@{owner.rsplit('.', 1)[-1]}",) + value[1:]  # remember whose self
                        if value != (param,):
                            bound.add(value)
                    changed |= len(bound) != before
            if not changed:
                break


def derive_contract(workers: Iterable[ModuleSummary], index: Index, config: Config) -> Contract:
    """The contract of the given worker files (see the module docstring)."""
    flow = _Flow(list(workers), index)
    flow.propagate()
    sites: dict[tuple[str, str], list[CallSite]] = defaultdict(list)
    expansions: dict[tuple[FunctionKey, Chain], set[Chain]] = {}  # bindings are final now: expand each once
    for key, fn in flow.functions.items():
        for use in fn.uses:
            if use.member in config.ignored_members or use.member.startswith("__"):
                continue
            roles = set()
            if (key, use.receiver) not in expansions:
                expansions[(key, use.receiver)] = flow.expand(key, use.receiver)
            for chain in expansions[(key, use.receiver)]:
                for pattern in config.receivers:
                    if pattern.role in roles or not pattern.matches(chain, fn.class_name):
                        continue
                    if pattern.speculative and not (use.conditions & config.speculative_conditions):
                        continue
                    roles.add(pattern.role)
            for role in sorted(roles):
                sites[(role, use.member)].append(CallSite(
                    path=flow.paths[key], span=use.span, role=role, member=use.member, text=use.text,
                    guarded=use.guarded, is_call=use.is_call, function=fn.qualname, arity=use.arity))
    entries = [ContractEntry(role, member, tuple(sorted(set(found), key=lambda s: (s.path, s.span))))
               for (role, member), found in sites.items()]
    entries.sort(key=lambda e: (e.role != "target", e.member))
    return Contract(tuple(entries))
