"""Checking the model classes against the contract: one by one, or shared with forked processes when there
are many (a cold run; see ``parallel.map_forked``).

Each class's findings come with the modules its check read (as the index records them), so the pipeline can
check again only the classes that read a changed module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from spec_contract.engine.check.analogy import Analogies
from spec_contract.engine.check.protocols import GatedCapability, capability_findings
from spec_contract.engine.check.shares import Drafts
from spec_contract.engine.check.wrappers import check_class
from spec_contract.engine.config import Config
from spec_contract.engine.parallel import map_forked, processes_for
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.platforms import branch_of
from spec_contract.engine.resolve.registry import ModelRegistry
from spec_contract.engine.resolve.roles import Holding, Holds, RoleClass, find_holds, role_classes
from spec_contract.engine.results import Contract, Finding
from spec_contract.engine.stats import Stats

Checked = tuple[list[Finding], frozenset[str]]  # a class's findings, and the modules its check read

# Classes checked before the others are shared with forked processes: what they read, most classes read, and
# the processes inherit it (SGLang 0.5.23, two processes: 8.5 -> 7.9 MB parsed in all, 7.6 alone)
_CHECKED_BEFORE_FORKING = 4


def check_classes(keys: list[ClassKey], index: Index, contract: Contract, config: Config, *,
                  gated: tuple[GatedCapability, ...], registry: ModelRegistry | None,
                  relative: Callable[[str], str], problems_of: Callable[[Stats], dict[str, str]],
                  stats: Stats, problems: dict[str, str], analogies: Analogies | None = None,
                  held: dict[ClassKey, RoleClass] | None = None,
                  holding: Holding[Checked] | None = None) -> list[Checked]:
    """Each class's findings, with the modules its check read; ``gated``: the profile's Protocol capabilities
    that the workers gate (see ``check.protocols``). Forked processes add their problems (as ``problems_of``
    finds them in each) and stats to ``problems`` and ``stats``. ``held``: the language models no registry
    names, with the wrapper that holds each (``resolve.roles``). With ``holding``, what each class holds is
    found and checked with it, and added to it: the classes it holds are what the pipeline checks next, and
    finding and checking them beside it shares that work with the forked processes too (it reads the inner
    models the class's own check reads)."""

    capabilities = list(gated)
    drafts = Drafts(index, config, registry, contract.algorithms, contract.runner_default) \
        if registry is not None else None

    def check(key: ClassKey, role: RoleClass | None) -> Checked:
        recorded = index.record()
        recorded.add(key.module)
        if registry is not None:  # what the class's inner models are depends on the registry's text
            recorded.update(registry.modules)
        if role is not None and role.wrapper is not None:  # what it is handed is the wrapper's text
            recorded.add(role.wrapper.module)
        found = check_class(index, key, contract, config, relative, analogies, role, drafts)
        if gated and role is None:  # the engine's isinstance gate asks the served class, never a held one
            found = capability_findings(index, key, config, capabilities, found, relative)
        branch = branch_of(index, key.module)
        if branch is not None:  # one platform's class of a per-platform package: the finding is that platform's
            found = [replace(f, message=f"{f.message} (on the `{branch}` platform: the package's `{branch}` branch)")
                     for f in found]
        return found, index.stop(recorded)

    members = frozenset(contract.members())
    checked_here: set[RoleClass] = set()  # the held classes this process checked (a forked one: its own)

    def check_and_find(i: int) -> tuple[Checked, Holds, dict[RoleClass, Checked]]:
        checked = check(keys[i], (held or {}).get(keys[i]))
        if holding is None:
            return checked, {}, {}
        holds = holding.holds
        found = {h: holds[h] for h in find_holds(index, keys[i], config, members, holds)}
        roles = [role for role in role_classes(index, [keys[i]], config, members, holds, holding.registered)[1:]
                 if role not in checked_here]
        checked_here.update(roles)
        return checked, found, {role: check(role.key, role) for role in roles}

    shared = map_forked(len(keys), check_and_find, processes_for(len(keys), "classes"),
                        report=lambda: (stats, problems_of(stats)), first=_CHECKED_BEFORE_FORKING)
    results = [check_and_find(i) for i in range(len(keys))] if shared is None else shared[0]
    for their_stats, their_problems in shared[1] if shared is not None else ():
        stats.add(their_stats)
        problems.update(their_problems)
    if holding is not None:
        for _, found, roles in results:
            holding.holds.update(found)
            holding.checked.update(roles)
    return [checked for checked, _, _ in results]
