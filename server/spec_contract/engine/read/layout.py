"""The tree's files sorted for the pipeline: workers, model files, module names; walked again only when a file
appears or disappears.

A tree without worker files is an out-of-tree package of models: its workers (the contract) come from the
engine installed for ``--python`` (:class:`InstalledEngine`), whose files join the layout.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from spec_contract.engine.config import Config, ConfigError
from spec_contract.engine.read.discovery import is_project
from spec_contract.engine.read.environment import locate_engine
from spec_contract.engine.read.files import SourceFile, discover, glob_match, source_for, text_digest
from spec_contract.engine.read.listing import Listings


@dataclass(frozen=True)
class Layout:
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
    # the profile's ``start-up-callers``: read as workers are (their functions' calls), for no use of their own
    callers: list[SourceFile] = field(default_factory=list)


class InstalledEngine:
    """The engine installed for ``python``, read as source (never imported); located when first needed."""

    def __init__(self, checked: Path, config: Config, python: str | None) -> None:
        self.checked = checked
        self.config = config
        self.python = python
        self.root: Path | None = None
        self._files: list[SourceFile] | None = None

    def files(self) -> list[SourceFile]:
        if self._files is None:
            self.root = locate_engine(self.python, self.config.engine_package)
            if self.root is None:
                raise ConfigError(
                    f"{self.checked} has no worker files (profile {self.config.profile!r}) and no installed "
                    f"{self.config.engine_package!r} package was found for {self.python or sys.executable}; "
                    "pass --python with the interpreter where the engine is installed")
            self._files = discover(self.root, (), self.config.exclude)
        return self._files


def lay_out(root: Path, config: Config, overlays: Iterable[str], engine: InstalledEngine,
            listings: Listings | None = None) -> Layout:
    """Walk the tree and sort its files into workers and models; ``overlays`` are the editor buffers, some
    of which may be new files the walk cannot see yet; ``listings``, the folders the run listed already."""
    unlisted: dict[str, str] = {}
    nested: list[str] = []
    files = discover(root, config.include, config.exclude, unlisted, own_project=is_project, nested=nested,
                     listings=listings)
    seen = {f.path for f in files}
    for path in overlays:  # unsaved new files the walk cannot see yet (not those of a project inside this one)
        if path.endswith(".py") and path not in seen and Path(path).is_relative_to(root) \
                and not any(Path(path).is_relative_to(inner) for inner in nested):
            files.append(source_for(path, root, files))
    count = len(files)
    workers = [f for f in files if glob_match(f.rel, config.workers)]
    models = [f for f in files if glob_match(f.rel, config.model_files)]
    out_of_tree = not workers
    if out_of_tree:
        engine_files = engine.files()
        workers = [f for f in engine_files if glob_match(f.rel, config.workers)]
        models = files  # an out-of-tree package: every class it defines may be a model
        own = {g.module for g in files}
        files = files + [f for f in engine_files if f.module not in own]
    by_module = {f.module: f for f in files}
    callers = [f for f in files if glob_match(f.rel, config.start_up_callers) and f not in workers]
    packages: set[str] = set()
    for module in by_module:  # every dotted prefix: walk up until a parent was seen already
        parent = module.rpartition(".")[0]
        while parent and parent not in packages:
            packages.add(parent)
            parent = parent.rpartition(".")[0]
    fingerprint = text_digest("\n".join(f"{f.path}\0{f.module}" for f in files))
    return Layout(count, files, workers, models, out_of_tree, {f.path for f in workers + callers},
                  frozenset(f.path for f in files), by_module, frozenset(packages), fingerprint, unlisted, callers)
