"""Findings read from the status model for what the forward check cannot see: members no inner model has.

For each algorithm of a class (see :mod:`~spec_contract.engine.check.status`), the severity follows the
evidence of intent, so an error keeps meaning "this run crashes":

* the run crashes and the class shows it means to support the algorithm (it has some of the members the
  algorithm uses, or its inner model has others it lacks): SC010, an error, one per member, with how to
  implement it (like a named class, or in the inner model and forwarded here);
* the run crashes and the class shows no support at all: a missing gate as much as a missing member, said
  once on the worker line (SC011, a warning listing the classes); each class's check yields a per-class
  record that :func:`on_worker_lines` gathers, so a re-check of one class still updates the line's finding;
* the engine's own check refuses the algorithm (only after the weights have loaded: a crash for the person
  waiting), the class shows no support, and every member the run needs can be implemented by analogy:
  SC012, a hint beside the worker line's listing, whose fix adds them all;
* the run is degraded: a worker calls a member only when the model has it (``hasattr`` first), the class and
  its inner models lack it, and a class holding the same parts implements it in a body that fits this one:
  SC014, a hint (nothing crashes), saying the guarded call site, what the run goes without, and the model.

Members an inner model has are the forward check's (SC001…SC005); they are not reported again here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from operator import is_

from spec_contract.engine.check.analogy import Analogies
from spec_contract.engine.check.gates import Gates
from spec_contract.engine.check.lookup import MemberLookup
from spec_contract.engine.check.status import (
    AlgorithmState,
    AlgorithmStatus,
    Crash,
    algorithm_statuses,
    provision_of,
    run_words,
)
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import (
    CallSite,
    Contract,
    Finding,
    How,
    Listed,
    Phase,
    Provider,
    Provision,
    Role,
    Span,
)
from spec_contract.engine.rules import (
    IMPLEMENTABLE,
    MISSING_CONDITIONAL_IMPLEMENTATION,
    MISSING_IMPLEMENTATION,
    MISSING_OPTIONAL_IMPLEMENTATION,
    UNREFUSED_CRASH,
)
from spec_contract.engine.summarise.summary import ClassSummary

Relative = Callable[[str], str]
_NOWHERE = Span(0, 0, 0, 0)


def implementer(analogies: Analogies | None, config: Config) -> Callable[[MemberLookup, str], Provision | None]:
    """The status model's way to provide a member no inner model has (None: cannot tell)."""
    def implement(lookup: MemberLookup, member: str) -> Provision | None:
        return analogies.provision(lookup, member, config) if analogies is not None else None
    return implement


def provision_words(member: str, provision: Provision) -> str:
    """How the fix provides a member, for messages."""
    short = (provision.like or "").rsplit(".", 1)[-1]
    also = provision.capture.words() if provision.capture is not None else ""
    if provision.how is How.IMPLEMENT:
        return f"implement it like `{short}.{member}`{also}"
    if provision.how is How.BOTH:
        return (f"implement it in `{provision.inner_class}` like `{short}.{member}`{also} and forward it to "
                f"`self.{provision.delegate}`")
    return f"cannot tell how to provide it: {provision.why}" if provision.why else "cannot tell how to provide it"


def _provider(index: Index, provision: Provision) -> Provider:
    """Where the model of an implementation is (nowhere when there is none)."""
    if provision.like is None:
        return Provider("", "", _NOWHERE, "method")
    module, _, qualname = provision.like.rpartition(".")
    path = index.path_of(module) or ""
    cls = index.class_summary(ClassKey(module, qualname))
    return Provider(provision.like, path, cls.span if cls else _NOWHERE, "method")


def crash_findings(index: Index, key: ClassKey, cls: ClassSummary, path: str, contract: Contract, config: Config,
                   analogies: Analogies | None, rel: Relative, lookup: MemberLookup,
                   reached: tuple[list[tuple[Role, CallSite]], Gates]) -> list[Finding]:
    """The class's SC010, SC011 (per-class records), SC012 and SC014 findings (see the module docstring), from the
    check's ``lookup`` and the sites and gates it found (``reached``)."""
    # a language model of a class not known here may have what the class lacks: what to forward is unknown, so
    # the class counts as showing no support (it is listed where it crashes, never an error)
    unknown = _unknown_inner(index, key, config)
    as_draft = config.loaded_as_draft(cls.name)
    statuses = algorithm_statuses(lookup, cls.name, contract, config, reached=reached)
    provide = implementer(analogies, config)
    out: list[Finding] = []
    # each member once, said for the run that shows the class means to have it if one does, else the first
    chosen: dict[str, tuple[AlgorithmStatus, Crash, bool, CallSite]] = {}
    conditional: dict[str, tuple[AlgorithmStatus, Crash]] = {}  # SC015's, each member once
    draft_head = config.draft_shaped(cls.name)
    for status in statuses:
        if status.state is AlgorithmState.CRASHES and not unknown:
            for crash in status.crashes:
                if crash.member in status.members and _conditional(crash, lookup, as_draft, draft_head):
                    conditional.setdefault(crash.member, (status, crash))
        if status.state is AlgorithmState.CRASHES:
            # certain crashes (see ``Crash.certain``) of the target, and of the draft on a class a config
            # rewrite loads as every draft (a draft head's uses belong to its own algorithm's worker)
            certain = [c for c in status.crashes if c.member in status.members and c.certain
                       and (c.role is Role.TARGET or as_draft)]
            if not certain:
                continue
            # without intent, the class is listed on the line where its run first meets a use of the member's
            # role: a target line lists the target's contract only, a draft member goes on the draft's line
            earliest = {role: min((c.site for c in certain if c.role is role),
                                  key=lambda s: (not s.gate, s.phase is not Phase.START_UP, s.path, s.span))
                        for role in {c.role for c in certain}}
            said_at_check = any(c.refused and c.intent for c in certain)
            for crash in certain:
                # a member the class has (its forward leads nowhere) is SC013's, never one to implement here; one
                # a run meets only past a check it fails is what the run needs there, said with the check
                if crash.provision.how is How.FORWARD or lookup.inner(crash.member) is not None \
                        or lookup.provides(crash.member) or crash.past and said_at_check:
                    continue
                # an attribute (``lm_head``) is a part the class lacks, not a body to write: listed, never an error
                intent = crash.intent and not unknown and crash.site.is_call
                if crash.member not in chosen or intent and not chosen[crash.member][2]:
                    chosen[crash.member] = (status, crash, intent, crash.site if intent else earliest[crash.role])
            refusal = next((c for c in certain if c.refused), None)
            if refusal is not None and not refusal.intent and not unknown:
                # what enabling it needs beyond what a run of another algorithm already fails on (said there)
                own = {c.member for other in statuses for c in other.crashes if not c.past} - {refusal.member}
                hint = _implementable(index, key, cls, path, status, refusal, own, lookup, analogies, config, rel)
                if hint is not None:
                    out.append(hint)
    for member, (status, crash, intent, site) in chosen.items():
        provision = provide(lookup, member) or crash.provision
        out.append(_crash(index, key, cls, path, status, intent, member, crash.role, site, provision, config, rel))
    for member, (status, crash) in conditional.items():
        if member not in chosen:
            out.append(_conditional_crash(index, key, cls, path, status, crash, provide(lookup, member) or
                                          crash.provision, config, rel))
    if analogies is not None and not unknown:
        out += _degraded(index, key, cls, path, statuses, lookup, reached[0], analogies, config, rel,
                         contract.algorithms)
    return out


def _conditional(crash: Crash, lookup: MemberLookup, as_draft: bool, draft_head: bool) -> bool:
    """Whether a crash is SC015's: past a test the tool does not decide, of a method no inner model has, on a
    class that shows it means to support the run: the target, or a class a config rewrite loads as every draft,
    as for SC010; a draft head, by a member only the runs reaching the line use."""
    if crash.certain or crash.past or not crash.site.is_call or crash.provision.how is How.FORWARD \
            or lookup.inner(crash.member) is not None or lookup.provides(crash.member):
        return False
    return crash.intent if crash.role is Role.TARGET or as_draft else draft_head and crash.specific


def _conditional_crash(index: Index, key: ClassKey, cls: ClassSummary, path: str, status: AlgorithmStatus,
                       crash: Crash, provision: Provision, config: Config, rel: Relative) -> Finding:
    site = crash.site
    tests = sorted(site.taken - set(config.speculative_conditions))
    condition = " and ".join(tests) or None
    when = f"only past a test of {', '.join(f'`{word}`' for word in tests)}" if tests else "only under a rare test"
    message = (f"`{cls.name}` does not implement `{crash.member}`, and no inner model has it; {run_words([site])} "
               f"calls it at {rel(site.path)}:{site.span.line + 1} {when}, and crashes there ({site.phase}); "
               f"{provision_words(crash.member, provision)}")
    rule = MISSING_CONDITIONAL_IMPLEMENTATION
    return Finding(
        code=rule.code, severity=config.severity[rule.code], path=path, span=cls.span, class_name=cls.name,
        class_qualname=key.dotted, member=crash.member, roles=(crash.role,), delegate="", inner_class="",
        provider=_provider(index, provision), call_sites=(site,), message=message, algorithm=status.algorithm,
        condition=condition, implements=((crash.member, provision),) if provision.how is How.IMPLEMENT else ())


def _degraded(index: Index, key: ClassKey, cls: ClassSummary, path: str, statuses: list[AlgorithmStatus],
              lookup: MemberLookup, sites: list[tuple[Role, CallSite]], analogies: Analogies, config: Config,
              rel: Relative, algorithms: tuple[str, ...]) -> list[Finding]:
    """SC014 for each method only guarded calls of the class's own role use, which neither the class nor an
    inner model has (an inner's is SC002's forward) and which a class holding the same parts implements in a
    body that fits this one (a member nothing fits is no sign the class could have it)."""
    draft_shaped = config.draft_shaped(cls.name)
    primary = {Role.DRAFT} if draft_shaped else {Role.TARGET} & set(config.roles_for_class(cls.name))
    if config.loaded_as_draft(cls.name):
        primary.add(Role.DRAFT)
    # a draft head named for an algorithm (``DFlash2DraftModel``) is loaded by that algorithm's workers only, never
    # by the others' (SGLang's DFlashWorkerV2 is no EAGLEWorkerV2): the longest name it holds
    own = max((a for a in algorithms if draft_shaped and a.lower() in cls.name.lower()), key=len, default=None)
    out: list[Finding] = []
    seen: set[str] = set()
    # each member's guarded uses, gathered once: each algorithm's degraded members asked every use of the class
    # (SGLang 0.5.23: 3,251 scans of about 65 uses)
    uses: dict[str, list[tuple[Role, CallSite]]] = {}
    for role, site in sites:
        if site.guarded:
            uses.setdefault(site.member, []).append((role, site))
    for status in statuses:
        for member in status.degraded:
            if member in seen:
                continue
            guarded = [(role, site) for role, site in uses.get(member, ())
                       if _skipped(site) and not site.condition and site.serves(status.algorithm) and role in primary
                       and (own is None or role is not Role.DRAFT or site.serves(own))]
            if not guarded or lookup.provides(member) or lookup.inner(member) is not None:
                continue
            analogy = analogies.implement(lookup, member)
            provision = analogies.provision(lookup, member, config)
            if analogy is None or analogy.like is None or provision is None or provision.how is not How.IMPLEMENT:
                continue
            seen.add(member)
            role, site = min(guarded, key=lambda pair: (pair[1].phase is not Phase.START_UP, pair[1].path,
                                                        pair[1].span))
            writes = sorted("self." + ".".join(chain) for chain in analogy.like.writes)
            short = (provision.like or "").rsplit(".", 1)[-1]
            loses = (f"so `{cls.name}` keeps its own {', '.join(f'`{w}`' for w in writes)}, which "
                     f"`{short}.{member}` sets" if writes else "so the run goes without what it returns")
            message = (f"`{cls.name}` does not implement `{member}`, and no inner model has it; a run of "
                       f"{status.algorithm} calls it at {rel(site.path)}:{site.span.line + 1} only when the model "
                       f"has it (`{site.text}`), so it skips the call: no crash, a degraded run ({loses}); "
                       f"{provision_words(member, provision)}")
            out.append(Finding(
                code=MISSING_OPTIONAL_IMPLEMENTATION.code, severity=config.severity[MISSING_OPTIONAL_IMPLEMENTATION.code],
                path=path, span=cls.span, class_name=cls.name, class_qualname=key.dotted, member=member,
                roles=(role,), delegate="", inner_class="", provider=_provider(index, provision), call_sites=(site,),
                message=message, algorithm=status.algorithm, implements=((member, provision),)))
    return out


def _skipped(site: CallSite) -> bool:
    """Whether the guarded use is a call made for its effect, a statement of its own: without the member the
    worker skips it and the run goes without that effect. A call whose value the worker uses (``return
    m.get_embed_and_head_for_draft(e)``, vLLM's ``m.get_language_model() if hasattr(m, ...) else m``) has a
    path that computes the value otherwise, which is no loss."""
    return site.is_call and site.statement


def _unknown_inner(index: Index, key: ClassKey, config: Config) -> bool:
    """Whether the class keeps a language model (an attribute of the profile's delegate names, built by a
    call) whose class the index cannot tell: what that model provides is unknown, so is the fix."""
    known = index.delegates(key)
    for owner in index.mro(key):
        cls = index.class_summary(owner)
        for delegate in cls.delegates if cls is not None else ():
            if delegate.attr in config.delegate_names and delegate.attr not in known:
                return True
    return False


def _crash(index: Index, key: ClassKey, cls: ClassSummary, path: str, status: AlgorithmStatus, intent: bool,
           member: str, role: Role, site: CallSite, provision: Provision, config: Config, rel: Relative) -> Finding:
    where = f"{rel(site.path)}:{site.span.line + 1}"
    what = "calls" if site.is_call else "reads"
    run = run_words([site])
    rule = MISSING_IMPLEMENTATION if intent else UNREFUSED_CRASH
    if site.gate and site.gate_line is not None:
        dies = (f"the engine's check at {rel(site.path)}:{site.gate_line + 1} refuses {run} {site.phase.refused} "
                "without it")
    else:
        dies = f"{run} {what} it at {where} and crashes there ({site.phase})"
    message = (f"`{cls.name}` does not implement `{member}`, and no inner model has it; {dies}; "
               f"{provision_words(member, provision)}")
    return Finding(
        code=rule.code, severity=config.severity[rule.code], path=path, span=cls.span, class_name=cls.name,
        class_qualname=key.dotted, member=member, roles=(role,),
        delegate=provision.delegate or "" if provision.how is not How.UNKNOWN else "",  # cannot tell: no forward
        inner_class=(provision.inner_class or "").rsplit(".", 1)[-1], provider=_provider(index, provision),
        call_sites=(site,), message=message, algorithm=status.algorithm,
        implements=((member, provision),) if provision.how in (How.IMPLEMENT, How.BOTH) else (),
        unfit=((member, provision),) if provision.how is How.UNKNOWN and provision.in_class else ())


def _implementable(index: Index, key: ClassKey, cls: ClassSummary, path: str, status: AlgorithmStatus,
                   refusal: Crash, reported: set[str], lookup: MemberLookup, analogies: Analogies | None,
                   config: Config, rel: Relative) -> Finding | None:
    """SC012 when the engine's check refuses the algorithm (``refusal``) for a class that shows no support for it,
    and every member the run lacks (the check's, and those its uses past the check read, but those ``reported``
    for another run) can be implemented by analogy."""
    if analogies is None:
        return None
    needed = [refusal.member] + sorted({c.member for c in status.crashes if c.role is Role.TARGET}
                                       - reported - {refusal.member})
    provide = implementer(analogies, config)
    provisions = []
    for member in needed:
        found = provision_of(lookup, member, provide)
        if found is None or found.how not in (How.IMPLEMENT, How.BOTH):
            return None  # no model fits: nothing to offer (the status says what the closest lacks)
        provisions.append((member, found))
    names = ", ".join(f"`{m}`" for m in needed)
    first = provisions[0][1]
    like = (first.like or "").rsplit(".", 1)[-1]
    site = refusal.site
    line = site.gate_line if site.gate_line is not None else site.span.line
    where = f"{rel(site.path)}:{line + 1}"
    message = (f"the engine refuses {status.algorithm} for `{cls.name}` {site.phase.refused}; its check is at "
               f"{where}; but the class could support it: {names} can be implemented like `{like}` "
               f"({len(needed)} member{'s' if len(needed) > 1 else ''})")
    return Finding(
        code=IMPLEMENTABLE.code, severity=config.severity[IMPLEMENTABLE.code], path=path, span=cls.span,
        class_name=cls.name, class_qualname=key.dotted, member=needed[0], roles=(refusal.role,),
        delegate=first.delegate or "", inner_class=(first.inner_class or "").rsplit(".", 1)[-1],
        provider=_provider(index, first), call_sites=(site,), message=message, algorithm=status.algorithm,
        implements=tuple(provisions))


Entries = dict[str, tuple[list[Finding], Listed]]  # a worker line's classes by qualified name: records, entry
WorkerLines = dict[tuple[str, Span, str], tuple[list[Finding], Finding, Entries]]  # a line → records, finding, classes


def on_worker_lines(findings: Iterable[Finding], rel: Relative, before: WorkerLines | None = None) -> list[Finding]:
    """The findings with the per-class SC011 records gathered into one finding per worker line.

    ``before``: the lines the last call made, replaced by this call's. A line whose records are the very
    objects it had then is that finding again, and so is a class's entry on a line whose other classes changed:
    an edit re-checks a few classes, and a line lists a hundred (SGLang 0.5.23: 480 records on 6 lines, gathered
    on every keystroke that moves a class's lines)."""
    out: list[Finding] = []
    lines: dict[tuple[str, Span, str], list[Finding]] = {}
    for finding in findings:
        if finding.code == UNREFUSED_CRASH.code:
            site = finding.call_sites[0]
            lines.setdefault((site.path, site.span, finding.algorithm or ""), []).append(finding)
        else:
            out.append(finding)
    made: WorkerLines = {}
    for line, records in sorted(lines.items()):
        last = before.get(line) if before is not None else None
        if last is not None and _same(last[0], records):
            made[line] = last
        else:
            entries = _entries(records, last[2] if last is not None else {})
            made[line] = (records, _worker_line(*line, records, tuple(e for _, e in entries.values()), rel), entries)
        out.append(made[line][1])
    if before is not None:
        before.clear()
        before.update(made)
    return out


def _names(names: list[str], room: int = 120) -> str:
    """The classes a worker line's finding lists, as many as fit one clause of ``room`` characters (a clause is a
    line of the text output), then how many more: the finding's ``classes`` carry them all."""
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join(shown + [f"`{name}`"])) > room:
            break
        shown.append(f"`{name}`")
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def _same(before: list[Finding], now: list[Finding]) -> bool:
    """Whether two lists hold the very same findings, in order (kept findings are replaced, never changed)."""
    return len(before) == len(now) and all(map(is_, before, now))


def _entries(records: list[Finding], before: Entries) -> Entries:
    """A worker line's classes, in order of qualified name, each with its records and its entry; an entry made
    from the very records a class had on the line ``before`` is that entry again."""
    by_class: dict[str, list[Finding]] = {}
    for record in records:
        by_class.setdefault(record.class_qualname, []).append(record)
    out: Entries = {}
    for qualname, found in sorted(by_class.items()):
        last = before.get(qualname)
        # each record implements its own member: one provision per member, found by name (hashing a Provision, a
        # deep frozen dataclass, cost a fifth of each edit's analysis on SGLang 0.5.23)
        out[qualname] = last if last is not None and _same(last[0], found) else (found, Listed(
            found[0].path, found[0].class_name, qualname, tuple(sorted({f.member for f in found})),
            tuple(sorted({i[0]: i for f in found for i in f.implements}.values(), key=lambda i: i[0]))))
    return out


def _worker_line(site_path: str, span: Span, algorithm: str, records: list[Finding], listed: tuple[Listed, ...],
                 rel: Relative) -> Finding:
    first = records[0]
    site = first.call_sites[0]
    # the line's own member names the finding, then those most of the classes lack: one class's further members
    # (a class loaded as every draft lists its draft members too) never rename the line's finding
    lacking = Counter(m for c in listed for m in c.members)
    members = sorted(lacking, key=lambda m: (m != site.member, -lacking[m], m))
    names = _names([c.class_name for c in listed])
    many = len(listed) > 1
    some = "some of " if any(count < len(listed) for count in lacking.values()) else ""
    lack = (f"the {len(listed)} registered class{'es' if many else ''} that lack{'' if many else 's'} {some}"
            f"{', '.join(f'`{m}`' for m in members)}")
    if site.gate:  # the engine's own check: a refusal, but one that costs the load
        message = (f"the engine's check refuses {algorithm} for {lack}; {'they are' if many else 'it is'} refused "
                   f"here {site.phase.refused}; {'the classes' if many else 'the class'}: {names}")
    else:
        message = (f"no gate refuses {algorithm} for {lack}; {'they crash' if many else 'it crashes'} here "
                   f"({site.phase}, after loading); {'the classes' if many else 'the class'}: {names}")
    return Finding(
        code=UNREFUSED_CRASH.code, severity=first.severity, path=site_path, span=span, class_name="",
        class_qualname=f"{rel(site_path)}:{span.line + 1}", member=members[0], roles=first.roles, delegate="",
        inner_class="", provider=Provider("", "", _NOWHERE, "method"), call_sites=(site,), message=message,
        algorithm=algorithm, classes=listed, records=tuple(sorted(records, key=lambda f: (f.path, f.span, f.member))))
