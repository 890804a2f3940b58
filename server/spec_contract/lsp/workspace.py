"""One engine Project (with its own config) per workspace folder, and the state the server keeps about it.

Multi-root workspaces are common with model code (an engine checkout next to an out-of-tree model package):
each folder gets its own index and its own ``[tool.spec-contract]`` + editor settings, and a file belongs to
the innermost folder that contains it. Engine calls happen on the server's executor thread (see
:mod:`spec_contract.lsp.server`), never on the event loop.

A workspace folder that cannot be analysed on its own (an editor opened on ``srt/models``, or on the file's
folder when no root marker was found) and a document with no workspace folder at all are analysed in the
project the engine's discovery finds for them (:func:`adopt`): a *discovered* folder, whose diagnostics are
shown only for the paths that asked for it. When even that project cannot be analysed, the user is told once
per project, with the reason and the setting that fixes it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsprotocol import types

from spec_contract.lsp.convert import path_of
from spec_contract.lsp.settings import Settings


@dataclass
class FileReport:
    """The diagnostics last computed for one file, and the identity the client sees for them."""

    diagnostics: list[types.Diagnostic]
    fingerprint: str  # hash of the serialised diagnostics: did they change?
    result_id: str  # content hash + the index generation at which the diagnostics last changed
    findings: tuple = ()  # the engine findings they were made from: equal findings, same diagnostics


@dataclass(eq=False)
class Folder:
    """A workspace folder: its settings, engine project, latest analysis and published diagnostics."""

    uri: str
    name: str
    root: Path
    discovered: bool = False  # made by discovery for documents no workspace folder could analyse
    scope: set[Path] = field(default_factory=set)  # of a discovered folder: the paths its diagnostics are for
    problem: str | None = None  # why it cannot be analysed; its documents then go to a discovered folder
    settings: Settings = field(default_factory=Settings)
    shown_problems: tuple[str, ...] = ()
    project: Any = None  # spec_contract.engine.project.Project, created on the executor thread
    analysis: Any = None  # the latest engine Analysis
    dirty: bool = True  # inputs changed since ``analysis`` was computed
    reports: dict[str, FileReport] = field(default_factory=dict)  # path -> last diagnostics
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one analysis (and its publishing) at a time
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set once the first analysis finished
    early: asyncio.Event = field(default_factory=asyncio.Event)  # set once a first pass over open files finished

    def contains(self, path: str) -> bool:
        try:
            Path(path).relative_to(self.root)
        except ValueError:
            return False
        return True

    def shows(self, path: str) -> bool:
        """Whether this folder publishes diagnostics for ``path`` (a discovered folder: only its scope)."""
        if not self.discovered:
            return self.contains(path)
        return any(path == str(p) or Path(path).is_relative_to(p) for p in self.scope)

    def relative(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()


class Folders:
    """The server's workspace folders, keyed by URI."""

    def __init__(self) -> None:
        self._by_uri: dict[str, Folder] = {}
        self.told: set[Path] = set()  # project roots the user was told cannot be analysed

    def __iter__(self):
        return iter(list(self._by_uri.values()))

    def __len__(self) -> int:
        return len(self._by_uri)

    def add(self, uri: str, name: str | None = None) -> Folder | None:
        """Track a folder; None when the URI is not a local directory (e.g. a virtual file system)."""
        if uri in self._by_uri:
            return self._by_uri[uri]
        path = path_of(uri)
        if path is None:
            return None
        root = Path(path)
        folder = Folder(uri=uri, name=name or root.name, root=root)
        self._by_uri[uri] = folder
        return folder

    def remove(self, uri: str) -> Folder | None:
        return self._by_uri.pop(uri, None)

    def for_path(self, path: str | None) -> Folder | None:
        """The innermost folder containing ``path`` that can be analysed (nested folders: the deeper one
        owns the file; one that cannot be analysed leaves it to the discovered folder of its project)."""
        if path is None:
            return None
        best: Folder | None = None
        for folder in self._by_uri.values():
            if folder.problem is None and folder.contains(path) and (
                    best is None or len(folder.root.parts) > len(best.root.parts)):
                best = folder
        return best

    def discovered(self, root: Path) -> Folder | None:
        return next((f for f in self._by_uri.values() if f.discovered and f.root == root), None)

    def add_discovered(self, root: Path, scope: Path) -> Folder:
        folder = Folder(uri=root.as_uri(), name=root.name, root=root, discovered=True, scope={scope})
        self._by_uri[f"{folder.uri}#discovered"] = folder  # never confused with a workspace folder's URI
        return folder

    def for_uri(self, uri: str) -> Folder | None:
        return self.for_path(path_of(uri))


def initial_folders(params: types.InitializeParams) -> list[tuple[str, str | None]]:
    """(uri, name) of the folders to index: ``workspaceFolders``, else ``rootUri``, else ``rootPath``."""
    if params.workspace_folders:
        return [(f.uri, f.name) for f in params.workspace_folders]
    if params.root_uri:
        return [(params.root_uri, None)]
    if params.root_path:
        return [(Path(params.root_path).as_uri(), None)]
    return []


def unanalysable(exc: BaseException) -> bool:
    """Whether an analysis failed because the tree cannot be analysed as configured (no workers and no
    installed engine, an empty contract, …): a one-line ConfigError, not a bug."""
    from spec_contract.engine.config import ConfigError

    return isinstance(exc, ConfigError)


def _discover(path: Path, overrides: dict[str, Any]):
    """(Found, None) or (None, why): the project discovery finds for ``path`` (on the engine thread)."""
    from spec_contract.engine.config import ConfigError, load_config
    from spec_contract.engine.discovery import find_project

    try:
        profile = load_config(None, overrides=overrides or None)
        return find_project(path, profile.workers, profile.exclude), None
    except ConfigError as exc:
        return None, str(exc)


async def cannot_analyse(ls, folder: Folder, reason: str) -> None:
    """``folder``'s analysis failed with ``reason``: withdraw it, then analyse its files in the project
    discovery finds (a workspace folder), or tell the user why nothing is analysed (a discovered one)."""
    async with folder.lock:
        folder.problem = reason
        folder.project = None
        folder.analysis = None
        await ls.clear(folder)
    folder.ready.set()
    if folder.discovered:
        tell(ls, folder.root, ", ".join(sorted(str(p) for p in folder.scope)), reason)
        return
    ls.log(f"spec-contract: {folder.name} cannot be analysed on its own ({reason}); "
           "analysing its files in the project discovery finds for it")
    await adopt(ls, folder.root, folder.settings)


async def hand_over(ls, folder: Folder) -> bool:
    """Whether ``folder`` (a workspace folder) lies inside a bigger project, to which its files are then
    handed: an editor opened on ``srt/models`` analyses the package that holds the workers, with the
    models' bases and the workers' contract, instead of an out-of-tree guess from the folder alone."""
    if folder.discovered:
        return False
    found, _ = await ls.on_engine(_discover, folder.root, folder.settings.overrides())
    if found is None or found.root == folder.root or found.reason not in ("pyproject", "workers"):
        return False
    async with folder.lock:
        folder.problem = f"it lies inside the project {found.describe()}"
        folder.project = None
        folder.analysis = None
        await ls.clear(folder)
    folder.ready.set()
    ls.log(f"spec-contract: {folder.name}: {folder.problem}; its files are analysed there")
    await adopt(ls, folder.root, folder.settings)
    return True


async def adopt(ls, path: Path, settings: Settings | None = None) -> None:
    """Analyse ``path`` (a document or a workspace folder no analysable folder holds) in its project."""
    from spec_contract.lsp import settings as editor_settings

    if settings is None:
        settings = editor_settings.parse(editor_settings.merge(ls.init_options, ls.pushed_settings))[0]
    found, why = await ls.on_engine(_discover, path, settings.overrides())
    if found is None:
        tell(ls, path, str(path), why)
        return
    failed = next((f for f in ls.folders if f.root == found.root and f.problem and not f.discovered), None)
    if failed is not None:  # discovery ends where a workspace folder already failed: the same reason holds
        tell(ls, found.root, str(path), failed.problem)
        return
    folder = ls.folders.discovered(found.root)
    if folder is None:
        folder = ls.folders.add_discovered(found.root, path)
        ls.log(f"spec-contract: {path} is analysed in the project {found.describe()}")
        await ls.reload(folder)
        return
    if path in folder.scope:
        return
    folder.scope.add(path)
    if folder.problem is not None or folder.project is None:
        if folder.problem is not None:
            tell(ls, folder.root, str(path), folder.problem)
        return
    for uri in list(ls.workspace.text_documents):
        document_path = path_of(uri)
        if document_path is not None and folder.shows(document_path) and ls.folders.for_path(document_path) is folder:
            await ls.apply_overlay(uri, folder)
    analysis = await ls.refresh(folder)
    if analysis is not None:
        await ls.publish(folder, analysis)


def tell(ls, root: Path, what: str, reason: str) -> None:
    """Once per project root: a ``window/showMessage`` with why ``what`` is not analysed and how to fix it."""
    if root in ls.folders.told:
        return
    ls.folders.told.add(root)
    ls.warn_user(
        f"spec-contract: {what} is not analysed: {reason}. Tried the project root {root}. To fix it, open the "
        "engine's checkout (the folder holding its speculative workers) as the workspace, or add a "
        "[tool.spec-contract] table to a pyproject.toml at the project root (with `workers = [...]` if the "
        "workers are elsewhere), or run the server with a Python where the engine is installed "
        "(specContract.interpreter in VS Code; --python on the command line).")


def build_project(root: Path, config):
    """The engine Project for ``root``, and a warning for the user or None (on the engine thread).

    With a ``baseline`` key, the project's analyses show the findings the baseline covers at *hint*
    severity (the editor greys them instead of underlining them red); a baseline that cannot be read is
    reported and every finding keeps its severity.
    """
    from spec_contract.engine import baseline
    from spec_contract.engine.config import ConfigError
    from spec_contract.engine.project import Project

    if not config.baseline:
        return Project(root, config), None
    try:
        accepted = baseline.load(Path(config.baseline))
    except ConfigError as exc:
        return Project(root, config), f"spec-contract: {exc}; showing every finding at its own severity"

    class BaselinedProject(Project):
        def analyze(self, focus=None):
            analysis = super().analyze(focus)
            covered = accepted.match(analysis.findings).baselined
            if not covered:
                return analysis
            return replace(analysis, findings=tuple(
                replace(f, severity="hint") if baseline.fingerprint(f) in covered else f for f in analysis.findings))

    return BaselinedProject(root, config), None
