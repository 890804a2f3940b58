"""One analysis of a tree, reusing everything of the last one that did not change.

The pipeline lays the tree out (``layout``), summarises what it needs (``summaries``), derives the contract
from the workers, and checks the registered model classes (``registered``) against it (``checking``). It keeps
the contract and each class's findings with the modules they read (``kept``), so an edit re-derives or
re-checks only what read the changed modules; with a cache, these results are saved for the next run
(``results_store``).

A warm run whose saved results are still current derives nothing and checks nothing, so the modules that do
(the checks, the contract's derivation) are imported where they first run, not at the top: importing them
was most of a warm run's start.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from spec_contract.engine.check.analogy import Analogies
from spec_contract.engine.config import Config, ConfigError
from spec_contract.engine.kept import KeptResults
from spec_contract.engine.queries import Analysis
from spec_contract.engine.read.files import SourceFile, relative_to
from spec_contract.engine.read.layout import InstalledEngine, Layout, lay_out
from spec_contract.engine.read.listing import Listings
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.profile_paths import unresolved
from spec_contract.engine.resolve.registered import Registered
from spec_contract.engine.resolve.role_facts import RoleReader
from spec_contract.engine.resolve.roles import HeldModels, Holding, RoleClass
from spec_contract.engine.results import Contract, Finding
from spec_contract.engine.results_store import ResultsStore
from spec_contract.engine.stats import Stats
from spec_contract.engine.summarise.summaries import Summaries
from spec_contract.engine.summarise.summary import ModuleSummary

if TYPE_CHECKING:
    from spec_contract.engine.check.batch import Checked
    from spec_contract.engine.check.protocols import GatedCapability
    from spec_contract.engine.resolve.registry import ModelRegistry

_COLLECT_BELOW = 50_000  # young objects: an edit's analysis makes about 1,000, a cold one on SGLang 360,000


def _unread_note(unread: dict[str, str], relative: Callable[[str], str]) -> str | None:
    if not unread:
        return None
    shown = ", ".join(f"{relative(path)} ({why})" for path, why in sorted(unread.items())[:3])
    more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
    return (f"could not read {len(unread)} path(s) that may hold workers or models: {shown}{more}; "
            "the check is incomplete (exclude them, or make them readable)")


def _nothing_checked_note(config: Config, layout: Layout, focus: frozenset[str] | None,
                          checked: list[ClassKey]) -> str | None:
    """Why a whole analysis checked no class at all: the configuration leaves nothing to check, and an
    all-clear would vouch for nothing (the CLI exits 2 on it)."""
    if checked or focus is not None or layout.unlisted:  # unlisted folders: the unread note says why
        return None
    if not layout.models:
        return (f"no model file matches the 'model-files' globs (profile {config.profile!r}), so no class was "
                "checked; set 'model-files' or 'extend-model-files' in [tool.spec-contract]")
    variable = config.entry_class_variable
    return (f"none of the {len(layout.models)} model file(s) registers a class"
            f"{f' in {variable!r}' if variable else ''}, so no class was checked; check 'model-files' and "
            "'entry-class-variable' in [tool.spec-contract]")


def _empty_contract(config: Config, workers: int, unread: str | None) -> str:
    """Why no worker use reached a role's model object: never an all-clear, always something to set (or, when
    a worker file or folder could not be read, that note: its uses are what is missing)."""
    if unread is not None:
        return f"the contract is empty: {unread}"
    if not workers:
        return (f"no worker files match the profile's 'workers' globs (profile {config.profile!r}); "
                "set 'workers' or 'extend-workers' in [tool.spec-contract]")
    if not config.receivers:
        return ("no receiver patterns are configured, so no worker use reaches a model; a [[receivers]] table "
                "belongs under [tool.spec-contract] (as [[tool.spec-contract.receivers]] in pyproject.toml)")
    return (f"the contract is empty: none of the {workers} worker file(s) uses a member of an object the "
            "receiver patterns name; check 'receivers' in [tool.spec-contract]")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector paused for one analysis: summaries are trees of small objects with no cycles to
    collect, and pausing it while they are built saves a fifth of a cold run.

    After it, what the analysis keeps (summaries, findings) is acyclic and freed by reference counting; moving
    it out of the collector's generations keeps later collections (one per keystroke in the server) from walking
    a large heap again and again. The analysis leaves no cyclic garbage (tests/engine/test_garbage.py), but the
    server's other threads may have while the collector was paused: the young generations are collected first
    unless that would walk a large analysis's every object (0.1-0.25 s after a cold one, before its diagnostics
    are out) for the few a second of the event loop can leave. A caller that paused it already (the CLI, for
    its one run) keeps it paused."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_count()[0] < _COLLECT_BELOW:
                gc.collect(1)
            gc.freeze()
            gc.enable()


class Pipeline:
    def __init__(self, root: Path, config: Config, python: str | None, sources: Sources,
                 store: ResultsStore, listings: Listings | None = None) -> None:
        self.root = root
        self.config = config
        self._sources = sources
        self._store = store
        self._summaries = Summaries(sources, store, config)
        self._registered = Registered(sources, config)
        self._engine = InstalledEngine(root, config, python)
        self._layout: Layout | None = None
        self._listings = listings  # the folders the run listed before (for the first walk only)
        self._read_in_focus: set[str] = set()  # changed files a focused analysis may have summarised since
        self._generation = 0
        self._last: Analysis | None = None
        self._kept = KeptResults(config)
        self._restored = False  # whether the kept results were restored (or looked for) since the last walk
        # the last gated capabilities, with the layout and the modules they were read from
        self._gated_from: tuple[Layout, frozenset[str], tuple[GatedCapability, ...]] | None = None
        self._held = HeldModels()
        self._roles = RoleReader()  # which classes can play which role, read from the engine's code

    def _text(self, path: str) -> str | None:
        return self._sources.text(path)[0]

    def changed(self, path: str, exists: bool | None = None) -> None:
        """``path``'s text changed; ``exists`` (when it may have changed): whether there is a file now. A file
        the last walk did not see, or a seen one that is gone, means walking the tree again."""
        self._last = None
        if exists is not None and self._layout is not None and (path in self._layout.paths) != exists:
            self._layout = None

    def relative(self, path: str) -> str:
        """Paths in messages: relative to the root, or to the engine's root for engine files."""
        engine = self._engine.root
        if engine is not None and path.startswith(str(engine)):
            return relative_to(path, engine.parent)
        return relative_to(path, self.root)

    def analyze(self, focus: frozenset[str] | None) -> Analysis:
        """See ``Project.analyze``."""
        if self._last is not None and focus is None:
            return self._last
        with _collector_paused(), self._sources.reading():  # the next analysis reads the disk again
            try:
                return self._analyze(focus)
            finally:
                self._summaries.forget_scanned()

    def _analyze(self, focus: frozenset[str] | None) -> Analysis:
        started = time.perf_counter()
        stats = Stats()
        if self._layout is None:
            self._kept.forget()
            self._restored = False
            self._layout = lay_out(self.root, self.config, self._sources.overlays, self._engine, self._listings)
            self._listings = None  # a later walk is for files that appeared or went: list the folders again
        layout = self._layout
        stats.files_seen = layout.seen

        def load(source: SourceFile) -> ModuleSummary | None:
            return self._summaries.summary(source, source.path in layout.worker_paths, stats)

        registry, replaced = self._registered.model_registry(layout)
        if replaced:  # every class is checked again
            self._kept.checked = {}
            self._held.kept = None
        index = Index(layout.by_module, layout.packages, load, self.config.registry_candidates,
                      engine=(self.config.engine_package, tuple(w.module for w in layout.workers)),
                      architectures=registry.architectures if registry is not None else None)
        problem = unresolved(self.config, index)
        if problem is not None:
            raise ConfigError(problem)
        changed, changed_paths = self._changes(index, layout, focus)
        # The engine's registry names the classes to check in the engine's own tree; an out-of-tree package
        # registers its models elsewhere, so every class it defines is checked (its inner models still
        # resolve through the installed engine's registry)
        registering = registry if not layout.out_of_tree else None
        contract = self._derive(index, layout, registering, focus, changed)
        registered = self._classes(index, layout, registering, focus)
        roles = self._roles.read(self.config, index, registry, registered, changed, self._sources, whole=focus is None)
        checked = roles.buildable  # a class that is never built plays no role
        self.config = replace(self.config, read_roles=self._kept.update_roles(roles.facts))
        problems: dict[str, str] = {}
        gated = self._gated(index, layout, changed, contract)
        self._kept.update_capabilities(gated)
        # the models of implementations: the model files that register classes (read by their text, so an
        # editor's focused analysis finds the same ones as a whole one)
        analogies = Analogies(index, [(m.path, m.module) for m in layout.models],
                              self._text, self.config.entry_class_variable)
        held = self._check(checked, changed, index, contract, gated, stats, problems, analogies)
        self._kept.unsaved |= self._held.unsaved
        findings = self._kept.reported(checked + list(held), held.keys(), lambda found: self._gathered(found, held))
        self._generation += 1
        if focus is None:
            self._sources.dirty.clear()
            self._read_in_focus.clear()
            if self._store.enabled and not self._sources.overlays and self._unsaved_results():
                self._save(layout)
        problems.update(self._summaries.problems(stats))
        unread = dict(layout.unlisted)
        needed = layout.worker_paths | {m.path for m in layout.models}
        unread.update((path, why) for path, why in self._sources.unreadable().items() if path in needed)
        stats.seconds = time.perf_counter() - started
        analysis = Analysis(
            root=self.root, generation=self._generation, contract=contract,
            findings=findings,
            checked=tuple(checked), models=tuple(layout.models), index=index, config=self.config, stats=stats,
            problems=problems, overlays=dict(self._sources.overlays), relative=self.relative, focus=focus,
            changed_paths=changed_paths, capabilities=gated, analogies=analogies, held=held,
            notes=tuple(filter(None, [self._kept.engine_note, *roles.notes, _unread_note(unread, self.relative),
                                      _nothing_checked_note(self.config, layout, focus, checked)])), unread=unread,
        )
        self._last = analysis if focus is None else None  # a focused one is not the whole answer
        return analysis

    def _gathered(self, found: list[Finding], held: dict[ClassKey, RoleClass]) -> tuple[Finding, ...]:
        """The classes' findings as an analysis reports them (see ``KeptResults.reported``)."""
        from spec_contract.engine.check.crashes import on_worker_lines
        from spec_contract.engine.check.wrappers import without_handed_crashes
        return tuple(sorted(on_worker_lines(without_handed_crashes(found, held), self.relative,
                                            self._kept.worker_lines), key=lambda f: (f.path, f.span, f.member)))

    def _changes(self, index: Index, layout: Layout, focus: frozenset[str] | None
                 ) -> tuple[set[str], frozenset[str] | None]:
        """The modules whose text changed since the results kept (restored from the last run on a new
        layout), and the paths for the analysis to report (None: unknown)."""
        dirty = self._sources.dirty
        touched = [f for f in layout.files if f.path in dirty]
        changed = {f.module for f in touched}
        if focus is None:
            compared = [f for f in touched if f.path not in self._read_in_focus]
            unchanged, moves = self._summaries.unchanged(index, compared)
            for path, first, lines in moves:
                self._kept.move(path, first, lines)
            changed -= unchanged
        else:  # their summaries may be made now, and the whole analysis then has no earlier one to compare with
            self._read_in_focus |= dirty
        changed_paths = frozenset(dirty) if self._restored and self._kept.contract is not None else None
        if not self._restored:
            self._restored = True
            changed |= self._restore(layout)
        return changed, changed_paths

    def _derive(self, index: Index, layout: Layout, registering: ModelRegistry | None,
                focus: frozenset[str] | None, changed: set[str]) -> Contract:
        """The contract, derived again if a file it was derived from changed.

        Files about to be read for the first time are summarised all at once first: the model files whose
        registered classes were never looked at, and the workers when there is no contract to start from.
        The workers come last, so that this process scans them first and derives the contract while the
        others scan models (and parse the registry's classes: ``Registered.listed``)."""
        workers = layout.workers
        ahead = [(m, False) for m in layout.models if (focus is None or m.path in focus)
                 and m.path not in self._registered.known and m.path not in layout.worker_paths]
        listed = {} if registering is None else self._registered.listed(registering, layout, picked=bool(ahead))
        if registering is not None:  # only the registry's modules hold classes to check
            ahead = [(m, worker) for m, worker in ahead if m.module in listed]
        if self._kept.contract is None:
            ahead += [(w, True) for w in workers]
        if not self._summaries.scan_ahead(ahead, layout.out_of_tree,
                                          lambda: self._kept.update_contract(index, layout, changed, self._text), listed):
            self._kept.update_contract(index, layout, changed, self._text)
        derived = self._kept.contract
        assert derived is not None  # made by update_contract
        if not derived[0].entries:
            unread = {**layout.unlisted, **{path: why for path, why in self._sources.unreadable().items()
                                            if path in layout.worker_paths}}
            raise ConfigError(_empty_contract(self.config, len(workers), _unread_note(unread, self.relative)))
        return derived[0]

    def _classes(self, index: Index, layout: Layout, registering: ModelRegistry | None,
                 focus: frozenset[str] | None) -> list[ClassKey]:
        """The model classes to check: the registry's, or those each model file registers."""
        if registering is None:
            return [ClassKey(source.module, qualname)
                    for source in (layout.models if focus is None else [m for m in layout.models if m.path in focus])
                    for qualname in self._registered.registered_in(source, index, layout.out_of_tree)]
        checked = self._registered.registry_classes(registering, index, layout, focus)
        if not registering.registered:
            raise ConfigError(f"the registry files ({', '.join(registering.modules)}) hold none of the tables "
                              f"{', '.join(self.config.registry_tables) or '(none set)'}, so no class would "
                              "be checked; set 'registry-tables' in [tool.spec-contract]")
        return checked

    def _gated(self, index: Index, layout: Layout, changed: set[str], contract: Contract
               ) -> tuple[GatedCapability, ...]:
        """The profile's Protocol capabilities that the workers gate: part of the contract (the ``contract``
        command and hover show them) and what the capability check of each class is measured against. Read
        again only when a module they were read from changed (a keystroke in a model file costs nothing)."""
        if not self.config.capabilities:
            return ()
        if self._gated_from is not None and self._gated_from[0] is layout and not changed & self._gated_from[1]:
            return self._gated_from[2]
        from spec_contract.engine.check.protocols import gated_capabilities
        recorded = index.record()
        recorded.update(w.module for w in layout.workers + layout.callers)  # read for the gates' text and phase
        workers = [s for s in (index.summary(w.module) for w in layout.workers) if s is not None]
        gated = tuple(gated_capabilities(self.config, index, workers, self._text, contract))
        self._gated_from = (layout, index.stop(recorded), gated)
        return gated

    def _check(self, checked: list[ClassKey], changed: set[str], index: Index, contract: Contract,
               gated: tuple[GatedCapability, ...], stats: Stats, problems: dict[str, str],
               analogies: Analogies) -> dict[ClassKey, RoleClass]:
        """Check again the classes never checked and those whose check read a changed module; returns the
        held classes (see ``HeldModels.check``)."""
        def check(keys: list[ClassKey], held: dict[ClassKey, RoleClass], holding: Holding[Checked] | None) -> None:
            stale = self._kept.stale(keys, changed)
            if not stale:
                return
            from spec_contract.engine.check.batch import check_classes
            for key, result in zip(stale, check_classes(
                    stale, index, contract, self.config, gated=gated, registry=self._registered.registry,
                    relative=self.relative, problems_of=self._summaries.problems, stats=stats, problems=problems,
                    analogies=analogies, held=held, holding=holding)):
                self._kept.keep(key, result)

        return self._held.check(index, checked, self.config, contract.members(), changed, check, self._kept.keep)

    # the saved results -----------------------------------------------------------------------------
    def _unsaved_results(self) -> bool:
        return self._kept.unsaved or self._registered.unsaved or self._sources.unsaved or self._roles.unsaved

    def _save(self, layout: Layout) -> None:
        """Keep the contract and each class's findings, with the digests of what they read, for the next run."""
        digests = {m: self._sources.digest(layout.by_module[m].path)
                   for m in self._kept.modules_read() if m in layout.by_module}
        self._store.save(layout.fingerprint, {
            "contract": self._kept.contract, "checked": self._kept.checked, "registered": self._registered.known,
            "dispatched": self._registered.dispatched,
            "digests": digests, "signatures": self._sources.to_save(), "engine_note": self._kept.engine_note,
            "held": self._held.kept, "read_roles": self._kept.read_roles, "roles": self._roles.saved,
            "reported": self._kept.saved_report,
        })
        self._kept.unsaved = self._registered.unsaved = self._roles.unsaved = False

    def _restore(self, layout: Layout) -> set[str]:
        """Start from the last run's results; returns the modules whose text changed since."""
        saved = self._store.restore(layout.fingerprint)
        if not saved:
            return set()
        self._kept.restore(saved)
        self._registered.known = saved["registered"]
        self._registered.dispatched = saved.get("dispatched", {})
        self._held.kept = saved.get("held")
        self._roles.restore(saved.get("roles"))
        self._sources.restore(saved.get("signatures", {}))
        return {m for m, digest in saved["digests"].items()
                if m not in layout.by_module or self._sources.digest(layout.by_module[m].path) != digest}
