"""Capability gates: which uses of a class's contract a run never reaches, because the engine refuses first.

A use behind a gate the class fails (``if not hasattr(m, "x"): raise``) never runs: the engine refuses the
algorithm at start-up. For each algorithm a run meets the gates of the algorithms it is gated by, then its
own, those the engine runs while loading the model (outside the algorithm's own worker files) before the
rest, in file order; the first one the class fails stops it. Both the check (one capability finding per
stopped algorithm) and hover (each algorithm's status) read :class:`Gates`.

Only a gate that runs while the server starts refuses cleanly. A getattr-then-raise in a per-request method
(DFLASH's check of the target's ``lm_head`` in its decode step) lets the server start and then fails the
first request: such a gate is a crash point, its use is checked like any other. A start-up gate on the same
members as such a late one is conditional (the late check would be redundant otherwise: SGLang's start-up
``lm_head`` check runs only for Domino drafts), so it refuses nothing either.
"""

from __future__ import annotations

from spec_contract.engine.check.lookup import MemberLookup
from spec_contract.engine.config import Algorithm, Config
from spec_contract.engine.read.files import glob_match
from spec_contract.engine.results import CallSite, Contract, Phase, Role, Span


class Gate:
    """One capability gate of one role and algorithm, and how the class fares at it."""

    def __init__(self, role: Role, algorithm: str | None, members: tuple[str, ...]) -> None:
        self.role, self.algorithm, self.members = role, algorithm, members
        self.sites: list[CallSite] = []
        self.passed = False
        self.forward: str | None = None  # the gate member an inner provides, when the class fails the gate
        self.behind: dict[str, list[CallSite]] = {}  # members past the gate the class must forward too


class Gates:
    """The capability gates of one class's roles, and for each algorithm the first failed gate a run of it
    meets (see the module docstring)."""

    def __init__(self, sites: list[tuple[Role, CallSite]], lookup: MemberLookup, config: Config) -> None:
        self._config = config
        found: dict[tuple[Role, str | None, tuple[str, ...]], Gate] = {}
        late: set[tuple[Role, str | None, str]] = set()  # (role, algorithm, member) a per-request gate tests
        for role, site in sites:
            if site.gate and site.phase is not Phase.START_UP:
                late.update((role, site.algorithm, m) for m in site.gate)
        self.refusing: set[int] = set()  # ids of the gate sites that refuse cleanly (see the module docstring)
        for role, site in sites:
            if site.gate and site.phase is Phase.START_UP \
                    and not any((role, site.algorithm, m) in late for m in site.gate):
                gate = found.setdefault((role, site.algorithm, site.gate), Gate(role, site.algorithm, site.gate))
                gate.sites.append(site)
                self.refusing.add(id(site))
        self.failed: dict[tuple[Role, str | None], list[Gate]] = {}
        for gate in sorted(found.values(), key=self._rank):
            gate.passed = any(lookup.provides(m) for m in gate.members)
            if not gate.passed:
                gate.forward = next((m for m in gate.members if lookup.inner(m) is not None), None)
                self.failed.setdefault((gate.role, gate.algorithm), []).append(gate)
        # A failed gate the stopping gate does not report itself: the fix forwards its member too.
        for (role, algorithm), failed in self.failed.items():
            stop = self.stopping(role, algorithm)
            for gate in failed:
                if gate is not stop and gate.forward is not None and stop is not None and stop.forward is not None:
                    stop.behind.setdefault(gate.forward, []).extend(gate.sites)
        # The uses past a stopping gate never run; those the class lacks and its inner has go with the fix.
        self.past: set[int] = set()  # ids of the sites a stopping gate keeps from running
        for role, site in sites:
            if id(site) in self.refusing or fallback_covered(site, lookup):
                continue
            stop = self.stopping(role, site.algorithm) if site.algorithm is not None else None
            if stop is None:
                continue
            self.past.add(id(site))
            if stop.forward is not None and not lookup.provides(site.member) and lookup.inner(site.member):
                stop.behind.setdefault(site.member, []).append(site)

    def refuses(self, site: CallSite) -> bool:
        """Whether the site is a gate that refuses cleanly (then it is no use of its own)."""
        return id(site) in self.refusing

    def _rank(self, gate: Gate) -> tuple[bool, str, Span]:
        spec = self._spec(gate.algorithm)
        first = min(gate.sites, key=lambda s: (s.path, s.span))
        own_file = bool(spec and spec.files and glob_match(first.path, spec.files))
        return own_file, first.path, first.span

    def _spec(self, algorithm: str | None) -> Algorithm | None:
        return next((a for a in self._config.algorithms if a.name == algorithm), None)

    def stopping(self, role: Role, algorithm: str | None) -> Gate | None:
        """The failed gate a run of ``algorithm`` in ``role`` stops at (None: it passes every gate)."""
        if algorithm is None:  # a gate on no algorithm's path stops only the uses of its own members
            return next(iter(self.failed.get((role, None), ())), None)
        spec = self._spec(algorithm)
        for name in (spec.gated_by if spec else ()) + (algorithm,):
            failed = self.failed.get((role, name))
            if failed:
                return failed[0]
        return None

    def reported(self) -> list[tuple[Gate, str]]:
        """One gate per stopped algorithm whose inner model passes it, with the gate member that inner
        provides: each is one capability finding."""
        out: list[tuple[Gate, str]] = []
        for role, algorithm in self.failed:
            stop = self.stopping(role, algorithm)
            if stop is not None and stop.forward is not None and all(stop is not gate for gate, _ in out):
                out.append((stop, stop.forward))
        return out


def fallback_covered(site: CallSite, lookup: MemberLookup) -> bool:
    """A fallback use whose primary the class or its inner model has: the primary's own check covers it."""
    return bool(site.alternative_of) and any(lookup.provides(m) or lookup.inner(m) for m in site.alternative_of)


def may_meet_class(role: Role, site: CallSite, draft_shaped: bool) -> bool:
    """Whether a use can meet a class at all: a draft use that no worker taking any model as its draft
    reaches only ever meets draft heads (see ``CallSite.any_draft``)."""
    return site.any_draft or draft_shaped or role is not Role.DRAFT


def class_sites(contract: Contract, roles: tuple[Role, ...], lookup: MemberLookup,
                draft_shaped: bool) -> list[tuple[Role, CallSite]]:
    """The call sites of the class's roles, less those whose receiver is never this class: a worker that
    switches to the language model when the target provides ``get_language_model`` (``unless``), and, on a
    class that is no draft by shape, draft uses no worker that takes any model as its draft reaches."""
    if contract.routed and Role.TARGET in roles and lookup.is_a(((contract.routed, ()),)):
        roles = tuple(role for role in roles if role is not Role.TARGET)  # the workers route it as a draft
    return [(role, site) for role in roles for entry in contract.for_role(role) for site in entry.call_sites
            if (site.unless is None or not lookup.provides(site.unless)) and lookup.may_meet(site)
            and (not site.only or lookup.is_a(site.only))
            and may_meet_class(role, site, draft_shaped)]
