"""The check: wrapper classes that lack a contract member their inner model provides.

For each registered model class W and each member m of a role W can play: if W provides m (own body, MRO,
properties, attributes, a forwarding ``__getattr__``) all is well; otherwise, if the class of one of W's
delegate attributes (``self.language_model = Inner(...)``; one level deeper too) provides m, W must forward
it. What a missing forward costs decides the finding's kind (see :mod:`spec_contract.engine.rules`):

* a capability gate (``if not hasattr(m, "x"): raise``) tests the loaded model: a class that fails it is
  refused only after the weights have loaded, which costs what a crash costs, so its member is asked like any
  other (once per gate, for the member its fix should provide: see ``gates``), and so are the uses past it;
* a fallback use (reached only when another member is missing) is not asked of a class whose inner provides
  that other member: forwarding the primary is the fix;
* otherwise an unguarded use is a crash: SC001, or SC005 for a draft-model member of a class that is not a
  draft by shape (it crashes only if a draft checkpoint names the class); SC004 when every unguarded use
  sits under a rare condition (an environment flag, a model-type test); SC002 when every use is guarded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from spec_contract.engine.check.analogy import Analogies
from spec_contract.engine.check.broken_forwards import broken_forwards
from spec_contract.engine.check.crashes import crash_findings, implementer, provision_words
from spec_contract.engine.check.gates import Gates, class_sites, fallback_covered, once_provided
from spec_contract.engine.check.lookup import Inner, MemberLookup, takes, unfit_calls
from spec_contract.engine.check.shares import Drafts
from spec_contract.engine.check.status import first_reached, provision_of
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.roles import RoleClass
from spec_contract.engine.results import (
    CallSite,
    Contract,
    Finding,
    Forward,
    How,
    Provider,
    Provision,
    Role,
    Severity,
    Span,
)
from spec_contract.engine.rules import (
    BROKEN_FORWARD,
    MISSING_CONDITIONAL_FORWARD,
    MISSING_DRAFT_FORWARD,
    MISSING_FORWARD,
    MISSING_OPTIONAL_FORWARD,
    Rule,
)
from spec_contract.engine.summarise.summary import ClassSummary, Member

Relative = Callable[[str], str]  # shortens a path for messages


def _arity_notes(sites: tuple[CallSite, ...], member: Member, inner_name: str, rel: Relative) -> tuple[str, ...]:
    return tuple(f"{rel(site.path)}:{site.span.line + 1} passes {site.arity} argument(s); "
                 f"{inner_name}.{member.name} takes {takes(member)}" for site in unfit_calls(sites, member))


# when a member's uses differ, the costliest decides
_PRIORITY = (MISSING_FORWARD, MISSING_DRAFT_FORWARD, MISSING_CONDITIONAL_FORWARD, MISSING_OPTIONAL_FORWARD)


def _site_rule(role: Role, site: CallSite, draft_shaped: bool, drafts: Drafts | None = None,
               on_v1: bool = False) -> Rule:
    if site.guarded:
        if drafts is None or not drafts.needing(site, role):
            return MISSING_OPTIONAL_FORWARD
        # the V2 loader that shares the head is not the default model runner of every class (see shares)
        return MISSING_CONDITIONAL_FORWARD if on_v1 else MISSING_FORWARD
    if site.condition:
        return MISSING_CONDITIONAL_FORWARD
    return MISSING_DRAFT_FORWARD if role is Role.DRAFT and not draft_shaped else MISSING_FORWARD


def check_class(index: Index, key: ClassKey, contract: Contract, config: Config, rel: Relative,
                analogies: Analogies | None = None, held: RoleClass | None = None,
                drafts: Drafts | None = None) -> list[Finding]:
    """Findings for one model class (``rel`` shortens paths for messages), with those the status model gives
    for members no inner model has (``check.crashes``; ``analogies`` implements them by analogy). ``held``: how
    the class plays a role when no registry names it (see :func:`held_sites`)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None:
        return []
    lookup = MemberLookup(index, key, config)
    draft_shaped = config.draft_shaped(cls.name)
    if held is not None and held.wrapper is not None:
        found = held_sites(index, held, contract, config)
        if found is None:
            return []
        sites, gates, draft_shaped = found
    else:
        sites = class_sites(contract, config.roles_for_class(cls.name), lookup, draft_shaped)
        gates = Gates(sites, lookup, contract.algorithms)
    wanted: dict[str, list[tuple[Role, CallSite]]] = {}
    for role, site in sites:
        # a member the class has needs no forward (one of its own that leads nowhere is SC013's): most uses, each
        # asked first of the cheapest question
        if not lookup.provides(site.member) and gates.needed(role, site) and not gates.past(role, site) \
                and not fallback_covered(site, lookup):
            wanted.setdefault(site.member, []).append((role, site))

    findings = []
    # why the V1 model runner may be the class's default (None: V2 is, for the reason ``v2``), asked only of a
    # class that lacks a member a shared read hands the draft
    v1: str | None = None
    v2 = ""
    asked = False
    for member, pairs in sorted(wanted.items()):
        needing = drafts is not None and any(drafts.needing(s, r) for r, s in pairs)
        if needing and not asked and drafts is not None:
            (v1, v2), asked = drafts.v1_by_default(key), True
        inner = lookup.missing(member)
        if inner is None and not needing:
            continue  # no inner model has it, and no draft is handed the read (see _unshared): the status's to say
        rules = {_site_rule(role, site, draft_shaped, drafts, v1 is not None) for role, site in pairs}
        rule = next(r for r in _PRIORITY if r in rules)
        decisive = [site for role, site in pairs if _site_rule(role, site, draft_shaped, drafts, v1 is not None) == rule]
        shared = drafts is not None and all(s.guarded for s in decisive) and rule is not MISSING_OPTIONAL_FORWARD
        if inner is None:
            unknown = _unknown_language_model(index, key, member, lookup, config) if shared else None
            if unknown is not None and drafts is not None:
                findings.append(_unshared(key, cls, path, member, unknown, rule, pairs, decisive, drafts, config,
                                          rel, (v1, v2)))
            continue
        # the runs that fail there: a check's member only for the runs it refuses; with a draft handed the read, the
        # runs that may load one without the member
        failing = {a for role, site in pairs if site in decisive for a in drafts.meeting_runs(site, role)} \
            if shared and drafts is not None else {a for role, site in pairs for a in gates.runs(site)
                                                   if gates.needed(role, site, a) and not gates.past(role, site, a)}
        split = lookup.dispatched(member) if rule is MISSING_FORWARD else None
        if split is not None:  # the checkpoint picks the class its ``__getattr__`` forwards to: only some lack it
            rule = MISSING_CONDITIONAL_FORWARD
        # a call the inner's method does not take: a forward would fail there too (how else, if anything fits),
        # at the lines the class meets and at those it would meet once it has the member
        calls = decisive if held is not None and held.wrapper is not None else \
            decisive + once_provided(contract, config.roles_for_class(cls.name), lookup, draft_shaped, member)
        refit = provision_of(lookup, member, implementer(analogies, config), calls) \
            if unfit_calls(calls, inner.member) else None
        finding = _missing_forward(index, key, cls, path, member, inner, rule, pairs, decisive, lookup, config, rel,
                                   _past_gate(sites, gates, lookup, decisive), failing, _dispatch_condition(split),
                                   refit)
        if shared and drafts is not None:
            finding = replace(finding, message=finding.message + _headless_words(rule, decisive, pairs, drafts, v1, v2),
                              condition=_v2_only(v1) if v1 is not None and rule is MISSING_CONDITIONAL_FORWARD
                              else None)
        findings.append(finding)
    findings += crash_findings(index, key, cls, path, contract, config, analogies, rel, lookup, (sites, gates))
    findings += broken_forwards(index, key, cls, path, sites, lookup, draft_shaped, config, rel)
    if held is not None and held.wrapper is not None:
        findings = [held_finding(held, f) for f in findings]
    return [f for f in findings if f.code in config.select and f.code not in cls.suppressed
            and "*" not in cls.suppressed]


def _lacking_alternatives(index: Index, key: ClassKey, attr: str, member: str) -> tuple[str, ...]:
    """A note when ``self.<attr>`` may also hold classes that lack the member (the checkpoint's config picks
    which: InternVL's language model is a Qwen2, an InternLM2, … model): a forward alone leaves a run with one of
    those crashing at the same line, so the fix must add the member there too."""
    lacking = [inner for inner in index.delegates(key).get(attr, ()) if index.provision(inner, member) is None] \
        if "." not in attr else []
    if not lacking:
        return ()
    names = " or ".join(f"`{inner.qualname.rsplit('.', 1)[-1]}`" for inner in lacking)
    one = len(lacking) == 1
    return (f"`self.{attr}` may also be {names}, which {'lacks' if one else 'lack'} `{member}`: with the forward "
            f"alone, a checkpoint whose language model is {'that' if one else 'one of those'} still fails there; add "
            f"`{member}` to {'it' if one else 'them'} too",)


def _unknown_language_model(index: Index, key: ClassKey, member: str, lookup: MemberLookup,
                            config: Config) -> str | None:
    """The attribute holding a language model whose class is not known here (built from the architecture the
    checkpoint's config names), when the class lacks the member: None when it has it or its inner is known."""
    if lookup.provides(member):
        return None
    cls = index.class_summary(key)
    known = index.delegates(key)
    for attr in index.language_attrs(key) or config.delegate_names:
        if attr not in known and any(d.attr == attr for d in (cls.delegates if cls else ())):
            return attr
    return None


def _v2_only(why: str) -> str:
    """The condition of a crash on the V2 runner only: ``why`` the class's runs may default to V1."""
    return f"the V2 model runner, which it gets only with VLLM_USE_V2_MODEL_RUNNER=1 ({why})"


def _headless_words(rule: Rule, decisive: list[CallSite], pairs: list[tuple[Role, CallSite]], drafts: Drafts,
                    v1: str | None, v2: str) -> str:
    names = sorted({name.rsplit(".", 1)[-1] for role, site in pairs for name in drafts.needing(site, role)})
    member = decisive[0].member
    words = (f": guarded, but when it finds none the draft keeps its own `{member}`, and "
             f"{_and([f'`{n}`' for n in names])} build none (their `__init__` skips the base's that assigns it), "
             f"so such a draft's first use of `{member}` fails ({decisive[0].phase})")
    return words + (f", only on {_v2_only(v1)}" if v1 is not None and rule is MISSING_CONDITIONAL_FORWARD
                    else f", on the V2 model runner, its default ({v2})")


def _unshared(key: ClassKey, cls: ClassSummary, path: str, member: str, attr: str, rule: Rule,
              pairs: list[tuple[Role, CallSite]], decisive: list[CallSite], drafts: Drafts, config: Config,
              rel: Relative, runner: tuple[str | None, str]) -> Finding:
    """SC001 for a class whose language model's class is not known here: whatever it is, the wrapper as handed
    lacks the member, which the loader shares with drafts that have none of their own."""
    first = decisive[0]
    what = "calls" if first.is_call else "reads"
    message = (f"`{cls.name}` does not forward `{member}` to `self.{attr}` (built from the architecture the "
               f"checkpoint's config names); the target model's contract {what} it at "
               f"{rel(first.path)}:{first.span.line + 1}" + _headless_words(rule, decisive, pairs, drafts, *runner))
    v1 = runner[0]
    # the runs that may load a draft without the member (a draft named for one algorithm: that one's)
    meeting = {a for site in decisive for a in drafts.meeting_runs(site, Role.TARGET)}
    algorithms = meeting if len(meeting) == 1 else {site.algorithm for site in decisive}
    return Finding(
        code=rule.code, severity=config.severity[rule.code], path=path, span=cls.span,
        class_name=cls.name, class_qualname=key.dotted, member=member, roles=(Role.TARGET,), delegate=attr,
        inner_class="", provider=Provider("", "", Span(0, 0, 0, 0), "attribute"),
        call_sites=tuple(site for _, site in pairs), message=message,
        algorithm=algorithms.pop() if len(algorithms) == 1 else None,
        condition=_v2_only(v1) if v1 is not None and rule is MISSING_CONDITIONAL_FORWARD else None)


def held_sites(index: Index, role: RoleClass, contract: Contract, config: Config
               ) -> tuple[list[tuple[Role, CallSite]], Gates, bool] | None:
    """The uses a language model no registry names meets, and the gates they pass: the worker holds its
    wrapper, so the wrapper's uses and gates (a gate tests the wrapper, which has the member it forwards),
    narrowed to the members the wrapper hands to this class. None: a class handed nothing (one with a head
    of its own is asked through its wrapper's check, which looks into it)."""
    holder = role.wrapper
    wrapper = index.class_summary(holder) if holder is not None else None
    if holder is None or wrapper is None or not role.handed:
        return None
    outer = MemberLookup(index, holder, config)
    draft_shaped = config.draft_shaped(wrapper.name)
    every = class_sites(contract, config.roles_for_class(wrapper.name), outer, draft_shaped)
    members = {m for m in role.handed if _hands_unguarded(index, holder, role.attr.split("."), m)}
    handed = [(r, s) for r, s in every if s.member in members]
    # the wrapper passes a gate on a member it hands on (it has it), so the gated use runs and lands here
    return handed, Gates(every, outer, contract.algorithms), draft_shaped


def _hands_unguarded(index: Index, holder: ClassKey, attrs: list[str], member: str) -> bool:
    """Whether ``holder`` hands ``member`` on along the attribute path ``attrs`` without testing first at any
    step (``if hasattr(self.model, m): ... else: <fallback>`` never crashes on a class that lacks it)."""
    found = index.provision(holder, member)
    owner = index.class_summary(found.owner) if found is not None else None
    if owner is None or not any(m == member and path.partition(".")[0] == attrs[0]
                                for m, path in owner.unguarded_forwards):
        return False
    if len(attrs) == 1:
        return True
    return any(_hands_unguarded(index, inner, attrs[1:], member) for inner in index.delegates(holder).get(attrs[0], ()))


def held_finding(role: RoleClass, finding: Finding) -> Finding:
    """A finding on a held language model, said of the run of the wrapper that hands it the member."""
    wrapper = role.wrapper.qualname.rsplit(".", 1)[-1] if role.wrapper is not None else ""
    return replace(finding, message=f"{finding.message} (in a run of `{wrapper}`, which hands `{finding.member}` "
                                    f"to it in `self.{role.attr}`)")


def _past_gate(sites: list[tuple[Role, CallSite]], gates: Gates, lookup: MemberLookup,
               decisive: list[CallSite]) -> tuple[Forward, ...]:
    """The members a run needs past the gate ``decisive`` says it fails (none when it is no gate): those the
    class lacks and an inner model has, which it meets only past the gate (see ``gates``)."""
    gate = next((site for site in decisive if site.gate), None)
    if gate is None:
        return ()
    found: dict[str, Forward] = {}
    for role, site in sites:
        # a member some run needs without failing a check first has a finding of its own
        if site.member in found or site.member == gate.member or lookup.provides(site.member) \
                or not gates.past(role, site) or not any(gates.stops(role, gate, a) for a in gates.runs(site)):
            continue
        inner = lookup.inner(site.member)
        if inner is not None:
            found[site.member] = Forward(site.member, inner.delegate, inner.key.qualname.rsplit(".", 1)[-1],
                                         lookup.provider(site.member))
    return tuple(found[m] for m in sorted(found))


def _dispatch_condition(split: tuple[str, tuple[ClassKey, ...], tuple[ClassKey, ...]] | None) -> str | None:
    """The condition of a crash on a dispatcher (see ``MemberLookup.dispatched``), in words."""
    if split is None:
        return None
    attr, having, lacking = split
    lack = [f"`{key.qualname.rsplit('.', 1)[-1]}`" for key in lacking]
    have = [f"`{key.qualname.rsplit('.', 1)[-1]}`" for key in having]
    either = ", ".join(lack[:-1]) + f" or {lack[-1]}" if len(lack) > 1 else lack[0]
    return (f"the checkpoint makes `self.{attr}` a {either} (its `__getattr__` forwards there; {_and(have)} "
            f"{'has' if len(have) == 1 else 'have'} it)")


def _missing_forward(index: Index, key: ClassKey, cls: ClassSummary, path: str, member: str, inner: Inner, rule: Rule,
                     pairs: list[tuple[Role, CallSite]], decisive: list[CallSite], lookup: MemberLookup,
                     config: Config, rel: Relative, also: tuple[Forward, ...] = (),
                     failing: set[str] | None = None, dispatch: str | None = None,
                     refit: Provision | None = None) -> Finding:
    attr, code = inner.delegate, rule.code
    sites = tuple(site for _, site in pairs)
    roles = tuple(dict.fromkeys(role for role, _ in pairs))
    inner_cls = index.class_summary(inner.owner)
    inner_name = inner.key.qualname.rsplit(".", 1)[-1]
    first = first_reached(decisive)  # where the run dies, as the class's status says
    what = "calls" if first.is_call else "reads"
    role_text = " and ".join(f"the {role} model's" for role in roles)
    where = f"{rel(first.path)}:{first.span.line + 1}"
    message = (f"`{cls.name}` does not provide `{member}`" if refit is not None else
               f"`{cls.name}` does not forward `{member}` to `self.{attr}` ({inner_name})") + \
        f"; {role_text} contract {what} it at {where}"
    # when the run dies there: while the server starts (after loading), or at the first request
    if first.gate and first.gate_line is not None and rule is not MISSING_OPTIONAL_FORWARD:
        message += (f", and the engine's check at {rel(first.path)}:{first.gate_line + 1} refuses the run "
                    f"{first.phase.refused} without it")
        if also:
            message += "; past that check the run also needs " + _and([f"`{f.member}`" for f in also])
    else:
        message += " (guarded, so optional)" if rule is MISSING_OPTIONAL_FORWARD else f" ({first.phase})"
    condition = dispatch or first.condition
    if rule is MISSING_CONDITIONAL_FORWARD and condition:
        message += f", only when {_quoted(condition)}"
    elif rule is MISSING_DRAFT_FORWARD:
        message += "; that crashes only if a draft checkpoint names this class"
    notes = _arity_notes(sites, inner.member, inner_cls.name if inner_cls else inner_name, rel)
    if rule is not MISSING_OPTIONAL_FORWARD:  # a guarded use takes its fallback whatever the class holds
        notes += _lacking_alternatives(index, key, attr, member)
    if "." not in attr and index.registry_chosen(key, attr):
        notes = (f"`self.{attr}` is built from a class the model registry picks at run time; "
                 f"{inner_name} is one of the profile's registry candidates",) + notes
    algorithms = {site.algorithm for site in decisive} if not failing or len(failing) > 1 else set(failing)
    finding = Finding(
        code=code, severity=config.severity[code], path=path, span=cls.span, class_name=cls.name,
        class_qualname=key.dotted, member=member, roles=roles, delegate=attr, inner_class=inner_name,
        provider=lookup.provider(member), call_sites=sites, message=message, notes=notes,
        algorithm=algorithms.pop() if len(algorithms) == 1 else None,
        condition=condition if rule is MISSING_CONDITIONAL_FORWARD else None, also=also)
    if refit is None:
        return finding
    # no forward: the body of a class holding the same parts, or nothing guessed (the message says why)
    fits = refit.how in (How.IMPLEMENT, How.BOTH)
    return replace(finding, message=f"{message}; {provision_words(member, refit)}",
                   delegate=refit.delegate or "" if fits else "",
                   inner_class=(refit.inner_class or "").rsplit(".", 1)[-1] if fits else inner_name,
                   implements=((member, refit),) if fits else (), unfit=() if fits else ((member, refit),))


def _quoted(condition: str) -> str:
    """A condition for a message: code in backticks, a sentence that already quotes its code as it is."""
    return condition if "`" in condition else f"`{condition}`"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def without_handed_crashes(findings: list[Finding], held: Iterable[ClassKey]) -> list[Finding]:
    """One crash said once: a wrapper's forward to nowhere (SC013) and a held language model's finding on the
    same member report the same crash. The held class's finding stays when it is an error too (it is on the
    class whose edit fixes it, and names the wrapper); a weaker one goes, so the crash keeps its error."""
    names = {key.dotted for key in held}
    broken = {(f.inner_class, f.member) for f in findings if f.code == BROKEN_FORWARD.code}
    fixed = {(f.class_name, f.member) for f in findings if f.class_qualname in names and f.severity is Severity.ERROR}
    return [f for f in findings
            if not (f.code == BROKEN_FORWARD.code and (f.inner_class, f.member) in fixed)
            and not (f.class_qualname in names and (f.class_name, f.member) in broken - fixed)]
