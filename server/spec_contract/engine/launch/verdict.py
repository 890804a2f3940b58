"""One class in one role under one algorithm: supported, refused at start-up, crashes, degraded, or cannot tell.

The verdict is read from the same analysis ``check`` prints and from the same class status hover shows
(:func:`~spec_contract.engine.check.status.class_status`), never recomputed: each crash is a finding of the
check (its member, the worker lines it crashes at, the forward that fixes it), each refusal a capability
finding or a failed gate of the class status. So a preflight verdict, a matrix cell and ``check`` can never
disagree about a class.

What a finding means for a run: an error is a crash; a draft-role member the class lacks (SC005) is a crash
when the run loads the class as its draft; a failed gate (SC003) or an undeclared Protocol (SC006) is a
refusal at start-up; a guarded use (SC002) takes a degraded path; a capability the config picks at run
time (SC008) cannot be told. A use under a rare condition (SC004) is a note: the run crashes only when the
condition holds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spec_contract.engine.check.status import AlgorithmState, AlgorithmStatus, class_status
from spec_contract.engine.launch.algorithms import Selection
from spec_contract.engine.queries import Analysis
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import CallSite, Contract, Finding, Role
from spec_contract.engine.rules import Severity


class State(str, enum.Enum):
    """A verdict, worst first in :data:`ORDER`; a ``str``, as reports word it."""

    CRASHES = "crashes"
    REFUSED = "refused"
    UNKNOWN = "cannot-tell"
    DEGRADED = "degraded"
    SUPPORTED = "supported"

    def __str__(self) -> str:
        return self.value


ORDER = (State.CRASHES, State.REFUSED, State.UNKNOWN, State.DEGRADED, State.SUPPORTED)

_REFUSING = ("SC003", "SC006")
_DEGRADING = ("SC002",)
_UNKNOWN = ("SC008",)
_DRAFT_CRASH = "SC005"  # a crash when the run loads the class as its draft
_NOTE = ("SC004",)


@dataclass(frozen=True)
class Use:
    """A worker line a problem happens at (path relative to the engine's root, 1-based line)."""

    path: str
    line: int
    text: str
    phase: str | None = None


@dataclass(frozen=True)
class Problem:
    """One thing that goes wrong for the class (or, with no ``member``, for the algorithm as a whole)."""

    state: State
    code: str  # the finding's code; "" for a refusal no finding reports (a gate no inner model passes)
    member: str | None
    message: str
    uses: tuple[Use, ...]
    fix: str  # what to add, in words ("" when nothing forwards it)


@dataclass(frozen=True)
class Verdict:
    """The class's verdict in ``role`` for ``algorithm``, its problems worst first, and what fixes them."""

    architecture: str
    class_name: str
    qualname: str
    path: str  # the class's file, absolute (for ``check --fix``)
    line: int  # 1-based
    role: Role
    algorithm: str
    state: State
    problems: tuple[Problem, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def fixable(self) -> tuple[str, ...]:
        """The members ``check --fix`` adds for this verdict's problems."""
        return tuple(p.member for p in self.problems if p.member and p.fix.startswith("forward"))


def uses_of(analysis: Analysis, sites: tuple[CallSite, ...]) -> tuple[Use, ...]:
    out: dict[tuple[str, int], Use] = {}
    for site in sites:
        use = Use(analysis.relative(site.path), site.span.line + 1, site.text)
        out.setdefault((use.path, use.line), use)
    return tuple(sorted(out.values(), key=lambda u: (u.path, u.line)))


def selected(finding: Finding, selection: Selection) -> bool:
    """Whether a run of the selection meets the finding: its algorithm (a capability's), else any of its uses'."""
    if finding.algorithm is not None:
        return finding.algorithm in selection.algorithms
    return any(selection.selects(site.algorithm) for site in finding.call_sites)


def _problem(analysis: Analysis, finding: Finding, role: Role, selection: Selection) -> Problem | None:
    if role not in finding.roles or not selected(finding, selection):
        return None
    code = finding.code
    if finding.severity == Severity.ERROR or code == _DRAFT_CRASH and role is Role.DRAFT:
        state = State.CRASHES
    elif code in _REFUSING:
        state = State.REFUSED
    elif code in _DEGRADING:
        state = State.DEGRADED
    elif code in _UNKNOWN:
        state = State.UNKNOWN
    else:
        return None
    sites = tuple(s for s in finding.call_sites if finding.algorithm is not None or selection.selects(s.algorithm))
    members = (finding.member, *(f.member for f in finding.also))
    if code == "SC006":
        fix = f"declare `{finding.member}` in the class's bases"
    elif finding.provider.path and finding.delegate:
        fix = f"forward {', '.join(f'`{m}`' for m in members)} to `self.{finding.delegate}` ({finding.inner_class})"
    else:
        fix = ""
    return Problem(state, code, finding.member, finding.message, uses_of(analysis, sites), fix)


@dataclass(frozen=True)
class ClassFacts:
    """What the analysis says of one class, read once for all its verdicts: its findings and the state of
    each algorithm in its class status."""

    key: ClassKey
    findings: tuple[Finding, ...]
    algorithms: tuple[AlgorithmStatus, ...]


def class_facts(analysis: Analysis, key: ClassKey, findings: tuple[Finding, ...] | None = None) -> ClassFacts:
    """The class's facts; ``findings``, when given, are already the class's own."""
    if findings is None:
        findings = tuple(f for f in analysis.findings if f.class_qualname == key.dotted)
    status = class_status(analysis.index, key, analysis.contract, analysis.config, analysis.capabilities,
                          analysis.relative)
    return ClassFacts(key, findings, status.algorithms if status is not None else ())


def verdict(analysis: Analysis, architecture: str, facts: ClassFacts, role: Role, selection: Selection) -> Verdict:
    """The verdict for the class of ``facts`` (an architecture's registered class) in ``role``."""
    key = facts.key
    cls = analysis.index.class_summary(key)
    path = analysis.index.path_of(key.module) or ""
    name = key.qualname.rsplit(".", 1)[-1]
    line = cls.span.line + 1 if cls is not None else 1
    problems: list[Problem] = []
    notes: list[str] = []
    reported: set[str] = set()  # algorithms a finding already refuses
    for finding in facts.findings:
        found = _problem(analysis, finding, role, selection)
        if found is not None:
            problems.append(found)
            if found.state is State.REFUSED and finding.algorithm:
                reported.add(finding.algorithm)
        elif finding.code in _NOTE and role in finding.roles and selected(finding, selection):
            notes.append(f"`{finding.member}` is used only when {finding.condition or 'a rare condition holds'}: "
                         "the run crashes then")
    for algorithm in facts.algorithms:
        if algorithm.state is AlgorithmState.REFUSED and algorithm.algorithm in selection.algorithms \
                and algorithm.algorithm not in reported and not algorithm.members:
            gate = _gate_uses(analysis, analysis.contract, role, algorithm.algorithm)
            problems.append(Problem(State.REFUSED, "", None, f"the engine refuses {algorithm.algorithm} for this "
                                    f"class at start-up: {algorithm.why}", gate, ""))
    problems.sort(key=lambda p: (ORDER.index(p.state), p.member or ""))
    state = problems[0].state if problems else State.SUPPORTED
    return Verdict(architecture, name, key.dotted, path, line, role, selection.name, state, tuple(problems),
                   tuple(notes))


def _gate_uses(analysis: Analysis, contract: Contract, role: Role, algorithm: str) -> tuple[Use, ...]:
    """The capability gate lines of ``algorithm`` in ``role``'s contract (where the refusal is raised)."""
    sites = tuple(s for e in contract.for_role(role) for s in e.call_sites if s.gate and s.algorithm == algorithm)
    return uses_of(analysis, sites)
