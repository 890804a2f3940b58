"""One class in one role under one algorithm: supported, refused at start-up, crashes, degraded, or cannot tell.

The verdict is read from the status model (:func:`~spec_contract.engine.check.status.class_status`: what
findings, hover and the code actions read), never recomputed: a run of an algorithm meets that algorithm's
status (the uses that serve it, see ``CallSite.serves``). Each crash keeps the status's member, first worker
line, phase and provision (the fix); the check's finding for the same member, when there is one, lends its
code. So a preflight verdict, a matrix cell, hover and ``check`` can never disagree about a class.

Two readings are this module's own. A crash the status model lists but ``check`` reports no finding for
(neither the class's own nor a worker-line finding listing it, SC011) is a note, not a crash: the verdict's
state, and a preflight's exit code, rest only on crashes the check stands behind, so every crash cell has a
finding. And a Protocol capability the class declares but that fails for it (SC007)
is a crash at start-up, not a refusal (the engine's check passes and the run dies after it), whatever the
capability status words it as.

The words are the run's: they say "the target" or "the draft", name the run's own algorithm, and name only
worker lines a run of that launch name reaches (``Selection.selects``: not another algorithm's own worker).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from spec_contract.engine.check.status import (
    AlgorithmState,
    AlgorithmStatus,
    ClassStatus,
    How,
    Provision,
)
from spec_contract.engine.launch.algorithms import Selection
from spec_contract.engine.launch.refusals import gate_message
from spec_contract.engine.queries import Analysis
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import CallSite, Finding, Phase, Role
from spec_contract.engine.rules import Severity


class State(str, enum.Enum):
    """A verdict, worst first in :data:`ORDER`; a ``str``, as reports word it."""

    CRASHES = "crashes"
    REFUSED = "refused"
    UNKNOWN = "cannot-tell"
    DEGRADED = "degraded"
    SUPPORTED = "supported"
    NOT_ITS_DRAFT = "not-its-draft"  # the engine never loads the class as the algorithm's draft

    def __str__(self) -> str:
        return self.value


ORDER = (State.CRASHES, State.REFUSED, State.UNKNOWN, State.DEGRADED, State.SUPPORTED, State.NOT_ITS_DRAFT)

# the check's findings of a refusal: at start-up, of a capability not declared (declarable or not), and of a class
# the engine's check refuses after the load that could support the algorithm
_REFUSALS = ("SC003", "SC006", "SC009", "SC011", "SC012")  # SC011: one at a Protocol check (see check.protocols)
_CAPABILITY_CRASH = "SC007"  # declared, not backed: the engine's check passes, then start-up fails
# the codes whose finding says a run goes on (a guarded use's fallback, an optional implementation, a check that
# cannot be told) or fails only under a rare condition (SC004, SC015: a note says when); such a finding of the
# member confirms no crash
_CONDITIONAL = ("SC004", "SC015")
_GOES_ON = ("SC002", *_CONDITIONAL, "SC008", "SC014")


def says_a_crash(finding: Finding) -> bool:
    """Whether the finding can confirm a crash of its member (see ``verdict``: a crash no such finding reports
    is not counted); hover asks the same."""
    return finding.code not in _GOES_ON


@dataclass(frozen=True)
class Use:
    """A worker line a problem happens at (path relative to the engine's root, 1-based line), and when."""

    path: str
    line: int
    text: str
    phase: str | None = None


@dataclass(frozen=True)
class Problem:
    """One thing that goes wrong for the class (or, with no ``member``, for the algorithm as a whole)."""

    state: State
    code: str  # the check's finding for it; "" when the check reports none (a gate no inner model passes)
    member: str | None
    message: str
    uses: tuple[Use, ...]  # the first one a run reaches first
    fix: str  # what to add, in words ("" when nothing says how)
    how: str | None = None  # the provision: forward, implement, both, cannot tell


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
        """The members ``check --fix`` adds for this verdict's problems (the forwards)."""
        return tuple(p.member for p in self.problems if p.member and p.how == str(How.FORWARD))


def uses_of(analysis: Analysis, sites: tuple[CallSite, ...] | list[CallSite],
            selection: Selection | None = None) -> tuple[Use, ...]:
    """The sites as uses, once per line, in the order given; with ``selection``, those its run reaches (every one
    when it reaches none of them: the check's word that a run crashes there stands)."""
    reached = [site for site in sites if selection.selects(site)] if selection is not None else list(sites)
    out: dict[tuple[str, int], Use] = {}
    for site in reached or sites:
        use = Use(analysis.relative(site.path), site.span.line + 1, site.text, str(site.phase))
        out.setdefault((use.path, use.line), use)
    return tuple(out.values())


def selected(finding: Finding, selection: Selection) -> bool:
    """Whether a run of the selection meets the finding: its algorithm's, or one of its uses serves it."""
    return finding.algorithm == selection.algorithm or any(selection.selects(site) for site in finding.call_sites)


def crash_stands(finding: Finding, algorithm: str | None, reaches: Callable[[CallSite], bool]) -> bool:
    """Whether a run of ``algorithm`` dies at the finding: its algorithm's, or one of its uses the run
    ``reaches`` is neither guarded nor under a condition (a run that reaches only a guarded use of the member, or
    one in the handler of another member's AttributeError, takes the fallback: degraded, as its status says).
    The verdict asks it of a launch, hover of an algorithm's runs."""
    return finding.algorithm == algorithm or any(
        reaches(site) and not site.guarded and not site.condition for site in finding.call_sites)


def fix_words(member: str, provision: Provision) -> str:
    if provision.how is How.FORWARD:
        return f"forward `{member}` to `self.{provision.delegate}` ({provision.inner_class})"
    also = provision.capture.words() if provision.capture is not None else ""
    if provision.how is How.IMPLEMENT:
        return f"implement `{member}` as `{provision.like}` does{also}"
    if provision.how is How.BOTH:
        return (f"implement `{member}` in `{provision.inner_class}` as `{provision.like}` does{also}, and forward "
                f"it to `self.{provision.delegate}`")
    return f"add `{member}` (cannot tell how: {provision.why})" if provision.why else f"add `{member}`"


@dataclass(frozen=True)
class ClassFacts:
    """What the analysis says of one class, read once for all its verdicts: its status and its findings."""

    key: ClassKey
    status: ClassStatus | None
    findings: tuple[Finding, ...]


def concerns(finding: Finding, qualname: str) -> bool:
    """Whether the finding is about the class: its own, or a worker-line finding that lists it (SC011)."""
    return finding.class_qualname == qualname or any(listed.class_qualname == qualname for listed in finding.classes)


def class_facts(analysis: Analysis, key: ClassKey, findings: tuple[Finding, ...] | None = None) -> ClassFacts:
    """The class's facts; ``findings``, when given, are already those that concern it."""
    if findings is None:
        findings = tuple(f for f in analysis.findings if concerns(f, key.dotted))
    return ClassFacts(key, analysis.status_of(key), findings)


def _statuses(facts: ClassFacts, selection: Selection) -> list[AlgorithmStatus]:
    """The statuses a run of the selection meets: its algorithm's (a Protocol capability's among them)."""
    return [a for a in (facts.status.algorithms if facts.status else ()) if a.algorithm == selection.algorithm]


def _code(facts: ClassFacts, member: str | None, algorithm: str, codes: tuple[str, ...] = (),
          crash: bool = False) -> str:
    """The code of the check's finding for the member (no member: the algorithm's capability finding); for a
    ``crash``, only a finding that says one (:func:`says_a_crash`)."""
    for f in facts.findings:
        if crash and not says_a_crash(f):
            continue
        listed = next((c for c in f.classes if c.class_qualname == facts.key.dotted), None)
        if member is not None and listed is not None and member not in listed.members:
            continue
        if (member is None or f.member == member or listed is not None) and (not codes or f.code in codes) \
                and (member is not None or f.algorithm == algorithm):
            return f.code
    return ""


def _problems(analysis: Analysis, facts: ClassFacts, role: Role, status: AlgorithmStatus,
              selection: Selection) -> list[Problem]:
    """What one algorithm's status holds for the class in ``role``, worded for a run of ``selection``: a refusal
    at the gate of an algorithm its runs pass first is still a refusal of the run's own algorithm."""
    state = status.state
    run = selection.name
    if state is AlgorithmState.REFUSED:
        # the refusal's finding names the algorithm whose check it is: a run of another algorithm that passes the
        # same check (vLLM's DFLASH at EAGLE-3's supports_eagle3) meets it for the same member
        finding = next((f for f in facts.findings if f.code in (*_REFUSALS, _CAPABILITY_CRASH)
                        and (f.algorithm == status.algorithm or f.member in status.members)), None)
        if finding is not None and finding.code == _CAPABILITY_CRASH:
            return [Problem(State.CRASHES, finding.code, finding.member, finding.message,
                            uses_of(analysis, finding.call_sites, selection), "")]
        member = finding.member if finding is not None else status.members[0] if status.members else None
        gate = uses_of(analysis, [status.gate], selection) if status.gate is not None else \
            uses_of(analysis, finding.call_sites, selection) if finding is not None else ()
        fix = status.why if status.why.startswith(("forward", "add")) else ""
        whose = "" if status.algorithm == selection.algorithm else f", at the {status.algorithm} check {run} runs pass"
        when = phase_words(gate[0].phase) if gate else "while the server starts"
        message = f"the engine refuses {run} for this {role} {when}{whose}: {status.why}"
        site = status.gate
        said = gate_message(site.path, site.gate_line) if site is not None and site.gate_line is not None else None
        if site is not None and said is not None:
            message += f"; it raises at {analysis.relative(site.path)}:{said[0]}: {said[1]}"
        return [Problem(State.REFUSED, finding.code if finding else "", member, message, gate, fix)]
    if state is AlgorithmState.NOT_ITS_DRAFT and status.instead is not None:
        architectures, (path, line) = status.instead
        lines = (analysis.source(path) or "").splitlines()
        where = Use(analysis.relative(path), line + 1, lines[line].strip() if line < len(lines) else "")
        return [Problem(State.NOT_ITS_DRAFT, "", None, f"a {run} run never loads this class as its draft: the "
                        f"engine's config loads {loaded_words(architectures)} instead ({where.path}:{where.line})",
                        (where,), "")]
    if state is AlgorithmState.UNVERIFIABLE:
        return [Problem(State.UNKNOWN, _code(facts, None, status.algorithm, ("SC008",)), None,
                        f"cannot tell whether {run} works for this {role}: {status.why}", (), "")]
    out = []
    for crash in status.crashes:
        if crash.role is not role:
            continue
        sites = [crash.site] + [s for m in (facts.status.members if facts.status else ()) if m.member == crash.member
                                for s in m.call_sites if s.role is role and not s.guarded and s is not crash.site
                                and s.serves(status.algorithm)]
        uses = uses_of(analysis, sites, selection)
        site = crash.site
        if crash.refused and site.gate_line is not None:  # the engine's own check: a refusal that costs the load
            words = f"the {role} lacks `{crash.member}`: the engine's check at {analysis.relative(site.path)}:" \
                    f"{site.gate_line + 1} refuses the run {crash.phase.refused}"
            said = gate_message(site.path, site.gate_line)
            if said is not None:
                words += f"; it raises at {analysis.relative(site.path)}:{said[0]}: {said[1]}"
        else:
            words = f"the {role} lacks `{crash.member}`: a run reaches {uses[0].path}:{uses[0].line} " \
                    f"{phase_words(uses[0].phase)} and dies with AttributeError"
        out.append(Problem(State.CRASHES, _code(facts, crash.member, status.algorithm, crash=True), crash.member, words,
                           uses, fix_words(crash.member, crash.provision), str(crash.provision.how)))
    if out:
        return out
    # degraded: a guarded use of a member the class lacks while an inner model has it (a class that has no
    # such member anywhere takes the worker's ordinary path, as every plain model does)
    lacking = {m.member for m in (facts.status.members if facts.status else ()) if m.delegate is not None}
    return [Problem(State.DEGRADED, _code(facts, m, status.algorithm), m, f"the {role} does not forward `{m}`: the "
                    "run takes the worker's guarded fallback path", (), "") for m in status.degraded if m in lacking]


def loaded_words(architectures: tuple[str, ...]) -> str:
    """The architectures a config loads as every draft, in words: ``A``, or one of ``A``, ``B`` and 3 more."""
    names = [f"`{a}`" for a in architectures]
    if len(names) == 1:
        return names[0]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"one of {shown}"


# The phases of a worker use (``Phase``) in the order a run meets them, and when each happens, as reports word it
PHASES = (str(Phase.START_UP), str(Phase.FIRST_REQUEST), str(Phase.EVERY_STEP))
_PHASE_WORDS = {str(Phase.START_UP): "while the server starts, after the weights load",
                str(Phase.FIRST_REQUEST): "at the first request", str(Phase.EVERY_STEP): "at every step"}


def phase_words(phase: str | None) -> str:
    """When a failure of ``phase`` (one of :data:`PHASES`) happens, in words."""
    return _PHASE_WORDS.get(phase or "", f"({phase})" if phase else "")


def verdict(analysis: Analysis, architecture: str, facts: ClassFacts, role: Role, selection: Selection) -> Verdict:
    """The verdict for the class of ``facts`` (an architecture's registered class) in ``role``."""
    key = facts.key
    cls = analysis.index.class_summary(key)
    name = key.qualname.rsplit(".", 1)[-1]
    problems: dict[tuple[State, str | None, str], Problem] = {}
    unconfirmed: dict[str, Problem] = {}
    for status in _statuses(facts, selection):
        for problem in _problems(analysis, facts, role, status, selection):
            if problem.state is State.CRASHES and not problem.code and problem.member:
                unconfirmed.setdefault(problem.member, problem)
                continue
            problems.setdefault((problem.state, problem.member, problem.message if not problem.member else ""), problem)
    # an error the check reports that the status model does not list as a crash (a forward to an inner
    # model that lacks the member, SC013): the check's word that the run crashes there stands; a declared
    # capability's (SC007) is the refusal branch's, for the runs its check admits, not every run its uses reach
    for f in facts.findings:
        if f.severity == Severity.ERROR and f.code != _CAPABILITY_CRASH and f.class_qualname == key.dotted \
                and role in f.roles and crash_stands(f, selection.algorithm, selection.selects) and (State.CRASHES, f.member, "") not in problems:
            sites = [site for site in f.call_sites if f.algorithm is not None or selection.selects(site)]
            problems[(State.CRASHES, f.member, "")] = Problem(State.CRASHES, f.code, f.member, f.message,
                                                             uses_of(analysis, sites, selection), "")
            unconfirmed.pop(f.member, None)
    # notes name only lines the run reaches (another launch name's own workers are not its business)
    conditional = [f for f in facts.findings if f.code in _CONDITIONAL and role in f.roles and selected(f, selection)
                   and any(selection.selects(site) for site in f.call_sites)]
    notes = [f"the {role} lacks `{f.member}`, used only when {f.condition or 'a rare condition holds'}: the run "
             "crashes then" for f in conditional]
    said = {f.member for f in conditional}  # a member the check says crashes under a condition is said once
    notes += [f"the {role} lacks `{p.member}`, which {p.uses[0].path}:{p.uses[0].line} uses ({p.uses[0].phase}); "
              "check reports no crash for it, so it is not counted" for p in unconfirmed.values()
              if p.uses and p.member not in said]
    ordered = sorted(problems.values(), key=lambda p: (ORDER.index(p.state), p.member or ""))
    state = ordered[0].state if ordered else State.SUPPORTED
    return Verdict(architecture, name, key.dotted, analysis.index.path_of(key.module) or "",
                   cls.span.line + 1 if cls is not None else 1, role, selection.algorithm or selection.name, state,
                   tuple(ordered), tuple(notes))
