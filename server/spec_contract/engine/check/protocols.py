"""Capabilities declared with a runtime-checkable Protocol (vLLM's ``SupportsEagle3``): declared, backed, or
neither.

vLLM refuses EAGLE-3 at start-up unless ``supports_eagle3(model)`` holds, an ``isinstance`` check on a
Protocol whose marker is ``supports_eagle3: ClassVar[Literal[True]]``. A class declares it nominally (the
Protocol in its MRO, often only through a base) or structurally (it sets the marker itself). The Protocol's
default methods then do the delegation themselves: to ``get_language_model()`` when the class has it, else to
``self.language_model``, else to ``self``; then to that object's ``.model`` when it has one; and they assert
that the object they end at (the holder) is an ``EagleModelMixin``. So forwarding the Protocol's methods is
never the fix, and the question per class is:

* **declared but not backed** (SC007, error): the run passes the check and then fails at start-up. Either
  the defaults run (no class in the MRO overrides them) and the holder's class is known and is not the mixin
  (the default's assertion fails), or a ``forward`` from the class down to the holder, the holder's own
  included, drops the aux hidden states (the model runner unpacks ``(hidden, aux)`` from the model's output;
  see ``engine.aux_returns``), or the language model the proposers take (``get_language_model()``, else the
  class) has no ``.model`` for them to read when they load the draft;
* **not declared** (SC006, warning): the class's language model declares and backs the capability but the
  class does not: the run is refused at start-up; adding the Protocol to the bases is the fix;
* **unverifiable** (SC008, information): the class declares it, but its language model is built from an
  architecture the HF config names at run time, so what the defaults reach is unknown.

Each check line and each proposer read takes the phase of the worker function it is in (start-up when a
start-up method reaches it, as for any worker use; vLLM's are in ``load_model`` and what it calls), and the
messages say when from it.

Only capabilities some worker gates (calls the profile's ``check`` function) are checked. The contract
members the Protocol itself defines are the capability's: findings that would ask to forward them are
replaced by the capability's finding.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from spec_contract.engine.check.aux_returns import (
    Verdict,
    builds_pair,
    function_at,
    hands_on,
    returned_chain,
    self_calls,
)
from spec_contract.engine.config import Capability, Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import CallSite, Contract, Finding, Phase, Provider, Role, Span
from spec_contract.engine.runs import Served
from spec_contract.engine.summarise.summary import ARCHITECTURE, ClassSummary, ModuleSummary
from spec_contract.engine.text import split_lines


@dataclass(frozen=True)
class GatedCapability:
    """A capability of the profile that workers gate, with its Protocol resolved in the tree."""

    capability: Capability
    protocol: ClassKey
    members: frozenset[str]  # the Protocol's own members: its marker and default methods
    defaults: tuple[str, ...]  # the default methods (they do the delegation)
    mixin: ClassKey | None
    sites: tuple[CallSite, ...]  # the worker lines that call the check
    # the worker lines that read the target language model's ``.<holder_attr>`` with no guard (the proposers
    # taking its embeddings when they load the draft)
    reads: tuple[CallSite, ...] = ()
    # the text the analysis reads for a path (a model's forward is read from it; see ``engine.aux_returns``)
    text_of: Callable[[str], str | None] = field(default=lambda path: None, compare=False, repr=False)
    # the algorithms whose runs reach the check (vLLM's ``supports_eagle3`` runs when the runner uses aux hidden
    # states: EAGLE-3, DFLASH, …), in the release's order; empty: the profile's ``name`` alone
    algorithms: tuple[str, ...] = ()

    @property
    def runs(self) -> tuple[str, ...]:
        """The algorithms the check stops."""
        return self.algorithms or (self.capability.name,)

    @property
    def algorithm(self) -> str:
        """The one algorithm a finding names: the profile's, when the check serves it."""
        return self.capability.name if self.capability.name in self.runs else self.runs[0]

    def run_words(self) -> str:
        """``EAGLE3``, ``EAGLE3 or DFLASH``: whose runs the check stops, as messages say it."""
        runs = list(self.runs)
        return runs[0] if len(runs) == 1 else ", ".join(runs[:-1]) + " or " + runs[-1]


def gated_capabilities(config: Config, index: Index, workers: Iterable[ModuleSummary],
                       text_of: Callable[[str], str | None], contract: Contract) -> list[GatedCapability]:
    """The profile's capabilities whose ``check`` function a worker calls, and where; the ``contract`` says
    which worker functions run while the server starts (each line's phase) and which algorithms' runs reach
    each line (see ``runs.Served``)."""
    workers = list(workers)
    start_up = contract.start_up
    served = Served(contract, (fn for summary in workers for fn in summary.functions))
    out = []
    for capability in config.capabilities:
        module, _, name = capability.protocol.rpartition(".")
        protocol = ClassKey(index.engine_module(module), name)
        cls = index.class_summary(protocol)
        if cls is None:
            continue  # the Protocol is not in the tree: nothing to check against
        sites = []
        runs: set[str] = set()
        every = False  # some check serves every run
        for summary in workers:
            calls = [fn for fn in summary.functions if any(c.callee[-1:] == (capability.check,) for c in fn.calls)]
            runs_of: dict[str, frozenset[str]] = {}  # the runs each function's checks serve (a runner's own)
            for fn in calls:
                mine: set[str] = set()
                for call in fn.calls:
                    if call.callee[-1:] == (capability.check,):
                        found = served.of(summary.module, fn.qualname, call.selects)
                        every = every or found is None
                        mine |= found or set()
                runs |= mine
                runs_of[fn.qualname] = frozenset(mine)
            if calls:
                started = {fn.qualname for fn in calls if (summary.module, fn.qualname) in start_up}
                sites += _check_sites(summary.path, text_of(summary.path) or "", capability.check, runs_of, started)
        if not sites:
            continue
        mixin = None
        if capability.holder_mixin:
            mixin_module, _, mixin_name = capability.holder_mixin.rpartition(".")
            mixin = ClassKey(index.engine_module(mixin_module), mixin_name)
        defaults = tuple(m.name for m in cls.members if m.kind in ("method", "async_method"))
        algorithms = () if every else tuple(n for n in contract.algorithms if n in runs)
        if algorithms:  # each check's lines serve the runs that reach it (each model runner its own)
            served_here = [site.algorithms or frozenset(algorithms) for site in sites]
            sites = [replace(site, algorithms=runs, algorithm=next(iter(runs)) if len(runs) == 1 else None)
                     for site, runs in zip(sites, served_here)]
        else:
            sites = [replace(site, algorithms=None) for site in sites]
        out.append(GatedCapability(capability, protocol, frozenset(m.name for m in cls.members), defaults,
                                   mixin, tuple(sites), _language_reads(workers, capability, served, algorithms,
                                                                        start_up), text_of, algorithms))
    return out


def _check_sites(path: str, text: str, check: str, callers: dict[str, frozenset[str]],
                 started: set[str]) -> list[CallSite]:
    """The lines of a worker file that call ``check(...)`` (not its import or definition), each in the phase
    of the function it is in and serving its runs: ``callers`` are the qualnames of the file's functions that
    call it, with the runs that reach their checks (empty: not told), ``started`` those of them that run at
    start-up (a line in a function no caller names takes any caller's)."""
    sites = []
    pattern = re.compile(rf"(?<![\w.]){re.escape(check)}\(")
    lines = split_lines(text)  # an editor's lines (``str.splitlines`` breaks at form feeds too)
    for number, line in enumerate(lines):
        stripped = line.strip()
        match = pattern.search(line)
        if match and not stripped.startswith(("def ", "from ", "import ", "#")):
            span = Span(number, match.start(), number, match.start() + len(check))
            name = _enclosing_def(lines, number)
            mine = [q for q in callers if q.rpartition(".")[2] == name] or list(callers)
            phase = Phase.START_UP if any(q in started for q in mine) else Phase.FIRST_REQUEST
            runs = frozenset().union(*(callers[q] for q in mine))
            sites.append(CallSite(path=path, span=span, role=Role.TARGET, member=check, text=stripped,
                                  guarded=False, is_call=True, phase=phase, algorithms=runs or None))
    return sites


def _enclosing_def(lines: list[str], number: int) -> str | None:
    """The name of the innermost ``def`` above line ``number`` that the line is indented under."""
    indent = len(lines[number]) - len(lines[number].lstrip())
    for above in range(number - 1, -1, -1):
        text = lines[above]
        stripped = text.lstrip()
        if stripped and not stripped.startswith("#") and len(text) - len(stripped) < indent:
            found = _DEF.match(stripped)
            if found:
                return found.group(1)
            indent = len(text) - len(stripped)
    return None


_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)")


def _language_reads(workers: list[ModuleSummary], capability: Capability, served: Served,
                    algorithms: tuple[str, ...], start_up: frozenset[tuple[str, str]]) -> tuple[CallSite, ...]:
    """Unguarded reads of ``<…language_model>.<holder_attr>`` in the workers that a run the check stops may
    reach (``algorithms``; empty: every run): the proposers take the target's language model
    (``get_language_model()``, else the target) and read its decoder when they load the draft (each read in
    the phase of its function, see ``start_up``)."""
    reads = []
    for summary in workers:
        for fn in summary.functions:
            for use in fn.uses:
                if use.member == capability.holder_attr and not use.guarded and use.receiver \
                        and use.receiver[-1].endswith(capability.language_attr) \
                        and _meets(served.of(summary.module, fn.qualname, use.selects), algorithms):
                    phase = Phase.START_UP if (summary.module, fn.qualname) in start_up else Phase.FIRST_REQUEST
                    reads.append(CallSite(path=summary.path, span=use.span, role=Role.TARGET, member=use.member,
                                          text=use.text, guarded=False, is_call=use.is_call, phase=phase))
    return tuple(sorted(reads, key=lambda site: (site.path, site.span)))


def _meets(found: frozenset[str] | None, algorithms: tuple[str, ...]) -> bool:
    """Whether a line serving ``found`` (None: every run) may run in one of ``algorithms`` (empty: any)."""
    return found is None or not algorithms or not found.isdisjoint(algorithms)


@dataclass(frozen=True)
class _Reach:
    """Where the Protocol's defaults end for one class: the attribute path and the holder's candidate classes
    (empty: unknown, the language model is built from an architecture named at run time); and what the
    proposers take as the language model (``get_language_model()``'s candidate classes, or the class itself;
    empty: unknown)."""

    path: str  # "self", "language_model", "language_model.model", …
    holders: tuple[ClassKey, ...]
    unknown: bool = False
    language: tuple[ClassKey, ...] = ()
    language_path: str = "self"


def _reach(index: Index, key: ClassKey, capability: Capability, config: Config,
           text_of: Callable[[str], str | None]) -> _Reach | None:
    """What ``getattr(parent, "model", parent)`` is for ``key``, as the Protocol's defaults compute it; None
    when an attribute on the way is of a class the index cannot tell (and not because of the HF config)."""
    delegates = index.delegates(key)
    attr = None
    by_method = index.provision(key, capability.language_method) is not None
    said = _returned(index, key, capability.language_method, text_of) if by_method else None
    if said is not None and len(said) <= 2:
        attr = said[1] if len(said) == 2 else None  # an override that returns self, or one attribute of it
    elif by_method:
        # get_language_model() returns the language model: the wrapper's preferred delegate attribute
        attr = next((name for name in (*index.language_attrs(key), capability.language_attr, *config.delegate_names)
                     if name in delegates or _from_hf_config(index, key, name)), None)
    elif index.provision(key, capability.language_attr) is not None:
        attr = capability.language_attr
    parents = (key,) if attr is None else delegates.get(attr, ())
    # the proposers take get_language_model() when the class has it, else the class itself (never .language_model)
    language = (key,) if not by_method or said == ("self",) else parents if attr is not None else ()
    if not parents:
        return _Reach(attr, (), unknown=True) if attr is not None and _from_hf_config(index, key, attr) else None
    prefix = "" if attr is None else attr + "."
    holders: list[ClassKey] = []
    deeper = False
    for parent in parents:
        inner = index.delegates(parent).get(capability.holder_attr, ())
        if inner:
            deeper = True
            holders += [h for h in inner if h not in holders]
        elif index.provision(parent, capability.holder_attr) is not None:
            if _from_hf_config(index, parent, capability.holder_attr):
                return _Reach(prefix + capability.holder_attr, (), unknown=True)
            return None
        elif parent not in holders:
            holders.append(parent)
    return _Reach(prefix + capability.holder_attr if deeper else (attr or "self"), tuple(holders),
                  language=language, language_path=attr if by_method and attr else "self")


def _returned(index: Index, key: ClassKey, method: str, text_of: Callable[[str], str | None]) -> tuple[str, ...] | None:
    """The ``self`` chain the class's ``method`` returns, when the method found along the MRO says it plainly
    (``return self``, ``return self.language_model``); None otherwise."""
    fn = _method(index, key, method, text_of)
    return returned_chain(fn) if fn is not None else None


def _method(index: Index, key: ClassKey, method: str, text_of: Callable[[str], str | None]) \
        -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The body of the ``method`` instances of ``key`` run (the first along the MRO), read from its file's
    text; finding it read the owner's module, so the class's recorded dependencies already hold it."""
    found = index.provision(key, method)
    if found is None or found.member is None or found.member.kind not in ("method", "async_method"):
        return None
    path = index.path_of(found.owner.module)
    text = text_of(path) if path is not None else None
    return function_at(text, found.member.span.line) if text is not None else None


def _from_hf_config(index: Index, key: ClassKey, attr: str) -> bool:
    """Whether ``self.<attr>`` is built from an architecture the HF config names at run time."""
    for owner in index.mro(key):
        cls = index.class_summary(owner)
        if cls is not None and any(d.attr == attr and d.callee[:1] == (ARCHITECTURE,) for d in cls.delegates):
            return True
    return False


def _declares(index: Index, key: ClassKey, gated: GatedCapability) -> bool:
    """Nominally (the Protocol in the MRO) or structurally (the class sets the marker)."""
    return gated.protocol in index.mro(key) or index.provision(key, gated.capability.marker) is not None


def _overridden(index: Index, key: ClassKey, gated: GatedCapability) -> bool:
    """Whether a class of the MRO replaces the default method that asserts the holder's mixin (else every
    default): the defaults' delegation never runs, the override is trusted."""
    methods = (gated.capability.holder_method,) if gated.capability.holder_method else gated.defaults
    return bool(methods) and all(
        (found := index.provision(key, m)) is not None and found.owner != gated.protocol for m in methods)


def _backed(index: Index, reach: _Reach, gated: GatedCapability) -> list[ClassKey]:
    """The holder classes that are not the mixin the defaults assert (empty: backed)."""
    if gated.mixin is None:
        return []
    return [h for h in reach.holders if gated.mixin not in index.mro(h)]


@dataclass(frozen=True)
class _Failure:
    """Why a declaration is not backed: the class the message names, what happens, and the worker lines."""

    inner: ClassKey
    message: str  # "`self.…` (…) is not …; its default … reaches it" — the middle of the finding's message
    outcome: str  # what the run does after passing the check
    sites: tuple[CallSite, ...] = ()


def _failure(index: Index, key: ClassKey, reach: _Reach, gated: GatedCapability, rel: Callable[[str], str],
             defaults_run: bool) -> _Failure | None:
    """The first reason a declaration of the capability by ``key`` fails at start-up (None: backed, as far
    as can be told): the holder is not the mixin, a forward on the way drops the aux outputs, or the language
    model the proposers take has no decoder to read. The first two only when the defaults run."""
    capability = gated.capability
    if defaults_run:
        failing = _backed(index, reach, gated)
        if failing:
            mixin = gated.mixin.qualname if gated.mixin else ""
            names = ", ".join(f"`{h.qualname}`" for h in failing)
            return _Failure(failing[0], f"`{'self' if reach.path == 'self' else 'self.' + reach.path}` ({names}) is "
                            f"not an `{mixin}`; its default `{capability.holder_method or gated.defaults[0]}` "
                            "reaches it", f"then fails the default's assertion {gated.sites[0].phase.when}")
        dropped = _dropped_aux(index, key, reach, gated)
        if dropped is not None:
            owner, verdict, hop = dropped
            where = f"{rel(index.path_of(owner.module) or '')}:{verdict.line + 1}"
            got = f"the `(hidden, aux)` pair `{'.'.join(hop)}(...)` returns" if hop else \
                "the `(hidden, aux)` pair the aux layers ask of it (it is the holder)"
            return _Failure(owner, f"`{owner.qualname}.forward` drops the aux hidden states; `{verdict.text}` "
                            f"({where}) is not {got}",
                            "then fails at the first forward, where the model runner unpacks `hidden_states, "
                            "aux_hidden_states` from the model's output")
    if reach.language and all(index.provision(c, capability.holder_attr) is None for c in reach.language):
        taken = "the class itself" if reach.language_path == "self" else \
            f"`{capability.language_method}()` (`self.{reach.language_path}`)"
        names = ", ".join(c.qualname for c in reach.language)
        first = f" ({rel(gated.reads[0].path)}:{gated.reads[0].span.line + 1})" if gated.reads else ""
        return _Failure(reach.language[0], f"{names} has no `.{capability.holder_attr}`; the proposers take "
                        f"{taken} as its language model and read it",
                        f"then stops with `AttributeError` when the draft is loaded{first}", gated.reads)
    return None


def _dropped_aux(index: Index, key: ClassKey, reach: _Reach, gated: GatedCapability) \
        -> tuple[ClassKey, Verdict, tuple[str, ...]] | None:
    """The forward that drops the aux outputs on the way from ``key`` to the holder (``reach.path``), as
    (its class, the verdict, the call whose result it drops; () for the holder's own forward); None when
    each candidate passes them on or the reading cannot tell."""
    parts = () if reach.path == "self" else tuple(reach.path.split("."))
    return _dropped_from((key,), parts, index, gated, 0)


def _dropped_from(classes: tuple[ClassKey, ...], parts: tuple[str, ...], index: Index, gated: GatedCapability,
                  depth: int) -> tuple[ClassKey, Verdict, tuple[str, ...]] | None:
    """What every class of ``classes`` drops (each is a candidate for one object: only when all do)."""
    found = None
    for cls in classes:
        dropped = _dropped_at(cls, parts, index, gated, depth)
        if dropped is None:
            return None
        found = found or dropped
    return found


def _dropped_at(key: ClassKey, parts: tuple[str, ...], index: Index, gated: GatedCapability, depth: int) \
        -> tuple[ClassKey, Verdict, tuple[str, ...]] | None:
    provided = index.provision(key, "forward")
    fn = _method(index, key, "forward", gated.text_of) if depth <= 4 else None
    if fn is None or provided is None:
        return None
    owner = provided.owner
    if not parts:
        layers = frozenset(name for name in self_calls(fn) if (found := index.provision(key, name)) is None
                           or found.member is None or found.member.kind not in ("method", "async_method"))
        verdict = builds_pair(fn, layers)
        return (owner, verdict, ()) if verdict.kind == "drops" else None
    hops = frozenset(("self", *parts[:i]) for i in range(1, len(parts) + 1))
    verdict = hands_on(fn, hops)
    if verdict.kind == "drops":
        return owner, verdict, ("self", *parts)
    if verdict.kind != "passes":
        return None
    step = len(verdict.hop) - 1  # the attributes the call went through
    objects: tuple[ClassKey, ...] = (key,)
    for attr in parts[:step]:
        objects = tuple(dict.fromkeys(c for o in objects for c in _held(index, o, attr)))
    return _dropped_from(objects, parts[step:], index, gated, depth + 1) if objects else None


def _held(index: Index, key: ClassKey, attr: str) -> tuple[ClassKey, ...]:
    """The classes ``self.<attr>`` may hold on an instance of ``key``: of the delegates along the MRO, those
    the most-derived class that assigns the attribute builds (its ``__init__`` runs last, or alone), when each
    of its assignments names a class; else every candidate."""
    candidates = index.delegates(key).get(attr, ())
    for owner in index.mro(key):
        cls = index.class_summary(owner)
        assigned = [d for d in cls.delegates if d.attr == attr] if cls is not None else []
        if assigned:
            built = [index.resolve_class(owner.module, d.callee) if d.via is None else None for d in assigned]
            kept = tuple(c for c in candidates if c in built)
            return kept if kept and None not in built else candidates
    return candidates


def capability_findings(index: Index, key: ClassKey, config: Config, gated: list[GatedCapability],
                        findings: list[Finding], rel: Callable[[str], str]) -> list[Finding]:
    """``findings`` (the class's check) less those asking to forward a Protocol's own members, plus the
    class's capability findings (see the module docstring)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if not gated or cls is None or path is None:
        return findings
    owned = frozenset().union(*(g.members for g in gated))
    kept = [f for f in findings if f.member not in owned]
    if Role.TARGET not in config.roles_for_class(cls.name):
        return kept
    for capability in gated:
        finding = _capability_finding(index, key, cls, path, config, capability, rel)
        if finding is not None and finding.code in config.select and finding.code not in cls.suppressed \
                and "*" not in cls.suppressed:
            kept.append(finding)
    return kept


def capability_verdicts(index: Index, key: ClassKey, config: Config, gated: Sequence[GatedCapability],
                        rel: Callable[[str], str]) -> list[tuple[GatedCapability, bool, Finding | None]]:
    """For hover: per capability a target-capable class may meet, whether it declares the Protocol and the
    finding the check gives it (None: none, whatever the selection and suppressions)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None or Role.TARGET not in config.roles_for_class(cls.name):
        return []
    return [(g, _declares(index, key, g), _capability_finding(index, key, cls, path, config, g, rel)) for g in gated]


def _checks_where(sites: tuple[CallSite, ...], rel: Callable[[str], str]) -> str:
    """Where the check stops a run: the first line, and after it each line that alone stops some runs (a model
    runner of their own: vLLM's V1 check never sees a DSPARK run, V2's does)."""
    words = f"{rel(sites[0].path)}:{sites[0].span.line + 1}"
    seen = set(sites[0].algorithms or ())
    for site in sites[1:]:
        own = sorted((site.algorithms or frozenset()) - seen)
        if own and sites[0].algorithms is not None:
            names = own[0] if len(own) == 1 else ", ".join(own[:-1]) + " or " + own[-1]
            words += f" (for {names}: {rel(site.path)}:{site.span.line + 1})"
            seen.update(own)
    return words


def _capability_finding(index: Index, key: ClassKey, cls: ClassSummary, path: str, config: Config,
                        gated: GatedCapability, rel: Callable[[str], str]) -> Finding | None:
    capability = gated.capability
    protocol = gated.protocol.qualname
    gate = gated.sites[0]
    where = _checks_where(gated.sites, rel)
    reach = _reach(index, key, capability, config, gated.text_of)
    declares = _declares(index, key, gated)
    if reach is None and declares:
        return None  # an inner model of a class the index cannot tell: no finding (as for missing forwards)
    proto_cls = index.class_summary(gated.protocol)
    provider = Provider(gated.protocol.dotted, index.path_of(gated.protocol.module) or "",
                        proto_cls.span if proto_cls else Span(0, 0, 0, 0), "class")

    def make(code: str, inner: str, message: str, sites: tuple[CallSite, ...] = ()) -> Finding:
        return Finding(code=code, severity=config.severity[code], path=path, span=cls.span, class_name=cls.name,
                       class_qualname=key.dotted, member=protocol, roles=(Role.TARGET,),
                       delegate=reach.path if reach is not None else "",
                       inner_class=inner, provider=provider, call_sites=gated.sites + sites, message=message,
                       algorithm=gated.algorithm)

    if not declares and (reach is None or reach.unknown):
        # the check asks the class itself, whatever its language model is: refused after the load
        return _undeclared(make, gate, cls.name, protocol, where, gated,
                           "and what its language model declares cannot be told here")
    assert reach is not None
    overridden = _overridden(index, key, gated)
    if declares:
        if reach.unknown and not overridden:
            return make("SC008", "", f"`{cls.name}` declares `{protocol}`, but `self.{reach.path}` is built from an "
                        f"architecture the HF config names at run time; so whether {gated.run_words()} works with it "
                        f"cannot be told here (the run checks it at {where})")
        # an override of the asserting default is trusted: the class's own methods do the work
        failure = _failure(index, key, reach, gated, rel, defaults_run=not overridden)
        if failure is None:
            return None
        return make("SC007", failure.inner.qualname, f"`{cls.name}` declares `{protocol}`, but {failure.message}; "
                    f"a {gated.run_words()} run passes the check at {where} and {failure.outcome}", failure.sites)
    inner = [] if reach.path == "self" else [h for h in index.delegates(key).get(reach.path.split(".")[0], ())]
    if reach.path == "self" or inner and not any(_declares(index, i, gated) for i in inner):
        return _undeclared(make, gate, cls.name, protocol, where, gated, "and no inner model does")
    if not inner or not all(_declares(index, i, gated) for i in inner):
        return None
    inner_failure = None  # how a candidate's own declaration fails, if one does
    for i in inner:
        inner_reach = _reach(index, i, capability, config, gated.text_of)
        if not _overridden(index, i, gated) and (inner_reach is None or inner_reach.unknown
                                                  or _backed(index, inner_reach, gated)):
            return None  # the language model's own declaration is not known to be backed
        if inner_reach is not None and inner_failure is None:
            inner_failure = _failure(index, i, inner_reach, gated, rel, defaults_run=not _overridden(index, i, gated))
    backed = inner_failure is None
    names = ", ".join(i.qualname for i in inner)
    refused = f"`{cls.name}` does not declare `{protocol}` while " \
        f"`self.{reach.path.split('.')[0]}` ({names}) declares {'and backs ' if backed else ''}it; a " \
        f"{gated.run_words()} run is refused {gate.phase.refused} by the check at {where}"
    failure = _failure(index, key, reach, gated, rel, defaults_run=not overridden) or inner_failure
    if failure is not None:
        # Declaring alone would only move the failure: say what would fail, offer no declaration
        own = capability.holder_method if capability.holder_method and any(
            _overridden(index, i, gated) for i in inner) else None
        hint = f" (the language model backs its own declaration with its `{own}`, which the class's defaults " \
            f"never call: override them to call it)" if own and "default" in failure.message else ""
        return make("SC009", failure.inner.qualname,
                    f"{refused}; declaring it is not enough: once declared, {failure.message}, and a run "
                    f"{failure.outcome}{hint}", failure.sites)
    return make("SC006", inner[0].qualname,
                f"{refused}; add `{protocol}` to the class's bases (forwarding its methods does not pass the check)")


def _undeclared(make: Callable[..., Finding], gate: CallSite, name: str, protocol: str, where: str,
                gated: GatedCapability, inner_words: str) -> Finding:
    """The class declares nothing the check accepts: the check refuses the run, but only once the weights are
    loaded, which costs what a crash costs; said once, on the check's line, for every such class (SC011)."""
    check = replace(gate, gate=(protocol,), gate_line=gate.span.line)
    return replace(make("SC011", "", f"`{name}` does not declare `{protocol}`, {inner_words}; the engine's check "
                                     f"at {where} refuses a run of {gated.run_words()} {gate.phase.refused} "
                                     "without it"), call_sites=(check,))
