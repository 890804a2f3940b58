"""One engine Project (with its own config) per workspace folder, and the state the server keeps about it.

Multi-root workspaces are common with model code (an engine checkout next to an out-of-tree model package):
each folder gets its own index and its own ``[tool.spec-contract]`` + editor settings, and a file belongs to
the innermost folder that contains it. The engine calls here (:func:`discover`, :func:`build_project`) run on
the session's engine thread (see :mod:`spec_contract.lsp.session`), never on the event loop.

A *discovered* folder is the project the engine's discovery finds for files no workspace folder can analyse
(see :func:`spec_contract.lsp.indexing.adopt`); its diagnostics are shown only for the paths that asked for it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from spec_contract import engine
from spec_contract.lsp.convert import path_of
from spec_contract.lsp.settings import Settings

if TYPE_CHECKING:
    from spec_contract.engine import Analysis, Config, Found, Project


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
    project: Project | None = None  # created on the engine thread
    analysis: Analysis | None = None  # the latest
    dirty: bool = True  # inputs changed since ``analysis`` was computed
    reports: dict[str, FileReport] = field(default_factory=dict)  # path -> last diagnostics
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one analysis (and its publishing) at a time
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set once the first analysis finished
    early: asyncio.Event = field(default_factory=asyncio.Event)  # set once a first pass over open files finished
    inner_projects: dict[str, bool] = field(default_factory=dict)  # folder below the root -> a project of its own
    contained: dict[str, bool] = field(default_factory=dict)  # path -> contains(path), read from inner_projects

    def contains(self, path: str) -> bool:
        """Whether ``path`` is in this folder's project: under its root, and not in a project of its own
        inside it (a vendored copy with its own ``[tool.spec-contract]``, which the analysis leaves out: its
        documents go to the project discovery finds for them).

        Kept per path, as the answers for its folders are: every analysis asks it again of every file with a
        finding before it publishes (248 paths on SGLang 0.5.23: 3.2 ms of pathlib on the event loop per keystroke)."""
        known = self.contained.get(path)
        if known is None:
            known = self.contained[path] = self._contains(path)
        return known

    def _contains(self, path: str) -> bool:
        try:
            relative = Path(path).relative_to(self.root)
        except ValueError:
            return False
        inside = self.root
        for part in relative.parts[:-1]:
            inside = inside / part
            key = str(inside)
            if key not in self.inner_projects:
                self.inner_projects[key] = engine.is_project(key)
            if self.inner_projects[key]:
                return False
        return True

    def shows(self, path: str) -> bool:
        """Whether this folder publishes diagnostics for ``path`` (a discovered folder: only its scope)."""
        if not self.discovered:
            return self.contains(path)
        return any(path == str(p) or Path(path).is_relative_to(p) for p in self.scope)

    def relative(self, path: str) -> str:
        """``path`` as hover text names it: as the reports name paths (the engine's one helper)."""
        return engine.relative_to(path, self.root)


class Folders:
    """The server's workspace folders, keyed by URI."""

    def __init__(self) -> None:
        self._by_uri: dict[str, Folder] = {}
        self.told: set[Path] = set()  # project roots the user was told cannot be analysed

    def __iter__(self) -> Iterator[Folder]:
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
    return isinstance(exc, engine.ConfigError)


#: Python files a loose document's folder may hold and still be analysed as its project (see :func:`discover`)
LOOSE_FOLDER_FILES = 300


def discover(path: Path, overrides: dict[str, Any]) -> tuple[Found | None, str | None]:
    """(Found, None), or (Found or None, why not): the project discovery finds for ``path`` (on the engine
    thread).

    A document in no package, with no ``[tool.spec-contract]`` above it, has no project found by walking *up*:
    discovery falls back to its folder, analysed whole (out-of-tree, or because some subfolder holds workers).
    For a scratch file in the home directory that is every Python file below it: an editor opened on that one
    file, with no folder, sat at "indexing" for minutes and showed nothing. Such a folder is analysed only
    while it is small; otherwise the user is told why, at once."""
    try:
        profile = engine.load_config(None, overrides=overrides or None)
        found = engine.find_project(path, profile.workers, profile.exclude)
    except engine.ConfigError as exc:
        return None, str(exc)
    if (found.reason in ("workers", "out-of-tree") and found.root == path.parent and path.suffix == ".py"
            and not (found.root / "__init__.py").is_file() and not small_folder(found.root, LOOSE_FOLDER_FILES)):
        return found, (f"{path.name} is in no package and no project with a [tool.spec-contract] table, and the "
                       f"folder around it ({found.root}) holds more than {LOOSE_FOLDER_FILES} Python files: "
                       "too many to analyse for one file opened without its project's folder")
    return found, None


def small_folder(root: Path, limit: int) -> bool:
    """Whether ``root`` holds at most ``limit`` Python files (hidden folders left out); stops counting at the
    limit, so a home directory costs no more than a small folder."""
    count = 0
    for _dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        count += sum(name.endswith(".py") for name in filenames)
        if count > limit:
            return False
    return True


def build_project(root: Path, config: Config) -> tuple[Project, str | None]:
    """The engine Project for ``root``, and a warning for the user or None (on the engine thread).

    With a ``baseline`` key, the project's analyses show the findings the baseline covers at *hint*
    severity (the editor greys them instead of underlining them red); a baseline that cannot be read is
    reported and every finding keeps its severity.
    """

    if not config.baseline:
        return engine.Project(root, config), None
    try:
        accepted = engine.load_baseline(Path(config.baseline))
    except engine.ConfigError as exc:
        return engine.Project(root, config), f"spec-contract: {exc}; showing every finding at its own severity"

    class BaselinedProject(engine.Project):
        def analyze(self, focus: Iterable[str] | None = None) -> Analysis:
            analysis = super().analyze(focus)
            covered = accepted.match(analysis.findings).baselined
            if not covered:
                return analysis
            return replace(analysis, findings=tuple(
                replace(f, severity=engine.Severity.HINT) if engine.fingerprint(f) in covered else f for f in analysis.findings))

    return BaselinedProject(root, config), None
