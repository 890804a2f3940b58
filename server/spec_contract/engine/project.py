"""One checked tree: its files, their summaries, and analyses that reuse everything that did not change.

This is the engine's front door. The CLI makes a :class:`Project`, calls :meth:`Project.analyze` once and
prints the result; the language server keeps one per workspace folder, feeds it editor buffers
(:meth:`Project.set_overlay`) and file events (:meth:`Project.invalidate`) and re-analyses: only the files
that changed are read and summarised again. A file that stops parsing keeps its last good summary, so
half-typed code never produces spurious findings.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from spec_contract.engine.cache import SummaryCache
from spec_contract.engine.check import check_class, registered_classes
from spec_contract.engine.config import Config, ConfigError
from spec_contract.engine.contract import derive_contract
from spec_contract.engine.files import (
    SourceFile,
    decode,
    discover,
    glob_match,
    read_bytes,
    relative_to,
    source_for,
    text_digest,
)
from spec_contract.engine.parallel import ScanJob, map_forked, processes_for, scan_all
from spec_contract.engine.protocols import GatedCapability, capability_findings, gated_capabilities
from spec_contract.engine.queries import Analysis
from spec_contract.engine.registry import ModelRegistry, build_registry
from spec_contract.engine.resolve import ClassKey, Index
from spec_contract.engine.results import Contract, Finding
from spec_contract.engine.scan import StatementMemo, moved_by, scan
from spec_contract.engine.stats import Stats
from spec_contract.engine.summary import ModuleSummary

_RACY_NS = 2_000_000_000  # a file written this shortly before it was read may change again unseen (see _save)


def _signature(path: str) -> tuple[int, int, int] | None:
    """What changes when a file is written: size, modification time, inode (replaced by an atomic save)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


@dataclass
class _Entry:
    digest: str
    summary: ModuleSummary | None  # None: the file has no usable text (binary, undecodable, too large)
    worker: bool = False  # summarised with the flow records workers need
    problem: str | None = None  # why the current text was not summarised (the previous summary may stay)


@dataclass(frozen=True)
class _Layout:
    """The tree's files sorted for the pipeline; rebuilt only when a file appears or disappears."""

    seen: int  # files in the checked tree itself
    files: list[SourceFile]  # with the installed engine's files for an out-of-tree package
    workers: list[SourceFile]
    models: list[SourceFile]
    out_of_tree: bool
    worker_paths: set[str]
    paths: frozenset[str]  # of ``files``: whether an editor buffer or a file event is for a file seen
    by_module: dict[str, SourceFile]
    packages: frozenset[str]
    fingerprint: str  # which files have which module names: resolution depends on nothing else of the layout
    unlisted: dict[str, str]  # directories the walk could not list → why (they may hold workers or models)


def _engine_note(resolved: int, total: int, package: str) -> str | None:
    """Say so when most of the workers' imports of the engine package name nothing in the tree: the tree is
    then not the engine's package, or not all of it, and wrappers whose inner model is unknown pass."""
    if total < 4 or resolved * 2 >= total:
        return None
    return (f"{total - resolved} of {total} imports of the engine package `{package}` in the worker files name no "
            f"module of the checked tree: the contract and the findings may be incomplete (check the whole "
            f"package, or set `engine_package` to the name its code imports it by)")


def _unread_note(unread: dict[str, str], relative: Callable[[str], str]) -> str | None:
    if not unread:
        return None
    shown = ", ".join(f"{relative(path)} ({why})" for path, why in sorted(unread.items())[:3])
    more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
    return (f"could not read {len(unread)} path(s) that may hold workers or models: {shown}{more}; "
            "the check is incomplete (exclude them, or make them readable)")


def _empty_contract(config: Config, workers: int) -> str:
    """Why no worker use reached a role's model object: never an all-clear, always something to set."""
    if not workers:
        return (f"no worker files match the profile's 'workers' globs (profile {config.profile!r}); "
                "set 'workers' or 'extend-workers' in [tool.spec-contract]")
    if not config.receivers:
        return ("no receiver patterns are configured, so no worker use reaches a model; a [[receivers]] table "
                "belongs under [tool.spec-contract] (as [[tool.spec-contract.receivers]] in pyproject.toml)")
    return (f"the contract is empty: none of the {workers} worker file(s) uses a member of an object the "
            "receiver patterns name; check 'receivers' in [tool.spec-contract]")


class Project:
    def __init__(self, root: Path | str, config: Config, *, python: str | None = None, use_cache: bool = True,
                 cache_dir: Path | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.python = python
        self._cache = SummaryCache(cache_dir) if use_cache else None
        self._overlays: dict[str, str] = {}
        self._memos: dict[str, StatementMemo] = {}  # per editor buffer: its statements, parsed once each
        self._scanned: dict[str, ModuleSummary] = {}  # made ahead by parallel scanning, until asked for
        self._layout: _Layout | None = None
        self._engine_files: list[SourceFile] | None = None
        self._engine_root: Path | None = None
        self._entries: dict[str, _Entry] = {}
        self._dirty: set[str] = set()
        self._read_in_focus: set[str] = set()  # changed files a focused analysis may have summarised since
        self._generation = 0
        self._last: Analysis | None = None
        # Incremental state: the contract and each checked class's findings, with the modules they read.
        self._contract: tuple[Contract, frozenset[str]] | None = None
        self._engine_note: str | None = None  # made with the contract: the workers' engine imports unresolved
        self._checked: dict[ClassKey, tuple[list[Finding], frozenset[str]]] = {}
        self._registered: dict[str, tuple[str, tuple[str, ...]]] = {}  # model path → (digest, checked classes)
        self._registry: ModelRegistry | None = None  # the engine's model registry, when the profile reads one
        self._digests: dict[str, str] = {}  # path → digest of the text last read, until the path is touched
        # Files read by the running analysis (None between analyses: an editor query reads the disk afresh
        # and changes no state).
        self._reads: dict[str, tuple[str | None, str, str | None]] | None = None
        # path → (os.stat signature, digest) from the saved results: an unchanged signature saves reading
        # and hashing the file again (as git's index does), so a warm run reads almost nothing.
        self._signatures: dict[str, tuple[tuple[int, int, int], str]] = {}
        # path → (signature, when it was taken) of files hashed in this process, for the next save
        self._hashed: dict[str, tuple[tuple[int, int, int], int]] = {}
        self._unsaved = False  # results computed (or files hashed) since the last save or restore
        self._restored = False

    # inputs ----------------------------------------------------------------------------------------
    def set_overlay(self, path: str, text: str) -> None:
        # A byte order mark is not Python (``ast.parse`` rejects U+FEFF): drop it, as reading the file does
        # (``files.decode``), so a buffer and the file it was opened from are analysed alike.
        text = text.removeprefix("\ufeff")
        if self._overlays.get(path) != text:
            self._overlays[path] = text
            self._touch(path)
            if self._layout is not None and path not in self._layout.paths:
                self._layout = None  # a buffer for a file the last walk did not see

    def clear_overlay(self, path: str) -> None:
        if self._overlays.pop(path, None) is not None:
            self._memos.pop(path, None)
            self._touch(path)

    def invalidate(self, path: str) -> None:
        """The file at ``path`` changed on disk, appeared or disappeared."""
        self._touch(path)
        if self._layout is not None and path.endswith(".py"):
            known = path in self._layout.paths
            if known != os.path.isfile(path):
                self._layout = None  # a file was created or deleted: walk again

    def _touch(self, path: str) -> None:
        self._dirty.add(path)
        self._digests.pop(path, None)
        self._signatures.pop(path, None)
        self._hashed.pop(path, None)
        self._last = None

    # the pipeline ----------------------------------------------------------------------------------
    def analyze(self, focus: Iterable[str] | None = None) -> Analysis:
        """The analysis of the whole tree; with ``focus``, only the model classes of those files are checked.

        A focused analysis answers first for the files an editor has open (the contract is complete either
        way, and the findings of a focused file are the ones the whole analysis will report); it leaves the
        inputs marked as changed, so the next whole analysis still does all the work it has to.
        """
        if self._last is not None and focus is None:
            return self._last
        # Summaries are trees of small objects with no cycles to collect; pausing the cyclic collector
        # while they are built saves a fifth of a cold run.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._analyze(frozenset(focus) if focus is not None else None)
        finally:
            if collecting:
                # What the analysis keeps (summaries, findings) is acyclic and freed by reference counting;
                # moving it out of the collector's generations keeps later collections (one per keystroke in
                # the server) from walking a large heap again and again. The young generations are collected
                # first, so no cyclic garbage of this run is frozen with it.
                gc.collect(1)
                gc.freeze()
                gc.enable()

    def _analyze(self, focus: frozenset[str] | None) -> Analysis:
        self._reads = {}
        try:
            return self._analyze_once(focus)
        finally:
            self._reads = None  # the next analysis reads the disk again
            self._scanned = {}  # made for this analysis: a summary nobody asked for is not kept

    def _analyze_once(self, focus: frozenset[str] | None) -> Analysis:
        started = time.perf_counter()
        stats = Stats()
        if self._layout is None:
            self._contract, self._checked = None, {}  # the file set changed: names may resolve differently
            self._restored = False
            self._layout = self._lay_out()
        layout = self._layout
        stats.files_seen = layout.seen
        files, workers, models, out_of_tree = layout.files, layout.workers, layout.models, layout.out_of_tree

        def load(source: SourceFile) -> ModuleSummary | None:
            return self._summary(source, source.path in layout.worker_paths, stats)

        registry = self._model_registry(layout)
        index = Index(layout.by_module, layout.packages, load, self.config.registry_candidates,
                      engine=(self.config.engine_package, tuple(w.module for w in workers)),
                      architectures=registry.architectures if registry is not None else None)
        touched = [f for f in files if f.path in self._dirty]
        changed = {f.module for f in touched}
        if focus is None:
            changed -= self._unchanged_summaries(index, [f for f in touched if f.path not in self._read_in_focus])
        else:  # their summaries may be made now, and the whole analysis then has no earlier one to compare with
            self._read_in_focus |= self._dirty
        changed_paths = frozenset(self._dirty) if self._restored and self._contract is not None else None
        if not self._restored:
            self._restored = True
            changed |= self._restore(layout)
        # Files about to be read for the first time, all at once: the model files whose registered classes
        # were never looked at, and the workers when there is no contract to start from. The workers come
        # last, so that this process scans them first and derives the contract while the others scan models.
        ahead = [(m, False) for m in models if (focus is None or m.path in focus)
                 and m.path not in self._registered and m.path not in layout.worker_paths]
        # The engine's registry names the classes to check in the engine's own tree; an out-of-tree package
        # registers its models elsewhere, so every class it defines is checked (its inner models still
        # resolve through the installed engine's registry)
        registers = registry is not None and not out_of_tree
        if registers:  # only the registry's modules hold classes to check
            listed = {module for module, _ in registry.registered}
            ahead = [(m, worker) for m, worker in ahead if m.module in listed]
        if self._contract is None:
            ahead += [(w, True) for w in workers]
        if not self._scan_ahead(ahead, out_of_tree, then=lambda: self._update_contract(index, workers, changed)):
            self._update_contract(index, workers, changed)
        contract = self._contract[0]
        if not contract.entries:
            raise ConfigError(_empty_contract(self.config, len(workers)))
        if registers:
            checked = self._registry_classes(registry, index, layout, focus)
            if not registry.registered:
                raise ConfigError(f"the registry files ({', '.join(registry.modules)}) hold none of the tables "
                                  f"{', '.join(self.config.registry_tables) or '(none set)'}, so no class would "
                                  "be checked; set 'registry-tables' in [tool.spec-contract]")
        else:
            checked = [ClassKey(source.module, qualname)
                       for source in (models if focus is None else [m for m in models if m.path in focus])
                       for qualname in self._registered_in(source, index, out_of_tree)]
        stale = [key for key in checked if key not in self._checked or self._checked[key][1] & changed]
        problems: dict[str, str] = {}
        for key, result in zip(stale, self._check_all(stale, index, contract, stats, problems)):
            self._checked[key] = result
            self._unsaved = True
        findings = [finding for key in checked for finding in self._checked[key][0]]
        self._generation += 1
        if focus is None:
            self._dirty.clear()
            self._read_in_focus.clear()
            if self._cache is not None and not self._overlays and self._unsaved:
                self._save(layout)
        problems.update(self._problems(stats))
        unread = self._unread(layout)
        stats.seconds = time.perf_counter() - started
        self._last = Analysis(
            root=self.root, generation=self._generation, contract=contract,
            findings=tuple(sorted(findings, key=lambda f: (f.path, f.span, f.member))),
            checked=tuple(checked), models=tuple(models), index=index, config=self.config, stats=stats,
            problems=problems, overlays=dict(self._overlays), relative=self.relative, focus=focus, changed_paths=changed_paths,
            notes=tuple(filter(None, [self._engine_note, _unread_note(unread, self.relative)])), unread=unread,
        )
        result = self._last
        if focus is not None:
            self._last = None  # not the whole answer: the next analyze() computes it
        return result

    def _unchanged_summaries(self, index: Index, touched: list[SourceFile]) -> set[str]:
        """Modules whose text changed but whose summary did not: what depends on them needs no new answer.

        Most keystrokes in an editor (inside a method body, a comment, a string) change no member, delegate,
        import or position a summary holds; the contract and every finding stay as they are, and the analysis
        only re-reads the file. Only files summarised before are compared (a file read for the first time has
        nothing to compare with, and may not be needed at all).
        """
        unchanged = set()
        for source in touched:
            before = self._entries.get(source.path)
            if before is None or before.summary is None or before.problem:
                continue
            after = index.summary(source.module)
            if after is None:
                continue
            after = replace(after, digest=before.summary.digest)
            if after == before.summary:
                unchanged.add(source.module)
            elif (moved := moved_by(before.summary, after)) is not None:  # a line added or removed above
                self._move_results(source.path, *moved)
                unchanged.add(source.module)
        return unchanged

    def _move_results(self, path: str, first: int, lines: int) -> None:
        """Move the positions in ``path`` that the kept findings hold (their class, their provider), as
        ``moved_by`` found the file's summary moved. A model file's lines appear in no message: only the
        workers' call sites are quoted there, and a worker's summary (with flow records) is never moved."""
        for key, (found, read) in self._checked.items():
            if any(f.path == path or f.provider.path == path for f in found):
                self._checked[key] = ([replace(f, span=f.span.moved(first, lines) if f.path == path else f.span,
                                               provider=replace(f.provider, span=f.provider.span.moved(first, lines))
                                               if f.provider.path == path else f.provider) for f in found], read)
                self._unsaved = True

    def _check_all(self, keys: list[ClassKey], index: Index, contract: Contract, stats: Stats,
                   problems: dict[str, str]) -> list[tuple[list[Finding], frozenset[str]]]:
        """Each class's findings, with the modules its check read; shared with forked processes when there
        are many (a cold run), whose problems and stats are added to ``problems`` and ``stats``."""

        gated = self._gated_capabilities(index) if keys and self.config.capabilities else []

        def check(i: int) -> tuple[list[Finding], frozenset[str]]:
            recorded = index.record()
            recorded.add(keys[i].module)
            if self._registry is not None:  # what the class's inner models are depends on the registry's text
                recorded.update(self._registry.modules)
            found = check_class(index, keys[i], contract, self.config, self.relative)
            if gated:
                found = capability_findings(index, keys[i], self.config, gated, found, self.relative)
            return found, index.stop(recorded)

        shared = map_forked(len(keys), check, processes_for(len(keys), "classes"),
                            report=lambda: (stats, self._problems(stats)))
        if shared is None:
            return [check(i) for i in range(len(keys))]
        results, reports = shared
        for their_stats, their_problems in reports:
            stats.add(their_stats)
            problems.update(their_problems)
        return results

    def _gated_capabilities(self, index: Index) -> list[GatedCapability]:
        """The profile's Protocol capabilities that the workers gate (see ``engine.protocols``)."""
        workers = [s for s in (index.summary(w.module) for w in self._layout.workers) if s is not None]
        return gated_capabilities(self.config, index, workers, lambda path: self._text(path)[0])

    def _problems(self, stats: Stats) -> dict[str, str]:
        """Files that could not be read or parsed, among those read so far, with why."""
        problems = {p: e.problem for p, e in self._entries.items() if e.problem}
        for path, entry in self._entries.items():  # a class statement parsed on demand that did not parse
            error = entry.summary.deferred_error() if entry.summary is not None and not entry.problem else None
            if error:
                problems[path] = error
                stats.skipped[path] = "syntax-error"
        return problems

    def _update_contract(self, index: Index, workers: list[SourceFile], changed: set[str]) -> None:
        """Derive the contract again if there is none yet or a file it was derived from changed."""
        if self._contract is None or changed & self._contract[1]:
            recorded = index.record()
            worker_summaries = [s for s in (index.summary(f.module) for f in workers) if s is not None]
            contract = derive_contract(worker_summaries, index, self.config)
            modules = index.stop(recorded)
            self._engine_note = _engine_note(*index.engine_imports(worker_summaries), self.config.engine_package)
            self._unsaved = True
            if self._contract is None or contract != self._contract[0]:
                self._checked = {}  # every class is checked against the contract: check them all again
            self._contract = (contract, modules)

    def _unread(self, layout: _Layout) -> dict[str, str]:
        """What this analysis needed and could not read: directories the walk could not list, and worker or
        model files that could not be opened (a file that is binary or not a regular file was read, and is
        only skipped)."""
        unread = dict(layout.unlisted)
        needed = layout.worker_paths | {m.path for m in layout.models}
        for path, (_, _, problem) in (self._reads or {}).items():
            if problem == "unreadable" and path in needed:
                unread[path] = "cannot be read"
        return unread

    def _lay_out(self) -> _Layout:
        """Walk the tree and sort its files into workers and models (done again only when files come or go)."""
        unlisted: dict[str, str] = {}
        files = discover(self.root, self.config.include, self.config.exclude, unlisted)
        seen = {f.path for f in files}
        for path in self._overlays:  # unsaved new files the walk cannot see yet
            if path.endswith(".py") and path not in seen and Path(path).is_relative_to(self.root):
                files.append(source_for(path, self.root, files))
        count = len(files)
        workers = [f for f in files if glob_match(f.rel, self.config.workers)]
        models = [f for f in files if glob_match(f.rel, self.config.model_files)]
        out_of_tree = not workers
        if out_of_tree:
            engine_files = self._engine()
            workers = [f for f in engine_files if glob_match(f.rel, self.config.workers)]
            models = files  # an out-of-tree package: every class it defines may be a model
            own = {g.module for g in files}
            files = files + [f for f in engine_files if f.module not in own]
        by_module = {f.module: f for f in files}
        packages: set[str] = set()
        for module in by_module:  # every dotted prefix: walk up until a parent was seen already
            parent = module.rpartition(".")[0]
            while parent and parent not in packages:
                packages.add(parent)
                parent = parent.rpartition(".")[0]
        fingerprint = text_digest("\n".join(f"{f.path}\0{f.module}" for f in files))
        return _Layout(count, files, workers, models, out_of_tree, {f.path for f in workers},
                       frozenset(f.path for f in files), by_module, frozenset(packages), fingerprint, unlisted)

    def relative(self, path: str) -> str:
        """Paths in messages: relative to the root, or to the engine's root for engine files."""
        if self._engine_root is not None and path.startswith(str(self._engine_root)):
            return relative_to(path, self._engine_root.parent)
        return relative_to(path, self.root)

    def _engine(self) -> list[SourceFile]:
        if self._engine_files is None:
            from spec_contract.engine.environment import locate_engine

            self._engine_root = locate_engine(self.python, self.config.engine_package)
            if self._engine_root is None:
                raise ConfigError(
                    f"{self.root} has no worker files (profile {self.config.profile!r}) and no installed "
                    f"{self.config.engine_package!r} package was found for {self.python or sys.executable}; "
                    "pass --python with the interpreter where the engine is installed")
            self._engine_files = discover(self._engine_root, (), self.config.exclude) if self._engine_root else []
        return self._engine_files

    def _text(self, path: str) -> tuple[str | None, str, str | None]:
        """Text, digest and problem of what the analysis reads for ``path``: the editor buffer or the file.

        During an analysis a file is read once, however many steps ask (the registry filter, the summary,
        the digest that validates saved results), and its digest and signature are recorded.
        """
        if path in self._overlays:
            text = self._overlays[path]
            return text, text_digest(text), None
        if self._reads is None:
            result = decode(read_bytes(path))
            return result.text, result.digest, result.problem
        read = self._reads.get(path)
        if read is None:
            read_at = time.time_ns()
            signature = _signature(path)
            result = decode(read_bytes(path))
            read = self._reads[path] = (result.text, result.digest, result.problem)
            self._digests[path] = result.digest
            self._unsaved = True
            if signature is not None and signature == _signature(path):  # not written to while read
                self._hashed[path] = (signature, read_at)
        return read

    def _digest(self, path: str) -> str:
        """Digest of the text the analysis would read now (the editor buffer or the disk)."""
        if path not in self._digests:
            if path in self._overlays:
                self._digests[path] = text_digest(self._overlays[path])
            elif (known := self._signatures.get(path)) is not None and known[0] == _signature(path):
                self._digests[path] = known[1]
            else:
                self._digests[path] = self._text(path)[1]
        return self._digests[path]

    def _model_registry(self, layout: _Layout) -> ModelRegistry | None:
        """The engine's model registry when the profile reads one (``registry-files``) and the tree has it;
        read again only when a registry file's text changed, and then every class is checked again (what
        an architecture name builds, and which classes are registered, may have changed)."""
        if not self.config.registry_files:
            return None
        sources = [f for f in layout.files if glob_match(f.rel, self.config.registry_files)]
        if not sources:
            return None
        texts = [(f.module, self._text(f.path)[0] or "") for f in sources]
        digest = text_digest("\0".join(f"{module}\0{self._digest(f.path)}" for (module, _), f in zip(texts, sources)))
        if self._registry is None or self._registry.digest != digest:
            if self._registry is not None:
                self._checked = {}
            self._registry = build_registry(texts, self.config.registry_tables, self.config.engine_package, digest)
        return self._registry

    def _registry_classes(self, registry: ModelRegistry, index: Index, layout: _Layout,
                          focus: frozenset[str] | None) -> list[ClassKey]:
        """The registered classes, where they are defined: a registry entry may name a package that picks
        its class per platform and re-exports it (then each platform's class is checked)."""
        wanted: dict[str, list[str]] = {}
        for module, name in registry.registered:
            wanted.setdefault(module, []).append(name)
        found: dict[ClassKey, None] = {}
        for module, names in wanted.items():
            source = layout.by_module.get(index.engine_module(module))
            if source is None:
                continue
            module = source.module
            digest = self._digest(source.path) + registry.digest
            known = self._registered.get(source.path)
            if known is None or known[0] != digest:
                summary = index.summary(module)
                own = tuple(n for n in names if summary is not None and summary.has_class(n))
                known = self._registered[source.path] = (digest, own)
                self._unsaved = True
            keys = [ClassKey(module, n) for n in known[1]]
            keys += [k for n in names if n not in known[1] for k in index.platform_choices(module, n)]
            for key in keys:
                if focus is None or index.path_of(key.module) in focus:
                    found[key] = None
        return list(found)

    def _registered_in(self, source: SourceFile, index: Index, out_of_tree: bool) -> tuple[str, ...]:
        """The classes a model file registers, remembered by digest so an unchanged file is not parsed."""
        digest = self._digest(source.path)
        known = self._registered.get(source.path)
        if known is not None and known[0] == digest:
            return known[1]
        entry_variable = self.config.entry_class_variable
        names: tuple[str, ...] = ()
        text = self._text(source.path)[0]
        # A cheap text filter first: no registry entry, no registered model (a file without text goes on,
        # for its problem to be reported).
        if out_of_tree or not entry_variable or text is None or entry_variable in text:
            summary = index.summary(source.module)
            if summary is not None:
                entry = summary.entry_classes
                variable = entry_variable if (entry is not None or not out_of_tree) else None
                candidates = summary.all_classes() if variable is None else summary.top_level_classes(entry or ())
                # a class defined twice is one class (its last definition, see ModuleSummary.find_class)
                names = tuple(dict.fromkeys(c.qualname for c in registered_classes(candidates, entry, variable)))
        self._registered[source.path] = (digest, names)
        self._unsaved = True
        return names

    # the persistent results ------------------------------------------------------------------------
    def _results_key(self, layout: _Layout) -> str:
        config = json.dumps(asdict(self.config), sort_keys=True, default=sorted)  # sets sorted: stable across runs
        return text_digest(f"{self.root}\0{config}\0{layout.fingerprint}")

    def _save(self, layout: _Layout) -> None:
        """Keep the contract and each class's findings, with the digests of what they read, for the next run."""
        modules = set(self._contract[1]) if self._contract else set()
        for _, read in self._checked.values():
            modules |= read
        digests = {m: self._digest(layout.by_module[m].path) for m in modules if m in layout.by_module}
        # A file written shortly before it was read may be written again within its timestamp's granularity
        # (a few ms here, seconds on some filesystems) without a new signature: hash it again next time rather
        # than trust its signature (git's "racy" entries).
        for path, (signature, read_at) in self._hashed.items():
            # (A file that could not be read is tried again each run: a chmod changes no signature.)
            if signature[1] < read_at - _RACY_NS and self._digests.get(path):
                self._signatures[path] = (signature, self._digests[path])
        self._hashed = {}
        self._cache.put_results(self._results_key(layout), {
            "contract": self._contract, "checked": self._checked, "registered": self._registered,
            "digests": digests, "signatures": self._signatures, "engine_note": self._engine_note,
        })
        self._unsaved = False

    def _restore(self, layout: _Layout) -> set[str]:
        """Start from the last run's results; returns the modules whose text changed since."""
        saved = self._cache.get_results(self._results_key(layout)) if self._cache is not None else None
        if not saved:
            return set()
        self._contract, self._checked, self._registered = saved["contract"], saved["checked"], saved["registered"]
        self._signatures = saved.get("signatures", {})
        self._engine_note = saved.get("engine_note")
        return {m for m, digest in saved["digests"].items()
                if m not in layout.by_module or self._digest(layout.by_module[m].path) != digest}

    def _summary_key(self, path: str, digest: str, worker: bool) -> str:
        package = "p" if path.endswith("__init__.py") else "f"  # relative imports read differently in a package
        return f"{digest}-{'w' if worker else 'm'}{package}-{self.config.entry_class_variable}"

    def _scan_ahead(self, sources: list[tuple[SourceFile, bool]], out_of_tree: bool,
                    then: Callable[[], None]) -> bool:
        """Summarise at once, on all cores, the files a cold analysis is sure to read (see ``parallel``);
        ``then`` runs as soon as every worker file among them is summarised, while the other processes go
        on. Returns whether it ran.

        Model files without the registry variable are left out (the cheap filter of ``_registered_in``), and
        so are files already summarised, open in an editor or in the summary cache.
        """
        entry = self.config.entry_class_variable
        jobs = []
        for source, worker in sources:
            path = source.path
            if path in self._entries or path in self._overlays:
                continue
            text, digest, _ = self._text(path)
            if text is None or (not worker and not out_of_tree and entry and entry not in text):
                continue
            if self._cache is not None and self._cache.has(self._summary_key(path, digest, worker)):
                continue
            jobs.append(ScanJob(path, source.module, digest, text, worker, entry))
        processes = processes_for(len(jobs))
        if processes <= 1:  # each file is scanned when first asked for, as on warm runs
            return False
        waiting, ran = sum(job.worker for job in jobs), False
        for job, summary in scan_all(jobs, processes):
            self._scanned[job.path] = summary
            if job.worker:
                waiting -= 1
                if not waiting:
                    then()
                    ran = True
        return ran

    def _summary(self, source: SourceFile, worker: bool, stats: Stats) -> ModuleSummary | None:
        path = source.path
        previous = self._entries.get(path)
        reusable = previous is not None and previous.summary is not None and (previous.worker or not worker)
        if reusable and path not in self._dirty:
            return previous.summary
        text, digest, problem = self._text(path)
        if text is None:
            stats.skipped[path] = problem or "unreadable"
            self._entries[path] = _Entry(digest, None, worker, problem)
            return None
        if reusable and previous.digest == digest and not previous.problem:
            return previous.summary
        key = self._summary_key(path, digest, worker)
        scanned = self._scanned.pop(path, None)
        summary = self._cache.get(key) if self._cache and scanned is None else None
        if summary is not None:
            stats.from_cache.add(path)
            summary = summary.moved(path, source.module)
        else:
            memo = self._memos.setdefault(path, StatementMemo()) if path in self._overlays else None
            summary = scanned if scanned is not None and scanned.digest == digest and scanned.module == source.module \
                else scan(path, source.module, digest, text, worker=worker,
                          entry_variable=self.config.entry_class_variable, memo=memo)
            stats.parsed.add(path)
            if self._cache is not None and summary.error is None and path not in self._overlays:
                self._cache.put(key, summary)  # not editor buffers: no disk write per keystroke
        if summary.error is not None:
            stats.skipped[path] = "syntax-error"
            if previous is not None and previous.summary is not None:  # keep the last good one
                self._entries[path] = _Entry(previous.digest, previous.summary, previous.worker, summary.error)
                return previous.summary
            self._entries[path] = _Entry(digest, summary, worker, summary.error)
            return summary
        self._entries[path] = _Entry(digest, summary, worker)
        return summary
