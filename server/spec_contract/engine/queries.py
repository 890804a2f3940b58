"""One analysis result and the questions front ends ask of it (hover, go to implementation, fixes).

An :class:`Analysis` is immutable once built: the language server can answer requests from the last one
while the next is computed. The status model is imported where a question first needs it: a warm ``check``
asks none (see ``pipeline``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from spec_contract.engine.config import Config
from spec_contract.engine.read.files import SourceFile, decode, read_bytes
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.roles import RoleClass
from spec_contract.engine.results import CallSite, Contract, ContractEntry, Finding, Provider, Span
from spec_contract.engine.stats import Stats
from spec_contract.engine.summarise.deferred import all_classes
from spec_contract.engine.summarise.summary import ModuleSummary

if TYPE_CHECKING:
    from spec_contract.engine.check.analogy import Analogies
    from spec_contract.engine.check.protocols import GatedCapability
    from spec_contract.engine.check.status import ClassStatus


def _contains(span: Span, line: int, col: int) -> bool:
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


@dataclass(frozen=True, eq=False)
class Analysis:
    root: Path
    generation: int
    contract: Contract
    findings: tuple[Finding, ...]
    checked: tuple[ClassKey, ...]  # the registered model classes that were checked
    models: tuple[SourceFile, ...]  # the model files (hover and go-to-implementation look there)
    index: Index
    config: Config
    stats: Stats
    problems: dict[str, str]  # path → why its current text was not used (syntax error, binary, …)
    overlays: dict[str, str]
    relative: Callable[[str], str]
    focus: frozenset[str] | None = None  # set for a focused analysis: only these files' classes were checked
    changed_paths: frozenset[str] | None = None  # files whose text changed since the previous analysis (None: unknown)
    # What the user should know about the whole run (most engine imports unresolved, paths that could not be
    # read), one sentence each: printed by the CLI, shown by the server
    notes: tuple[str, ...] = ()
    unread: dict[str, str] = field(default_factory=dict)  # needed paths that could not be read → why
    # the profile's Protocol capabilities the workers gate (vLLM's SupportsEagle3): the contract's other half
    capabilities: tuple[GatedCapability, ...] = ()
    # implement by analogy (the candidates of this analysis' classes): how a member no inner model has can be
    # provided, for the status model
    analogies: Analogies | None = None
    # the language models no registry names, each with the wrapper that hands it members (``resolve.roles``):
    # checked, and given a status, for those members only
    held: dict[ClassKey, RoleClass] = field(default_factory=dict)

    def findings_for(self, path: str) -> list[Finding]:
        """The findings a view of the file at ``path`` shows: those located there, and each class's own finding
        that a worker line's finding elsewhere gathers (see :func:`in_files`)."""
        return in_files(self.findings, lambda p: p == path)

    def source(self, path: str) -> str | None:
        if path in self.overlays:
            return self.overlays[path]
        return decode(read_bytes(path)).text

    def class_at(self, path: str, line: int, col: int) -> ClassStatus | None:
        """Contract status of the checked class whose name is under the cursor."""
        for key in self.checked + tuple(self.held):
            cls = self.index.class_summary(key)
            if cls is None or self.index.path_of(key.module) != path or not _contains(cls.span, line, col):
                continue
            return self.status_of(key)
        return None

    def status_of(self, key: ClassKey) -> ClassStatus | None:
        """The status model of one class (see ``check.status``): what findings, hover and the reports read."""
        from spec_contract.engine.check.crashes import implementer  # only a front end's question loads the check
        from spec_contract.engine.check.status import class_status
        from spec_contract.engine.check.wrappers import held_sites
        role = self.held.get(key)
        reached = held_sites(self.index, role, self.contract, self.config) if role is not None else None
        if role is not None and reached is None:
            return None  # handed nothing: its wrapper's status says what a run asks of it
        return class_status(self.index, key, self.contract, self.config, self.capabilities, self.relative,
                            implementer(self.analogies, self.config), reached[:2] if reached else None)

    def statuses(self) -> list[ClassStatus]:
        """The status of every checked class, in the order they were checked, then the held language models."""
        return [s for s in (self.status_of(key) for key in self.checked + tuple(self.held)) if s is not None]

    def member_definition_at(self, path: str, line: int, col: int) -> tuple[str, list[ContractEntry]] | None:
        """A contract member's definition in a model class under the cursor, with the contract's uses."""
        wanted = self.contract.members()
        for summary in self._summaries_at(path):
            for cls in all_classes(summary):
                for member in cls.members:
                    if member.name in wanted and _contains(member.span, line, col):
                        entries = [e for e in self.contract.entries if e.member == member.name]
                        return member.name, entries
        return None

    def call_site_at(self, path: str, line: int, col: int) -> CallSite | None:
        for entry in self.contract.entries:
            for site in entry.call_sites:
                if site.path == path and _contains(site.span, line, col):
                    return site
        return None

    def implementers(self, member: str) -> list[Provider]:
        """Every model class (checked, or reached as a base or inner class) that defines ``member``."""
        out: dict[tuple[str, Span], Provider] = {}
        for summary in self._loaded_models():
            for cls in all_classes(summary, mentioning=member):
                for candidate in cls.members:
                    if candidate.name == member:
                        provider = Provider(ClassKey(summary.module, cls.qualname).dotted, summary.path,
                                            candidate.span, candidate.kind)
                        out[(summary.path, candidate.span)] = provider
        return sorted(out.values(), key=lambda p: (p.path, p.span))

    def lacking(self, member: str) -> list[Finding]:
        return [f for f in self.findings if f.member == member]

    def _summaries_at(self, path: str) -> list[ModuleSummary]:
        summaries = [self.index.summary(f.module) for f in self.models if f.path == path]
        return [s for s in summaries if s is not None]

    def _loaded_models(self) -> list[ModuleSummary]:
        """Summaries of every model file, loaded on demand: an incremental analysis only reads what changed,
        so the index of this analysis may not have met a model file yet (loading one is cheap: the project
        keeps summaries of unchanged files)."""
        summaries = [self.index.summary(f.module) for f in self.models]
        return [s for s in summaries if s is not None]


def in_files(findings: Iterable[Finding], shows: Callable[[str], bool]) -> list[Finding]:
    """The findings a view of the files ``shows`` accepts reports: each located in one of them, and, for a worker
    line's finding located elsewhere, the findings of its classes that are (SC011 at the class's own line, which
    names the worker line): a model file checked or opened alone says what the matrix says about its classes."""
    out = []
    for finding in findings:
        if shows(finding.path):
            out.append(finding)
        else:
            out.extend(record for record in finding.records if shows(record.path))
    return out
