"""Capability gates: the engine's own checks that the model has a member (``if not hasattr(m, "x"): raise``, a
``hasattr`` chain ending in ``raise``, ``getattr(m, "x", None)`` then ``raise`` when None).

Every such check tests a loaded model object, so it runs after the weights have loaded: a class that fails it
costs the run what a crash costs, whatever the error says (SGLang's aux hidden-state capture raises
``ValueError`` after the load; vLLM's ``supports_eagle3`` raises ``RuntimeError`` in ``load_model``). So a
failed gate is a crash at the check, and the uses past it count too: forwarding the gate's member only moves
the run to them. What a gate asks depends on the algorithm: in ``if is_dspark and hasattr(m, "a"): … elif
hasattr(m, "b"): … else: raise``, a DSPARK run passes with ``a`` or ``b``, a DFLASH run only with ``b`` (a
branch admits the runs its tests allow: each member's use there serves those). A class passes when it has one
member the gate admits for the run; when it has none, the gate is one crash, said on the member the fix
should provide: the first admitted one an inner model has, else the first in the check's order.

A run that fails a gate stops there: the algorithm's uses it would meet later (a start-up gate runs while the
model loads, before the workers that use the model start; a per-request one before the later steps) never
run. They still count, as what the run needs past the check: the gate's finding lists them, and they get no
finding of their own at lines the run never reaches.
"""

from __future__ import annotations

from dataclasses import replace

from spec_contract.engine.check.lookup import MemberLookup
from spec_contract.engine.results import CallSite, Contract, Phase, Role

GateKey = tuple[Role, str, int]  # (role, path, 0-based line of the check's test)
_ORDER = {Phase.START_UP: 0, Phase.FIRST_REQUEST: 1, Phase.EVERY_STEP: 2}  # the phases, in the order a run meets them


class Gates:
    """The capability gates of one class's roles, and how the class fares at each for each algorithm."""

    def __init__(self, sites: list[tuple[Role, CallSite]], lookup: MemberLookup, algorithms: tuple[str, ...]) -> None:
        self._lookup = lookup
        self._algorithms = algorithms
        self._groups: dict[GateKey, list[CallSite]] = {}
        for role, site in sites:
            if site.gate and site.gate_line is not None:
                self._groups.setdefault((role, site.path, site.gate_line), []).append(site)
        self._memo: dict[tuple[GateKey, str], str | None] = {}
        self._failing: dict[tuple[GateKey, str], bool] = {}
        self._failed: dict[tuple[Role, str], list[CallSite]] = {}
        self._stopping: dict[Role, bool] = {}
        self._past: dict[tuple[Role, str, Phase, bool, bool], bool] = {}
        self._admitted: dict[tuple[Role, str, int, str, tuple[str, ...]], tuple[str, ...]] = {}
        # id(site) → (the site, its runs): a check asks each site's runs again for every question about it (SGLang
        # 0.5.23: 18,000 times over 330 classes); by identity, as hashing a CallSite hashes every field
        self._runs: dict[int, tuple[CallSite, tuple[str, ...]]] = {}

    def runs(self, site: CallSite) -> tuple[str, ...]:
        """The algorithms a site serves, as names (every release algorithm for a site no test narrows)."""
        found = self._runs.get(id(site))
        if found is None or found[0] is not site:
            served = site.algorithms
            found = self._runs[id(site)] = (site, self._algorithms if served is None
                                            else tuple(a for a in self._algorithms if a in served))
        return found[1]

    def needed(self, role: Role, site: CallSite, algorithm: str | None = None) -> bool:
        """Whether a run (of ``algorithm``, else of any algorithm the site serves) fails at this use: any use but
        a gate's; a gate's only when the class has no member the gate admits for the run and this is the member
        the gate's crash is said on (see the module docstring)."""
        if not site.gate or site.gate_line is None:
            return True
        key = (role, site.path, site.gate_line)
        for name in (algorithm,) if algorithm is not None else self.runs(site):
            if self._wanted(key, name) == site.member:
                return True
        return False

    def past(self, role: Role, site: CallSite, algorithm: str | None = None) -> bool:
        """Whether a run (of ``algorithm``, else of every algorithm the site serves) stops at a gate the class
        fails before it reaches this use (see the module docstring)."""
        if not self._stops_any(role):  # most classes fail no gate: asked of every use, for every algorithm
            return False
        for name in (algorithm,) if algorithm is not None else self.runs(site):
            # what comes before a use is told by its phase, whether it runs while loading, and whether it is a check
            key = (role, name, site.phase, site.loading, bool(site.gate))
            found = self._past.get(key)
            if found is None:
                failed = self.failed(role, name)
                found = self._past[key] = bool(failed) and any(_before(gate, site) for gate in failed)
            if not found:
                return False
        return True

    def failed(self, role: Role, algorithm: str) -> list[CallSite]:
        """The gates of ``role`` a run of ``algorithm`` fails: the use of the member each is said on."""
        found = self._failed.get((role, algorithm))
        if found is None:
            found = self._failed[(role, algorithm)] = []
            for key, group in self._groups.items():
                # a check only some runs of the algorithm make (past a test nothing here follows: a Domino draft's)
                # stops none for sure; which member its crash is said on does not matter here (the uses of one
                # check sit in one function: one phase)
                if key[0] is role and any(s.serves(algorithm) and s.certain for s in group) \
                        and self._fails(key, algorithm):
                    found.append(group[0])
        return found

    def _stops_any(self, role: Role) -> bool:
        """Whether a run of some algorithm fails a gate of ``role``."""
        found = self._stopping.get(role)
        if found is None:
            found = self._stopping[role] = any(self.failed(role, name) for name in self._algorithms)
        return found

    def stops(self, role: Role, gate: CallSite, algorithm: str) -> bool:
        """Whether the check ``gate`` is one a run of ``algorithm`` fails (see :meth:`failed`)."""
        return any(g.path == gate.path and g.gate_line == gate.gate_line for g in self.failed(role, algorithm))

    def admitted(self, role: Role, site: CallSite, algorithm: str) -> tuple[str, ...]:
        """The members of the site's gate a run of ``algorithm`` passes it with, in the check's order."""
        if site.gate_line is None:
            return site.gate
        key = (role, site.path, site.gate_line, algorithm, site.gate)
        found = self._admitted.get(key)
        if found is None:
            group = self._groups.get((role, site.path, site.gate_line), [site])
            used = {s.member for s in group}
            # a member no use in the check's branches shows: which runs its branch admits is unknown, so any
            found = self._admitted[key] = tuple(dict.fromkeys(
                [s.member for s in sorted(group, key=lambda s: s.span) if s.serves(algorithm)]
                + [m for m in site.gate if m not in used]))
        return found

    def _fails(self, key: GateKey, algorithm: str) -> bool:
        """Whether a run of ``algorithm`` fails the gate ``key``: the class has no member it admits the run with."""
        found = self._failing.get((key, algorithm))
        if found is None:
            admitted = self.admitted(key[0], self._groups[key][0], algorithm)
            lookup = self._lookup
            found = self._failing[(key, algorithm)] = bool(admitted) and not any(
                lookup.provides(m) and lookup.broken(m) is None for m in admitted)
        return found

    def _wanted(self, key: GateKey, algorithm: str) -> str | None:
        """The member a run of ``algorithm`` fails the gate ``key`` on (None: it passes, or never meets it)."""
        if (key, algorithm) not in self._memo:
            admitted = self.admitted(key[0], self._groups[key][0], algorithm)
            lookup = self._lookup
            # the member an inner model has, if any (the forward to add), else the first: one member needs no look
            self._memo[(key, algorithm)] = None if not self._fails(key, algorithm) else admitted[0] \
                if len(admitted) == 1 else next((m for m in admitted if lookup.inner(m) is not None), admitted[0])
        return self._memo[(key, algorithm)]


def _before(gate: CallSite, site: CallSite) -> bool:
    """Whether a run meets ``gate`` before ``site``: a check made while the model loads before the algorithm's own
    workers start, a start-up check before any other use of that phase but another check (which of two comes
    first is not told, so neither), and any check before the uses of a later phase."""
    if _ORDER[gate.phase] < _ORDER[site.phase] or gate.loading and not site.loading:
        return True
    return gate.phase is Phase.START_UP and not site.gate


def fallback_covered(site: CallSite, lookup: MemberLookup) -> bool:
    """A fallback use whose primary the class or its inner model has: the primary's own check covers it."""
    return bool(site.alternative_of) and any(lookup.provides(m) or lookup.inner(m) for m in site.alternative_of)


def may_meet_class(role: Role, site: CallSite, draft_shaped: bool) -> bool:
    """Whether a use can meet a class at all: a draft use that no worker taking any model as its draft
    reaches only ever meets draft heads (see ``CallSite.any_draft``)."""
    return site.any_draft or draft_shaped or role is not Role.DRAFT


def class_sites(contract: Contract, roles: tuple[Role, ...], lookup: MemberLookup,
                draft_shaped: bool, given: str | None = None) -> list[tuple[Role, CallSite]]:
    """The call sites of the class's roles, less those whose receiver is never this class: a worker that
    switches to the language model when the target provides ``get_language_model`` (``unless``), a use only a
    model with some member reaches (``requires``), on a class that is no draft by shape, draft uses no worker that
    takes any model as its draft reaches, and the runs of algorithms that never load the class as their draft.
    ``given``: only the uses of that member, taken as one the class has (see ``once_provided``)."""
    if contract.routed and Role.TARGET in roles and lookup.is_a(((contract.routed, ()),)):
        roles = tuple(role for role in roles if role is not Role.TARGET)  # the workers route it as a draft
    found = [(role, site) for role in roles for entry in contract.for_role(role)
             if given is None or entry.member == given for site in entry.call_sites
             if (site.unless is None or not lookup.provides(site.unless)) and lookup.may_meet(site)
             and all(member == given or lookup.provides(site.member if member == "*" else member)
                     for member in site.requires)
             and (not site.only or lookup.is_a(site.only))
             and may_meet_class(role, site, draft_shaped)]
    undrafted = never_drafted(contract, lookup) if Role.DRAFT in roles else frozenset()
    if not undrafted:
        return found
    every = frozenset(contract.algorithms)
    out = []
    for role, site in found:
        runs = site.algorithms if site.algorithms is not None else every
        if role is Role.DRAFT and runs & undrafted:  # only the runs that may load the class as their draft
            left = runs - undrafted
            if not left:
                continue
            site = replace(site, algorithms=left, algorithm=next(iter(left)) if len(left) == 1 else None)
        out.append((role, site))
    return out


def once_provided(contract: Contract, roles: tuple[Role, ...], lookup: MemberLookup, draft_shaped: bool,
                  member: str) -> list[CallSite]:
    """The uses of ``member`` that ``class_sites`` leaves out only because a model must have the member itself to
    come to them (``if self.use_local_argmax_reduction: self.model.get_top_tokens(h)``, which a start-up check
    makes the flag stand behind): a fix that gives the class the member makes them run, so a forward or a body
    must fit their calls too (those of the runs that may load the class, as ``class_sites`` narrows them)."""
    if not any(member in site.requires for role in roles if (entry := contract.get(role, member)) is not None
               for site in entry.call_sites):
        return []  # no use waits for the member itself (most members): asking each use of the class would tell none
    return [site for _, site in class_sites(contract, roles, lookup, draft_shaped, given=member)
            if member in site.requires]


def never_drafted(contract: Contract, lookup: MemberLookup) -> frozenset[str]:
    """The algorithms whose config loads another class as every draft (see ``resolve.algorithm_drafts``): the
    class is never their draft."""
    drafts = contract.release.drafts if contract.release is not None else ()
    loaded_as = lookup.index.loaded_as
    return frozenset(name for name, architectures, _ in drafts
                     if not lookup.is_a(((tuple(loaded_as(a) for a in architectures), ()),)))
