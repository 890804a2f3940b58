"""The language server's state and its decisions, apart from the protocol: a :class:`Session`.

The session holds the workspace folders, the engine thread, the debounced edits and the background tasks. It
decides when an analysis is stale, what a request is answered from (:meth:`Session.context`) and which
diagnostics to send, and tells the client through an :class:`Editor`: the pygls server in production, a
plain object in tests, which drive a session without a process.

Engine calls (``Project.analyze`` is not thread-safe; fix edits run libcst) go to one worker thread the
session owns, awaited from the event loop. pygls's own thread pool is left alone because it also reads stdin:
a long analysis there would stall reading, and with it cancellation and ``exit``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import cattrs
from lsprotocol import types
from pygls.workspace import PositionCodec

from spec_contract.lsp import diagnostics
from spec_contract.lsp.context import RequestContext
from spec_contract.lsp.convert import SourceLines, path_of, uri_of
from spec_contract.lsp.features import ClientFeatures
from spec_contract.lsp.workspace import Folder, Folders

if TYPE_CHECKING:
    from spec_contract.engine import Analysis

T = TypeVar("T")


class OpenDocument(Protocol):
    """A buffer the client has open."""

    @property
    def source(self) -> str: ...

    @property
    def version(self) -> int | None: ...


class Editor(Protocol):
    """What the session asks of the client connection."""

    @property
    def documents(self) -> Mapping[str, OpenDocument]: ...  # by URI

    @property
    def codec(self) -> PositionCodec: ...  # the negotiated position encoding

    @property
    def converter(self) -> cattrs.Converter: ...  # the protocol's: for fingerprints of diagnostics

    def publish_diagnostics(self, uri: str, items: list[types.Diagnostic], version: int | None) -> None: ...

    def refresh_diagnostics(self) -> None: ...

    def log(self, message: str, level: types.MessageType = types.MessageType.Log) -> None: ...

    def log_exception(self, where: str, exc: BaseException) -> None: ...

    def warn_user(self, message: str) -> None: ...

    async def configuration(self, scope_uri: str, section: str) -> Sequence[Any]: ...  # workspace/configuration

    async def watch_files(self, globs: Sequence[str]) -> None: ...  # register didChangeWatchedFiles

    async def begin_progress(self, title: str, message: str) -> str | None: ...  # a work-done token, or None

    def report_progress(self, token: str, message: str, percentage: int) -> None: ...

    def end_progress(self, token: str, message: str) -> None: ...


def answered_early(analysis: Analysis) -> frozenset[str]:
    """The files a focused analysis answers for as the whole analysis will: the files it focused on, less those
    the contract's uses are in. A worker line where classes crash unrefused (SC011) lists every class that
    does; a focused analysis checked the open files' classes only, so its list there is short, or missing."""
    if analysis.focus is None:
        return frozenset()
    uses = {site.path for entry in analysis.contract.entries for site in entry.call_sites}
    return frozenset(path for path in analysis.focus if path not in uses)


class Session:
    """Folders with their projects, the engine thread, pending edits and tasks; see the module's docstring."""

    def __init__(self, editor: Editor) -> None:
        self.editor = editor
        self.features = ClientFeatures()  # resolved at initialize
        self.client_pid: int | None = None
        self.folders = Folders()
        self.init_options: dict[str, Any] = {}
        self.pushed_settings: dict[str, Any] = {}  # didChangeConfiguration payload, for clients without pull
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spec-contract-engine")
        self.pending: dict[str, asyncio.Task[None]] = {}  # uri -> debounced overlay update
        self.background: set[asyncio.Task[Any]] = set()
        self.told: dict[str, str] = {}  # uri -> the last message tell_once showed for it

    def tell_once(self, uri: str, message: str) -> None:
        """Show ``message`` about a document unless it is what the user was last told about it: code actions
        are asked for on every cursor move, and a reason the client cannot show on the action must not
        repeat at each."""
        if self.told.get(uri) != message:
            self.told[uri] = message
            self.editor.warn_user(message)

    # -- tasks --------------------------------------------------------------------------------------------
    async def on_engine(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the engine thread and await it from the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.engine, functools.partial(fn, *args, **kwargs))

    def spawn(self, coro: Coroutine[Any, Any, T], what: str) -> asyncio.Task[T]:
        """A background task whose failure is logged, not lost."""
        task = asyncio.create_task(coro)
        self.background.add(task)

        def done(t: asyncio.Task[T]) -> None:
            self.background.discard(t)
            if not t.cancelled():
                exc = t.exception()
                if exc is not None:
                    self.editor.log_exception(what, exc)

        task.add_done_callback(done)
        return task

    def shutdown(self) -> None:
        """Stop the background work and the engine thread (an analysis under way is not waited for)."""
        for task in list(self.background):
            task.cancel()
        self.engine.shutdown(wait=False, cancel_futures=True)

    # -- documents ----------------------------------------------------------------------------------------
    def open_paths(self) -> set[str]:
        return {p for p in (path_of(uri) for uri in self.editor.documents) if p}

    def version_of(self, uri: str) -> int | None:
        document = self.editor.documents.get(uri)
        return document.version if document is not None else None

    async def apply_overlay(self, uri: str, folder: Folder) -> None:
        """Give the engine the open buffer of ``uri`` (or, once closed, its file on disk again)."""
        document = self.editor.documents.get(uri)
        path = path_of(uri)
        if folder.project is None or path is None:
            return
        if document is None:
            await self.on_engine(folder.project.clear_overlay, path)
        else:
            await self.on_engine(folder.project.set_overlay, path, document.source)
        folder.dirty = True

    def schedule_change(self, uri: str, folder: Folder) -> None:
        """Debounce: only the last of a burst of keystrokes reaches the engine."""
        self.cancel_change(uri)
        self.pending[uri] = self.spawn(self._debounced(uri, folder), f"re-analysing after an edit of {uri}")

    def cancel_change(self, uri: str) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()

    async def _debounced(self, uri: str, folder: Folder) -> None:
        await asyncio.sleep(folder.settings.debounce_ms / 1000)
        # Pending until the engine has the buffer: a request meanwhile (``fresh``) must find this edit still to
        # apply, not the folder clean and its last analysis one edit behind.
        await self.apply_overlay(uri, folder)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        await self.refresh(folder)

    # -- freshness ----------------------------------------------------------------------------------------
    async def refresh(self, folder: Folder) -> Analysis | None:
        """Bring the folder's analysis up to date with its inputs; publish or refresh what changed."""
        async with folder.lock:
            if folder.project is None:
                return None
            if not folder.dirty and folder.analysis is not None:
                return folder.analysis
            folder.dirty = False
            try:
                analysis = await self.on_engine(folder.project.analyze)
            except BaseException:
                folder.dirty = True
                raise
            previous = folder.analysis
            folder.analysis = analysis
            if previous is None or previous.generation != analysis.generation:
                await self.publish(folder, analysis)
            return analysis

    async def fresh(self, folder: Folder) -> Analysis | None:
        """The folder's analysis including every edit made so far (pending debounces applied now)."""
        await folder.ready.wait()
        for uri, task in list(self.pending.items()):
            if self.folders.for_uri(uri) is folder:
                task.cancel()
                self.pending.pop(uri, None)
                await self.apply_overlay(uri, folder)
        return await self.refresh(folder)

    async def context(self, uri: str) -> RequestContext | None:
        """What a request on ``uri`` is answered from, or None when nothing analyses it."""
        path = path_of(uri)
        folder = self.folders.for_path(path)
        if folder is None or path is None:
            return None
        if not folder.ready.is_set() and path in self.open_paths():
            # A first pass over the open files may answer before the whole analysis: wait for whichever is first.
            waits = [asyncio.ensure_future(folder.ready.wait()), asyncio.ensure_future(folder.early.wait())]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            early = folder.analysis
            if not folder.ready.is_set() and early is not None and path in answered_early(early):
                return self._snapshot(uri, path, folder, early)  # the first pass covered it; the whole one still runs
        analysis = await self.fresh(folder)
        if analysis is None:
            return None
        return self._snapshot(uri, path, folder, analysis)

    def _snapshot(self, uri: str, path: str, folder: Folder, analysis: Analysis) -> RequestContext:
        return RequestContext(uri, path, folder, analysis, self.editor.codec, self.features)

    # -- publishing ---------------------------------------------------------------------------------------
    async def publish(self, folder: Folder, analysis: Analysis) -> None:
        """Recompute every affected file's report; push changed ones, or ask pull clients to re-pull.

        A focused analysis (the first pass) says only what it answers for (:func:`answered_early`): any other
        file keeps the report it had, until the whole analysis."""
        paths = set(folder.reports) | {f.path for f in analysis.findings if folder.shows(f.path)} \
            | {r.path for f in analysis.findings for r in f.records if folder.shows(r.path)}
        if analysis.focus is not None:
            paths &= answered_early(analysis)
        folder.reports, changed = await self.on_engine(
            diagnostics.compute_reports,
            folder.reports,
            analysis,
            sorted(paths),
            SourceLines(analysis),
            self.editor.codec,
            self.features.related_information,
            self.editor.converter,
        )
        if self.features.pull_diagnostics:
            if any(changed.values()) and self.features.diagnostic_refresh:
                self.editor.refresh_diagnostics()
            return
        open_paths = self.open_paths()
        for path in sorted(changed, key=lambda p: (p not in open_paths, p)):
            if changed[path]:
                self.push(path, folder.reports[path].diagnostics, analysis.source(path))

    def push(self, path: str, items: list[types.Diagnostic], analysed_text: str | None) -> None:
        uri = uri_of(path)
        document = self.editor.documents.get(uri)
        # The version only when the diagnostics describe exactly that buffer state.
        version = document.version if document is not None and document.source == analysed_text else None
        self.editor.publish_diagnostics(uri, items, version)

    async def clear(self, folder: Folder) -> None:
        """Withdraw every diagnostic of a folder (disabled or removed)."""
        paths = [p for p, r in folder.reports.items() if r.diagnostics]
        folder.reports = {}
        if not paths:
            return
        if self.features.pull_diagnostics:
            if self.features.diagnostic_refresh:
                self.editor.refresh_diagnostics()
            return
        for path in paths:
            self.push(path, [], None)
