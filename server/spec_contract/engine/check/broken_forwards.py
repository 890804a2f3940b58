"""Forwards that lead nowhere: the class has a contract member, but its body hands it to an inner model whose
class does not have it.

``Qwen3VLForConditionalGeneration.set_dflash_layers_to_capture`` ends in
``self.model.set_dflash_layers_to_capture(...)``, and the ``Qwen3LLMModel`` in ``self.model`` defines no such
member: the worker's ``hasattr(model, ...)`` passes, the call is made, and the run dies inside the forward. The
forward check (:mod:`~spec_contract.engine.check.wrappers`) sees a class that has the member; this module
follows the forward to where it lands. The inner classes are those the checked class builds (a subclass may
build another than the base whose forward it inherits), and the finding is made only when every candidate
class lacks the member: an inner of a class not known here, a forwarding ``__getattr__`` on the way, or a
forward the method guards with ``hasattr``/``getattr`` says nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from spec_contract.engine.check.gates import fallback_covered
from spec_contract.engine.check.lookup import Broken, MemberLookup
from spec_contract.engine.check.status import run_words
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import CallSite, Finding, Provider, Role
from spec_contract.engine.rules import BROKEN_FORWARD
from spec_contract.engine.summarise.summary import ClassSummary

Relative = Callable[[str], str]


def broken_forwards(index: Index, key: ClassKey, cls: ClassSummary, path: str, sites: list[tuple[Role, CallSite]],
                    lookup: MemberLookup, draft_shaped: bool, config: Config, rel: Relative) -> list[Finding]:
    """One finding per contract member the class has whose providing body hands it to inner classes that all
    lack it. A gate on the member is passed (the class has it), so its use runs too; fallbacks and guarded or
    rarely met uses do not count, nor draft uses on a class that is no draft by shape."""
    reached: dict[str, list[tuple[Role, CallSite]]] = {}
    for role, site in sites:
        if not fallback_covered(site, lookup) and lookup.provides(site.member):
            reached.setdefault(site.member, []).append((role, site))
    out = []
    for member, pairs in sorted(reached.items()):
        decisive = [site for role, site in pairs if not site.guarded and not site.condition
                    and (role is Role.TARGET or draft_shaped)]
        broken = lookup.broken(member) if decisive else None
        if broken is not None:
            out.append(_finding(index, key, cls, path, member, broken, pairs, decisive, config, rel))
    return out


def _finding(index: Index, key: ClassKey, cls: ClassSummary, path: str, member: str, broken: Broken,
             pairs: list[tuple[Role, CallSite]], decisive: list[CallSite], config: Config, rel: Relative) -> Finding:
    attr, inners, owner = broken.delegate, broken.inners, broken.owner
    span, kind = broken.member.span, broken.member.kind
    first = decisive[0]
    inner_names = " or ".join(inner.qualname.rsplit(".", 1)[-1] for inner in inners)
    owner_path = index.path_of(owner.module) or ""
    where = f"{rel(owner_path)}:{span.line + 1}"
    owner_name = owner.qualname.rsplit(".", 1)[-1]
    algorithms = {site.algorithm for site in decisive}
    run = run_words(decisive)
    message = (f"`{cls.name}` hands `{member}` to `self.{attr}` ({inner_names}), which does not have it; "
               f"{run} {'calls' if first.is_call else 'reads'} it at {rel(first.path)}:{first.span.line + 1} "
               f"({first.phase}) and crashes in `{owner_name}.{member}` ({where})")
    roles = tuple(dict.fromkeys(role for role, site in pairs if any(site is d for d in decisive)))
    return Finding(
        code=BROKEN_FORWARD.code, severity=config.severity[BROKEN_FORWARD.code], path=path, span=cls.span,
        class_name=cls.name, class_qualname=key.dotted, member=member, roles=roles, delegate=attr,
        inner_class=inners[0].qualname.rsplit(".", 1)[-1],
        provider=Provider(owner.dotted, owner_path, span, kind),
        call_sites=tuple(site for _, site in pairs), message=message,
        algorithm=algorithms.pop() if len(algorithms) == 1 else None)
