"""One engine Project (with its own config) per workspace folder, and the state the server keeps about it.

Multi-root workspaces are common with model code (an engine checkout next to an out-of-tree model package):
each folder gets its own index and its own ``[tool.spec-contract]`` + editor settings, and a file belongs to
the innermost folder that contains it. Everything here is plain bookkeeping; engine calls happen on the
server's executor thread (see :mod:`spec_contract.lsp.server`), never on the event loop.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
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

    def relative(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()


class Folders:
    """The server's workspace folders, keyed by URI."""

    def __init__(self) -> None:
        self._by_uri: dict[str, Folder] = {}

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
        """The innermost folder containing ``path`` (nested folders: the deeper one owns the file)."""
        if path is None:
            return None
        best: Folder | None = None
        for folder in self._by_uri.values():
            if folder.contains(path) and (best is None or len(folder.root.parts) > len(best.root.parts)):
                best = folder
        return best

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
