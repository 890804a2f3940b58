"""A class's contract status, for hover: each member's state and each speculative algorithm's.

Computed with the check's own lookups (:class:`~spec_contract.engine.check.lookup.MemberLookup`,
:class:`~spec_contract.engine.check.gates.Gates`), so what hover says a class lacks is what the check reports.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spec_contract.engine.check.gates import Gates, class_sites, fallback_covered, may_meet_class
from spec_contract.engine.check.lookup import MemberLookup, MemberState
from spec_contract.engine.check.protocols import GatedCapability, capability_verdicts
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import CallSite, Contract, ContractEntry, Role, Span
from spec_contract.engine.rules import CAPABILITY_NOT_DECLARED, CAPABILITY_UNVERIFIABLE


@dataclass(frozen=True)
class MemberStatus:
    member: str
    roles: tuple[Role, ...]
    required: bool
    status: MemberState
    delegate: str | None  # the attribute path of the inner model that has it too (None: no inner has it)
    inner_class: str | None  # that inner model's qualified name in its module
    call_sites: tuple[CallSite, ...]


class AlgorithmState(str, enum.Enum):
    """How a class fares with a speculative algorithm; a ``str``, as hover words it."""

    SUPPORTED = "supported"
    REFUSED = "refused"  # at a capability gate the class fails
    SUPPORTED_EXCEPT = "supported-except"  # some members the algorithm uses would crash
    UNVERIFIABLE = "unverifiable"  # a declared Protocol capability whose language model the HF config picks

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AlgorithmStatus:
    """How a class fares with one speculative algorithm, for hover: ``why`` says which gate refuses it and
    what to forward; ``members`` are what to forward (refused) or what would crash (supported-except)."""

    algorithm: str
    state: AlgorithmState
    why: str
    members: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassStatus:
    qualname: str
    name: str
    path: str
    span: Span
    members: tuple[MemberStatus, ...]
    algorithms: tuple[AlgorithmStatus, ...] = ()


def class_status(index: Index, key: ClassKey, contract: Contract, config: Config,
                 capabilities: Sequence[GatedCapability] = (), rel: Callable[[str], str] = str) -> ClassStatus | None:
    """The status of every member of the class's roles' contract that the class or an inner model has (by
    name), of every algorithm those roles' contract uses, and of every Protocol capability the workers gate
    (``capabilities``; ``rel`` shortens paths in what hover says of them); None for a class the index does not
    know."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None:
        return None
    lookup = MemberLookup(index, key, config)
    members: dict[str, list[ContractEntry]] = {}
    for role in config.roles_for_class(cls.name):
        for entry in contract.for_role(role):
            members.setdefault(entry.member, []).append(entry)
    draft_shaped = config.draft_shaped(cls.name)
    statuses = []
    for member, entries in sorted(members.items()):
        # as the check: draft uses that no worker taking any model as its draft reaches never meet this class
        meeting = [(e, tuple(s for s in e.call_sites if may_meet_class(e.role, s, draft_shaped)))
                   for e in entries]
        meeting = [(e, sites) for e, sites in meeting if sites]
        state = lookup.state(member) if meeting else None
        if state is None:
            continue
        inner = lookup.inner(member)
        statuses.append(MemberStatus(
            member, tuple(e.role for e, _ in meeting), any(e.required for e, _ in meeting), state,
            inner.delegate if inner else None, inner.key.qualname if inner else None,
            tuple(s for _, sites in meeting for s in sites)))
    return ClassStatus(key.dotted, cls.name, path, cls.span, tuple(statuses),
                       tuple(_algorithm_status(lookup, cls.name, contract, config)
                             + _capability_status(index, key, config, capabilities, rel)))


def _capability_status(index: Index, key: ClassKey, config: Config, capabilities: Sequence[GatedCapability],
                       rel: Callable[[str], str]) -> list[AlgorithmStatus]:
    """A Protocol capability as hover words it, from the verdict the check gives the class."""
    out = []
    for gated, declares, finding in capability_verdicts(index, key, config, capabilities, rel):
        name, protocol = gated.capability.name, gated.protocol.qualname
        if finding is None and declares:
            out.append(AlgorithmStatus(name, AlgorithmState.SUPPORTED, ""))
        elif finding is None:
            out.append(AlgorithmStatus(name, AlgorithmState.REFUSED, f"the class does not declare `{protocol}`"))
        elif finding.code == CAPABILITY_UNVERIFIABLE.code:
            out.append(AlgorithmStatus(name, AlgorithmState.UNVERIFIABLE,
                                       "its language model is named by the HF config at run time"))
        elif finding.code == CAPABILITY_NOT_DECLARED.code:
            out.append(AlgorithmStatus(name, AlgorithmState.REFUSED, f"add `{protocol}` to the class's bases: its "
                                       f"language model `{finding.inner_class}` declares and backs it"))
        else:  # declared but not backed: the message says what fails
            out.append(AlgorithmStatus(name, AlgorithmState.REFUSED, finding.message.split(", but ", 1)[-1]))
    return out


def algorithm_status(index: Index, key: ClassKey, contract: Contract, config: Config) -> list[AlgorithmStatus]:
    """The class's status for each algorithm of the profile its roles' contract uses."""
    cls = index.class_summary(key)
    if cls is None:
        return []
    return _algorithm_status(MemberLookup(index, key, config), cls.name, contract, config)


def _algorithm_status(lookup: MemberLookup, name: str, contract: Contract, config: Config) -> list[AlgorithmStatus]:
    roles = config.roles_for_class(name)
    sites = class_sites(contract, roles, lookup, config.draft_shaped(name))
    gates = Gates(sites, lookup, config)
    out = []
    for spec in config.algorithms:
        mine = [(role, site) for role, site in sites if site.algorithm == spec.name]
        if not mine:
            continue
        stop = next((g for g in (gates.stopping(role, spec.name) for role in roles) if g is not None), None)
        if stop is not None:
            gate = " or ".join(f"`{m}`" for m in stop.members)
            if stop.forward is None:
                why = f"neither the class nor its inner model provides {gate}"
                out.append(AlgorithmStatus(spec.name, AlgorithmState.REFUSED, why))
            else:
                members = (stop.forward, *sorted(m for m in stop.behind if m != stop.forward))
                why = f"forward {', '.join(f'`{m}`' for m in members)} to enable it"
                out.append(AlgorithmStatus(spec.name, AlgorithmState.REFUSED, why, members))
            continue
        missing = sorted({site.member for _, site in mine
                          if not site.gate and not site.guarded and not site.condition
                          and not fallback_covered(site, lookup) and lookup.missing(site.member) is not None})
        if missing:
            out.append(AlgorithmStatus(spec.name, AlgorithmState.SUPPORTED_EXCEPT, "", tuple(missing)))
        else:
            out.append(AlgorithmStatus(spec.name, AlgorithmState.SUPPORTED, ""))
    return out
