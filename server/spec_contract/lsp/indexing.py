"""Bringing each folder's analysis into being: settings, projects, the first index, and what changes them.

Start-up stays cheap: the engine (and through it libcst) is imported on the engine thread when the first
folder is indexed (:func:`load_engine`), while the client reads the ``initialize`` answer and opens its files.

A workspace folder that cannot be analysed on its own (an editor opened on ``srt/models``, or on the file's
folder when no root marker was found) and a document with no workspace folder at all are analysed in the
project the engine's discovery finds for them (:func:`adopt`): a *discovered* folder, whose diagnostics are
shown only for the paths that asked for it. When even that project cannot be analysed, the user is told once
per project, with the reason and the setting that fixes it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types

from spec_contract import engine
from spec_contract.lsp import settings
from spec_contract.lsp.convert import path_of
from spec_contract.lsp.session import Session
from spec_contract.lsp.workspace import Folder, build_project, discover, unanalysable

PARENT_CHECK_SECONDS = 2.0
T = TypeVar("T")

CLIENT_REQUEST_TIMEOUT = 10.0  # a client that never answers our requests must not stall indexing


async def client_answer(request: Awaitable[T]) -> T:
    """The client's answer to a request of ours, waited for at most :data:`CLIENT_REQUEST_TIMEOUT`.

    The wait is given up, not the request: pygls sets a late answer's result on the future it made for the
    request, and a cancelled future would raise ``InvalidStateError`` in its reader (a traceback in the log for
    a client that was merely slow)."""
    return await asyncio.wait_for(asyncio.shield(request), CLIENT_REQUEST_TIMEOUT)
WATCHED_GLOBS = ("**/*.py", "**/pyproject.toml")


def load_engine() -> None:
    """Import the engine (on the engine thread): the expensive part of start-up."""
    from spec_contract.engine import Project, load_config  # noqa: F401  (the import is the work)


def _build_project(root: Path, overrides: dict[str, Any]) -> tuple[Any, str | None]:
    """Load the folder's config (editor overrides over pyproject) and create its engine Project.

    Runs on the engine thread: importing the engine is the expensive part of start-up.
    Returns the project and a warning when the editor settings were rejected and dropped.
    """
    warning = None
    try:
        config = engine.load_config(root, overrides=overrides or None)
    except engine.ConfigError as exc:
        if not overrides:
            raise
        warning = f"spec-contract: {exc} (folder {root.name}); using the defaults instead of the editor settings"
        config = engine.load_config(root)
    project, problem = build_project(root, config)
    return project, warning or problem


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def start(session: Session) -> None:
    """After ``initialized``: watch the parent, register file watchers, index every folder."""
    if session.client_pid:
        session.spawn(watch_parent(session, session.client_pid), "watching the client process")
    if session.features.watched_files_registration:
        await session.editor.watch_files(WATCHED_GLOBS)
    await index(session, list(session.folders))


async def watch_parent(session: Session, pid: int) -> None:
    """Exit when the editor died without closing our stdin (else we would be an orphan forever)."""
    while True:
        await asyncio.sleep(PARENT_CHECK_SECONDS)
        if not _alive(pid):
            session.engine.shutdown(wait=False, cancel_futures=True)
            os._exit(0)


# -- settings and projects ---------------------------------------------------------------------------
async def load_settings(session: Session, folder: Folder) -> None:
    """initializationOptions, then (per folder) workspace/configuration; problems shown once."""
    raw_folder: Any = None
    if session.features.configuration:
        try:
            result = await client_answer(session.editor.configuration(folder.uri, settings.SECTION))
            raw_folder = result[0] if result else None
        except Exception as exc:
            session.editor.log(f"spec-contract: workspace/configuration failed: {exc}", types.MessageType.Warning)
    merged = settings.merge(
        session.init_options, session.pushed_settings, raw_folder if isinstance(raw_folder, dict) else None
    )
    parsed, problems = settings.parse(merged)
    if problems and tuple(problems) != folder.shown_problems:
        session.editor.warn_user("spec-contract settings: " + "; ".join(problems))
    folder.shown_problems = tuple(problems)
    folder.settings = parsed


async def reload(session: Session, folder: Folder, reread_settings: bool = True) -> None:
    """(Re)create the folder's project from its settings and analyse it."""
    folder.problem = None  # until the analysis below says otherwise
    if reread_settings:
        await load_settings(session, folder)
    if not folder.settings.enable:
        await disable(session, folder, "specContract.enable is false")
        return
    if await hand_over(session, folder):
        return
    try:
        project, warning = await session.on_engine(_build_project, folder.root, folder.settings.overrides())
    except Exception as exc:
        session.editor.warn_user(f"spec-contract: cannot analyse {folder.name}: {exc}")
        folder.ready.set()
        return
    if warning:
        session.editor.warn_user(warning)
    if not getattr(project.config, "enable", True):
        await disable(session, folder, "enable = false in its pyproject.toml")
        return
    async with folder.lock:
        folder.project = project
        folder.analysis = None
        folder.dirty = True
        for uri, document in list(session.editor.documents.items()):
            path = path_of(uri)
            if session.folders.for_path(path) is folder:
                await session.on_engine(project.set_overlay, path, document.source)
    opened = {p for p in session.open_paths() if session.folders.for_path(p) is folder}
    try:
        if opened:
            await first_pass(session, folder, opened)
        await session.refresh(folder)
    except Exception as exc:
        if not unanalysable(exc):
            raise
        await cannot_analyse(session, folder, str(exc))
        return
    folder.ready.set()


async def first_pass(session: Session, folder: Folder, opened: set[str]) -> None:
    """Diagnostics for the open files before the whole tree is analysed.

    A focused analysis checks only the open files' classes; their findings are final (the whole
    analysis reports the same for them), so the user sees them seconds earlier on a large tree. An open
    worker waits for the whole analysis (``session.answered_early``), and so does every other file. The
    focused analysis writes no summary to the cache before its diagnostics are out (``Project.write_summaries``).
    """
    async with folder.lock:
        project = folder.project
        if project is None:  # disabled while it waited for the lock
            return
        try:
            analysis = await session.on_engine(project.analyze, opened)
        except Exception as exc:
            if unanalysable(exc):
                raise  # the tree cannot be analysed at all: reload() hands its files to discovery
            session.editor.log_exception(f"first pass over {folder.name}", exc)
            return
        folder.analysis = analysis
        await session.publish(folder, analysis)
    folder.early.set()
    # Its summaries go to the cache now that its diagnostics are out: a session closed before the whole
    # analysis ends (which would write them too) still leaves them for the next start.
    await session.on_engine(project.write_summaries)


async def disable(session: Session, folder: Folder, why: str) -> None:
    async with folder.lock:
        folder.project = None
        folder.analysis = None
        await session.clear(folder)
    folder.ready.set()
    session.editor.log(f"spec-contract: not analysing {folder.name}: {why}")


async def index(session: Session, folders: list[Folder], title: str = "Indexing") -> None:
    """Analyse folders in the background with work-done progress; folders with open files first."""
    open_paths = session.open_paths()
    folders.sort(key=lambda f: not any(f.contains(p) for p in open_paths))
    token = None
    if folders and session.features.work_done_progress:
        token = await session.editor.begin_progress(f"spec-contract: {title}", f"{len(folders)} folder(s)")
    for i, folder in enumerate(folders):
        if token is not None:
            session.editor.report_progress(
                token, f"{folder.name}: workers and model classes", i * 100 // len(folders)
            )
        try:
            await reload(session, folder)
        except Exception as exc:
            session.editor.log_exception(f"indexing {folder.name}", exc)
            folder.ready.set()
    if token is not None:
        found = sum(len(f.analysis.findings) for f in folders if f.analysis is not None)
        session.editor.end_progress(token, f"{found} finding(s) in {len(folders)} folder(s)")
    for folder in folders:
        if folder.analysis is not None:
            stats = folder.analysis.stats
            session.editor.log(
                f"spec-contract: {folder.name}: {len(folder.analysis.findings)} finding(s); "
                f"{stats.files_seen} files seen, {stats.files_parsed} parsed in {stats.seconds:.2f}s"
            )
            for note in folder.analysis.notes:  # an incomplete analysis must not look like a clean one
                session.editor.warn_user(f"spec-contract: {folder.name}: {note}")


# -- changes from outside the buffers -------------------------------------------------------------------
async def files_changed(session: Session, uris: list[str]) -> None:
    """Saved or watched files changed on disk: reload config for pyproject, else invalidate and re-check."""
    touched: list[Folder] = []
    for uri in uris:
        path = path_of(uri)
        folder = session.folders.for_path(path)
        if folder is None or path is None:
            continue
        if Path(path).name == "pyproject.toml":
            if Path(path).parent == folder.root:
                session.spawn(reload(session, folder), f"reloading the configuration of {folder.name}")
            continue
        if folder.project is not None and path.endswith(".py"):
            await session.on_engine(folder.project.invalidate, path)
            folder.dirty = True
            if folder not in touched:
                touched.append(folder)
    for folder in touched:
        await session.refresh(folder)


async def reconfigure(session: Session) -> None:
    """Re-read every folder's settings; rebuild the project only when what the engine sees changed."""
    for folder in session.folders:
        before = folder.settings
        await load_settings(session, folder)
        after = folder.settings
        if after.enable != before.enable or after.overrides() != before.overrides() or folder.project is None:
            await reload(session, folder, reread_settings=False)


# -- folders that cannot be analysed on their own -------------------------------------------------------
async def cannot_analyse(session: Session, folder: Folder, reason: str) -> None:
    """``folder``'s analysis failed with ``reason``: withdraw it, then analyse its files in the project
    discovery finds (a workspace folder), or tell the user why nothing is analysed (a discovered one)."""
    async with folder.lock:
        folder.problem = reason
        folder.project = None
        folder.analysis = None
        await session.clear(folder)
    folder.ready.set()
    if folder.discovered:
        tell(session, folder.root, ", ".join(sorted(str(p) for p in folder.scope)), reason)
        return
    session.editor.log(f"spec-contract: {folder.name} cannot be analysed on its own ({reason}); "
                       "analysing its files in the project discovery finds for it")
    await adopt(session, folder.root, folder.settings)


async def hand_over(session: Session, folder: Folder) -> bool:
    """Whether ``folder`` (a workspace folder) lies inside a bigger project, to which its files are then
    handed: an editor opened on ``srt/models`` analyses the package that holds the workers, with the
    models' bases and the workers' contract, instead of an out-of-tree guess from the folder alone."""
    if folder.discovered:
        return False
    found, _ = await session.on_engine(discover, folder.root, folder.settings.overrides())
    if found is None or found.root == folder.root or found.reason not in ("pyproject", "workers"):
        return False
    async with folder.lock:
        folder.problem = f"it lies inside the project {found.describe()}"
        folder.project = None
        folder.analysis = None
        await session.clear(folder)
    folder.ready.set()
    session.editor.log(f"spec-contract: {folder.name}: {folder.problem}; its files are analysed there")
    await adopt(session, folder.root, folder.settings)
    return True


async def adopt(session: Session, path: Path, folder_settings: settings.Settings | None = None) -> None:
    """Analyse ``path`` (a document or a workspace folder no analysable folder holds) in its project."""
    if folder_settings is None:
        folder_settings = settings.parse(settings.merge(session.init_options, session.pushed_settings))[0]
    found, why = await session.on_engine(discover, path, folder_settings.overrides())
    if found is None or why is not None:
        tell(session, found.root if found is not None else path, str(path), why or "")
        return
    failed = next((f for f in session.folders if f.root == found.root and f.problem and not f.discovered), None)
    if failed is not None and failed.problem is not None:  # discovery ends where a workspace folder failed
        tell(session, found.root, str(path), failed.problem)
        return
    folder = session.folders.discovered(found.root)
    if folder is None:
        folder = session.folders.add_discovered(found.root, path)
        session.editor.log(f"spec-contract: {path} is analysed in the project {found.describe()}")
        await reload(session, folder)
        return
    if path in folder.scope:
        return
    folder.scope.add(path)
    if folder.problem is not None or folder.project is None:
        if folder.problem is not None:
            tell(session, folder.root, str(path), folder.problem)
        return
    for uri in list(session.editor.documents):
        document_path = path_of(uri)
        if (document_path is not None and folder.shows(document_path)
                and session.folders.for_path(document_path) is folder):
            await session.apply_overlay(uri, folder)
    analysis = await session.refresh(folder)
    if analysis is not None:
        await session.publish(folder, analysis)


async def adopt_document(session: Session, path: Path) -> None:
    """:func:`adopt` for a document no workspace folder holds, inside a work-done progress: with no workspace
    folder there is no indexing progress at all, and a client that shows "indexing" until results arrive (VS
    Code's status item) would show it for good when the file has no finding or cannot be analysed."""
    token = None
    if session.features.work_done_progress:
        token = await session.editor.begin_progress("spec-contract: Indexing", f"finding the project of {path.name}")
    try:
        await adopt(session, path)
    finally:
        if token is not None:
            folder = session.folders.for_path(str(path))
            analysed = folder is not None and folder.analysis is not None and folder.shows(str(path))
            session.editor.end_progress(token, f"{path.name}: analysed in the project {folder.root}"
                                        if folder is not None and analysed else f"{path.name}: not analysed (see the message)")


def tell(session: Session, root: Path, what: str, reason: str) -> None:
    """Once per project root: a ``window/showMessage`` with why ``what`` is not analysed and how to fix it."""
    if root in session.folders.told:
        return
    session.folders.told.add(root)
    session.editor.warn_user(
        f"spec-contract: {what} is not analysed: {reason}. Tried the project root {root}. Fix: open the engine's "
        "checkout (the folder holding its speculative workers) as the workspace; or add a [tool.spec-contract] "
        "table to the project's pyproject.toml (`workers = [...]` if the workers are elsewhere); or run the "
        "server with a Python where the engine is installed: specContract.interpreter (VS Code), the "
        "interpreter in the client's `cmd` (Neovim), spec-contract-eglot-python (Emacs), --python (command line).")
