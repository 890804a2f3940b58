"""The check: wrapper classes that lack a contract member their inner model provides.

For each registered model class W and each member m of a role W can play: if W provides m (own body, MRO,
properties, attributes, a forwarding ``__getattr__``) all is well; otherwise, if the class of one of W's
delegate attributes (``self.language_model = Inner(...)``; one level deeper too) provides m, W must forward
it: SC001 when some worker use of m is unguarded, SC002 when every use is guarded.
"""

from __future__ import annotations

from collections.abc import Iterable

from spec_contract.engine.config import Config
from spec_contract.engine.resolve import ClassKey, Index, Provision
from spec_contract.engine.results import CallSite, Contract, ContractEntry, Finding, Provider
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


def _ordered_delegates(delegates: dict[str, tuple[ClassKey, ...]], preferred: tuple[str, ...]) -> list[tuple[str, tuple[ClassKey, ...]]]:
    rank = {name: i for i, name in enumerate(preferred)}
    return sorted(delegates.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0]))


class _Inners:
    """One wrapper's delegates, and theirs one level deeper, ordered once per class rather than per member.

    Each list is built the first time a member needs it, so a class is charged only with the modules its
    check really reads (as the index records them), and asked about every contract member in turn.
    """

    def __init__(self, index: Index, wrapper: ClassKey, preferred: tuple[str, ...]) -> None:
        self._index = index
        self._wrapper = wrapper
        self._preferred = preferred
        self._direct: list[tuple[str, tuple[ClassKey, ...]]] | None = None
        self._deeper: dict[ClassKey, list[tuple[str, tuple[ClassKey, ...]]]] = {}

    def _delegates_of(self, inner: ClassKey) -> list[tuple[str, tuple[ClassKey, ...]]]:
        found = self._deeper.get(inner)
        if found is None:
            found = self._deeper[inner] = _ordered_delegates(self._index.delegates(inner), self._preferred)
        return found

    def provider(self, member: str) -> tuple[str, ClassKey, Provision] | None:
        """The first delegate path whose inner class really defines ``member`` (not via unknown ``__getattr__``)."""
        index = self._index
        if self._direct is None:
            self._direct = _ordered_delegates(index.delegates(self._wrapper), self._preferred)
        provided = []  # (attr, inner, provision) of the direct inners, asked once for both passes
        for attr, candidates in self._direct:
            for inner in candidates:
                found = index.provision(inner, member)
                if found is not None and found.member is not None:
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


def check_class(index: Index, key: ClassKey, contract: Contract, config: Config, rel) -> list[Finding]:
    """Findings for one model class (``rel`` shortens paths for messages)."""
    cls = index.class_summary(key)
    path = index.path_of(key.module)
    if cls is None or path is None:
        return []
    roles = config.roles_for_class(cls.name)
    wanted: dict[str, list[ContractEntry]] = {}
    for role in roles:
        for entry in contract.for_role(role):
            wanted.setdefault(entry.member, []).append(entry)
    findings = []
    inners = _Inners(index, key, config.delegate_names)
    for member, entries in sorted(wanted.items()):
        if index.provision(key, member) is not None:
            continue
        inner = inners.provider(member)
        if inner is None:
            continue
        attr, inner_key, provision = inner
        sites = tuple(site for entry in entries for site in entry.call_sites)
        required = any(entry.required for entry in entries)
        code = "SC001" if required else "SC002"
        if code not in config.select or code in cls.suppressed or "*" in cls.suppressed:
            continue
        inner_cls = index.class_summary(provision.owner)
        inner_name = inner_key.qualname.rsplit(".", 1)[-1]
        first = next((s for s in sites if not s.guarded), sites[0])
        what = "calls" if first.is_call else "reads"
        role_text = " and ".join(f"the {e.role} model's" for e in entries)
        message = (f"`{cls.name}` does not forward `{member}` to `self.{attr}` ({inner_name}); "
                   f"{role_text} contract {what} it at {rel(first.path)}:{first.span.line + 1}"
                   + ("" if required else " (guarded, so optional)"))
        provider = Provider(provision.owner.dotted, index.path_of(provision.owner.module) or "",
                            provision.member.span, provision.member.kind)
        notes = _arity_notes(sites, provision.member, inner_cls.name if inner_cls else inner_name, rel)
        if "." not in attr and index.registry_chosen(key, attr):
            notes = (f"`self.{attr}` is built from a class the model registry picks at run time; "
                     f"{inner_name} is one of the profile's registry candidates",) + notes
        findings.append(Finding(
            code=code, severity=config.severity[code], path=path, span=cls.span, class_name=cls.name,
            class_qualname=key.dotted, member=member, roles=tuple(e.role for e in entries), delegate=attr,
            inner_class=inner_name, provider=provider, call_sites=sites, message=message,
            notes=notes,
        ))
    return findings
