"""The check: wrapper classes that lack a contract member their inner model provides.

For each registered model class W and each member m of a role W can play: if W provides m (own body, MRO,
properties, attributes, a forwarding ``__getattr__``) all is well; otherwise, if the class of one of W's
delegate attributes (``self.language_model = Inner(...)``; one level deeper too) provides m, W must forward
it. What a missing forward costs decides the finding's kind (see :mod:`spec_contract.engine.rules`):

* a use behind a capability gate the class fails (``if not hasattr(m, "x"): raise``) never runs: the engine
  refuses the algorithm at start-up. When the inner model passes the gate, the class gets one SC003 that
  also lists every member the algorithm needs past the gate; when nothing passes it, nothing is reported;
* a fallback use (reached only when another member is missing) is not asked of a class whose inner provides
  that other member: forwarding the primary is the fix;
* otherwise an unguarded use is a crash: SC001, or SC005 for a draft-model member of a class that is not a
  draft by shape (it crashes only if a draft checkpoint names the class); SC004 when every unguarded use
  sits under a rare condition (an environment flag, a model-type test); SC002 when every use is guarded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spec_contract.engine.config import Config
from spec_contract.engine.files import glob_match
from spec_contract.engine.resolve import ClassKey, Index, Provision
from spec_contract.engine.results import CallSite, Contract, Finding, Forward, Provider, Role
from spec_contract.engine.summary import ClassSummary, Member


def registered_classes(summary_classes: Iterable[ClassSummary], entry: tuple[str, ...] | None,
                       entry_variable: str | None) -> list[ClassSummary]:
    """The classes a model file registers with the engine's loader (all, when the profile names no registry)."""
    classes = [c for c in summary_classes if "." not in c.qualname]
    if entry_variable is None:
        return classes
    if entry is None:
        return []
    return [c for c in classes if c.name in entry]


def _ordered_delegates(delegates: dict[str, tuple[ClassKey, ...]], preferred: tuple[str, ...],
                       only: bool = False, marked: tuple[str, ...] = ()) -> list[tuple[str, tuple[ClassKey, ...]]]:
    """The delegates, those ``marked`` as the language model then the preferred names first; with ``only``
    (the profile's ``restrict-delegates``) no other: a ``self.logits_processor = LogitsProcessor(…)`` is
    then a helper, never an inner model to forward to."""
    rank = {name: i for i, name in enumerate(dict.fromkeys(marked + preferred))}
    return sorted(((name, inners) for name, inners in delegates.items() if not only or name in rank),
                  key=lambda item: (rank.get(item[0], len(rank)), item[0]))


class _Inners:
    """One wrapper's delegates, and theirs one level deeper, ordered once per class rather than per member.

    Each list is built the first time a member needs it, so a class is charged only with the modules its
    check really reads (as the index records them), and asked about every contract member in turn.
    """

    def __init__(self, index: Index, wrapper: ClassKey, preferred: tuple[str, ...], only: bool = False) -> None:
        self._index = index
        self._wrapper = wrapper
        self._preferred = preferred
        self._only = only
        self._direct: list[tuple[str, tuple[ClassKey, ...]]] | None = None
        self._forwarded: frozenset[str] = frozenset()  # attributes the wrapper's ``__getattr__`` forwards to
        self._deeper: dict[ClassKey, list[tuple[str, tuple[ClassKey, ...]]]] = {}

    def _marked(self, key: ClassKey) -> tuple[str, ...]:
        """The attributes ``key`` marks as its language model; asked only when delegates are restricted
        (looking them up reads the MRO's summaries, which the unrestricted check need not)."""
        return self._index.language_attrs(key) if self._only else ()

    def _delegates_of(self, inner: ClassKey) -> list[tuple[str, tuple[ClassKey, ...]]]:
        found = self._deeper.get(inner)
        if found is None:
            found = self._deeper[inner] = _ordered_delegates(self._index.delegates(inner), self._preferred,
                                                             self._only, self._marked(inner))
        return found

    def provider(self, member: str) -> tuple[str, ClassKey, Provision] | None:
        """The first delegate path whose inner class really defines ``member`` (not via unknown ``__getattr__``)."""
        index = self._index
        if self._direct is None:
            self._direct = _ordered_delegates(index.delegates(self._wrapper), self._preferred, self._only,
                                              self._marked(self._wrapper))
            self._forwarded = index.forwarded_attrs(self._wrapper)
        provided = []  # (attr, inner, provision) of the direct inners, asked once for both passes
        for attr, candidates in self._direct:
            for inner in candidates:
                found = index.provision(inner, member)
                # A ``__getattr__`` already forwards to this attribute, so the wrapper lacks the member only
                # because some candidate does: the forward to add goes one level deeper, past that candidate.
                if found is not None and found.member is not None and attr not in self._forwarded:
                    return attr, inner, found
                provided.append((attr, inner, found))
        for attr, inner, found in provided:  # one level deeper: ``self.minicpmv.llm``
            if found is not None:
                continue
            for sub_attr, sub_candidates in self._delegates_of(inner):
                for sub_inner in sub_candidates:
                    if sub_inner == self._wrapper:
                        continue
                    found = index.provision(sub_inner, member)
                    if found is not None and found.member is not None:
                        return f"{attr}.{sub_attr}", sub_inner, found
        return None


def _inner_provider(index: Index, wrapper: ClassKey, member: str, preferred: tuple[str, ...]
                    ) -> tuple[str, ClassKey, Provision] | None:
    """The first delegate path whose inner class really defines ``member`` (not via unknown ``__getattr__``)."""
    return _Inners(index, wrapper, preferred).provider(member)


def _arity_notes(sites: tuple[CallSite, ...], member: Member, inner_name: str, rel) -> tuple[str, ...]:
    notes = []
    for site in sites:
        if site.arity is None or not site.is_call or member.kind not in ("method", "async_method"):
            continue
        if site.arity < member.min_args or (member.max_args is not None and site.arity > member.max_args):
            expected = (f"{member.min_args}" if member.max_args == member.min_args
                        else f"{member.min_args} or more" if member.max_args is None
                        else f"{member.min_args} to {member.max_args}")
            notes.append(f"{rel(site.path)}:{site.span.line + 1} passes {site.arity} argument(s); "
                         f"{inner_name}.{member.name} takes {expected}")
    return tuple(notes)


_PRIORITY = ("SC001", "SC005", "SC004", "SC002")  # when a member's uses differ, the costliest decides


class _Lookup:
    """What the class provides itself and what its inner models provide, asked once per member."""

    def __init__(self, index: Index, key: ClassKey, config: Config) -> None:
        self.index = index
        self.key = key
        self._inners = _Inners(index, key, config.delegate_names, config.restrict_delegates)
        self._own: dict[str, bool] = {}
        self._inner: dict[str, tuple[str, ClassKey, Provision] | None] = {}
        self._config_names: frozenset[str] | None = None  # see may_meet

    def provides(self, member: str) -> bool:
        found = self._own.get(member)
        if found is None:
            found = self._own[member] = self.index.provision(self.key, member) is not None
        return found

    def inner(self, member: str) -> tuple[str, ClassKey, Provision] | None:
        if member not in self._inner:
            self._inner[member] = self._inners.provider(member)
        return self._inner[member]

    def may_meet(self, site: CallSite) -> bool:
        """False when the class provably never meets the site's condition: an ``isinstance`` test for config
        classes that neither the class's config class (its ``__init__``'s ``config`` annotation) nor any of
        that class's bases is. Unknown configs may meet anything."""
        if not site.condition_classes:
            return True
        if self._config_names is None:
            self._config_names = self._find_config_names()
        return not self._config_names or bool(self._config_names & set(site.condition_classes))

    def _find_config_names(self) -> frozenset[str]:
        for owner in self.index.mro(self.key):
            cls = self.index.class_summary(owner)
            if cls is not None and cls.config is not None:
                config = self.index.resolve_class(owner.module, cls.config)
                if config is None:
                    return frozenset()
                return frozenset(k.qualname.rsplit(".", 1)[-1] for k in self.index.mro(config))
        return frozenset()

    def provider(self, member: str) -> Provider:
        _, _, provision = self._inner[member]
        return Provider(provision.owner.dotted, self.index.path_of(provision.owner.module) or "",
                        provision.member.span, provision.member.kind)


class _Gate:
    """One capability gate of one role and algorithm, and how the class fares at it."""

    def __init__(self, role: str, algorithm: str | None, members: tuple[str, ...]) -> None:
        self.role, self.algorithm, self.members = role, algorithm, members
        self.sites: list[CallSite] = []
        self.passed = False
        self.forward: str | None = None  # the gate member an inner provides, when the class fails the gate
        self.behind: dict[str, list[CallSite]] = {}  # members past the gate the class must forward too


class _Gates:
    """The capability gates of one class's roles, and for each algorithm the first failed gate a run of it
    meets: the gates of the algorithms it is gated by, then its own, those the engine runs while loading the
    model (outside the algorithm's own worker files) before the rest, in file order."""

    def __init__(self, sites: list[tuple[str, CallSite]], lookup: _Lookup, config: Config) -> None:
        self._config = config
        found: dict[tuple[str, str | None, tuple[str, ...]], _Gate] = {}
        for role, site in sites:
            if site.gate:
                gate = found.setdefault((role, site.algorithm, site.gate), _Gate(role, site.algorithm, site.gate))
                gate.sites.append(site)
        self.failed: dict[tuple[str, str | None], list[_Gate]] = {}
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
            if site.gate or _fallback_covered(site, lookup):
                continue
            stop = self.stopping(role, site.algorithm) if site.algorithm is not None else None
            if stop is None:
                continue
            self.past.add(id(site))
            if stop.forward is not None and not lookup.provides(site.member) and lookup.inner(site.member):
                stop.behind.setdefault(site.member, []).append(site)

    def _rank(self, gate: _Gate) -> tuple:
        spec = self._spec(gate.algorithm)
        first = min(gate.sites, key=lambda s: (s.path, s.span))
        own_file = bool(spec and spec.files and glob_match(first.path, spec.files))
        return own_file, first.path, first.span

    def _spec(self, algorithm: str | None):
        return next((a for a in self._config.algorithms if a.name == algorithm), None)

    def stopping(self, role: str, algorithm: str | None) -> _Gate | None:
        """The failed gate a run of ``algorithm`` in ``role`` stops at (None: it passes every gate)."""
        if algorithm is None:  # a gate on no algorithm's path stops only the uses of its own members
            return next(iter(self.failed.get((role, None), ())), None)
        spec = self._spec(algorithm)
        for name in (spec.gated_by if spec else ()) + (algorithm,):
            failed = self.failed.get((role, name))
            if failed:
                return failed[0]
        return None

    def reported(self) -> list[_Gate]:
        """One gate per stopped algorithm whose inner model passes it: each is one capability finding."""
        out: list[_Gate] = []
        for role, algorithm in self.failed:
            stop = self.stopping(role, algorithm)
            if stop is not None and stop.forward is not None and stop not in out:
                out.append(stop)
        return out


def _fallback_covered(site: CallSite, lookup: _Lookup) -> bool:
    """A fallback use whose primary the class or its inner model has: the primary's own check covers it."""
    return bool(site.alternative_of) and any(lookup.provides(m) or lookup.inner(m) for m in site.alternative_of)


def _sites(contract: Contract, roles: tuple[str, ...], lookup: _Lookup) -> list[tuple[str, CallSite]]:
    """The call sites of the class's roles, less those whose receiver is never this class: a worker that
    switches to the language model when the target provides ``get_language_model`` (``unless``)."""
    return [(role, site) for role in roles for entry in contract.for_role(role) for site in entry.call_sites
            if (site.unless is None or not lookup.provides(site.unless)) and lookup.may_meet(site)]


def _site_code(role: str, site: CallSite, draft_shaped: bool) -> str:
    if site.guarded:
        return "SC002"
    if site.condition:
        return "SC004"
    return "SC005" if role is Role.DRAFT and not draft_shaped else "SC001"


def check_class(index: Index, key: ClassKey, contract: Contract, config: Config, rel) -> list[Finding]:
    """Findings for one model class (``rel`` shortens paths for messages)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None:
        return []
    lookup = _Lookup(index, key, config)
    draft_shaped = config.draft_shaped(cls.name)
    roles = config.roles_for_class(cls.name)
    sites = _sites(contract, roles, lookup)

    # Capability gates first: the uses past a gate the class fails never run.
    gates = _Gates(sites, lookup, config)
    wanted: dict[str, list[tuple[str, CallSite]]] = {}
    for role, site in sites:
        if not site.gate and not _fallback_covered(site, lookup) and id(site) not in gates.past:
            wanted.setdefault(site.member, []).append((role, site))

    findings = []
    for member, pairs in sorted(wanted.items()):
        if lookup.provides(member) or lookup.inner(member) is None:
            continue
        codes = {_site_code(role, site, draft_shaped) for role, site in pairs}
        code = next(c for c in _PRIORITY if c in codes)
        decisive = [site for role, site in pairs if _site_code(role, site, draft_shaped) == code]
        findings.append(_missing_forward(index, key, cls, path, member, code, pairs, decisive, lookup, config, rel))
    for gate in gates.reported():
        findings.append(_missing_capability(key, cls, path, gate, lookup, config, rel))
    return [f for f in findings if f.code in config.select and f.code not in cls.suppressed
            and "*" not in cls.suppressed]


@dataclass(frozen=True)
class AlgorithmStatus:
    """How a class fares with one speculative algorithm, for hover: ``supported``, ``refused`` (a gate it
    fails; ``why`` says which and what to forward) or ``supported-except`` (``members`` would crash)."""

    algorithm: str
    state: str
    why: str
    members: tuple[str, ...] = ()


def algorithm_status(index: Index, key: ClassKey, contract: Contract, config: Config) -> list[AlgorithmStatus]:
    """The class's status for each algorithm of the profile its roles' contract uses."""
    cls = index.class_summary(key)
    if cls is None:
        return []
    lookup = _Lookup(index, key, config)
    roles = config.roles_for_class(cls.name)
    sites = _sites(contract, roles, lookup)
    gates = _Gates(sites, lookup, config)
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
                out.append(AlgorithmStatus(spec.name, "refused", why))
            else:
                members = (stop.forward, *sorted(m for m in stop.behind if m != stop.forward))
                why = f"forward {', '.join(f'`{m}`' for m in members)} to enable it"
                out.append(AlgorithmStatus(spec.name, "refused", why, members))
            continue
        missing = sorted({site.member for _, site in mine
                          if not site.gate and not site.guarded and not site.condition
                          and not _fallback_covered(site, lookup) and not lookup.provides(site.member)
                          and lookup.inner(site.member) is not None})
        if missing:
            out.append(AlgorithmStatus(spec.name, "supported-except", "", tuple(missing)))
        else:
            out.append(AlgorithmStatus(spec.name, "supported", ""))
    return out


def _missing_forward(index: Index, key: ClassKey, cls: ClassSummary, path: str, member: str, code: str,
                     pairs: list[tuple[str, CallSite]], decisive: list[CallSite], lookup: _Lookup,
                     config: Config, rel) -> Finding:
    attr, inner_key, provision = lookup.inner(member)
    sites = tuple(site for _, site in pairs)
    roles = tuple(dict.fromkeys(role for role, _ in pairs))
    inner_cls = index.class_summary(provision.owner)
    inner_name = inner_key.qualname.rsplit(".", 1)[-1]
    first = decisive[0]
    what = "calls" if first.is_call else "reads"
    role_text = " and ".join(f"the {role} model's" for role in roles)
    where = f"{rel(first.path)}:{first.span.line + 1}"
    message = f"`{cls.name}` does not forward `{member}` to `self.{attr}` ({inner_name}); {role_text} contract {what} it at {where}"
    if code == "SC002":
        message += " (guarded, so optional)"
    elif code == "SC004":
        message += f", only when {_quoted(first.condition)}"
    elif code == "SC005":
        message += "; that crashes only if a draft checkpoint names this class"
    notes = _arity_notes(sites, provision.member, inner_cls.name if inner_cls else inner_name, rel)
    if "." not in attr and index.registry_chosen(key, attr):
        notes = (f"`self.{attr}` is built from a class the model registry picks at run time; "
                 f"{inner_name} is one of the profile's registry candidates",) + notes
    algorithms = {site.algorithm for site in decisive}
    return Finding(
        code=code, severity=config.severity[code], path=path, span=cls.span, class_name=cls.name,
        class_qualname=key.dotted, member=member, roles=roles, delegate=attr, inner_class=inner_name,
        provider=lookup.provider(member), call_sites=sites, message=message, notes=notes,
        algorithm=algorithms.pop() if len(algorithms) == 1 else None,
        condition=first.condition if code == "SC004" else None)


def _missing_capability(key: ClassKey, cls: ClassSummary, path: str, gate: _Gate, lookup: _Lookup,
                        config: Config, rel) -> Finding:
    member = gate.forward
    attr, inner_key, _ = lookup.inner(member)
    inner_name = inner_key.qualname.rsplit(".", 1)[-1]
    first = gate.sites[0]
    algorithm = gate.algorithm or "the run"
    also = []
    for other in sorted(gate.behind):
        if other == member:
            continue
        other_attr, other_inner, _ = lookup.inner(other)
        also.append(Forward(other, other_attr, other_inner.qualname.rsplit(".", 1)[-1], lookup.provider(other)))
    names = sorted({s.algorithm for found in gate.behind.values() for s in found if s.algorithm} - {gate.algorithm})
    refused = algorithm + "".join(f" (and {name})" for name in names[:1]) + "".join(f" (and {n})" for n in names[1:])
    line = first.gate_line if first.gate_line is not None else first.span.line
    message = (f"`{cls.name}` does not forward `{member}` to `self.{attr}` ({inner_name}), so the engine refuses "
               f"{refused} for it at its check in {rel(first.path)}:{line + 1}")
    if also:
        message += "; past that check it also needs " + _and([f"`{f.member}`" for f in also])
    sites = tuple(gate.sites) + tuple(site for found in gate.behind.values() for site in found)
    return Finding(
        code="SC003", severity=config.severity["SC003"], path=path, span=cls.span, class_name=cls.name,
        class_qualname=key.dotted, member=member, roles=(gate.role,), delegate=attr, inner_class=inner_name,
        provider=lookup.provider(member), call_sites=sites, message=message, algorithm=gate.algorithm,
        also=tuple(also))


def _quoted(condition: str) -> str:
    """A condition for a message: code in backticks, a sentence that already quotes its code as it is."""
    return condition if "`" in condition else f"`{condition}`"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
