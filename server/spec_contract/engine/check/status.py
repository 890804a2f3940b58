"""The status model: for one class that can play a role, how it fares with each algorithm its roles' contract
uses, and for each member it lacks, how that member can be provided. Findings, hover, code actions, the
``contract`` command and the reports (preflight, the support matrix) read it, so they never disagree.

The front door exports the API (``spec_contract.engine``); its dataclasses only grow, fields are never
renamed:

* :func:`class_status` (``index, key, contract, config, capabilities=(), rel=str, implement=None``) →
  :class:`ClassStatus` or None; ``Analysis.status_of(key)`` (with the analysis' implement by analogy),
  ``Analysis.statuses()`` (every checked class) and ``Analysis.class_at(path, line, col)`` answer the same;
* :class:`ClassStatus`: the class (``qualname``, ``name``, ``path``, ``span``), each contract member it or an
  inner model has or a run lacks (:class:`MemberStatus`), each algorithm (:class:`AlgorithmStatus`), and the
  roles a speculative run can give it (``serves``, :func:`serving_roles`: none for a class the engine never
  serves as a generative model);
* :class:`AlgorithmStatus`: ``state`` (:class:`AlgorithmState`) is ``supported``, ``refused`` (before the
  weights load: a Protocol capability the class does not declare), ``crashes`` (``crashes``: each member a run
  reaches and the class lacks, a :class:`Crash` with the worker line, its
  :class:`~spec_contract.engine.results.Phase`, how to provide it, whether a run of the algorithm certainly
  reaches the line, and whether the engine's own check refuses it there, after the load: ``refused``),
  ``degraded`` (``degraded``:
  guarded reads of members it lacks) or ``unverifiable`` (a Protocol capability whose language model the HF
  config picks); ``members`` are what to provide to enable or fix it; ``intent`` whether the class shows it
  means to support the algorithm (what makes a crash an error, SC010, rather than a line of SC011);
* :class:`Provision`: ``how`` (:class:`How`) is ``forward`` (to ``delegate``, whose class ``inner_class`` has
  it), ``implement`` (like ``like``, a class holding the same parts), ``both`` (implement in ``inner_class``,
  forward in this class) or ``cannot tell`` (``why``).

The algorithms are the release's (``Contract.algorithms``); a run of one meets the uses that serve it
(``CallSite.serves``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from spec_contract.engine.check.gates import (
    Gates,
    class_sites,
    fallback_covered,
    may_meet_class,
    never_drafted,
    once_provided,
)
from spec_contract.engine.check.lookup import MemberLookup, MemberState, takes, unfit_calls
from spec_contract.engine.check.protocols import GatedCapability, capability_verdicts
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import CallSite, Contract, ContractEntry, Finding, How, Phase, Provision, Role, Span
from spec_contract.engine.rules import CAPABILITY_NOT_DECLARABLE, CAPABILITY_NOT_DECLARED, CAPABILITY_UNVERIFIABLE


@dataclass(frozen=True)
class MemberStatus:
    member: str
    roles: tuple[Role, ...]
    required: bool
    status: MemberState
    delegate: str | None  # the attribute path of the inner model that has it too (None: no inner has it)
    inner_class: str | None  # that inner model's qualified name in its module
    call_sites: tuple[CallSite, ...]
    provision: Provision | None = None  # for a missing member: how it can be provided


class AlgorithmState(str, enum.Enum):
    """How a class fares with a speculative algorithm; a ``str``, as hover words it."""

    SUPPORTED = "supported"
    REFUSED = "refused"  # at a capability gate the class fails, while the server starts
    CRASHES = "crashes"  # a run reaches a use of a member the class lacks
    DEGRADED = "degraded"  # only guarded uses of members the class lacks: a slower or reduced path
    UNVERIFIABLE = "unverifiable"  # a declared Protocol capability whose language model the HF config picks
    NOT_ITS_DRAFT = "not-its-draft"  # a draft the engine's config never loads for the algorithm (see ``instead``)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Crash:
    """A member a run of the algorithm uses unguarded and the class lacks: where it fails, when, and the fix."""

    member: str
    role: Role
    site: CallSite  # the first use a run reaches (start-up ones first; a certain one, if any is)
    phase: Phase
    provision: Provision
    # the use runs past no test but those selecting the algorithm: a run of it certainly reaches the line (a use
    # past ``self._projection_enabled and …`` runs only when a flag the engine does not follow is set)
    certain: bool = True
    # the engine's own check stops the run there (a capability gate: its ``ValueError``, not an AttributeError),
    # after the weights have loaded, as a crash does
    refused: bool = False
    # a run meets the use only past a check the class fails (see ``gates``): what the run needs too, never
    # where it stops
    past: bool = False
    # the class shows it means to have the member: it has one the engine uses on the same runs or on fewer
    # (EAGLE-3's capture method says the class means to run EAGLE, whose members it lacks; EAGLE's members say
    # nothing of EAGLE-3's capture), or an inner model has it (see ``AlgorithmStatus.intent``)
    intent: bool = False
    # only runs the class shows it is a draft of reach the use (each uses a member of the class that not every run
    # with a draft uses), and one such member is for some of the use's runs alone (a DSpark head's
    # ``markov_embed`` says DSPARK): for a draft head, the sign such a run loads it (another's head never is)
    specific: bool = False


@dataclass(frozen=True)
class AlgorithmStatus:
    """How a class fares with one speculative algorithm: ``why`` says which gate refuses it and what to provide;
    ``members`` are what to provide (refused) or what would crash (crashes)."""

    algorithm: str
    state: AlgorithmState
    why: str
    members: tuple[str, ...] = ()
    gate: CallSite | None = None  # refused: the gate's first use
    crashes: tuple[Crash, ...] = ()
    degraded: tuple[str, ...] = ()  # members only guarded uses read, which the class lacks
    # the class shows it means to support the algorithm: it means to have a member the run lacks (see
    # ``Crash.intent``), or, when nothing crashes, it has a member only some runs use, this one's among them
    intent: bool = False
    # not its draft: the architectures the config loads as every draft of the algorithm instead, and the (path,
    # 0-based line) that says so (see ``resolve.algorithm_drafts``)
    instead: tuple[tuple[str, ...], tuple[str, int]] | None = None


@dataclass(frozen=True)
class ClassStatus:
    qualname: str
    name: str
    path: str
    span: Span
    members: tuple[MemberStatus, ...]
    algorithms: tuple[AlgorithmStatus, ...] = ()
    serves: tuple[Role, ...] = (Role.TARGET, Role.DRAFT)  # see serving_roles

    def algorithm(self, name: str) -> AlgorithmStatus | None:
        return next((a for a in self.algorithms if a.algorithm == name), None)


def serving_roles(config: Config, name: str) -> tuple[Role, ...]:
    """The roles a speculative run can give the class ``name``: a draft head (the profile's
    ``draft-only-classes``) the draft; a class the engine never serves as a generative model (its own generation
    test, the profile's ``non-target-classes``: embedding, classification, reward models) none, since no run
    builds a worker around a model that answers no generation request, as its target or as its draft; any other
    class the target, and the draft of a run that loads it as its draft (``draft-classes``, or a run that takes
    any model as its draft).

    The check still reads a class that serves no role as a draft (``Config.roles_for_class``): what it reports of
    it are warnings, for a draft checkpoint that would name it. The support matrix lists only the classes that
    serve a role, each in the first one."""
    if config.draft_shaped(name) and not config.loaded_as_draft(name):
        return (Role.DRAFT,)
    if config.roles_for_class(name) == (Role.DRAFT,):  # no draft head, and never the target: it generates nothing
        return ()
    return (Role.TARGET, Role.DRAFT)


Implementer = Callable[[MemberLookup, str], Provision | None]  # implement by analogy (see check.analogy)
_PHASES = (Phase.START_UP, Phase.FIRST_REQUEST, Phase.EVERY_STEP)  # in the order a run meets them


def provision_of(lookup: MemberLookup, member: str, implement: Implementer | None = None,
                 sites: Sequence[CallSite] = ()) -> Provision:
    """How a member the class lacks can be provided: forward to an inner model that has it, unless one of the
    calls ``sites`` passes it arguments its method does not take (the forward would fail there too); else as
    ``implement`` finds (by analogy), else cannot tell."""
    broken = lookup.broken(member) if lookup.provides(member) else None
    if broken is not None:  # it has the member, but hands it to inner classes that all lack it
        names = " or ".join(f"`{inner.qualname.rsplit('.', 1)[-1]}`" for inner in broken.inners)
        return Provision(How.UNKNOWN, why=f"the class hands it to `self.{broken.delegate}` ({names}), which lacks "
                                          "it: add it to that class")
    inner = lookup.inner(member)
    unfit = unfit_calls(sites, inner.member) if inner is not None else []
    if inner is not None and not unfit:
        return Provision(How.FORWARD, inner.delegate, inner.key.qualname)
    if inner is not None:
        site = unfit[0]
        why = (f"`self.{inner.delegate}` ({inner.key.qualname.rsplit('.', 1)[-1]}) has it, but it takes "
               f"{takes(inner.member)} argument(s) and the call at line {site.span.line + 1} of "
               f"{site.path.rsplit('/', 1)[-1]} passes {site.arity}, so a forward would fail there too")
        found = implement(lookup, member) if implement is not None else None
        if found is not None and found.how is not How.UNKNOWN and not _unfit_model(lookup, found, member, sites):
            return found
        return Provision(How.UNKNOWN, why=why + (f"; {found.why}" if found is not None and found.why else ""))
    if implement is None:
        return Provision(How.UNKNOWN, why="no inner model has it")
    return implement(lookup, member) or Provision(How.UNKNOWN, why="no inner model has it, and no class in the "
                                                                   "tree implements it")


def _unfit_model(lookup: MemberLookup, provision: Provision, member: str, sites: Sequence[CallSite]) -> bool:
    """Whether the model of an implementation takes other arguments than the calls pass: its body would fail
    there as the forward would."""
    module, _, qualname = (provision.like or "").rpartition(".")
    model = lookup.index.defines(ClassKey(module, qualname), member) if module else None
    return model is not None and bool(unfit_calls(sites, model))


def class_status(index: Index, key: ClassKey, contract: Contract, config: Config,
                 capabilities: Sequence[GatedCapability] = (), rel: Callable[[str], str] = str,
                 implement: Implementer | None = None,
                 reached: tuple[list[tuple[Role, CallSite]], Gates] | None = None) -> ClassStatus | None:
    """The status of the class (see the module docstring); None for a class the index does not know.
    ``capabilities``: the Protocol capabilities the workers gate; ``rel`` shortens paths in what is said of
    them; ``implement``: how a member no inner model has can be implemented (None: cannot tell); ``reached``:
    the uses a run meets and the gates they pass, when not the class's own (a held language model's are its
    wrapper's, narrowed to what the wrapper hands it: ``check.wrappers.held_sites``)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None:
        return None
    lookup = MemberLookup(index, key, config)
    algorithms = algorithm_statuses(lookup, cls.name, contract, config, implement, reached=reached)
    handed = {site.member for _, site in reached[0]} if reached is not None else None
    crashing = {c.member: c.provision for a in algorithms for c in a.crashes}
    members: dict[str, list[ContractEntry]] = {}
    for role in config.roles_for_class(cls.name):
        for entry in contract.for_role(role):
            members.setdefault(entry.member, []).append(entry)
    draft_shaped = config.draft_shaped(cls.name)
    statuses = []
    for member, entries in sorted(members.items()):
        if handed is not None and member not in handed:
            continue
        # as the check: draft uses that no worker taking any model as its draft reaches never meet this class,
        # nor do uses only a model with some other member reaches (``requires``) when the class lacks it
        meeting = [(e, tuple(s for s in e.call_sites if may_meet_class(e.role, s, draft_shaped)
                             and all(lookup.provides(s.member if m == "*" else m) for m in s.requires)))
                   for e in entries]
        meeting = [(e, sites) for e, sites in meeting if sites]
        state = lookup.state(member) if meeting else None
        if state is None and member in crashing and meeting:
            state = MemberState.MISSING  # no inner model has it either, and a run crashes without it
        if state is None:
            continue
        inner = lookup.inner(member)
        provision = None
        if state is MemberState.MISSING:
            provision = crashing.get(member) or provision_of(
                lookup, member, implement, [s for _, sites in meeting for s in sites]
                + once_provided(contract, config.roles_for_class(cls.name), lookup, draft_shaped, member))
        statuses.append(MemberStatus(
            member, tuple(e.role for e, _ in meeting), any(e.required for e, _ in meeting), state,
            inner.delegate if inner else None, inner.key.qualname if inner else None,
            tuple(s for _, sites in meeting for s in sites), provision))
    return ClassStatus(key.dotted, cls.name, path, cls.span, tuple(statuses),
                       _with_capabilities(algorithms, _capability_status(index, key, config, capabilities, rel)),
                       serving_roles(config, cls.name))


def _with_capabilities(algorithms: list[AlgorithmStatus], capabilities: list[AlgorithmStatus]
                       ) -> tuple[AlgorithmStatus, ...]:
    """One status per algorithm: a Protocol capability the class fails decides its algorithms' (the check stops
    the run before their other uses); one it passes leaves them as the uses say."""
    failing = {c.algorithm: c for c in capabilities if c.state is not AlgorithmState.SUPPORTED}
    known = {a.algorithm for a in algorithms}
    return tuple([failing.get(a.algorithm, a) for a in algorithms]
                 + [c for c in capabilities if c.algorithm not in known])


def _capability_status(index: Index, key: ClassKey, config: Config, capabilities: Sequence[GatedCapability],
                       rel: Callable[[str], str]) -> list[AlgorithmStatus]:
    """A Protocol capability as hover words it, from the verdict the check gives the class: one status for each
    algorithm whose runs its check stops."""
    out = []
    for gated, declares, finding in capability_verdicts(index, key, config, capabilities, rel):
        status = _verdict_status(gated, declares, finding)
        out += [replace(status, algorithm=name) for name in gated.runs]
    return out


def _verdict_status(gated: GatedCapability, declares: bool, finding: Finding | None) -> AlgorithmStatus:
    name, protocol = gated.capability.name, gated.protocol.qualname
    if finding is None and declares:
        return AlgorithmStatus(name, AlgorithmState.SUPPORTED, "")
    if finding is None:
        return AlgorithmStatus(name, AlgorithmState.REFUSED, f"the class does not declare `{protocol}`")
    if finding.code == CAPABILITY_UNVERIFIABLE.code:
        return AlgorithmStatus(name, AlgorithmState.UNVERIFIABLE, "its language model is named by the HF config at run "
                                                                  "time")
    if finding.code == CAPABILITY_NOT_DECLARED.code:
        return AlgorithmStatus(name, AlgorithmState.REFUSED, f"add `{protocol}` to the class's bases: its language "
                                                             f"model `{finding.inner_class}` declares and backs it")
    if finding.code == CAPABILITY_NOT_DECLARABLE.code:
        return AlgorithmStatus(name, AlgorithmState.REFUSED, f"the class does not declare `{protocol}`, and declaring "
                                                             "it is not enough: "
                               + finding.message.split(" is not enough: ", 1)[-1])
    # declared but not backed: the message says what fails
    return AlgorithmStatus(name, AlgorithmState.REFUSED, finding.message.split(", but ", 1)[-1])


def algorithm_status(index: Index, key: ClassKey, contract: Contract, config: Config,
                     implement: Implementer | None = None) -> list[AlgorithmStatus]:
    """The class's status for each algorithm its roles' contract uses."""
    cls = index.class_summary(key)
    if cls is None:
        return []
    return algorithm_statuses(MemberLookup(index, key, config), cls.name, contract, config, implement)


def _first(sites: list[CallSite]) -> CallSite:
    """The use a run reaches first: start-up ones before the others, then in file order."""
    return min(sites, key=lambda s: (s.phase is not Phase.START_UP, s.path, s.span))


def reached_by_every_run(site: CallSite) -> bool:
    """Whether every run of the use's algorithms reaches it: it sits past no test but those that select a
    speculative run or its algorithm, and under no rare condition (see ``Crash.certain``)."""
    return site.certain and not site.condition


def run_words(sites: Sequence[CallSite]) -> str:
    """Whose runs reach ``sites``, as messages say it: "a run of EAGLE or EAGLE3", else "a run"."""
    names: dict[str, None] = {}
    for site in sites:
        if site.algorithms is None:
            return "a run"
        names.update(dict.fromkeys(sorted(site.algorithms)))
    if not names:
        return "a run"
    listed = list(names)
    return "a run of " + (listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1])


def first_reached(sites: Sequence[CallSite]) -> CallSite:
    """Where a run first meets a member the class lacks, of the uses ``sites``: the first (see :func:`_first`) of
    those every run of their algorithm reaches, else of them all. A finding's message names this line, as the
    class's status does."""
    certain = [site for site in sites if reached_by_every_run(site)]
    return _first(certain or list(sites))


def algorithm_statuses(lookup: MemberLookup, name: str, contract: Contract, config: Config,
                       implement: Implementer | None = None,
                       reached: tuple[list[tuple[Role, CallSite]], Gates] | None = None) -> list[AlgorithmStatus]:
    """Each algorithm's status for the class ``lookup`` asks about (see the module docstring); ``reached``:
    the class's sites and gates, when the caller has them already (the check)."""
    roles = config.roles_for_class(name)
    draft_shaped = config.draft_shaped(name)
    if reached is None:
        sites = class_sites(contract, roles, lookup, draft_shaped)
        reached = sites, Gates(sites, lookup, contract.algorithms)
    sites, gates = reached
    # intent: the class has a method the runs call on a model, in either role, with the runs its uses serve; one
    # the engine calls on every run's model too (``get_input_embeddings``, which models have for other reasons)
    # says nothing
    primary = roles[0] if draft_shaped or roles == (Role.DRAFT,) else Role.TARGET
    every = frozenset(contract.algorithms)
    served: dict[str, frozenset[str]] = {}
    for _, site in sites:
        served[site.member] = served.get(site.member, frozenset()) | (site.algorithms or every)
    # (an inner model's member, ``model.x``, is no sign: the class holds it whoever wrote it)
    called = {site.member for _, site in sites if site.is_call}  # once, not a scan of the uses per member
    signs = [runs for member, runs in served.items() if member not in contract.generic and "." not in member
             and member in called and lookup.provides(member)]

    def means(member: str, algorithm: str) -> bool:
        """The class shows it means to have ``member`` in a run of ``algorithm`` (see ``Crash.intent``)."""
        return any(algorithm in runs and runs <= served.get(member, every) for runs in signs)

    with_draft = frozenset().union(*(site.algorithms or every for role, site in sites if role is Role.DRAFT))

    # the runs the class's own members say it is a draft of: those of members not every run with a draft uses
    drafted = frozenset().union(*(runs for runs in signs if runs != with_draft))

    def specific(site: CallSite) -> bool:
        """Only runs the class shows it is a draft of reach the use, and one of its members is for some of those
        runs alone (see ``Crash.specific``). A line runs its members do not single out may reach (the proposers' shared code, under tests the tool does not follow:
        vLLM's ``if self.eagle3_use_aux_hidden_state:``, true only for EAGLE-3) says nothing of whose draft it is."""
        runs_here = site.algorithms or every
        return runs_here <= drafted and any(runs <= runs_here for runs in signs if runs != with_draft)

    # the uses a run may fail at, whatever its algorithm: a member the class has by a forward to nowhere passes
    # every gate and then crashes (SC013)
    failing = [(role, site) for role, site in sites
               if not site.condition and (not lookup.provides(site.member) or lookup.broken(site.member) is not None)
               and not fallback_covered(site, lookup)]
    reaching = every if any(site.algorithms is None for _, site in sites) \
        else frozenset().union(*(site.algorithms or () for _, site in sites))
    # each failing use under the runs that reach it, in order, once: each run's status asked every failing use
    failing_in: dict[str, list[tuple[Role, CallSite]]] = {}
    for role, site in failing:
        for run in gates.runs(site):
            failing_in.setdefault(run, []).append((role, site))
    out = []
    # a class that is only ever a draft, of none of the runs of an algorithm whose config loads its own drafts
    undrafted = never_drafted(contract, lookup) if roles == (Role.DRAFT,) else frozenset()
    instead = {name: (architectures, where) for name, architectures, where in contract.release.drafts
               if name in undrafted} if undrafted and contract.release is not None else {}
    once: dict[str, list[CallSite]] = {}  # a member's uses past its own test, one list for every algorithm
    unforwarded: dict[str, Provision] = {}  # a member no inner model has: its provision, which no use changes

    def provided(member: str, found: list[CallSite]) -> Provision:
        """How the run's uses ``found`` of a member the class lacks can be provided (see :func:`provision_of`):
        their arguments (and those of its uses past its own test) matter only to a forward, so a member no inner
        model has is asked once, not once per run."""
        if member in unforwarded:
            return unforwarded[member]
        if lookup.inner(member) is None:
            unforwarded[member] = provision_of(lookup, member, implement)
            return unforwarded[member]
        if member not in once:
            once[member] = once_provided(contract, roles, lookup, draft_shaped, member)
        return provision_of(lookup, member, implement, found + once[member])

    for algorithm in contract.algorithms:
        if algorithm in instead:
            out.append(AlgorithmStatus(algorithm, AlgorithmState.NOT_ITS_DRAFT, "", instead=instead[algorithm]))
            continue
        if algorithm not in reaching:
            continue
        lacking: dict[tuple[str, Role], list[CallSite]] = {}
        degraded: set[str] = set()
        for role, site in failing_in.get(algorithm, ()):
            if not gates.needed(role, site, algorithm):
                continue
            if site.guarded and not site.gate:
                degraded.add(site.member)
            else:
                lacking.setdefault((site.member, role), []).append(site)
        crashes = []
        for (member, role), found in sorted(lacking.items()):
            reachable = [site for site in found if not gates.past(role, site, algorithm)]
            first = first_reached(reachable or found)
            certain = reached_by_every_run(first)
            provision = provided(member, found)
            crashes.append(Crash(member, role, first, first.phase, provision, certain, refused=bool(first.gate),
                                 past=not reachable, intent=means(member, algorithm)
                                 or provision.how is How.FORWARD and role is primary,
                                 specific=specific(first)))
        # where the run stops first: a check, a use while the model loads, then by phase
        crashes.sort(key=lambda c: (not c.refused, c.past, not c.site.loading, _PHASES.index(c.phase)))
        degraded -= {c.member for c in crashes}
        # a draft use on a class that is no draft by shape crashes only if a draft checkpoint names the class
        decisive = [c for c in crashes if c.role is not Role.DRAFT or draft_shaped or roles == (Role.DRAFT,)]
        intent = any(c.intent for c in crashes) or not crashes and any(algorithm in runs for runs in signs)
        if decisive:
            out.append(AlgorithmStatus(algorithm, AlgorithmState.CRASHES, "", tuple(c.member for c in decisive),
                                       crashes=tuple(crashes), degraded=tuple(sorted(degraded)), intent=intent))
        elif degraded:
            out.append(AlgorithmStatus(algorithm, AlgorithmState.DEGRADED, "", crashes=tuple(crashes),
                                       degraded=tuple(sorted(degraded)), intent=intent))
        else:
            out.append(AlgorithmStatus(algorithm, AlgorithmState.SUPPORTED, "", crashes=tuple(crashes),
                                       intent=intent))
    return out
