"""What the analyses concluded, kept between them: the contract and each checked class's findings, each with
the modules it read, so that an edit re-derives or re-checks only what read a changed module. A run saves
them with its results and the next run starts from them (``results_store``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from operator import is_
from typing import TYPE_CHECKING, Any

from spec_contract.engine.config import Config, RoleFacts
from spec_contract.engine.read.files import glob_match
from spec_contract.engine.read.layout import Layout
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import Contract, Finding

if TYPE_CHECKING:
    from spec_contract.engine.check.batch import Checked
    from spec_contract.engine.check.crashes import WorkerLines
    from spec_contract.engine.check.protocols import GatedCapability


def _engine_note(resolved: int, total: int, package: str) -> str | None:
    """Say so when most of the workers' imports of the engine package name nothing in the tree: the tree is
    then not the engine's package, or not all of it, and wrappers whose inner model is unknown pass."""
    if total < 4 or resolved * 2 >= total:
        return None
    return (f"{total - resolved} of {total} imports of the engine package `{package}` in the worker files name no "
            f"module of the checked tree: the contract and the findings may be incomplete (check the whole "
            f"package, or set `engine_package` to the name its code imports it by)")


class KeptResults:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.contract: tuple[Contract, frozenset[str]] | None = None
        self.engine_note: str | None = None  # made with the contract: the workers' engine imports unresolved
        self.checked: dict[ClassKey, Checked] = {}
        # the Protocol capabilities the last analysis checked against (None: none yet, or restored results)
        self.capabilities: tuple[GatedCapability, ...] | None = None
        self.unsaved = False  # concluded since the last save
        # the last findings ``reported`` made: from which classes (and held ones), which kept results, and them
        self._reported: tuple[list[ClassKey], frozenset[ClassKey], list[Checked], tuple[Finding, ...]] | None = None
        self.worker_lines: WorkerLines = {}  # the worker lines' findings ``reported`` made last (see on_worker_lines)
        # the roles read from the engine's code, as the kept findings were checked with them
        self.read_roles: RoleFacts | None = None

    def forget(self) -> None:
        """The file set changed: names may resolve differently."""
        self.contract, self.checked = None, {}

    def update_contract(self, index: Index, layout: Layout, changed: set[str],
                        text_of: Callable[[str], str | None]) -> None:
        """Derive the contract again if there is none yet or a file it was derived from changed (a worker, a
        file of the profile's ``start-up-callers``, or one the release's algorithms were read from: ``text_of``
        reads those)."""
        if self.contract is None or changed & self.contract[1]:
            # imported here: a warm run that derives nothing never loads the derivation (see ``pipeline``)
            from spec_contract.engine.contract import derive_contract
            from spec_contract.engine.resolve.algorithms import names_paths, read_algorithms
            from spec_contract.engine.resolve.runner_default import default_modules, read_default
            from spec_contract.engine.resolve.runners import read_runners, refusal_modules
            recorded = index.record()
            worker_summaries = [s for s in (index.summary(f.module) for f in layout.workers) if s is not None]
            callers = [s for s in (index.summary(f.module) for f in layout.callers) if s is not None]
            options = [f for f in layout.files if glob_match(f.rel, self.config.algorithm_option_files)]
            places = names_paths(self.config, index, worker_summaries, text_of)
            recorded.update(f.module for f in options)
            recorded.update(index.engine_module(name.rpartition(".")[0]) for name in self.config.algorithm_names)
            recorded.update(refusal_modules(self.config, index))
            recorded.update(default_modules(self.config, index))
            algorithms = read_algorithms(self.config, places, text_of, [f.path for f in options])
            contract = replace(derive_contract(worker_summaries, index, self.config, callers, algorithms,
                                               read_runners(self.config, index, text_of)),
                               runner_default=read_default(self.config, index, text_of))
            modules = index.stop(recorded)
            self.engine_note = _engine_note(*index.engine_imports(worker_summaries), self.config.engine_package)
            self.unsaved = True
            if self.contract is None or contract != self.contract[0]:
                self.checked = {}  # every class is checked against the contract: check them all again
            self.contract = (contract, modules)

    def update_capabilities(self, gated: tuple[GatedCapability, ...]) -> None:
        """Every class's capability findings cite the gates and the proposers' reads: when those change (a gate
        line moved, a Protocol's defaults changed), every class is checked again, as for a new contract."""
        if self.capabilities is not None and gated != self.capabilities:
            self.checked = {}
        self.capabilities = gated

    def update_roles(self, facts: RoleFacts) -> RoleFacts:
        """The roles read from the code decide which contract uses each class is checked against: when they
        change, every class is checked again. Returns the facts."""
        if self.read_roles is not None and facts != self.read_roles:
            self.checked = {}
        if facts != self.read_roles:
            self.unsaved = True
        self.read_roles = facts
        return facts

    def stale(self, keys: list[ClassKey], changed: set[str]) -> list[ClassKey]:
        """The classes never checked, and those whose check read a changed module."""
        return [key for key in keys if key not in self.checked or self.checked[key][1] & changed]

    def keep(self, key: ClassKey, result: Checked) -> None:
        self.checked[key] = result
        self.unsaved = True

    def reported(self, keys: list[ClassKey], held: Collection[ClassKey],
                 gather: Callable[[list[Finding]], tuple[Finding, ...]]) -> tuple[Finding, ...]:
        """The findings of the classes ``keys`` as an analysis reports them: ``gather`` of their kept findings
        (one finding per worker line, sorted: a pure function of them and of which classes are ``held``), made
        again only when a class's kept result changed. Every change replaces a class's result (``keep``,
        ``move``, ``forget``, ``restore``), so the same result objects mean the same findings; an edit that
        re-checks no class (a comment, most keystrokes) then costs no pass over every finding (SGLang 0.5.23:
        about 900, a third of such an edit's analysis)."""
        results = [self.checked[key] for key in keys]
        holding = frozenset(held)
        last = self._reported
        if last is not None and last[0] == keys and last[1] == holding and len(last[2]) == len(results) \
                and all(map(is_, last[2], results)):
            return last[3]
        found = gather([finding for result in results for finding in result[0]])
        self._reported = (keys, holding, results, found)
        return found

    def move(self, path: str, first: int, lines: int) -> None:
        """Move the positions in ``path`` that the kept findings hold (their class, their provider), as
        ``moved_by`` found the file's summary moved. A model file's lines appear in no message: only the
        workers' call sites are quoted there, and a worker's summary (with flow records) is never moved."""
        for key, (found, read) in self.checked.items():
            if any(f.path == path or f.provider.path == path for f in found):
                self.checked[key] = ([replace(f, span=f.span.moved(first, lines) if f.path == path else f.span,
                                              provider=replace(f.provider, span=f.provider.span.moved(first, lines))
                                              if f.provider.path == path else f.provider) for f in found], read)
                self.unsaved = True

    def modules_read(self) -> set[str]:
        """The modules the contract and the kept findings were made from: their digests are saved with them."""
        modules = set(self.contract[1]) if self.contract else set()
        for _, read in self.checked.values():
            modules |= read
        return modules

    @property
    def saved_report(self) -> tuple[list[ClassKey], frozenset[ClassKey], list[Checked], tuple[Finding, ...]] | None:
        """What ``reported`` made last, saved with the results it was made from: pickled with them in one piece,
        its results are the very objects ``checked`` restores to, so the next run that re-checks no class
        reports them as they are (gathering SGLang 0.5.23's 480 worker-line records costs a warm run 4 ms)."""
        return self._reported

    def restore(self, saved: dict[str, Any]) -> None:
        self.contract, self.checked = saved["contract"], saved["checked"]
        self._reported = saved.get("reported")
        self.engine_note = saved.get("engine_note")
        self.read_roles = saved.get("read_roles")
