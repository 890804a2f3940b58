"""Capabilities declared with a runtime-checkable Protocol (vLLM's ``SupportsEagle3``): declared, backed, or
neither.

vLLM refuses EAGLE-3 at start-up unless ``supports_eagle3(model)`` holds, an ``isinstance`` check on a
Protocol whose marker is ``supports_eagle3: ClassVar[Literal[True]]``. A class declares it nominally (the
Protocol in its MRO, often only through a base) or structurally (it sets the marker itself). The Protocol's
default methods then do the delegation themselves: to ``get_language_model()`` when the class has it, else to
``self.language_model``, else to ``self``; then to that object's ``.model`` when it has one; and they assert
that the object they end at (the holder) is an ``EagleModelMixin``. So forwarding the Protocol's methods is
never the fix, and the question per class is:

* **declared but not backed** (SC007, error): the defaults run (no class in the MRO overrides them) and the
  holder's class is known and is not the mixin: the run asserts at start-up;
* **not declared** (SC006, warning): the class's language model declares and backs the capability but the
  class does not: the run is refused at start-up; adding the Protocol to the bases is the fix;
* **unverifiable** (SC008, information): the class declares it, but its language model is built from an
  architecture the HF config names at run time, so what the defaults reach is unknown.

Only capabilities some worker gates (calls the profile's ``check`` function) are checked. The contract
members the Protocol itself defines are the capability's: findings that would ask to forward them are
replaced by the capability's finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from spec_contract.engine.classes import ARCHITECTURE
from spec_contract.engine.config import Capability, Config
from spec_contract.engine.resolve import ClassKey, Index
from spec_contract.engine.results import CallSite, Finding, Provider, Span
from spec_contract.engine.summary import ModuleSummary


@dataclass(frozen=True)
class GatedCapability:
    """A capability of the profile that workers gate, with its Protocol resolved in the tree."""

    capability: Capability
    protocol: ClassKey
    members: frozenset[str]  # the Protocol's own members: its marker and default methods
    defaults: tuple[str, ...]  # the default methods (they do the delegation)
    mixin: ClassKey | None
    sites: tuple[CallSite, ...]  # the worker lines that call the check


def gated_capabilities(config: Config, index: Index, workers: Iterable[ModuleSummary],
                       text_of: Callable[[str], str | None]) -> list[GatedCapability]:
    """The profile's capabilities whose ``check`` function a worker calls, and where."""
    workers = list(workers)
    out = []
    for capability in config.capabilities:
        module, _, name = capability.protocol.rpartition(".")
        protocol = ClassKey(index.engine_module(module), name)
        cls = index.class_summary(protocol)
        if cls is None:
            continue  # the Protocol is not in the tree: nothing to check against
        sites = []
        for summary in workers:
            calls = [fn for fn in summary.functions if any(c.callee[-1:] == (capability.check,) for c in fn.calls)]
            if calls:
                sites += _check_sites(summary.path, text_of(summary.path) or "", capability.check)
        if not sites:
            continue
        mixin = None
        if capability.holder_mixin:
            mixin_module, _, mixin_name = capability.holder_mixin.rpartition(".")
            mixin = ClassKey(index.engine_module(mixin_module), mixin_name)
        defaults = tuple(m.name for m in cls.members if m.kind in ("method", "async_method"))
        out.append(GatedCapability(capability, protocol, frozenset(m.name for m in cls.members), defaults,
                                   mixin, tuple(sites)))
    return out


def _check_sites(path: str, text: str, check: str) -> list[CallSite]:
    """The lines of a worker file that call ``check(...)`` (not its import or definition)."""
    sites = []
    pattern = re.compile(rf"(?<![\w.]){re.escape(check)}\(")
    for number, line in enumerate(text.splitlines()):
        stripped = line.strip()
        match = pattern.search(line)
        if match and not stripped.startswith(("def ", "from ", "import ", "#")):
            span = Span(number, match.start(), number, match.start() + len(check))
            sites.append(CallSite(path=path, span=span, role="target", member=check, text=stripped,
                                  guarded=False, is_call=True))
    return sites


@dataclass(frozen=True)
class _Reach:
    """Where the Protocol's defaults end for one class: the attribute path and the holder's candidate classes
    (empty: unknown, the language model is built from an architecture named at run time)."""

    path: str  # "self", "language_model", "language_model.model", …
    holders: tuple[ClassKey, ...]
    unknown: bool = False


def _reach(index: Index, key: ClassKey, capability: Capability, config: Config) -> _Reach | None:
    """What ``getattr(parent, "model", parent)`` is for ``key``, as the Protocol's defaults compute it; None
    when an attribute on the way is of a class the index cannot tell (and not because of the HF config)."""
    delegates = index.delegates(key)
    attr = None
    if index.provision(key, capability.language_method) is not None:
        # get_language_model() returns the language model: the wrapper's preferred delegate attribute
        attr = next((name for name in (*index.language_attrs(key), capability.language_attr, *config.delegate_names)
                     if name in delegates or _from_hf_config(index, key, name)), None)
    elif index.provision(key, capability.language_attr) is not None:
        attr = capability.language_attr
    parents = (key,) if attr is None else delegates.get(attr, ())
    if not parents:
        return _Reach(attr, (), unknown=True) if _from_hf_config(index, key, attr) else None
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
    return _Reach(prefix + capability.holder_attr if deeper else (attr or "self"), tuple(holders))


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
    if "target" not in config.roles_for_class(cls.name):
        return kept
    for capability in gated:
        finding = _capability_finding(index, key, cls, path, config, capability, rel)
        if finding is not None and finding.code in config.select and finding.code not in cls.suppressed \
                and "*" not in cls.suppressed:
            kept.append(finding)
    return kept


def _capability_finding(index: Index, key: ClassKey, cls, path: str, config: Config, gated: GatedCapability,
                        rel: Callable[[str], str]) -> Finding | None:
    capability = gated.capability
    protocol = gated.protocol.qualname
    gate = gated.sites[0]
    where = f"{rel(gate.path)}:{gate.span.line + 1}"
    reach = _reach(index, key, capability, config)
    if reach is None:
        return None  # an inner model of a class the index cannot tell: no finding (as for missing forwards)
    proto_cls = index.class_summary(gated.protocol)
    provider = Provider(gated.protocol.dotted, index.path_of(gated.protocol.module) or "",
                        proto_cls.span if proto_cls else Span(0, 0, 0, 0), "class")

    def make(code: str, inner: str, message: str) -> Finding:
        return Finding(code=code, severity=config.severity[code], path=path, span=cls.span, class_name=cls.name,
                       class_qualname=key.dotted, member=protocol, roles=("target",), delegate=reach.path,
                       inner_class=inner, provider=provider, call_sites=gated.sites, message=message,
                       algorithm=capability.name)

    if _declares(index, key, gated):
        if _overridden(index, key, gated):
            return None  # the class's own methods do the work: trusted
        if reach.unknown:
            return make("SC008", "", f"`{cls.name}` declares `{protocol}`, but `self.{reach.path}` is built from an "
                        f"architecture the HF config names at run time, so whether {capability.name} works with it "
                        f"cannot be told here (the run checks it at {where})")
        failing = _backed(index, reach, gated)
        if failing:
            mixin = gated.mixin.qualname if gated.mixin else ""
            names = ", ".join(f"`{h.qualname}`" for h in failing)
            return make("SC007", failing[0].qualname,
                        f"`{cls.name}` declares `{protocol}`, but its default "
                        f"`{gated.capability.holder_method or gated.defaults[0]}` reaches "
                        f"`{'self' if reach.path == 'self' else 'self.' + reach.path}` ({names}), which is not "
                        f"an `{mixin}`: a {capability.name} run passes the check at {where} and then fails the "
                        f"default's assertion at start-up")
        return None
    if reach.path == "self" or reach.unknown:
        return None
    inner = [h for h in index.delegates(key).get(reach.path.split(".")[0], ())]
    if not inner or not all(_declares(index, i, gated) for i in inner):
        return None
    for i in inner:
        inner_reach = _reach(index, i, capability, config)
        if not _overridden(index, i, gated) and (inner_reach is None or inner_reach.unknown
                                                  or _backed(index, inner_reach, gated)):
            return None  # the language model's own declaration is not known to be backed
    if not _overridden(index, key, gated) and _backed(index, reach, gated):
        # Declaring alone would not do: the defaults would reach a holder that is not the mixin (the language
        # model backs its own declaration with an override the wrapper's defaults never call)
        return None
    names = ", ".join(i.qualname for i in inner)
    return make("SC006", inner[0].qualname,
                f"`{cls.name}` does not declare `{protocol}` while its language model `self.{reach.path.split('.')[0]}` "
                f"({names}) declares and backs it: a {capability.name} run is refused at start-up by the check at "
                f"{where}; add `{protocol}` to the class's bases (forwarding its methods does not pass the check)")


def declare_protocol(source: str, class_name: str, protocol_module: str, protocol: str) -> str:
    """``source`` with ``protocol`` added last to the bases of the top-level class ``class_name`` and imported:
    the fix of a capability the class does not declare (SC006). The name joins an existing import from the
    Protocol's module (absolute or relative, ``from .interfaces import (…)``) or a new import after the
    last top-level one. Unchanged when the class already lists it; libcst keeps everything else as written.
    """
    import libcst as cst  # only when a fix is asked for

    module = cst.parse_module(source)
    leaf = protocol_module.rpartition(".")[2]

    def dotted(node: cst.BaseExpression | None) -> str:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return f"{dotted(node.value)}.{node.attr.value}"
        return ""

    def imports_from_protocol_module(stmt: cst.CSTNode) -> cst.ImportFrom | None:
        body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(body, cst.ImportFrom) and not isinstance(body.names, cst.ImportStar):
            name = dotted(body.module)
            if name == protocol_module or (body.relative and name.rpartition(".")[2] == leaf):
                return body
        return None

    bound = False
    for stmt in module.body:
        found = imports_from_protocol_module(stmt)
        if found is not None and any((a.evaluated_alias or a.evaluated_name) == protocol for a in found.names):
            bound = True

    body = list(module.body)
    changed = False
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == class_name:
            if any(dotted(arg.value).rpartition(".")[2] == protocol for arg in stmt.bases):
                return source
            bases = _appended(list(stmt.bases), cst.Arg(cst.Name(protocol)), stmt.lpar)
            parens = {} if isinstance(stmt.lpar, cst.LeftParen) else {"lpar": cst.LeftParen(), "rpar": cst.RightParen()}
            body[i] = stmt.with_changes(bases=bases, **parens)
            changed = True
    if not changed:
        return source
    if not bound:
        for i, stmt in enumerate(body):
            found = imports_from_protocol_module(stmt)
            if found is not None:
                names = _appended(list(found.names), cst.ImportAlias(cst.Name(protocol)), found.lpar)
                body[i] = stmt.with_changes(body=[found.with_changes(names=names)])
                break
        else:
            last_import = max((i for i, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine)
                               and isinstance(s.body[0], (cst.Import, cst.ImportFrom))), default=-1)
            new = cst.parse_statement(f"from {protocol_module} import {protocol}\n")
            body.insert(last_import + 1, new)
    return module.with_changes(body=body).code


def _appended(items: list, new, lpar):
    """``items`` (bases or imported names) with ``new`` last, in the list's own layout: one per line with a
    trailing comma stays so, a one-line list gets ``, new``; ``lpar`` is the list's opening parenthesis (its
    line break is the separator a one-item list uses)."""
    import libcst as cst

    if not items:
        return [new]
    last = items[-1]
    if last.comma is cst.MaybeSentinel.DEFAULT:
        return items[:-1] + [last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), new]
    # a trailing comma: the new item takes it (and the line break before the closing parenthesis); the old
    # last item takes the separator the items before it use
    if len(items) > 1:
        between = items[-2].comma
    else:
        opening = getattr(lpar, "whitespace_after", None)
        between = cst.Comma(whitespace_after=opening if opening is not None else cst.SimpleWhitespace(" "))
    return items[:-1] + [last.with_changes(comma=between), new.with_changes(comma=last.comma)]
